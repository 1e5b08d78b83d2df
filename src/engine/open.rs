//! Open mode of [`super::RuleGame`]: base propositions and moves found as play reaches them.
//!
//! The entry point is [`Discovered`], which `RuleGame` builds when the load-time relaxed analysis
//! cannot bound the propositions (it ignores `terminal`, so a counter of nested terms
//! `(n (s (s ...)))` grows until the depth limit). Nothing is known in advance then: each proposition
//! and each move gets the next free index the first time an evaluation derives it, so a state's bitset
//! grows with the table (bits beyond its length are false).
//!
//! Terms live in several stores: the table's own (a copy of the compiled rules' store, which only this
//! module adds to, under its lock) and each scratch database's, which grows separately as its
//! evaluations make terms, so the same term can have different ids in two stores. A [`Local`] beside
//! each scratch database remembers which of its ids are which proposition or move; a term it does not
//! know is copied into the table's store by name ([`TermStore::import`]) and looked up there, and a
//! proposition or move the scratch database has not seen is copied the other way. Only that first
//! meeting takes the lock; later states of the same scratch database hash one id, as the closed mode
//! does.
//!
//! Move ids are in order of discovery, not of text: the legal moves are sorted by their KIF text on the
//! way out instead, so every list of moves still comes out in one deterministic order. Move texts are
//! kept in [`Texts`], an append-only list read without the lock, so that `move_kif` can lend a `&str`.

use std::sync::{OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use hashbrown::HashMap;

use super::moves::{moves_of, RuleMove};
use crate::datalog::eval::Db;
use crate::datalog::ir::RelId;
use crate::datalog::terms::{TermId, TermStore};
use crate::datalog::Misbehaviour;
use crate::syntax::ast::Syntax;

/// Slots in the first chunk of [`Texts`]; each further chunk doubles.
const FIRST: usize = 64;
/// Enough chunks for every `u32` index.
const CHUNKS: usize = 27;

/// One chunk of [`Texts`]: slots set once.
type Chunk = Box<[OnceLock<Box<str>>]>;

/// Texts appended once each, at increasing indices, and read by reference without a lock: chunks
/// that never move once made.
pub(crate) struct Texts {
    chunks: [OnceLock<Chunk>; CHUNKS],
}

impl Texts {
    fn new() -> Texts {
        Texts {
            chunks: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// The chunk of index `i` (chunk `k` holds `FIRST << k` slots) and its slot there.
    fn place(i: usize) -> (usize, usize) {
        let j = i / FIRST + 1;
        let k = (usize::BITS - 1 - j.leading_zeros()) as usize;
        (k, i - FIRST * ((1 << k) - 1))
    }

    fn get(&self, i: usize) -> Option<&str> {
        let (k, slot) = Self::place(i);
        self.chunks.get(k)?.get()?.get(slot)?.get().map(|s| &**s)
    }

    fn set(&self, i: usize, text: String) {
        let (k, slot) = Self::place(i);
        if let Some(chunk) = self.chunks.get(k) {
            let chunk = chunk.get_or_init(|| (0..FIRST << k).map(|_| OnceLock::new()).collect());
            // Each index is set once, by the holder of the table's write lock that numbered it.
            let _ = chunk[slot].set(text.into());
        }
    }
}

/// The propositions and moves found so far, in the table's own term store.
struct Table {
    terms: TermStore,
    props: Vec<TermId>,
    prop_of: HashMap<TermId, u32>,
    moves: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
    move_by_kif: HashMap<Box<str>, u32>,
}

/// The shared, growing table of an open-mode game (see the module documentation).
pub(crate) struct Discovered {
    table: RwLock<Table>,
    move_kif: Texts,
    move_text: Texts,
    syntax: Syntax,
}

/// What one scratch database knows of the table, in its own term ids (see the module documentation).
#[derive(Default)]
pub(crate) struct Local {
    prop_ids: Vec<Option<TermId>>,
    prop_of: HashMap<TermId, u32>,
    move_ids: Vec<Option<TermId>>,
    move_of: HashMap<TermId, u32>,
}

impl Local {
    fn note(ids: &mut Vec<Option<TermId>>, of: &mut HashMap<TermId, u32>, i: u32, t: TermId) {
        let i = i as usize;
        if ids.len() <= i {
            ids.resize(i + 1, None);
        }
        ids[i] = Some(t);
        of.insert(t, i as u32);
    }
}

impl Discovered {
    /// An empty table over a copy of the compiled rules' term store (`terms`).
    pub(crate) fn new(terms: TermStore, syntax: Syntax) -> Discovered {
        Discovered {
            table: RwLock::new(Table {
                terms,
                props: Vec::new(),
                prop_of: HashMap::new(),
                moves: Vec::new(),
                move_of: HashMap::new(),
                move_by_kif: HashMap::new(),
            }),
            move_kif: Texts::new(),
            move_text: Texts::new(),
            syntax,
        }
    }

    // A panic elsewhere while holding the lock leaves the table whole (each change is one push and
    // one insert), so a poisoned lock is still used.
    fn read(&self) -> RwLockReadGuard<'_, Table> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Table> {
        self.table.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The index of proposition `t` of store `src`, numbered when new.
    pub(crate) fn prop_from(&self, src: &TermStore, t: TermId) -> u32 {
        let mut table = self.write();
        let c = table.terms.import(src, t);
        let n = table.props.len() as u32;
        let i = *table.prop_of.entry(c).or_insert(n);
        if i == n {
            table.props.push(c);
        }
        i
    }

    /// The index of proposition `t` of the scratch store `terms`, numbered when new.
    pub(crate) fn prop_index(&self, local: &mut Local, terms: &TermStore, t: TermId) -> u32 {
        if let Some(&i) = local.prop_of.get(&t) {
            return i;
        }
        let i = self.prop_from(terms, t);
        Local::note(&mut local.prop_ids, &mut local.prop_of, i, t);
        i
    }

    /// Proposition `b` in the scratch store `terms`, copied there when new; `None` for an index the
    /// table has not given out.
    fn local_prop(&self, local: &mut Local, terms: &mut TermStore, b: usize) -> Option<TermId> {
        if let Some(&Some(t)) = local.prop_ids.get(b) {
            return Some(t);
        }
        let table = self.read();
        let t = terms.import(&table.terms, *table.props.get(b)?);
        drop(table);
        Local::note(&mut local.prop_ids, &mut local.prop_of, b as u32, t);
        Some(t)
    }

    /// Fills `true` of `db` with the propositions `bits`; an error names a bit the table never gave out
    /// (a state of another game).
    pub(crate) fn fill(
        &self,
        local: &mut Local,
        db: &mut Db,
        true_: RelId,
        bits: impl Iterator<Item = usize>,
    ) -> Result<(), super::EngineError> {
        for b in bits {
            let t = self
                .local_prop(local, &mut db.terms, b)
                .ok_or(super::EngineError::Rules(Misbehaviour::UnknownProposition(
                    b,
                )))?;
            db.insert(true_, &[t]);
        }
        Ok(())
    }

    /// The id of move `t` of the scratch store `terms`, numbered when new.
    fn move_index(&self, local: &mut Local, terms: &TermStore, t: TermId) -> u32 {
        if let Some(&i) = local.move_of.get(&t) {
            return i;
        }
        let mut table = self.write();
        let c = table.terms.import(terms, t);
        let n = table.moves.len() as u32;
        let i = *table.move_of.entry(c).or_insert(n);
        if i == n {
            table.moves.push(c);
            let kif = table.terms.kif(c);
            let text = match self.syntax {
                Syntax::Kif => kif.clone(),
                Syntax::Infix => table.terms.infix(c),
            };
            table.move_by_kif.insert(kif.clone().into(), i);
            self.move_kif.set(i as usize, kif);
            self.move_text.set(i as usize, text);
        }
        drop(table);
        Local::note(&mut local.move_ids, &mut local.move_of, i, t);
        i
    }

    /// Move `m` in the scratch store `terms`, copied there when new; `None` for an id the table has not
    /// given out.
    pub(crate) fn local_move(
        &self,
        local: &mut Local,
        terms: &mut TermStore,
        m: RuleMove,
    ) -> Option<TermId> {
        let i = m.0 as usize;
        if let Some(&Some(t)) = local.move_ids.get(i) {
            return Some(t);
        }
        let table = self.read();
        let t = terms.import(&table.terms, *table.moves.get(i)?);
        drop(table);
        Local::note(&mut local.move_ids, &mut local.move_of, m.0, t);
        Some(t)
    }

    /// The legal moves of `role` in `db`, sorted by KIF text.
    pub(crate) fn legal_ids(
        &self,
        local: &mut Local,
        db: &Db,
        legal: RelId,
        role: TermId,
        out: &mut Vec<RuleMove>,
    ) {
        out.clear();
        out.extend(
            moves_of(db, legal, role).map(|t| RuleMove(self.move_index(local, &db.terms, t))),
        );
        out.sort_unstable_by(|a, b| self.move_kif(*a).cmp(&self.move_kif(*b)));
    }

    /// Move `m` as KIF.
    pub(crate) fn move_kif(&self, m: RuleMove) -> Option<&str> {
        self.move_kif.get(m.0 as usize)
    }

    /// Move `m` in the game's syntax.
    pub(crate) fn move_text(&self, m: RuleMove) -> Option<&str> {
        self.move_text.get(m.0 as usize)
    }

    /// The move found so far whose KIF text is `text`.
    pub(crate) fn move_from_kif(&self, text: &str) -> Option<RuleMove> {
        self.read().move_by_kif.get(text).map(|&i| RuleMove(i))
    }

    /// Whether move `m` is the term `t` of the compiled rules' store (which the table's extends).
    pub(crate) fn move_is(&self, m: RuleMove, t: TermId) -> bool {
        self.read().moves.get(m.0 as usize) == Some(&t)
    }

    /// The number of propositions and of moves found so far.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let table = self.read();
        (table.props.len(), table.moves.len())
    }

    /// Runs `f` on the table's store and its propositions, by index.
    pub(crate) fn with_props<R>(&self, f: impl FnOnce(&TermStore, &[TermId]) -> R) -> R {
        let table = self.read();
        f(&table.terms, &table.props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Symbols;

    #[test]
    fn texts_keep_every_index_across_chunk_boundaries() {
        let t = Texts::new();
        for i in [0, 63, 64, 191, 192, 10_000] {
            assert_eq!(t.get(i), None);
            t.set(i, format!("m{i}"));
        }
        for i in [0, 63, 64, 191, 192, 10_000] {
            assert_eq!(t.get(i), Some(format!("m{i}").as_str()));
        }
        assert_eq!(t.get(1), None);
        assert_eq!(Texts::place(64 * 3), (2, 0));
        assert_eq!(Texts::place(64 * 3 - 1), (1, 127));
    }

    #[test]
    fn a_term_made_in_a_scratch_store_gets_one_index_in_every_store() {
        let mut base = TermStore::new(Symbols::new());
        let (n, s) = (base.intern_sym("n"), base.intern_sym("s"));
        let zero = base.int(0);
        let table = Discovered::new(base.clone(), Syntax::Kif);
        // Two scratch stores that made other terms first, so their ids differ.
        let (mut a, mut b) = (base.clone(), base.clone());
        let x = a.intern_sym("x");
        a.constant(x);
        let one_a = a.func(s, &[zero]);
        let ta = a.func(n, &[one_a]);
        let one_b = b.func(s, &[zero]);
        let tb = b.func(n, &[one_b]);
        assert_ne!(ta, tb);
        let (mut la, mut lb) = (Local::default(), Local::default());
        let i = table.prop_index(&mut la, &a, ta);
        assert_eq!(table.prop_index(&mut lb, &b, tb), i);
        assert_eq!(table.prop_index(&mut la, &a, ta), i, "from the cache");
        // And back: a third store that never saw the term gets a copy of it.
        let mut c = base.clone();
        let mut lc = Local::default();
        let tc = table
            .local_prop(&mut lc, &mut c, i as usize)
            .expect("known");
        assert_eq!(c.kif(tc), "(n (s 0))");
        assert_eq!(table.local_prop(&mut lc, &mut c, 5), None);
        table.with_props(|terms, props| {
            assert_eq!(props.len(), 1);
            assert_eq!(terms.kif(props[0]), "(n (s 0))");
        });
    }
}

#[cfg(test)]
mod game_tests {
    use crate::engine::RuleGame;
    use crate::game::Game;

    const COUNTER: &str = "(role a) (init (n 0)) (<= (legal a (step ?x)) (true (n ?x))) \
        (<= (legal a stay) (true (n ?x))) (<= (next (n (s ?x))) (does a (step ?x))) \
        (<= (next (n ?x)) (does a stay) (true (n ?x))) \
        (<= terminal (true (n (s (s (s 0)))))) (goal a 100)";

    fn load(rules: &str) -> RuleGame {
        let p = crate::syntax::parse_kif(rules).expect("parses");
        RuleGame::from_program(&p, "counter").expect("loads")
    }

    #[test]
    fn an_open_game_answers_every_question_on_what_play_found() {
        let g = load(COUNTER);
        assert!(g.finds_propositions_in_play());
        let s0 = g.initial_state();
        assert_eq!((g.num_propositions(), g.num_moves()), (1, 0));
        assert_eq!(g.move_from_kif("(step 0)"), None, "not found yet");
        let mut moves = Vec::new();
        g.legal_moves(&s0, 0, &mut moves);
        let texts: Vec<&str> = moves.iter().map(|m| g.move_kif(*m)).collect();
        assert_eq!(texts, ["(step 0)", "stay"], "sorted by text");
        assert_eq!(g.move_from_kif("(step 0)"), Some(moves[0]));
        assert_eq!(g.show_move(&moves[1]), "stay");
        let s1 = g.next_state(&s0, &moves[..1]);
        assert!(g.holds(&s1, "(n (s 0))") && !g.holds(&s1, "(n 0)"));
        assert!(g.holds(&s0, "(n 0)"));
        assert_eq!(g.state_facts(&s1), ["(n (s 0))"]);
        assert!(g.show_state(&s1).contains("(s 0)"), "{}", g.show_state(&s1));
        // The same state reached again is the same state, with the same key.
        let again = g.next_state(&s1, &moves[1..]);
        assert_eq!(again, s1);
        assert_eq!(g.state_key(&again), g.state_key(&s1));
        assert_ne!(g.state_key(&s0), g.state_key(&s1));
        assert_eq!(g.num_propositions(), 2);
    }

    #[test]
    fn threads_finding_the_same_terms_agree_on_their_ids() {
        let g = load(COUNTER);
        let ends: Vec<(u64, Vec<String>, Vec<String>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let g = &g;
                    scope.spawn(move || {
                        let (mut s, mut moves, mut played) =
                            (g.initial_state(), Vec::new(), Vec::new());
                        let mut turn = 0;
                        while !g.is_terminal(&s) {
                            g.legal_moves(&s, 0, &mut moves);
                            // Each thread stays in different states, so they find terms in other orders.
                            let m = moves[usize::from((turn + t) % 3 == 0)];
                            played.push(g.move_kif(m).to_string());
                            s = g.next_state(&s, &[m]);
                            turn += 1;
                        }
                        let mut distinct = played;
                        distinct.sort();
                        distinct.dedup();
                        (g.state_key(&s), g.state_facts(&s), distinct)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("no panic"))
                .collect()
        });
        for e in &ends {
            assert_eq!(e.0, ends[0].0);
            assert_eq!(e.1, ["(n (s (s (s 0))))"]);
            for m in &e.2 {
                assert_eq!(g.move_kif(g.move_from_kif(m).expect("found")), m);
            }
        }
        assert_eq!(g.num_propositions(), 4);
    }

    #[test]
    fn a_game_the_analysis_bounds_stays_closed() {
        let g = load(
            "(role a) (init (n 0)) (<= (legal a noop) (true (n ?x))) \
             (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (true (n (s 0)))) (goal a 100)",
        );
        // `(n (s 0))` leads the relaxed counter on forever too: it has no `terminal` either.
        assert!(g.finds_propositions_in_play());
        let g = load(
            "(role a) (init (n 0)) (<= (legal a noop) (true (n ?x))) (<= (next (n 1)) (true (n 0))) \
             (<= terminal (true (n 1))) (goal a 100)",
        );
        assert!(!g.finds_propositions_in_play());
    }
}
