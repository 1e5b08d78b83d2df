//! The grounded propositional network: the fast path for classic GDL.
//!
//! The main entry points are [`ground()`] (grounding and compilation, see [`ground`](mod@ground)) and
//! [`NetGame::from_program`], a [`Game`] whose states are bitsets over the base propositions and whose
//! legal moves, next state, goals and terminal flag come from one pass over a levelised network.
//!
//! Each node holds a `u64`: one bit per independent game. [`NetGame`]'s `Game` methods use lane 0;
//! [`NetGame::batch_playouts`] plays 64 random playouts at once through the same network. Full passes
//! over the network run as machine code, compiled on a thread of its own once the game has loaded (see
//! `passes`), or on the interpreter, the reference ([`NetGame::set_compiled`]).
//!
//! Evaluation uses a per-thread scratch (node values and the state they were computed for), so asking for
//! each role's legal moves, the terminal flag and the goals of one state evaluates the network once, and
//! [`Game::random_playout`] allocates nothing per move. In a game whose playouts propagate changes, the
//! queries are answered from the propagation's words instead, moved from state to state by the
//! propositions that differ (see `view`).
//!
//! Moves and states print exactly as [`crate::engine::RuleGame`] prints them (the same KIF text, moves
//! numbered in the byte order of their KIF text), so [`replay`] checks the network against the same traces.

mod blocks;
mod captures;
mod greedy;
pub mod ground;
mod lanes;
mod legal_sets;
mod method;
mod native;
mod passes;
mod playout;
mod print;
mod prop;
mod replay;
mod steps;
mod turn_writes;
mod view;
mod wins;

use rayon::slice::ParallelSliceMut;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rand::rngs::SmallRng;

/// Replays a reference trace on any engine, this one included.
pub use crate::engine::conformance::replay;
use crate::engine::facade::{self, dynamics_of, mover_of, Choice, MoveTexts};
use crate::engine::BitState;
use crate::game::{Game, GameInfo, Goal, RoleIndex};
use crate::syntax::ast;
pub use ground::{
    ground, ground_with, Budget, Gate, Grounded, Limit, LoadReport, NetLit, NetworkError,
    OverBudget, Strategy,
};
use legal_sets::LegalSets;
use native::{NativePasses, PassGate};

/// A move: its index in the game's moves sorted by KIF text (the same ids as `RuleGame`'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NetMove(pub u32);

/// Node values of the game last evaluated on this thread.
struct Scratch {
    game: u64,
    state: Vec<u64>,
    valid: bool,
    vals: Vec<u64>,
    moves: Vec<u32>,
    /// Node values of the last full-pass playout's start state (game, state, values).
    snap_game: u64,
    snap_state: Vec<u64>,
    snap: Vec<u64>,
    /// The lanes of a greedy playout's step, kept while its moves are tried (see [`greedy`]).
    saved: Vec<u64>,
    /// A greedy playout's simultaneous steps (see [`greedy`]).
    sim: greedy::Simultaneous,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch {
        game: u64::MAX,
        state: Vec::new(),
        valid: false,
        vals: Vec::new(),
        moves: Vec::new(),
        snap_game: u64::MAX,
        snap_state: Vec::new(),
        snap: Vec::new(),
        saved: Vec::new(),
        sim: greedy::Simultaneous::new(),
    }) };
}

/// Packed node words of the game last propagated on this thread (see [`prop`]).
struct PropScratch {
    game: u64,
    words: Vec<u32>,
    queue: Vec<prop::Change>,
    /// Each role's legal moves (see [`LegalSets`]), and room to combine a role's groups.
    lbits: Vec<u64>,
    comb: Vec<u64>,
    chosen: Vec<u32>,
    /// The pending propositions' words, read before any of them flips.
    flips: Vec<u64>,
    /// The `does` inputs now set, one per role (`u32::MAX`: none).
    played: Vec<u32>,
    /// The words of the last playout's start state (`does` inputs off) and that state: playouts
    /// usually start from the same state, and copying the words back is cheaper than propagating the
    /// way back from where the last playout ended.
    snap: Vec<u32>,
    lsnap: Vec<u64>,
    snap_state: Vec<u64>,
    /// The state the words hold (no `does` input set) while `game` is this game's (see [`view`]).
    at: Vec<u64>,
    /// Whether the goal-only gates hold their values for `at`.
    goals_fresh: bool,
    /// The `does` inputs a winning playout tries at a step.
    tries: Vec<u32>,
    /// A blocking playout's way back over its last step: the inputs set and the propositions flipped,
    /// the moves of that step's mover left to try, and each win seen after the step (the winning
    /// move's support and the part of it that the step changed).
    back_inputs: Vec<u32>,
    back_flips: Vec<u64>,
    cands: Vec<u32>,
    threats: Vec<u64>,
    /// The proposition nodes flipped together: a turn's writes (see [`turn_writes::TurnWrites`]), a
    /// step's pending propositions, the move to another state.
    flip_nodes: Vec<u32>,
    /// Whether the move part's words and the pending bits are stale: turns played by their writes
    /// flip through the state part alone (see [`prop::Fanout::flip_state`]); whatever reads or
    /// sets the move part syncs it first ([`NetGame::sync_moves`]).
    moves_stale: bool,
    /// Whether they were stale in the saved words (`snap`).
    snap_stale: bool,
    /// The words a step's `does` inputs wrote, to be put back (see
    /// [`prop::Fanout::flip_all_undoable`]), and the bits they may have toggled, as they were.
    undo: Vec<u64>,
    bits_before: Vec<u64>,
}

thread_local! {
    static PROP: RefCell<PropScratch> = const { RefCell::new(PropScratch {
        game: u64::MAX,
        words: Vec::new(),
        queue: Vec::new(),
        lbits: Vec::new(),
        comb: Vec::new(),
        chosen: Vec::new(),
        flips: Vec::new(),
        played: Vec::new(),
        snap: Vec::new(),
        lsnap: Vec::new(),
        snap_state: Vec::new(),
        at: Vec::new(),
        goals_fresh: false,
        tries: Vec::new(),
        back_inputs: Vec::new(),
        back_flips: Vec::new(),
        cands: Vec::new(),
        threats: Vec::new(),
        flip_nodes: Vec::new(),
        moves_stale: false,
        snap_stale: false,
        undo: Vec::new(),
        bits_before: Vec::new(),
    }) };
}

/// How propagating playouts play a step: chosen at load by timing (see
/// `NetGame::fastest_method`); the playouts are the same every way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct StepWay {
    /// A turn whose writes are known is played by them (see `turn_writes`); else every step takes
    /// the long way, its joint move propagated through the move part.
    pub writes: bool,
    /// A step taken the long way puts back the words its joint move wrote, instead of leaving the
    /// move set until the next step's moves replace it.
    pub undo: bool,
}

impl StepWay {
    /// The way a game plays until its load's timing has chosen (turns by their writes).
    pub(super) const UNTIMED: StepWay = StepWay {
        writes: true,
        undo: false,
    };
}

/// How [`Game::random_playout`] evaluates the network (both give the same playouts for the same
/// generator; only the speed differs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayoutMethod {
    /// A levelised pass over every state gate at each step, then over the move gates.
    FullPass,
    /// Forward propagation of the propositions that changed (per-gate counters of false inputs).
    Propagate,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A game played on its grounded network (see the module documentation).
pub struct NetGame {
    info: GameInfo,
    /// How `show_state` lays out a board (read from the rules; the default for a bare network).
    layout: crate::print::board::Layout,
    /// Shared with the thread that compiles the passes (see `passes`).
    net: std::sync::Arc<Grounded>,
    id: u64,
    words: usize,
    move_texts: MoveTexts,
    prop_kif: Vec<String>,
    /// `does_of[role][move]`: the `does` node, or `u32::MAX`.
    does_of: Vec<Vec<u32>>,
    initial: BitState,
    noop: Option<u32>,
    /// Per role, the index of its no-op among its legal outputs, or `u32::MAX`.
    noop_out: Vec<u32>,
    fan: prop::Fanout,
    /// How change propagation keeps each role's legal moves (see [`LegalSets`]).
    sets: LegalSets,
    method: PlayoutMethod,
    /// The state gates of the playout cone (goal-only gates left out), then its move gates, for
    /// [`PlayoutMethod::FullPass`].
    pass: Vec<PassGate>,
    pass_state: usize,
    /// The gates that only goals read, outside `fan`'s cone (see [`view`]).
    goal_gates: Vec<u32>,
    /// The winning propositions and the moves that may make them true, found when first asked for.
    wins: std::sync::OnceLock<wins::Wins>,
    /// Which moves may block a win, found when a blocking playout first asks (`None`: too large).
    blocks: std::sync::OnceLock<Option<blocks::Blocks>>,
    /// The turns propagation plays by their writes alone, found when a playout first asks.
    turn_writes: std::sync::OnceLock<turn_writes::TurnWrites>,
    /// The full passes as machine code and the playout method chosen with them, once compiled (see
    /// `passes`); shared with the thread that compiles them.
    native: std::sync::Arc<std::sync::OnceLock<Compiled>>,
    /// Whether [`NetGame::set_playout_method`] chose the method (the compiled passes' choice is then
    /// not taken).
    method_fixed: bool,
    /// Whether [`NetGame::set_step_undo`] chose how propagating playouts take their steps' moves
    /// back (the compiled passes' choice is then not taken).
    undo_fixed: Option<bool>,
    /// Whether [`NetGame::set_turns_by_writes`] chose whether propagation plays turns by their
    /// writes (the compiled passes' choice is then not taken).
    writes_fixed: Option<bool>,
}

/// When a game's passes are compiled (see `passes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compile {
    /// While it loads.
    Now,
    /// On a thread of their own, while the game plays interpreted.
    Background,
    /// Never: the game plays interpreted (the reference).
    Never,
}

/// The passes as compiled (`None`: interpreted) and the playout method chosen with them.
#[derive(Debug)]
struct Compiled {
    passes: Option<NativePasses>,
    method: PlayoutMethod,
    /// How propagating playouts play a step (see [`NetGame::step_way`]).
    way: StepWay,
    /// 64 playouts at once against one at a time by `method`, in playouts a second, measured with the
    /// compiled passes (`None` without them).
    batch_speedup: Option<f64>,
    /// Per role and legal output (as `net.legal`), the compiled part of the step specialised to that
    /// move (`steps::MoveStep::NONE`: the general one); empty without compiled passes.
    steps: Vec<Vec<steps::MoveStep>>,
}

impl Compiled {
    /// The record of a game whose passes run interpreted: no passes, no specialised steps.
    fn interpreted(method: PlayoutMethod, way: StepWay) -> Compiled {
        Compiled {
            passes: None,
            method,
            way,
            batch_speedup: None,
            steps: Vec::new(),
        }
    }
}

/// A part of the network that a full pass evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The state gates of the playout cone (legal, terminal and what `next` reads; not goal-only gates).
    State = 0,
    /// The move gates (everything that reads `does`).
    Moves = 1,
    /// Every state gate, goal-only gates included.
    AllState = 2,
    /// The step after the move gates: each proposition set to its `next` (all read before any is
    /// written, through the values past the network's nodes, `vals[num_nodes + p]`, which must be
    /// there) and the inputs cleared.
    Next = 3,
}

/// One pass over `gates`; [`NetGame::from_grounded`] checked each gate's node and inputs against the
/// network, and `vals` must hold `min_len` values.
#[inline]
fn eval_pass(gates: &[PassGate], inputs: &[NetLit], vals: &mut [u64], min_len: usize) {
    if vals.len() < min_len {
        return;
    }
    for g in gates {
        let mut acc = !0u64;
        // SAFETY: `validate` proved `start <= end <= inputs.len()` and every input node below the gate's
        // node, which is below `min_len <= vals.len()`.
        unsafe {
            for &l in inputs.get_unchecked(g.start as usize..g.end as usize) {
                acc &= *vals.get_unchecked((l >> 1) as usize) ^ 0u64.wrapping_sub(u64::from(l & 1));
            }
            *vals.get_unchecked_mut(g.node as usize) = acc ^ g.negate;
        }
    }
}

#[inline(always)]
fn lit_val(vals: &[u64], l: NetLit) -> u64 {
    vals[(l >> 1) as usize] ^ 0u64.wrapping_sub(u64::from(l & 1))
}

/// One pass over `gates`, whose first node is `first`.
///
/// [`NetGame::from_grounded`] checks once that every gate reads only nodes before its own and that its
/// input range lies within `inputs`, so the hot loop indexes without bounds checks.
#[inline]
fn eval(gates: &[Gate], inputs: &[NetLit], vals: &mut [u64], first: usize) {
    if vals.len() < first + gates.len() {
        return;
    }
    for (i, g) in gates.iter().enumerate() {
        let mut acc = !0u64;
        // SAFETY: `validate` proved `start <= end <= inputs.len()` and every input node `< first + i`,
        // and `vals` holds at least `first + gates.len()` nodes (checked above).
        unsafe {
            for &l in inputs.get_unchecked(g.start as usize..g.end as usize) {
                acc &= *vals.get_unchecked((l >> 1) as usize) ^ 0u64.wrapping_sub(u64::from(l & 1));
            }
            *vals.get_unchecked_mut(first + i) = acc ^ g.negate;
        }
    }
}

/// Checks the invariants [`eval`] relies on.
fn validate(n: &Grounded) -> Result<(), NetworkError> {
    let bad = |what: &str| {
        Err(NetworkError::Unsupported(format!(
            "malformed network: {what}"
        )))
    };
    if n.first_gate + n.gates.len() != n.num_nodes
        || n.state_gates > n.gates.len()
        || 1 + n.props.len() > n.first_gate
    {
        return bad("node counts");
    }
    // Building the game indexes these by proposition, role and move.
    if n.initial.iter().any(|&p| p as usize >= n.props.len()) {
        return bad("an initial proposition outside the propositions");
    }
    if n.next.len() != n.props.len() {
        return bad("not one next output per proposition");
    }
    if n.legal.len() != n.roles.len() || n.goals.len() != n.roles.len() {
        return bad("not one set of legal and goal outputs per role");
    }
    if n.legal
        .iter()
        .flatten()
        .any(|o| o.mv as usize >= n.moves.len())
    {
        return bad("a legal output for a move outside the moves");
    }
    for (i, g) in n.gates.iter().enumerate() {
        if g.start > g.end || g.end as usize > n.inputs.len() {
            return bad("input range");
        }
        if n.inputs[g.start as usize..g.end as usize]
            .iter()
            .any(|&l| (l >> 1) as usize >= n.first_gate + i)
        {
            return bad("a gate reads a later node");
        }
    }
    let outs = n
        .legal
        .iter()
        .flatten()
        .map(|o| o.lit)
        .chain(n.goals.iter().flatten().map(|x| x.1))
        .chain(n.next.iter().copied())
        .chain([n.terminal]);
    let does_ok = n
        .legal
        .iter()
        .flatten()
        .all(|o| o.does == u32::MAX || (o.does as usize) < n.first_gate);
    if !does_ok || outs.into_iter().any(|l| (l >> 1) as usize >= n.num_nodes) {
        return bad("an output outside the network");
    }
    Ok(())
}

impl NetGame {
    /// Grounds, compiles and wraps a parsed program with the default [`Budget`].
    pub fn from_program(p: &ast::Program, name: &str) -> Result<NetGame, NetworkError> {
        NetGame::from_program_within(p, name, Budget::default())
    }

    /// [`NetGame::from_program`] within `budget`.
    pub fn from_program_within(
        p: &ast::Program,
        name: &str,
        budget: Budget,
    ) -> Result<NetGame, NetworkError> {
        NetGame::from_program_compiling(p, name, budget, Compile::Background)
    }

    /// [`NetGame::from_program_within`] with passes that are never compiled: the interpreter, the
    /// reference (as [`NetGame::set_compiled`]`(false)` leaves it, without compiling first).
    pub fn from_program_interpreted(
        p: &ast::Program,
        name: &str,
        budget: Budget,
    ) -> Result<NetGame, NetworkError> {
        NetGame::from_program_compiling(p, name, budget, Compile::Never)
    }

    fn from_program_compiling(
        p: &ast::Program,
        name: &str,
        budget: Budget,
        compile: Compile,
    ) -> Result<NetGame, NetworkError> {
        let net = std::sync::Arc::new(ground_with(p, budget)?);
        let mut game = NetGame::from_grounded_compiling(net, name, compile)?;
        game.layout = crate::print::board::layout_of(p);
        Ok(game)
    }

    /// Wraps a grounded network. Its full passes are compiled to machine code on a thread of their
    /// own while the game plays interpreted (see `passes`; [`NetGame::wait_compiled`] waits for them).
    pub fn from_grounded(net: Grounded, name: &str) -> Result<NetGame, NetworkError> {
        NetGame::from_grounded_compiling(std::sync::Arc::new(net), name, Compile::Background)
    }

    fn from_grounded_compiling(
        net: std::sync::Arc<Grounded>,
        name: &str,
        compile: Compile,
    ) -> Result<NetGame, NetworkError> {
        validate(&net)?;
        let terms = &net.terms;
        let words = net.props.len().div_ceil(64).max(1);
        let mut initial = BitState::with_words(words);
        for &p in &net.initial {
            initial.set(p as usize);
        }
        let move_texts = MoveTexts::of(terms, &net.moves, net.syntax);
        let prop_kif = net.props.iter().map(|t| terms.kif(*t)).collect();
        let mut does_of = vec![vec![u32::MAX; net.moves.len()]; net.roles.len()];
        for (r, l) in net.legal.iter().enumerate() {
            for o in l {
                does_of[r][o.mv as usize] = o.does;
            }
        }
        let noop = facade::noop(terms)
            .and_then(|t| net.moves.iter().position(|m| *m == t))
            .map(|i| i as u32);
        let noop_out = net
            .legal
            .iter()
            .map(|l| {
                l.iter()
                    .position(|o| Some(o.mv) == noop)
                    .map_or(u32::MAX, |j| j as u32)
            })
            .collect();
        let roles: Vec<String> = net.roles.iter().map(|t| terms.kif(*t)).collect();
        let goal_values: Vec<Vec<i64>> = net
            .goals
            .iter()
            .map(|g| g.iter().map(|x| i64::from(x.0)).collect())
            .collect();
        let zero_sum = facade::zero_sum(&goal_values);
        let dynamics = dynamics_of(&net.terms, &net.props, &net.roles);
        let legal_sets = LegalSets::new(&net);
        let fan = prop::Fanout::new(
            &net,
            net.legal
                .iter()
                .flatten()
                .map(|o| o.lit)
                .chain(net.next.iter().copied())
                .chain([net.terminal]),
            legal_sets.skip.clone(),
            legal_sets.bit_lit.clone(),
        );
        let mut pass: Vec<PassGate> = fan
            .cone()
            .iter()
            .filter(|&&g| (g as usize) < net.state_gates)
            .map(|&g| PassGate::of(&net, g as usize))
            .collect();
        let pass_state = pass.len();
        pass.extend((net.state_gates..net.gates.len()).map(|g| PassGate::of(&net, g)));
        // Evaluate level by level (a gate's level is one more than its inputs' highest): consecutive
        // gates then rarely read each other, so the processor overlaps them instead of waiting for
        // each value to be stored and loaded again.
        let mut level = vec![0u32; net.num_nodes];
        for (i, g) in net.gates.iter().enumerate() {
            let inputs = &net.inputs[g.start as usize..g.end as usize];
            level[net.first_gate + i] = 1 + inputs
                .iter()
                .map(|&l| level[(l >> 1) as usize])
                .max()
                .unwrap_or(0);
        }
        // Within a level, gates with as many inputs come together, so the inner loop's exit is
        // predictable. The keys are distinct (a gate's node is its own), so an unstable sort side by
        // side gives the one order.
        let key = |g: &PassGate| (level[g.node as usize], g.end - g.start, g.node);
        let (state, moves) = pass.split_at_mut(pass_state);
        rayon::join(
            || state.par_sort_unstable_by_key(key),
            || moves.par_sort_unstable_by_key(key),
        );
        let goal_gates = view::goal_gates(&net, fan.cone());
        let mut game = NetGame {
            layout: crate::print::board::Layout::default(),
            info: GameInfo {
                name: name.to_string(),
                roles,
                dynamics,
                zero_sum,
            },
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            words,
            move_texts,
            prop_kif,
            does_of,
            initial,
            noop,
            noop_out,
            fan,
            sets: legal_sets,
            method: PlayoutMethod::Propagate,
            pass,
            pass_state,
            goal_gates,
            wins: std::sync::OnceLock::new(),
            blocks: std::sync::OnceLock::new(),
            turn_writes: std::sync::OnceLock::new(),
            native: Default::default(),
            method_fixed: false,
            undo_fixed: None,
            writes_fixed: None,
            net,
        };
        game.compile(compile);
        Ok(game)
    }

    /// Records that the game is not zero-sum after all: a terminal state was found whose two goals
    /// do not add up to 100 (the loader's play finds them; the analysis reads only each role's
    /// possible values).
    pub fn not_zero_sum(&mut self) {
        self.info.zero_sum = false;
    }

    /// The grounded network.
    pub fn network(&self) -> &Grounded {
        &self.net
    }

    /// The number of base propositions.
    pub fn num_propositions(&self) -> usize {
        self.net.props.len()
    }

    /// The number of gates.
    pub fn num_gates(&self) -> usize {
        self.net.gates.len()
    }

    /// Runs `f` on node values holding the state part of the network evaluated on `state` (lane 0).
    fn with_state<R>(&self, state: &BitState, f: impl FnOnce(&mut Scratch) -> R) -> R {
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            if !(s.valid && s.game == self.id && *s.state == *state.words()) {
                self.load(&mut s, state);
            }
            f(&mut s)
        })
    }

    fn load(&self, s: &mut Scratch, state: &BitState) {
        let n = &self.net;
        // Room after the nodes for the next state while a playout copies it in.
        let size = n.num_nodes + n.props.len();
        if s.game != self.id || s.vals.len() != size {
            s.vals.clear();
            s.vals.resize(size, 0);
            s.game = self.id;
        }
        for p in 0..n.props.len() {
            s.vals[1 + p] = if state.get(p) { !0 } else { 0 };
        }
        for v in &mut s.vals[1 + n.props.len()..n.first_gate] {
            *v = 0;
        }
        self.run_pass(Part::AllState, &mut s.vals);
        s.state.clear();
        s.state.extend_from_slice(state.words());
        s.valid = true;
    }

    #[inline]
    fn legal_into(&self, vals: &[u64], role: RoleIndex, out: &mut Vec<u32>) {
        out.clear();
        if let Some(l) = self.net.legal.get(role) {
            out.extend(
                l.iter()
                    .filter(|o| lit_val(vals, o.lit) & 1 != 0)
                    .map(|o| o.mv),
            );
        }
    }

    /// The move whose KIF text is `text` (exactly as printed), if the game has one.
    pub fn move_from_kif(&self, text: &str) -> Option<NetMove> {
        self.move_texts
            .kif
            .binary_search_by(|k| k.as_str().cmp(text))
            .ok()
            .map(|i| NetMove(i as u32))
    }

    /// A move as KIF.
    pub fn move_kif(&self, m: NetMove) -> &str {
        self.move_texts
            .kif
            .get(m.0 as usize)
            .map_or("?", |s| s.as_str())
    }

    /// The state's facts as KIF, sorted by bytes (propositions are numbered in that order).
    pub fn state_facts(&self, state: &BitState) -> Vec<String> {
        state.ones().map(|b| self.prop_kif[b].clone()).collect()
    }

    /// Every goal value the rules give `role` in `state`, ascending (normally exactly one).
    pub fn goal_values(&self, state: &BitState, role: RoleIndex) -> Vec<Goal> {
        self.with_state(state, |s| {
            self.net.goals.get(role).map_or(Vec::new(), |g| {
                g.iter()
                    .filter(|(_, l)| lit_val(&s.vals, *l) & 1 != 0)
                    .map(|x| x.0)
                    .collect()
            })
        })
    }

    /// `role`'s winning propositions as KIF, sorted: the facts that alone end the game with goal 100
    /// for it, as [`Game::winning_playout`] finds them (found once, on first use).
    pub fn winning_propositions(&self, role: RoleIndex) -> Vec<String> {
        let wins = self
            .wins
            .get_or_init(|| wins::wins_of(&self.net, &self.sets));
        let Some(words) = wins.props.get(role) else {
            return Vec::new();
        };
        (0..self.net.props.len())
            .filter(|&p| words.get(p / 64).is_some_and(|w| w >> (p % 64) & 1 == 1))
            .map(|p| self.prop_kif[p].clone())
            .collect()
    }

    fn is_noop(&self, m: u32) -> bool {
        self.noop == Some(m)
    }
}

impl Game for NetGame {
    type State = BitState;
    type Move = NetMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> BitState {
        self.initial.clone()
    }

    fn is_terminal(&self, state: &BitState) -> bool {
        if self.playout_method() == PlayoutMethod::Propagate {
            return self.with_prop(state, |s| prop::lit(&s.words, self.net.terminal) != 0);
        }
        self.with_state(state, |s| lit_val(&s.vals, self.net.terminal) & 1 != 0)
    }

    fn state_key(&self, state: &BitState) -> u64 {
        state.key()
    }

    fn legal_moves(&self, state: &BitState, role: RoleIndex, out: &mut Vec<NetMove>) {
        if self.playout_method() == PlayoutMethod::Propagate {
            return self.with_prop(state, |s| self.prop_legal(s, role, out));
        }
        out.clear();
        self.with_state(state, |s| {
            if let Some(l) = self.net.legal.get(role) {
                out.extend(
                    l.iter()
                        .filter(|o| lit_val(&s.vals, o.lit) & 1 != 0)
                        .map(|o| NetMove(o.mv)),
                );
            }
        })
    }

    fn next_state(&self, state: &BitState, joint: &[NetMove]) -> BitState {
        if self.playout_method() == PlayoutMethod::Propagate {
            return self.with_prop(state, |s| self.prop_next(s, joint));
        }
        let n = &self.net;
        self.with_state(state, |s| {
            for (r, m) in joint.iter().enumerate() {
                if let Some(&d) = self.does_of.get(r).and_then(|v| v.get(m.0 as usize)) {
                    if d != u32::MAX {
                        s.vals[d as usize] = !0;
                    }
                }
            }
            self.run_pass(Part::Moves, &mut s.vals);
            let mut out = BitState::with_words(self.words);
            for (p, l) in n.next.iter().enumerate() {
                if lit_val(&s.vals, *l) & 1 != 0 {
                    out.set(p);
                }
            }
            for v in &mut s.vals[1 + n.props.len()..n.first_gate] {
                *v = 0;
            }
            out
        })
    }

    fn goal(&self, state: &BitState, role: RoleIndex) -> Goal {
        if self.playout_method() == PlayoutMethod::Propagate {
            return self.with_prop(state, |s| self.prop_goal(s, role));
        }
        // The last goal value that holds, as goal_values would list them, without collecting them.
        self.with_state(state, |s| {
            self.net.goals.get(role).map_or(0, |g| {
                g.iter()
                    .rev()
                    .find(|(_, l)| lit_val(&s.vals, *l) & 1 != 0)
                    .map_or(0, |x| x.0)
            })
        })
    }

    fn playout_goals(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        count: u32,
        goal_totals: &mut [i64],
        deadline: Option<Instant>,
    ) -> u32 {
        self.batch_playouts_until(state, rng, count.min(64), 10_000, goal_totals, deadline)
            .map_or(0, |(lanes, _)| lanes)
    }

    fn playout_goals_each<'s>(
        &self,
        count: usize,
        state_of: &dyn Fn(usize) -> &'s BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        goals: &mut [i64],
        deadline: Instant,
    ) -> Option<u64> {
        self.batch_playouts_each(count, state_of, rng, 10_000, goals, deadline)
    }

    fn batch_speedup(&self) -> Option<f64> {
        self.native.get().and_then(|c| c.batch_speedup)
    }

    fn mover(&self, state: &BitState) -> Option<RoleIndex> {
        if self.playout_method() == PlayoutMethod::Propagate {
            return self.with_prop(state, |s| self.prop_mover(s));
        }
        self.with_state(state, |s| {
            if lit_val(&s.vals, self.net.terminal) & 1 != 0 {
                return None;
            }
            let mut buf = std::mem::take(&mut s.moves);
            let mover = mover_of(self.net.roles.len(), |r| {
                self.legal_into(&s.vals, r, &mut buf);
                Choice::of(buf.len(), || self.is_noop(buf[0]))
            });
            s.moves = buf;
            mover
        })
    }

    fn random_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        max_steps: u32,
    ) -> (BitState, u32) {
        self.random_playout_with(self.playout_method(), state, rng, max_steps)
    }

    fn winning_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        max_steps: u32,
        block: bool,
    ) -> (BitState, u32) {
        NetGame::winning_playout(self, state, rng, max_steps, block)
    }

    fn decisive_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        max_steps: u32,
    ) -> (BitState, u32) {
        self.playout_full_pass(state, rng, max_steps, true)
    }

    fn greedy_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        _buf: &mut Vec<NetMove>,
        max_steps: u32,
    ) -> (BitState, u32) {
        self.playout_greedy(state, rng, max_steps)
    }

    fn decisive_move(
        &self,
        state: &BitState,
        role: RoleIndex,
        buf: &mut Vec<NetMove>,
    ) -> Option<usize> {
        self.legal_moves(state, role, buf);
        self.decisive_move_of(state, role)
    }

    fn move_count(&self) -> usize {
        self.net.moves.len()
    }

    fn move_number(&self, mv: &NetMove) -> Option<u32> {
        Some(mv.0)
    }

    fn guided_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        buf: &mut Vec<NetMove>,
        numbers: &mut Vec<u32>,
        max_steps: u32,
        guide: &mut dyn crate::game::PlayoutGuide,
    ) -> (BitState, u32) {
        match self.playout_method() {
            PlayoutMethod::Propagate => {
                self.guided_playout_with(state, rng, numbers, max_steps, None, guide)
            }
            PlayoutMethod::FullPass => crate::game::guided_playout_by_moves(
                self, state, rng, buf, numbers, max_steps, guide,
            ),
        }
    }

    /// Only a game whose playouts propagate changes tells captures (the full pass plays through
    /// the trait's move methods, which read no state words).
    fn captures(&self, pieces: &[Vec<u64>]) -> Option<crate::game::Captures> {
        if self.playout_method() != PlayoutMethod::Propagate {
            return None;
        }
        captures::captures_of(&self.net, pieces)
    }

    fn capturing_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        buf: &mut Vec<NetMove>,
        numbers: &mut Vec<u32>,
        max_steps: u32,
        captures: &crate::game::Captures,
        rate: f64,
        guide: &mut dyn crate::game::PlayoutGuide,
    ) -> (BitState, u32) {
        match self.playout_method() {
            PlayoutMethod::Propagate => self.guided_playout_with(
                state,
                rng,
                numbers,
                max_steps,
                Some((captures, rate)),
                guide,
            ),
            PlayoutMethod::FullPass => crate::game::guided_playout_by_moves(
                self, state, rng, buf, numbers, max_steps, guide,
            ),
        }
    }

    fn show_move(&self, mv: &NetMove) -> String {
        self.move_texts
            .own
            .get(mv.0 as usize)
            .cloned()
            .unwrap_or_else(|| format!("?{}", mv.0))
    }

    fn move_kif(&self, mv: &NetMove) -> String {
        NetGame::move_kif(self, *mv).to_string()
    }

    fn state_kif(&self, state: &BitState) -> Vec<String> {
        self.state_facts(state)
    }

    fn base_propositions(&self) -> Vec<String> {
        self.prop_kif.clone()
    }

    fn state_words<'a>(&self, state: &'a BitState) -> &'a [u64] {
        state.words()
    }

    fn show_state(&self, state: &BitState) -> String {
        self.drawing(state).unwrap_or_default().to_text()
    }

    fn drawing(&self, state: &BitState) -> Option<crate::drawing::Drawing> {
        let facts: Vec<_> = (0..self.net.props.len())
            .filter(|&p| state.get(p))
            .map(|p| self.net.props[p])
            .collect();
        Some(crate::print::board::draw_state(
            &self.net.terms,
            &facts,
            &self.net.props,
            self.net.syntax,
            &self.layout,
        ))
    }
}

/// Tic-tac-toe from `games/`, the network the unit tests of several stages load.
#[cfg(test)]
fn tic_tac_toe() -> NetGame {
    let program =
        crate::syntax::parse_infix(include_str!("../../games/tictactoe.gdl")).expect("parses");
    NetGame::from_program(&program, "test").expect("grounds")
}
