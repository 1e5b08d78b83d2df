//! Players: anything that chooses a move for a role in a state of a [`Game`].
//!
//! Every player works through the [`Game`] trait only, so one set of players plays native games and rule
//! files alike. Search players report their effort in [`SearchStats`].

use std::time::Duration;

use crate::game::{Game, GameError, RoleIndex};

/// How much work a player did to choose one move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Search-tree nodes visited (states expanded or estimated).
    pub nodes: u64,
    /// Leaves estimated (the seeds' "terminals visited").
    pub leaves: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
}

/// A move chosen by a player, with the effort it took.
#[derive(Clone, Debug)]
pub struct Choice<M> {
    /// The chosen move.
    pub mv: M,
    /// The effort.
    pub stats: SearchStats,
}

/// Why a player could not produce a move.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// A human player's input ended (end of file): the match stops cleanly.
    #[error("input ended")]
    EndOfInput,
    /// The player cannot play this game (for example minimax on a simultaneous game).
    #[error(transparent)]
    Game(#[from] GameError),
    /// Reading input failed.
    #[error("could not read input: {0}")]
    Io(#[from] std::io::Error),
}

/// A player for games of type `G`.
pub trait Player<G: Game>: Send {
    /// A short name for reports (`alphabeta(depth 6)`).
    fn name(&self) -> String;

    /// Chooses a move for `role` in the non-terminal `state`.
    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
    ) -> Result<Choice<G::Move>, PlayerError>;
}
