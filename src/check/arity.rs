//! One arity per relation and function symbol, and the keywords' own arities: the engines read a
//! keyword only at its arity, so a use at another is an error at its place, not a game that silently
//! lacks the keyword.

use hashbrown::{HashMap, HashSet};

use crate::diagnostics::{count, Diagnostic};
use crate::syntax::ast::{Atom, Program, Span, Sym, Syntax, Term};
use crate::syntax::Keyword;

/// The arities the engines read a keyword relation at (in a game of operation rules when
/// `operational`), and a use of it in `syntax`.
fn keyword_arity(
    name: &str,
    syntax: Syntax,
    operational: bool,
) -> Option<(&'static [usize], &'static str)> {
    let kif = syntax == Syntax::Kif;
    let (arities, example): (&'static [usize], _) = match Keyword::of(name)? {
        Keyword::Role => (&[1], if kif { "(role white)" } else { "role(white)" }),
        Keyword::Init => (
            &[1],
            if kif {
                "(init (cell 1 1 b))"
            } else {
                "init(cell(1,1,b))"
            },
        ),
        Keyword::True => (
            &[1],
            if kif {
                "(true (cell 1 1 b))"
            } else {
                "true(cell(1,1,b))"
            },
        ),
        Keyword::Next => (
            &[1],
            if kif {
                "(next (cell ?m ?n x))"
            } else {
                "next(cell(M,N,x))"
            },
        ),
        Keyword::Base => (
            &[1],
            if kif {
                "(base (cell 1 1 b))"
            } else {
                "base(cell(1,1,b))"
            },
        ),
        Keyword::Does => (
            &[2],
            if kif {
                "(does white (mark ?m ?n))"
            } else {
                "does(white,mark(M,N))"
            },
        ),
        Keyword::Input => (
            &[2],
            if kif {
                "(input white (mark 1 1))"
            } else {
                "input(white,mark(1,1))"
            },
        ),
        // Epilog's one-argument `legal(A)` is the move of whoever has control, in games of operation
        // rules only: classic GDL reads `legal` with its role.
        Keyword::Legal => (
            if operational { &[2, 1] } else { &[2] },
            if kif {
                "(legal white (mark ?m ?n))"
            } else {
                "legal(white,mark(M,N))"
            },
        ),
        Keyword::Goal => (
            &[2],
            if kif {
                "(goal white 100)"
            } else {
                "goal(white,100)"
            },
        ),
        Keyword::Terminal => (
            &[0],
            if kif {
                "(<= terminal (line x))"
            } else {
                "terminal :- line(x)"
            },
        ),
        Keyword::Distinct => (
            &[2],
            if kif {
                "(distinct ?m ?n)"
            } else {
                "distinct(M,N)"
            },
        ),
        Keyword::Implies | Keyword::Not | Keyword::Or | Keyword::And => return None,
    };
    Some((arities, example))
}

/// The arity of an infix built-in other than `distinct` (a keyword), and a use of it.
fn builtin_arity(name: &str, syntax: Syntax) -> Option<(usize, &'static str)> {
    if syntax != Syntax::Infix {
        return None;
    }
    Some(match name.to_ascii_lowercase().as_str() {
        "same" => (2, "same(X, Y)"),
        "less" => (2, "less(X, 10)"),
        "leq" => (2, "leq(X, 10)"),
        "plus" => (3, "plus(X, 1, Y)"),
        "minus" => (3, "minus(X, 1, Y)"),
        "times" => (3, "times(X, 2, Y)"),
        _ => return None,
    })
}

pub(super) struct Arities<'p> {
    p: &'p Program,
    /// A game of operation rules, whose `legal` may take the action alone.
    operational: bool,
    seen: HashMap<(bool, Sym), (usize, Span)>,
    reported: HashSet<(bool, Sym, usize)>,
    errors: Vec<Diagnostic>,
}

impl<'p> Arities<'p> {
    /// No use seen yet; `operational` for a game of operation rules.
    pub(super) fn new(p: &'p Program, operational: bool) -> Arities<'p> {
        Arities {
            p,
            operational,
            seen: HashMap::new(),
            reported: HashSet::new(),
            errors: Vec::new(),
        }
    }

    /// The problems found.
    pub(super) fn into_errors(self) -> Vec<Diagnostic> {
        self.errors
    }

    pub(super) fn note(&mut self, func: bool, s: Sym, arity: usize, span: Span) {
        let name = self.p.symbols.name(s);
        let operational = self.operational;
        if let (false, Some((takes, example))) = (func, builtin_arity(name, self.p.syntax)) {
            // A built-in at another arity would be an ordinary relation no rule can define.
            if takes != arity && self.reported.insert((func, s, arity)) {
                self.errors.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "the built-in `{}` takes {}, not {arity}",
                            name.to_ascii_lowercase(),
                            count(takes, "argument")
                        ),
                    )
                    .with_help(format!("write it like `{example}`")),
                );
            }
            return;
        }
        if let (false, Some((arities, example))) =
            (func, keyword_arity(name, self.p.syntax, operational))
        {
            // The engines read a keyword only at its own arity: any other use is another relation,
            // and the game would silently lack the keyword.
            if !arities.contains(&arity) && self.reported.insert((func, s, arity)) {
                let takes = match arities {
                    [0] => "no arguments".to_string(),
                    [n] => count(*n, "argument"),
                    _ => format!("{} or {} arguments", arities[0], arities[1]),
                };
                self.errors.push(
                    Diagnostic::error(
                        span,
                        format!("`{}` takes {takes}, not {arity}", name.to_ascii_lowercase()),
                    )
                    .with_help(format!("write it like `{example}`")),
                );
            }
            return;
        }
        let &mut (first, first_span) = self.seen.entry((func, s)).or_insert((arity, span));
        if first != arity && self.reported.insert((func, s, arity)) {
            let what = if func { "function" } else { "relation" };
            let name = self.p.symbols.name(s);
            self.errors.push(
                Diagnostic::error(
                    span,
                    format!(
                        "the {what} `{name}` has {} here but {first} where it is first used",
                        count(arity, "argument")
                    ),
                )
                .with_label(
                    first_span,
                    format!("`{name}` first used with {} here", count(first, "argument")),
                )
                .with_help(format!(
                    "every use of `{name}` must have the same number of arguments"
                )),
            );
        }
    }

    pub(super) fn term(&mut self, t: &Term) {
        if let Term::Func(f, args, s) = t {
            self.note(true, *f, args.len(), *s);
            for a in args {
                self.term(a);
            }
        }
    }

    pub(super) fn atom(&mut self, a: &Atom) {
        self.note(false, a.pred, a.args.len(), a.span);
        for t in &a.args {
            self.term(t);
        }
    }
}
