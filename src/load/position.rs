//! Starting a rule game anywhere: the rules with their `init` replaced by the facts of a given state,
//! the way ggp-base's player tester builds its "medias res" games. Everything downstream (both
//! engines, players, remote seats that are sent the rules, match records) then sees an ordinary game
//! that begins there.
//!
//! A state is written as facts in either syntax, one after another: KIF `(cell 1 1 x) (control
//! oplayer)` or infix `cell(1,1,x) control(o)`, comments allowed. [`Game::state_kif`] writes one in
//! KIF, so a state reached by moves is carried over the same way.
//!
//! [`Game::state_kif`]: crate::game::Game::state_kif

use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{for_each_atom, Atom, Program, Statement, Sym, Symbols, Syntax, Term};
use crate::syntax::Keyword;

/// Why a state cannot replace the rules' `init`.
#[derive(Debug, thiserror::Error)]
pub enum PositionError {
    /// The state's text does not parse (in the syntax it looks written in): every error with its
    /// place in that text, for the caller to render ([`crate::diagnostics::render`]).
    #[error("the state does not read as facts: {}", first(.0))]
    Syntax(Vec<Diagnostic>),
    /// A statement of the state is a rule or has variables.
    #[error("the state must be facts without variables, but has `{0}`")]
    NotAFact(String),
    /// A fact of the state is of a relation the game's states never hold.
    #[error("`{fact}` is not a fact of this game's states, which hold {known}")]
    NotInGame {
        /// The fact, as written.
        fact: String,
        /// The relations the states hold, `cell/3, control/1`.
        known: String,
    },
    /// The state is empty.
    #[error("the state has no facts")]
    Empty,
}

fn first(errors: &[Diagnostic]) -> String {
    errors
        .first()
        .map_or_else(|| "no detail".to_string(), |d| d.message.clone())
}

/// The text of `program` with its `init` rules replaced by the facts of `state` (see the module
/// documentation), in the program's own syntax.
///
/// ```
/// use ggp::load::position::with_initial_state;
/// use ggp::syntax::{ast::Syntax, parse_str};
/// let rules = "(role a) (init (count 0)) (<= (legal a go) (true (count ?n))) \
///              (<= (next (count 1)) (does a go)) (<= terminal (true (count 1))) (goal a 100)";
/// let program = parse_str(rules, Syntax::Kif).unwrap();
/// let text = with_initial_state(&program, "(count 1)").unwrap();
/// assert!(text.contains("(init (count 1))"));
/// assert!(!text.contains("(init (count 0))"));
/// ```
pub fn with_initial_state(program: &Program, state: &str) -> Result<String, PositionError> {
    let syntax = crate::syntax::guess_syntax(state);
    let facts = crate::syntax::parse_str(state, syntax).map_err(PositionError::Syntax)?;
    let mut out = program.clone();
    // The comments are placed by their position among the statements, which no longer holds.
    out.comments.clear();
    out.blank_lines.clear();
    out.statements.retain(|s| match s {
        // KIF's keywords are read in any letter case: `(INIT ...)` is replaced too.
        Statement::Rule { head, .. } => {
            Keyword::of(program.symbols.name(head.pred)) != Some(Keyword::Init)
        }
        Statement::Operation { .. } => true,
    });
    let known = state_relations(program);
    let init = out.symbols.intern("init");
    let mut added = 0;
    for s in &facts.statements {
        let Statement::Rule { head, body, span } = s else {
            return Err(PositionError::NotAFact(statement_text(&facts, s)));
        };
        if !body.is_empty() || has_variables(&head.args) {
            return Err(PositionError::NotAFact(statement_text(&facts, s)));
        }
        let relation = (facts.symbols.name(head.pred).to_string(), head.args.len());
        if !known.contains(&relation) {
            let mut names: Vec<String> = known.iter().map(|(n, a)| format!("{n}/{a}")).collect();
            names.sort();
            return Err(PositionError::NotInGame {
                fact: statement_text(&facts, s),
                known: names.join(", "),
            });
        }
        let fact = Atom {
            pred: out.symbols.intern(facts.symbols.name(head.pred)),
            args: head
                .args
                .iter()
                .map(|t| copy_term(t, &facts.symbols, &mut out.symbols))
                .collect(),
            parens: false,
            span: *span,
        }
        .into_term();
        out.statements.push(Statement::Rule {
            head: Atom {
                pred: init,
                args: vec![fact],
                parens: false,
                span: *span,
            },
            body: Vec::new(),
            span: *span,
        });
        added += 1;
    }
    if added == 0 {
        return Err(PositionError::Empty);
    }
    Ok(match out.syntax {
        Syntax::Kif => crate::print::to_kif(&out),
        Syntax::Infix => crate::print::to_infix(&out),
    })
}

/// The relations (name and arity) a state of `program` can hold: what `init`, `next`, `true` and
/// `base` take, and what operations add or delete.
fn state_relations(program: &Program) -> Vec<(String, usize)> {
    // The fact inside `init(...)`, `next(...)`, `true(...)` or `base(...)`.
    let held = |a: &Atom| -> Option<(Sym, usize)> {
        if !matches!(
            Keyword::of(program.symbols.name(a.pred)),
            Some(Keyword::Init | Keyword::Next | Keyword::True | Keyword::Base)
        ) {
            return None;
        }
        match a.args.as_slice() {
            [Term::Const(s, _)] => Some((*s, 0)),
            [Term::Func(f, args, _)] => Some((*f, args.len())),
            _ => None,
        }
    };
    let mut found: Vec<(Sym, usize)> = Vec::new();
    for s in &program.statements {
        match s {
            Statement::Rule { head, body, .. } => {
                found.extend(held(head));
                for l in body {
                    for_each_atom(l, false, &mut |a, _| found.extend(held(a)));
                }
            }
            Statement::Operation { effects, .. } => {
                found.extend(effects.iter().map(|e| (e.atom.pred, e.atom.args.len())));
            }
        }
    }
    found.sort();
    found.dedup();
    found
        .into_iter()
        .map(|(pred, arity)| (program.symbols.name(pred).to_string(), arity))
        .collect()
}

fn has_variables(terms: &[Term]) -> bool {
    terms.iter().any(|t| match t {
        Term::Var(..) => true,
        Term::Const(..) => false,
        Term::Func(_, args, _) => has_variables(args),
    })
}

/// `t`, written with the names of `from`, with the same names interned in `to`.
fn copy_term(t: &Term, from: &Symbols, to: &mut Symbols) -> Term {
    match t {
        Term::Var(s, span) => Term::Var(to.intern(from.name(*s)), *span),
        Term::Const(s, span) => Term::Const(to.intern(from.name(*s)), *span),
        Term::Func(f, args, span) => Term::Func(
            to.intern(from.name(*f)),
            args.iter().map(|a| copy_term(a, from, to)).collect(),
            *span,
        ),
    }
}

/// A statement as its author wrote it, for an error message.
fn statement_text(program: &Program, s: &Statement) -> String {
    let mut one = Program {
        statements: vec![s.clone()],
        ..program.clone()
    };
    one.comments.clear();
    let text = match program.syntax {
        Syntax::Kif => crate::print::to_kif(&one),
        Syntax::Infix => crate::print::to_infix(&one),
    };
    text.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_str;

    fn tictactoe() -> Program {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.gdl"),
        )
        .unwrap();
        parse_str(&text, Syntax::Infix).unwrap()
    }

    #[test]
    fn an_infix_game_takes_a_state_in_either_syntax() {
        for state in ["cell(1,1,x) control(o)", "(cell 1 1 x) (control o)"] {
            let text = with_initial_state(&tictactoe(), state).unwrap();
            assert!(text.contains("init(cell(1, 1, x))"), "{text}");
            assert!(text.contains("init(control(o))"), "{text}");
            assert!(!text.contains("init(control(x))"), "{text}");
            assert!(parse_str(&text, Syntax::Infix).is_ok(), "{text}");
        }
    }

    #[test]
    fn keywords_in_capitals_are_replaced_and_read_as_keywords() {
        let rules = "(ROLE a) (INIT (count 0)) (<= (LEGAL a go) (TRUE (count ?n))) \
                     (<= (NEXT (count 1)) (DOES a go)) (<= TERMINAL (TRUE (count 1))) (GOAL a 100)";
        let program = parse_str(rules, Syntax::Kif).unwrap();
        let text = with_initial_state(&program, "(count 1)").unwrap();
        assert!(text.contains("(init (count 1))"), "{text}");
        assert!(!text.contains("(count 0)"), "{text}");
    }

    #[test]
    fn rules_and_variables_are_not_a_state() {
        for state in ["cell(X,1,x)", "cell(1,1,x) :- index(1)"] {
            assert!(matches!(
                with_initial_state(&tictactoe(), state),
                Err(PositionError::NotAFact(_))
            ));
        }
        assert!(matches!(
            with_initial_state(&tictactoe(), "cellholds(1,1,white)"),
            Err(PositionError::NotInGame { .. })
        ));
        assert!(matches!(
            with_initial_state(&tictactoe(), "% nothing\n"),
            Err(PositionError::Empty)
        ));
        assert!(matches!(
            with_initial_state(&tictactoe(), "cell(1,1"),
            Err(PositionError::Syntax(_))
        ));
    }
}
