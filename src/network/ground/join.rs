//! The grounder's join: one worker instantiating one rule at a time over the relaxed fixpoint and the
//! load-time facts, each step of the join order a lookup by the values already bound (the lookups built
//! once per rule, not per instance), recording instances in a flat buffer.

use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::atoms::Instances;
use super::budget::{check_grounding, Budget, NetworkError};
use crate::datalog::eval::Db;
use crate::datalog::ir::{Arith, Cmp, IrAtom, Lit, Pat, RelId, Rule};
use crate::datalog::plan::{key_slots, Slot};
use crate::datalog::terms::{TermId, TermStore};
use crate::datalog::Invalid;
use crate::engine::EngineError;
use crate::syntax::ast::Sym;

/// Which rows step `k` of a join may match (see [`Grounder::candidates`]).
pub(super) enum Candidates {
    /// Every row: nothing is bound to look up by.
    All,
    /// Rows `start..end` of these rows.
    Rows(Rc<[u32]>, u32, u32),
    /// None: no row has the bound values.
    None,
}

/// The values of a row at a lookup's slots: chess looks its threats up by five and six columns, so
/// eight are kept inline (a key that spilled to the heap cost an allocation per row and per lookup).
pub(super) type RowKey = SmallVec<[TermId; 8]>;

/// `rel`'s rows of `db` by their values at `slots` (rows without a value at a slot left out): each
/// key once in the table with its stretch of one array of rows, in row order. Built in two passes
/// (count, then place) so that a relation of many keys costs no allocation per key.
pub(super) fn row_index(db: &Db, rel: RelId, slots: &[Slot], terms: &TermStore) -> RowIndex {
    let rel = db.rel(rel);
    let mut stretch: HashMap<RowKey, (u32, u32)> = HashMap::new();
    // Each row's key number, `u32::MAX` for a row left out; the count of each key's rows.
    let mut key_of: Vec<u32> = Vec::with_capacity(rel.len());
    let mut count: Vec<u32> = Vec::new();
    'rows: for i in 0..rel.len() {
        let row = rel.row(i);
        let mut k: RowKey = SmallVec::new();
        for s in slots.iter() {
            match s.value(terms, row) {
                Some(t) => k.push(t),
                None => {
                    key_of.push(u32::MAX);
                    continue 'rows;
                }
            }
        }
        let next = count.len() as u32;
        let (number, _) = *stretch.entry(k).or_insert((next, 0));
        if number == next {
            count.push(0);
        }
        count[number as usize] += 1;
        key_of.push(number);
    }
    // Where each key's rows start, then the rows placed in order.
    let mut start: Vec<u32> = Vec::with_capacity(count.len());
    let mut at = 0;
    for &c in &count {
        start.push(at);
        at += c;
    }
    let mut rows = vec![0u32; at as usize];
    let mut fill = start.clone();
    for (i, &k) in key_of.iter().enumerate().filter(|(_, &k)| k != u32::MAX) {
        rows[fill[k as usize] as usize] = i as u32;
        fill[k as usize] += 1;
    }
    for (number, end) in stretch.values_mut() {
        *end = start[*number as usize] + count[*number as usize];
        *number = start[*number as usize];
    }
    RowIndex {
        stretch,
        rows: Rc::from(rows),
    }
}

/// Per relation whose atoms another's stand for (see `Analysis::same_as`), the atom of each of its
/// relaxed rows: the other relation's row with the same fact.
pub(super) type StandIns = [Option<Box<[u32]>>];

/// Where each relation's facts come from while grounding.
#[derive(Clone, Copy)]
pub(super) struct Sources<'a> {
    pub(super) relaxed: &'a Db,
    pub(super) exact: &'a Db,
    pub(super) dynamic: &'a [bool],
    /// The demand relations of the rewrite: what is asked, read from the relaxed fixpoint as
    /// constant filters (an instance nobody can ask for is never needed).
    pub(super) demand: &'a [bool],
    /// The relations left out of the relaxed fixpoint (see
    /// [`late_relations`](super::analysis::late_relations)): the heads of their rules' instances are
    /// recorded as the values of the head's variables.
    pub(super) late: &'a [bool],
    /// The relations read only for their values (see
    /// [`is_domain_relation`](crate::network::ground::decompose::is_domain_relation)): looked up like the
    /// others, left out of the instances.
    pub(super) domain: &'a [bool],
    /// Per relation, the demand relation whose rows its rows are, in the same order (see
    /// [`demand_shaped`](super::analysis::demand_shaped)): an instance's head is then the row of
    /// its demand.
    pub(super) copy_of: &'a [Option<RelId>],
    /// Per load-time relation of one column, its facts as a bitset by term number: the commonest
    /// check (`coordinate(?x)` with `?x` known) without hashing.
    pub(super) unary: &'a [Option<Vec<u64>>],
}

impl<'a> Sources<'a> {
    pub(super) fn db(&self, r: RelId) -> &'a Db {
        if self.dynamic[r.0 as usize] || self.demand[r.0 as usize] {
            self.relaxed
        } else {
            self.exact
        }
    }
}

/// The rows of a relation by the values of some of its columns (see [`row_index`]).
pub(super) struct RowIndex {
    /// Per key, its stretch of `rows` (start and end).
    stretch: HashMap<RowKey, (u32, u32)>,
    /// Every keyed row, key after key, each key's in row order.
    rows: Rc<[u32]>,
}

/// One way of looking a relation's rows up.
pub(super) struct Lookup {
    pub(super) slots: Vec<Slot>,
    /// The columns (below 64) whose whole value is in the key: every row the lookup gives holds
    /// the bound value there, so a candidate is matched on the other columns only.
    pub(super) keyed: u64,
    pub(super) rows: Option<RowIndex>,
}

/// One grounding worker: instantiates rules over the relaxed fixpoint and the load-time facts. Workers
/// share nothing mutable but the instance count, so several ground rules side by side.
pub(super) struct Grounder<'a> {
    pub(super) src: Sources<'a>,
    /// The terms of the analysis, read only: a worker makes no term (see `step_arith`).
    pub(super) terms: &'a TermStore,
    /// Which lookup serves (relation, key slots): a number into `lookups`.
    pub(super) index_of: HashMap<(u32, Vec<Slot>), u32>,
    /// The lookups, each built when first used.
    pub(super) lookups: Vec<Lookup>,
    /// For each step of the rule being grounded, its lookup (`u32::MAX` not known yet): what is bound
    /// at a step does not change from one instance to the next.
    pub(super) step_lookup: Vec<u32>,
    /// For each step of the rule being grounded, whether its literal is ground when reached (the
    /// join order fixes what each step has bound).
    pub(super) step_ground: Vec<bool>,
    /// For each step of the rule being grounded, the variables it binds (those of its literal not
    /// bound before it): unbound again after each candidate, instead of restoring every binding.
    pub(super) step_binds: Vec<SmallVec<[u32; 8]>>,
    /// Per relation, the number of its first relaxed row among all relations' rows.
    pub(super) row_base: &'a [u32],
    /// The atoms standing for some relations' rows.
    pub(super) stand_ins: &'a StandIns,
    /// The instances of the rule being grounded, in the order found.
    pub(super) out: Instances,
    /// The variables of the head of the rule being grounded, in order of first occurrence.
    pub(super) head_vars: Vec<u32>,
    /// The step (into the join order) reading the demand whose row is the head's, when the head's
    /// relation copies a demand's rows (`usize::MAX` otherwise), and the row it is at.
    pub(super) head_step: usize,
    pub(super) head_row: u32,
    /// Instances found by this worker since it last added them to `shared_instances`.
    pub(super) instances: usize,
    /// Instances found by all workers (added in batches).
    pub(super) shared_instances: &'a AtomicUsize,
    /// Words of the instances found by this worker since it last added them to `shared_words`.
    pub(super) words: usize,
    /// Words of the instances of all workers (added in batches, with the instances).
    pub(super) shared_words: &'a AtomicUsize,
    /// Candidate rows tried, for budget checks between instances.
    pub(super) visits: u64,
    pub(super) budget: Budget,
    pub(super) started: Instant,
}

/// Whether a pattern's variables are all bound.
pub(super) fn bound(p: &Pat, b: &[Option<TermId>]) -> bool {
    let mut ok = true;
    p.each_var(&mut |v| ok &= b[v as usize].is_some());
    ok
}

impl Grounder<'_> {
    /// Whether the instances of all workers and the clock fit the budget.
    pub(super) fn check_budget(&self) -> Result<(), NetworkError> {
        check_grounding(
            (
                self.shared_instances.load(Ordering::Relaxed),
                self.shared_words.load(Ordering::Relaxed),
            ),
            self.budget,
            self.started,
        )
    }

    /// The body in a join order: filters as soon as their variables are bound, then the positive atom
    /// with the most bound arguments.
    pub(super) fn order(&self, rule: &Rule) -> Result<Vec<usize>, NetworkError> {
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
                    Lit::NotArith(_, x, y, z) => bound(x, &b) && bound(y, &b) && bound(z, &b),
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
                return Err(EngineError::Invalid(Invalid::UnboundVariable).into());
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
                Lit::Neg(_) | Lit::NotArith(..) => {}
            }
            out.push(i);
        }
        Ok(out)
    }

    /// Grounds `rule`, its instances left in `out`.
    pub(super) fn ground_rule(&mut self, rule: &Rule) -> Result<(), NetworkError> {
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
        self.step_binds.clear();
        for &i in &order {
            let l = &rule.body[i];
            let ground = match l {
                Lit::Pos(a) | Lit::Neg(a) => a.args.iter().all(|p| p.is_bound(&bound_here)),
                _ => false,
            };
            self.step_ground.push(ground);
            let before = bound_here.clone();
            l.bind_vars(&mut bound_here);
            self.step_binds.push(
                (0..bound_here.len() as u32)
                    .filter(|&v| bound_here[v as usize] && !before[v as usize])
                    .collect(),
            );
        }
        let mut b: Vec<Option<TermId>> = vec![None; rule.var_names.len()];
        let mut body: SmallVec<[u32; 4]> = SmallVec::new();
        self.step(rule, &order, 0, &mut b, &mut body)
    }

    /// Grounds the rest of `rule`'s body from step `k` of the join `order`, `b` holding the values
    /// bound so far and `body` the atom literals recorded so far; each complete match is emitted.
    pub(super) fn step(
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
            Lit::NotArith(op, x, y, z) => {
                // Every argument is bound: decided on the spot, the negation of `Arith`, which
                // matches the result's term (`05` is no sum of 2 and 3). A term never built (a
                // late rule's compound) is no integer.
                let int = |p: &Pat| self.make(p, b).and_then(|t| self.terms.as_int(t));
                let result = int(x).zip(int(y)).and_then(|(p, q)| op.apply(p, q));
                let result = result.and_then(|v| self.terms.find_int(v));
                if result.is_none() || result != self.make(z, b) {
                    self.step(rule, order, k + 1, b, body)?;
                }
                Ok(())
            }
        }
    }

    /// Step `k`, a positive atom `a` that is ground when reached: one lookup, nothing to bind.
    pub(super) fn step_ground_atom(
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
    pub(super) fn step_join(
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
        let (rows, keyed) = match self.candidates(k, a, b) {
            Candidates::None => return Ok(()),
            Candidates::All => (None, 0),
            Candidates::Rows(rows, start, end) => (
                Some((rows, start as usize, end as usize)),
                self.lookups[self.step_lookup[k] as usize].keyed,
            ),
        };
        let n = rows
            .as_ref()
            .map_or(db.rel(a.rel).len(), |(_, start, end)| end - start);
        for j in 0..n {
            let i = rows
                .as_ref()
                .map_or(j, |(r, start, _)| r[start + j] as usize);
            self.visits += 1;
            if self.visits.is_multiple_of(65536) {
                self.check_budget()?;
            }
            let row = db.rel(a.rel).row(i);
            if a.args
                .iter()
                .zip(row.iter())
                .enumerate()
                .all(|(c, (p, t))| (c < 64 && keyed >> c & 1 == 1) || self.matches(p, *t, b))
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
            self.unbind(k, b);
        }
        Ok(())
    }

    /// Unbinds the variables step `k` binds (a match may have bound some before failing).
    #[inline]
    fn unbind(&self, k: usize, b: &mut [Option<TermId>]) {
        for &v in &self.step_binds[k] {
            b[v as usize] = None;
        }
    }

    /// The rows of `a`'s relation that step `k` may match: those with every bound value, a whole
    /// column or a part of a column's term (`legal2(?p, (move ?piece ?u ?v ?x ?y))` with the squares
    /// known). Which lookup serves step `k` is resolved at its first instance, as what is bound at a
    /// step does not change from one instance to the next.
    pub(super) fn candidates(&mut self, k: usize, a: &IrAtom, b: &[Option<TermId>]) -> Candidates {
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
                let keyed = slots
                    .iter()
                    .filter(|s| s.path.is_empty() && s.col < 64)
                    .fold(0, |m, s| m | 1 << s.col);
                self.lookups.push(Lookup {
                    slots,
                    keyed,
                    rows: None,
                });
            }
            self.step_lookup[k] = id;
            id
        };
        let mut key: RowKey = SmallVec::new();
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
        let Lookup { slots, rows, .. } = &mut self.lookups[lookup as usize];
        let ix = rows.get_or_insert_with(|| row_index(db, a.rel, slots, terms));
        match ix.stretch.get(&key) {
            Some(&(start, end)) => Candidates::Rows(ix.rows.clone(), start, end),
            None => Candidates::None,
        }
    }

    /// Step `k`, a negated atom `a` (ground when reached): decided on the spot for a load-time
    /// relation, recorded as a negative literal for a state-dependent one.
    pub(super) fn step_negation(
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
    pub(super) fn step_compare(
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
                match self.unify_parts(x, y, b) {
                    Parts::Equal => self.step(rule, order, k + 1, b, body)?,
                    Parts::Differ => {}
                    // A variable would hold a term no relaxed fact holds. Outside the late rules
                    // the relaxed fixpoint ran this rule and built every term it can make, so there
                    // is no such instance; a late rule's may be real, and the term would exist only
                    // in this worker's copy of the store (see `step_arith`).
                    Parts::Unbuilt if self.grounds_unbuilt(rule, order[k], (x, y), b) => {
                        return Err(NetworkError::Unsupported(
                            "`=` makes a compound term that no fact of the relaxed game holds, \
                             in a rule the network grounds from its instances"
                                .into(),
                        ))
                    }
                    // Read only by positive atoms, whose facts hold built terms: no instance.
                    Parts::Unbuilt => {}
                }
                self.unbind(k, b);
                return Ok(());
            }
            // Both sides are bound: compared part by part, since a late rule's compound terms
            // (`(distinct (f ?x) (f ?y))` in `terminal`) were never built.
            Cmp::Distinct => self.unify_parts(x, y, b) == Parts::Differ,
            Cmp::Less | Cmp::Leq | Cmp::NotLess | Cmp::NotLeq => c.orders(
                self.make(x, b).and_then(|t| self.terms.as_int(t)),
                self.make(y, b).and_then(|t| self.terms.as_int(t)),
            ),
        };
        if ok {
            self.step(rule, order, k + 1, b, body)?;
        }
        Ok(())
    }

    /// Step `k`, the arithmetic `z = x op y`: binds or tests `z`; no match on overflow.
    pub(super) fn step_arith(
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
        let Some(v) = op.apply(p, q) else {
            return Ok(());
        };
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
        if self.matches(z, t, b) {
            self.step(rule, order, k + 1, b, body)?;
        }
        self.unbind(k, b);
        Ok(())
    }

    /// Records the instance of `rule` that bindings `b` complete, its body's atom literals `body`.
    pub(super) fn emit(
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
        self.words += 2 + body.len();
        self.out.push(body.len() as u32);
        self.out.extend_from_slice(body);
        if self.instances == 4096 {
            self.flush_counts();
            self.check_budget()?;
        }
        Ok(())
    }

    /// Adds the instances and words found since the last call to the counts all workers share.
    pub(super) fn flush_counts(&mut self) {
        self.shared_instances
            .fetch_add(self.instances, Ordering::Relaxed);
        self.shared_words.fetch_add(self.words, Ordering::Relaxed);
        (self.instances, self.words) = (0, 0);
    }

    /// The atom of row `i` of the relaxed fixpoint's relation `rel`: its number among all
    /// relations' rows, or the atom standing for it.
    pub(super) fn row_id(&self, rel: RelId, i: usize) -> u32 {
        match &self.stand_ins[rel.0 as usize] {
            None => self.row_base[rel.0 as usize] + i as u32,
            Some(atoms) => atoms[i],
        }
    }

    /// The row number of `rel(args)` (see [`Grounder::row_id`]); `None` when the relaxed fixpoint
    /// does not have it (it is never true).
    pub(super) fn atom(&self, rel: RelId, args: &[TermId]) -> Option<u32> {
        let i = self.src.relaxed.rel(rel).position(args)?;
        Some(self.row_id(rel, i))
    }

    /// Whether an `=` (body literal `at` of `rule`) that would bind a variable to a term never built
    /// may still have real instances: the rule was not run by the relaxed fixpoint (a late relation
    /// or a demand's copy), and the variable is read by more than positive atoms (the head, a
    /// negation, a comparison, arithmetic), where a term in no fact can still count.
    fn grounds_unbuilt(
        &self,
        rule: &Rule,
        at: usize,
        (x, y): (&Pat, &Pat),
        b: &[Option<TermId>],
    ) -> bool {
        let h = rule.head.rel.0 as usize;
        if !self.src.late[h] && self.src.copy_of[h].is_none() {
            return false;
        }
        let mut open: SmallVec<[u32; 4]> = SmallVec::new();
        for p in [x, y] {
            p.each_var(&mut |v| {
                if b[v as usize].is_none() {
                    open.push(v);
                }
            });
        }
        let mut read = false;
        for a in &rule.head.args {
            a.each_var(&mut |v| read |= open.contains(&v));
        }
        for (i, l) in rule.body.iter().enumerate() {
            if i != at && !matches!(l, Lit::Pos(_)) {
                l.each_var(&mut |v| read |= open.contains(&v));
            }
        }
        read
    }

    /// How patterns `x` and `y` compare under `b`, part by part, binding an unbound variable on
    /// either side to the other side's part: a compound term of bound parts need not have been built
    /// (the relaxed fixpoint never runs the late rules), and two such are equal when their parts are.
    pub(super) fn unify_parts(&self, x: &Pat, y: &Pat, b: &mut [Option<TermId>]) -> Parts {
        match (x, y) {
            (Pat::Var(v), other) | (other, Pat::Var(v)) if b[*v as usize].is_none() => {
                match self.make(other, b) {
                    Some(t) => {
                        b[*v as usize] = Some(t);
                        Parts::Equal
                    }
                    None if bound(other, b) => Parts::Unbuilt,
                    // Both sides unbound: the plan never orders a comparison so.
                    None => Parts::Differ,
                }
            }
            (Pat::Func(s, xs), Pat::Func(r, ys)) => {
                if s != r || xs.len() != ys.len() {
                    return Parts::Differ;
                }
                let mut all = Parts::Equal;
                for (x, y) in xs.iter().zip(ys) {
                    match self.unify_parts(x, y, b) {
                        Parts::Equal => {}
                        Parts::Differ => return Parts::Differ,
                        Parts::Unbuilt => all = Parts::Unbuilt,
                    }
                }
                all
            }
            (Pat::Func(..), other) | (other, Pat::Func(..)) => {
                let func = if matches!(x, Pat::Func(..)) { x } else { y };
                match resolved(other, b) {
                    Some(t) if self.matches(func, t, b) => Parts::Equal,
                    _ => Parts::Differ,
                }
            }
            _ => match (resolved(x, b), resolved(y, b)) {
                (Some(s), Some(t)) if s == t => Parts::Equal,
                _ => Parts::Differ,
            },
        }
    }

    /// Whether pattern `p` matches term `t`, binding its unbound variables in `b`.
    pub(super) fn matches(&self, p: &Pat, t: TermId, b: &mut [Option<TermId>]) -> bool {
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
    pub(super) fn make(&self, p: &Pat, b: &[Option<TermId>]) -> Option<TermId> {
        ground_term(p, b, &mut |s, ids| self.terms.find_func(s, ids))
    }

    /// Whether `rel(fact)` holds, for a relation that does not depend on the state.
    pub(super) fn holds(&self, rel: RelId, fact: &[TermId]) -> bool {
        match (&self.src.unary[rel.0 as usize], fact) {
            (Some(bits), [t]) => {
                let i = t.0 as usize;
                bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
            }
            _ => self.src.db(rel).rel(rel).contains(fact),
        }
    }

    /// The ground fact of atom `a` under `b`, when every term of it exists in the store.
    pub(super) fn make_all(
        &self,
        a: &IrAtom,
        b: &[Option<TermId>],
    ) -> Option<SmallVec<[TermId; 8]>> {
        instantiate_atom(a, b, &mut |s, ids| self.terms.find_func(s, ids))
    }
}

/// How two patterns compare part by part ([`Grounder::unify_parts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Parts {
    /// The same term (variables bound to make it so).
    Equal,
    /// Different terms.
    Differ,
    /// Equal only if a variable held a compound term that was never built.
    Unbuilt,
}

/// The term a variable or ground pattern stands for under `b` (`None` for a compound pattern or an
/// unbound variable).
fn resolved(p: &Pat, b: &[Option<TermId>]) -> Option<TermId> {
    match p {
        Pat::Var(v) => b[*v as usize],
        Pat::Term(t) => Some(*t),
        Pat::Func(..) => None,
    }
}

/// The fact atom `a` makes with the values `b`, `func` making (or finding) its compound terms; `None`
/// when a term cannot be made.
pub(super) fn instantiate_atom(
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
pub(super) fn ground_term(
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
pub(super) fn head_vars(rule: &Rule) -> Vec<u32> {
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
    use super::super::net::Strategy;
    use super::super::testing::{analysed, game};
    use super::*;

    #[test]
    fn a_row_index_gives_each_key_its_rows_in_order_and_leaves_out_rows_without_the_key() {
        // `true`'s rows of tic-tac-toe: cell(x, y, mark) and control(role). Keyed by the cell's
        // mark (its third argument), the control rows have no key.
        let a = analysed(&game("tictactoe.gdl"), Strategy::AsWritten);
        let rel = a.rels.true_;
        let slots = [Slot {
            col: 0,
            path: SmallVec::from_slice(&[2]),
        }];
        let terms = &a.relaxed.terms;
        let index = row_index(&a.relaxed, rel, &slots, terms);
        let store = a.relaxed.rel(rel);
        let mut expected: HashMap<RowKey, Vec<u32>> = HashMap::new();
        let mut left_out = 0;
        for i in 0..store.len() {
            match slots[0].value(terms, store.row(i)) {
                Some(t) => expected
                    .entry(SmallVec::from_slice(&[t]))
                    .or_default()
                    .push(i as u32),
                None => left_out += 1,
            }
        }
        assert!(left_out > 0, "the control rows have no third argument");
        assert_eq!(expected.len(), 3, "x, o and b: {expected:?}");
        assert_eq!(index.stretch.len(), expected.len());
        for (key, rows) in &expected {
            let (start, end) = index.stretch[key];
            assert_eq!(
                &index.rows[start as usize..end as usize],
                &rows[..],
                "key {key:?}"
            );
        }
        assert_eq!(index.rows.len() + left_out, store.len());
    }
}
