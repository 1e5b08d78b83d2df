//! Players: anything that chooses a move for a role in a state of a [`Game`].
//!
//! Every player works through the [`Game`] trait only, so one set of players plays native games and rule
//! files alike. Search players report their effort in [`SearchStats`].

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::game::{Game, GameError, GameInfo, RoleIndex};

pub mod alphabeta;
pub mod bounds;
pub mod clock;
pub mod greedy;
pub mod human;
pub mod id;
pub mod jamboree;
pub mod learned;
pub mod mcs;
pub mod mcts;
pub mod minimax;
pub mod playout_estimate;
pub mod search;
pub mod simple;

pub use alphabeta::{alphabeta, AlphaBetaPlayer};
pub use clock::{role_seed, Clock, Deadline, Progress, Ticker};
pub use greedy::GreedyPlayer;
pub use human::HumanPlayer;
pub use id::IdPlayer;
pub use jamboree::{jamboree, JamboreePlayer};
pub use learned::LearnedPlayer;
pub use mcs::McsPlayer;
pub use mcts::MctsPlayer;
pub use minimax::{minimax, MinimaxPlayer};
pub use playout_estimate::PlayoutEstimate;
pub use search::SearchReport;
pub use simple::{LegalPlayer, RandomPlayer};

/// How much work a player did to choose one move.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Search-tree nodes visited (states expanded or estimated).
    pub nodes: u64,
    /// Leaves estimated (the seeds' "terminals visited").
    pub leaves: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
    /// The deepest search that finished (iterative deepening), 0 when the player does not deepen.
    pub depth: u32,
    /// Monte Carlo simulations (playouts) run, 0 for players that run none.
    pub simulations: u64,
    /// Nodes of the search tree kept after the move (Monte Carlo tree search), 0 for players without one.
    pub tree: u64,
    /// The goal value (0..=100) the player expects from its move, when it has an estimate.
    pub expected: Option<f64>,
}

impl SearchStats {
    /// One line of effort, such as `depth 7, 120,000 nodes (250,000/s), expects 62` or
    /// `40,000 simulations (45,000/s), expects 58`; empty for a player that did not search.
    pub fn effort(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut parts = Vec::new();
        if self.depth > 0 {
            parts.push(format!("depth {}", self.depth));
        }
        if self.nodes > 0 {
            parts.push(format!(
                "{} nodes ({}/s)",
                thousands(self.nodes),
                thousands((self.nodes as f64 / secs) as u64)
            ));
        }
        if self.simulations > 0 {
            parts.push(format!(
                "{} simulations ({}/s)",
                thousands(self.simulations),
                thousands((self.simulations as f64 / secs) as u64)
            ));
        }
        if self.tree > 0 {
            parts.push(format!("tree of {} nodes", thousands(self.tree)));
        }
        if let Some(e) = self.expected {
            parts.push(format!("expects {e:.0}"));
        }
        parts.join(", ")
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
    /// A human player asked to take back the last full round (`undo` at the prompt); whoever runs the
    /// match goes back and asks again.
    #[error("the player asked to take back the last round")]
    Undo,
    /// The player cannot play this game (for example minimax on a simultaneous game).
    #[error(transparent)]
    Game(#[from] GameError),
    /// Reading input failed.
    #[error("could not read input: {0}")]
    Io(#[from] std::io::Error),
    /// A learned player's scores could not be used.
    #[error(transparent)]
    Model(#[from] crate::learn::ModelError),
}

/// A player for games of type `G`.
///
/// Players obey a clock: [`Player::choose`] is given a [`Deadline`] (the play clock less a margin) and
/// returns the best move it knows by then. A player may prepare once per match ([`Player::prepare`],
/// within the start clock), and keeps whatever it likes between moves (a search tree, a table).
pub trait Player<G: Game>: Send {
    /// A short name for reports (`alphabeta(depth 6)`).
    fn name(&self) -> String;

    /// Gets ready to play `role` in a new match of `game`, returning before `deadline`. The default does
    /// nothing; searchers forget what they knew of an earlier match.
    fn prepare(
        &mut self,
        game: &G,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<(), PlayerError> {
        let _ = (game, role, deadline);
        Ok(())
    }

    /// Chooses a move for `role` in the non-terminal `state`, returning before `deadline`.
    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError>;
}

/// The choice of a `role` with exactly one legal move (a waiting role's no-op): nothing to decide.
pub(crate) fn forced_choice<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    started: Instant,
) -> Option<Choice<G::Move>> {
    let mut moves = Vec::new();
    game.legal_moves(state, role, &mut moves);
    (moves.len() == 1).then(|| Choice {
        mv: moves.swap_remove(0),
        stats: search::no_effort(started.elapsed()),
    })
}

/// Every role's legal moves in `state`; an error names a role that has none.
pub(crate) fn all_legal_moves<G: Game>(
    game: &G,
    state: &G::State,
) -> Result<Vec<Vec<G::Move>>, GameError> {
    let mut lists: Vec<Vec<G::Move>> = vec![Vec::new(); game.info().num_roles()];
    for (r, list) in lists.iter_mut().enumerate() {
        game.legal_moves(state, r, list);
        if list.is_empty() {
            return Err(GameError::Rules(format!(
                "{} has no legal move in a state that is not terminal",
                game.info().roles[r]
            )));
        }
    }
    Ok(lists)
}

/// Plays a fixed-depth search of the seeds as a clocked player: searches depth 1, 2, ... up to
/// `max_depth` and plays the best move of the deepest search that finished before `deadline`. A role that
/// is not in control plays its only legal move (the no-op) without searching.
pub(crate) fn deepening_choice<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    max_depth: u32,
    deadline: Deadline,
    mut search: impl FnMut(&G, &G::State, u32, Deadline) -> Result<SearchReport, GameError>,
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
    let mut best: Option<(u32, SearchReport)> = None;
    let (mut nodes, mut leaves) = (0, 0);
    for depth in 1..=max_depth {
        match search(game, state, depth, deadline) {
            Ok(report) => {
                nodes += report.stats.nodes;
                leaves += report.stats.leaves;
                best = Some((depth, report));
            }
            Err(GameError::OutOfTime) => break,
            Err(e) => return Err(e.into()),
        }
    }
    let (depth, best) = match best {
        Some((depth, report)) => (depth, report.best),
        // Not even depth 1 finished: any legal move beats a late one.
        None => (0, 0),
    };
    let mv = moves.get(best).cloned().ok_or_else(|| {
        GameError::Rules(format!("the search chose move {best} of {}", moves.len()))
    })?;
    Ok(Choice {
        mv,
        stats: SearchStats {
            nodes,
            leaves,
            elapsed: started.elapsed(),
            depth,
            ..SearchStats::default()
        },
    })
}

/// The kinds of player the command line and the factory know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlayerKind {
    /// Reads moves from standard input.
    Human,
    /// The first legal move.
    Legal,
    /// A seeded random legal move.
    Random,
    /// Depth-limited minimax (seed 1), deepened until the clock runs out.
    Minimax,
    /// Seed 3's alpha-beta, deepened until the clock runs out.
    AlphaBeta,
    /// Seed 3's Jamboree, deepened until the clock runs out.
    Jamboree,
    /// Iterative-deepening alpha-beta with a transposition table, for any game.
    Id,
    /// Monte Carlo search: random playouts after each move, best average.
    Mcs,
    /// Monte Carlo tree search (decoupled UCT with a solver).
    Mcts,
    /// Gamemaster's one-step lookahead: `id` limited to one move.
    OneStep,
    /// Gamemaster's two-step lookahead: `id` limited to two moves.
    TwoStep,
    /// Gamemaster's greedy player: the move whose next state has the best goal value.
    Greedy,
    /// Gamemaster's fixed-depth minimax: `id` limited to `--depth`.
    MinimaxDepth,
    /// Seed 2's learned player: the next state with the best learned score (`learned:FILE`).
    Learned,
}

impl PlayerKind {
    /// Every kind, in the order the help text lists them.
    pub const ALL: [PlayerKind; 14] = [
        PlayerKind::Human,
        PlayerKind::Legal,
        PlayerKind::Random,
        PlayerKind::Minimax,
        PlayerKind::AlphaBeta,
        PlayerKind::Jamboree,
        PlayerKind::Id,
        PlayerKind::Mcs,
        PlayerKind::Mcts,
        PlayerKind::OneStep,
        PlayerKind::TwoStep,
        PlayerKind::Greedy,
        PlayerKind::MinimaxDepth,
        PlayerKind::Learned,
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
            PlayerKind::Id => "id",
            PlayerKind::Mcs => "mcs",
            PlayerKind::Mcts => "mcts",
            PlayerKind::OneStep => "onestep",
            PlayerKind::TwoStep => "twostep",
            PlayerKind::Greedy => "greedy",
            PlayerKind::MinimaxDepth => "minimaxdepth",
            PlayerKind::Learned => "learned",
        }
    }

    /// Whether this kind takes `--depth`.
    pub fn searches(self) -> bool {
        matches!(
            self,
            PlayerKind::Minimax
                | PlayerKind::AlphaBeta
                | PlayerKind::Jamboree
                | PlayerKind::Id
                | PlayerKind::MinimaxDepth
        )
    }

    /// Whether this kind is one of the seeds' two-player searches (minimax, alpha-beta, Jamboree), which
    /// reproduce the seeds' traces.
    pub fn is_seed_search(self) -> bool {
        matches!(
            self,
            PlayerKind::Minimax | PlayerKind::AlphaBeta | PlayerKind::Jamboree
        )
    }

    /// Checks, before a match starts, that this kind can play `info`'s game; the error names the kinds
    /// that can.
    pub fn supports(self, info: &GameInfo) -> Result<(), GameError> {
        if self == PlayerKind::Learned {
            return crate::learn::check_supported(info)
                .map_err(|e| GameError::Unsupported(e.to_string()));
        }
        if !self.is_seed_search() {
            return Ok(());
        }
        info.require_two_player_zero_sum(self.as_str())
            .map_err(|e| {
                let able: Vec<&str> = PlayerKind::ALL
                    .into_iter()
                    // Every other kind that can play it (the learned player needs two roles taking
                    // turns; it cannot recurse here, being no seed search).
                    .filter(|k| !k.is_seed_search() && k.supports(info).is_ok())
                    .map(PlayerKind::as_str)
                    .collect();
                GameError::Unsupported(format!(
                    "{e}. Players that can play it: {}",
                    able.join(", ")
                ))
            })
    }
}

impl fmt::Display for PlayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A player kind that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown player `{0}`; known players: {known}", known = known_players())]
pub struct UnknownPlayer(pub String);

fn known_players() -> String {
    PlayerKind::ALL
        .map(|k| match k {
            PlayerKind::Learned => "learned:FILE",
            k => k.as_str(),
        })
        .join(", ")
}

/// A player as the command line names it: a kind, and for `learned:FILE` the file of learned scores.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlayerSpec {
    /// The kind.
    pub kind: PlayerKind,
    /// The scores file of a learned player.
    pub file: Option<PathBuf>,
}

impl PlayerSpec {
    /// `config` with this spec's file as the learned player's scores, for [`make_player`].
    pub fn config(&self, config: &PlayerConfig) -> PlayerConfig {
        let mut c = config.clone();
        if self.file.is_some() {
            c.learned = self.file.clone();
        }
        c
    }
}

impl From<PlayerKind> for PlayerSpec {
    fn from(kind: PlayerKind) -> Self {
        PlayerSpec { kind, file: None }
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}:{}", self.kind, p.display()),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl FromStr for PlayerSpec {
    type Err = UnknownPlayer;

    /// A kind (`mcts`), or `learned:FILE`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        match t.split_once(':') {
            Some((k, file)) if k.eq_ignore_ascii_case("learned") && !file.is_empty() => {
                Ok(PlayerSpec {
                    kind: PlayerKind::Learned,
                    file: Some(PathBuf::from(file)),
                })
            }
            _ => t.parse::<PlayerKind>().map(PlayerSpec::from),
        }
    }
}

impl FromStr for PlayerKind {
    type Err = UnknownPlayer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        let wanted = match wanted.as_str() {
            "ab" | "alpha-beta" => "alphabeta",
            "mm" => "minimax",
            // Gamemaster's iterative-deepening minimax is our `id`.
            "minimaxid" | "iterative-deepening" => "id",
            "uct" => "mcts",
            other => other,
        };
        PlayerKind::ALL
            .into_iter()
            .find(|k| k.as_str() == wanted)
            .ok_or_else(|| UnknownPlayer(s.to_string()))
    }
}

/// The settings a player is built with.
#[derive(Clone)]
pub struct PlayerConfig {
    /// Search depth in plies (the seeds' searches and `minimaxdepth`: the deepest iteration).
    pub depth: u32,
    /// The deepest iteration of `id`, when it is limited.
    pub id_depth: Option<u32>,
    /// Seed for random choices; each role's player gets its own seed derived from it ([`role_seed`]).
    pub seed: u64,
    /// Jamboree's sequential fraction.
    pub fraction: f64,
    /// Threads a Monte Carlo tree search runs on.
    pub threads: usize,
    /// Where a long search reports what it is doing, about once a second.
    pub progress: Option<Progress>,
    /// The learned player's scores file.
    pub learned: Option<PathBuf>,
}

impl fmt::Debug for PlayerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlayerConfig")
            .field("depth", &self.depth)
            .field("id_depth", &self.id_depth)
            .field("seed", &self.seed)
            .field("fraction", &self.fraction)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .field("learned", &self.learned)
            .finish()
    }
}

impl Default for PlayerConfig {
    fn default() -> Self {
        PlayerConfig {
            depth: 4,
            id_depth: None,
            seed: 1,
            fraction: jamboree::DEFAULT_FRACTION,
            threads: 1,
            progress: None,
            learned: None,
        }
    }
}

/// Builds a player of `kind` for `role` in games of type `G`; a human player uses standard input and
/// output.
pub fn make_player<G: Game>(
    kind: PlayerKind,
    role: RoleIndex,
    config: &PlayerConfig,
) -> Box<dyn Player<G>> {
    let seed = role_seed(config.seed, role);
    let progress = config.progress.clone();
    match kind {
        PlayerKind::Human => Box::new(HumanPlayer::stdio()),
        PlayerKind::Legal => Box::new(LegalPlayer),
        PlayerKind::Random => Box::new(RandomPlayer::new(seed)),
        PlayerKind::Minimax => Box::new(MinimaxPlayer::new(config.depth)),
        PlayerKind::AlphaBeta => Box::new(AlphaBetaPlayer::new(config.depth)),
        PlayerKind::Jamboree => Box::new(JamboreePlayer::new(config.depth, config.fraction)),
        PlayerKind::Id => {
            let id = IdPlayer::new(seed).with_progress(progress);
            match config.id_depth {
                Some(depth) => Box::new(id.with_max_depth(depth)),
                None => Box::new(id),
            }
        }
        PlayerKind::MinimaxDepth => Box::new(
            IdPlayer::new(seed)
                .limited("minimaxdepth", config.depth)
                .with_progress(progress),
        ),
        PlayerKind::OneStep => Box::new(IdPlayer::new(seed).limited("onestep", 1).goals_only()),
        PlayerKind::TwoStep => Box::new(IdPlayer::new(seed).limited("twostep", 2).goals_only()),
        PlayerKind::Greedy => Box::new(GreedyPlayer::new(seed)),
        PlayerKind::Mcs => Box::new(McsPlayer::new(seed).with_progress(progress)),
        PlayerKind::Mcts => Box::new(
            MctsPlayer::new(seed)
                .with_threads(config.threads)
                .with_progress(progress),
        ),
        PlayerKind::Learned => Box::new(LearnedPlayer::new(config.learned.clone(), seed)),
    }
}

/// Runs one of the seeds' searches from `state` to exactly `config.depth` (the `search --trace`
/// command), stopping with [`GameError::OutOfTime`] at `deadline`.
pub fn run_seed_search<G: Game>(
    kind: PlayerKind,
    game: &G,
    state: &G::State,
    config: &PlayerConfig,
    trace: bool,
    deadline: Deadline,
) -> Result<SearchReport, GameError> {
    let deadline = Some(deadline);
    match kind {
        PlayerKind::Minimax => minimax::minimax_until(game, state, config.depth, trace, deadline),
        PlayerKind::AlphaBeta => {
            alphabeta::alphabeta_until(game, state, config.depth, trace, deadline)
        }
        PlayerKind::Jamboree => {
            jamboree::jamboree_until(game, state, config.depth, config.fraction, trace, deadline)
        }
        other => Err(GameError::Unsupported(format!(
            "`{other}` is not one of the seeds' searches; use minimax, alphabeta or jamboree"
        ))),
    }
}
