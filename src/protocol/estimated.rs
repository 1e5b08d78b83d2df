//! A game that owns its rules and estimates positions by random playouts: what
//! [`PlayoutEstimate`](crate::players::PlayoutEstimate) gives the command line's players, for a match
//! session that must own its game rather than borrow it.
//!
//! Depth-limited players (alpha-beta, `id`, ...) see a rule game's flat goal values at their horizon;
//! with the playout estimate they play sensibly. Every other method passes straight through.

use rand::rngs::SmallRng;

use crate::game::{Estimate, Game, GameError, GameInfo, Goal, RoleIndex};
use crate::players::PlayoutEstimate;

use super::KifGame;

/// Random playouts behind each estimate: the command line's default for rule files.
pub const ESTIMATE_PLAYOUTS: u32 = 8;

/// `G` with the playout estimate (see the module documentation).
pub struct Estimated<G> {
    game: Box<G>,
    playouts: u32,
}

impl<G: Game> Estimated<G> {
    /// Wraps `game`; each estimate plays `playouts` random playouts.
    pub fn new(game: Box<G>, playouts: u32) -> Estimated<G> {
        Estimated { game, playouts }
    }

    /// The wrapped game.
    pub fn inner(&self) -> &G {
        &self.game
    }

    fn estimator(&self) -> PlayoutEstimate<'_, G> {
        PlayoutEstimate::new(&self.game, self.playouts)
    }
}

impl<G: Game> Game for Estimated<G> {
    type State = G::State;
    type Move = G::Move;

    fn info(&self) -> &GameInfo {
        self.game.info()
    }

    fn initial_state(&self) -> G::State {
        self.game.initial_state()
    }

    fn is_terminal(&self, state: &G::State) -> bool {
        self.game.is_terminal(state)
    }

    fn legal_moves(&self, state: &G::State, role: RoleIndex, out: &mut Vec<G::Move>) {
        self.game.legal_moves(state, role, out)
    }

    fn next_state(&self, state: &G::State, joint: &[G::Move]) -> G::State {
        self.game.next_state(state, joint)
    }

    fn goal(&self, state: &G::State, role: RoleIndex) -> Goal {
        self.game.goal(state, role)
    }

    fn mover(&self, state: &G::State) -> Option<RoleIndex> {
        self.game.mover(state)
    }

    fn estimate(&self, state: &G::State) -> Estimate {
        self.estimator().estimate(state)
    }

    fn try_estimate(&self, state: &G::State) -> Result<Estimate, GameError> {
        self.estimator().try_estimate(state)
    }

    fn state_key(&self, state: &G::State) -> u64 {
        self.game.state_key(state)
    }

    fn state_name(&self, state: &G::State) -> String {
        self.game.state_name(state)
    }

    fn random_playout(
        &self,
        state: &G::State,
        rng: &mut SmallRng,
        buf: &mut Vec<G::Move>,
        max_steps: u32,
    ) -> (G::State, u32) {
        self.game.random_playout(state, rng, buf, max_steps)
    }

    fn parse_move(
        &self,
        state: &G::State,
        role: RoleIndex,
        text: &str,
    ) -> Result<G::Move, GameError> {
        self.game.parse_move(state, role, text)
    }

    fn show_move(&self, mv: &G::Move) -> String {
        self.game.show_move(mv)
    }

    fn show_state(&self, state: &G::State) -> String {
        self.game.show_state(state)
    }

    fn play(&self, state: &G::State, role: RoleIndex, mv: &G::Move) -> G::State {
        self.game.play(state, role, mv)
    }
}

impl<G: KifGame> KifGame for Estimated<G> {
    fn move_kif(&self, mv: &Self::Move) -> String {
        self.game.move_kif(mv)
    }

    fn state_kif(&self, state: &Self::State) -> Vec<String> {
        self.game.state_kif(state)
    }
}
