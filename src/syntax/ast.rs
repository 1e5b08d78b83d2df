//! The program representation that both syntaxes parse into and both printers print from.
//!
//! A [`Program`] is a list of [`Statement`]s over interned [`Sym`]bols. Every node carries the byte
//! [`Span`] of its source text (a node built by a translation, not read from a file, has an empty span at
//! 0). The representation keeps what the author wrote (letter case, `(p)` versus `p`, `or`, nesting) so
//! that printing and re-parsing gives back an equal program; normalisation (expanding `or`, renaming
//! variables, deciding what `(p)` means) belongs to later stages.
//!
//! **Architecture invariant:** spans are ignored by equality, so `parse(print(p)) == p` compares meaning
//! and structure, not layout.

use std::fmt;
use std::hash::Hash;

use hashbrown::HashMap;

/// An interned name: a constant, function or relation symbol, or a variable name (without KIF's `?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// The table of interned names of one program.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, Sym>,
}

impl Symbols {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The symbol for `name`, creating it when it is new.
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&sym) = self.index.get(name) {
            return sym;
        }
        let sym = Sym(self.names.len() as u32);
        self.names.push(name.into());
        self.index.insert(name.into(), sym);
        sym
    }

    /// The symbol for `name` if it has been interned.
    pub fn get(&self, name: &str) -> Option<Sym> {
        self.index.get(name).copied()
    }

    /// The name of `sym`.
    ///
    /// # Panics
    /// When `sym` was not made by this table (a programming error, never an input error).
    pub fn name(&self, sym: Sym) -> &str {
        &self.names[sym.0 as usize]
    }

    /// The number of interned names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name has been interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

pub use crate::diagnostics::Span;

/// A term: the argument of a relation or of a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// A variable (`?x` in KIF, `X` in infix); the name is stored without `?`. Anonymous infix `_`
    /// variables are given fresh names `_1`, `_2`, ... by the parser.
    Var(Sym, Span),
    /// A constant: an identifier, a number or a quoted string, as written.
    Const(Sym, Span),
    /// A function term `f(t1, ..., tn)` / `(f t1 ... tn)`; `n` may be 0 when the author wrote `(f)`.
    Func(Sym, Vec<Term>, Span),
}

impl Term {
    /// The span of the whole term.
    pub fn span(&self) -> Span {
        match self {
            Term::Var(_, s) | Term::Const(_, s) | Term::Func(_, _, s) => *s,
        }
    }
}

/// An atomic sentence `p(t1, ..., tn)`. `parens` records whether a 0-ary atom was written `(p)` in KIF
/// (it is `false` for `p`, and always `false` for atoms with arguments).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    /// The relation symbol.
    pub pred: Sym,
    /// The arguments.
    pub args: Vec<Term>,
    /// KIF `(p)` rather than `p`, for a 0-ary atom.
    pub parens: bool,
    /// Where it was written.
    pub span: Span,
}

impl Atom {
    /// The atom as a term, as it stands inside `true(...)` or `init(...)`: a constant when it has no
    /// arguments, `cell(1, 2, b)` otherwise.
    pub fn into_term(self) -> Term {
        if self.args.is_empty() {
            Term::Const(self.pred, self.span)
        } else {
            Term::Func(self.pred, self.args, self.span)
        }
    }
}

/// A condition in a rule body. Built-in relations (`distinct`, `same`, `plus`, `less`, ...) are ordinary
/// [`Literal::Atom`]s whose relation symbol names the built-in; later stages recognise them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    /// A positive atom.
    Atom(Atom),
    /// Negation as failure: KIF `(not ...)`, infix `~...`.
    Not(Box<Literal>, Span),
    /// A disjunction: KIF `(or ...)`, infix `a | b`.
    Or(Vec<Literal>, Span),
    /// A parenthesised conjunction inside a disjunction or negation (infix `(a & b) | c`; KIF `(and ...)`).
    And(Vec<Literal>, Span),
}

impl Literal {
    /// The span of the whole literal.
    pub fn span(&self) -> Span {
        match self {
            Literal::Atom(a) => a.span,
            Literal::Not(_, s) | Literal::Or(_, s) | Literal::And(_, s) => *s,
        }
    }
}

/// One effect of an operation: add or delete a state fact.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Effect {
    /// `true` for `p` (add), `false` for `~p` (delete).
    pub add: bool,
    /// The fact.
    pub atom: Atom,
    /// Where it was written (including `~`).
    pub span: Span,
}

/// A top-level statement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Statement {
    /// A fact (empty body) or a rule `head :- body` / `(<= head body...)`.
    Rule {
        /// The conclusion.
        head: Atom,
        /// The conditions, a conjunction.
        body: Vec<Literal>,
        /// The whole statement.
        span: Span,
    },
    /// An operation rule (infix only): `action :: effects` or `action :: conditions ==> effects`.
    Operation {
        /// The action pattern, for example `mark(M,N)`.
        action: Atom,
        /// The conditions, a conjunction evaluated in the state before the move.
        conditions: Vec<Literal>,
        /// The effects.
        effects: Vec<Effect>,
        /// The whole statement.
        span: Span,
    },
}

impl Statement {
    /// The span of the whole statement.
    pub fn span(&self) -> Span {
        match self {
            Statement::Rule { span, .. } | Statement::Operation { span, .. } => *span,
        }
    }

    /// How much the engines write for this statement once its `or`s are multiplied out, in term
    /// nodes (an atom with its arguments' terms, saturating at `u64::MAX`): each alternative of a body
    /// becomes a rule of its own with a copy of the head and of the variables' names (an operation,
    /// one rule per effect with a copy of the conditions), a negated conjunction a relation of its
    /// own, and the largest product built on the way counts, even when a later empty `or` drops it.
    /// The checker and the lowering hold a program to [`MAX_EXPANDED_TERMS`] by this one count.
    pub fn expanded_terms(&self) -> u64 {
        let (head, body, effects): (&Atom, &[Literal], &[Effect]) = match self {
            Statement::Rule { head, body, .. } => (head, body, &[]),
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => (action, conditions, effects),
        };
        let e = Expansion::of_all(body);
        // Variable occurrences bound the names each rule keeps.
        let variables = variable_occurrences(
            std::iter::once(head).chain(effects.iter().map(|e| &e.atom)),
            body,
        );
        let per_rule = 1 + atom_size(head) + variables;
        let rules_per_alternative = (effects.len() as u64).max(1);
        let effect_size: u64 = effects.iter().map(|e| atom_size(&e.atom)).sum();
        let written = e
            .conditions
            .saturating_mul(rules_per_alternative)
            .saturating_add(
                e.alternatives
                    .saturating_mul(rules_per_alternative.saturating_mul(per_rule))
                    .saturating_add(e.alternatives.saturating_mul(effect_size)),
            );
        written.max(e.peak).saturating_add(e.aux)
    }

    /// The most conditions any rule the engines write for this statement has once its `or`s are
    /// multiplied out: the longest alternative of its body, or of the body of a relation made for
    /// a negated conjunction inside it (an operation's rules read its action too).
    /// The checker and the lowering hold every rule to [`MAX_RULE_CONDITIONS`] by this count.
    pub fn longest_body(&self) -> u64 {
        let (body, action) = match self {
            Statement::Rule { body, .. } => (body, 0),
            Statement::Operation { conditions, .. } => (conditions, 1),
        };
        let (own, inner) = longest_of_all(body);
        own.saturating_add(action).max(inner)
    }
}

/// The most conditions a rule of the engines may have: each is a level of the join and a copy of
/// the rule's plan per recursive condition, so a rule of ten thousand would take the stack and
/// quadratic memory. The public corpus's longest has 40 (hitori).
pub const MAX_RULE_CONDITIONS: u64 = 256;

/// A conjunction's longest alternative, and the longest rule made for a negation inside it.
fn longest_of_all(lits: &[Literal]) -> (u64, u64) {
    lits.iter().fold((0, 0), |(own, inner), l| {
        let (o, i) = longest(l);
        (own.saturating_add(o), inner.max(i))
    })
}

/// A literal's longest alternative, and the longest rule made for a negation inside it.
fn longest(l: &Literal) -> (u64, u64) {
    match l {
        Literal::Atom(_) => (1, 0),
        Literal::Not(inner, _) => match &**inner {
            Literal::Not(x, _) => longest(x),
            Literal::Atom(_) => (1, 0),
            Literal::Or(xs, span) => xs.iter().fold((0, 0), |(own, inner), x| {
                let (o, i) = longest(&Literal::Not(Box::new(x.clone()), *span));
                (own.saturating_add(o), inner.max(i))
            }),
            compound => {
                let (o, i) = longest(compound);
                (1, o.max(i))
            }
        },
        Literal::Or(xs, _) => xs.iter().fold((0, 0), |(own, inner), x| {
            let (o, i) = longest(x);
            (own.max(o), inner.max(i))
        }),
        Literal::And(xs, _) => longest_of_all(xs),
    }
}

/// The variable occurrences of `atoms` and of the atoms inside `lits`.
fn variable_occurrences<'a>(atoms: impl Iterator<Item = &'a Atom>, lits: &[Literal]) -> u64 {
    let mut n = 0u64;
    let mut count = |a: &Atom| {
        a.args
            .iter()
            .for_each(|t| for_each_var(t, &mut |_, _| n += 1))
    };
    atoms.for_each(&mut count);
    lits.iter()
        .for_each(|l| for_each_atom(l, false, &mut |a, _| count(a)));
    n
}

/// An atom's term nodes, itself included.
fn atom_size(a: &Atom) -> u64 {
    fn nodes(t: &Term) -> u64 {
        match t {
            Term::Var(..) | Term::Const(..) => 1,
            Term::Func(_, args, _) => args.iter().fold(1, |n, a| n.saturating_add(nodes(a))),
        }
    }
    a.args.iter().fold(1, |n, t| n.saturating_add(nodes(t)))
}

/// The most terms a program may multiply out into (see [`Statement::expanded_terms`]): a
/// body of eighteen two-way `or`s is 262,144 rules, so a few hundred bytes of rules could otherwise
/// fill any memory. The public corpus's largest, chess, needs 6,985.
pub const MAX_EXPANDED_TERMS: u64 = 1 << 20;

/// What a conjunction of literals multiplies out into.
#[derive(Clone, Copy)]
struct Expansion {
    /// Its alternatives (conjunctions of plain literals).
    alternatives: u64,
    /// Their literals' term nodes, all alternatives together.
    conditions: u64,
    /// What the relations made for negated conjunctions inside it take (each made once).
    aux: u64,
    /// The most any product on the way held (nodes, plus one per alternative for its list).
    peak: u64,
}

impl Expansion {
    const ONE: Expansion = Expansion {
        alternatives: 1,
        conditions: 0,
        aux: 0,
        peak: 1,
    };

    /// What a list of `alternatives` holding `conditions` nodes takes.
    fn held(alternatives: u64, conditions: u64) -> u64 {
        alternatives.saturating_add(conditions)
    }

    fn of_all(lits: &[Literal]) -> Expansion {
        lits.iter()
            .fold(Expansion::ONE, |acc, l| acc.and(Expansion::of(l)))
    }

    fn of(l: &Literal) -> Expansion {
        let plain = |size: u64, aux: u64| Expansion {
            alternatives: 1,
            conditions: size,
            aux,
            peak: Expansion::held(1, size),
        };
        match l {
            Literal::Atom(a) => plain(atom_size(a), 0),
            Literal::Not(inner, _) => match &**inner {
                Literal::Not(x, _) => Expansion::of(x),
                Literal::Atom(a) => plain(atom_size(a), 0),
                // Lowered as the conjunction of the alternatives' negations.
                Literal::Or(xs, span) => xs.iter().fold(Expansion::ONE, |acc, x| {
                    acc.and(Expansion::of(&Literal::Not(Box::new(x.clone()), *span)))
                }),
                compound => {
                    // A relation of its own over the shared variables: its rules are the compound's
                    // alternatives, each with a head of those variables and their names.
                    let e = Expansion::of(compound);
                    let variables =
                        variable_occurrences(std::iter::empty(), std::slice::from_ref(compound));
                    let per_rule = variables.saturating_mul(2).saturating_add(1);
                    let made = Expansion::held(e.alternatives, e.conditions)
                        .max(e.peak)
                        .saturating_add(e.alternatives.saturating_mul(per_rule));
                    plain(1, made.saturating_add(e.aux))
                }
            },
            Literal::Or(xs, _) => {
                let mut acc = Expansion {
                    alternatives: 0,
                    conditions: 0,
                    aux: 0,
                    peak: 0,
                };
                for x in xs {
                    let e = Expansion::of(x);
                    acc.alternatives = acc.alternatives.saturating_add(e.alternatives);
                    acc.conditions = acc.conditions.saturating_add(e.conditions);
                    acc.aux = acc.aux.saturating_add(e.aux);
                    acc.peak = acc.peak.max(e.peak);
                }
                acc.peak = acc
                    .peak
                    .max(Expansion::held(acc.alternatives, acc.conditions));
                acc
            }
            Literal::And(xs, _) => Expansion::of_all(xs),
        }
    }

    /// Every alternative of `self` with every alternative of `other`.
    fn and(self, other: Expansion) -> Expansion {
        let alternatives = self.alternatives.saturating_mul(other.alternatives);
        let conditions = self
            .conditions
            .saturating_mul(other.alternatives)
            .saturating_add(other.conditions.saturating_mul(self.alternatives));
        Expansion {
            alternatives,
            conditions,
            aux: self.aux.saturating_add(other.aux),
            peak: self
                .peak
                .max(other.peak)
                .max(Expansion::held(alternatives, conditions)),
        }
    }
}

/// Which concrete syntax a program was read from (and is printed in by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// Classic prefix GDL, `.kif`.
    Kif,
    /// Epilog / Gamemaster infix, `.gdl`.
    Infix,
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Syntax::Kif => "KIF",
            Syntax::Infix => "infix",
        })
    }
}

/// A comment of the source, kept so that the formatter can put it back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comment {
    /// The text after the comment marker (`;` or `%`), without the line end.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// A parsed rule file.
#[derive(Clone, Debug)]
pub struct Program {
    /// The statements in file order.
    pub statements: Vec<Statement>,
    /// The interned names the statements use.
    pub symbols: Symbols,
    /// The syntax it was read from.
    pub syntax: Syntax,
    /// The comments, in file order (not part of equality).
    pub comments: Vec<Comment>,
    /// Where the source's blank lines start (byte offsets), so that a printer keeps the author's
    /// grouping; empty for a program not read from text.
    pub blank_lines: Vec<u32>,
}

// Two programs are equal when their statements are, name for name: symbol ids may differ between two
// parses, so the comparison goes through the names.
impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        self.statements.len() == other.statements.len()
            && self
                .statements
                .iter()
                .zip(&other.statements)
                .all(|(a, b)| statement_eq(self, a, other, b))
    }
}

fn statement_eq(pa: &Program, a: &Statement, pb: &Program, b: &Statement) -> bool {
    match (a, b) {
        (
            Statement::Rule {
                head: ha, body: ba, ..
            },
            Statement::Rule {
                head: hb, body: bb, ..
            },
        ) => atom_eq(pa, ha, pb, hb) && lits_eq(pa, ba, pb, bb),
        (
            Statement::Operation {
                action: aa,
                conditions: ca,
                effects: ea,
                ..
            },
            Statement::Operation {
                action: ab,
                conditions: cb,
                effects: eb,
                ..
            },
        ) => {
            atom_eq(pa, aa, pb, ab)
                && lits_eq(pa, ca, pb, cb)
                && ea.len() == eb.len()
                && ea
                    .iter()
                    .zip(eb)
                    .all(|(x, y)| x.add == y.add && atom_eq(pa, &x.atom, pb, &y.atom))
        }
        _ => false,
    }
}

fn sym_eq(pa: &Program, a: Sym, pb: &Program, b: Sym) -> bool {
    pa.symbols.name(a) == pb.symbols.name(b)
}

fn atom_eq(pa: &Program, a: &Atom, pb: &Program, b: &Atom) -> bool {
    sym_eq(pa, a.pred, pb, b.pred)
        && a.parens == b.parens
        && a.args.len() == b.args.len()
        && a.args
            .iter()
            .zip(&b.args)
            .all(|(x, y)| term_eq(pa, x, pb, y))
}

fn term_eq(pa: &Program, a: &Term, pb: &Program, b: &Term) -> bool {
    match (a, b) {
        (Term::Var(x, _), Term::Var(y, _)) | (Term::Const(x, _), Term::Const(y, _)) => {
            sym_eq(pa, *x, pb, *y)
        }
        (Term::Func(f, xs, _), Term::Func(g, ys, _)) => {
            sym_eq(pa, *f, pb, *g)
                && xs.len() == ys.len()
                && xs.iter().zip(ys).all(|(x, y)| term_eq(pa, x, pb, y))
        }
        _ => false,
    }
}

fn lits_eq(pa: &Program, a: &[Literal], pb: &Program, b: &[Literal]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| lit_eq(pa, x, pb, y))
}

fn lit_eq(pa: &Program, a: &Literal, pb: &Program, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Atom(x), Literal::Atom(y)) => atom_eq(pa, x, pb, y),
        (Literal::Not(x, _), Literal::Not(y, _)) => lit_eq(pa, x, pb, y),
        (Literal::Or(xs, _), Literal::Or(ys, _)) | (Literal::And(xs, _), Literal::And(ys, _)) => {
            lits_eq(pa, xs, pb, ys)
        }
        _ => false,
    }
}

/// Calls `f` on every atom of a literal with its polarity (`true` = under an odd number of `not`).
pub fn for_each_atom<'a>(lit: &'a Literal, negated: bool, f: &mut impl FnMut(&'a Atom, bool)) {
    match lit {
        Literal::Atom(a) => f(a, negated),
        Literal::Not(inner, _) => for_each_atom(inner, !negated, f),
        Literal::Or(ls, _) | Literal::And(ls, _) => {
            for l in ls {
                for_each_atom(l, negated, f);
            }
        }
    }
}

/// Calls `f` on every variable occurrence of a term.
pub fn for_each_var(t: &Term, f: &mut impl FnMut(Sym, Span)) {
    match t {
        Term::Var(v, s) => f(*v, *s),
        Term::Const(..) => {}
        Term::Func(_, args, _) => {
            for a in args {
                for_each_var(a, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let mut s = Symbols::new();
        let a = s.intern("cell");
        let b = s.intern("Cell");
        assert_ne!(a, b, "letter case is kept as written");
        assert_eq!(s.intern("cell"), a);
        assert_eq!(s.name(b), "Cell");
    }

    #[test]
    fn programs_compare_by_names_not_ids() {
        let mut p = Program {
            statements: vec![],
            symbols: Symbols::new(),
            syntax: Syntax::Kif,
            comments: vec![],
            blank_lines: vec![],
        };
        let mut q = p.clone();
        q.symbols.intern("padding");
        for prog in [&mut p, &mut q] {
            let role = prog.symbols.intern("role");
            let x = prog.symbols.intern("x");
            prog.statements.push(Statement::Rule {
                head: Atom {
                    pred: role,
                    args: vec![Term::Const(x, Span::new(6, 7))],
                    parens: false,
                    span: Span::default(),
                },
                body: vec![],
                span: Span::default(),
            });
        }
        assert_eq!(p, q);
    }

    #[test]
    fn expanded_terms_count_what_the_lowering_writes() {
        let check = |src: &str, expected: &[u64]| {
            let p = crate::syntax::parse_str(src, Syntax::Kif).expect("parses");
            let counts: Vec<u64> = p.statements.iter().map(|s| s.expanded_terms()).collect();
            assert_eq!(counts, expected, "{src}");
        };
        // A fact: one rule of a head of two nodes and no variable.
        check("(p 1)", &[3]);
        // Three atoms of two nodes, one rule with three variable names.
        check("(<= (p ?x) (q ?x) (r ?x))", &[4 + 3 + 3]);
        // (a | b) & (c | d): four rules of two one-node conditions, each with its head.
        check("(<= p (or a b) (or c d))", &[8 + 4 * 2]);
        // A negated conjunction is one condition and a relation of its own with one rule of two.
        check("(<= p (not (and a b)) c)", &[2 + 2 + 4]);
        check("(<= p (not (not (or a b))))", &[2 + 2 * 2]);
        // A negated `or` is the conjunction of its alternatives' negations: one rule of four
        // conditions (six nodes) and six more (the head's two, three names of `?x`, one).
        check("(<= (p ?x) (q ?x) (not (or (r ?x) a a)))", &[6 + 6]);
        // A negated conjunction's relation copies its variables, once for each alternative.
        // Three conditions, a rule of six (head, names), the relation's alternatives (seven) and
        // its three rules of three (head and name of `?x`).
        check(
            "(<= (p ?x) (q ?x) (not (and (or (r ?x) a a))))",
            &[3 + 6 + 7 + 3 * 3],
        );
        // Arguments weigh: a two-way or of ten-argument atoms.
        check(
            "(<= p (or (q 1 2 3 4 5 6 7 8 9 10) (q 1 2 3 4 5 6 7 8 9 10)))",
            &[22 + 2 * 2],
        );
        // Empty conjunctions are still alternatives, and the product an empty `or` drops still
        // counts.
        let ands = "(or (and) (and)) ".repeat(40);
        assert!(count(&format!("(<= p {ands})")) >= 1 << 40);
        let ors = format!("{}(or)", "(or a b) ".repeat(30));
        assert!(count(&format!("(<= p {ors})")) >= 1 << 30);
        // Saturates instead of overflowing.
        let ors = "(or a b) ".repeat(70);
        check(&format!("(<= p {ors})"), &[u64::MAX]);
    }

    /// The count of a program of one statement.
    fn count(src: &str) -> u64 {
        let p = crate::syntax::parse_str(src, Syntax::Kif).expect("parses");
        p.statements[0].expanded_terms()
    }
}
