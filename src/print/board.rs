//! Drawing a rule game's state for a person: its boards as grids, every other fact as a sorted list
//! in the file's own syntax.
//!
//! A board is a relation of the state whose first two arguments are a square's coordinates and whose
//! last is what stands there, found from the game's base propositions and the names its rules give
//! the arguments: a three-argument relation named like a cell (`cell`, `cellHolds`); any other
//! three-argument relation whose coordinates are numbers or short names filling at least half of a
//! grid (dots and boxes' `box(X, Y, Owner)`, peg solitaire's cross of `hole(Row, Col, peg)`), unless
//! the rules name its first arguments as something else (hex's `connected(K, M, N)`, K a group); a
//! four-argument cell whose rules name two neighbouring arguments as coordinates: pentago's
//! `cellHolds(Q, X, Y, Player)` is one board per quadrant, chess's `cell(X, Y, Player, Piece)` one
//! board showing `white/rook`. A relation with two facts on one square is listed, not drawn.
//!
//! Which coordinate runs across is read from the rules, because games disagree: tic-tac-toe's
//! `cell(M, N, x)` (`mark(Row, Col)`) is a matrix, row first and row 1 at the top, while Connect Four's
//! `cell(X, Y, red)` and chess's `cell(a, 1, wr)` put the first coordinate across and the second going
//! up. [`layout_of`] reads the names of the variables the rules give the two coordinates (`M`, `R`,
//! `Row`, `I` first mean a matrix; anything else, `X`, `C`, `File`, the other); the board's declaration
//! (`base(cell(M, N, T))`) decides when it names them, the majority of all rules otherwise. The grid is
//! labelled with the game's own coordinates on its edges. Cells holding a blank (`b`, `blank`,
//! `empty`) or nothing are drawn as `.`.

use hashbrown::HashMap;

use crate::datalog::terms::{TermId, TermStore};
use crate::drawing::{Drawing, Grid};
use crate::syntax::ast::{for_each_atom, Atom, Program, Statement, Sym, Syntax, Term};

/// How a game's boards are drawn: which way the coordinates run, and where the coordinates and the
/// value sit in a four-argument cell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    orientation: Orientation,
    /// The four-argument cell relations whose coordinates the rules name, by name.
    four: Vec<(String, Shape)>,
    /// Three-argument relations whose first two arguments the rules name as something other than
    /// coordinates (hex's `connected(K, M, N)`, K a group): never drawn as boards.
    not_boards: Vec<String>,
}

/// Which way a board's two coordinates run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Orientation {
    /// The first coordinate across, the second going up (Connect Four, chess).
    #[default]
    AcrossUp,
    /// The first coordinate is the row, from the top; the second the column (tic-tac-toe's
    /// `mark(Row, Col)`).
    RowColumn,
}

/// Where a cell fact's parts sit among its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shape {
    /// The argument that picks one of several boards (pentago's quadrant, a 3-D game's level).
    board: Option<usize>,
    /// The two coordinates.
    first: usize,
    second: usize,
    /// What stands on the square (two arguments for chess's `cell(X, Y, Player, Piece)`).
    value: Vec<usize>,
}

impl Shape {
    /// `cell(A, B, V)`.
    fn three() -> Shape {
        Shape {
            board: None,
            first: 0,
            second: 1,
            value: vec![2],
        }
    }

    /// A four-argument cell's shape from its arguments' variable names: the coordinates are two
    /// neighbouring arguments named as coordinates (`X, Y`, `M, N`, `Row, Col`); an argument before
    /// them, or a third coordinate (`Z`) after them, picks the board.
    fn four(names: &[Option<String>]) -> Option<Shape> {
        let coordinate = |i: usize| names[i].as_deref().is_some_and(coordinate_name);
        if coordinate(1) && coordinate(2) && !coordinate(0) {
            return Some(Shape {
                board: Some(0),
                first: 1,
                second: 2,
                value: vec![3],
            });
        }
        if coordinate(0) && coordinate(1) {
            let level = names[2]
                .as_deref()
                .is_some_and(|n| matches!(n, "z" | "o" | "level" | "board"));
            return Some(if level {
                Shape {
                    board: Some(2),
                    first: 0,
                    second: 1,
                    value: vec![3],
                }
            } else {
                Shape {
                    board: None,
                    first: 0,
                    second: 1,
                    value: vec![2, 3],
                }
            });
        }
        None
    }
}

/// Whether a variable's stem names a board coordinate.
fn coordinate_name(stem: &str) -> bool {
    row_like(stem)
        || column_like(stem)
        || file_like(stem)
        || rank_like(stem)
        || matches!(stem, "x" | "y")
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

fn file_like(stem: &str) -> bool {
    matches!(stem, "file" | "f")
}

fn rank_like(stem: &str) -> bool {
    matches!(stem, "rank")
}

/// The layout the rules' variable names suggest (see the module documentation); [`Layout::AcrossUp`]
/// when they say nothing.
pub fn layout_of(program: &Program) -> Layout {
    // Row/column names (`M`, `Row`, `C`, `File`...) say what their author meant; `X` and `Y` are
    // written by authors of both layouts, so they decide only when nothing else does.
    let mut votes = Votes::default();
    let vote = |a: &Atom, votes: &mut Votes| {
        if is_cell_name(program.symbols.name(a.pred)) {
            count(program, a.pred, &a.args, votes);
        }
        if a.args.len() == 3 {
            name_positions(program, a.pred, &a.args, votes);
        }
        for t in &a.args {
            term_votes(program, t, votes);
        }
    };
    for s in &program.statements {
        match s {
            Statement::Rule { head, body, .. } => {
                vote(head, &mut votes);
                body.iter()
                    .for_each(|l| for_each_atom(l, false, &mut |a, _| vote(a, &mut votes)));
            }
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                vote(action, &mut votes);
                conditions
                    .iter()
                    .for_each(|l| for_each_atom(l, false, &mut |a, _| vote(a, &mut votes)));
                effects.iter().for_each(|e| vote(&e.atom, &mut votes));
            }
        }
    }
    let decided = if votes.named != 0 {
        votes.named
    } else {
        votes.xy
    };
    Layout {
        orientation: if decided > 0 {
            Orientation::RowColumn
        } else {
            Orientation::AcrossUp
        },
        four: votes.four,
        not_boards: votes
            .positions
            .into_iter()
            .filter(|(_, p)| p[0] < 0 || p[1] < 0)
            .map(|(name, _)| name)
            .collect(),
    }
}

/// Counts, for the first two arguments of a three-argument relation, variables named like a
/// coordinate (+1) or not (-1).
fn name_positions(program: &Program, name: Sym, args: &[Term], votes: &mut Votes) {
    let name = program.symbols.name(name);
    let i = match votes.positions.iter().position(|p| p.0 == name) {
        Some(i) => i,
        None => {
            votes.positions.push((name.to_string(), [0, 0]));
            votes.positions.len() - 1
        }
    };
    for (k, t) in args[..2].iter().enumerate() {
        if let Term::Var(s, _) = t {
            let stem = stem(program.symbols.name(*s));
            votes.positions[i].1[k] += if coordinate_ish(&stem) { 1 } else { -1 };
        }
    }
}

/// A coordinate's name, or one ending in a coordinate's letter (`dr`, `oc`: a move's destination
/// row and origin column).
fn coordinate_ish(stem: &str) -> bool {
    coordinate_name(stem) || stem.ends_with(['x', 'y', 'r', 'c'])
}

/// Signs of a matrix (positive) or of across-and-up (negative) among the coordinates' variable
/// names: `named` from row and column names, `xy` from `X` and `Y`.
#[derive(Default)]
struct Votes {
    named: i64,
    xy: i64,
    /// The first shape read for each four-argument cell relation.
    four: Vec<(String, Shape)>,
    /// Three-argument relations and their [`name_positions`] counts.
    positions: Vec<(String, [i64; 2])>,
}

/// Votes of the `cell(...)` terms nested in `t` (`true(cell(M, N, x))`).
fn term_votes(program: &Program, t: &Term, votes: &mut Votes) {
    if let Term::Func(f, args, _) = t {
        if is_cell_name(program.symbols.name(*f)) {
            count(program, *f, args, votes);
        }
        if args.len() == 3 {
            name_positions(program, *f, args, votes);
        }
        for a in args {
            term_votes(program, a, votes);
        }
    }
}

/// +1 for each sign of a matrix in a cell's two coordinates, -1 for each sign of across-and-up. The
/// coordinates are the first two arguments of a three-argument cell, the middle two of a
/// four-argument one.
fn count(program: &Program, name: Sym, args: &[Term], votes: &mut Votes) {
    let var = |t: &Term| match t {
        Term::Var(s, _) => Some(stem(program.symbols.name(*s))),
        _ => None,
    };
    let shape = match args.len() {
        3 => Shape::three(),
        4 => {
            let name = program.symbols.name(name);
            if let Some(known) = votes.four.iter().find(|f| f.0 == name) {
                known.1.clone()
            } else {
                let names: Vec<Option<String>> = args.iter().map(var).collect();
                match Shape::four(&names) {
                    Some(shape) => {
                        votes.four.push((name.to_string(), shape.clone()));
                        shape
                    }
                    None => return,
                }
            }
        }
        _ => return,
    };
    let coordinates = [args[shape.first].clone(), args[shape.second].clone()];
    if let Some(first) = var(&coordinates[0]) {
        votes.named +=
            i64::from(row_like(&first)) - i64::from(file_like(&first) || column_like(&first));
        votes.xy += i64::from(first == "y") - i64::from(first == "x");
    }
    if let Some(second) = var(&coordinates[1]) {
        votes.named +=
            i64::from(column_like(&second)) - i64::from(rank_like(&second) || row_like(&second));
        votes.xy -= i64::from(second == "y");
        votes.xy += i64::from(second == "x");
    }
}

/// Whether a cell's value means "nothing here".
fn is_blank(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "b" | "blank" | "empty" | "(b)" | "(blank)" | "(empty)"
    )
}

/// A relation drawn as boards.
struct Board {
    sym: Sym,
    arity: usize,
    shape: Shape,
}

/// One fact of a board: which board (for a relation of several), its coordinates and its value.
type Square = (Option<TermId>, TermId, TermId, Vec<TermId>);

impl Board {
    fn holds(&self, terms: &TermStore, t: TermId) -> bool {
        terms.sym(t) == self.sym && terms.args(t).len() == self.arity
    }

    fn split(&self, terms: &TermStore, t: TermId) -> Square {
        let a = terms.args(t);
        (
            self.shape.board.map(|i| a[i]),
            a[self.shape.first],
            a[self.shape.second],
            self.shape.value.iter().map(|&i| a[i]).collect(),
        )
    }
}

/// Whether a coordinate reads as one: a number or a name of at most three characters (`a`, `c3`).
fn coordinate_like(terms: &TermStore, t: TermId) -> bool {
    terms.as_int(t).is_some() || (terms.args(t).is_empty() && terms.kif(t).len() <= 3)
}

/// The relations of `domain` drawn as boards (see the module documentation), by name.
fn boards(terms: &TermStore, domain: &[TermId], layout: &Layout) -> Vec<Board> {
    let mut groups: Vec<(Sym, usize, Vec<TermId>)> = Vec::new();
    for &t in domain {
        let (sym, arity) = (terms.sym(t), terms.args(t).len());
        if arity != 3 && arity != 4 {
            continue;
        }
        match groups.iter_mut().find(|g| g.0 == sym && g.1 == arity) {
            Some(g) => g.2.push(t),
            None => groups.push((sym, arity, vec![t])),
        }
    }
    let mut found: Vec<Board> = groups
        .into_iter()
        .filter_map(|(sym, arity, props)| {
            let name = terms.name(sym);
            if arity == 4 {
                let shape = layout.four.iter().find(|f| f.0 == name)?.1.clone();
                return Some(Board { sym, arity, shape });
            }
            let board = Board {
                sym,
                arity,
                shape: Shape::three(),
            };
            if is_cell_name(name) {
                return Some(board);
            }
            if layout.not_boards.iter().any(|n| n == name) {
                return None;
            }
            let mut xs: Vec<TermId> = props.iter().map(|&t| terms.args(t)[0]).collect();
            let mut ys: Vec<TermId> = props.iter().map(|&t| terms.args(t)[1]).collect();
            xs.sort();
            xs.dedup();
            ys.sort();
            ys.dedup();
            let mut squares: Vec<(TermId, TermId)> = props
                .iter()
                .map(|&t| (terms.args(t)[0], terms.args(t)[1]))
                .collect();
            squares.sort();
            squares.dedup();
            let grid = xs.len() >= 2
                && ys.len() >= 2
                && 2 * squares.len() >= xs.len() * ys.len()
                && xs.iter().chain(&ys).all(|&c| coordinate_like(terms, c));
            grid.then_some(board)
        })
        .collect();
    found.sort_by(|a, b| terms.name(a.sym).cmp(terms.name(b.sym)));
    found
}

/// Draws a state (see the module documentation). The grid spans the cells of `domain` (all the base
/// propositions), so empty squares show too.
pub(crate) fn draw_state(
    terms: &TermStore,
    facts: &[TermId],
    domain: &[TermId],
    syntax: Syntax,
    layout: &Layout,
) -> Drawing {
    let show = |t: TermId| match syntax {
        Syntax::Kif => terms.kif(t),
        Syntax::Infix => terms.infix(t),
    };
    let mut grids: Vec<Grid> = Vec::new();
    let mut drawn: Vec<&Board> = Vec::new();
    let boards = boards(terms, domain, layout);
    for board in &boards {
        let squares: Vec<Square> = domain
            .iter()
            .filter(|&&t| board.holds(terms, t))
            .map(|&t| board.split(terms, t))
            .collect();
        let cells: Vec<Square> = facts
            .iter()
            .filter(|&&t| board.holds(terms, t))
            .map(|&t| board.split(terms, t))
            .collect();
        if too_many_squares(&squares) {
            continue; // listed as facts: a drawing that size helps nobody, and costs every step
        }
        let mut occupied: Vec<_> = cells.iter().map(|c| (c.0, c.1, c.2)).collect();
        occupied.sort();
        let before = occupied.len();
        occupied.dedup();
        if occupied.len() < before {
            continue; // two things on one square: not a board after all
        }
        let mut parts: Vec<Option<TermId>> = squares.iter().map(|s| s.0).collect();
        parts.sort_by_key(|p| p.map(|t| sort_key(terms, t)));
        parts.dedup();
        for part in parts {
            let on_part: Vec<(TermId, TermId, String)> = squares
                .iter()
                .filter(|s| s.0 == part)
                .map(|s| (s.1, s.2, value_text(&s.3, &show)))
                .collect();
            let part_cells: Vec<(TermId, TermId, String)> = cells
                .iter()
                .filter(|c| c.0 == part)
                .map(|c| (c.1, c.2, value_text(&c.3, &show)))
                .collect();
            let title = match part {
                Some(p) => format!("{} {}", terms.name(board.sym), show(p)),
                None => terms.name(board.sym).to_string(),
            };
            grids.push(grid(
                terms,
                title,
                &on_part,
                &part_cells,
                &show,
                layout.orientation,
            ));
        }
        drawn.push(board);
    }
    let mut rest: Vec<String> = facts
        .iter()
        .filter(|&&t| !drawn.iter().any(|b| b.holds(terms, t)))
        .map(|&t| show(t))
        .collect();
    rest.sort();
    Drawing {
        boards: grids,
        facts: rest,
    }
}

/// The most squares a board may have to be drawn (a 64 by 64 grid): past it, its facts are listed.
const MAX_DRAWN_SQUARES: usize = 64 * 64;

/// Whether the grids of `squares` would pass [`MAX_DRAWN_SQUARES`] (rows times columns, over all
/// parts of the board).
fn too_many_squares(squares: &[Square]) -> bool {
    let distinct = |mut v: Vec<(Option<TermId>, TermId)>| {
        v.sort_unstable();
        v.dedup();
        v
    };
    let firsts = distinct(squares.iter().map(|s| (s.0, s.1)).collect());
    let seconds = distinct(squares.iter().map(|s| (s.0, s.2)).collect());
    let mut columns: HashMap<Option<TermId>, usize> = HashMap::new();
    for s in &seconds {
        *columns.entry(s.0).or_default() += 1;
    }
    // Per part, its rows times its columns.
    let mut total = 0usize;
    for part in firsts.chunk_by(|a, b| a.0 == b.0) {
        let across = columns.get(&part[0].0).copied().unwrap_or(0);
        total = total.saturating_add(part.len().saturating_mul(across));
    }
    total > MAX_DRAWN_SQUARES
}

/// A square's value as drawn: its parts separated by `/` (`white/rook`).
fn value_text(parts: &[TermId], show: &dyn Fn(TermId) -> String) -> String {
    parts.iter().map(|&t| show(t)).collect::<Vec<_>>().join("/")
}

/// Numbers in numeric order before names in alphabetical order.
fn sort_key(terms: &TermStore, t: TermId) -> (i64, String) {
    (terms.as_int(t).unwrap_or(i64::MAX), terms.kif(t))
}

/// One grid titled `title`: its `squares` (every square a value may stand on, with that value) and
/// `cells` (what stands on each square in the state), as (first coordinate, second coordinate, value).
fn grid(
    terms: &TermStore,
    title: String,
    squares: &[(TermId, TermId, String)],
    cells: &[(TermId, TermId, String)],
    show: &dyn Fn(TermId) -> String,
    orientation: Orientation,
) -> Grid {
    let key = |t: &TermId| sort_key(terms, *t);
    let mut firsts: Vec<TermId> = squares.iter().map(|c| c.0).collect();
    let mut seconds: Vec<TermId> = squares.iter().map(|c| c.1).collect();
    firsts.sort_by_key(key);
    firsts.dedup();
    seconds.sort_by_key(key);
    seconds.dedup();
    // Rows from the top of the drawing down, columns from left to right, and how to find a
    // cell's value from its row and column.
    let (rows, columns): (Vec<TermId>, Vec<TermId>) = match orientation {
        Orientation::AcrossUp => (seconds.into_iter().rev().collect(), firsts),
        Orientation::RowColumn => (firsts, seconds),
    };
    let on: HashMap<(TermId, TermId), &String> = cells.iter().map(|c| ((c.0, c.1), &c.2)).collect();
    let value = |row: TermId, column: TermId| {
        let (a, b) = match orientation {
            Orientation::AcrossUp => (column, row),
            Orientation::RowColumn => (row, column),
        };
        on.get(&(a, b))
            .map(|v| (*v).clone())
            .filter(|v| !is_blank(v))
    };
    Grid {
        title,
        cells: rows
            .iter()
            .map(|&r| columns.iter().map(|&c| value(r, c)).collect())
            .collect(),
        rows: rows.iter().map(|&r| show(r)).collect(),
        columns: columns.iter().map(|&c| show(c)).collect(),
        labels_on_top: orientation == Orientation::RowColumn,
        widest: squares.iter().map(|c| c.2.len()).max().unwrap_or(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_kif;

    fn layout(rules: &str) -> Layout {
        layout_of(&parse_kif(rules).unwrap())
    }

    #[test]
    fn row_and_column_names_outvote_x_and_y() {
        // The eight-puzzle names its cells `?m ?n` where it declares them and `?x ?y` in its moves.
        let l = layout(
            "(<= (base (cell ?m ?n ?t)) (index ?m) (index ?n) (tile ?t)) \
             (<= (next (cell ?x ?y b)) (true (cell ?x ?y ?z))) \
             (<= (next (cell ?u ?y ?z)) (true (cell ?x ?y ?z)))",
        );
        assert_eq!(l.orientation, Orientation::RowColumn);
        // X and Y alone: across and up (Connect Four).
        let l = layout("(<= (next (cell ?x ?y red)) (true (cell ?x ?y b)))");
        assert_eq!(l.orientation, Orientation::AcrossUp);
        // Y first: a matrix read row by row.
        let l = layout("(<= (next (cell ?y ?x p)) (true (cell ?y ?x b)))");
        assert_eq!(l.orientation, Orientation::RowColumn);
    }

    #[test]
    fn four_argument_cells_are_read_from_their_coordinate_names() {
        let name = |n: &str| Some(n.to_string());
        // Pentago: a quadrant, then X and Y.
        let pentago = Shape::four(&[name("q"), name("x"), name("y"), name("player")]).unwrap();
        assert_eq!(
            (pentago.board, pentago.first, pentago.second),
            (Some(0), 1, 2)
        );
        assert_eq!(pentago.value, vec![3]);
        // Chess: X and Y, then two values shown together.
        let chess = Shape::four(&[name("x"), name("y"), name("player"), name("piece")]).unwrap();
        assert_eq!((chess.board, chess.value.clone()), (None, vec![2, 3]));
        // A third coordinate picks the board of a three-dimensional game.
        let cube = Shape::four(&[name("x"), name("y"), name("z"), name("s")]).unwrap();
        assert_eq!((cube.board, cube.value.clone()), (Some(2), vec![3]));
        // Nothing named as a coordinate: not a board.
        assert!(Shape::four(&[name("a"), name("b"), name("c"), name("d")]).is_none());
        let l = layout("(<= (next (cellHolds ?q ?x ?y ?p)) (true (cellHolds ?q ?x ?y ?p)))");
        assert_eq!(l.four, vec![("cellHolds".to_string(), pentago)]);
    }

    #[test]
    fn a_board_past_the_drawn_size_is_listed_as_facts() {
        let draw = |side: usize| {
            let l = layout("(<= (next (cell ?x ?y ?z)) (true (cell ?x ?y ?z)))");
            let mut terms = TermStore::new(crate::syntax::ast::Symbols::new());
            let (cell, b) = (terms.intern_sym("cell"), terms.intern_sym("b"));
            let b = terms.constant(b);
            let mut domain = Vec::new();
            for x in 0..side {
                for y in 0..side {
                    let (x, y) = (
                        terms.intern_sym(&x.to_string()),
                        terms.intern_sym(&y.to_string()),
                    );
                    let (x, y) = (terms.constant(x), terms.constant(y));
                    domain.push(terms.func(cell, &[x, y, b]));
                }
            }
            draw_state(&terms, &domain[..3], &domain, Syntax::Kif, &l)
        };
        let small = draw(64);
        assert_eq!(small.boards.len(), 1);
        assert_eq!(small.boards[0].cells.len(), 64);
        assert!(small.facts.is_empty());
        let big = draw(65);
        assert!(big.boards.is_empty(), "65 by 65 squares is past the limit");
        assert_eq!(big.facts.len(), 3, "{:?}", big.facts);
    }

    #[test]
    fn relations_whose_first_arguments_are_named_otherwise_are_not_boards() {
        let l = layout("(<= (next (connected ?k ?m ?n)) (true (connected ?k ?m ?n)))");
        assert_eq!(l.not_boards, vec!["connected".to_string()]);
        let l = layout("(<= (next (hole ?dr ?dc peg)) (true (hole ?or ?oc peg)))");
        assert!(l.not_boards.is_empty());
    }
}
