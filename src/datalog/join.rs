//! The join interpreter: one rule body, run as compiled [`Instr`]uctions against the stored relations.
//!
//! The entry point is [`join`]: given the rows of every relation, a rule's head and its compiled body,
//! it walks the body depth first, one instruction per level, and at the bottom pushes the head's
//! terms onto the scratch's `pending` list. The evaluator (`eval`) decides which rule to join and
//! what to do with the heads; this module only finds them.
//!
//! A scan looks its relation up through the index the planner chose, reading the key's values from
//! the bindings, and follows the index's chain of rows with that key, newest first; with no index it
//! reads every row. The planner fixed the body order, so each [`Match`] knows whether it binds or
//! compares: a row that fails to match leaves stale bindings behind, which the next row overwrites,
//! and nothing is ever undone. A negation is a scan that succeeds once when no row matches.
//!
//! Three restrictions make the semi-naive evaluator and its parallel passes work:
//!
//! - **Deltas.** One scan (`delta.0`, the step index) may be restricted to the rows `delta.1..delta.2`:
//!   the rows the previous round added. Rows are only appended and index chains run newest first,
//!   so an indexed scan stops at the first row below the range.
//! - **Existence only.** From instruction `exists_from` on no step binds a head variable, so one
//!   solution there is as good as all: the join stops at the first.
//! - **Who makes terms.** A join makes the terms a head or an arithmetic result needs through
//!   [`Terms`]: the evaluator's own store makes them; a store shared read-only by the workers of a
//!   parallel pass can only find them, and the join then stops with [`Stop::NewTerm`] so that the
//!   evaluator runs the rule again itself.
//!
//! Every [`DEADLINE_STRIDE`] rows a scan looks at the clock, so a runaway join stops with an error
//! within its time limit; a term nested deeper than the limit stops it too.

use smallvec::SmallVec;

use super::compiled::{Instr, Key, Match, Scan};
use super::ir::Pat;
use super::store::{RelStore, NONE};
use super::terms::{hash_ids, TermId, TermStore};
use super::{EngineError, Limits};
use crate::datalog::{Invalid, Runaway};
use crate::syntax::ast::Sym;

/// Where a join's terms come from: the evaluator's own store, which makes the terms a rule builds, or
/// a store the workers of a parallel pass share, which can only find them.
pub(super) trait Terms {
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
pub(super) enum Stop {
    /// An error of the evaluation.
    Engine(EngineError),
    /// It needed a term its store cannot make (a worker of a parallel pass): the rule is evaluated
    /// again afterwards by the evaluator itself.
    NewTerm,
    /// It found more answers than its caller keeps ([`Scratch::answers_at_most`]).
    Enough,
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
            Stop::NewTerm => EngineError::Invalid(Invalid::TermNotMade),
            Stop::Enough => {
                unreachable!(
                    "only `Db::prefix_answers` sets a number of answers, and it handles it"
                )
            }
        }
    }
}

/// What one join works with: the variables' values, the heads it derives, and limits.
pub(super) struct Scratch<'a, T: Terms> {
    /// Each variable's value (those not bound yet hold anything).
    pub(super) binds: &'a mut Vec<TermId>,
    /// The heads derived so far, one after the other (each as many terms as the head has arguments).
    pub(super) pending: &'a mut Vec<TermId>,
    /// The number of solutions found (a head without arguments pushes nothing, so this says whether
    /// it was derived).
    pub(super) hits: usize,
    terms: T,
    max_depth: u32,
    deadline: Option<std::time::Instant>,
    /// The evaluation's fact limit.
    max_facts: usize,
    /// The relation the heads go to and how many new facts the evaluation may still derive, when
    /// the caller says ([`Scratch::for_head`]).
    head: Option<(usize, usize)>,
    /// The number of solutions at which the heads found are next counted (see [`Scratch::thin`]).
    check_at: usize,
    /// The most answers the caller keeps, past which the join stops with [`Stop::Enough`].
    max_answers: usize,
    /// Rows looked at, so that the deadline is read only once every `DEADLINE_STRIDE` rows.
    rows_visited: u32,
}

/// How many joined rows pass between two looks at the clock.
const DEADLINE_STRIDE: u32 = 1 << 14;

impl<'a, T: Terms> Scratch<'a, T> {
    /// A scratch over `binds` (already sized for the rule's variables) and `pending`, making or
    /// finding terms in `terms`, within `limits`.
    pub(super) fn new(
        binds: &'a mut Vec<TermId>,
        pending: &'a mut Vec<TermId>,
        terms: T,
        limits: &Limits,
    ) -> Self {
        Scratch {
            binds,
            pending,
            hits: 0,
            terms,
            max_depth: limits.max_depth,
            deadline: limits.deadline,
            max_facts: limits.max_facts,
            head: None,
            check_at: limits.max_facts,
            max_answers: usize::MAX,
            rows_visited: 0,
        }
    }

    /// This scratch deriving heads of relation `rel`, of which the evaluation may still add `room`
    /// new facts: once the join has found more solutions than that, its heads are counted (see
    /// [`Scratch::thin`]).
    pub(super) fn for_head(mut self, rel: usize, room: usize) -> Self {
        self.head = Some((rel, room));
        self.check_at = room;
        self
    }

    /// This scratch stopping its join with [`Stop::Enough`] at the first answer past `most`.
    pub(super) fn answers_at_most(mut self, most: usize) -> Self {
        self.max_answers = most;
        self
    }

    /// Drops the pending heads the relation already has and the repeated ones, keeping each first
    /// one in its place (so the facts go in as they would have), and stops the evaluation when more
    /// remain than it may add: a cross product of millions of rows (laikLee_hex's `isList` of every
    /// list of twelve cells) is refused as it passes the limit instead of after it ends. A join that
    /// finds the same heads many times (a projection, a closure over a dense graph) goes on, its
    /// pending heads thinned to the new ones.
    fn thin(&mut self, rels: &[RelStore], arity: usize) -> Result<(), Stop> {
        let Some((rel, room)) = self.head else {
            self.check_at = usize::MAX;
            return Ok(());
        };
        if arity == 0 {
            self.check_at = usize::MAX;
            return Ok(());
        }
        let n = self.pending.len() / arity;
        let mut seen: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(n);
        let mut kept = 0;
        for i in 0..n {
            let h = hash_ids(self.pending[i * arity..(i + 1) * arity].iter().copied());
            let pending = &*self.pending;
            let fact = &pending[i * arity..(i + 1) * arity];
            if rels[rel].contains(fact)
                || seen
                    .find(h, |&k| {
                        &pending[k as usize * arity..(k as usize + 1) * arity] == fact
                    })
                    .is_some()
            {
                continue;
            }
            self.pending
                .copy_within(i * arity..(i + 1) * arity, kept * arity);
            let pending = &*self.pending;
            seen.insert_unique(h, kept as u32, |&k| {
                hash_ids(
                    pending[k as usize * arity..(k as usize + 1) * arity]
                        .iter()
                        .copied(),
                )
            });
            kept += 1;
        }
        self.pending.truncate(kept * arity);
        if kept > room {
            return Err(Stop::Engine(EngineError::Runaway(Runaway::TooManyFacts(
                self.max_facts,
            ))));
        }
        // Counted again after as many solutions more (at least a few, so that a join near the limit
        // that only repeats known heads does not count them at every one).
        self.check_at = self.hits.saturating_add(room.max(64));
        Ok(())
    }

    /// An error once the deadline has passed.
    pub(super) fn check_deadline(&self) -> Result<(), EngineError> {
        match self.deadline {
            Some(d) if std::time::Instant::now() > d => {
                Err(EngineError::Runaway(Runaway::TimeLimit))
            }
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
                    // The whole term is hundreds of parentheses (or, sharing its subterms, more
                    // text than memory holds); its head says which one grew.
                    return Err(EngineError::Runaway(Runaway::TooDeep {
                        limit: self.max_depth,
                        head: terms.kif_head(t, 60),
                    })
                    .into());
                }
                t
            }
        })
    }
}

/// Evaluates instructions `i..` of a rule body under the current bindings, pushing every head it
/// derives; true when at least one solution was found. From instruction `body.1` on the steps only
/// check that something exists, so they stop at their first solution. The scan at step `delta.0`
/// reads only the rows `delta.1..delta.2` (no step when `delta.0` is past the body).
pub(super) fn join<T: Terms>(
    rels: &[RelStore],
    head: &[Pat],
    body: (&[Instr], usize),
    i: usize,
    delta: (usize, u32, u32),
    sc: &mut Scratch<T>,
) -> Result<bool, Stop> {
    let Some(instr) = body.0.get(i) else {
        for a in head {
            let t = sc.make(a)?;
            sc.pending.push(t);
        }
        sc.hits += 1;
        if sc.hits > sc.max_answers {
            return Err(Stop::Enough);
        }
        if sc.hits > sc.check_at {
            sc.thin(rels, head.len())?;
        }
        return Ok(true);
    };
    match instr {
        Instr::Scan(s) => scan(rels, head, body, i, delta, sc, s),
        _ if holds(instr, sc)? => join(rels, head, body, i + 1, delta, sc),
        _ => Ok(false),
    }
}

/// [`join`] at a scan or negation `s`, step `i` of the body.
#[inline]
fn scan<T: Terms>(
    rels: &[RelStore],
    head: &[Pat],
    body: (&[Instr], usize),
    i: usize,
    delta: (usize, u32, u32),
    sc: &mut Scratch<T>,
    s: &Scan,
) -> Result<bool, Stop> {
    let positive = s.positive;
    let once = i >= body.1;
    let rel = &rels[s.rel as usize];
    let (lo, hi) = if delta.0 == i {
        (delta.1, delta.2)
    } else {
        (0, rel.len)
    };
    // `matched`: a row matched (for a negation, the end of the search); `solved`: a solution was
    // found below this step.
    let mut matched = false;
    let mut solved = false;
    let mut visit = |row: u32, sc: &mut Scratch<T>| -> Result<bool, Stop> {
        sc.rows_visited = sc.rows_visited.wrapping_add(1);
        if sc.rows_visited.is_multiple_of(DEADLINE_STRIDE) {
            sc.check_deadline()?;
        }
        let vals = rel.row(row as usize);
        if s.cols.iter().all(|(c, m)| sc.matches(m, vals[*c])) {
            if positive {
                solved |= join(rels, head, body, i + 1, delta, sc)?;
            } else {
                matched = true;
            }
        }
        Ok(if positive { once && solved } else { matched })
    };
    match s.index {
        None => {
            for row in lo..hi {
                if visit(row, sc)? {
                    break;
                }
            }
        }
        Some(ix) => {
            // Filled here, not returned by a helper: moving the key out of a call as an
            // `Option<SmallVec>` cost chess on this evaluator 6% of its states per second.
            let mut keyv: SmallVec<[TermId; 8]> = SmallVec::new();
            for k in s.key.iter() {
                keyv.push(match k {
                    Key::Var(v) => sc.binds[*v as usize],
                    Key::Const(t) => *t,
                    Key::Pat(p) => match sc.find(p) {
                        Some(t) => t,
                        // A key term the store lacks is in no row: nothing matches.
                        None if positive => return Ok(false),
                        None => return join(rels, head, body, i + 1, delta, sc),
                    },
                });
            }
            let next = &rel.indexes[ix].next;
            let mut x = rel.lookup(ix, &keyv, sc.terms.store());
            // The chain runs newest first: below `lo` nothing is left to read.
            while x != NONE && x >= lo {
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

/// Whether a built-in step (anything but a scan) holds under the current bindings, binding what it
/// binds (`same`'s free side, arithmetic's result).
#[inline]
fn holds<T: Terms>(instr: &Instr, sc: &mut Scratch<T>) -> Result<bool, Stop> {
    Ok(match instr {
        Instr::Scan(_) => false,
        Instr::Distinct(x, y) => sc.make(x)? != sc.make(y)?,
        Instr::Same(x, y) => {
            let t = sc.make(x)?;
            sc.matches(y, t)
        }
        Instr::Order(c, x, y) => {
            let a = sc.make(x)?;
            let b = sc.make(y)?;
            let terms = sc.terms.store();
            c.orders(terms.as_int(a), terms.as_int(b))
        }
        Instr::Arith(op, x, y, z) => {
            let a = sc.make(x)?;
            let b = sc.make(y)?;
            let terms = sc.terms.store();
            let (Some(a), Some(b)) = (terms.as_int(a), terms.as_int(b)) else {
                return Ok(false);
            };
            let Some(v) = op.apply(a, b) else {
                return Ok(false);
            };
            let t = sc.terms.int(v).ok_or(Stop::NewTerm)?;
            sc.matches(z, t)
        }
        Instr::NotArith(op, x, y, z) => {
            // The negation of `Arith`, which matches the result's term: `05` is no sum of 2 and 3.
            let (a, b, c) = (sc.make(x)?, sc.make(y)?, sc.make(z)?);
            let terms = sc.terms.store();
            let (Some(a), Some(b)) = (terms.as_int(a), terms.as_int(b)) else {
                return Ok(true);
            };
            op.apply(a, b).and_then(|v| terms.find_int(v)) != Some(c)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::compiled::Slot;
    use crate::datalog::ir::{Arith, Cmp};
    use crate::syntax::ast::Symbols;

    /// Terms `a`, `b`, `c`, the function symbol `f`, and a relation `edge` (two columns, indexed by
    /// its first) holding `a→b`, `a→c`, `b→c`, in that order.
    struct Fixture {
        terms: TermStore,
        f: Sym,
        a: TermId,
        b: TermId,
        c: TermId,
        rels: Vec<RelStore>,
    }

    fn fixture() -> Fixture {
        let mut terms = TermStore::new(Symbols::new());
        let [a, b, c] = ["a", "b", "c"].map(|n| {
            let s = terms.intern_sym(n);
            terms.constant(s)
        });
        let f = terms.intern_sym("f");
        let mut edge = RelStore::new(2, &[vec![Slot::column(0)]]);
        for fact in [[a, b], [a, c], [b, c]] {
            edge.insert(&fact, &terms);
        }
        Fixture {
            terms,
            f,
            a,
            b,
            c,
            rels: vec![edge],
        }
    }

    /// `edge(?0, ?1)`, read through the index on its first column when `?0` is bound.
    fn edge(bound: bool, positive: bool) -> Instr {
        let first = if bound { Match::Var(0) } else { Match::Bind(0) };
        Instr::Scan(Scan {
            rel: 0,
            index: bound.then_some(0),
            key: if bound {
                Box::new([Key::Var(0)])
            } else {
                Box::new([])
            },
            cols: if bound {
                Box::new([(1, Match::Bind(1))])
            } else {
                Box::new([(0, first), (1, Match::Bind(1))])
            },
            positive,
        })
    }

    /// Runs `code` (existence-only from `exists_from`) with `binds` set and the scan at step
    /// `delta.0` restricted, through the evaluator's own store; the heads found and the hits. With
    /// the evaluator's own store and the default limits nothing here should stop a join early, so
    /// a stop fails the test in one place instead of in every caller.
    fn run(
        fx: &mut Fixture,
        code: &[Instr],
        exists_from: usize,
        head: &[Pat],
        binds: &[TermId],
        delta: (usize, u32, u32),
    ) -> (Vec<TermId>, usize) {
        let mut binds = binds.to_vec();
        binds.resize(4, TermId(u32::MAX));
        let mut pending = Vec::new();
        let limits = Limits::default();
        let mut sc = Scratch::new(&mut binds, &mut pending, &mut fx.terms, &limits);
        if join(&fx.rels, head, (code, exists_from), 0, delta, &mut sc).is_err() {
            panic!("the join stopped early");
        }
        let hits = sc.hits;
        (pending, hits)
    }

    /// [`run`] as most tests want it: every step derives heads (none is existence-only) and every
    /// row is read.
    fn heads(
        fx: &mut Fixture,
        code: &[Instr],
        head: &[Pat],
        binds: &[TermId],
    ) -> (Vec<TermId>, usize) {
        run(fx, code, code.len(), head, binds, ALL)
    }

    const ALL: (usize, u32, u32) = (usize::MAX, 0, 0);

    #[test]
    fn a_scan_derives_one_head_per_matching_row() {
        let mut fx = fixture();
        let (a, b, c) = (fx.a, fx.b, fx.c);
        let head = [Pat::Var(1), Pat::Var(0)];
        let (found, hits) = heads(&mut fx, &[edge(false, true)], &head, &[]);
        assert_eq!(found, [b, a, c, a, c, b]);
        assert_eq!(hits, 3);
        // Through the index, newest row first.
        let (found, _) = heads(&mut fx, &[edge(true, true)], &head, &[a]);
        assert_eq!(found, [c, a, b, a]);
    }

    #[test]
    fn a_delta_restricts_its_scan_to_the_new_rows() {
        let mut fx = fixture();
        let (a, c) = (fx.a, fx.c);
        let head = [Pat::Var(1)];
        let (found, _) = run(&mut fx, &[edge(false, true)], 1, &head, &[], (0, 1, 3));
        assert_eq!(found, [c, c]);
        // The index chain stops below the range: row 0 (`a→b`) is not read.
        let (found, _) = run(&mut fx, &[edge(true, true)], 1, &head, &[a], (0, 1, 3));
        assert_eq!(found, [c]);
        let (found, _) = run(&mut fx, &[edge(true, true)], 1, &head, &[a], (0, 2, 3));
        assert!(found.is_empty());
    }

    #[test]
    fn steps_from_exists_from_stop_at_their_first_solution() {
        let mut fx = fixture();
        let (a, b) = (fx.a, fx.b);
        // `edge(?0, ?1), edge(?0, ?2)` with only `?0` in the head: `a` has two edges, so in full
        // the second scan finds two rows for each of the first's two.
        let code = [
            edge(false, true),
            Instr::Scan(Scan {
                rel: 0,
                index: Some(0),
                key: Box::new([Key::Var(0)]),
                cols: Box::new([(1, Match::Bind(2))]),
                positive: true,
            }),
        ];
        let (found, hits) = heads(&mut fx, &code, &[Pat::Var(0)], &[]);
        assert_eq!((found, hits), (vec![a, a, a, a, b], 5));
        let (found, hits) = run(&mut fx, &code, 1, &[Pat::Var(0)], &[], ALL);
        assert_eq!((found, hits), (vec![a, a, b], 3));
        // With nothing in the head, the whole body is existence only: the first solution ends it.
        let (_, hits) = run(&mut fx, &code, 0, &[], &[], ALL);
        assert_eq!(hits, 1);
    }

    #[test]
    fn a_negation_holds_once_when_no_row_matches() {
        let mut fx = fixture();
        let (a, c) = (fx.a, fx.c);
        let head = [Pat::Var(0)];
        let (found, hits) = heads(&mut fx, &[edge(true, false)], &head, &[c]);
        assert_eq!((found, hits), (vec![c], 1));
        let (found, _) = heads(&mut fx, &[edge(true, false)], &head, &[a]);
        assert!(found.is_empty());
    }

    #[test]
    fn a_key_term_the_store_lacks_matches_no_row() {
        let mut fx = fixture();
        let (f, a) = (fx.f, fx.a);
        // `edge((f ?0), ?1)`: `(f a)` was never made, so no row can hold it.
        let scan = |positive| {
            Instr::Scan(Scan {
                rel: 0,
                index: Some(0),
                key: Box::new([Key::Pat(Pat::Func(f, vec![Pat::Var(0)]))]),
                cols: Box::new([(1, Match::Bind(1))]),
                positive,
            })
        };
        let (found, _) = heads(&mut fx, &[scan(true)], &[Pat::Var(0)], &[a]);
        assert!(found.is_empty());
        let (found, _) = heads(&mut fx, &[scan(false)], &[Pat::Var(0)], &[a]);
        assert_eq!(found, [a]);
    }

    #[test]
    fn built_ins_compare_compute_and_bind() {
        let mut fx = fixture();
        let (two, three) = (fx.terms.int(2), fx.terms.int(3));
        let (a, b) = (fx.a, fx.b);
        let sum = [Instr::Arith(
            Arith::Plus,
            Pat::Var(0),
            Pat::Var(1),
            Match::Bind(2),
        )];
        let (found, _) = heads(&mut fx, &sum, &[Pat::Var(2)], &[two, three]);
        assert_eq!(fx.terms.as_int(found[0]), Some(5));
        // An overflow, or a non-number, has no result rather than a wrong one.
        let big = fx.terms.int(i64::MAX);
        let (found, _) = heads(&mut fx, &sum, &[Pat::Var(2)], &[big, three]);
        assert!(found.is_empty());
        let (found, _) = heads(&mut fx, &sum, &[Pat::Var(2)], &[a, three]);
        assert!(found.is_empty());
        let less = |strict| {
            let c = if strict { Cmp::Less } else { Cmp::Leq };
            [Instr::Order(c, Pat::Var(0), Pat::Var(1))]
        };
        let not_less = [Instr::Order(Cmp::NotLess, Pat::Var(0), Pat::Var(1))];
        let holds =
            |fx: &mut Fixture, code: &[Instr], binds: &[TermId]| heads(fx, code, &[], binds).1 == 1;
        assert!(holds(&mut fx, &less(true), &[two, three]));
        assert!(!holds(&mut fx, &less(true), &[three, three]));
        assert!(holds(&mut fx, &less(false), &[three, three]));
        // An ordering is false of a symbol, and its negation true.
        assert!(!holds(&mut fx, &less(true), &[a, three]));
        assert!(holds(&mut fx, &not_less, &[a, three]));
        assert!(holds(&mut fx, &not_less, &[three, two]));
        assert!(!holds(&mut fx, &not_less, &[two, three]));
        let distinct = [Instr::Distinct(Pat::Var(0), Pat::Var(1))];
        assert!(holds(&mut fx, &distinct, &[a, b]));
        assert!(!holds(&mut fx, &distinct, &[a, a]));
        let same = [Instr::Same(Pat::Var(0), Match::Bind(1))];
        let (found, _) = heads(&mut fx, &same, &[Pat::Var(1)], &[b]);
        assert_eq!(found, [b]);
    }

    #[test]
    fn a_read_only_store_stops_for_a_new_term_and_a_deep_one_is_refused() {
        let mut fx = fixture();
        let (f, a) = (fx.f, fx.a);
        let code = [edge(true, true)];
        let head = [Pat::Func(f, vec![Pat::Var(1)])];
        let mut binds = vec![a, TermId(u32::MAX)];
        let mut pending = Vec::new();
        let limits = Limits::default();
        let mut sc = Scratch::new(&mut binds, &mut pending, &fx.terms, &limits);
        let res = join(&fx.rels, &head, (&code, 1), 0, ALL, &mut sc);
        assert!(matches!(res, Err(Stop::NewTerm)));
        // The evaluator's own store makes the term, within the depth limit.
        let limits = Limits {
            max_depth: 0,
            ..Limits::default()
        };
        let mut sc = Scratch::new(&mut binds, &mut pending, &mut fx.terms, &limits);
        let res = join(&fx.rels, &head, (&code, 1), 0, ALL, &mut sc);
        assert!(matches!(res, Err(Stop::Engine(EngineError::Runaway(_)))));
    }
}
