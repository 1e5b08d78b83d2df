//! A test double: tic-tac-toe that says it plays batches of playouts `speedup` times as fast as
//! one at a time, and counts the playouts it plays to the end, so that tests see whether a player or an
//! evaluator took its batches (the trait's default plays a batch one playout after another).

use std::sync::atomic::{AtomicU32, Ordering};

use rand::rngs::SmallRng;

use crate::game::Game;
use crate::games::tictactoe::TicTacToe;

/// Tic-tac-toe that says its batches run `speedup` times as fast and counts its playouts.
pub(crate) struct Batching {
    /// The game played.
    pub(crate) game: TicTacToe,
    speedup: f64,
    playouts: AtomicU32,
}

impl Batching {
    /// Tic-tac-toe whose batches run `speedup` times as fast.
    pub(crate) fn new(speedup: f64) -> Batching {
        Batching {
            game: TicTacToe::new(3, 3).expect("3x3"),
            speedup,
            playouts: AtomicU32::new(0),
        }
    }

    /// The playouts played to the end so far, one at a time or in batches.
    pub(crate) fn playouts(&self) -> u32 {
        self.playouts.load(Ordering::Relaxed)
    }
}

impl Game for Batching {
    type State = <TicTacToe as Game>::State;
    type Move = <TicTacToe as Game>::Move;
    fn info(&self) -> &crate::game::GameInfo {
        self.game.info()
    }
    fn initial_state(&self) -> Self::State {
        self.game.initial_state()
    }
    fn is_terminal(&self, state: &Self::State) -> bool {
        self.game.is_terminal(state)
    }
    fn legal_moves(&self, state: &Self::State, role: usize, out: &mut Vec<Self::Move>) {
        self.game.legal_moves(state, role, out)
    }
    fn next_state(&self, state: &Self::State, joint: &[Self::Move]) -> Self::State {
        self.game.next_state(state, joint)
    }
    fn goal(&self, state: &Self::State, role: usize) -> crate::game::Goal {
        self.game.goal(state, role)
    }
    fn mover(&self, state: &Self::State) -> Option<usize> {
        self.game.mover(state)
    }
    fn random_playout(
        &self,
        state: &Self::State,
        rng: &mut SmallRng,
        buf: &mut Vec<Self::Move>,
        max_steps: u32,
    ) -> (Self::State, u32) {
        // A playout played in stretches (a player's first, whose cost it does not know yet) counts
        // once, where it ends.
        let (end, steps) = self.game.random_playout(state, rng, buf, max_steps);
        if self.game.is_terminal(&end) {
            self.playouts.fetch_add(1, Ordering::Relaxed);
        }
        (end, steps)
    }
    fn batch_speedup(&self) -> Option<f64> {
        Some(self.speedup)
    }
    fn show_move(&self, mv: &Self::Move) -> String {
        self.game.show_move(mv)
    }
    fn show_state(&self, state: &Self::State) -> String {
        self.game.show_state(state)
    }
}
