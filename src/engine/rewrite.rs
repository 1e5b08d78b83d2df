//! Program rewrites between lowering and planning that make the engine accept what GDL accepts.
//!
//! The main entry point is [`prepare`]. The reference prover answers queries top-down, so it never looks
//! at a rule no query reaches, binds a role variable from the query, and resolves `(not (goal r 0))`
//! inside the definition of `goal` as long as no *instance* depends on its own negation. A bottom-up
//! evaluator needs each of these made explicit:
//!
//! - **Unused rules go.** Only relations that the game's keywords (`role`, `init`, `next`, `legal`,
//!   `goal`, `terminal`, `base`) read, directly or not, are kept; an unsafe helper nobody asks about
//!   (ggp-base's test case 3b) no longer stops the game from loading, and nothing is computed for it.
//! - **Role variables are bound by `role`.** In `legal(R, ...)` and `goal(R, ...)` the first argument is
//!   always a role (a player asks for its own moves and goal), so a rule that leaves it unbound
//!   (`(<= (legal ?p ?p) ...)`) gets `role(R)` added to its body.
//! - **Negation inside a recursive component is split off when it is stratified per instance.** For a
//!   literal `not p(args)` whose relation is in the rule's own component, when every rule of `p` whose
//!   head unifies with `p(args)` reads nothing of that component, those rules are copied into a fresh
//!   relation `p$not<k>` (same facts for instances of `p(args)`), which lies in a lower stratum, and the
//!   literal reads it instead. A real cycle through negation is left alone and rejected by the planner.

use super::ir::{IrAtom, Lit, Pat, Program, RelId, Rule};
use super::plan::tarjan;
use super::terms::TermStore;

/// Applies every rewrite of the module documentation to a classic (not operational) program.
pub fn prepare(p: &mut Program) {
    bind_role_variables(p);
    for round in 0.. {
        if round == 16 || !split_negation(p) {
            break;
        }
    }
    prune(p);
}

fn lit_atom(l: &Lit) -> Option<&IrAtom> {
    match l {
        Lit::Pos(a) | Lit::Neg(a) => Some(a),
        _ => None,
    }
}

fn bind_role_variables(p: &mut Program) {
    let Some(role) = p.keywords.role else { return };
    let heads: Vec<RelId> = [p.keywords.legal, p.keywords.goal]
        .into_iter()
        .flatten()
        .collect();
    for r in &mut p.rules {
        if !heads.contains(&r.head.rel) {
            continue;
        }
        let Some(&Pat::Var(v)) = r.head.args.first() else {
            continue;
        };
        let mut bound = false;
        for l in &r.body {
            if let Lit::Pos(a) = l {
                a.args
                    .iter()
                    .for_each(|x| x.each_var(&mut |w| bound |= w == v));
            }
        }
        if !bound {
            r.body.insert(
                0,
                Lit::Pos(IrAtom {
                    rel: role,
                    args: vec![Pat::Var(v)],
                }),
            );
        }
    }
}

/// Keeps only the rules of relations the game's keywords depend on.
fn prune(p: &mut Program) {
    let k = p.keywords;
    let roots: Vec<RelId> = [
        k.role, k.init, k.next, k.legal, k.legal1, k.goal, k.terminal, k.base,
    ]
    .into_iter()
    .flatten()
    .collect();
    prune_to(p, &roots);
}

/// Keeps only the rules of `roots` and of the relations they read, directly or not.
pub(crate) fn prune_to(p: &mut Program, roots: &[RelId]) {
    let n = p.relations.len();
    let mut by_head: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, r) in p.rules.iter().enumerate() {
        by_head[r.head.rel.0 as usize].push(i);
    }
    let mut needed = vec![false; n];
    let mut work: Vec<usize> = roots.iter().map(|r| r.0 as usize).collect();
    while let Some(rel) = work.pop() {
        if std::mem::replace(&mut needed[rel], true) {
            continue;
        }
        for &ri in &by_head[rel] {
            for a in p.rules[ri].body.iter().filter_map(lit_atom) {
                if !needed[a.rel.0 as usize] {
                    work.push(a.rel.0 as usize);
                }
            }
        }
    }
    p.rules.retain(|r| needed[r.head.rel.0 as usize]);
}

/// Whether two patterns can denote the same ground term, reading every variable as a wildcard (which
/// over-approximates: repeated variables are not checked).
fn unifiable(terms: &TermStore, a: &Pat, b: &Pat) -> bool {
    match (a, b) {
        (Pat::Var(_), _) | (_, Pat::Var(_)) => true,
        (Pat::Term(x), Pat::Term(y)) => x == y,
        (Pat::Term(t), Pat::Func(f, args)) | (Pat::Func(f, args), Pat::Term(t)) => {
            terms.sym(*t) == *f
                && terms.args(*t).len() == args.len()
                && terms
                    .args(*t)
                    .iter()
                    .zip(args)
                    .all(|(x, y)| unifiable(terms, &Pat::Term(*x), y))
        }
        (Pat::Func(f, xs), Pat::Func(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| unifiable(terms, x, y))
        }
    }
}

/// One round of the negation split of the module documentation; true when something changed.
fn split_negation(p: &mut Program) -> bool {
    let n = p.relations.len();
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for r in &p.rules {
        for l in &r.body {
            if let Some(a) = lit_atom(l) {
                deps[r.head.rel.0 as usize].push((a.rel.0 as usize, matches!(l, Lit::Neg(_))));
            }
        }
    }
    let mut comp = vec![0usize; n];
    for (i, c) in tarjan(n, &deps).iter().enumerate() {
        for &r in c {
            comp[r] = i;
        }
    }
    let mut changed = false;
    let mut made: Vec<(IrAtom, RelId)> = Vec::new();
    for ri in 0..p.rules.len() {
        for li in 0..p.rules[ri].body.len() {
            let Lit::Neg(a) = &p.rules[ri].body[li] else {
                continue;
            };
            let c = comp[p.rules[ri].head.rel.0 as usize];
            if comp[a.rel.0 as usize] != c {
                continue;
            }
            if let Some((_, rel)) = made.iter().find(|(m, _)| m == a) {
                let rel = *rel;
                if let Lit::Neg(a) = &mut p.rules[ri].body[li] {
                    a.rel = rel;
                }
                changed = true;
                continue;
            }
            let sources: Vec<usize> = (0..p.rules.len())
                .filter(|&s| {
                    let h = &p.rules[s].head;
                    h.rel == a.rel
                        && h.args
                            .iter()
                            .zip(&a.args)
                            .all(|(x, y)| unifiable(&p.terms, x, y))
                })
                .collect();
            let outside = sources.iter().all(|&s| {
                p.rules[s]
                    .body
                    .iter()
                    .filter_map(lit_atom)
                    .all(|b| comp[b.rel.0 as usize] != c)
            });
            if !outside {
                continue;
            }
            let atom = a.clone();
            let r = &p.relations[atom.rel.0 as usize];
            let (name, arity) = (p.terms.name(r.name).to_string(), r.arity);
            let fresh = p.add_relation(&format!("{name}$not{}", made.len() + n), arity);
            for &s in &sources {
                let mut copy: Rule = p.rules[s].clone();
                copy.head.rel = fresh;
                p.rules.push(copy);
            }
            if let Lit::Neg(a) = &mut p.rules[ri].body[li] {
                a.rel = fresh;
            }
            made.push((atom, fresh));
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lower;
    use crate::syntax::parse_kif;

    fn prepared(src: &str) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        prepare(&mut p);
        p.to_string()
    }

    fn check(src: &str, expected: &str) {
        assert_eq!(prepared(src).trim(), expected.trim(), "for\n{src}");
    }

    #[test]
    fn rewrites() {
        // An unused, unsafe helper is dropped.
        check(
            "(role x) (cell 1 1) (<= terminal (cell 1 1)) \
             (<= (helper ?x ?y) (distinct ?x ?y))",
            "role(x).\ncell(1, 1).\nterminal :- cell(1, 1).",
        );
        // A role variable is bound by `role`.
        check(
            "(role x) (cell 1 1) (<= (legal ?p ?p) (cell 1 1)) (<= (goal ?p 100) (cell 1 1))",
            "role(x).\ncell(1, 1).\nlegal(?p, ?p) :- role(?p), cell(1, 1).\n\
             goal(?p, 100) :- role(?p), cell(1, 1).",
        );
        // Negation of another instance of the same relation is split off.
        check(
            "(role r) (<= (goal r 0) (true (cell ?c blank))) (<= (goal r 100) (not (goal r 0)))",
            "role(r).\ngoal(r, 0) :- true((cell ?c blank)).\ngoal(r, 100) :- ~goal$not3(r, 0).\n\
             goal$not3(r, 0) :- true((cell ?c blank)).",
        );
        // A real cycle through negation stays (the planner rejects it).
        check(
            "(role r) (<= terminal (not terminal))",
            "role(r).\nterminal :- ~terminal.",
        );
    }
}
