//! Drawing a rule game's state for a person: a board of `cell(A, B, V)` facts as a grid, every other
//! fact as a sorted list in the file's own syntax.
//!
//! Which coordinate runs across is read from the rules, because games disagree: tic-tac-toe's
//! `cell(M, N, x)` (`mark(Row, Col)`) is a matrix, row first and row 1 at the top, while Connect Four's
//! `cell(X, Y, red)` and chess's `cell(a, 1, wr)` put the first coordinate across and the second going
//! up. [`layout_of`] looks at the names of the variables the rules use for the two coordinates (`M`,
//! `R`, `Row`, `I` first mean a matrix; anything else, `X`, `C`, `File`, the other) and the grid is
//! labelled with the game's own coordinates on its edges. Cells holding a blank (`b`, `blank`, `empty`)
//! or nothing are drawn as `.`.

use crate::datalog::terms::{TermId, TermStore};
use crate::syntax::ast::{Atom, Literal, Program, Statement, Syntax, Term};

/// How the two coordinates of a board's cells are laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// The first coordinate across, the second going up (Connect Four, chess).
    #[default]
    AcrossUp,
    /// The first coordinate is the row, from the top; the second the column (tic-tac-toe's
    /// `mark(Row, Col)`).
    RowColumn,
}

/// Whether `name` is a relation or function whose three-argument facts are drawn as a board.
fn is_cell_name(name: &str) -> bool {
    name.to_ascii_lowercase().contains("cell")
}

/// A variable name without `?`, digits and letter case: `?x2` is `x`, `Row` is `row`.
fn stem(name: &str) -> String {
    name.trim_start_matches('?')
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '_')
        .to_ascii_lowercase()
}

fn row_like(stem: &str) -> bool {
    matches!(stem, "r" | "m" | "i" | "row")
}

fn column_like(stem: &str) -> bool {
    matches!(stem, "c" | "n" | "j" | "col" | "column")
}

fn across_like(stem: &str) -> bool {
    matches!(stem, "x" | "file" | "f")
}

fn up_like(stem: &str) -> bool {
    matches!(stem, "y" | "rank")
}

/// The layout the rules' variable names suggest (see the module documentation); [`Layout::AcrossUp`]
/// when they say nothing.
pub fn layout_of(program: &Program) -> Layout {
    let mut votes: i64 = 0;
    let mut vote = |a: &Atom| {
        if a.args.len() == 3 && is_cell_name(program.symbols.name(a.pred)) {
            count(program, &a.args, &mut votes);
        }
        for t in &a.args {
            term_votes(program, t, &mut votes);
        }
    };
    for s in &program.statements {
        match s {
            Statement::Rule { head, body, .. } => {
                vote(head);
                body.iter().for_each(|l| literal_atoms(l, &mut vote));
            }
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                vote(action);
                conditions.iter().for_each(|l| literal_atoms(l, &mut vote));
                effects.iter().for_each(|e| vote(&e.atom));
            }
        }
    }
    if votes > 0 {
        Layout::RowColumn
    } else {
        Layout::AcrossUp
    }
}

fn literal_atoms<'a>(l: &'a Literal, f: &mut impl FnMut(&'a Atom)) {
    match l {
        Literal::Atom(a) => f(a),
        Literal::Not(inner, _) => literal_atoms(inner, f),
        Literal::Or(ls, _) | Literal::And(ls, _) => ls.iter().for_each(|l| literal_atoms(l, f)),
    }
}

/// Votes of the `cell(...)` terms nested in `t` (`true(cell(M, N, x))`).
fn term_votes(program: &Program, t: &Term, votes: &mut i64) {
    if let Term::Func(f, args, _) = t {
        if args.len() == 3 && is_cell_name(program.symbols.name(*f)) {
            count(program, args, votes);
        }
        for a in args {
            term_votes(program, a, votes);
        }
    }
}

/// +1 for each sign of a matrix in the first two arguments, -1 for each sign of across-and-up.
fn count(program: &Program, args: &[Term], votes: &mut i64) {
    let var = |t: &Term| match t {
        Term::Var(s, _) => Some(stem(program.symbols.name(*s))),
        _ => None,
    };
    if let Some(first) = var(&args[0]) {
        *votes +=
            i64::from(row_like(&first)) - i64::from(across_like(&first) || column_like(&first));
    }
    if let Some(second) = var(&args[1]) {
        *votes +=
            i64::from(column_like(&second)) - i64::from(up_like(&second) || row_like(&second));
    }
}

/// Whether a cell's value means "nothing here".
fn is_blank(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "b" | "blank" | "empty" | "(b)" | "(blank)" | "(empty)"
    )
}

/// Draws a state (see the module documentation). The grid spans the cells of `domain` (all the base
/// propositions), so empty squares show too.
pub(crate) fn draw_state(
    terms: &TermStore,
    facts: &[TermId],
    domain: &[TermId],
    syntax: Syntax,
    layout: Layout,
) -> String {
    let show = |t: TermId| match syntax {
        Syntax::Kif => terms.kif(t),
        Syntax::Infix => terms.infix(t),
    };
    let is_cell = |t: TermId| terms.args(t).len() == 3 && is_cell_name(terms.name(terms.sym(t)));
    let mut cells: Vec<(TermId, TermId, TermId)> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    for &t in facts {
        if is_cell(t) {
            let args = terms.args(t);
            cells.push((args[0], args[1], args[2]));
        } else {
            rest.push(show(t));
        }
    }
    rest.sort();
    let key = |t: &TermId| (terms.as_int(*t).unwrap_or(i64::MAX), terms.kif(*t));
    let mut out = String::new();
    let grid: Vec<TermId> = domain.iter().copied().filter(|&t| is_cell(t)).collect();
    if !grid.is_empty() {
        let mut firsts: Vec<TermId> = grid.iter().map(|&t| terms.args(t)[0]).collect();
        let mut seconds: Vec<TermId> = grid.iter().map(|&t| terms.args(t)[1]).collect();
        firsts.sort_by_key(key);
        firsts.dedup();
        seconds.sort_by_key(key);
        seconds.dedup();
        // Rows from the top of the drawing down, columns from left to right, and how to find a
        // cell's value from its row and column.
        let (rows, columns): (Vec<TermId>, Vec<TermId>) = match layout {
            Layout::AcrossUp => (seconds.into_iter().rev().collect(), firsts),
            Layout::RowColumn => (firsts, seconds),
        };
        let value = |row: TermId, column: TermId| {
            let (a, b) = match layout {
                Layout::AcrossUp => (column, row),
                Layout::RowColumn => (row, column),
            };
            cells
                .iter()
                .find(|c| c.0 == a && c.1 == b)
                .map(|c| show(c.2))
                .filter(|v| !is_blank(v))
                .unwrap_or_else(|| ".".to_string())
        };
        let width = grid
            .iter()
            .map(|&t| show(terms.args(t)[2]).len())
            .chain(columns.iter().map(|x| show(*x).len()))
            .max()
            .unwrap_or(1);
        let margin = rows.iter().map(|y| show(*y).len()).max().unwrap_or(1);
        let mut axis = format!("{:>margin$}  ", "");
        for x in &columns {
            axis.push_str(&format!(" {:>width$}", show(*x)));
        }
        let axis = axis.trim_end().to_string();
        if layout == Layout::RowColumn {
            out.push_str(&axis);
            out.push('\n');
        }
        for &row in &rows {
            let mut line = format!("{:>margin$} |", show(row));
            for &column in &columns {
                line.push_str(&format!(" {:>width$}", value(row, column)));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if layout == Layout::AcrossUp {
            out.push_str(&axis);
            out.push('\n');
        }
    }
    for f in rest {
        out.push_str(&f);
        out.push('\n');
    }
    out
}
