//! Operation semantics as classic GDL, on the lowered program.
//!
//! The main entry point is [`to_classic`]. It follows the translation of EPILOG.md's last section, but on
//! the IR (so the arithmetic built-ins stay built-ins instead of becoming tables):
//!
//! - the *state relations* are those whose facts appear as `init` or `base` arguments or as effects; a
//!   view literal `cell(M,N,b)` over one becomes `true(cell(M,N,b))`;
//! - `legal(a)` stays a view (other views may read it) and `legal(R,a) :- legal(a) & true(control(R))`,
//!   `legal(R,noop) :- role(R) & ~true(control(R))` give every role its move; a game written with the
//!   `legal(r,a)` extension keeps its rules;
//! - each operation's effect `p` becomes `added(p) :- does(R,action) & conditions` (`deleted` for `~p`),
//!   so every answer of the conditions in the state before the move instantiates the effect;
//! - `next(P) :- added(P)` and `next(P) :- true(P) & ~deleted(P)` for every state relation's `P`:
//!   deletions first, then additions,
//!   and untouched facts persist.
//!
//! The internal relations' names contain `$`, which neither syntax can write, so they never clash with
//! the author's.

use hashbrown::HashSet;

use super::EngineError;
use crate::datalog::ir::{IrAtom, Lit, Origin, Pat, Program, Rule};
use crate::datalog::terms::TermStore;
use crate::datalog::Invalid;
use crate::syntax::ast::Sym;

/// Rewrites an operation-semantics program into classic GDL (see the module documentation). A program
/// without operations is returned unchanged.
pub fn to_classic(p: &Program) -> Result<Program, EngineError> {
    if !p.is_operational() {
        return Ok(p.clone());
    }
    let mut q = p.clone();
    let state = state_relations(&q);
    let true_ = q.add_relation("true", 1);
    let does = q.add_relation("does", 2);
    let next = q.add_relation("next", 1);
    let added = q.add_generated(Origin::Operation, "added$", 1);
    let deleted = q.add_generated(Origin::Operation, "deleted$", 1);
    let is_state = |q: &Program, a: &IrAtom| {
        let r = &q.relations[a.rel.0 as usize];
        state.contains(&(r.name, r.arity))
    };

    let mut rules = Vec::with_capacity(q.rules.len() + 8);
    for r in std::mem::take(&mut q.rules) {
        if is_state(&q, &r.head) {
            let name = q.terms.name(q.relations[r.head.rel.0 as usize].name);
            return Err(EngineError::Invalid(Invalid::StateFactDefined(
                name.to_string(),
            )));
        }
        let body = r
            .body
            .iter()
            .map(|l| read_state(l, &state, true_, &mut q))
            .collect();
        rules.push(Rule { body, ..r });
    }

    // Who may do what.
    let role = q.keywords.role;
    if let Some(legal1) = q.keywords.legal1 {
        let role = role.ok_or(EngineError::Invalid(Invalid::NoRoleFacts))?;
        let legal = q.add_relation("legal", 2);
        let control = q.terms.intern_sym("control");
        if !state.contains(&(control, 1)) {
            return Err(EngineError::Invalid(Invalid::NoControl));
        }
        let noop = q.terms.intern_sym("noop");
        let noop = q.terms.constant(noop);
        let (rv, av) = (q.terms.intern_sym("R"), q.terms.intern_sym("A"));
        let ctrl = Pat::Func(control, vec![Pat::Var(0)]);
        rules.push(Rule {
            head: atom(legal, vec![Pat::Var(0), Pat::Var(1)]),
            body: vec![
                Lit::Pos(atom(legal1, vec![Pat::Var(1)])),
                Lit::Pos(atom(true_, vec![ctrl.clone()])),
            ],
            var_names: vec![rv, av],
        });
        rules.push(Rule {
            head: atom(legal, vec![Pat::Var(0), Pat::Term(noop)]),
            body: vec![
                Lit::Pos(atom(role, vec![Pat::Var(0)])),
                Lit::Neg(atom(true_, vec![ctrl])),
            ],
            var_names: vec![rv],
        });
        q.keywords.legal = Some(legal);
    }

    // Effects.
    for op in std::mem::take(&mut q.operations) {
        let mut names = op.var_names.clone();
        let who = names.len() as u32;
        names.push(q.terms.intern_sym("Role$"));
        let mut body = vec![Lit::Pos(atom(does, vec![Pat::Var(who), op.action.clone()]))];
        for l in &op.conditions {
            body.push(read_state(l, &state, true_, &mut q));
        }
        for (add, fact) in &op.effects {
            rules.push(Rule {
                head: atom(if *add { added } else { deleted }, vec![fact.clone()]),
                body: body.clone(),
                var_names: names.clone(),
            });
        }
    }

    // Inertia: deletions first, then additions. One pair of rules per state relation (rather than
    // `next(P) :- true(P) & ~deleted(P)`) so that every `true` and `next` has a known function symbol and
    // the evaluator can store them as flat relations.
    let mut state: Vec<(Sym, usize)> = state.into_iter().collect();
    state.sort();
    for (f, n) in state {
        let names: Vec<Sym> = (0..n)
            .map(|i| q.terms.intern_sym(&format!("X{i}")))
            .collect();
        let fact = if n == 0 {
            Pat::Term(q.terms.constant(f))
        } else {
            Pat::Func(f, (0..n as u32).map(Pat::Var).collect())
        };
        rules.push(Rule {
            head: atom(next, vec![fact.clone()]),
            body: vec![Lit::Pos(atom(added, vec![fact.clone()]))],
            var_names: names.clone(),
        });
        rules.push(Rule {
            head: atom(next, vec![fact.clone()]),
            body: vec![
                Lit::Pos(atom(true_, vec![fact.clone()])),
                Lit::Neg(atom(deleted, vec![fact])),
            ],
            var_names: names,
        });
    }
    q.rules = rules;
    q.keywords.true_ = Some(true_);
    q.keywords.does = Some(does);
    q.keywords.next = Some(next);
    Ok(q)
}

fn atom(rel: crate::datalog::ir::RelId, args: Vec<Pat>) -> IrAtom {
    IrAtom { rel, args }
}

/// The (name, arity) of every relation whose facts are state facts.
fn state_relations(p: &Program) -> HashSet<(Sym, usize)> {
    let mut s = HashSet::new();
    let mut from = |pat: &Pat, terms: &TermStore| match pat {
        Pat::Term(t) => {
            s.insert((terms.sym(*t), terms.args(*t).len()));
        }
        Pat::Func(f, args) => {
            s.insert((*f, args.len()));
        }
        Pat::Var(_) => {}
    };
    for r in &p.rules {
        if Some(r.head.rel) == p.keywords.init || Some(r.head.rel) == p.keywords.base {
            if let Some(a) = r.head.args.first() {
                from(a, &p.terms);
            }
        }
    }
    for o in &p.operations {
        for (_, e) in &o.effects {
            from(e, &p.terms);
        }
    }
    s
}

/// A literal over a state relation reads `true`.
fn read_state(
    l: &Lit,
    state: &HashSet<(Sym, usize)>,
    true_: crate::datalog::ir::RelId,
    q: &mut Program,
) -> Lit {
    let wrap = |a: &IrAtom, q: &mut Program| -> Option<IrAtom> {
        let r = &q.relations[a.rel.0 as usize];
        let name = r.name;
        if !state.contains(&(name, r.arity)) {
            return None;
        }
        let pat = if a.args.iter().all(|x| matches!(x, Pat::Term(_))) {
            let ids: Vec<_> = a
                .args
                .iter()
                .filter_map(|x| match x {
                    Pat::Term(t) => Some(*t),
                    _ => None,
                })
                .collect();
            if ids.is_empty() {
                Pat::Term(q.terms.constant(name))
            } else {
                Pat::Term(q.terms.func(name, &ids))
            }
        } else {
            Pat::Func(name, a.args.clone())
        };
        Some(atom(true_, vec![pat]))
    };
    match l {
        Lit::Pos(a) => Lit::Pos(wrap(a, q).unwrap_or_else(|| a.clone())),
        Lit::Neg(a) => Lit::Neg(wrap(a, q).unwrap_or_else(|| a.clone())),
        other => other.clone(),
    }
}
