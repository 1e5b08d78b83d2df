//! Players: anything that chooses a move for a role in a state of a [`Game`].
//!
//! Every player works through the [`Game`] trait only, so one set of players plays native games and rule
//! files alike; a search judges the states it stops at by an [`crate::evaluators::Evaluator`] it is
//! given. Search players report their effort in [`SearchStats`]. [`kinds`] names the players and builds
//! them ([`make_player`]), checking once that a player can play the game.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::game::{Game, GameError, RoleIndex};

pub mod clock;
pub mod greedy;
pub mod id;
pub mod kinds;
pub mod learned;
pub mod mcs;
pub mod mcts;
pub mod puzzle;
pub mod seeds;
pub mod simple;

pub use clock::{role_seed, thread_cpu_time, Clock, Deadline, Progress, Stop, StopSwitch, Ticker};
pub use greedy::GreedyPlayer;
pub use id::IdPlayer;
pub use kinds::{make_player, PlayerConfig, PlayerKind, PlayerSpec, UnknownPlayer};
pub use learned::LearnedPlayer;
pub use mcs::McsPlayer;
pub use mcts::{MctsPlayer, Switch};
pub use seeds::{SearchReport, SeedPlayer, SeedSearch};
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
    /// Walks of a tree search that ended in a solved node and so ran no playout (counted apart from
    /// `simulations`: a search whose walks all end so has stopped learning).
    pub solved_walks: u64,
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
        if self.solved_walks > 0 {
            parts.push(format!(
                "{} walks into solved nodes",
                thousands(self.solved_walks)
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
    /// Why this move, from players that can say (`mcts`, `id`).
    pub explanation: Option<Explanation>,
}

/// Why a player chose its move: how it saw each of its moves, and the line of play it expects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Explanation {
    /// Every legal move of the player, best first.
    pub candidates: Vec<Candidate>,
    /// The moves it expects from here, its own first, as `role: move` (empty when it cannot say).
    pub line: Vec<String>,
}

/// One move as a player saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The move, in the game's notation.
    pub mv: String,
    /// Simulations through it (Monte Carlo players), 0 otherwise.
    pub visits: u64,
    /// The goal (0..=100) the player expects after it, and how sure that is; `None` when unexplored.
    pub value: Option<(f64, Certainty)>,
}

/// How a [`Candidate`]'s value is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Certainty {
    /// The mean of simulations.
    Mean,
    /// Proven by search to the end of the game.
    Proven,
    /// Found to the search's depth.
    Searched,
    /// Found to be at most this much (alpha-beta cut the search of this move short).
    AtMost,
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.mv)?;
        if self.visits > 0 {
            write!(f, "  visits {}", thousands(self.visits))?;
        }
        match self.value {
            None => write!(f, "  not explored"),
            Some((v, Certainty::Mean)) => write!(f, "  expects {v:.1}"),
            Some((v, Certainty::Proven)) => write!(f, "  proven {v:.0}"),
            Some((v, Certainty::Searched)) => write!(f, "  expects {v:.1}"),
            Some((v, Certainty::AtMost)) => write!(f, "  at most {v:.1}"),
        }
    }
}

/// Why a player could not produce a move.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// The player cannot play this game (for example minimax on a simultaneous game), or the rules
    /// misbehave in the state it was asked about.
    #[error(transparent)]
    Game(#[from] GameError),
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

    /// [`Player::prepare`] in a match whose other seats prepare at the same time, `unprepared`
    /// counting the seats (this one included) not ready yet, under a play clock of `play`: a player
    /// that thinks ahead in the start clock may stop once it is the last, since the match waits for
    /// nobody else. The default prepares as [`Player::prepare`] does.
    fn prepare_beside(
        &mut self,
        game: &G,
        role: RoleIndex,
        deadline: Deadline,
        play: Duration,
        unprepared: &AtomicUsize,
    ) -> Result<(), PlayerError> {
        let _ = (play, unprepared);
        self.prepare(game, role, deadline)
    }

    /// Chooses a move for the asked role in the asked non-terminal state, returning before the
    /// deadline.
    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError>;

    /// Goes on thinking about the state of the last [`Player::choose`] after its answer has gone,
    /// while the manager gathers the other players' moves: until `until`, or until `wanted` drops to
    /// 1 or less (the next request has come). Returns the simulations (or nodes) it added; the
    /// default thinks about nothing and returns 0 at once.
    fn ponder(&mut self, game: &G, role: RoleIndex, until: Deadline, wanted: &AtomicUsize) -> u64 {
        let _ = (game, role, until, wanted);
        0
    }
}

/// What a player is asked: the move of `role` in `state` of `game`, by `deadline`.
pub struct Ask<'a, G: Game> {
    /// The game.
    pub game: &'a G,
    /// The state to move in.
    pub state: &'a G::State,
    /// The role to move for.
    pub role: RoleIndex,
    /// When the answer is due.
    pub deadline: Deadline,
    /// The roles asked at the same time (this one included) that have not answered yet, when the
    /// referee counts them: a player thinking ahead on a forced move may stop once the others have
    /// answered, since the step waits for nobody else.
    pub unanswered: Option<&'a Unanswered>,
}

/// The seats asked in one state that have not answered yet, as the referee counts them, and how
/// many of those have nothing to decide and think ahead meanwhile. A seat thinking ahead stops once
/// every seat still out thinks ahead too: the step waits for nobody with a decision to make. With
/// three roles, two waiting seats would otherwise each wait for the other until their clocks ran out.
#[derive(Debug)]
pub struct Unanswered {
    seats: AtomicUsize,
    thinking_ahead: AtomicUsize,
}

impl Unanswered {
    /// `seats` asked, none answered.
    pub fn new(seats: usize) -> Unanswered {
        Unanswered {
            seats: AtomicUsize::new(seats),
            thinking_ahead: AtomicUsize::new(0),
        }
    }

    /// One seat has answered.
    pub fn answered(&self) {
        self.seats.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether every seat still to answer is only thinking ahead.
    pub fn only_thinking_ahead(&self) -> bool {
        self.seats.load(Ordering::SeqCst) <= self.thinking_ahead.load(Ordering::SeqCst)
    }

    /// Counts the caller among the seats thinking ahead until the guard is dropped, which it is
    /// before the seat answers.
    pub fn thinking_ahead(&self) -> ThinkingAhead<'_> {
        self.thinking_ahead.fetch_add(1, Ordering::SeqCst);
        ThinkingAhead(self)
    }
}

/// A seat counted as thinking ahead (see [`Unanswered::thinking_ahead`]).
#[derive(Debug)]
pub struct ThinkingAhead<'a>(&'a Unanswered);

impl Drop for ThinkingAhead<'_> {
    fn drop(&mut self) {
        self.0.thinking_ahead.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<'a, G: Game> Ask<'a, G> {
    /// The move of `role` in `state` of `game`, by `deadline`.
    pub fn new(game: &'a G, state: &'a G::State, role: RoleIndex, deadline: Deadline) -> Self {
        Ask {
            game,
            state,
            role,
            deadline,
            unanswered: None,
        }
    }

    /// The role's only legal move, when it has exactly one (a waiting role's no-op): nothing to decide.
    pub fn forced(&self) -> Option<Choice<G::Move>> {
        forced_choice(self.game, self.state, self.role, Instant::now())
    }
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
        stats: no_effort(started.elapsed()),
        explanation: None,
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

/// Zero effort, for players that do not search.
pub(crate) fn no_effort(elapsed: Duration) -> SearchStats {
    SearchStats {
        elapsed,
        ..SearchStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(stats: SearchStats, expected: &str) {
        assert_eq!(stats.effort(), expected);
    }

    #[test]
    fn an_effort_line_says_what_was_searched_and_how_fast() {
        check(SearchStats::default(), "");
        check(
            SearchStats {
                elapsed: Duration::from_secs(2),
                depth: 7,
                nodes: 120_000,
                expected: Some(61.6),
                ..SearchStats::default()
            },
            "depth 7, 120,000 nodes (60,000/s), expects 62",
        );
        check(
            SearchStats {
                elapsed: Duration::from_secs(4),
                simulations: 100_000,
                tree: 457_049,
                expected: Some(61.0),
                ..SearchStats::default()
            },
            "100,000 simulations (25,000/s), tree of 457,049 nodes, expects 61",
        );
        // A search whose walks end in solved nodes has stopped learning: the line shows it.
        check(
            SearchStats {
                elapsed: Duration::from_secs(4),
                simulations: 234,
                solved_walks: 3_500_000,
                tree: 58_457,
                expected: Some(50.0),
                ..SearchStats::default()
            },
            "234 simulations (58/s), 3,500,000 walks into solved nodes, tree of 58,457 nodes, \
             expects 50",
        );
    }
}
