//! Helpers for the actions of `grammar/infix.lalrpop`.

use lalrpop_util::ParseError;

use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{Atom, Effect, Literal, Span, Statement, Symbols, Term};

/// A span from lalrpop's byte locations.
pub fn sp(l: usize, r: usize) -> Span {
    Span::new(l, r)
}

/// What the infix parser carries along: the symbol table and the counter for anonymous variables.
#[derive(Default)]
pub struct Ctx {
    /// Where names are interned.
    pub symbols: Symbols,
    /// How many `_` variables have been named so far.
    pub anonymous: u32,
}

/// A parsed rule body: its top-level conjuncts, and whether it was a bare disjunction `a | b` (which a
/// surrounding pair of parentheses must not wrap into a one-element conjunction).
pub struct Body {
    /// The conjuncts.
    pub lits: Vec<Literal>,
    /// `true` when `lits` is the single [`Literal::Or`] of an unparenthesised `a | b`.
    pub or: bool,
}

fn conj(mut lits: Vec<Literal>) -> Literal {
    if lits.len() == 1 {
        return lits.pop().expect("one element");
    }
    let span = lits[0].span().join(lits[lits.len() - 1].span());
    Literal::And(lits, span)
}

impl Body {
    /// `c1 | c2 | ...`, each `ci` a conjunction.
    pub fn disjunction(first: Vec<Literal>, rest: Vec<Vec<Literal>>, span: Span) -> Body {
        let mut alts = vec![conj(first)];
        alts.extend(rest.into_iter().map(conj));
        Body {
            lits: vec![Literal::Or(alts, span)],
            or: true,
        }
    }

    /// The literal `( body )` stands for: the disjunction itself, or a conjunction (even of one
    /// literal, so that `(p)` prints back as written).
    pub fn group(mut self, span: Span) -> Literal {
        if self.or {
            let mut lit = self.lits.pop().expect("a disjunction body has one literal");
            if let Literal::Or(_, s) = &mut lit {
                *s = span;
            }
            lit
        } else {
            Literal::And(self.lits, span)
        }
    }
}

impl Ctx {
    /// A variable term; a lone `_` gets a fresh name `_1`, `_2`, ...
    pub fn var(&mut self, name: &str, span: Span) -> Term {
        if name == "_" {
            self.anonymous += 1;
            let fresh = format!("_{}", self.anonymous);
            return Term::Var(self.symbols.intern(&fresh), span);
        }
        Term::Var(self.symbols.intern(name), span)
    }

    /// An operation statement; its effects must be atoms or negated atoms joined by `&`.
    pub fn operation<T>(
        &mut self,
        action: Atom,
        conditions: Vec<Literal>,
        effects: Body,
        span: Span,
    ) -> Result<Statement, ParseError<usize, T, Diagnostic>> {
        let mut out = Vec::with_capacity(effects.lits.len());
        for lit in effects.lits {
            match lit {
                Literal::Atom(atom) => out.push(Effect {
                    add: true,
                    span: atom.span,
                    atom,
                }),
                Literal::Not(inner, s) => match *inner {
                    Literal::Atom(atom) => out.push(Effect {
                        add: false,
                        atom,
                        span: s,
                    }),
                    other => return Err(bad_effect(other.span())),
                },
                other => return Err(bad_effect(other.span())),
            }
        }
        Ok(Statement::Operation {
            action,
            conditions,
            effects: out,
            span,
        })
    }
}

fn bad_effect<T>(span: Span) -> ParseError<usize, T, Diagnostic> {
    ParseError::User {
        error: Diagnostic::error(
            span,
            "an effect must be a fact to add (`p`) or to delete (`~p`)",
        )
        .with_help(
            "join effects with `&`; put conditions (with `|`, nested `~`, parentheses) before `==>`",
        ),
    }
}
