//! An estimator for games that come without one: the average outcome of random playouts.
//!
//! A rule file says how a game ends but not who stands better in the middle of it; goal values of
//! non-terminal states are usually flat. [`PlayoutEstimate`] wraps any [`Game`] and answers
//! [`Game::estimate`] with the mean goal difference of a few random playouts from the state, which is
//! what Monte Carlo players rely on and what makes a depth-limited search play sensibly on any rule file.
//! Everything else is passed through unchanged.
//!
//! The estimate is deterministic: the playouts' generator is seeded from the state's hash, so a search
//! visits the same leaves with the same values every time (and Jamboree's parallel leaves agree with a
//! sequential search's).

use std::hash::{Hash, Hasher};
use std::ops::Deref;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::{Estimate, Game, GameError, GameInfo, Goal, RoleIndex};

/// The longest playout an estimate plays before scoring the state it reached.
const MAX_ESTIMATE_STEPS: u32 = 1_000;

/// A game whose estimate is the mean outcome of random playouts (see the module documentation). It
/// holds the game through any pointer: a borrow (`&G`, for the command line) or an owner (`Box<G>`, for
/// a protocol session that keeps its game).
pub struct PlayoutEstimate<R> {
    game: R,
    playouts: u32,
}

impl<R: Deref> PlayoutEstimate<R>
where
    R::Target: Game,
{
    /// Wraps `game`; each estimate plays `playouts` random playouts (at least one).
    pub fn new(game: R, playouts: u32) -> Self {
        PlayoutEstimate {
            game,
            playouts: playouts.max(1),
        }
    }

    /// The wrapped game.
    pub fn inner(&self) -> &R::Target {
        &self.game
    }
}

impl<R> Game for PlayoutEstimate<R>
where
    R: Deref + Send + Sync,
    R::Target: Game,
{
    type State = <R::Target as Game>::State;
    type Move = <R::Target as Game>::Move;

    fn info(&self) -> &GameInfo {
        self.game.info()
    }

    fn initial_state(&self) -> Self::State {
        self.game.initial_state()
    }

    fn is_terminal(&self, state: &Self::State) -> bool {
        self.game.is_terminal(state)
    }

    fn legal_moves(&self, state: &Self::State, role: RoleIndex, out: &mut Vec<Self::Move>) {
        self.game.legal_moves(state, role, out)
    }

    fn next_state(&self, state: &Self::State, joint: &[Self::Move]) -> Self::State {
        self.game.next_state(state, joint)
    }

    fn goal(&self, state: &Self::State, role: RoleIndex) -> Goal {
        self.game.goal(state, role)
    }

    fn mover(&self, state: &Self::State) -> Option<RoleIndex> {
        self.game.mover(state)
    }

    /// Exact in terminal states; otherwise ten times role 0's mean goal minus role 1's over the playouts
    /// (so -1000..=1000). Games with other than two roles get the wrapped game's estimate.
    fn estimate(&self, state: &Self::State) -> Estimate {
        if self.game.info().num_roles() != 2 || self.game.is_terminal(state) {
            return self.game.estimate(state);
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        state.hash(&mut hasher);
        let mut rng = SmallRng::seed_from_u64(hasher.finish());
        // One buffer per estimate: its allocation is noise next to the playouts it serves, and a
        // buffer shared between Jamboree's threads would need a lock.
        let mut buf = Vec::new();
        let mut total: i64 = 0;
        for _ in 0..self.playouts {
            let (end, _) = self
                .game
                .random_playout(state, &mut rng, &mut buf, MAX_ESTIMATE_STEPS);
            total += i64::from(self.game.goal(&end, 0)) - i64::from(self.game.goal(&end, 1));
        }
        let mean_times_ten = total * 10 / i64::from(self.playouts);
        Estimate::Guess(mean_times_ten.clamp(-1000, 1000) as i32)
    }

    fn try_estimate(&self, state: &Self::State) -> Result<Estimate, GameError> {
        if self.game.info().num_roles() != 2 || self.game.is_terminal(state) {
            return self.game.try_estimate(state);
        }
        Ok(self.estimate(state))
    }

    fn state_key(&self, state: &Self::State) -> u64 {
        self.game.state_key(state)
    }

    fn state_name(&self, state: &Self::State) -> String {
        self.game.state_name(state)
    }

    fn random_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
    ) -> (Self::State, u32) {
        self.game.random_playout(state, rng, buf, max_steps)
    }

    fn playout_goals(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        count: u32,
        goal_totals: &mut [i64],
    ) -> u32 {
        self.game.playout_goals(state, rng, buf, count, goal_totals)
    }

    fn parse_move(
        &self,
        state: &Self::State,
        role: RoleIndex,
        text: &str,
    ) -> Result<Self::Move, GameError> {
        self.game.parse_move(state, role, text)
    }

    fn show_move(&self, mv: &Self::Move) -> String {
        self.game.show_move(mv)
    }

    fn show_state(&self, state: &Self::State) -> String {
        self.game.show_state(state)
    }

    fn play(&self, state: &Self::State, role: RoleIndex, mv: &Self::Move) -> Self::State {
        self.game.play(state, role, mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

    #[test]
    fn a_won_position_estimates_high_and_estimates_repeat() {
        let g = TicTacToe::new(3, 3).unwrap();
        let est = PlayoutEstimate::new(&g, 32);
        // x holds two corners and the centre with o to move: x wins most random continuations.
        let mut s = g.initial_state();
        for (role, text) in [
            (0, "mark(1,1)"),
            (1, "mark(1,2)"),
            (0, "mark(2,2)"),
            (1, "mark(2,1)"),
            (0, "mark(3,1)"),
        ] {
            let mv = g.parse_move(&s, role, text).unwrap();
            s = g.play(&s, role, &mv);
        }
        let first = est.estimate(&s);
        assert!(matches!(first, Estimate::Guess(v) if v > 300), "{first}");
        assert_eq!(est.estimate(&s), first, "seeded by the state");
        assert_eq!(
            est.estimate(&g.initial_state()),
            est.estimate(&g.initial_state())
        );
    }

    #[test]
    fn terminal_states_keep_their_exact_value() {
        let g = TicTacToe::new(3, 3).unwrap();
        let est = PlayoutEstimate::new(&g, 4);
        let mut s = g.initial_state();
        for (role, text) in [
            (0, "mark(1,1)"),
            (1, "mark(2,1)"),
            (0, "mark(1,2)"),
            (1, "mark(2,2)"),
            (0, "mark(1,3)"),
        ] {
            let mv = g.parse_move(&s, role, text).unwrap();
            s = g.play(&s, role, &mv);
        }
        assert!(est.is_terminal(&s));
        assert_eq!(est.estimate(&s), g.estimate(&s));
    }
}
