//! From KIF S-expressions (what `grammar/kif.lalrpop` produces) to [`Statement`]s.
//!
//! KIF's grammar is only parentheses; what a list means depends on where it stands (a statement, a
//! literal, a term), so that decision is made here, where each misuse gets its own message.

use crate::diagnostics::{Diagnostic, Problems};
use crate::syntax::ast::{Atom, Literal, Span, Statement, Symbols, Term};
use crate::syntax::keyword::Keyword;

/// A KIF S-expression with its byte range.
#[derive(Debug)]
pub enum SExpr<'s> {
    /// A name, number or quoted string (without quotes).
    Sym(&'s str, usize, usize),
    /// `?name`, without `?`.
    Var(&'s str, usize, usize),
    /// `( ... )`.
    List(Vec<SExpr<'s>>, usize, usize),
}

impl SExpr<'_> {
    pub(crate) fn span(&self) -> Span {
        match self {
            SExpr::Sym(_, l, r) | SExpr::Var(_, l, r) | SExpr::List(_, l, r) => Span::new(*l, *r),
        }
    }

    fn describe(&self) -> String {
        match self {
            SExpr::Sym(s, ..) => format!("`{s}`"),
            SExpr::Var(s, ..) => format!("the variable `?{s}`"),
            SExpr::List(v, ..) if v.is_empty() => "`()`".to_string(),
            SExpr::List(..) => "a parenthesised list".to_string(),
        }
    }
}

/// Turns S-expressions into statements, collecting every error.
pub struct Converter<'a> {
    /// Where names are interned.
    pub symbols: &'a mut Symbols,
    /// Everything found wrong so far.
    pub errors: Problems,
}

impl Converter<'_> {
    /// The statement a top-level S-expression stands for, or `None` (with an error recorded).
    pub fn statement(&mut self, e: &SExpr) -> Option<Statement> {
        let span = e.span();
        match e {
            SExpr::List(items, ..) => {
                if let Some(SExpr::Sym(name, ..)) = items.first() {
                    if Keyword::of(name) == Some(Keyword::Implies) {
                        let Some(head) = items.get(1) else {
                            self.errors.push(
                                Diagnostic::error(span, "this rule has no head")
                                    .with_help("write `(<= head condition ...)`"),
                            );
                            return None;
                        };
                        let head = self.sentence(head);
                        let body: Vec<Option<Literal>> =
                            items[2..].iter().map(|l| self.literal(l)).collect();
                        let head = head?;
                        let body = body.into_iter().collect::<Option<Vec<_>>>()?;
                        return Some(Statement::Rule { head, body, span });
                    }
                }
                let head = self.sentence(e)?;
                Some(Statement::Rule {
                    head,
                    body: Vec::new(),
                    span,
                })
            }
            SExpr::Sym(..) => {
                let head = self.sentence(e)?;
                Some(Statement::Rule {
                    head,
                    body: Vec::new(),
                    span,
                })
            }
            SExpr::Var(name, ..) => {
                self.errors.push(
                    Diagnostic::error(
                        span,
                        format!("the variable `?{name}` cannot stand alone as a statement"),
                    )
                    .with_help(
                        "a statement is a fact like `(role white)` or a rule `(<= head body...)`",
                    ),
                );
                None
            }
        }
    }

    fn sentence(&mut self, e: &SExpr) -> Option<Atom> {
        let span = e.span();
        match e {
            SExpr::Sym(name, ..) => Some(Atom {
                pred: self.symbols.intern(name),
                args: Vec::new(),
                parens: false,
                span,
            }),
            SExpr::Var(name, ..) => {
                self.errors.push(
                    Diagnostic::error(
                        span,
                        format!("expected a sentence, found the variable `?{name}`"),
                    )
                    .with_help("a sentence starts with a relation name, like `(cell ?x ?y)`"),
                );
                None
            }
            SExpr::List(items, ..) => match items.first() {
                Some(SExpr::Sym(name, ..)) => {
                    let pred = self.symbols.intern(name);
                    let args = self.terms(&items[1..])?;
                    Some(Atom {
                        pred,
                        parens: args.is_empty(),
                        args,
                        span,
                    })
                }
                None => {
                    self.errors.push(
                        Diagnostic::error(span, "expected a sentence, found `()`")
                            .with_help("write a relation name inside the parentheses"),
                    );
                    None
                }
                Some(first) => {
                    self.errors.push(
                        Diagnostic::error(
                            first.span(),
                            format!("expected a relation name, found {}", first.describe()),
                        )
                        .with_help("a sentence starts with a relation name, like `(cell ?x ?y)`"),
                    );
                    None
                }
            },
        }
    }

    fn literal(&mut self, e: &SExpr) -> Option<Literal> {
        let span = e.span();
        if let SExpr::List(items, ..) = e {
            if let Some(SExpr::Sym(name, ..)) = items.first() {
                match Keyword::of(name) {
                    Some(Keyword::Not) => {
                        if items.len() != 2 {
                            self.errors.push(
                                Diagnostic::error(
                                    span,
                                    format!(
                                        "`not` takes exactly one literal, found {}",
                                        items.len() - 1
                                    ),
                                )
                                .with_help("write `(not (p ...))`; for several, negate each one"),
                            );
                            return None;
                        }
                        let inner = self.literal(&items[1])?;
                        return Some(Literal::Not(Box::new(inner), span));
                    }
                    Some(kw @ (Keyword::Or | Keyword::And)) => {
                        let lits: Vec<Option<Literal>> =
                            items[1..].iter().map(|l| self.literal(l)).collect();
                        let lits = lits.into_iter().collect::<Option<Vec<_>>>()?;
                        return Some(if kw == Keyword::Or {
                            Literal::Or(lits, span)
                        } else {
                            Literal::And(lits, span)
                        });
                    }
                    _ => {}
                }
            }
        }
        self.sentence(e).map(Literal::Atom)
    }

    fn terms(&mut self, items: &[SExpr]) -> Option<Vec<Term>> {
        let terms: Vec<Option<Term>> = items.iter().map(|t| self.term(t)).collect();
        terms.into_iter().collect()
    }

    fn term(&mut self, e: &SExpr) -> Option<Term> {
        let span = e.span();
        match e {
            SExpr::Sym(name, ..) => Some(Term::Const(self.symbols.intern(name), span)),
            SExpr::Var(name, ..) => Some(Term::Var(self.symbols.intern(name), span)),
            SExpr::List(items, ..) => match items.first() {
                Some(SExpr::Sym(name, ..)) => {
                    let f = self.symbols.intern(name);
                    let args = self.terms(&items[1..])?;
                    Some(Term::Func(f, args, span))
                }
                None => {
                    self.errors.push(
                        Diagnostic::error(span, "expected a term, found `()`")
                            .with_help("write a constant, a variable or `(function arg ...)`"),
                    );
                    None
                }
                Some(first) => {
                    self.errors.push(
                        Diagnostic::error(
                            first.span(),
                            format!("expected a function name, found {}", first.describe()),
                        )
                        .with_help(
                            "a compound term starts with a function name, like `(move ?x ?y)`",
                        ),
                    );
                    None
                }
            },
        }
    }
}
