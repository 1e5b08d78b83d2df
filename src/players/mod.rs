//! Players: anything that chooses a move for a role in a state of a [`Game`].
//!
//! Every player works through the [`Game`] trait only, so one set of players plays native games and rule
//! files alike. Search players report their effort in [`SearchStats`].

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::game::{Game, GameError, RoleIndex};

pub mod alphabeta;
pub mod bounds;
pub mod human;
pub mod jamboree;
pub mod minimax;
pub mod playout_estimate;
pub mod search;
pub mod simple;

pub use alphabeta::{alphabeta, AlphaBetaPlayer};
pub use human::HumanPlayer;
pub use jamboree::{jamboree, JamboreePlayer};
pub use minimax::{minimax, MinimaxPlayer};
pub use playout_estimate::PlayoutEstimate;
pub use search::SearchReport;
pub use simple::{LegalPlayer, RandomPlayer};

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

/// Runs a search for `role` in `state` and turns its report into a [`Choice`]. A role that is not in
/// control plays its only legal move (the no-op) without searching.
pub(crate) fn search_choice<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    search: impl FnOnce(&G, &G::State) -> Result<SearchReport, GameError>,
) -> Result<Choice<G::Move>, PlayerError> {
    let started = Instant::now();
    let mut moves = Vec::new();
    game.legal_moves(state, role, &mut moves);
    if game.mover(state) != Some(role) {
        return match moves.into_iter().next() {
            Some(mv) => Ok(Choice {
                mv,
                stats: search::no_effort(started.elapsed()),
            }),
            None => Err(GameError::Rules("a waiting role has no no-op".to_string()).into()),
        };
    }
    let report = search(game, state)?;
    let mv = moves.get(report.best).cloned().ok_or_else(|| {
        GameError::Rules(format!(
            "the search chose move {} of {}",
            report.best,
            moves.len()
        ))
    })?;
    Ok(Choice {
        mv,
        stats: report.stats,
    })
}

/// The kinds of player the command line and the factory know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    /// Reads moves from standard input.
    Human,
    /// The first legal move.
    Legal,
    /// A seeded random legal move.
    Random,
    /// Depth-limited minimax.
    Minimax,
    /// Seed 3's alpha-beta.
    AlphaBeta,
    /// Seed 3's Jamboree.
    Jamboree,
}

impl PlayerKind {
    /// Every kind, in the order the help text lists them.
    pub const ALL: [PlayerKind; 6] = [
        PlayerKind::Human,
        PlayerKind::Legal,
        PlayerKind::Random,
        PlayerKind::Minimax,
        PlayerKind::AlphaBeta,
        PlayerKind::Jamboree,
    ];

    /// The kind's name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PlayerKind::Human => "human",
            PlayerKind::Legal => "legal",
            PlayerKind::Random => "random",
            PlayerKind::Minimax => "minimax",
            PlayerKind::AlphaBeta => "alphabeta",
            PlayerKind::Jamboree => "jamboree",
        }
    }

    /// Whether this kind searches (and so takes a depth).
    pub fn searches(self) -> bool {
        matches!(
            self,
            PlayerKind::Minimax | PlayerKind::AlphaBeta | PlayerKind::Jamboree
        )
    }
}

impl fmt::Display for PlayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A player kind that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown player `{0}`; known players: human, legal, random, minimax, alphabeta, jamboree")]
pub struct UnknownPlayer(pub String);

impl FromStr for PlayerKind {
    type Err = UnknownPlayer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        let wanted = match wanted.as_str() {
            "ab" | "alpha-beta" => "alphabeta",
            "mm" => "minimax",
            other => other,
        };
        PlayerKind::ALL
            .into_iter()
            .find(|k| k.as_str() == wanted)
            .ok_or_else(|| UnknownPlayer(s.to_string()))
    }
}

/// The settings a player is built with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayerConfig {
    /// Search depth in plies.
    pub depth: u32,
    /// Seed for random players.
    pub seed: u64,
    /// Jamboree's sequential fraction.
    pub fraction: f64,
}

impl Default for PlayerConfig {
    fn default() -> Self {
        PlayerConfig {
            depth: 4,
            seed: 1,
            fraction: jamboree::DEFAULT_FRACTION,
        }
    }
}

/// Builds a player of `kind` for games of type `G`; a human player uses standard input and output.
pub fn make_player<G: Game>(kind: PlayerKind, config: &PlayerConfig) -> Box<dyn Player<G>> {
    match kind {
        PlayerKind::Human => Box::new(HumanPlayer::stdio()),
        PlayerKind::Legal => Box::new(LegalPlayer),
        PlayerKind::Random => Box::new(RandomPlayer::new(config.seed)),
        PlayerKind::Minimax => Box::new(MinimaxPlayer::new(config.depth)),
        PlayerKind::AlphaBeta => Box::new(AlphaBetaPlayer::new(config.depth)),
        PlayerKind::Jamboree => Box::new(JamboreePlayer::new(config.depth, config.fraction)),
    }
}

/// Runs the search of a searching `kind` from `state` (the `search` command); other kinds are refused.
pub fn run_search<G: Game>(
    kind: PlayerKind,
    game: &G,
    state: &G::State,
    config: &PlayerConfig,
    trace: bool,
) -> Result<SearchReport, GameError> {
    match kind {
        PlayerKind::Minimax => minimax(game, state, config.depth, trace),
        PlayerKind::AlphaBeta => alphabeta(game, state, config.depth, trace),
        PlayerKind::Jamboree => jamboree(game, state, config.depth, config.fraction, trace),
        other => Err(GameError::Unsupported(format!(
            "`{other}` does not search; use minimax, alphabeta or jamboree"
        ))),
    }
}
