//! Safety: every variable of a rule gets its value from a positive condition, and which rules the
//! game reads (an unsafe rule the game never reads is dropped before play).

use hashbrown::{HashMap, HashSet};

use super::{atom_vars, Checker};
use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{
    for_each_atom, for_each_var, Atom, Literal, Program, Span, Statement, Sym, Syntax, Term,
};
use crate::syntax::Keyword;

/// A classic rule with a variable that no positive condition gives a value, as [`super::check`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsafeRule {
    /// Its index in the program's statements.
    pub statement: usize,
    /// Whether the game reads it (the relations the keywords read, directly or not); a rule the game
    /// does not read is dropped before play.
    pub read: bool,
    /// The variable role of a `legal` or `goal` rule, when it is the only variable without a value:
    /// the engines bind it by `role`, as a `role(R)` condition would.
    pub role_only: Option<Sym>,
}

/// The classic rules of `p` that have unsafe variables, in file order.
pub fn unsafe_rules(p: &Program) -> Vec<UnsafeRule> {
    let c = Checker::new(p);
    let used = c.used();
    let mut out = Vec::new();
    for (statement, st) in p.statements.iter().enumerate() {
        if let Statement::Rule { head, body, .. } = st {
            let (read, role_var, bad) = c.rule_unsafe_vars(head, body, &used);
            if bad.is_empty() {
                continue;
            }
            let role_only = role_var.filter(|&r| bad.iter().all(|&(v, ..)| v == r));
            out.push(UnsafeRule {
                statement,
                read,
                role_only,
            });
        }
    }
    out
}

/// An unsafe variable: which, where, in what part of the rule, and whether play would fail on it.
type Unsafe = (Sym, Span, &'static str, bool);

impl Checker<'_> {
    /// Variables bound by the positive ordinary atoms of a conjunction (a disjunction binds what all
    /// its alternatives bind), and by arithmetic whose operands they bind (`plus(X, 1, Y)` binds `Y`
    /// once `X` is bound; `plus(Y, 0, Y)` alone binds nothing): passes until nothing more is bound.
    fn bound(&self, lits: &[Literal], out: &mut HashSet<Sym>) {
        // Each pass walks the formula once (an `or`'s alternatives once each): passes repeated
        // inside the alternatives too would repeat the walk at every level of nesting.
        loop {
            let before = out.len();
            self.bind_pass(lits, out);
            if out.len() == before {
                return;
            }
        }
    }

    /// One pass over a conjunction: its ordinary atoms and formulas, then its arithmetic until that
    /// binds nothing more (arithmetic atoms are leaves, so going over them again is cheap).
    fn bind_pass(&self, lits: &[Literal], out: &mut HashSet<Sym>) {
        let mut arithmetic = Vec::new();
        self.bind_ordinary(lits, out, &mut arithmetic);
        loop {
            let before = arithmetic.len();
            arithmetic.retain(|a| !self.bind_arithmetic(a, out));
            if arithmetic.len() == before {
                return;
            }
        }
    }

    /// What a conjunction's ordinary atoms and formulas bind; its arithmetic is put aside.
    fn bind_ordinary<'p>(
        &self,
        lits: &'p [Literal],
        out: &mut HashSet<Sym>,
        arithmetic: &mut Vec<&'p Atom>,
    ) {
        for l in lits {
            match l {
                Literal::Atom(a) if !self.builtin(a.pred) => atom_vars(a, &mut |v, _| {
                    out.insert(v);
                }),
                Literal::Atom(a) => {
                    if matches!(
                        self.name(a.pred).to_ascii_lowercase().as_str(),
                        "plus" | "minus" | "times"
                    ) {
                        arithmetic.push(a);
                    }
                }
                Literal::Not(..) => {}
                Literal::And(ls, _) => self.bind_ordinary(ls, out, arithmetic),
                Literal::Or(ls, _) => {
                    let mut common: Option<HashSet<Sym>> = None;
                    for alt in ls {
                        // What is bound already binds an alternative's arithmetic too.
                        let mut b = out.clone();
                        self.bind_pass(std::slice::from_ref(alt), &mut b);
                        common = Some(match common {
                            None => b,
                            Some(c) => c.intersection(&b).copied().collect(),
                        });
                    }
                    out.extend(common.unwrap_or_default());
                }
            }
        }
    }

    /// Binds an arithmetic atom's result when its operands are bound; whether it did.
    fn bind_arithmetic(&self, a: &Atom, out: &mut HashSet<Sym>) -> bool {
        let Some((result, operands)) = a.args.split_last() else {
            return true;
        };
        let mut ready = true;
        for t in operands {
            for_each_var(t, &mut |v, _| ready &= out.contains(&v));
        }
        if ready {
            for_each_var(result, &mut |v, _| {
                out.insert(v);
            });
        }
        ready
    }

    /// Unsafe variables are errors in infix files (EPILOG.md requires safe rules). In KIF, whose public
    /// corpus (ggp-base test cases) contains games with unsafe rules that other GGP systems accept, they
    /// are errors where play would fail (`fatal`: a rule the game reads, see [`Checker::used`]) and
    /// warnings elsewhere.
    fn unsafe_var(&mut self, v: Sym, span: Span, place: &str, head: &str, fatal: bool) {
        let name = self.var_name(v);
        let make = if self.p.syntax == Syntax::Infix || fatal {
            Diagnostic::error
        } else {
            Diagnostic::warning
        };
        let mut help = format!(
            "`{name}` must also occur in a positive (not negated, not built-in) condition of the body{}, so that it has a value",
            if self.p.syntax == Syntax::Infix {
                " or be the result of `plus`, `minus` or `times` on variables that do"
            } else {
                ""
            }
        );
        if fatal && self.p.syntax == Syntax::Kif {
            help.push_str(": the game reads this rule, so it cannot be played");
        }
        let d = make(span, format!("unsafe variable `{name}` {place} of {head}")).with_help(help);
        if d.is_error() {
            self.errors.push(d);
        } else {
            self.warnings.push(d);
        }
    }

    /// The relations the game reads: those the keywords (`role`, `init`, `next`, `legal`, `goal`,
    /// `terminal`, `base`) read, directly or not, as the engines' `rewrite::prepare` keeps them. A rule
    /// of any other relation is dropped before play, however unsafe.
    fn used(&self) -> HashSet<String> {
        let key = |s: Sym| match self.kw(s) {
            Some(_) => self.name(s).to_ascii_lowercase(),
            None => self.name(s).to_string(),
        };
        let mut reads: HashMap<String, Vec<String>> = HashMap::new();
        let mut used = HashSet::new();
        let mut work = Vec::new();
        for st in &self.p.statements {
            if let Statement::Rule { head, body, .. } = st {
                let h = key(head.pred);
                let root = matches!(
                    self.kw(head.pred),
                    Some(
                        Keyword::Role
                            | Keyword::Init
                            | Keyword::Next
                            | Keyword::Legal
                            | Keyword::Goal
                            | Keyword::Terminal
                            | Keyword::Base
                    )
                );
                if root && used.insert(h.clone()) {
                    work.push(h.clone());
                }
                let entry = reads.entry(h).or_default();
                for l in body {
                    for_each_atom(l, false, &mut |a, _| entry.push(key(a.pred)));
                }
            }
        }
        while let Some(r) = work.pop() {
            for b in reads.get(&r).into_iter().flatten() {
                if used.insert(b.clone()) {
                    work.push(b.clone());
                }
            }
        }
        used
    }

    /// Whether the game reads the rule `head :- body`, its variable role (`legal` and `goal`), and
    /// its unsafe variables, each once, in the order written.
    fn rule_unsafe_vars(
        &self,
        head: &Atom,
        body: &[Literal],
        used: &HashSet<String>,
    ) -> (bool, Option<Sym>, Vec<Unsafe>) {
        let mut bound = HashSet::new();
        self.bound(body, &mut bound);
        let head_name = self.name(head.pred);
        let read = used.contains(&match self.kw(head.pred) {
            Some(_) => head_name.to_ascii_lowercase(),
            None => head_name.to_string(),
        });
        // A variable role of `legal` and `goal` is bound by `role` (`rewrite::prepare`).
        let role_var = match (self.kw(head.pred), head.args.first()) {
            (Some(Keyword::Legal | Keyword::Goal), Some(Term::Var(v, _))) => Some(*v),
            _ => None,
        };
        let mut bad = Vec::new();
        let mut seen = HashSet::new();
        atom_vars(head, &mut |v, s| {
            if !bound.contains(&v) && seen.insert(v) {
                bad.push((v, s, "in the head", read && Some(v) != role_var));
            }
        });
        for l in body {
            for_each_atom(l, false, &mut |a, neg| {
                if neg || self.builtin(a.pred) {
                    // GDL asks every variable of a negated or built-in condition to occur in a
                    // positive one (ggp-base's validator refuses such a rule, and the network
                    // cannot ground it): an error where the game reads the rule.
                    let place = if neg {
                        "in a negated condition"
                    } else {
                        "in a built-in condition"
                    };
                    atom_vars(a, &mut |v, s| {
                        if !bound.contains(&v) && seen.insert(v) {
                            bad.push((v, s, place, read && Some(v) != role_var));
                        }
                    });
                }
            });
        }
        (read, role_var, bad)
    }

    pub(super) fn safety(&mut self) {
        let used = self.used();
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    let (_, _, bad) = self.rule_unsafe_vars(head, body, &used);
                    let head = format!("the rule for `{}`", self.name(head.pred));
                    for (v, s, place, fatal) in bad {
                        self.unsafe_var(v, s, place, &head, fatal);
                    }
                }
                Statement::Operation {
                    action,
                    conditions,
                    effects,
                    ..
                } => {
                    let mut bound = HashSet::new();
                    atom_vars(action, &mut |v, _| {
                        bound.insert(v);
                    });
                    self.bound(conditions, &mut bound);
                    let head_name = self.name(action.pred).to_string();
                    let mut bad = Vec::new();
                    for e in effects {
                        atom_vars(&e.atom, &mut |v, s| {
                            if !bound.contains(&v) {
                                bad.push((v, s, "in an effect"));
                            }
                        });
                    }
                    for l in conditions {
                        for_each_atom(l, false, &mut |a, neg| {
                            if neg || self.builtin(a.pred) {
                                atom_vars(a, &mut |v, s| {
                                    if !bound.contains(&v) {
                                        bad.push((v, s, "in a negated or built-in condition"));
                                    }
                                });
                            }
                        });
                    }
                    let mut done = HashSet::new();
                    for (v, s, place) in bad {
                        if done.insert(v) {
                            let head = format!("the operation `{head_name}`");
                            self.unsafe_var(v, s, place, &head, true);
                        }
                    }
                }
            }
        }
    }
}
