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
//!
//! - **Facts no move changes are read from `init`.** A kind of state fact that only a frame rule
//!   carries forward (mummy maze's walls) holds in every state exactly as in the initial one, so
//!   its readings become readings of `init`, a constant
//!   ([`read_fixed_fluents_from_init`](super::fixed_fluents::read_fixed_fluents_from_init)).
//! - **Idle arguments go.** An argument of a state-dependent relation that only carries a value of a
//!   static domain along is dropped, its readers checking the domain instead
//!   ([`drop_idle_arguments`](super::idle_arguments::drop_idle_arguments)).
//!
//! `unfold_views`, used by the rule engine after [`prepare`] (not by grounding), unfolds per-state
//! views into their readers.

use crate::datalog::ir::{Cmp, IrAtom, Lit, Origin, Pat, Program, RelId, Rule};
use crate::datalog::scc::{component_of, tarjan};
use crate::datalog::terms::TermStore;
use crate::syntax::ast::Sym;

/// The pipeline's `prepared` stage, the program both engines start from: `p` lowered, its operation
/// rules made classic, then [`prepare`]d.
pub fn prepared(p: &crate::syntax::ast::Program) -> Result<Program, super::EngineError> {
    let mut prog = super::ops::to_classic(&super::lower(p)?)?;
    prepare(&mut prog);
    Ok(prog)
}

/// Applies every rewrite of the module documentation to a classic (not operational) program.
pub fn prepare(p: &mut Program) {
    super::fixed_fluents::read_fixed_fluents_from_init(p);
    bind_role_variables(p);
    for round in 0.. {
        if round == 16 || !split_negation(p) {
            break;
        }
    }
    prune(p);
    super::idle_arguments::drop_idle_arguments(p);
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
    let mut comp = component_of(n, &tarjan(n, &deps));
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
            let fresh = p.add_fresh(
                Origin::SplitNegation,
                &format!("{name}$not{}", made.len() + n),
                arity,
            );
            // In no component: only this component reads it, and it reads only what lies outside.
            if comp.len() <= fresh.0 as usize {
                comp.resize(fresh.0 as usize + 1, usize::MAX);
            }
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

/// Views read at most this many times are unfolded into their readers (see [`unfold_views`]).
const MAX_UNFOLD_USES: usize = 4;

/// Unfolds per-state *views* into the rules that read them, so that a reader which binds some of a
/// view's arguments (`columnOpen(?x) :- cellOpen(?x, 6)`) evaluates the view's body for those bindings
/// only instead of the view being materialised for every binding in every state.
///
/// A view here is a relation that is not in `keep` (what the caller reads from outside), is `dynamic`
/// (computed per state or per move; load-time relations cost nothing per state), has exactly one rule,
/// whose head arguments are distinct variables, whose body is not empty, and which lies on no cycle.
/// Every reading of it is rewritten, or none (then it stays as it is):
/// - a positive literal `v(args)` is replaced by the view's body with the head variables replaced by
///   `args` and every other variable renamed apart (unfolding, exact for a non-recursive rule);
/// - a negative literal `~v(args)` whose variables the reader binds in positive literals, of a view
///   whose body variables all appear in its head and whose body has only atoms, negations, `distinct`
///   and `same`, is replaced by one copy of the reader per body condition, negated
///   (`~(a & b)` is `~a | ~b`; exact because the view has no existential variable).
///
/// Views read more than [`MAX_UNFOLD_USES`] times stay (unfolding would repeat their work), and the
/// number of rules at most doubles. An unfolding that would write more than four times the program's
/// terms (or rules), or a rule of more than
/// [`MAX_RULE_CONDITIONS`](crate::syntax::ast::MAX_RULE_CONDITIONS) conditions, is not made, and ends
/// the rewrite: a chain of views each reading the one below
/// several times, or passing it a term twice its size, or a reader of several negated views,
/// multiplies out exponentially.
pub(crate) fn unfold_views(p: &mut Program, keep: &[RelId], dynamic: &[bool]) {
    let limit = p.rules.len() * 2 + 16;
    let size: usize = p.rules.iter().map(body_size).sum();
    let bounds = (limit * 4, size.saturating_mul(4).saturating_add(4096));
    for _ in 0..256 {
        if p.rules.len() > limit {
            break;
        }
        let Some(view) = pick_view(p, keep, dynamic) else {
            break;
        };
        if !unfold(p, view, bounds) {
            break;
        }
    }
}

/// The rule index of a view every reading of which can be unfolded, if any.
fn pick_view(p: &Program, keep: &[RelId], dynamic: &[bool]) -> Option<usize> {
    let n = p.relations.len();
    let mut defs = vec![0usize; n];
    let mut def_rule = vec![usize::MAX; n];
    let mut uses = vec![0usize; n];
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for (i, r) in p.rules.iter().enumerate() {
        let h = r.head.rel.0 as usize;
        defs[h] += 1;
        def_rule[h] = i;
        for l in &r.body {
            if let Some(a) = lit_atom(l) {
                uses[a.rel.0 as usize] += 1;
                deps[h].push((a.rel.0 as usize, false));
            }
        }
    }
    // Components come after those they read: a view is unfolded before the views that read it, so
    // that its readers are counted before unfolding multiplies them.
    let sccs = tarjan(n, &deps);
    let mut comp_size = vec![0usize; n];
    for c in &sccs {
        for &r in c {
            comp_size[r] = c.len();
        }
    }
    'candidates: for v in sccs.iter().flatten().copied() {
        if defs[v] != 1
            || uses[v] == 0
            || uses[v] > MAX_UNFOLD_USES
            || !dynamic.get(v).copied().unwrap_or(false)
            || keep.contains(&RelId(v as u32))
            || comp_size[v] != 1
            || deps[v].iter().any(|&(b, _)| b == v)
        {
            continue;
        }
        let vr = &p.rules[def_rule[v]];
        if vr.body.is_empty() {
            continue;
        }
        let mut head_vars: Vec<u32> = Vec::new();
        for a in &vr.head.args {
            match a {
                Pat::Var(x) if !head_vars.contains(x) => head_vars.push(*x),
                _ => continue 'candidates,
            }
        }
        let mut closed = true;
        for l in &vr.body {
            l.each_var(&mut |x| closed &= head_vars.contains(&x));
        }
        let negatable = closed
            && vr.body.iter().all(|l| {
                matches!(
                    l,
                    Lit::Pos(_) | Lit::Neg(_) | Lit::Cmp(Cmp::Distinct | Cmp::Same, _, _)
                )
            });
        for r in &p.rules {
            for (j, l) in r.body.iter().enumerate() {
                let Lit::Neg(a) = l else { continue };
                if a.rel.0 as usize != v {
                    continue;
                }
                if !negatable {
                    continue 'candidates;
                }
                let mut covered = true;
                for x in &a.args {
                    x.each_var(&mut |w| {
                        covered &= r.body.iter().enumerate().any(|(k, o)| {
                            let mut found = false;
                            if let (true, Lit::Pos(b)) = (k != j, o) {
                                b.args
                                    .iter()
                                    .for_each(|y| y.each_var(&mut |z| found |= z == w));
                            }
                            found
                        });
                    });
                }
                if !covered {
                    continue 'candidates;
                }
            }
        }
        return Some(def_rule[v]);
    }
    None
}

/// A rule body's size: its literals' term nodes.
fn body_size(r: &Rule) -> usize {
    r.body.iter().map(lit_size).sum()
}

/// A pattern's term nodes.
fn pat_size(x: &Pat) -> usize {
    match x {
        Pat::Var(_) | Pat::Term(_) => 1,
        Pat::Func(_, args) => 1 + args.iter().map(pat_size).sum::<usize>(),
    }
}

/// A literal's term nodes, itself included.
fn lit_size(l: &Lit) -> usize {
    let pat = pat_size;
    match l {
        Lit::Pos(a) | Lit::Neg(a) => 1 + a.args.iter().map(pat).sum::<usize>(),
        Lit::Cmp(_, x, y) => 1 + pat(x) + pat(y),
        Lit::Arith(_, x, y, z) | Lit::NotArith(_, x, y, z) => 1 + pat(x) + pat(y) + pat(z),
    }
}

/// Rewrites every reading of the view defined by rule `vi` (see [`unfold_views`]) and drops the rule;
/// leaves the program as it was and answers false when that would write more than `max_rules` rules
/// or bodies of more than `max_size` terms.
fn unfold(p: &mut Program, vi: usize, (max_rules, max_size): (usize, usize)) -> bool {
    let kept = p.rules.clone();
    let view = p.rules.remove(vi);
    let rel = view.head.rel;
    let rules = std::mem::take(&mut p.rules);
    let mut out = Vec::with_capacity(rules.len());
    // Terms written so far, in `out` and still in the work list.
    let mut written: usize = rules.iter().map(body_size).sum();
    for r in rules {
        let mut work = vec![r];
        while let Some(r) = work.pop() {
            let found = r
                .body
                .iter()
                .position(|l| lit_atom(l).is_some_and(|a| a.rel == rel));
            let Some(j) = found else {
                out.extend(simplify(r));
                continue;
            };
            let (negative, args) = match &r.body[j] {
                Lit::Neg(a) => (true, a.args.clone()),
                Lit::Pos(a) => (false, a.args.clone()),
                _ => unreachable!("found an atom"),
            };
            // The view's body with every variable replaced by the largest argument bounds its copy.
            let largest = args.iter().map(pat_size).max().unwrap_or(1);
            if written.saturating_add(body_size(&view).saturating_mul(largest)) > max_size {
                p.rules = kept;
                return false;
            }
            let mut copy = r.clone();
            let lits = instantiate(&view, &args, &mut copy.var_names, &mut p.terms);
            // Weighed before the copies are made: one reading can multiply a rule many times.
            let added = match negative {
                true => body_size(&r).saturating_mul(lits.len().saturating_sub(1)),
                false => lits
                    .iter()
                    .map(lit_size)
                    .sum::<usize>()
                    .saturating_sub(lit_size(&r.body[j])),
            };
            written = written.saturating_add(added);
            // A reader may not grow past the conditions a rule may have (each is a level of the
            // join): a chain of long views read once each would otherwise make one of thousands.
            let longer = !negative
                && r.body.len() - 1 + lits.len() > crate::syntax::ast::MAX_RULE_CONDITIONS as usize;
            if longer || out.len() + work.len() + lits.len() > max_rules || written > max_size {
                p.rules = kept;
                return false;
            }
            if negative {
                // Last alternative pushed first, so that the copies come out in body order.
                for l in lits.into_iter().rev() {
                    let mut alt = r.clone();
                    alt.body[j] = negate(l);
                    work.push(alt);
                }
            } else {
                copy.body.splice(j..=j, lits);
                work.push(copy);
            }
        }
    }
    p.rules = out;
    true
}

/// The view's body with its head variables replaced by `args` and its other variables renamed to
/// fresh variables of the reader (whose names are appended to `names`).
pub(crate) fn instantiate(
    view: &Rule,
    args: &[Pat],
    names: &mut Vec<Sym>,
    terms: &mut TermStore,
) -> Vec<Lit> {
    let mut map: Vec<Option<Pat>> = vec![None; view.var_names.len()];
    for (h, a) in view.head.args.iter().zip(args) {
        if let Pat::Var(x) = h {
            map[*x as usize] = Some(a.clone());
        }
    }
    let mut sub = |x: &Pat| subst(x, &mut map, &view.var_names, names, terms);
    view.body
        .iter()
        .map(|l| match l {
            Lit::Pos(a) => Lit::Pos(IrAtom {
                rel: a.rel,
                args: a.args.iter().map(&mut sub).collect(),
            }),
            Lit::Neg(a) => Lit::Neg(IrAtom {
                rel: a.rel,
                args: a.args.iter().map(&mut sub).collect(),
            }),
            Lit::Cmp(c, x, y) => Lit::Cmp(*c, sub(x), sub(y)),
            Lit::Arith(o, x, y, z) => Lit::Arith(*o, sub(x), sub(y), sub(z)),
            Lit::NotArith(o, x, y, z) => Lit::NotArith(*o, sub(x), sub(y), sub(z)),
        })
        .collect()
}

fn subst(
    x: &Pat,
    map: &mut [Option<Pat>],
    view_names: &[Sym],
    names: &mut Vec<Sym>,
    terms: &mut TermStore,
) -> Pat {
    match x {
        Pat::Var(v) => map[*v as usize]
            .get_or_insert_with(|| {
                // A fresh name, so that the printed rule shows a fresh variable.
                let base = view_names[*v as usize];
                let mut name = base;
                let mut k = 1;
                while names.contains(&name) {
                    let text = format!("{}{k}", terms.name(base));
                    name = terms.intern_sym(&text);
                    k += 1;
                }
                names.push(name);
                Pat::Var(names.len() as u32 - 1)
            })
            .clone(),
        Pat::Term(t) => Pat::Term(*t),
        Pat::Func(f, args) => {
            let args: Vec<Pat> = args
                .iter()
                .map(|a| subst(a, map, view_names, names, terms))
                .collect();
            if args.iter().all(|a| matches!(a, Pat::Term(_))) {
                let ids: Vec<_> = args
                    .iter()
                    .filter_map(|a| match a {
                        Pat::Term(t) => Some(*t),
                        _ => None,
                    })
                    .collect();
                Pat::Term(terms.func(*f, &ids))
            } else {
                Pat::Func(*f, args)
            }
        }
    }
}

/// Drops repeated conditions, and the whole rule when it asks for an atom and for its negation.
pub(crate) fn simplify(mut r: Rule) -> Option<Rule> {
    let mut k = 0;
    while k < r.body.len() {
        if r.body[..k].contains(&r.body[k]) {
            r.body.remove(k);
        } else {
            k += 1;
        }
    }
    let contradiction = r.body.iter().any(|l| match l {
        Lit::Pos(a) => r.body.iter().any(|o| matches!(o, Lit::Neg(b) if b == a)),
        _ => false,
    });
    (!contradiction).then_some(r)
}

fn negate(l: Lit) -> Lit {
    match l {
        Lit::Pos(a) => Lit::Neg(a),
        Lit::Neg(a) => Lit::Pos(a),
        Lit::Cmp(Cmp::Distinct, x, y) => Lit::Cmp(Cmp::Same, x, y),
        Lit::Cmp(Cmp::Same, x, y) => Lit::Cmp(Cmp::Distinct, x, y),
        other => unreachable!("only negatable views are negated: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    fn prepared(src: &str) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        prepare(&mut p);
        p.to_string()
    }

    fn check(src: &str, expected: &str) {
        assert_eq!(prepared(src).trim(), expected.trim(), "for\n{src}");
    }

    /// The program after [`prepare`] and [`unfold_views`], keeping the relations named in `keep` and
    /// taking every relation that reads `true` or `does` (directly or not) as dynamic.
    fn unfolded(src: &str, keep: &[&str]) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        prepare(&mut p);
        let named = |p: &Program, n: &str| {
            p.relations
                .iter()
                .position(|r| p.terms.name(r.name) == n)
                .map(|i| RelId(i as u32))
        };
        let keep: Vec<RelId> = keep.iter().filter_map(|n| named(&p, n)).collect();
        let mut dynamic = vec![false; p.relations.len()];
        for n in ["true", "does"] {
            if let Some(r) = named(&p, n) {
                dynamic[r.0 as usize] = true;
            }
        }
        for _ in 0..p.relations.len() {
            for r in &p.rules {
                if r.body
                    .iter()
                    .filter_map(lit_atom)
                    .any(|a| dynamic[a.rel.0 as usize])
                {
                    dynamic[r.head.rel.0 as usize] = true;
                }
            }
        }
        unfold_views(&mut p, &keep, &dynamic);
        p.to_string()
    }

    #[test]
    fn views_unfold_into_their_readers() {
        let keep = ["role", "legal", "next", "true", "does", "terminal"];
        let cases = [
            // Read with a constant, and negated (split by De Morgan; the copy asking for `y(?y)`
            // and `~y(?y)` at once is dropped).
            (
                "(role r) (x 1) (x 2) (y 1) (y 2) \
                 (<= (open ?x ?y) (x ?x) (y ?y) (not (true (cell ?x ?y)))) \
                 (<= (legal r (drop ?x)) (open ?x 2)) \
                 (<= (next (cell ?x ?y)) (does r (drop ?x)) (y ?y) (not (open ?x ?y)))",
                "role(r).\nx(1).\nx(2).\ny(1).\ny(2).\n\
                 legal(r, drop(?x)) :- x(?x), y(2), ~true(cell(?x, 2)).\n\
                 next(cell(?x, ?y)) :- does(r, drop(?x)), y(?y), ~x(?x).\n\
                 next(cell(?x, ?y)) :- does(r, drop(?x)), y(?y), true(cell(?x, ?y)).",
            ),
            // A view with an existential variable is not negated; a static one is left alone.
            (
                "(role r) (x 1) (<= (two ?x) (x ?x)) \
                 (<= (some ?x) (true (cell ?x ?y))) \
                 (<= (legal r (a ?x)) (two ?x) (not (some ?x)))",
                "role(r).\nx(1).\ntwo(?x) :- x(?x).\nsome(?x) :- true(cell(?x, ?y)).\n\
                 legal(r, a(?x)) :- two(?x), ~some(?x).",
            ),
            // Variables of the view that are not in its head are renamed apart in the reader.
            (
                "(role r) (<= (has ?x) (true (cell ?x ?y)) (true (mark ?y))) \
                 (<= terminal (has ?y))",
                "role(r).\nterminal :- true(cell(?y, ?y1)), true(mark(?y1)).",
            ),
        ];
        for (src, expected) in cases {
            assert_eq!(unfolded(src, &keep).trim(), expected, "for\n{src}");
        }
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
            "role(r).\ngoal(r, 0) :- true(cell(?c, blank)).\ngoal(r, 100) :- ~goal$not3(r, 0).\n\
             goal$not3(r, 0) :- true(cell(?c, blank)).",
        );
        // A real cycle through negation stays (the planner rejects it).
        check(
            "(role r) (<= terminal (not terminal))",
            "role(r).\nterminal :- ~terminal.",
        );
    }
}
