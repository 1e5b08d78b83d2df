//! Helpers for the actions of `grammar/infix.lalrpop`.

use lalrpop_util::ParseError;

use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{Atom, Effect, Literal, Span, Statement, Sym, Symbols, Term};

/// A span from lalrpop's byte locations.
pub fn sp(l: usize, r: usize) -> Span {
    Span::new(l, r)
}

/// What the infix parser carries along: the symbol table and the anonymous variables to name.
#[derive(Default)]
pub struct Ctx {
    /// Where names are interned.
    pub symbols: Symbols,
    /// How many `_` variables have been met so far.
    pub anonymous: u32,
    /// The `_` variables of the statement being read, under names no author can write (`_#1`)
    /// until [`Ctx::finish`] gives them their own.
    pending: Vec<Sym>,
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
    /// A variable term; a lone `_` gets a placeholder name until its statement is finished.
    pub fn var(&mut self, name: &str, span: Span) -> Term {
        if name == "_" {
            self.anonymous += 1;
            let placeholder = self.symbols.intern(&format!("_#{}", self.anonymous));
            self.pending.push(placeholder);
            return Term::Var(placeholder, span);
        }
        Term::Var(self.symbols.intern(name), span)
    }

    /// A statement read whole: each `_` in it is named `_1`, `_2`, ..., skipping the names its
    /// author gave variables (`p :- q(_, _1)` must not read `q(_1, _1)`).
    pub fn finish(&mut self, mut statement: Statement) -> Statement {
        if self.pending.is_empty() {
            return statement;
        }
        // Sets and maps, not lists: a statement may hold many thousands of `_`.
        let pending: hashbrown::HashSet<Sym> =
            std::mem::take(&mut self.pending).into_iter().collect();
        let mut written: hashbrown::HashSet<Sym> = hashbrown::HashSet::new();
        let mut order: Vec<Sym> = Vec::new();
        each_term_mut(&mut statement, &mut |t| {
            if let Term::Var(v, _) = t {
                if pending.contains(v) {
                    order.push(*v);
                } else {
                    written.insert(*v);
                }
            }
        });
        let mut names: hashbrown::HashMap<Sym, Sym> = hashbrown::HashMap::new();
        let mut k = 0;
        for placeholder in order {
            let name = loop {
                k += 1;
                let name = self.symbols.intern(&format!("_{k}"));
                if !written.contains(&name) {
                    break name;
                }
            };
            names.insert(placeholder, name);
        }
        each_term_mut(&mut statement, &mut |t| {
            if let Term::Var(v, _) = t {
                if let Some(&name) = names.get(v) {
                    *v = name;
                }
            }
        });
        statement
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

/// Calls `f` on every term of a statement, variables and nested terms included.
fn each_term_mut(statement: &mut Statement, f: &mut impl FnMut(&mut Term)) {
    fn term(t: &mut Term, f: &mut impl FnMut(&mut Term)) {
        if let Term::Func(_, args, _) = t {
            args.iter_mut().for_each(|a| term(a, f));
        }
        f(t);
    }
    fn atom(a: &mut Atom, f: &mut impl FnMut(&mut Term)) {
        a.args.iter_mut().for_each(|t| term(t, f));
    }
    fn literal(l: &mut Literal, f: &mut impl FnMut(&mut Term)) {
        match l {
            Literal::Atom(a) => atom(a, f),
            Literal::Not(inner, _) => literal(inner, f),
            Literal::Or(ls, _) | Literal::And(ls, _) => ls.iter_mut().for_each(|l| literal(l, f)),
        }
    }
    match statement {
        Statement::Rule { head, body, .. } => {
            atom(head, f);
            body.iter_mut().for_each(|l| literal(l, f));
        }
        Statement::Operation {
            action,
            conditions,
            effects,
            ..
        } => {
            atom(action, f);
            conditions.iter_mut().for_each(|l| literal(l, f));
            effects.iter_mut().for_each(|e| atom(&mut e.atom, f));
        }
    }
}
