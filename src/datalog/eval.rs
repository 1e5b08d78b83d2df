//! Stage 3, evaluation: the semi-naive evaluator over a database of indexed relations.
//!
//! The main entry point is [`Db::run`], which evaluates every stratum of one [`Phase`] of a [`Plan`]
//! in plan order. A [`Db`] holds every relation's facts ([`RelStore`], in `store`) and the term
//! store; it runs rules through the join interpreter (`join`) and decides what the heads become.
//! Clearing a phase keeps all capacity, so evaluating a state allocates nothing in the steady state.
//!
//! Recursive strata are evaluated semi-naively, by one loop (`Db::fixpoint`): a first round runs
//! every rule in full, and every later round runs each rule once per recursive body literal, with
//! that literal scanned first and restricted to the rows the previous round added (the delta), the
//! others seeing every row, until a round adds nothing. Rows only ever grow during a stratum, so a
//! delta is a range of row numbers. How a round's rules run is the loop's parameter:
//!
//! - in order ([`Db::run_only`], every state): rule after rule, each adding its facts at once, so a
//!   later rule already sees them; nothing is allocated per round.
//! - side by side ([`Db::run_only_parallel`], the load-time analyses, whose few rounds are large):
//!   the round's rules, and slices of each delta, are joined on rayon's threads against the facts of
//!   the previous rounds, the workers sharing the term store read-only (a join that must make a new
//!   term is run again by the evaluator itself); then relations, and then their indexes, take the
//!   new facts side by side, each relation in task order. **Row order depends on the rounds alone,
//!   never on the number of threads.**
//!
//! Both reach the same least fixpoint. In a per-state rule, the leading steps that read only
//! load-time relations (a chain of `succ` facts) give the same answers in every state: the first
//! evaluation keeps them (up to a bound) and later ones replay them.

use crate::datalog::Runaway;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::compiled::{CompiledRule, Instr, Phase, Plan, Scan, Stratum};
use super::ir::{Pat, RelId};
use super::join::{join, Scratch, Stop};
use super::store::Index;
/// The relations' type, where the grounder has always imported it from.
pub use super::store::RelStore;
use super::terms::{hash_ids, TermId, TermStore};
use super::{EngineError, Limits};

const UNBOUND: TermId = TermId(u32::MAX);

/// A database: every relation's facts and the term store they are built from.
#[derive(Clone, Debug)]
pub struct Db {
    /// The relations, indexed by [`RelId`].
    pub rels: Vec<RelStore>,
    /// The terms.
    pub terms: TermStore,
    limits: Limits,
    pending: Vec<TermId>,
    binds: Vec<TermId>,
    /// The answers of each rule's static prefix (see [`CompiledRule::static_prefix`]), by rule source.
    prefixes: Vec<Prefix>,
    derived: usize,
}

impl Db {
    /// An empty database for the relations of `plan`.
    pub fn new(plan: &Plan, arities: &[usize], terms: TermStore, limits: Limits) -> Db {
        Db {
            rels: arities
                .iter()
                .zip(&plan.indexes)
                .map(|(&a, ix)| RelStore::new(a, ix))
                .collect(),
            terms,
            limits,
            pending: Vec::new(),
            binds: Vec::new(),
            prefixes: Vec::new(),
            derived: 0,
        }
    }

    /// The facts of a relation.
    #[inline]
    pub fn rel(&self, r: RelId) -> &RelStore {
        &self.rels[r.0 as usize]
    }

    /// Adds a fact from outside (an input relation such as `true` or `does`).
    pub fn insert(&mut self, r: RelId, fact: &[TermId]) -> bool {
        self.rels[r.0 as usize].insert(fact, &self.terms)
    }

    /// Adds a fact unless present; either way, its row number.
    pub fn insert_or_find(&mut self, r: RelId, fact: &[TermId]) -> usize {
        self.rels[r.0 as usize].find_or_insert(fact, &self.terms)
    }

    /// Adds a fact known to be new to a relation that no rule derives (a state's facts, filled from a
    /// set): no duplicate check.
    pub fn insert_new(&mut self, r: RelId, fact: &[TermId]) {
        self.rels[r.0 as usize].insert_row(fact, false, &self.terms);
    }

    /// Empties every relation whose phase is `from` or later.
    pub fn clear_from(&mut self, plan: &Plan, from: Phase) {
        for (i, ph) in plan.phases.iter().enumerate() {
            if *ph >= from && !self.rels[i].is_empty() {
                self.rels[i].clear();
            }
        }
    }

    /// Replaces the limits of later evaluations.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Facts derived by the last [`Db::run`].
    pub fn derived(&self) -> usize {
        self.derived
    }

    /// Empties one relation.
    pub fn clear_rel(&mut self, r: RelId) {
        self.rels[r.0 as usize].clear();
    }

    /// Evaluates every stratum of `phase`, in plan order.
    pub fn run(&mut self, plan: &Plan, phase: Phase) -> Result<(), EngineError> {
        self.run_only(plan, phase, &[])
    }

    /// Evaluates the strata of `phase` that `select` (indexed by stratum; missing means yes) selects,
    /// in plan order: a caller that needs only some relations skips the strata nothing it needs reads.
    pub fn run_only(
        &mut self,
        plan: &Plan,
        phase: Phase,
        select: &[bool],
    ) -> Result<(), EngineError> {
        self.fixpoint(plan, phase, select, Db::round_in_order)
    }

    /// [`Db::run_only`] with each round of a stratum spread over rayon's threads: the rules (and
    /// slices of each semi-naive variant's new rows) are joined side by side against the facts of the
    /// previous rounds, then each relation takes its new facts, relations side by side. For the
    /// load-time analysis, whose rounds are few and large. The facts are those of [`Db::run_only`]
    /// (a least fixpoint); their row order depends only on the rounds, never on the threads.
    pub fn run_only_parallel(
        &mut self,
        plan: &Plan,
        phase: Phase,
        select: &[bool],
    ) -> Result<(), EngineError> {
        self.fixpoint(plan, phase, select, Db::round_side_by_side)
    }

    /// The semi-naive loop of both evaluations, `round` running one round of a stratum's rules: in
    /// full (no delta), then, in a recursive stratum, restricted to the rows the previous round
    /// added, until a round adds none.
    #[inline]
    fn fixpoint(
        &mut self,
        plan: &Plan,
        phase: Phase,
        select: &[bool],
        mut round: impl FnMut(&mut Db, &Stratum, Option<Delta>) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        self.derived = 0;
        for s in selected(plan, phase, select) {
            let lens = |db: &Db| -> SmallVec<[u32; 4]> {
                s.rels.iter().map(|r| db.rels[r.0 as usize].len).collect()
            };
            let mut marks = lens(self);
            round(self, s, None)?;
            if !s.recursive {
                continue;
            }
            loop {
                let now = lens(self);
                if now == marks {
                    break;
                }
                let new = Delta {
                    from: &marks,
                    to: &now,
                };
                round(self, s, Some(new))?;
                marks = now;
            }
        }
        Ok(())
    }

    /// One round of stratum `s`, rule after rule: each sees the facts the rules before it added.
    fn round_in_order(&mut self, s: &Stratum, new: Option<Delta>) -> Result<(), EngineError> {
        for r in &s.rules {
            let Some(new) = new else {
                self.fire(r, &r.code, r.exists_from, None)?;
                continue;
            };
            for d in &r.deltas {
                let (lo, hi) = new.rows(d.slot);
                if lo < hi {
                    self.fire(r, &d.code, d.exists_from, Some((0, lo, hi)))?;
                }
            }
        }
        Ok(())
    }

    /// One round of stratum `s` as a parallel pass (see [`Db::run_only_parallel`]): a rule whose
    /// first step scans a relation, and each semi-naive variant, is split among its rows.
    fn round_side_by_side(&mut self, s: &Stratum, new: Option<Delta>) -> Result<(), EngineError> {
        let mut tasks = Vec::new();
        for (rule, r) in s.rules.iter().enumerate() {
            let Some(new) = new else {
                match r.code.first() {
                    Some(Instr::Scan(Scan {
                        rel,
                        positive: true,
                        ..
                    })) => Task::split(rule, None, 0, self.rels[*rel as usize].len, &mut tasks),
                    _ => tasks.push(Task {
                        rule,
                        variant: None,
                        rows: None,
                    }),
                }
                continue;
            };
            for (variant, d) in r.deltas.iter().enumerate() {
                let (lo, hi) = new.rows(d.slot);
                Task::split(rule, Some(variant), lo, hi, &mut tasks);
            }
        }
        self.run_pass(s, &tasks)
    }

    /// One parallel pass of stratum `s` (see [`Db::run_only_parallel`]). A join that needs a term not
    /// yet made (the workers share the term store read-only) is evaluated again by the evaluator
    /// itself once the others' facts are in.
    fn run_pass(&mut self, s: &Stratum, tasks: &[Task]) -> Result<(), EngineError> {
        let room = self.room();
        let (rels, terms, limits) = (&self.rels, &self.terms, &self.limits);
        let task = |t: &Task| join_task(rels, terms, limits, room, &s.rules[t.rule], t);
        // A pass over a few new rows (a recursion's last rounds, a step counter's hundreds) costs
        // less than waking the other threads would.
        let few = tasks
            .iter()
            .try_fold(0, |n, t| t.rows.map(|(lo, hi)| n + hi - lo))
            .is_some_and(|n| n <= FEW_ROWS);
        let joined: Vec<Result<Option<Found>, EngineError>> = if few {
            tasks.iter().map(task).collect()
        } else {
            tasks.par_iter().map(task).collect()
        };
        let mut found: Vec<(u32, usize)> = Vec::new();
        let mut again = Vec::new();
        for (k, j) in joined.iter().enumerate() {
            match j {
                Err(e) => return Err(e.clone()),
                Ok(Some(_)) => found.push((s.rules[tasks[k].rule].head.rel.0, k)),
                Ok(None) => again.push(k),
            }
        }
        // Each relation takes its facts in task order, relations side by side.
        found.sort_by_key(|&(rel, k)| (rel, k));
        let added = self.take_found(&found, &joined);
        self.index_new_rows();
        self.derived += added;
        if self.derived > self.limits.max_facts {
            return Err(EngineError::Runaway(Runaway::TooManyFacts(
                self.limits.max_facts,
            )));
        }
        for k in again {
            let r = &s.rules[tasks[k].rule];
            let (code, exists_from, delta) = tasks[k].code(r);
            let delta = tasks[k].rows.map(|_| delta);
            self.fire(r, code, exists_from, delta)?;
        }
        Ok(())
    }

    /// Appends the facts of the tasks `found` names (relation and task, sorted) to their relations,
    /// relations side by side, leaving the indexes behind; returns the number of facts added (past
    /// the room the limit leaves, a relation stops early).
    fn take_found(
        &mut self,
        found: &[(u32, usize)],
        joined: &[Result<Option<Found>, EngineError>],
    ) -> usize {
        let room = self.room();
        let mut targets: Vec<(&mut RelStore, &[(u32, usize)])> = Vec::new();
        let mut rest = found;
        for (i, rel) in self.rels.iter_mut().enumerate() {
            let n = rest.iter().take_while(|x| x.0 as usize == i).count();
            if n > 0 {
                targets.push((rel, &rest[..n]));
                rest = &rest[n..];
            }
        }
        let facts: usize = found
            .iter()
            .map(|&(_, k)| match &joined[k] {
                Ok(Some(f)) => f.hashes.len(),
                _ => 0,
            })
            .sum();
        let take = |(rel, from): (&mut RelStore, &[(u32, usize)])| {
            let mut added = 0;
            for &(_, k) in from {
                let Ok(Some(found)) = &joined[k] else {
                    continue;
                };
                if rel.arity == 0 {
                    if found.hits > 0 && rel.len == 0 {
                        rel.push_unindexed(&[], Some(hash_ids([].into_iter())));
                        added += 1;
                    }
                    continue;
                }
                for (fact, &h) in found.facts.chunks_exact(rel.arity).zip(&found.hashes) {
                    if rel.find_hashed(fact, h).is_none() {
                        rel.push_unindexed(fact, Some(h));
                        added += 1;
                        if added > room {
                            return added;
                        }
                    }
                }
            }
            added
        };
        if facts <= FEW_ROWS as usize {
            targets.into_iter().map(take).sum()
        } else {
            targets.into_par_iter().map(take).sum()
        }
    }

    /// Adds the rows [`Db::take_found`] appended to every index of their relations, side by side.
    fn index_new_rows(&mut self) {
        let terms = &self.terms;
        let mut indexes: Vec<(&mut Index, &[TermId], usize, std::ops::Range<u32>)> = Vec::new();
        for rel in &mut self.rels {
            let indexed = rel
                .indexes
                .first()
                .map_or(rel.len, |ix| ix.next.len() as u32);
            if indexed < rel.len {
                for ix in &mut rel.indexes {
                    indexes.push((ix, &rel.rows, rel.arity, indexed..rel.len));
                }
            }
        }
        let rows: u32 = indexes.iter().map(|(_, _, _, new)| new.len() as u32).sum();
        let index = |(ix, rows, a, new): (&mut Index, &[TermId], usize, std::ops::Range<u32>)| {
            for r in new {
                ix.add(rows, a, r, terms);
            }
        };
        if rows <= FEW_ROWS {
            indexes.into_iter().for_each(index);
        } else {
            indexes.into_par_iter().for_each(index);
        }
    }

    /// Evaluates one rule (with one scan restricted to a row range) and adds what it derives.
    fn fire(
        &mut self,
        r: &CompiledRule,
        code: &[Instr],
        exists_from: usize,
        delta: Option<(usize, u32, u32)>,
    ) -> Result<(), EngineError> {
        self.binds.clear();
        self.binds.resize(r.num_vars, UNBOUND);
        self.pending.clear();
        if delta.is_none() && r.static_prefix > 0 {
            if self.prefixes.len() <= r.source {
                self.prefixes.resize(r.source + 1, Prefix::Unknown);
            }
            if matches!(self.prefixes[r.source], Prefix::Unknown) {
                self.prefixes[r.source] = self.prefix_answers(r)?;
            }
            if let Prefix::Rows(count, rows) = std::mem::take(&mut self.prefixes[r.source]) {
                let res = self.fire_from_prefix(r, count, &rows, exists_from);
                self.prefixes[r.source] = Prefix::Rows(count, rows);
                return res;
            }
        }
        let (head, room) = (r.head.rel.0 as usize, self.room());
        let mut sc = Scratch::new(
            &mut self.binds,
            &mut self.pending,
            &mut self.terms,
            &self.limits,
        )
        .for_head(head, room);
        let delta = delta.unwrap_or((usize::MAX, 0, 0));
        join(
            &self.rels,
            &r.head.args,
            (code, exists_from),
            0,
            delta,
            &mut sc,
        )?;
        let hits = sc.hits;
        if self.limits.deadline.is_some() {
            sc.check_deadline()?;
        }
        self.add_pending(r, hits)
    }

    /// How many facts the evaluation may still derive.
    fn room(&self) -> usize {
        self.limits.max_facts.saturating_sub(self.derived)
    }

    /// Every answer of the rule's static prefix, when there are few enough to keep.
    fn prefix_answers(&mut self, r: &CompiledRule) -> Result<Prefix, EngineError> {
        let pats: Vec<Pat> = r.prefix_vars.iter().map(|&v| Pat::Var(v)).collect();
        let n = r.static_prefix;
        // The join stops at the first answer past what may be kept (with no variable, only the
        // count is kept).
        let w = r.prefix_vars.len();
        let most = MAX_PREFIX_TERMS.checked_div(w).unwrap_or(usize::MAX);
        let mut sc = Scratch::new(
            &mut self.binds,
            &mut self.pending,
            &mut self.terms,
            &self.limits,
        )
        .answers_at_most(most);
        match join(
            &self.rels,
            &pats,
            (&r.code[..n], n),
            0,
            (usize::MAX, 0, 0),
            &mut sc,
        ) {
            Ok(_) => {}
            Err(Stop::Enough) => {
                self.pending.clear();
                return Ok(Prefix::TooMany);
            }
            Err(e) => return Err(e.into()),
        }
        let count = sc.hits;
        let rows = std::mem::take(&mut self.pending);
        Ok(Prefix::Rows(count, rows.into_boxed_slice()))
    }

    /// [`Db::fire`] replaying the static prefix's answers `rows` instead of evaluating it.
    fn fire_from_prefix(
        &mut self,
        r: &CompiledRule,
        count: usize,
        rows: &[TermId],
        exists_from: usize,
    ) -> Result<(), EngineError> {
        let w = r.prefix_vars.len();
        let (head, room) = (r.head.rel.0 as usize, self.room());
        let mut sc = Scratch::new(
            &mut self.binds,
            &mut self.pending,
            &mut self.terms,
            &self.limits,
        )
        .for_head(head, room);
        for k in 0..count {
            for (j, &v) in r.prefix_vars.iter().enumerate() {
                sc.binds[v as usize] = rows[k * w + j];
            }
            let solved = join(
                &self.rels,
                &r.head.args,
                (&r.code, exists_from),
                r.static_prefix,
                (usize::MAX, 0, 0),
                &mut sc,
            )?;
            // With no head variable, one solution is the answer (as the join itself would stop).
            if solved && exists_from == 0 {
                break;
            }
        }
        let hits = sc.hits;
        if self.limits.deadline.is_some() {
            sc.check_deadline()?;
        }
        self.add_pending(r, hits)
    }

    /// Adds the heads the last join pushed (`hits` solutions) to the rule's relation.
    fn add_pending(&mut self, r: &CompiledRule, hits: usize) -> Result<(), EngineError> {
        let a = r.head.args.len();
        let room = self.room();
        let rel = &mut self.rels[r.head.rel.0 as usize];
        let terms = &self.terms;
        let mut added = 0;
        if a == 0 {
            if hits > 0 {
                added += usize::from(rel.insert(&[], terms));
            }
        } else {
            // One join can yield millions of heads; the limit is checked as they go in.
            for fact in self.pending.chunks_exact(a) {
                added += usize::from(rel.insert(fact, terms));
                if added > room {
                    break;
                }
            }
        }
        self.derived += added;
        if self.derived > self.limits.max_facts {
            return Err(EngineError::Runaway(Runaway::TooManyFacts(
                self.limits.max_facts,
            )));
        }
        Ok(())
    }
}

/// One parallel task's join (see [`Db::run_pass`]), with the store read-only: the facts it found
/// that `r`'s relation lacks, or `None` when it needs a term the store does not have yet.
fn join_task(
    rels: &[RelStore],
    terms: &TermStore,
    limits: &Limits,
    room: usize,
    r: &CompiledRule,
    t: &Task,
) -> Result<Option<Found>, EngineError> {
    let (code, exists_from, delta) = t.code(r);
    let mut binds = vec![UNBOUND; r.num_vars];
    let mut pending = Vec::new();
    let head = r.head.rel.0 as usize;
    let mut sc = Scratch::new(&mut binds, &mut pending, terms, limits).for_head(head, room);
    match join(rels, &r.head.args, (code, exists_from), 0, delta, &mut sc) {
        Ok(_) => {}
        Err(Stop::NewTerm) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let hits = sc.hits;
    if limits.deadline.is_some() {
        sc.check_deadline()?;
    }
    // Most solutions repeat known facts: they are dropped here, side by side, while the relation
    // is read-only.
    let rel = &rels[r.head.rel.0 as usize];
    let a = r.head.args.len();
    let mut facts = Vec::new();
    let mut hashes = Vec::new();
    if a > 0 {
        for fact in pending.chunks_exact(a) {
            let h = hash_ids(fact.iter().copied());
            if rel.find_hashed(fact, h).is_none() {
                facts.extend_from_slice(fact);
                hashes.push(h);
            }
        }
    }
    Ok(Some(Found {
        facts,
        hashes,
        hits,
    }))
}

/// The rows a stratum's relations gained in the previous round: `from[k]..to[k]` for its `k`-th
/// relation ([`Stratum::rels`]).
#[derive(Clone, Copy)]
struct Delta<'a> {
    from: &'a [u32],
    to: &'a [u32],
}

impl Delta<'_> {
    /// The new rows of the stratum's relation at `slot`
    /// ([`DeltaPlan::slot`](super::compiled::DeltaPlan::slot)).
    #[inline]
    fn rows(&self, slot: usize) -> (u32, u32) {
        (self.from[slot], self.to[slot])
    }
}

/// The strata of `phase` with rules that `select` (indexed by stratum; missing means yes) selects, in
/// plan order.
fn selected<'p>(
    plan: &'p Plan,
    phase: Phase,
    select: &'p [bool],
) -> impl Iterator<Item = &'p Stratum> {
    plan.strata.iter().enumerate().filter_map(move |(si, s)| {
        let wanted = s.phase == phase && select.get(si).copied().unwrap_or(true);
        (wanted && !s.rules.is_empty()).then_some(s)
    })
}

/// The most new rows a pass joins, facts it takes or rows it indexes on one thread (see
/// [`Db::run_pass`]).
const FEW_ROWS: u32 = 256;

/// The most new rows one task of a parallel pass joins (see [`Db::run_only_parallel`]): enough to
/// outweigh the task's cost, few enough that one large delta is shared among the threads.
const TASK_ROWS: u32 = 2048;

/// One join of a parallel pass: a rule of the stratum, in full or as one semi-naive variant over a
/// slice of its delta's rows.
struct Task {
    /// The rule's index in its stratum.
    rule: usize,
    /// The semi-naive variant's index in [`CompiledRule::deltas`]; none for the rule as planned.
    variant: Option<usize>,
    /// The rows the first scan reads, when not all of them.
    rows: Option<(u32, u32)>,
}

impl Task {
    /// The code to run, its first existence-only step and the restriction [`join`] takes.
    fn code<'r>(&self, r: &'r CompiledRule) -> (&'r [Instr], usize, (usize, u32, u32)) {
        let (code, exists_from) = match self.variant {
            None => (&r.code, r.exists_from),
            Some(v) => (&r.deltas[v].code, r.deltas[v].exists_from),
        };
        let rows = self.rows.map_or((usize::MAX, 0, 0), |(lo, hi)| (0, lo, hi));
        (code, exists_from, rows)
    }

    /// Tasks for the rows `lo..hi` of the first scan, [`TASK_ROWS`] at a time.
    fn split(rule: usize, variant: Option<usize>, lo: u32, hi: u32, out: &mut Vec<Task>) {
        let mut at = lo;
        while at < hi {
            let end = hi.min(at + TASK_ROWS);
            out.push(Task {
                rule,
                variant,
                rows: Some((at, end)),
            });
            at = end;
        }
    }
}

/// What one task of a parallel pass found: the facts its relation did not have before the pass
/// (with their hashes), and how many solutions the join had.
struct Found {
    facts: Vec<TermId>,
    hashes: Vec<u64>,
    hits: usize,
}

/// The most terms a rule's static prefix answers may take to be kept (see [`Db::fire`]).
const MAX_PREFIX_TERMS: usize = 1 << 16;

/// What is known of a rule's static prefix answers.
#[derive(Clone, Debug, Default)]
enum Prefix {
    /// Not computed yet.
    #[default]
    Unknown,
    /// The number of answers and the prefix variables' values, answer after answer (with no
    /// variable, the count alone tells whether the prefix holds).
    Rows(usize, Box<[TermId]>),
    /// Too many to keep: the rule is evaluated in full.
    TooMany,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::plan::{plan, PlanDisplay};
    use crate::engine::{lower, Limits};
    use crate::syntax::parse_kif;

    /// Evaluates `src`'s load-time relations; returns the plan as text and `rel`'s facts, sorted.
    fn run(src: &str, rel: &str) -> (String, Vec<String>) {
        let p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let pl = plan(&p, &[]).expect("plans");
        let arities: Vec<usize> = p.relations.iter().map(|r| r.arity).collect();
        let mut db = Db::new(&pl, &arities, p.terms.clone(), Limits::default());
        db.run(&pl, Phase::Static).expect("runs");
        let r = p
            .relations
            .iter()
            .position(|x| p.terms.name(x.name) == rel)
            .expect("relation");
        let store = db.rel(RelId(r as u32));
        let mut facts: Vec<String> = (0..store.len())
            .map(|i| {
                let args: Vec<String> = store.row(i).iter().map(|&t| db.terms.kif(t)).collect();
                args.join(" ")
            })
            .collect();
        facts.sort();
        let shown = PlanDisplay {
            program: &p,
            plan: &pl,
        }
        .to_string();
        (shown, facts)
    }

    #[test]
    fn a_partly_bound_column_is_looked_up_by_its_bound_parts() {
        let src = "(role r) (want 2) (want 3)
            (item a (f 1 x)) (item b (f 2 y)) (item c plain) (item d (g 2)) (item e (h 2 z w))
            (item f (f 3 v))
            (<= (found ?n ?k ?z) (want ?k) (item ?n (f ?k ?z)))
            (<= terminal (found ?n ?k ?z))";
        let (plan, facts) = run(src, "found");
        assert!(
            plan.contains("item(?n, f(?k, ?z))@[1.0]"),
            "the second column is keyed by its term's first argument: {plan}"
        );
        // `plain` has no arguments to key, and `(g 2)` and `(h 2 z w)` are other symbols.
        assert_eq!(facts, ["b 2 y", "f 3 v"]);
    }

    #[test]
    fn a_scan_with_nothing_bound_is_looked_up_by_its_function_symbol() {
        let src = "(role r) (item (f 1)) (item (g 2)) (item (f 3)) (item plain)
            (<= (found ?x) (item (f ?x)))
            (<= terminal (found ?x))";
        let (plan, facts) = run(src, "found");
        assert!(
            plan.contains("item(f(?x))@[0.f]"),
            "the column is keyed by its function symbol: {plan}"
        );
        // `plain` and `(g 2)` are not `f` terms.
        assert_eq!(facts, ["1", "3"]);
    }

    #[test]
    fn recursion_through_a_partly_keyed_index_reaches_every_row() {
        // A recursive relation whose rows grow while the index serves lookups (the delta rounds),
        // and a relation over a column whose term has another symbol (`q`).
        let src = "(role r)
            (edge (p 1 red) (p 2 red)) (edge (p 2 red) (p 3 blue)) (edge (p 3 blue) (q 4))
            (edge (p 4 red) (p 1 red)) (start 1)
            (<= (reach ?x) (start ?x))
            (<= (reach ?y) (reach ?x) (edge (p ?x ?c) (p ?y ?d)))
            (<= (dead ?x) (reach ?x) (not (blocked ?x)))
            (<= (blocked ?x) (edge (p ?x ?c) (q ?y)))
            (<= terminal (dead ?x))";
        let (plan, reach) = run(src, "reach");
        assert!(plan.contains("edge(p(?x, ?c), p(?y, ?d))@[0.0]"), "{plan}");
        assert_eq!(reach, ["1", "2", "3"]);
        let (_, dead) = run(src, "dead");
        assert_eq!(dead, ["1", "2"]);
    }

    /// Evaluates `src`'s load-time relations under a limit of `max_facts`: the outcome and the
    /// most facts a relation holds.
    fn run_limited(src: &str, max_facts: usize) -> (Result<(), EngineError>, usize) {
        let p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let pl = plan(&p, &[]).expect("plans");
        let arities: Vec<usize> = p.relations.iter().map(|r| r.arity).collect();
        let limits = Limits {
            max_facts,
            ..Limits::default()
        };
        let mut db = Db::new(&pl, &arities, p.terms.clone(), limits);
        let outcome = db.run(&pl, Phase::Static);
        (
            outcome,
            db.rels.iter().map(RelStore::len).max().unwrap_or(0),
        )
    }

    #[test]
    fn a_join_with_more_distinct_heads_than_the_fact_limit_stops_inside_the_join() {
        let numbers: String = (0..40).map(|i| format!(" (n {i})")).collect();
        // 40^4 = 2,560,000 distinct heads for a limit of 1,000 facts: the join stops once it has
        // found more than 1,000 solutions and counted them distinct, before any is added (a join
        // left to finish added facts until one past the limit).
        let quads = "(role r) (<= (quad ?a ?b ?c ?d) (n ?a) (n ?b) (n ?c) (n ?d))";
        let (outcome, most) = run_limited(&format!("{quads}{numbers}"), 1000);
        assert_eq!(
            outcome,
            Err(EngineError::Runaway(Runaway::TooManyFacts(1000)))
        );
        assert_eq!(most, 40, "only the 40 `n` facts");
        // A join whose heads repeat goes on: 64,000 solutions, 40 facts, under a limit of 100.
        let firsts = "(role r) (<= (first ?a) (n ?a) (n ?b) (n ?c))";
        let (outcome, most) = run_limited(&format!("{firsts}{numbers}"), 100);
        assert_eq!((outcome, most), (Ok(()), 40));
    }
}
