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

use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hashbrown::HashMap;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::analysis::Analysis;
use super::atoms::Instances;
use super::budget::{check_grounding, Budget, Limit, NetworkError};
use crate::engine::eval::{Db, RelStore};
use crate::engine::ir::{Arith, Cmp, IrAtom, Lit, Pat, Program, RelId, Rule};
use crate::engine::plan::{key_slots, Slot};
use crate::engine::terms::{TermId, TermStore};
use crate::engine::EngineError;
use crate::syntax::ast::Sym;

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
    let to_ground: Vec<usize> = (0..prog.rules.len())
        .filter(|&i| {
            let h = prog.rules[i].head.rel;
            a.dynamic[h.0 as usize] && h != true_ && h != does
        })
        .collect();
    let (phase_of, level) = grounding_phases(prog, &to_ground, &a.late)?;
    let mut found: Vec<Instances> = vec![Vec::new(); to_ground.len()];
    for phase in 0..=phase_of.iter().copied().max().unwrap_or(0) {
        let which: Vec<usize> = (0..to_ground.len())
            .filter(|&k| phase_of[k] == phase)
            .collect();
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
            &atoms.base,
            budget,
            started,
        )?;
        for (k, buf) in which.into_iter().zip(out) {
            found[k] = buf;
        }
        // The late relations complete now: their rows, then their instances' heads as atoms (row
        // numbers first, numbered across relations once every relation's rows are known).
        let completed: Vec<usize> = (0..nrel)
            .filter(|&r| a.late[r] && level[r] == phase)
            .collect();
        complete_late(prog, &to_ground, &completed, &mut found, &mut a.relaxed);
        for &r in &completed {
            let base = atoms.total as u32;
            for (k, buf) in found.iter_mut().enumerate() {
                if prog.rules[to_ground[k]].head.rel.0 as usize == r {
                    let mut at = 0;
                    while at < buf.len() {
                        buf[at] += base;
                        at += 2 + buf[at + 1] as usize;
                    }
                }
            }
            atoms.number(r, a.relaxed.rel(RelId(r as u32)).len())?;
        }
    }
    Ok(Instantiated {
        found,
        atoms,
        to_ground,
    })
}

/// Which rows step `k` of a join may match (see [`Grounder::candidates`]).
enum Candidates {
    /// Every row: nothing is bound to look up by.
    All,
    /// These rows.
    Rows(Rc<[u32]>),
    /// None: no row has the bound values.
    None,
}

/// `rel`'s rows of `db` by their values at `slots` (rows without a value at a slot left out).
fn row_index(db: &Db, rel: RelId, slots: &[Slot], terms: &TermStore) -> RowIndex {
    let rel = db.rel(rel);
    let mut m: HashMap<SmallVec<[TermId; 4]>, Vec<u32>> = HashMap::new();
    'rows: for i in 0..rel.len() {
        let row = rel.row(i);
        let mut k: SmallVec<[TermId; 4]> = SmallVec::new();
        for s in slots.iter() {
            match s.value(terms, row) {
                Some(t) => k.push(t),
                None => continue 'rows,
            }
        }
        m.entry(k).or_default().push(i as u32);
    }
    m.into_iter().map(|(k, v)| (k, Rc::from(v))).collect()
}

/// Where each relation's facts come from while grounding.
#[derive(Clone, Copy)]
struct Sources<'a> {
    relaxed: &'a Db,
    exact: &'a Db,
    dynamic: &'a [bool],
    /// The demand relations of the rewrite: what is asked, read from the relaxed fixpoint as
    /// constant filters (an instance nobody can ask for is never needed).
    demand: &'a [bool],
    /// The relations left out of the relaxed fixpoint (see
    /// [`late_relations`](super::analysis::late_relations)): the heads of their rules' instances are
    /// recorded as the values of the head's variables.
    late: &'a [bool],
    /// The relations read only for their values (see
    /// [`is_domain_relation`](crate::engine::decompose::is_domain_relation)): looked up like the
    /// others, left out of the instances.
    domain: &'a [bool],
    /// Per relation, the demand relation whose rows its rows are, in the same order (see
    /// [`demand_shaped`](super::analysis::demand_shaped)): an instance's head is then the row of
    /// its demand.
    copy_of: &'a [Option<RelId>],
    /// Per load-time relation of one column, its facts as a bitset by term number: the commonest
    /// check (`coordinate(?x)` with `?x` known) without hashing.
    unary: &'a [Option<Vec<u64>>],
}

impl<'a> Sources<'a> {
    fn db(&self, r: RelId) -> &'a Db {
        if self.dynamic[r.0 as usize] || self.demand[r.0 as usize] {
            self.relaxed
        } else {
            self.exact
        }
    }
}

/// The rows of a relation by the values of some of its columns.
type RowIndex = HashMap<SmallVec<[TermId; 4]>, Rc<[u32]>>;

/// One way of looking a relation's rows up.
struct Lookup {
    slots: Vec<Slot>,
    rows: Option<RowIndex>,
}

/// One grounding worker: instantiates rules over the relaxed fixpoint and the load-time facts. Workers
/// share nothing mutable but the instance count, so several ground rules side by side.
pub(super) struct Grounder<'a> {
    src: Sources<'a>,
    terms: TermStore,
    /// Which lookup serves (relation, key slots): a number into `lookups`.
    index_of: HashMap<(u32, Vec<Slot>), u32>,
    /// The lookups, each built when first used.
    lookups: Vec<Lookup>,
    /// For each step of the rule being grounded, its lookup (`u32::MAX` not known yet): what is bound
    /// at a step does not change from one instance to the next.
    step_lookup: Vec<u32>,
    /// For each step of the rule being grounded, whether its literal is ground when reached (the
    /// join order fixes what each step has bound).
    step_ground: Vec<bool>,
    /// Per relation, the number of its first relaxed row among all relations' rows.
    row_base: &'a [u32],
    /// The instances of the rule being grounded, in the order found.
    out: Instances,
    /// The variables of the head of the rule being grounded, in order of first occurrence.
    head_vars: Vec<u32>,
    /// The step (into the join order) reading the demand whose row is the head's, when the head's
    /// relation copies a demand's rows (`usize::MAX` otherwise), and the row it is at.
    head_step: usize,
    head_row: u32,
    /// Instances found by this worker since it last added them to `shared_instances`.
    instances: usize,
    /// Instances found by all workers (added in batches).
    shared_instances: &'a AtomicUsize,
    /// Candidate rows tried, for budget checks between instances.
    visits: u64,
    budget: Budget,
    started: Instant,
}

/// How the relaxed rows of the state-dependent relations are numbered as atoms: relation `r`'s are
/// `base[r]..base[r] + len[r]`, relations numbered one after the other (the late ones when complete).
pub(super) struct Numbering {
    pub(super) base: Vec<u32>,
    pub(super) len: Vec<u32>,
    pub(super) total: u64,
}

impl Numbering {
    /// Numbers relation `r`'s `len` rows next.
    fn number(&mut self, r: usize, len: usize) -> Result<(), NetworkError> {
        self.total += len as u64;
        if self.total >= 1 << 31 {
            return Err(NetworkError::over(
                Limit::Size,
                "more than 2^31 facts can hold in some state".into(),
            ));
        }
        self.base[r] = (self.total - len as u64) as u32;
        self.len[r] = len as u32;
        Ok(())
    }
}

/// Grounds rules `which` of `p` on as many workers as rayon has threads, each taking the next rule not
/// yet taken (the rules differ in cost by orders of magnitude, so a fixed split would leave a worker
/// idle). Returns each rule's instances, in the order of `which`.
fn ground_rules(
    p: &Program,
    which: &[usize],
    src: Sources,
    terms: &TermStore,
    row_base: &[u32],
    budget: Budget,
    started: Instant,
) -> Result<Vec<Instances>, NetworkError> {
    let next = AtomicUsize::new(0);
    let shared_instances = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, which.len().max(1));
    // Per worker, the rules it grounded (by position in `which`) with their instances.
    type Done = Vec<(usize, Instances)>;
    let found: Vec<Result<Done, NetworkError>> = (0..workers)
        .into_par_iter()
        .map(|_| {
            let mut w = Grounder {
                src,
                terms: terms.clone(),
                index_of: HashMap::new(),
                lookups: Vec::new(),
                step_lookup: Vec::new(),
                step_ground: Vec::new(),
                row_base,
                out: Vec::new(),
                head_vars: Vec::new(),
                head_step: usize::MAX,
                head_row: 0,
                instances: 0,
                shared_instances: &shared_instances,
                visits: 0,
                budget,
                started,
            };
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&ri) = which.get(k) else {
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
    completed: &[usize],
    found: &mut [Instances],
    db: &mut Db,
) {
    let flat = |r: usize| {
        to_ground.iter().all(|&ri| {
            let h = &p.rules[ri].head;
            h.rel.0 as usize != r || h.args.iter().all(|a| !matches!(a, Pat::Func(..)))
        })
    };
    // One job per relation: its store and its rules' instance buffers.
    let mut job_of: HashMap<usize, usize> = HashMap::new();
    let mut jobs: Vec<(&mut RelStore, Vec<(&Rule, &mut Instances)>)> = Vec::new();
    let Db { rels, terms, .. } = db;
    for (r, store) in rels.iter_mut().enumerate() {
        if completed.contains(&r) && flat(r) {
            job_of.insert(r, jobs.len());
            jobs.push((store, Vec::new()));
        }
    }
    let mut rest: Vec<(usize, &Rule, &mut Instances)> = Vec::new();
    for (k, buf) in found.iter_mut().enumerate() {
        let rule = &p.rules[to_ground[k]];
        let r = rule.head.rel.0 as usize;
        match job_of.get(&r) {
            Some(&j) => jobs[j].1.push((rule, buf)),
            None if completed.contains(&r) => rest.push((r, rule, buf)),
            None => {}
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

/// Whether a pattern's variables are all bound.
fn bound(p: &Pat, b: &[Option<TermId>]) -> bool {
    let mut ok = true;
    p.each_var(&mut |v| ok &= b[v as usize].is_some());
    ok
}

impl Grounder<'_> {
    /// Whether the instances of all workers and the clock fit the budget.
    fn check_budget(&self) -> Result<(), NetworkError> {
        check_grounding(
            self.shared_instances.load(Ordering::Relaxed),
            self.budget,
            self.started,
        )
    }

    /// The body in a join order: filters as soon as their variables are bound, then the positive atom
    /// with the most bound arguments.
    fn order(&self, rule: &Rule) -> Result<Vec<usize>, NetworkError> {
        let nv = rule.var_names.len();
        let mut b: Vec<Option<TermId>> = vec![None; nv];
        let dummy = TermId(0);
        let mut left: Vec<usize> = (0..rule.body.len()).collect();
        let mut out = Vec::new();
        while !left.is_empty() {
            let mut pick = None;
            for (k, &i) in left.iter().enumerate() {
                let ready = match &rule.body[i] {
                    Lit::Neg(a) => a.args.iter().all(|p| bound(p, &b)),
                    Lit::Cmp(Cmp::Same, x, y) => bound(x, &b) || bound(y, &b),
                    Lit::Cmp(_, x, y) => bound(x, &b) && bound(y, &b),
                    Lit::Arith(_, x, y, _) => bound(x, &b) && bound(y, &b),
                    Lit::Pos(_) => false,
                };
                if ready {
                    pick = Some(k);
                    break;
                }
            }
            if pick.is_none() {
                // The demand for the head first: the instances asked for are the ones to make.
                pick = left.iter().position(
                    |&i| matches!(&rule.body[i], Lit::Pos(a) if self.src.demand[a.rel.0 as usize]),
                );
            }
            if pick.is_none() {
                let mut best: Option<(usize, usize, usize)> = None;
                for (k, &i) in left.iter().enumerate() {
                    if let Lit::Pos(a) = &rule.body[i] {
                        let nb = a.args.iter().filter(|p| bound(p, &b)).count();
                        let size = self.src.db(a.rel).rel(a.rel).len();
                        let key = (nb, usize::MAX - size);
                        if best.is_none_or(|(_, x, y)| key > (x, y)) {
                            best = Some((k, key.0, key.1));
                        }
                    }
                }
                pick = best.map(|x| x.0);
            }
            let Some(k) = pick else {
                return Err(EngineError::Invalid("a rule has an unbound variable".into()).into());
            };
            let i = left.remove(k);
            let mut mark = |p: &Pat| p.each_var(&mut |v| b[v as usize] = Some(dummy));
            match &rule.body[i] {
                Lit::Pos(a) => a.args.iter().for_each(&mut mark),
                Lit::Cmp(_, x, y) => {
                    mark(x);
                    mark(y)
                }
                Lit::Arith(_, _, _, z) => mark(z),
                Lit::Neg(_) => {}
            }
            out.push(i);
        }
        Ok(out)
    }

    /// Grounds `rule`, its instances left in `out`.
    fn ground_rule(&mut self, rule: &Rule) -> Result<(), NetworkError> {
        let order = self.order(rule)?;
        self.head_vars = head_vars(rule);
        let demand = self.src.copy_of[rule.head.rel.0 as usize];
        self.head_step = order
            .iter()
            .position(|&i| match &rule.body[i] {
                Lit::Pos(a) => Some(a.rel) == demand && a.args == rule.head.args,
                _ => false,
            })
            .unwrap_or(usize::MAX);
        self.step_lookup.clear();
        self.step_lookup.resize(order.len(), u32::MAX);
        let mut bound_here = vec![false; rule.var_names.len()];
        self.step_ground.clear();
        for &i in &order {
            let l = &rule.body[i];
            let ground = match l {
                Lit::Pos(a) | Lit::Neg(a) => a.args.iter().all(|p| p.is_bound(&bound_here)),
                _ => false,
            };
            self.step_ground.push(ground);
            l.bind_vars(&mut bound_here);
        }
        let mut b: Vec<Option<TermId>> = vec![None; rule.var_names.len()];
        let mut body: SmallVec<[u32; 4]> = SmallVec::new();
        self.step(rule, &order, 0, &mut b, &mut body)
    }

    /// Grounds the rest of `rule`'s body from step `k` of the join `order`, `b` holding the values
    /// bound so far and `body` the atom literals recorded so far; each complete match is emitted.
    fn step(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        if k == order.len() {
            return self.emit(rule, b, body);
        }
        match &rule.body[order[k]] {
            Lit::Pos(a) if self.step_ground[k] => self.step_ground_atom(rule, order, k, a, b, body),
            Lit::Pos(a) => self.step_join(rule, order, k, a, b, body),
            Lit::Neg(a) => self.step_negation(rule, order, k, a, b, body),
            Lit::Cmp(c, x, y) => self.step_compare(rule, order, k, (*c, x, y), b, body),
            Lit::Arith(op, x, y, z) => self.step_arith(rule, order, k, (*op, x, y, z), b, body),
        }
    }

    /// Step `k`, a positive atom `a` that is ground when reached: one lookup, nothing to bind.
    fn step_ground_atom(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        a: &IrAtom,
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        let dynamic = self.src.dynamic[a.rel.0 as usize];
        let recorded = dynamic && !self.src.domain[a.rel.0 as usize];
        // A one-column load-time relation (`coordinate(?x)`): one bit.
        if let (Some(bits), [p]) = (&self.src.unary[a.rel.0 as usize], &a.args[..]) {
            if k != self.head_step {
                let held = self.make(p, b).is_some_and(|t| {
                    let i = t.0 as usize;
                    bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
                });
                return match held {
                    true => self.step(rule, order, k + 1, b, body),
                    false => Ok(()),
                };
            }
        }
        let Some(fact) = self.make_all(a, b) else {
            return Ok(());
        };
        if dynamic {
            let Some(at) = self.atom(a.rel, &fact) else {
                return Ok(());
            };
            if !recorded {
                return self.step(rule, order, k + 1, b, body);
            }
            body.push(at << 1);
            self.step(rule, order, k + 1, b, body)?;
            body.pop();
            return Ok(());
        }
        if k == self.head_step {
            let Some(i) = self.src.db(a.rel).rel(a.rel).position(&fact) else {
                return Ok(());
            };
            self.head_row = i as u32;
        } else if !self.holds(a.rel, &fact) {
            return Ok(());
        }
        self.step(rule, order, k + 1, b, body)
    }

    /// Step `k`, a positive atom `a` with variables still to bind: every row that matches, looked up
    /// by the values already bound.
    fn step_join(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        a: &IrAtom,
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        let recorded = self.src.dynamic[a.rel.0 as usize] && !self.src.domain[a.rel.0 as usize];
        let db = self.src.db(a.rel);
        let rows = match self.candidates(k, a, b) {
            Candidates::None => return Ok(()),
            Candidates::All => None,
            Candidates::Rows(rows) => Some(rows),
        };
        let n = rows.as_ref().map_or(db.rel(a.rel).len(), |r| r.len());
        let saved: SmallVec<[Option<TermId>; 16]> = SmallVec::from_slice(b);
        for j in 0..n {
            let i = rows.as_ref().map_or(j, |r| r[j] as usize);
            self.visits += 1;
            if self.visits.is_multiple_of(65536) {
                self.check_budget()?;
            }
            let row = db.rel(a.rel).row(i);
            if a.args
                .iter()
                .zip(row.iter())
                .all(|(p, t)| self.matches(p, *t, b))
            {
                if recorded {
                    let at = self.row_id(a.rel, i);
                    body.push(at << 1);
                    self.step(rule, order, k + 1, b, body)?;
                    body.pop();
                } else {
                    if k == self.head_step {
                        self.head_row = i as u32;
                    }
                    self.step(rule, order, k + 1, b, body)?;
                }
            }
            b.copy_from_slice(&saved);
        }
        Ok(())
    }

    /// The rows of `a`'s relation that step `k` may match: those with every bound value, a whole
    /// column or a part of a column's term (`legal2(?p, (move ?piece ?u ?v ?x ?y))` with the squares
    /// known). Which lookup serves step `k` is resolved at its first instance, as what is bound at a
    /// step does not change from one instance to the next.
    fn candidates(&mut self, k: usize, a: &IrAtom, b: &[Option<TermId>]) -> Candidates {
        let known = self.step_lookup[k];
        let lookup = if known != u32::MAX {
            known
        } else {
            let bound: Vec<bool> = b.iter().map(Option::is_some).collect();
            let slots = key_slots(a, &bound);
            let next = self.lookups.len() as u32;
            let id = *self
                .index_of
                .entry((a.rel.0, slots.clone()))
                .or_insert(next);
            if id == next {
                self.lookups.push(Lookup { slots, rows: None });
            }
            self.step_lookup[k] = id;
            id
        };
        let mut key: SmallVec<[TermId; 4]> = SmallVec::new();
        for s in &self.lookups[lookup as usize].slots {
            let t = match s.key_pattern(&a.args) {
                Ok(p) => self.make(p, b),
                Err(functor) => Some(functor),
            };
            // A bound part that was never built is in no row.
            let Some(t) = t else {
                return Candidates::None;
            };
            key.push(t);
        }
        if key.is_empty() {
            return Candidates::All;
        }
        let db = self.src.db(a.rel);
        let terms = &self.terms;
        let Lookup { slots, rows } = &mut self.lookups[lookup as usize];
        let ix = rows.get_or_insert_with(|| row_index(db, a.rel, slots, terms));
        match ix.get(&key) {
            Some(r) => Candidates::Rows(r.clone()),
            None => Candidates::None,
        }
    }

    /// Step `k`, a negated atom `a` (ground when reached): decided on the spot for a load-time
    /// relation, recorded as a negative literal for a state-dependent one.
    fn step_negation(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        a: &IrAtom,
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        let Some(fact) = self.make_all(a, b) else {
            // A term that was never built is in no relation: the negation holds.
            return self.step(rule, order, k + 1, b, body);
        };
        if self.src.dynamic[a.rel.0 as usize] {
            let Some(at) = self.atom(a.rel, &fact) else {
                return self.step(rule, order, k + 1, b, body);
            };
            body.push(at << 1 | 1);
            self.step(rule, order, k + 1, b, body)?;
            body.pop();
            Ok(())
        } else if self.holds(a.rel, &fact) {
            Ok(())
        } else {
            self.step(rule, order, k + 1, b, body)
        }
    }

    /// Step `k`, the comparison `x c y`: `=` may bind one side, the others test.
    fn step_compare(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        (c, x, y): (Cmp, &Pat, &Pat),
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        let ok = match c {
            Cmp::Same => {
                let saved = b.clone();
                let (x, y) = if bound(x, b) { (x, y) } else { (y, x) };
                let ok = match self.make(x, b) {
                    Some(t) => self.matches(y, t, b),
                    None => false,
                };
                if ok {
                    self.step(rule, order, k + 1, b, body)?;
                }
                *b = saved;
                return Ok(());
            }
            Cmp::Distinct => match (self.make(x, b), self.make(y, b)) {
                (Some(a), Some(c)) => a != c,
                // A term never built differs from every built one, and two patterns that
                // cannot be built are compared structurally by the engine; be conservative.
                (Some(_), None) | (None, Some(_)) => true,
                (None, None) => false,
            },
            Cmp::Less | Cmp::Leq => {
                match (
                    self.make(x, b).and_then(|t| self.terms.as_int(t)),
                    self.make(y, b).and_then(|t| self.terms.as_int(t)),
                ) {
                    (Some(p), Some(q)) => {
                        if c == Cmp::Less {
                            p < q
                        } else {
                            p <= q
                        }
                    }
                    _ => false,
                }
            }
        };
        if ok {
            self.step(rule, order, k + 1, b, body)?;
        }
        Ok(())
    }

    /// Step `k`, the arithmetic `z = x op y`: binds or tests `z`; no match on overflow.
    fn step_arith(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        (op, x, y, z): (Arith, &Pat, &Pat, &Pat),
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        let (Some(p), Some(q)) = (
            self.make(x, b).and_then(|t| self.terms.as_int(t)),
            self.make(y, b).and_then(|t| self.terms.as_int(t)),
        ) else {
            return Ok(());
        };
        let v = match op {
            Arith::Plus => p.checked_add(q),
            Arith::Minus => p.checked_sub(q),
            Arith::Times => p.checked_mul(q),
        };
        let Some(v) = v else { return Ok(()) };
        // A result the analysis never made (its relaxation clamps arithmetic to the integers the rules
        // name; the goal scale is made besides) is in no relaxed fact, so no instance of a relation
        // the relaxed fixpoint bounds holds it. A late relation is not bounded that way: its
        // instance may be real (`terminal :- ... times(N, 40, G) & G > 200`), and matching nothing
        // would give a wrong answer. Made here, the term would exist only in this worker's copy of
        // the store (a late head holding one once crashed the compiler's goal reading), so the
        // network refuses the game instead and the Datalog evaluator plays it.
        let Some(t) = self.terms.find_int(v) else {
            if self.src.late[rule.head.rel.0 as usize] {
                return Err(NetworkError::Unsupported(format!(
                    "arithmetic computes {v}, beyond the integers the rules name and the goal \
                     scale 0 to 100, in a rule the network grounds from its instances"
                )));
            }
            return Ok(());
        };
        let saved = b.clone();
        if self.matches(z, t, b) {
            self.step(rule, order, k + 1, b, body)?;
        }
        *b = saved;
        Ok(())
    }

    /// Records the instance of `rule` that bindings `b` complete, its body's atom literals `body`.
    fn emit(
        &mut self,
        rule: &Rule,
        b: &[Option<TermId>],
        body: &SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        if self.src.late[rule.head.rel.0 as usize] {
            // The head's atom is known once its relation is complete (see `atoms_of_heads`).
            for &v in &self.head_vars {
                let Some(t) = b[v as usize] else {
                    return Ok(());
                };
                self.out.push(t.0);
            }
        } else if self.head_step != usize::MAX {
            self.out
                .push(self.row_id(rule.head.rel, self.head_row as usize));
        } else {
            let Some(fact) = self.make_all(&rule.head, b) else {
                return Ok(());
            };
            let Some(head) = self.atom(rule.head.rel, &fact) else {
                return Ok(());
            };
            self.out.push(head);
        }
        self.instances += 1;
        if self.instances == 4096 {
            self.shared_instances.fetch_add(4096, Ordering::Relaxed);
            self.instances = 0;
            self.check_budget()?;
        }
        self.out.push(body.len() as u32);
        self.out.extend_from_slice(body);
        Ok(())
    }

    /// The number of row `i` of the relaxed fixpoint's relation `rel` among all relations' rows.
    pub(super) fn row_id(&self, rel: RelId, i: usize) -> u32 {
        self.row_base[rel.0 as usize] + i as u32
    }

    /// The row number of `rel(args)` (see [`Grounder::row_id`]); `None` when the relaxed fixpoint
    /// does not have it (it is never true).
    fn atom(&self, rel: RelId, args: &[TermId]) -> Option<u32> {
        let i = self.src.relaxed.rel(rel).position(args)?;
        Some(self.row_id(rel, i))
    }

    /// Whether pattern `p` matches term `t`, binding its unbound variables in `b`.
    fn matches(&self, p: &Pat, t: TermId, b: &mut [Option<TermId>]) -> bool {
        match p {
            Pat::Var(v) => match b[*v as usize] {
                Some(x) => x == t,
                None => {
                    b[*v as usize] = Some(t);
                    true
                }
            },
            Pat::Term(x) => *x == t,
            Pat::Func(s, args) => {
                if self.terms.is_const(t) || self.terms.sym(t) != *s {
                    return false;
                }
                let targs = self.terms.args(t);
                targs.len() == args.len()
                    && args.iter().zip(targs).all(|(p, t)| self.matches(p, *t, b))
            }
        }
    }

    /// The ground term of a bound pattern, when it exists in the store (a term never built is in no
    /// relation).
    fn make(&self, p: &Pat, b: &[Option<TermId>]) -> Option<TermId> {
        ground_term(p, b, &mut |s, ids| self.terms.find_func(s, ids))
    }

    /// Whether `rel(fact)` holds, for a relation that does not depend on the state.
    fn holds(&self, rel: RelId, fact: &[TermId]) -> bool {
        match (&self.src.unary[rel.0 as usize], fact) {
            (Some(bits), [t]) => {
                let i = t.0 as usize;
                bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
            }
            _ => self.src.db(rel).rel(rel).contains(fact),
        }
    }

    /// The ground fact of atom `a` under `b`, when every term of it exists in the store.
    fn make_all(&self, a: &IrAtom, b: &[Option<TermId>]) -> Option<SmallVec<[TermId; 8]>> {
        instantiate_atom(a, b, &mut |s, ids| self.terms.find_func(s, ids))
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
    let mut level = vec![0usize; p.relations.len()];
    let mut phase = vec![0usize; which.len()];
    // Late relations are outside recursive strata, so this settles within one round per relation.
    for _ in 0..=p.relations.len() {
        let mut changed = false;
        for (k, &ri) in which.iter().enumerate() {
            let rule = &p.rules[ri];
            let after = rule
                .body
                .iter()
                .filter_map(|l| match l {
                    Lit::Pos(a) | Lit::Neg(a) if late[a.rel.0 as usize] => {
                        Some(level[a.rel.0 as usize] + 1)
                    }
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            let h = rule.head.rel.0 as usize;
            if after != phase[k] || (late[h] && level[h] < after) {
                changed = true;
                phase[k] = after;
                if late[h] {
                    level[h] = level[h].max(after);
                }
            }
        }
        if !changed {
            return Ok((phase, level));
        }
    }
    Err(NetworkError::Unsupported(
        "the rules' dependencies have no order to ground them in".into(),
    ))
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

/// The fact atom `a` makes with the values `b`, `func` making (or finding) its compound terms; `None`
/// when a term cannot be made.
fn instantiate_atom(
    a: &IrAtom,
    b: &[Option<TermId>],
    func: &mut impl FnMut(Sym, &[TermId]) -> Option<TermId>,
) -> Option<SmallVec<[TermId; 8]>> {
    let mut fact = SmallVec::new();
    for p in &a.args {
        fact.push(ground_term(p, b, func)?);
    }
    Some(fact)
}

/// The ground term of pattern `p` under bindings `b`, its function terms given by `func` (which finds
/// or makes them); `None` when a variable is unbound or `func` has no term.
fn ground_term(
    p: &Pat,
    b: &[Option<TermId>],
    func: &mut impl FnMut(Sym, &[TermId]) -> Option<TermId>,
) -> Option<TermId> {
    match p {
        Pat::Var(v) => b[*v as usize],
        Pat::Term(t) => Some(*t),
        Pat::Func(s, args) => {
            let ids: SmallVec<[TermId; 4]> = args
                .iter()
                .map(|a| ground_term(a, b, func))
                .collect::<Option<_>>()?;
            func(*s, &ids)
        }
    }
}

/// The variables of a rule's head, in order of first occurrence.
fn head_vars(rule: &Rule) -> Vec<u32> {
    let mut vars = Vec::new();
    for p in &rule.head.args {
        p.each_var(&mut |v| {
            if !vars.contains(&v) {
                vars.push(v);
            }
        });
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::super::testing::{analysed, instantiated, kif};
    use super::super::Strategy;
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
