//! The `Game` trait: what every game offers to players, the referee and the benchmarks.
//!
//! The trait follows the GDL view of a game, which contains the seeds' two-player view as a special case:
//! a game has one or more named roles; in each state every role has a set of legal moves; a *joint move*
//! (one move per role, in role order) leads to the next state. In a turn-taking game the roles that are not
//! in control have exactly one legal move, a no-op, and [`Game::mover`] names the role in control.
//!
//! Static facts about a game live in [`GameInfo`] so that a searcher can refuse a game it cannot play
//! (for example minimax on a simultaneous-move game) with a clear error instead of a wrong answer.
//!
//! **Architecture invariant:** search code knows only this trait, never a concrete game.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::RngCore;
use smallvec::SmallVec;

mod pace;
pub use pace::Pace;

/// Index of a role in [`GameInfo::roles`] (and in every joint move).
pub type RoleIndex = usize;

/// A goal value. GDL's convention: integers 0..=100, a win is 100, a draw 50, a loss 0.
pub type Goal = i32;

/// Whether roles move in turns or all at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dynamics {
    /// Exactly one role is in control in every non-terminal state; the others play a no-op.
    TurnTaking,
    /// Roles may move together; a state's joint moves are the product of the roles' legal moves.
    Simultaneous,
}

/// Static description of a game, fixed when it is loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameInfo {
    /// A short name for messages (`connect4`, the rule file's stem, ...).
    pub name: String,
    /// The roles in their canonical order.
    pub roles: Vec<String>,
    /// Turn-taking or simultaneous.
    pub dynamics: Dynamics,
    /// True when, in every terminal state, the goals of two roles add up to 100 (a win for one is a loss
    /// for the other). Only meaningful for two roles.
    pub zero_sum: bool,
}

impl GameInfo {
    /// The number of roles.
    pub fn num_roles(&self) -> usize {
        self.roles.len()
    }

    /// The index of the role with this name (case-sensitive first, then case-insensitive).
    pub fn role_index(&self, name: &str) -> Option<RoleIndex> {
        self.roles
            .iter()
            .position(|r| r == name)
            .or_else(|| self.roles.iter().position(|r| r.eq_ignore_ascii_case(name)))
    }

    /// Checks that the game is a two-player, turn-taking, zero-sum game, as the seeds' minimax family
    /// requires; `searcher` names the algorithm in the error.
    pub fn require_two_player_zero_sum(&self, searcher: &str) -> Result<(), GameError> {
        let why = if self.roles.len() != 2 {
            Some(format!(
                "it has {}",
                crate::diagnostics::count(self.roles.len(), "role")
            ))
        } else if self.dynamics != Dynamics::TurnTaking {
            Some("its roles move simultaneously".to_string())
        } else if !self.zero_sum {
            Some("it is not zero-sum".to_string())
        } else {
            None
        };
        match why {
            Some(why) => Err(GameError::Unsupported(format!(
                "{searcher} needs a two-player, turn-taking, zero-sum game, but `{}` is not one: {why}",
                self.name
            ))),
            None => Ok(()),
        }
    }
}

/// What can go wrong when a game is used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// A move typed or sent by someone is not legal, or does not parse.
    #[error("`{text}` is not a legal move for {role}; legal moves are: {legal}")]
    IllegalMove {
        /// What was given.
        text: String,
        /// The role it was for.
        role: String,
        /// The legal moves, comma-separated.
        legal: String,
    },
    /// The game cannot be used this way (wrong number of roles, simultaneous moves, ...).
    #[error("{0}")]
    Unsupported(String),
    /// The rules misbehave in a reachable state (no legal move, no goal value, a runaway derivation, ...).
    #[error("the rules misbehave: {0}")]
    Rules(String),
    /// A search reached its deadline before it finished (players turn this into the best move found so
    /// far; the `search` command reports it).
    #[error("the search did not finish before its deadline")]
    OutOfTime,
}

/// [`Game::guided_playout`] through the trait's move methods: what a game without a faster loop plays.
pub fn guided_playout_by_moves<G: Game + ?Sized>(
    game: &G,
    state: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    numbers: &mut Vec<u32>,
    max_steps: u32,
    guide: &mut dyn PlayoutGuide,
) -> (G::State, u32) {
    let mut state = state.clone();
    let mut steps = 0;
    let roles = game.info().num_roles();
    let mut joint: SmallVec<[G::Move; 4]> = SmallVec::new();
    while steps < max_steps && !game.is_terminal(&state) {
        joint.clear();
        let mover = game.mover(&state);
        for role in 0..roles {
            if mover.is_some_and(|m| m != role) {
                continue;
            }
            game.legal_moves(&state, role, buf);
            if buf.is_empty() {
                return (state, steps);
            }
            numbers.clear();
            numbers.extend(buf.iter().map(|m| game.move_number(m).unwrap_or(u32::MAX)));
            let i = guide.pick(role, numbers, rng).min(buf.len() - 1);
            joint.push(buf[i].clone());
        }
        state = match mover {
            Some(role) => game.play(&state, role, &joint[0]),
            None => game.next_state(&state, &joint),
        };
        steps += 1;
    }
    (state, steps)
}

/// The pieces each role's moves may take: for a role and a move (by [`Game::move_number`]), the base
/// propositions (bits of [`Game::state_words`]) of the other roles' pieces whose next value the move
/// may make false. A move *captures* in a state where one of them holds (see
/// [`Game::capturing_playout`]). Found by analysis of the rules ([`Game::captures`]): a heuristic that
/// may list a piece the move cannot take in any reachable state (a straight move onto an occupied
/// square, never legal) and, in rules it abstracts badly, miss one; exact on breakthrough.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captures {
    /// Per role: `start[m]..start[m + 1]` index `props` for move number `m`.
    roles: Vec<(Vec<u32>, Vec<u32>)>,
}

impl Captures {
    /// A table from `(role, move number, proposition)` triples; `moves` is [`Game::move_count`].
    pub fn from_triples(roles: usize, moves: usize, triples: &[(usize, u32, u32)]) -> Captures {
        let mut table = Captures {
            roles: vec![(vec![0; moves + 1], Vec::new()); roles],
        };
        for &(r, m, _) in triples {
            if let Some((start, _)) = table.roles.get_mut(r) {
                if let Some(c) = start.get_mut(m as usize + 1) {
                    *c += 1;
                }
            }
        }
        for (start, props) in &mut table.roles {
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            props.resize(start[moves] as usize, 0);
        }
        let mut fill: Vec<Vec<u32>> = table.roles.iter().map(|(s, _)| s.clone()).collect();
        for &(r, m, p) in triples {
            if let (Some((_, props)), Some(at)) = (
                table.roles.get_mut(r),
                fill.get_mut(r).and_then(|f| f.get_mut(m as usize)),
            ) {
                if let Some(slot) = props.get_mut(*at as usize) {
                    *slot = p;
                    *at += 1;
                }
            }
        }
        table
    }

    /// The pieces `role`'s move number `mv` may take.
    pub fn victims(&self, role: RoleIndex, mv: u32) -> &[u32] {
        let Some((start, props)) = self.roles.get(role) else {
            return &[];
        };
        match (start.get(mv as usize), start.get(mv as usize + 1)) {
            (Some(&a), Some(&b)) => props.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Whether `role`'s move number `mv` takes a piece in a state of these words.
    pub fn captures(&self, role: RoleIndex, mv: u32, words: &[u64]) -> bool {
        self.victims(role, mv).iter().any(|&p| {
            words
                .get(p as usize / 64)
                .is_some_and(|w| w >> (p % 64) & 1 == 1)
        })
    }

    /// How many (move, piece) pairs the table holds for `role`.
    pub fn len(&self, role: RoleIndex) -> usize {
        self.roles.get(role).map_or(0, |(_, p)| p.len())
    }

    /// Whether the table holds no pair for any role.
    pub fn is_empty(&self) -> bool {
        self.roles.iter().all(|(_, p)| p.is_empty())
    }
}

/// A playout policy: picks the moves of a guided playout ([`Game::guided_playout`]).
pub trait PlayoutGuide {
    /// The index in `moves` (the legal moves of `role`, by [`Game::move_number`]; `u32::MAX` for a move
    /// without a number) of the move to play.
    fn pick(&mut self, role: RoleIndex, moves: &[u32], rng: &mut SmallRng) -> usize;
}

/// A game. See the module documentation.
///
/// Methods that fill a `Vec` take it from the caller so that hot loops can reuse one buffer and allocate
/// nothing.
pub trait Game: Send + Sync + 'static {
    /// A game state. Cheap to clone, hash and compare.
    type State: Clone + Eq + Hash + Debug + Send + Sync + 'static;
    /// A move of one role.
    type Move: Clone + Eq + Hash + Debug + Send + Sync + 'static;

    /// Static facts about the game.
    fn info(&self) -> &GameInfo;

    /// The initial state.
    fn initial_state(&self) -> Self::State;

    /// Whether the game is over in `state`.
    fn is_terminal(&self, state: &Self::State) -> bool;

    /// Replaces the contents of `out` with the legal moves of `role` in `state`, in the game's canonical
    /// order (move `i` of a search trace is `out[i]`). A role without a choice gets exactly one move (its
    /// no-op, or a forced move; see [`Game::mover`]). Unspecified (but safe) in a terminal state.
    fn legal_moves(&self, state: &Self::State, role: RoleIndex, out: &mut Vec<Self::Move>);

    /// The state reached when every role plays its move of `joint` (indexed by role). The moves must be
    /// legal; an illegal joint move gives an unspecified (but safe) state.
    fn next_state(&self, state: &Self::State, joint: &[Self::Move]) -> Self::State;

    /// The goal value of `role` in `state` (meaningful in terminal states; 0 where the rules define none).
    fn goal(&self, state: &Self::State, role: RoleIndex) -> Goal;

    /// The role in control in a turn-taking state, `None` in a terminal state, when several roles move,
    /// or when a role has no legal move at all (a state the rules leave stuck).
    fn mover(&self, state: &Self::State) -> Option<RoleIndex>;

    /// A 64-bit key of `state` for transposition tables: equal states have equal keys, and different
    /// states collide about as rarely as random numbers do. The default feeds the state's `Hash` to a
    /// multiply-rotate hasher (no strings, no allocation); bitset states override it with a Zobrist-style
    /// XOR of their mixed words.
    fn state_key(&self, state: &Self::State) -> u64 {
        use std::hash::Hasher as _;
        let mut h = StateHasher::default();
        state.hash(&mut h);
        h.finish()
    }

    /// A short name for `state` in search traces, where the game has a natural one (a tree node's
    /// name, a pile's size); `None` lets the trace name it by its hash or by number.
    fn state_name(&self, state: &Self::State) -> Option<String> {
        let _ = state;
        None
    }

    /// Plays uniformly random legal moves from `state` until the game ends or `max_steps` joint moves
    /// have been played; returns the final state and the number of joint moves played. `buf` is scratch
    /// space, so a caller that reuses it allocates nothing per move. Games override this with a faster
    /// loop where they can.
    fn random_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
    ) -> (Self::State, u32) {
        let mut state = state.clone();
        let mut steps = 0;
        let roles = self.info().num_roles();
        let mut joint: SmallVec<[Self::Move; 4]> = SmallVec::new();
        while steps < max_steps && !self.is_terminal(&state) {
            if let Some(role) = self.mover(&state) {
                self.legal_moves(&state, role, buf);
                if buf.is_empty() {
                    break;
                }
                let mv = buf[random_index(rng, buf.len())].clone();
                state = self.play(&state, role, &mv);
            } else {
                joint.clear();
                for role in 0..roles {
                    self.legal_moves(&state, role, buf);
                    if buf.is_empty() {
                        return (state, steps);
                    }
                    joint.push(buf[random_index(rng, buf.len())].clone());
                }
                state = self.next_state(&state, &joint);
            }
            steps += 1;
        }
        (state, steps)
    }

    /// Plays from `state` as [`Game::random_playout`] does, except that a role with a move that makes
    /// one of its *winning propositions* true (a fact that alone ends the game with goal 100 for the
    /// role, as a pawn on the last row does in Breakthrough) plays the first such move. The network
    /// finds those facts once by analysis, and the moves that may make them true, so a step costs one
    /// intersection of bitsets unless a role has such a move (see `network::wins`). Wins that no single
    /// fact makes are not seen.
    ///
    /// With `block`, a role also avoids a move after which another role takes such a win: when a role
    /// is about to win that way, the move before it (if one role alone had a choice then) is taken
    /// back and another drawn in its place, until one leaves no such win or none that may is left. The
    /// default knows no winning propositions: a random playout.
    fn winning_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
        _block: bool,
    ) -> (Self::State, u32) {
        self.random_playout(state, rng, buf, max_steps)
    }

    /// Plays from `state` as [`Game::random_playout`] does, except that a role in control with a
    /// *decisive* move (one that ends the game with goal 100 for it) plays the first in move order;
    /// otherwise its move is drawn by [`random_index`]. Such playouts do not walk past a win that one
    /// move takes. The default tries each move of the role in control through the trait's methods;
    /// the network tries up to 64 at once, one per bit of a word, and plays the same moves wherever
    /// one role has a choice of at most 64 moves (elsewhere a uniformly random joint move).
    fn decisive_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
    ) -> (Self::State, u32) {
        playout_by_trial(self, state, rng, buf, max_steps, false)
    }

    /// Plays from `state` as [`Game::decisive_playout`] does, and also *anti-decisively*: a role in
    /// control without a decisive move draws its moves at random until one leaves the next role in
    /// control (another role) no decisive move, and plays the last move left whatever it leaves
    /// (Sancho's "greedy rollouts"). A move that passes costs no more than a decisive playout's step,
    /// as the check is the next step's own search for a decisive move; one taken back costs a step.
    /// The default tries moves through the trait's methods (more than 64 moves: one drawn at random)
    /// and plays a step where several roles move at once at random; the network tries up to 64 at
    /// once, one per bit of a word, and at such a step tries every role's moves against a draw of
    /// the others' (a win must also win against a second draw), then draws again a move after
    /// which another role could win at once (`network::greedy`).
    fn greedy_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
    ) -> (Self::State, u32) {
        playout_by_trial(self, state, rng, buf, max_steps, true)
    }

    /// Fills `buf` with `role`'s legal moves in `state` and returns the index of the first that ends
    /// the game with goal 100 for `role` (a *decisive* move), if any. The default tries each move
    /// through the trait's methods; the network tries them all at once, one per bit of a word, when
    /// `role` is the only role with a choice and has at most 64 moves (else it answers `None`).
    fn decisive_move(
        &self,
        state: &Self::State,
        role: RoleIndex,
        buf: &mut Vec<Self::Move>,
    ) -> Option<usize> {
        self.legal_moves(state, role, buf);
        buf.iter().position(|mv| {
            let after = self.play(state, role, mv);
            self.is_terminal(&after) && self.goal(&after, role) == 100
        })
    }

    /// How many move numbers [`Game::move_number`] gives out: tables indexed by move (a playout
    /// policy's statistics) have this many rows per role. 0 when the game numbers no move.
    fn move_count(&self) -> usize {
        0
    }

    /// A number below [`Game::move_count`] naming `mv`, the same for equal moves in every state (a move
    /// is the same action wherever it is played): what a playout policy learns about, indexed instead
    /// of hashed. `None` when the game numbers no move.
    fn move_number(&self, mv: &Self::Move) -> Option<u32> {
        let _ = mv;
        None
    }

    /// Plays from `state` as [`Game::random_playout`] does, except that `guide` picks each role's move
    /// among its legal moves (given by [`Game::move_number`]). A game that numbers no move plays a
    /// random playout. `numbers` is scratch space, like `buf`.
    fn guided_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        numbers: &mut Vec<u32>,
        max_steps: u32,
        guide: &mut dyn PlayoutGuide,
    ) -> (Self::State, u32) {
        if self.move_count() == 0 {
            return self.random_playout(state, rng, buf, max_steps);
        }
        guided_playout_by_moves(self, state, rng, buf, numbers, max_steps, guide)
    }

    /// The pieces each role's moves may take, where `pieces[r]` holds role `r`'s pieces as words of
    /// base propositions ([`Game::state_words`]); `None` where the game cannot tell (the default, a
    /// game without numbered propositions, a network whose playouts take the full pass, an analysis
    /// past its budget of about a tenth of a second) or no move takes anything.
    fn captures(&self, pieces: &[Vec<u64>]) -> Option<Captures> {
        let _ = pieces;
        None
    }

    /// Plays from `state` as [`Game::guided_playout`] does, except that a role in control with a move
    /// that takes a piece ([`Captures`]) plays one of those, drawn uniformly, with probability
    /// `rate`; `guide` picks every other move, and is not told of the captures (a policy that learns
    /// from its picks, NST, learns from those alone). The default ignores `captures`: a guided
    /// playout.
    #[allow(clippy::too_many_arguments)]
    fn capturing_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        numbers: &mut Vec<u32>,
        max_steps: u32,
        captures: &Captures,
        rate: f64,
        guide: &mut dyn PlayoutGuide,
    ) -> (Self::State, u32) {
        let _ = (captures, rate);
        self.guided_playout(state, rng, buf, numbers, max_steps, guide)
    }

    /// Plays up to `count` random playouts from `state` (at most 10,000 joint moves each) and adds each
    /// role's goal at their ends to `goal_totals`; returns how many it played: at least one, or none
    /// when `deadline` passed first (the default reads the clock as [`Pace`] does, and plays no more
    /// playouts once it passed; the network reads it once a step). The default plays them one after
    /// the other; the network plays 64 at once, one per bit of a word.
    fn playout_goals(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        count: u32,
        goal_totals: &mut [i64],
        deadline: Option<Instant>,
    ) -> u32 {
        let mut pace = Pace::new();
        let mut played = 0;
        for _ in 0..count.max(1) {
            let end = match deadline {
                None => Some(self.random_playout(state, rng, buf, 10_000)),
                Some(until) => pace.play_on(state.clone(), 0, 10_000, until, |s, n| {
                    self.random_playout(s, rng, buf, n)
                }),
            };
            let Some((end, _)) = end else {
                break;
            };
            for (r, total) in goal_totals.iter_mut().enumerate() {
                *total += i64::from(self.goal(&end, r));
            }
            played += 1;
        }
        played
    }

    /// Plays one random playout from each of `count` states (`state_of(k)` is the `k`-th; at most
    /// 64) and writes every role's goal at the end of playout `k` to `goals[k * roles + r]`;
    /// returns the joint moves played over all of them, or `None` when `deadline` passed before
    /// they ended (the goals then mean nothing). The default plays them one after the other; the
    /// network plays them at once, one per bit of a word.
    fn playout_goals_each<'s>(
        &self,
        count: usize,
        state_of: &dyn Fn(usize) -> &'s Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        goals: &mut [i64],
        deadline: Instant,
    ) -> Option<u64> {
        let roles = self.info().num_roles();
        let mut steps = 0;
        for k in 0..count.min(64) {
            if Instant::now() >= deadline {
                return None;
            }
            let (end, n) = self.random_playout(state_of(k), rng, buf, 10_000);
            steps += u64::from(n);
            for r in 0..roles {
                if let Some(slot) = goals.get_mut(k * roles + r) {
                    *slot = i64::from(self.goal(&end, r));
                }
            }
        }
        Some(steps)
    }

    /// How many times as many playouts a second [`Game::playout_goals_each`] plays, 64 at once, as
    /// [`Game::random_playout`] plays one at a time, where the game has measured it: `None` where it
    /// plays them one after the other (the default) or has not measured it yet (the network measures
    /// it on the thread that compiles its passes, a moment after it loads).
    fn batch_speedup(&self) -> Option<f64> {
        None
    }

    /// Reads a move of `role` as a person or a protocol message writes it; the error lists the legal moves.
    fn parse_move(
        &self,
        state: &Self::State,
        role: RoleIndex,
        text: &str,
    ) -> Result<Self::Move, GameError> {
        let mut legal = Vec::new();
        self.legal_moves(state, role, &mut legal);
        let wanted = normalize_move_text(text);
        legal
            .iter()
            .find(|m| normalize_move_text(&self.show_move(m)) == wanted)
            .cloned()
            .ok_or_else(|| GameError::IllegalMove {
                text: text.trim().to_string(),
                role: self.info().roles[role].clone(),
                legal: legal
                    .iter()
                    .map(|m| self.show_move(m))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// A move as text, in the game's own notation.
    fn show_move(&self, mv: &Self::Move) -> String;

    /// A move as GDL's KIF writes it, `(mark 1 1)`: what the GGP protocol and match records carry. The
    /// default writes [`Game::show_move`]'s `name(a,b)` as `(name a b)`.
    fn move_kif(&self, mv: &Self::Move) -> String {
        kif_form(&self.show_move(mv))
    }

    /// The facts true in `state`, each as KIF text, sorted: what match records carry. Empty for a game
    /// that is not written as facts.
    fn state_kif(&self, state: &Self::State) -> Vec<String> {
        let _ = state;
        Vec::new()
    }

    /// The game's base propositions as KIF text, `(cell 1 1 b)`, by number: proposition `i` holds in a
    /// state when bit `i` of [`Game::state_words`] is set. Empty for a game that does not number its
    /// propositions (native games, a rule game in open mode), which the features that read them (the
    /// `mcts` piece counts) then leave alone.
    fn base_propositions(&self) -> Vec<String> {
        Vec::new()
    }

    /// `state` as words of bits, one bit a base proposition ([`Game::base_propositions`]); empty for a
    /// game that does not number its propositions. Cheap: no copy.
    fn state_words<'a>(&self, state: &'a Self::State) -> &'a [u64] {
        let _ = state;
        &[]
    }

    /// A state drawn for a person (a board where the game has one).
    fn show_state(&self, state: &Self::State) -> String;

    /// A state's boards and facts as data, for a drawing other than text (the web page's); `None` for
    /// a game that is not written as facts, which [`Game::show_state`] alone draws.
    fn drawing(&self, state: &Self::State) -> Option<crate::drawing::Drawing> {
        let _ = state;
        None
    }

    /// Plays `mv` for the role in control of a turn-taking state, every other role playing its only legal
    /// move. Games override this when they can do it faster.
    fn play(&self, state: &Self::State, role: RoleIndex, mv: &Self::Move) -> Self::State {
        let mut joint = Vec::with_capacity(self.info().num_roles());
        let mut buf = Vec::new();
        for r in 0..self.info().num_roles() {
            if r == role {
                joint.push(mv.clone());
            } else {
                self.legal_moves(state, r, &mut buf);
                match buf.first() {
                    Some(m) => joint.push(m.clone()),
                    None => return state.clone(),
                }
            }
        }
        self.next_state(state, &joint)
    }
}

/// The hasher behind [`Game::state_key`]'s default: one rotate, XOR and multiply per word written, with a
/// final avalanche so that low bits (a table's index) depend on every input bit.
#[derive(Default)]
pub struct StateHasher(u64);

impl std::hash::Hasher for StateHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        mix64(self.0)
    }
}

/// A bijective avalanche of a 64-bit word (the finaliser of splitmix64).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The Zobrist-style key of a bitset state: the XOR of every word mixed with its position, so a state
/// hashes in a few operations a word and no word's contribution depends on another's.
#[inline]
pub fn bitset_key(words: &[u64]) -> u64 {
    words.iter().enumerate().fold(0, |key, (i, &w)| {
        key ^ mix64(w ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    })
}

/// Folds case and white space so that `(mark 1 1)`, `( MARK 1 1 )` and `mark(1,1)` compare equal.
pub fn normalize_move_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for token in text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .filter(|t| !t.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&token.to_ascii_lowercase());
    }
    out
}

/// `mark(1,2)` as KIF writes it, `(mark 1 2)`; a text already in KIF, or a bare word, is returned as
/// it is.
pub fn kif_form(text: &str) -> String {
    match text.split_once('(') {
        Some((name, args)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
            let args: Vec<&str> = args
                .trim_end_matches(')')
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .collect();
            if args.is_empty() {
                name.to_string()
            } else {
                format!("({name} {})", args.join(" "))
            }
        }
        _ => text.to_string(),
    }
}

/// The number of move sequences of length `depth` from `state`; a sequence that reaches a terminal state
/// earlier counts once. Joint moves count as one step each (the product of the roles' legal moves).
pub fn perft<G: Game>(game: &G, state: &G::State, depth: u32) -> u64 {
    let roles = game.info().num_roles();
    let mut buffers: Vec<Vec<G::Move>> = (0..roles).map(|_| Vec::new()).collect();
    perft_inner(game, state, depth, &mut buffers)
}

fn perft_inner<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    buffers: &mut Vec<Vec<G::Move>>,
) -> u64 {
    if depth == 0 || game.is_terminal(state) {
        return 1;
    }
    let joints = joint_moves(game, state, buffers);
    if depth == 1 {
        return joints.len() as u64;
    }
    let mut total = 0;
    for joint in &joints {
        let next = game.next_state(state, joint);
        total = u64::saturating_add(total, perft_inner(game, &next, depth - 1, buffers));
    }
    total
}

/// Every joint move of a non-terminal state (the product of the roles' legal move lists, role 0 varying
/// slowest). `buffers` holds one scratch vector per role.
pub fn joint_moves<G: Game>(
    game: &G,
    state: &G::State,
    buffers: &mut [Vec<G::Move>],
) -> Vec<Vec<G::Move>> {
    for (role, buf) in buffers.iter_mut().enumerate() {
        game.legal_moves(state, role, buf);
    }
    let mut joints: Vec<Vec<G::Move>> = vec![Vec::with_capacity(buffers.len())];
    for buf in buffers.iter() {
        let mut next = Vec::with_capacity(joints.len() * buf.len());
        for prefix in &joints {
            for m in buf {
                let mut j = prefix.clone();
                j.push(m.clone());
                next.push(j);
            }
        }
        joints = next;
    }
    joints
}

/// A uniformly random index below `n` (which must be at least 1), for playout loops.
///
/// Multiply-shift maps 32 random bits onto `0..n` without a division or a rejection loop; its bias (about
/// `n / 2^32`) is far below anything a playout statistic can see, and it is several times cheaper than
/// `gen_range`, which matters when a playout is a few dozen nanoseconds per move.
#[inline]
pub fn random_index(rng: &mut SmallRng, n: usize) -> usize {
    ((u64::from(rng.next_u32()) * n as u64) >> 32) as usize
}

/// The index of a random playout's move among a role's `n` legal moves: [`random_index`], except
/// that a role with one legal move (the waiting side of a turn-taking game) draws nothing. The
/// network's playouts draw so, role by role; a playout that must match one of them move for move
/// draws the same way.
#[inline]
pub fn draw_move(rng: &mut SmallRng, n: usize) -> usize {
    if n > 1 {
        random_index(rng, n)
    } else {
        0
    }
}

/// The defaults of [`Game::decisive_playout`] and, `anti` (anti-decisive), of
/// [`Game::greedy_playout`]: each move of the role in control tried through the trait's methods.
fn playout_by_trial<G: Game + ?Sized>(
    game: &G,
    state: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    max_steps: u32,
    anti: bool,
) -> (G::State, u32) {
    let mut state = state.clone();
    let mut steps = 0;
    while steps < max_steps && !game.is_terminal(&state) {
        let Some(role) = game.mover(&state) else {
            // Several roles move at once: one random joint move.
            let (next, n) = game.random_playout(&state, rng, buf, 1);
            if n == 0 {
                break;
            }
            state = next;
            steps += 1;
            continue;
        };
        let decisive = game.decisive_move(&state, role, buf);
        let count = buf.len();
        if count == 0 {
            break;
        }
        steps += 1;
        if decisive.is_some() || !anti || count > 64 {
            let i = decisive.unwrap_or_else(|| random_index(rng, count));
            state = game.play(&state, role, &buf[i]);
            continue;
        }
        // A reply's check lists the other role's moves in `buf`: the role's are listed again. The
        // first draw is `random_index(rng, count)`, as without the check.
        let mut relist = false;
        let mut left = if count == 64 { !0 } else { (1u64 << count) - 1 };
        state = loop {
            let i = nth_set_bit(left, random_index(rng, left.count_ones() as usize));
            left &= !(1 << i);
            if relist {
                game.legal_moves(&state, role, buf);
            }
            let after = game.play(&state, role, &buf[i as usize]);
            if left == 0 || game.is_terminal(&after) {
                break after;
            }
            match game.mover(&after) {
                Some(next) if next != role => {
                    if game.decisive_move(&after, next, buf).is_none() {
                        break after;
                    }
                    relist = true;
                }
                _ => break after,
            }
        };
    }
    (state, steps)
}

/// The position of the `k`-th set bit of `x`, counting from 0 at the lowest (64 when there are not
/// that many).
///
/// A random playout draws every move so: where the processor deposits bits quickly (`PDEP`), one
/// instruction does it, else the `k` lower bits are cleared one by one, a loop whose length the
/// processor cannot guess. Breakthrough's network playouts ran 1.05 times as fast with `PDEP`.
#[inline]
pub(crate) fn nth_set_bit(x: u64, k: usize) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if fast_bit_deposit() {
        // SAFETY: `fast_bit_deposit` found BMI2 on this processor.
        return unsafe { nth_set_bit_by_deposit(x, k) };
    }
    nth_set_bit_by_clearing(x, k)
}

/// [`nth_set_bit`] without `PDEP`.
#[inline]
fn nth_set_bit_by_clearing(mut x: u64, k: usize) -> u32 {
    for _ in 0..k.min(64) {
        x &= x.wrapping_sub(1);
    }
    x.trailing_zeros()
}

/// [`nth_set_bit`] by `PDEP`: the `k`-th lowest bit deposited into `x`'s set bits.
///
/// # Safety
/// The processor has BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn nth_set_bit_by_deposit(x: u64, k: usize) -> u32 {
    let one = if k < 64 { 1u64 << k } else { 0 };
    std::arch::x86_64::_pdep_u64(one, x).trailing_zeros()
}

/// Whether this processor has BMI2's `PDEP` and runs it in a few cycles: AMD's before Zen 3
/// (family 0x19) have it but take tens to hundreds of cycles, more than the loop it replaces.
#[cfg(target_arch = "x86_64")]
#[inline]
fn fast_bit_deposit() -> bool {
    static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        if !std::arch::is_x86_feature_detected!("bmi2") {
            return false;
        }
        let (vendor, signature) = (
            std::arch::x86_64::__cpuid(0),
            std::arch::x86_64::__cpuid(1).eax,
        );
        let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        let base_family = (signature >> 8) & 0xf;
        let family = if base_family == 0xf {
            base_family + ((signature >> 20) & 0xff)
        } else {
            base_family
        };
        !amd || family >= 0x19
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_of_playouts_stops_at_its_deadline_and_adds_nothing_then() {
        use rand::SeedableRng;
        let game = crate::games::tictactoe::TicTacToe::new(3, 3).unwrap();
        let (mut rng, mut buf) = (SmallRng::seed_from_u64(1), Vec::new());
        let start = game.initial_state();
        let mut totals = [0i64; 2];
        assert_eq!(
            game.playout_goals(&start, &mut rng, &mut buf, 64, &mut totals, None),
            64
        );
        // Every playout ends with goals adding up to 100 (a win and a loss, or a draw of 50 each).
        assert_eq!(totals[0] + totals[1], 64 * 100);
        let mut totals = [0i64; 2];
        let passed = Some(Instant::now());
        assert_eq!(
            game.playout_goals(&start, &mut rng, &mut buf, 64, &mut totals, passed),
            0
        );
        assert_eq!(totals, [0, 0]);
    }

    #[test]
    fn the_nth_set_bit_is_found_the_same_way_with_or_without_bit_deposit() {
        let words = [
            0,
            1,
            u64::MAX,
            1 << 63,
            0x8000_0000_0001_0010,
            0x5555_5555_5555_5555,
        ];
        let mut rng = <SmallRng as rand::SeedableRng>::seed_from_u64(7);
        let random = (0..200).map(|_| rng.next_u64() & rng.next_u64());
        for x in words.into_iter().chain(random) {
            let mut bits = (0..64).filter(|b| x >> b & 1 == 1);
            for k in 0..70 {
                let expected = bits.next().unwrap_or(64);
                assert_eq!(nth_set_bit(x, k), expected, "bit {k} of {x:#x}");
                assert_eq!(nth_set_bit_by_clearing(x, k), expected, "bit {k} of {x:#x}");
            }
        }
    }

    #[test]
    fn a_capture_table_lists_each_moves_victims_and_reads_them_in_a_state() {
        // Role 0's move 2 may take propositions 5 and 70; role 1's move 0 proposition 3.
        let t = Captures::from_triples(2, 4, &[(0, 2, 5), (1, 0, 3), (0, 2, 70), (7, 1, 1)]);
        assert_eq!(t.victims(0, 2), &[5, 70]);
        assert_eq!(t.victims(0, 1), &[] as &[u32]);
        assert_eq!(t.victims(1, 0), &[3]);
        assert_eq!(t.victims(1, 9), &[] as &[u32]);
        assert_eq!((t.len(0), t.len(1), t.len(2)), (2, 1, 0));
        assert!(t.captures(0, 2, &[0, 1 << 6]));
        assert!(!t.captures(0, 2, &[1 << 3, 0]));
        assert!(t.captures(1, 0, &[1 << 3]));
        assert!(!t.captures(1, 0, &[]));
        assert!(!t.is_empty());
        assert!(Captures::from_triples(2, 4, &[]).is_empty());
    }

    #[test]
    fn moves_are_written_in_kif() {
        assert_eq!(kif_form("mark(1,2)"), "(mark 1 2)");
        assert_eq!(kif_form("(mark 1 2)"), "(mark 1 2)");
        assert_eq!(kif_form("noop"), "noop");
        assert_eq!(kif_form("3"), "3");
    }

    #[test]
    fn move_text_is_compared_loosely() {
        assert_eq!(normalize_move_text("( MARK 1 1 )"), "mark 1 1");
        assert_eq!(normalize_move_text("mark(1,1)"), "mark 1 1");
        assert_eq!(normalize_move_text(" 3 "), "3");
    }
}
