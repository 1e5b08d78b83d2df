//! Stage 4: [`RuleGame`], a [`Game`] whose rules are a lowered program.
//!
//! The main entry point is [`RuleGame::from_program`]. At load it plans the program, evaluates the
//! relations that do not depend on the state once, and runs a *relaxed* fixpoint (`engine::analysis`:
//! negation ignored, `true` fed from `init` and `next`, `does` from `legal`) which over-approximates
//! everything reachable:
//! its `true` facts are the base propositions (one bit each of a [`BitState`]) and its `legal` facts are the
//! moves, interned as [`RuleMove`] ids numbered in the byte order of their KIF text, so a sorted id list
//! is a sorted move list. `base` declarations, when present, are added to the propositions. When that
//! fixpoint runs away (a counter of nested terms, which it grows past `terminal`), the game loads in
//! *open mode* instead (`engine::open`): propositions and moves are numbered as play finds them, move ids
//! are in order of discovery (the legal moves still come out sorted by text) and states are bitsets as
//! long as their highest bit needs.
//!
//! Evaluation borrows a scratch database from a small pool (so `&self` methods work from several threads)
//! which remembers the last state it evaluated: asking for every role's legal moves and then the next
//! state evaluates the state's relations once.
//!
//! Per-state work is kept small, each step exact:
//! - views with one rule that are computed per state are unfolded into their readers
//!   (`rewrite::unfold_views`), so a reader that fixes some arguments evaluates only those;
//! - frame rules (`next(f(X)) :- true(f(X))` with at most comparisons of `X`) become a mask of the
//!   propositions they carry over: the next state starts as the state within the mask;
//! - the strata that only `goal` reads are evaluated when a goal is asked, not in every state;
//! - rules written for a top-down prover (chess asks "is this square attacked, ignoring that cell?"
//!   for a few cells, bottom-up means every cell) run demand-driven (`engine::demand`, the magic-sets
//!   rewrite). [`Evaluation::Auto`] decides at load: the bottom-up rules stay unless, in the initial
//!   state and the one after its first joint move, they fail within a second or derive more than
//!   20,000 facts and four times what the demand-driven rules derive. When even the relations that
//!   do not depend on the state cannot be computed in full at load (within 2 s and a million facts:
//!   hex's `isList` of every list of up to 25 cells), every derived relation runs demand-driven.
//!
//! Rules chosen here (documented because GDL leaves them open):
//! - `mover`: the only role with more than one legal move; when every role has exactly one, the only role
//!   whose move is not named `noop`; otherwise `None`.
//! - `dynamics`: `TurnTaking` when a base proposition `f(r)` of arity one ranges exactly over the roles
//!   (a `control` fact), else `Simultaneous`.
//! - `zero_sum`: two roles and every possible goal value `v` of one role has `100 - v` among the other's.
//! - The `Game` trait cannot return errors: a state whose evaluation fails (a runaway) counts as terminal
//!   with no legal moves and goal 0; the `try_` methods report the error.

mod build;

use std::sync::Mutex;

use hashbrown::HashMap;

use crate::datalog::eval::Db;
use crate::datalog::ir::{dynamic_relations, Program, RelId};
use crate::datalog::plan::{plan_sized, Phase, Plan};
use crate::datalog::terms::{TermId, TermStore};
use crate::datalog::Misbehaviour;
use crate::datalog::{EngineError, Limits};
use crate::engine::analysis::{
    self, flatten, split_goal_strata, take_frame_rules, zero_sum, Analysis, Flat, Keywords,
    Numbered,
};
use crate::engine::bitstate::BitState;
use crate::engine::facade::{Choice, MoveTexts};
use crate::engine::moves::moves_of;
pub use crate::engine::moves::RuleMove;
use crate::engine::open::{Discovered, Local};
use crate::game::{Dynamics, Game, GameInfo, Goal, RoleIndex};
use crate::syntax::ast;

struct Scratch {
    db: Db,
    /// The state `db` holds, when `valid`; kept as a buffer otherwise so that switching states does
    /// not allocate.
    state: BitState,
    valid: bool,
    /// Whether the strata only goals read have been evaluated for `state`.
    goals_done: bool,
    /// In open mode, which of `db`'s terms are which propositions and moves (empty otherwise).
    local: Local,
}

/// A game played by evaluating its rules (see the module documentation).
pub struct RuleGame {
    info: GameInfo,
    /// How `show_state` lays out a board (read from the rules).
    layout: crate::print::board::Layout,
    prog: Program,
    plan: Plan,
    base: Db,
    pool: Mutex<Vec<Scratch>>,
    true_: RelId,
    flat: Flat,
    does: RelId,
    next: RelId,
    legal: RelId,
    goal: Option<RelId>,
    terminal: Option<RelId>,
    roles: Vec<TermId>,
    /// The propositions and moves of the analysis, numbered, and the moves' texts.
    numbered: Numbered,
    move_texts: MoveTexts,
    initial: BitState,
    noop: Option<TermId>,
    /// The state strata to evaluate in every state (everything but what only `goal` reads), and those
    /// evaluated when a goal is asked.
    core_strata: Vec<bool>,
    goal_strata: Vec<bool>,
    /// The propositions that frame rules (`next(f(X)) :- true(f(X))`, with filters on `X` only) carry
    /// over: the next state has every proposition of the state within this mask, without evaluating
    /// those rules.
    frame_mask: BitState,
    /// Whether some rule derives into a relation the state fills (then filling checks duplicates).
    inputs_derived: bool,
    /// Whether the rules run in their demand-driven form.
    demand: bool,
    /// In open mode (the relaxed analysis could not bound the propositions), the propositions and
    /// moves found so far; `props`, `moves` and the maps beside them are then empty, `flat` splits
    /// nothing and `frame_mask` carries nothing over.
    open: Option<Discovered>,
}

/// How the evaluator runs the rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Evaluation {
    /// Bottom-up, unless the demand-driven form costs far less in the first states (the default).
    #[default]
    Auto,
    /// Every relation computed in full in each state.
    BottomUp,
    /// Relations computed only for the arguments their readers ask about (the magic-sets rewrite),
    /// when the rewrite changes anything.
    Demand,
}

impl RuleGame {
    /// Records that the game is not zero-sum after all: a terminal state was found whose two goals
    /// do not add up to 100 (the loader's play finds them; the analysis reads only each role's
    /// possible values).
    pub fn not_zero_sum(&mut self) {
        self.info.zero_sum = false;
    }

    /// The lowered program.
    pub fn program(&self) -> &Program {
        &self.prog
    }

    /// The evaluation plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What the load-time analysis found (roles, when each relation is computed, propositions,
    /// moves), printable: `ggp-run stage --stage analysed`.
    pub fn analysis(&self) -> crate::engine::analysis::AnalysisDisplay<'_> {
        crate::engine::analysis::AnalysisDisplay {
            info: &self.info,
            terms: &self.base.terms,
            prog: &self.prog,
            plan: &self.plan,
            props: &self.numbered.props,
            moves: &self.numbered.moves,
            open: self.open.is_some(),
            demand: self.demand,
        }
    }

    /// The number of base propositions (bits of a state).
    pub fn num_propositions(&self) -> usize {
        match &self.open {
            None => self.numbered.props.len(),
            Some(o) => o.counts().0,
        }
    }

    /// The number of distinct moves.
    pub fn num_moves(&self) -> usize {
        match &self.open {
            None => self.numbered.moves.len(),
            Some(o) => o.counts().1,
        }
    }

    /// Runs `f` on a scratch database holding the evaluation of `state`.
    fn with_state<R>(
        &self,
        state: &BitState,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_state_goals(state, false, f)
    }

    /// [`RuleGame::with_state`], with the strata only goals read evaluated too when `goals`.
    fn with_state_goals<R>(
        &self,
        state: &BitState,
        goals: bool,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_scratch(state, goals, |db, _| f(db))
    }

    /// [`RuleGame::with_state_goals`], with the scratch database's open-mode [`Local`] lent too.
    fn with_scratch<R>(
        &self,
        state: &BitState,
        goals: bool,
        f: impl FnOnce(&mut Db, &mut Local) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let popped = self.pool.lock().map(|mut p| p.pop()).unwrap_or(None);
        let mut s = popped.unwrap_or_else(|| Scratch {
            db: self.base.clone(),
            state: state.clone(),
            valid: false,
            goals_done: false,
            local: Local::default(),
        });
        let r = (|| {
            if !s.valid || s.state != *state {
                s.valid = false;
                s.db.clear_from(&self.plan, Phase::State);
                match &self.open {
                    Some(open) => open.fill(&mut s.local, &mut s.db, self.true_, state.ones())?,
                    None => self.fill(&mut s.db, state),
                }
                s.goals_done = false;
                s.db.run_only(&self.plan, Phase::State, &self.core_strata)?;
                s.state.clone_from(state);
                s.valid = true;
            }
            if goals && !s.goals_done {
                s.db.run_only(&self.plan, Phase::State, &self.goal_strata)?;
                s.goals_done = true;
            }
            f(&mut s.db, &mut s.local)
        })();
        // After an error, the term that broke the depth limit stays in the store, where the next
        // evaluation would find it instead of making (and checking) it, and half-derived facts stay
        // in the relations: the scratch is dropped and a fresh copy of `base` takes its place, so
        // that the same question fails the same way every time, in either mode.
        if r.is_ok() {
            if let Ok(mut p) = self.pool.lock() {
                p.push(s);
            }
        }
        r
    }

    /// Fills the state relations of `db` with `state`'s propositions (closed mode).
    #[inline]
    fn fill(&self, db: &mut Db, state: &BitState) {
        for b in state.ones() {
            if self.inputs_derived {
                db.insert(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert(self.true_, &[self.numbered.props[b]]);
                }
            } else {
                // Each proposition is one fact of one relation, and nothing else adds to them.
                db.insert_new(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert_new(self.true_, &[self.numbered.props[b]]);
                }
            }
        }
    }

    fn legal_ids(
        db: &Db,
        legal: RelId,
        role: TermId,
        map: &HashMap<TermId, u32>,
        out: &mut Vec<RuleMove>,
    ) {
        out.clear();
        out.extend(
            moves_of(db, legal, role)
                .filter_map(|t| map.get(&t))
                .map(|&m| RuleMove(m)),
        );
        out.sort_unstable();
    }

    /// The legal moves of `role`, sorted.
    pub fn try_legal(
        &self,
        state: &BitState,
        role: RoleIndex,
        out: &mut Vec<RuleMove>,
    ) -> Result<(), EngineError> {
        let r = *self
            .roles
            .get(role)
            .ok_or(EngineError::Rules(Misbehaviour::NoRole(role)))?;
        self.with_scratch(state, false, |db, local| {
            match &self.open {
                None => Self::legal_ids(db, self.legal, r, &self.numbered.move_of, out),
                Some(open) => open.legal_ids(local, db, self.legal, r, out),
            }
            Ok(())
        })
    }

    /// Whether the state is terminal.
    pub fn try_terminal(&self, state: &BitState) -> Result<bool, EngineError> {
        match self.terminal {
            None => Ok(false),
            Some(t) => self.with_state(state, |db| Ok(!db.rel(t).is_empty())),
        }
    }

    /// Every goal value the rules give `role` in `state`, sorted (normally exactly one).
    pub fn goal_values(&self, state: &BitState, role: RoleIndex) -> Result<Vec<Goal>, EngineError> {
        let (Some(g), Some(&r)) = (self.goal, self.roles.get(role)) else {
            return Ok(Vec::new());
        };
        self.with_state_goals(state, true, |db| {
            let rel = db.rel(g);
            let mut v: Vec<Goal> = (0..rel.len())
                .map(|i| rel.row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| db.terms.as_int(row[1]).and_then(|x| Goal::try_from(x).ok()))
                .collect();
            v.sort_unstable();
            v.dedup();
            Ok(v)
        })
    }

    /// The state reached by a joint move.
    pub fn try_next(&self, state: &BitState, joint: &[RuleMove]) -> Result<BitState, EngineError> {
        if joint.len() != self.roles.len() {
            return Err(EngineError::Rules(Misbehaviour::JointSize {
                expected: self.roles.len(),
                got: joint.len(),
            }));
        }
        if let Some(open) = &self.open {
            return self.with_scratch(state, false, |db, local| {
                Self::open_next(self, open, db, local, joint)
            });
        }
        self.with_state(state, |db| {
            db.clear_from(&self.plan, Phase::Move);
            for (r, m) in joint.iter().enumerate() {
                let mv = *self
                    .numbered
                    .moves
                    .get(m.0 as usize)
                    .ok_or(EngineError::Rules(Misbehaviour::UnknownMove(m.0)))?;
                db.insert(self.does, &[self.roles[r], mv]);
            }
            db.run(&self.plan, Phase::Move)?;
            let mut s = state.and(&self.frame_mask);
            let unforeseen = |db: &Db, fact: Option<TermId>| {
                EngineError::Rules(Misbehaviour::Unforeseen(
                    fact.map_or_else(|| "a fact".to_string(), |t| db.terms.kif_head(t, 500)),
                ))
            };
            let rel = db.rel(self.next);
            for i in 0..rel.len() {
                let fact = rel.row(i)[0];
                let b = self
                    .numbered
                    .prop_of
                    .get(&fact)
                    .ok_or_else(|| unforeseen(db, Some(fact)))?;
                s.set(*b as usize);
            }
            for &(r, f) in &self.flat.next_rels {
                let rel = db.rel(r);
                for i in 0..rel.len() {
                    let row = rel.row(i);
                    let t = if row.is_empty() {
                        db.terms.find_constant(f)
                    } else {
                        db.terms.find_func(f, row)
                    };
                    let b = t
                        .and_then(|t| self.numbered.prop_of.get(&t))
                        .ok_or_else(|| unforeseen(db, t))?;
                    s.set(*b as usize);
                }
            }
            Ok(s)
        })
    }

    /// [`RuleGame::try_next`] in open mode: every `next` fact numbered, found or new.
    fn open_next(
        &self,
        open: &Discovered,
        db: &mut Db,
        local: &mut Local,
        joint: &[RuleMove],
    ) -> Result<BitState, EngineError> {
        db.clear_from(&self.plan, Phase::Move);
        for (r, m) in joint.iter().enumerate() {
            let mv = open
                .local_move(local, &mut db.terms, *m)
                .ok_or(EngineError::Rules(Misbehaviour::UnknownMove(m.0)))?;
            db.insert(self.does, &[self.roles[r], mv]);
        }
        db.run(&self.plan, Phase::Move)?;
        let rel = db.rel(self.next);
        Ok(BitState::from_ones((0..rel.len()).map(|i| {
            open.prop_index(local, &db.terms, rel.row(i)[0]) as usize
        })))
    }

    /// Runs `f` on the store of the propositions' terms and the propositions, by index.
    fn with_props<R>(&self, f: impl FnOnce(&TermStore, &[TermId]) -> R) -> R {
        match &self.open {
            None => f(&self.base.terms, &self.numbered.props),
            Some(open) => open.with_props(f),
        }
    }

    /// The state's facts (the arguments of `true`) as KIF, sorted by bytes.
    pub fn state_facts(&self, state: &BitState) -> Vec<String> {
        let mut v: Vec<String> = self.with_props(|terms, props| {
            state
                .ones()
                .filter_map(|b| props.get(b).map(|t| terms.kif(*t)))
                .collect()
        });
        v.sort();
        v
    }

    /// A move as KIF.
    pub fn move_kif(&self, m: RuleMove) -> &str {
        match &self.open {
            None => self.move_texts.kif.get(m.0 as usize).map(|s| s.as_str()),
            Some(open) => open.move_kif(m),
        }
        .unwrap_or("?")
    }

    /// The move whose KIF text is `text` (exactly as printed), if the game has one (in open mode, if
    /// play has found it).
    pub fn move_from_kif(&self, text: &str) -> Option<RuleMove> {
        if let Some(open) = &self.open {
            return open.move_from_kif(text);
        }
        self.move_texts
            .kif
            .binary_search_by(|k| k.as_str().cmp(text))
            .ok()
            .map(|i| RuleMove(i as u32))
    }

    fn is_noop(&self, m: RuleMove) -> bool {
        let Some(noop) = self.noop else { return false };
        match &self.open {
            None => self.numbered.moves.get(m.0 as usize) == Some(&noop),
            Some(open) => open.move_is(m, noop),
        }
    }

    /// Whether the proposition with this KIF text is true in `state`.
    pub fn holds(&self, state: &BitState, kif: &str) -> bool {
        self.with_props(|terms, props| {
            props
                .iter()
                .position(|t| terms.kif(*t) == kif)
                .is_some_and(|b| state.get(b))
        })
    }
}

impl Game for RuleGame {
    type State = BitState;
    type Move = RuleMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> BitState {
        self.initial.clone()
    }

    fn is_terminal(&self, state: &BitState) -> bool {
        self.try_terminal(state).unwrap_or(true)
    }

    fn state_key(&self, state: &BitState) -> u64 {
        state.key()
    }

    fn legal_moves(&self, state: &BitState, role: RoleIndex, out: &mut Vec<RuleMove>) {
        if self.try_legal(state, role, out).is_err() {
            out.clear();
        }
    }

    fn next_state(&self, state: &BitState, joint: &[RuleMove]) -> BitState {
        self.try_next(state, joint)
            .unwrap_or_else(|_| state.clone())
    }

    fn goal(&self, state: &BitState, role: RoleIndex) -> Goal {
        self.goal_values(state, role)
            .ok()
            .and_then(|v| v.last().copied())
            .unwrap_or(0)
    }

    fn mover(&self, state: &BitState) -> Option<RoleIndex> {
        if self.is_terminal(state) {
            return None;
        }
        let mut buf = Vec::new();
        crate::engine::facade::mover_of(self.roles.len(), |r| {
            self.legal_moves(state, r, &mut buf);
            Choice::of(buf.len(), || self.is_noop(buf[0]))
        })
    }

    fn show_move(&self, mv: &RuleMove) -> String {
        match &self.open {
            None => self.move_texts.own.get(mv.0 as usize).map(|s| s.as_str()),
            Some(open) => open.move_text(*mv),
        }
        .map_or_else(|| format!("?{}", mv.0), str::to_string)
    }

    fn move_kif(&self, mv: &RuleMove) -> String {
        RuleGame::move_kif(self, *mv).to_string()
    }

    fn state_kif(&self, state: &BitState) -> Vec<String> {
        self.state_facts(state)
    }

    fn base_propositions(&self) -> Vec<String> {
        // An open-mode game numbers its propositions as play finds them: no fixed list to read.
        if self.open.is_some() {
            return Vec::new();
        }
        self.with_props(|terms, props| props.iter().map(|t| terms.kif(*t)).collect())
    }

    fn state_words<'a>(&self, state: &'a BitState) -> &'a [u64] {
        if self.open.is_some() {
            return &[];
        }
        state.words()
    }

    fn show_state(&self, state: &BitState) -> String {
        self.drawing(state).unwrap_or_default().to_text()
    }

    fn drawing(&self, state: &BitState) -> Option<crate::drawing::Drawing> {
        Some(self.with_props(|terms, props| {
            let facts: Vec<TermId> = state.ones().filter_map(|b| props.get(b).copied()).collect();
            crate::print::board::draw_state(terms, &facts, props, self.prog.syntax, &self.layout)
        }))
    }
}
