//! Instantiation: the ground instances of every rule of a state-dependent relation, by joins.
//!
//! The entry point is [`instantiate`]: it grounds the rules of the [`Analysis`] phase by phase and
//! returns each rule's instances ([`Instantiated`]), ready to be indexed as the ground program
//! ([`Ground`](super::atoms::Ground)).
//!
//! Each rule is a join of its body against the relaxed fixpoint (state-dependent relations) and the
//! exact load-time facts, interpreted by [`Grounder::step`] in a join order fixed per rule (filters as
//! soon as their variables are bound, then the positive atom with the most bound arguments).
//! **An instance is kept only when its positive conditions can hold** (rows of the relaxed fixpoint),
//! and its load-time conditions are decided on the spot. Rows are looked up by every bound value, whole
//! columns or parts of a column's term; which lookup serves each step is resolved once per rule, not
//! per instance.
//!
//! The rules are shared among rayon's threads ([`ground_rules`]), each worker taking the next rule
//! and recording its instances one after the other in a flat buffer (no allocation per instance),
//! atoms named by their row in the relaxed fixpoint. **The instances are added in rule order, so the
//! network is the same on any number of threads.** The late relations (left out of the relaxed
//! fixpoint, see [`late_relations`](super::analysis::late_relations)) are grounded in dependency order
//! ([`grounding_phases`]): their instances' heads are recorded as the values of the head's variables
//! and become rows when the relation is complete ([`complete_late`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hashbrown::HashMap;
use rayon::prelude::*;

use super::analysis::Analysis;
use super::atoms::{Instances, Numbering};
use super::budget::{check_grounding, Budget, NetworkError};
use super::join::{head_vars, instantiate_atom, Grounder, Sources, StandIns};
use crate::datalog::eval::{Db, RelStore};
use crate::datalog::ir::{Lit, Pat, Program, RelId, Rule};
use crate::datalog::terms::{TermId, TermStore};

/// The result of [`instantiate`]: per rule grounded, its instances (heads and bodies as atom
/// numbers), and how the atoms are numbered.
pub(super) struct Instantiated {
    /// The instances of rule `to_ground[k]` of the program, for each `k`.
    pub(super) found: Vec<Instances>,
    /// Where each relation's atoms start, and how many there are.
    pub(super) atoms: Numbering,
    /// The rules grounded (rule numbers): those of state-dependent relations but the inputs.
    pub(super) to_ground: Vec<usize>,
}

/// Grounds every rule of a state-dependent relation of `a` within `budget` (its clock started at
/// `started`), the late relations' rows completed in `a.relaxed` as their phase ends.
pub(super) fn instantiate(
    a: &mut Analysis,
    budget: Budget,
    started: Instant,
) -> Result<Instantiated, NetworkError> {
    // Every relaxed row of a state-dependent relation may become an atom: number them across relations,
    // the late ones as they are completed.
    let prog = &a.prog;
    let (true_, does) = (a.rels.true_, a.rels.does);
    let nrel = prog.relations.len();
    let mut atoms = Numbering {
        base: vec![0; nrel],
        len: vec![0; nrel],
        total: 0,
    };
    for r in (0..nrel).filter(|&r| a.dynamic[r] && !a.late[r]) {
        atoms.number(r, a.relaxed.rel(RelId(r as u32)).len())?;
    }
    // A copy whose atoms another copy's stand for (see `Analysis::same_as`) is not grounded.
    let to_ground: Vec<usize> = (0..prog.rules.len())
        .filter(|&i| {
            let h = prog.rules[i].head.rel;
            a.dynamic[h.0 as usize] && h != true_ && h != does && a.same_as[h.0 as usize].is_none()
        })
        .collect();
    let stand_ins = stand_ins(a, &atoms);
    debug_assert!(a
        .same_as
        .iter()
        .zip(&stand_ins)
        .all(|(same, atoms)| same.is_some() == atoms.is_some()));
    let (phase_of, level) = grounding_phases(prog, &to_ground, &a.late)?;
    let phases = phase_of.iter().copied().max().unwrap_or(0) + 1;
    // Each phase's rules, and the late relations it completes, listed once: a chain of thousands
    // of late relations is thousands of phases, and scanning every rule in each was quadratic.
    let mut rules_in: Vec<Vec<usize>> = vec![Vec::new(); phases];
    for (k, &phase) in phase_of.iter().enumerate() {
        rules_in[phase].push(k);
    }
    let mut completes: Vec<Vec<usize>> = vec![Vec::new(); phases];
    for r in (0..nrel).filter(|&r| a.late[r]) {
        if let Some(c) = completes.get_mut(level[r]) {
            c.push(r);
        }
    }
    let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); nrel];
    for (k, &ri) in to_ground.iter().enumerate() {
        rules_of[prog.rules[ri].head.rel.0 as usize].push(k);
    }
    // One count for every phase: the budget limits the instances of the whole program.
    let (instances_made, words_made) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let made = || {
        (
            instances_made.load(Ordering::Relaxed),
            words_made.load(Ordering::Relaxed),
        )
    };
    let mut found: Vec<Instances> = vec![Vec::new(); to_ground.len()];
    for (which, completed) in rules_in.into_iter().zip(completes) {
        let src = Sources {
            relaxed: &a.relaxed,
            exact: &a.exact,
            dynamic: &a.dynamic,
            demand: &a.demand,
            late: &a.late,
            domain: &a.domain,
            copy_of: &a.copy_of,
            unary: &a.unary,
        };
        let rules: Vec<usize> = which.iter().map(|&k| to_ground[k]).collect();
        let out = ground_rules(
            prog,
            &rules,
            src,
            &a.relaxed.terms,
            (&atoms.base, &stand_ins),
            (budget, started, (&instances_made, &words_made)),
        )?;
        for (k, buf) in which.into_iter().zip(out) {
            found[k] = buf;
        }
        // The late relations complete now: their rows, then their instances' heads as atoms (row
        // numbers first, numbered across relations once every relation's rows are known).
        complete_late(
            prog,
            &to_ground,
            (&completed, &rules_of),
            &mut found,
            &mut a.relaxed,
        );
        for &r in &completed {
            let base = atoms.total as u32;
            for &k in &rules_of[r] {
                let buf = &mut found[k];
                let mut at = 0;
                while at < buf.len() {
                    buf[at] += base;
                    at += 2 + buf[at + 1] as usize;
                }
            }
            atoms.number(r, a.relaxed.rel(RelId(r as u32)).len())?;
        }
        // Once a phase: a phase of a few instances never reaches a worker's own checks (a chain of
        // thousands of late relations is thousands of phases), and with every worker's last counts
        // in, a refusal for size does not depend on how their batches interleaved.
        check_grounding(made(), budget, started)?;
    }
    Ok(Instantiated {
        found,
        atoms,
        to_ground,
    })
}

/// The atoms standing for the rows of the relations `Analysis::same_as` names (see [`StandIns`]).
fn stand_ins(a: &Analysis, atoms: &Numbering) -> Vec<Option<Box<[u32]>>> {
    if a.same_as.iter().all(Option::is_none) {
        return vec![None; a.same_as.len()];
    }
    a.same_as
        .par_iter()
        .enumerate()
        .map(|(r, same)| {
            let other = (*same)?;
            let (mine, theirs) = (a.relaxed.rel(RelId(r as u32)), a.relaxed.rel(other));
            let base = atoms.base[other.0 as usize];
            (0..mine.len())
                .map(|i| Some(base + theirs.position(mine.row(i))? as u32))
                .collect()
        })
        .collect()
}

/// Grounds rules `which` of `p` on as many workers as rayon has threads, each taking the next rule not
/// yet taken (the rules differ in cost by orders of magnitude, so a fixed split would leave a worker
/// idle). Returns each rule's instances, in the order of `which`.
fn ground_rules(
    p: &Program,
    which: &[usize],
    src: Sources,
    terms: &TermStore,
    (row_base, stand_ins): (&[u32], &StandIns),
    (budget, started, (shared_instances, shared_words)): (
        Budget,
        Instant,
        (&AtomicUsize, &AtomicUsize),
    ),
) -> Result<Vec<Instances>, NetworkError> {
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, which.len().max(1));
    // Per worker, the rules it grounded (by position in `which`) with their instances.
    type Done = Vec<(usize, Instances)>;
    let found: Vec<Result<Done, NetworkError>> = (0..workers)
        .into_par_iter()
        .map(|_| {
            let mut w = Grounder {
                src,
                terms,
                index_of: HashMap::new(),
                lookups: Vec::new(),
                step_lookup: Vec::new(),
                step_ground: Vec::new(),
                step_binds: Vec::new(),
                row_base,
                stand_ins,
                out: Vec::new(),
                head_vars: Vec::new(),
                head_step: usize::MAX,
                head_row: 0,
                instances: 0,
                shared_instances,
                words: 0,
                shared_words,
                visits: 0,
                budget,
                started,
            };
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&ri) = which.get(k) else {
                    w.flush_counts();
                    return Ok(done);
                };
                if let Err(e) = w.ground_rule(&p.rules[ri]) {
                    // The others stop at their next rule.
                    next.store(which.len(), Ordering::Relaxed);
                    return Err(e);
                }
                done.push((k, std::mem::take(&mut w.out)));
            }
        })
        .collect();
    let mut by_rule: Vec<Instances> = vec![Vec::new(); which.len()];
    for f in found {
        for (k, instances) in f? {
            by_rule[k] = instances;
        }
    }
    Ok(by_rule)
}

/// Adds the heads of the instances of the `completed` late relations' rules (`found`, by position in
/// `to_ground`) to the relations' rows, and turns each instance's head into its row number. Relations
/// whose heads hold no compound term (no term to make) are completed side by side, one per worker.
fn complete_late(
    p: &Program,
    to_ground: &[usize],
    (completed, rules_of): (&[usize], &[Vec<usize>]),
    found: &mut [Instances],
    db: &mut Db,
) {
    let flat = |r: usize| {
        rules_of[r].iter().all(|&k| {
            let h = &p.rules[to_ground[k]].head;
            h.args.iter().all(|a| !matches!(a, Pat::Func(..)))
        })
    };
    // One job per relation: its store and its rules' instance buffers.
    let mut job_of: HashMap<usize, usize> = HashMap::new();
    let mut jobs: Vec<(&mut RelStore, Vec<(&Rule, &mut Instances)>)> = Vec::new();
    let Db { rels, terms, .. } = db;
    let mut is_completed = vec![false; rels.len()];
    for &r in completed {
        is_completed[r] = true;
    }
    for (r, store) in rels.iter_mut().enumerate() {
        if is_completed[r] && flat(r) {
            job_of.insert(r, jobs.len());
            jobs.push((store, Vec::new()));
        }
    }
    let mut rest: Vec<(usize, &Rule, &mut Instances)> = Vec::new();
    for (k, buf) in found.iter_mut().enumerate() {
        let rule = &p.rules[to_ground[k]];
        let r = rule.head.rel.0 as usize;
        if !is_completed[r] {
            continue;
        }
        match job_of.get(&r) {
            Some(&j) => jobs[j].1.push((rule, buf)),
            None => rest.push((r, rule, buf)),
        }
    }
    let shared: &TermStore = terms;
    jobs.par_iter_mut().for_each(|(store, bufs)| {
        for (rule, buf) in bufs.iter_mut() {
            // A flat head makes no term: every variable was recorded.
            **buf = atoms_of_heads(rule, buf, |b| {
                let fact = instantiate_atom(&rule.head, b, &mut |_, _| None)?;
                Some(store.find_or_insert(&fact, shared) as u32)
            });
        }
    });
    // Heads with compound terms may make new terms: one relation after the other.
    for (r, rule, buf) in rest {
        *buf = atoms_of_heads(rule, buf, |b| {
            let fact = instantiate_atom(&rule.head, b, &mut |s, ids| Some(terms.func(s, ids)))?;
            Some(rels[r].find_or_insert(&fact, terms) as u32)
        });
    }
}

/// When each rule of `which` (rule numbers) is grounded: phase 0 for those that read no late
/// relation, else the phase after every late relation they read (positively or not) is complete.
/// Returns each rule's phase and, per relation, the phase after which a late one is complete.
fn grounding_phases(
    p: &Program,
    which: &[usize],
    late: &[bool],
) -> Result<(Vec<usize>, Vec<usize>), NetworkError> {
    let n = p.relations.len();
    // The late relations each rule reads, and (by relation) the rules that read each: one pass in
    // dependency order (Kahn's), a late relation's level settled once every rule of it is.
    let reads = |ri: usize| {
        p.rules[ri].body.iter().filter_map(|l| match l {
            Lit::Pos(a) | Lit::Neg(a) if late[a.rel.0 as usize] => Some(a.rel.0 as usize),
            _ => None,
        })
    };
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Per late relation, the readings of late relations its rules still wait for.
    let mut waiting = vec![0usize; n];
    for (k, &ri) in which.iter().enumerate() {
        let h = p.rules[ri].head.rel.0 as usize;
        for d in reads(ri) {
            readers[d].push(k);
            if late[h] {
                waiting[h] += 1;
            }
        }
    }
    let mut level = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&r| late[r] && waiting[r] == 0).collect();
    let mut settled = 0;
    while let Some(d) = ready.pop() {
        settled += 1;
        for &k in &readers[d] {
            let h = p.rules[which[k]].head.rel.0 as usize;
            if late[h] {
                level[h] = level[h].max(level[d] + 1);
                waiting[h] -= 1;
                if waiting[h] == 0 {
                    ready.push(h);
                }
            }
        }
    }
    if settled < late.iter().filter(|&&l| l).count() {
        // Late relations are outside recursive strata; a cycle among them has no order.
        return Err(NetworkError::Unsupported(
            "the rules' dependencies have no order to ground them in".into(),
        ));
    }
    let phase = which
        .iter()
        .map(|&ri| reads(ri).map(|d| level[d] + 1).max().unwrap_or(0))
        .collect();
    Ok((phase, level))
}

/// Rewrites the instances of `rule` (of a late relation, see
/// [`late_relations`](super::analysis::late_relations)) with their heads as the row numbers `row_of`
/// gives for the values of the head's variables (it makes the head and adds it to the relation); an
/// instance whose head cannot be made goes.
fn atoms_of_heads(
    rule: &Rule,
    found: &[u32],
    mut row_of: impl FnMut(&[Option<TermId>]) -> Option<u32>,
) -> Instances {
    let vars = head_vars(rule);
    let mut b: Vec<Option<TermId>> = vec![None; rule.var_names.len()];
    let mut out = Vec::with_capacity(found.len());
    let mut at = 0;
    while at < found.len() {
        for (i, &v) in vars.iter().enumerate() {
            b[v as usize] = Some(TermId(found[at + i]));
        }
        at += vars.len();
        let n = found[at] as usize;
        if let Some(row) = row_of(&b) {
            out.push(row);
            out.extend_from_slice(&found[at..at + 1 + n]);
        }
        at += 1 + n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::net::Strategy;
    use super::super::testing::{analysed, instantiated, kif};
    use super::*;

    /// A counter that steps along `succ` from 1: the frame rule's instances follow the facts.
    const COUNTER: &str = "
        (role r)
        (init (at 1))
        (succ 1 2) (succ 2 3)
        (legal r step)
        (<= (next (at ?y)) (true (at ?x)) (succ ?x ?y) (does r step))
        (<= (goal r 100) (true (at 3)))
        (<= terminal (true (at 3)))";

    #[test]
    fn a_rule_has_one_instance_per_join_of_facts_that_can_hold() {
        let mut a = analysed(&kif(COUNTER), Strategy::AsWritten);
        let inst = instantiated(&mut a);
        let next_rule = inst
            .to_ground
            .iter()
            .position(|&ri| a.prog.rules[ri].head.rel == a.rels.next)
            .expect("the next rule is grounded");
        // Instances are (head, n, n literals): `at 1 -> at 2`, `at 2 -> at 3`; `at 3` has no
        // successor, and `succ`, a constant, is decided on the spot instead of recorded. The body is
        // in the join order: the ground `does` first, then `true`, which binds `?x`.
        let buf = &inst.found[next_rule];
        let mut instances = Vec::new();
        let mut at = 0;
        while at < buf.len() {
            let n = buf[at + 1] as usize;
            instances.push((buf[at], buf[at + 2..at + 2 + n].to_vec()));
            at += 2 + n;
        }
        assert_eq!(instances.len(), 2);
        let name = |atom: u32| {
            let r = (0..a.prog.relations.len())
                .rfind(|&r| {
                    a.dynamic[r]
                        && atom >= inst.atoms.base[r]
                        && atom < inst.atoms.base[r] + inst.atoms.len[r]
                })
                .expect("an atom of a relation");
            let row = a
                .relaxed
                .rel(RelId(r as u32))
                .row((atom - inst.atoms.base[r]) as usize);
            let args: Vec<String> = row.iter().map(|t| a.relaxed.terms.kif(*t)).collect();
            format!(
                "{} {}",
                a.prog.terms.name(a.prog.relations[r].name),
                args.join(" ")
            )
        };
        let shown: Vec<(String, Vec<String>)> = instances
            .iter()
            .map(|(h, body)| (name(*h), body.iter().map(|&l| name(l >> 1)).collect()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "next (at 2)".to_string(),
                    vec!["does r step".to_string(), "true (at 1)".to_string()]
                ),
                (
                    "next (at 3)".to_string(),
                    vec!["does r step".to_string(), "true (at 2)".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn late_relations_are_grounded_after_what_they_read() {
        let mut a = analysed(&kif(COUNTER), Strategy::AsWritten);
        let to_ground: Vec<usize> = (0..a.prog.rules.len()).collect();
        let (phase, level) = grounding_phases(&a.prog, &to_ground, &a.late).unwrap();
        // `goal` and `terminal` read only `true`: no late relation, phase 0, complete after it.
        for (k, &ri) in to_ground.iter().enumerate() {
            assert_eq!(phase[k], 0, "rule {ri}");
        }
        assert_eq!(level[a.rels.goal.0 as usize], 0);
        let inst = instantiated(&mut a);
        // The late `goal` relation has its one row now, and an atom.
        assert_eq!(a.relaxed.rel(a.rels.goal).len(), 1);
        assert_eq!(inst.atoms.len[a.rels.goal.0 as usize], 1);
    }
}
