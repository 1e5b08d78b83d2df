//! Stage 3, evaluation: relations stored as flat rows with hash indexes, and a semi-naive evaluator.
//!
//! The main entry point is [`Db::run`], which evaluates every stratum of one [`Phase`] in plan order.
//! A relation is a flat vector of rows (`arity` term ids each), a hash set of rows for deduplication, and
//! one hash index per key its readers need (whole columns, or parts of a column's term: see
//! [`Slot`]); an index maps a key to the most recent row with that key, and each row links to the
//! previous one with the same key, so inserting allocates nothing once the vectors have grown. A row
//! whose term lacks a keyed part (a constant where the key wants an argument) is left out of that
//! index: no lookup through it could match the row. Clearing a phase keeps all capacity, so evaluating
//! a state allocates nothing in the steady state.
//!
//! Recursive strata are evaluated semi-naively: after a first full pass, every pass evaluates each rule
//! once per recursive body literal, with that literal scanned first and restricted to the rows added by
//! the previous pass (the delta), and the others seeing every row. Rows only ever grow during a stratum, so a delta is a
//! range of row numbers.
//!
//! The load-time analyses evaluate a few large recursive strata once: [`Db::run_only_parallel`] joins
//! each pass's rules (and slices of each delta) side by side on rayon's threads against the facts of
//! the previous passes, the workers sharing the term store read-only (a join that must make a new
//! term is run again by the evaluator itself), then inserts relation by relation and index by index,
//! also side by side. Row order depends on the passes alone, never on the number of threads.
//!
//! Rule bodies run as [`Instr`]uctions ([`compile`]): the body order is fixed, so where each variable
//! gets bound is known in advance, and matching a row binds or compares without a trail to undo; key
//! columns found through an index are not compared again. In a per-state rule, the leading steps that
//! read only load-time relations (a chain of `succ` facts) give the same answers in every state: the
//! first evaluation keeps them (up to a bound) and later ones replay them.

use hashbrown::HashTable;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::ir::{Arith, Cmp, Pat, RelId};
use super::plan::{CompiledRule, Phase, Plan, Slot, Step, Stratum};
use super::terms::{hash_ids, Filed, TermId, TermStore};
use super::{EngineError, Limits};
use crate::syntax::ast::Sym;

const NONE: u32 = u32::MAX;
const UNBOUND: TermId = TermId(u32::MAX);

#[derive(Clone, Debug)]
struct Index {
    slots: Box<[Slot]>,
    /// Every slot is a whole column (no term to look into).
    whole: bool,
    heads: HashTable<Filed>,
    next: Vec<u32>,
}

impl Index {
    /// Adds row `r` of `rows` (rows of `a` columns), the rows before it being in the index already.
    fn add(&mut self, rows: &[TermId], a: usize, r: u32, terms: &TermStore) {
        let Index {
            slots,
            whole,
            heads,
            next,
        } = self;
        let (slots, whole) = (&**slots, *whole);
        let row_of = |r: u32| &rows[r as usize * a..(r as usize + 1) * a];
        let Some(key) = Index::key(slots, whole, terms, row_of(r)) else {
            next.push(NONE);
            return;
        };
        let half = Filed::half(hash_ids(key.iter().copied()));
        let same_key = |f: &Filed| {
            f.hash == half && Index::row_has_key(slots, whole, terms, row_of(f.row), &key)
        };
        match heads.find_mut(Filed::spread(half), same_key) {
            Some(head) => {
                next.push(head.row);
                head.row = r;
            }
            None => {
                next.push(NONE);
                let f = Filed { row: r, hash: half };
                heads.insert_unique(Filed::spread(half), f, |f| Filed::spread(f.hash));
            }
        }
    }

    /// `row`'s key, or `None` when its terms lack a keyed part.
    #[inline]
    fn key(
        slots: &[Slot],
        whole: bool,
        terms: &TermStore,
        row: &[TermId],
    ) -> Option<SmallVec<[TermId; 8]>> {
        if whole {
            Some(slots.iter().map(|s| row[s.col]).collect())
        } else {
            slots.iter().map(|s| s.value(terms, row)).collect()
        }
    }

    /// Whether `row`'s key equals `key` (a row without every keyed part never does).
    #[inline]
    fn row_has_key(
        slots: &[Slot],
        whole: bool,
        terms: &TermStore,
        row: &[TermId],
        key: &[TermId],
    ) -> bool {
        if whole {
            slots.iter().zip(key).all(|(s, k)| row[s.col] == *k)
        } else {
            slots
                .iter()
                .zip(key)
                .all(|(s, k)| s.value(terms, row) == Some(*k))
        }
    }
}

/// The facts of one relation.
#[derive(Clone, Debug)]
pub struct RelStore {
    arity: usize,
    rows: Vec<TermId>,
    len: u32,
    dedup: HashTable<Filed>,
    indexes: Vec<Index>,
}

impl RelStore {
    /// The same rows (same row numbers) with no index: a copy nothing evaluates, only looks up.
    pub(crate) fn copy_rows(&self) -> RelStore {
        RelStore {
            arity: self.arity,
            rows: self.rows.clone(),
            len: self.len,
            dedup: self.dedup.clone(),
            indexes: Vec::new(),
        }
    }

    fn new(arity: usize, index_slots: &[Vec<Slot>]) -> RelStore {
        RelStore {
            arity,
            rows: Vec::new(),
            len: 0,
            dedup: HashTable::new(),
            indexes: index_slots
                .iter()
                .map(|c| Index {
                    whole: c.iter().all(|s| s.path.is_empty()),
                    slots: c.clone().into_boxed_slice(),
                    heads: HashTable::new(),
                    next: Vec::new(),
                })
                .collect(),
        }
    }

    /// The number of facts.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there is no fact.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fact number `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[TermId] {
        &self.rows[i * self.arity..(i + 1) * self.arity]
    }

    /// Whether the fact is present.
    pub fn contains(&self, fact: &[TermId]) -> bool {
        self.position(fact).is_some()
    }

    /// The fact's row number, if it is present.
    pub fn position(&self, fact: &[TermId]) -> Option<usize> {
        if self.dedup.len() != self.len as usize {
            return (0..self.len()).position(|i| self.row(i) == fact);
        }
        self.find_hashed(fact, hash_ids(fact.iter().copied()))
            .map(|r| r as usize)
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.len = 0;
        self.dedup.clear();
        for ix in &mut self.indexes {
            ix.heads.clear();
            ix.next.clear();
        }
    }

    /// Adds a fact; false when it was already there.
    fn insert(&mut self, fact: &[TermId], terms: &TermStore) -> bool {
        self.insert_row(fact, true, terms)
    }

    /// Adds a fact, first checking that it is new when `check` (else the caller knows it is, and the
    /// deduplication table is left out: [`RelStore::contains`] then scans).
    fn insert_row(&mut self, fact: &[TermId], check: bool, terms: &TermStore) -> bool {
        if !check {
            self.push_row(fact, None, terms);
            return true;
        }
        let h = hash_ids(fact.iter().copied());
        if self.find_hashed(fact, h).is_some() {
            return false;
        }
        self.push_row(fact, Some(h), terms);
        true
    }

    /// The row of a fact whose hash is `h`, if present.
    fn find_hashed(&self, fact: &[TermId], h: u64) -> Option<u32> {
        let half = Filed::half(h);
        self.dedup
            .find(Filed::spread(half), |f| {
                f.hash == half && self.row(f.row as usize) == fact
            })
            .map(|f| f.row)
    }

    /// The fact's row number, the fact added first when new (one hash either way).
    pub(crate) fn find_or_insert(&mut self, fact: &[TermId], terms: &TermStore) -> usize {
        let h = hash_ids(fact.iter().copied());
        match self.find_hashed(fact, h) {
            Some(r) => r as usize,
            None => self.push_row(fact, Some(h), terms) as usize,
        }
    }

    /// Appends a fact (known to be new), in the deduplication table when its hash `h` is given, and
    /// in every index; returns its row.
    fn push_row(&mut self, fact: &[TermId], h: Option<u64>, terms: &TermStore) -> u32 {
        let r = self.push_unindexed(fact, h);
        for ix in &mut self.indexes {
            ix.add(&self.rows, self.arity, r, terms);
        }
        r
    }

    /// Appends a fact (known to be new), in the deduplication table when its hash `h` is given but in
    /// no index yet; returns its row.
    fn push_unindexed(&mut self, fact: &[TermId], h: Option<u64>) -> u32 {
        let r = self.len;
        self.rows.extend_from_slice(fact);
        self.len += 1;
        if let Some(h) = h {
            let f = Filed {
                row: r,
                hash: Filed::half(h),
            };
            self.dedup
                .insert_unique(Filed::spread(f.hash), f, |f| Filed::spread(f.hash));
        }
        r
    }

    /// The most recent row whose key in index `index` equals `key`, or `NONE`.
    #[inline]
    fn lookup(&self, index: usize, key: &[TermId], terms: &TermStore) -> u32 {
        let ix = &self.indexes[index];
        let half = Filed::half(hash_ids(key.iter().copied()));
        ix.heads
            .find(Filed::spread(half), |f| {
                f.hash == half
                    && Index::row_has_key(&ix.slots, ix.whole, terms, self.row(f.row as usize), key)
            })
            .map_or(NONE, |f| f.row)
    }
}

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
        self.derived = 0;
        for s in selected(plan, phase, select) {
            let lens = |db: &Db| -> SmallVec<[u32; 4]> {
                s.rels.iter().map(|r| db.rels[r.0 as usize].len).collect()
            };
            let mut marks = lens(self);
            for r in &s.rules {
                self.fire(r, &r.code, r.exists_from, None)?;
            }
            if !s.recursive {
                continue;
            }
            loop {
                let now = lens(self);
                if now == marks {
                    break;
                }
                for r in &s.rules {
                    for d in &r.deltas {
                        let k = s.rels.iter().position(|x| *x == d.rel).unwrap_or(0);
                        if marks[k] < now[k] {
                            self.fire(r, &d.code, d.exists_from, Some((0, marks[k], now[k])))?;
                        }
                    }
                }
                marks = now;
            }
        }
        Ok(())
    }

    /// [`Db::run_only`] with each pass of a stratum spread over rayon's threads: the rules (and
    /// slices of each semi-naive variant's new rows) are joined side by side against the facts of the
    /// previous passes, then each relation takes its new facts, relations side by side. For the
    /// load-time analysis, whose passes are few and large. The facts are those of [`Db::run_only`]
    /// (a least fixpoint); their row order depends only on the passes, never on the threads.
    pub fn run_only_parallel(
        &mut self,
        plan: &Plan,
        phase: Phase,
        select: &[bool],
    ) -> Result<(), EngineError> {
        self.derived = 0;
        for s in selected(plan, phase, select) {
            let lens = |db: &Db| -> SmallVec<[u32; 4]> {
                s.rels.iter().map(|r| db.rels[r.0 as usize].len).collect()
            };
            let mut marks = lens(self);
            // A rule whose first step scans a relation is split among its rows.
            let mut whole = Vec::new();
            for (rule, r) in s.rules.iter().enumerate() {
                match r.code.first() {
                    Some(Instr::Scan {
                        rel,
                        positive: true,
                        ..
                    }) => Task::split(rule, None, 0, self.rels[*rel as usize].len, &mut whole),
                    _ => whole.push(Task {
                        rule,
                        variant: None,
                        rows: None,
                    }),
                }
            }
            self.run_pass(s, &whole)?;
            if !s.recursive {
                continue;
            }
            loop {
                let now = lens(self);
                if now == marks {
                    break;
                }
                let mut tasks = Vec::new();
                for (rule, r) in s.rules.iter().enumerate() {
                    for (variant, d) in r.deltas.iter().enumerate() {
                        let k = s.rels.iter().position(|x| *x == d.rel).unwrap_or(0);
                        Task::split(rule, Some(variant), marks[k], now[k], &mut tasks);
                    }
                }
                self.run_pass(s, &tasks)?;
                marks = now;
            }
        }
        Ok(())
    }

    /// One parallel pass of stratum `s` (see [`Db::run_only_parallel`]). A join that needs a term not
    /// yet made (the workers share the term store read-only) is evaluated again by the evaluator
    /// itself once the others' facts are in.
    fn run_pass(&mut self, s: &Stratum, tasks: &[Task]) -> Result<(), EngineError> {
        let (rels, terms, limits) = (&self.rels, &self.terms, self.limits);
        let joined: Vec<Result<Option<Found>, EngineError>> = tasks
            .par_iter()
            .map(|t| {
                let r = &s.rules[t.rule];
                let (code, exists_from, delta) = t.code(r);
                let mut binds = vec![UNBOUND; r.num_vars];
                let mut pending = Vec::new();
                let mut sc = Scratch {
                    binds: &mut binds,
                    pending: &mut pending,
                    hits: 0,
                    terms,
                    max_depth: limits.max_depth,
                    deadline: limits.deadline,
                    rows_visited: 0,
                };
                match join(rels, &r.head.args, (code, exists_from), 0, delta, &mut sc) {
                    Ok(_) => {
                        let hits = sc.hits;
                        if limits.deadline.is_some() {
                            sc.check_deadline()?;
                        }
                        // Most solutions repeat known facts: they are dropped here, side by side,
                        // while the relation is read-only.
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
                    Err(Stop::NewTerm) => Ok(None),
                    Err(Stop::Engine(e)) => Err(e),
                }
            })
            .collect();
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
        let room = self.limits.max_facts.saturating_sub(self.derived);
        let terms = &self.terms;
        let mut targets: Vec<(&mut RelStore, &[(u32, usize)])> = Vec::new();
        let mut rest = &found[..];
        for (i, rel) in self.rels.iter_mut().enumerate() {
            let n = rest.iter().take_while(|x| x.0 as usize == i).count();
            if n > 0 {
                targets.push((rel, &rest[..n]));
                rest = &rest[n..];
            }
        }
        let added: usize = targets
            .into_par_iter()
            .map(|(rel, from)| {
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
            })
            .sum();
        // Then every index of every relation that grew takes the new rows, side by side.
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
        indexes.into_par_iter().for_each(|(ix, rows, a, new)| {
            for r in new {
                ix.add(rows, a, r, terms);
            }
        });
        self.derived += added;
        if self.derived > self.limits.max_facts {
            return Err(EngineError::Runaway(format!(
                "more than {} facts derived in one evaluation",
                self.limits.max_facts
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
        let mut sc = Scratch {
            binds: &mut self.binds,
            pending: &mut self.pending,
            hits: 0,
            terms: &mut self.terms,
            max_depth: self.limits.max_depth,
            deadline: self.limits.deadline,
            rows_visited: 0,
        };
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

    /// Every answer of the rule's static prefix, when there are few enough to keep.
    fn prefix_answers(&mut self, r: &CompiledRule) -> Result<Prefix, EngineError> {
        let pats: Vec<Pat> = r.prefix_vars.iter().map(|&v| Pat::Var(v)).collect();
        let n = r.static_prefix;
        let mut sc = Scratch {
            binds: &mut self.binds,
            pending: &mut self.pending,
            hits: 0,
            terms: &mut self.terms,
            max_depth: self.limits.max_depth,
            deadline: self.limits.deadline,
            rows_visited: 0,
        };
        join(
            &self.rels,
            &pats,
            (&r.code[..n], n),
            0,
            (usize::MAX, 0, 0),
            &mut sc,
        )?;
        let count = sc.hits;
        let rows = std::mem::take(&mut self.pending);
        Ok(if rows.len() <= MAX_PREFIX_TERMS {
            Prefix::Rows(count, rows.into_boxed_slice())
        } else {
            Prefix::TooMany
        })
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
        let mut sc = Scratch {
            binds: &mut self.binds,
            pending: &mut self.pending,
            hits: 0,
            terms: &mut self.terms,
            max_depth: self.limits.max_depth,
            deadline: self.limits.deadline,
            rows_visited: 0,
        };
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
        let rel = &mut self.rels[r.head.rel.0 as usize];
        let terms = &self.terms;
        let mut added = 0;
        if a == 0 {
            if hits > 0 {
                added += usize::from(rel.insert(&[], terms));
            }
        } else {
            // One join can yield millions of heads; the limit is checked as they go in.
            let room = self.limits.max_facts.saturating_sub(self.derived);
            for fact in self.pending.chunks_exact(a) {
                added += usize::from(rel.insert(fact, terms));
                if added > room {
                    break;
                }
            }
        }
        self.derived += added;
        if self.derived > self.limits.max_facts {
            return Err(EngineError::Runaway(format!(
                "more than {} facts derived in one evaluation",
                self.limits.max_facts
            )));
        }
        Ok(())
    }
}

/// How a term is matched at one place of a compiled rule. Whether each variable is already bound there
/// is known when the rule is compiled (the body order is fixed), so matching never asks and never
/// has to undo a binding: a variable bound here is simply overwritten by the next row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Binds the variable.
    Bind(u32),
    /// Equals the (bound) variable.
    Var(u32),
    /// Equals the term.
    Const(TermId),
    /// A function term with this symbol and arguments matching these, in order.
    Func(Sym, Box<[Match]>),
}

/// Where one key column's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A bound variable.
    Var(u32),
    /// A ground term.
    Const(TermId),
    /// A function term over bound variables (looked up in the term store; when absent, nothing matches).
    Pat(Pat),
}

/// One step of a compiled rule body (see [`compile`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// For every row of `rel` whose key columns (those of `index`) equal `key`, match `cols`; when
    /// `positive` is false, succeeds once when no row matches (negation as failure).
    Scan {
        /// The relation.
        rel: u32,
        /// The index serving the key (none: every row).
        index: Option<usize>,
        /// The key values, in the index's column order.
        key: Box<[Key]>,
        /// The other columns and how they match.
        cols: Box<[(usize, Match)]>,
        /// A scan (true) or a negation (false).
        positive: bool,
    },
    /// `distinct` of two bound patterns.
    Distinct(Pat, Pat),
    /// The bound pattern's term matches the other side.
    Same(Pat, Match),
    /// `less` (strict) or `leq` of two bound patterns.
    Less(Pat, Pat, bool),
    /// Arithmetic on two bound patterns, the result matched.
    Arith(Arith, Pat, Pat, Match),
}

/// The matcher of a pattern given what is bound; marks what it binds.
fn matcher(p: &Pat, bound: &mut [bool]) -> Match {
    match p {
        Pat::Var(v) if bound[*v as usize] => Match::Var(*v),
        Pat::Var(v) => {
            bound[*v as usize] = true;
            Match::Bind(*v)
        }
        Pat::Term(t) => Match::Const(*t),
        Pat::Func(s, args) => Match::Func(*s, args.iter().map(|a| matcher(a, bound)).collect()),
    }
}

fn key_of(p: &Pat) -> Key {
    match p {
        Pat::Var(v) => Key::Var(*v),
        Pat::Term(t) => Key::Const(*t),
        Pat::Func(..) => Key::Pat(p.clone()),
    }
}

/// Compiles planned steps into the form [`Db::run`] executes, deciding statically where each variable
/// is bound (following the same rules as the planner: a scan binds its variables, a negation binds
/// nothing after it, `same` binds its free side, arithmetic its result).
pub fn compile(steps: &[Step], num_vars: usize) -> Vec<Instr> {
    let mut bound = vec![false; num_vars];
    let mut out = Vec::with_capacity(steps.len());
    for st in steps {
        out.push(match st {
            Step::Scan { atom, key, index } | Step::Absent { atom, key, index } => {
                let positive = matches!(st, Step::Scan { .. });
                let mut local = bound.clone();
                let by_index = index.is_some();
                let keyv: Box<[Key]> = if by_index {
                    key.iter()
                        .map(|s| match s.key_pattern(&atom.args) {
                            Ok(p) => key_of(p),
                            Err(functor) => Key::Const(functor),
                        })
                        .collect()
                } else {
                    Box::new([])
                };
                // A column keyed whole is not compared again; one keyed by parts is matched in full.
                let cols: Box<[(usize, Match)]> = (0..atom.args.len())
                    .filter(|&c| !by_index || !key.contains(&Slot::column(c)))
                    .map(|c| (c, matcher(&atom.args[c], &mut local)))
                    .collect();
                if positive {
                    bound = local;
                }
                Instr::Scan {
                    rel: atom.rel.0,
                    index: *index,
                    key: keyv,
                    cols,
                    positive,
                }
            }
            Step::Cmp(Cmp::Distinct, x, y) => Instr::Distinct(x.clone(), y.clone()),
            Step::Cmp(c @ (Cmp::Less | Cmp::Leq), x, y) => {
                Instr::Less(x.clone(), y.clone(), *c == Cmp::Less)
            }
            Step::Cmp(Cmp::Same, x, y) => {
                let (x, y) = if x.is_bound(&bound) { (x, y) } else { (y, x) };
                let m = matcher(y, &mut bound);
                Instr::Same(x.clone(), m)
            }
            Step::Arith(op, x, y, z) => {
                let m = matcher(z, &mut bound);
                Instr::Arith(*op, x.clone(), y.clone(), m)
            }
        });
    }
    out
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

/// Where a join's terms come from: the evaluator's own store, which makes the terms a rule builds, or
/// a store the workers of a parallel pass share, which can only find them.
trait Terms {
    /// The store, to read.
    fn store(&self) -> &TermStore;
    /// The function term `sym(args)`, made when new; `None` when this source makes no terms.
    fn func(&mut self, sym: Sym, args: &[TermId]) -> Option<TermId>;
    /// The integer constant `n`, made when new; `None` when this source makes no terms.
    fn int(&mut self, n: i64) -> Option<TermId>;
}

impl Terms for &mut TermStore {
    #[inline]
    fn store(&self) -> &TermStore {
        self
    }
    fn func(&mut self, sym: Sym, args: &[TermId]) -> Option<TermId> {
        Some(TermStore::func(self, sym, args))
    }
    fn int(&mut self, n: i64) -> Option<TermId> {
        Some(TermStore::int(self, n))
    }
}

impl Terms for &TermStore {
    #[inline]
    fn store(&self) -> &TermStore {
        self
    }
    fn func(&mut self, sym: Sym, args: &[TermId]) -> Option<TermId> {
        self.find_func(sym, args)
    }
    fn int(&mut self, _: i64) -> Option<TermId> {
        None
    }
}

/// Why a join stopped early.
enum Stop {
    /// An error of the evaluation.
    Engine(EngineError),
    /// It needed a term its store cannot make (a worker of a parallel pass): the rule is evaluated
    /// again afterwards by the evaluator itself.
    NewTerm,
}

impl From<EngineError> for Stop {
    fn from(e: EngineError) -> Stop {
        Stop::Engine(e)
    }
}

impl From<Stop> for EngineError {
    fn from(s: Stop) -> EngineError {
        match s {
            Stop::Engine(e) => e,
            // The evaluator's own store makes every term, so its joins never stop for one.
            Stop::NewTerm => EngineError::Invalid("a term could not be made".into()),
        }
    }
}

struct Scratch<'a, T: Terms> {
    binds: &'a mut Vec<TermId>,
    pending: &'a mut Vec<TermId>,
    hits: usize,
    terms: T,
    max_depth: u32,
    deadline: Option<std::time::Instant>,
    /// Rows looked at, so that the deadline is read only once every `DEADLINE_STRIDE` rows.
    rows_visited: u32,
}

/// How many joined rows pass between two looks at the clock.
const DEADLINE_STRIDE: u32 = 1 << 14;

impl<T: Terms> Scratch<'_, T> {
    fn check_deadline(&self) -> Result<(), EngineError> {
        match self.deadline {
            Some(d) if std::time::Instant::now() > d => Err(EngineError::Runaway(
                "the evaluation ran past its time limit".into(),
            )),
            _ => Ok(()),
        }
    }

    #[inline]
    fn matches(&mut self, m: &Match, t: TermId) -> bool {
        match m {
            Match::Bind(v) => {
                self.binds[*v as usize] = t;
                true
            }
            Match::Var(v) => self.binds[*v as usize] == t,
            Match::Const(c) => *c == t,
            Match::Func(s, subs) => {
                let terms = self.terms.store();
                if terms.is_const(t) || terms.sym(t) != *s {
                    return false;
                }
                if terms.args(t).len() != subs.len() {
                    return false;
                }
                for (k, sub) in subs.iter().enumerate() {
                    let a = self.terms.store().args(t)[k];
                    if !self.matches(sub, a) {
                        return false;
                    }
                }
                true
            }
        }
    }

    /// The term a bound pattern denotes, if it exists in the store (if not, no fact can contain it).
    fn find(&self, p: &Pat) -> Option<TermId> {
        match p {
            Pat::Var(v) => Some(self.binds[*v as usize]),
            Pat::Term(t) => Some(*t),
            Pat::Func(s, args) => {
                let mut ids: SmallVec<[TermId; 8]> = SmallVec::new();
                for a in args {
                    ids.push(self.find(a)?);
                }
                self.terms.store().find_func(*s, &ids)
            }
        }
    }

    /// The term a bound pattern denotes, created when new.
    fn make(&mut self, p: &Pat) -> Result<TermId, Stop> {
        Ok(match p {
            Pat::Var(v) => self.binds[*v as usize],
            Pat::Term(t) => *t,
            Pat::Func(s, args) => {
                let mut ids: SmallVec<[TermId; 8]> = SmallVec::new();
                for a in args {
                    ids.push(self.make(a)?);
                }
                if let Some(t) = self.terms.store().find_func(*s, &ids) {
                    return Ok(t);
                }
                let t = self.terms.func(*s, &ids).ok_or(Stop::NewTerm)?;
                let terms = self.terms.store();
                if terms.depth(t) > self.max_depth {
                    return Err(EngineError::Runaway(format!(
                        "a derived term is nested more than {} deep: {}",
                        self.max_depth,
                        terms.kif(t)
                    ))
                    .into());
                }
                t
            }
        })
    }
}

/// Evaluates instructions `i..` of a rule body under the current bindings, pushing every head it
/// derives; true when at least one solution was found. From instruction `body.1` on the steps only
/// check that something exists, so they stop at their first solution.
fn join<T: Terms>(
    rels: &[RelStore],
    head: &[Pat],
    body: (&[Instr], usize),
    i: usize,
    delta: (usize, u32, u32),
    sc: &mut Scratch<T>,
) -> Result<bool, Stop> {
    let (code, exists_from) = body;
    let Some(instr) = code.get(i) else {
        for a in head {
            let t = sc.make(a)?;
            sc.pending.push(t);
        }
        sc.hits += 1;
        return Ok(true);
    };
    let once = i >= exists_from;
    match instr {
        Instr::Scan {
            rel,
            index,
            key,
            cols,
            positive,
        } => {
            let positive = *positive;
            let rel = &rels[*rel as usize];
            let (lo, hi) = if delta.0 == i {
                (delta.1, delta.2)
            } else {
                (0, rel.len)
            };
            // `matched`: a row matched (for a negation, the end of the search); `solved`: a solution
            // was found below this step.
            let mut matched = false;
            let mut solved = false;
            let mut visit = |row: u32, sc: &mut Scratch<T>| -> Result<bool, Stop> {
                sc.rows_visited = sc.rows_visited.wrapping_add(1);
                if sc.rows_visited.is_multiple_of(DEADLINE_STRIDE) {
                    sc.check_deadline()?;
                }
                let vals = rel.row(row as usize);
                if cols.iter().all(|(c, m)| sc.matches(m, vals[*c])) {
                    if positive {
                        solved |= join(rels, head, body, i + 1, delta, sc)?;
                    } else {
                        matched = true;
                    }
                }
                Ok(if positive { once && solved } else { matched })
            };
            match index {
                None => {
                    for row in lo..hi {
                        if visit(row, sc)? {
                            break;
                        }
                    }
                }
                Some(ix) => {
                    let mut keyv: SmallVec<[TermId; 8]> = SmallVec::new();
                    for k in key.iter() {
                        let t = match k {
                            Key::Var(v) => sc.binds[*v as usize],
                            Key::Const(t) => *t,
                            Key::Pat(p) => match sc.find(p) {
                                Some(t) => t,
                                None if positive => return Ok(false),
                                None => return join(rels, head, body, i + 1, delta, sc),
                            },
                        };
                        keyv.push(t);
                    }
                    let next = &rel.indexes[*ix].next;
                    let mut x = rel.lookup(*ix, &keyv, sc.terms.store());
                    while x != NONE {
                        if x < lo {
                            break;
                        }
                        if x < hi && visit(x, sc)? {
                            break;
                        }
                        x = next[x as usize];
                    }
                }
            }
            if !positive && !matched {
                solved = join(rels, head, body, i + 1, delta, sc)?;
            }
            Ok(solved)
        }
        Instr::Distinct(x, y) => {
            if sc.make(x)? != sc.make(y)? {
                return join(rels, head, body, i + 1, delta, sc);
            }
            Ok(false)
        }
        Instr::Same(x, y) => {
            let t = sc.make(x)?;
            if sc.matches(y, t) {
                return join(rels, head, body, i + 1, delta, sc);
            }
            Ok(false)
        }
        Instr::Less(x, y, strict) => {
            let a = sc.make(x)?;
            let b = sc.make(y)?;
            let terms = sc.terms.store();
            let ok = match (terms.as_int(a), terms.as_int(b)) {
                (Some(a), Some(b)) => {
                    if *strict {
                        a < b
                    } else {
                        a <= b
                    }
                }
                _ => false,
            };
            if ok {
                return join(rels, head, body, i + 1, delta, sc);
            }
            Ok(false)
        }
        Instr::Arith(op, x, y, z) => {
            let a = sc.make(x)?;
            let b = sc.make(y)?;
            let terms = sc.terms.store();
            let (Some(a), Some(b)) = (terms.as_int(a), terms.as_int(b)) else {
                return Ok(false);
            };
            let v = match op {
                Arith::Plus => a.checked_add(b),
                Arith::Minus => a.checked_sub(b),
                Arith::Times => a.checked_mul(b),
            };
            let Some(v) = v else { return Ok(false) };
            let t = sc.terms.int(v).ok_or(Stop::NewTerm)?;
            if sc.matches(z, t) {
                return join(rels, head, body, i + 1, delta, sc);
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::{plan, PlanDisplay};
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
            plan.contains("item(?n, (f ?k ?z))@[1.0]"),
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
            plan.contains("item((f ?x))@[0.f]"),
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
        assert!(plan.contains("edge((p ?x ?c), (p ?y ?d))@[0.0]"), "{plan}");
        assert_eq!(reach, ["1", "2", "3"]);
        let (_, dead) = run(src, "dead");
        assert_eq!(dead, ["1", "2"]);
    }
}
