//! Evaluators: how a search judges a state it stops at before the game ends.
//!
//! A [`Game`] says only what its rules say: the moves, the next state, the goals of a finished game. A
//! search that stops short of the end needs a judgement of the states at its horizon, and that judgement
//! is not part of the rules: a rule file brings none, a hand-written game may bring a heuristic, a learner
//! produces one. An [`Evaluator`] is that judgement, handed to a search beside the game (as OpenSpiel's
//! `MCTSBot` takes an evaluator), so one search plays with any of them:
//!
//! - [`GoalsOnly`]: the goal values of the state itself (exact at the end, usually flat before it);
//! - [`GoalMobility`]: goal difference and mobility, the cheap guess for rule files (`--playouts 0`);
//! - [`Playouts`]: the mean outcome of random playouts from the state, seeded by the state, so a search
//!   sees the same value every time (the default for rule files);
//! - [`LearnedScores`]: seed 2's learned scores;
//! - the native games' hand-written heuristics, beside their games (`games::connect4::Heuristic`, ...).
//!
//! An evaluator answers in two ways. [`Evaluator::estimate`] is the seeds' `est`: one judgement from
//! the first role's point of view, `Definitely` a result or a `Guess` on the evaluator's own scale, which
//! the seeds' two-player searches compare and print. [`Evaluator::values`] is every role's expected goal
//! on GDL's 0..=100 scale, for searches of any number of roles. [`Evaluator::expected_goal`] says what a
//! guess means on the goal scale, when it means anything there, so a trace or a report can say it in
//! goals without knowing the evaluator's scale.

mod learned;
mod playouts;

use std::fmt;

use crate::game::{Game, GameError, Goal, RoleIndex};

pub use learned::LearnedScores;
pub use playouts::{Playouts, DEFAULT_PLAYOUTS};

/// The result of a finished two-player game, from the seeds' `outcome` type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// This role won.
    Winner(RoleIndex),
    /// Nobody won.
    Draw,
}

/// A judgement of a state, from the seeds' `est` type, always from the point of view of role 0 (the
/// seeds' Maxie): larger is better for role 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Estimate {
    /// The game is decided.
    Definitely(Outcome),
    /// A heuristic score on the evaluator's scale; positive favours role 0.
    Guess(i32),
}

impl Estimate {
    /// A total order on estimates: a certain win for role 0 is above every guess, a certain loss below, a
    /// draw counts as a guess of 0.
    pub fn score(self) -> i64 {
        match self {
            Estimate::Definitely(Outcome::Winner(0)) => i64::MAX / 2,
            Estimate::Definitely(Outcome::Winner(_)) => -(i64::MAX / 2),
            Estimate::Definitely(Outcome::Draw) => 0,
            Estimate::Guess(n) => i64::from(n),
        }
    }

    /// The estimate of a terminal two-player state with these goal values.
    pub fn from_goals(goal0: Goal, goal1: Goal) -> Estimate {
        use std::cmp::Ordering::*;
        match goal0.cmp(&goal1) {
            Greater => Estimate::Definitely(Outcome::Winner(0)),
            Less => Estimate::Definitely(Outcome::Winner(1)),
            Equal => Estimate::Definitely(Outcome::Draw),
        }
    }
}

impl fmt::Display for Estimate {
    /// The seeds' trace notation: `Guess:3`, `Guess:~2` (SML writes negative numbers with `~`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Estimate::Guess(n) if *n < 0 => write!(f, "Guess:~{}", n.unsigned_abs()),
            Estimate::Guess(n) => write!(f, "Guess:{n}"),
            Estimate::Definitely(Outcome::Draw) => write!(f, "Definitely:Draw"),
            Estimate::Definitely(Outcome::Winner(0)) => write!(f, "Definitely:Winner Maxie"),
            Estimate::Definitely(Outcome::Winner(_)) => write!(f, "Definitely:Winner Minnie"),
        }
    }
}

/// How a search judges a state it does not search past (see the module documentation).
///
/// An evaluator is shared by every thread of a search, so it takes `&self`; one that keeps scratch
/// space allocates it per call or behind its own lock.
pub trait Evaluator<G: Game>: Send + Sync {
    /// A short name for reports (`playouts(8)`, `connect4 heuristic`).
    fn name(&self) -> String;

    /// The seeds' estimate of `state`, from role 0's point of view; exact in a finished game. An
    /// evaluator that cannot judge a state says so with an error rather than inventing a number.
    fn estimate(&self, game: &G, state: &G::State) -> Result<Estimate, GameError>;

    /// [`Evaluator::estimate`] for a search that must stop at `deadline`: an evaluator that can take
    /// long (playouts of a long game) gives up with [`GameError::OutOfTime`] once it passes, and
    /// otherwise judges exactly as `estimate` does. The default judges at once.
    fn estimate_until(
        &self,
        game: &G,
        state: &G::State,
        deadline: std::time::Instant,
    ) -> Result<Estimate, GameError> {
        let _ = deadline;
        self.estimate(game, state)
    }

    /// The first role's expected goal (0..=100) that `Guess(guess)` stands for, when the evaluator's
    /// scale has that meaning (a hand-written heuristic's score usually has not).
    fn expected_goal(&self, guess: i32) -> Option<f64> {
        let _ = guess;
        None
    }

    /// Every role's expected goal, 0..=100, in `state`, into `out` (one value per role). The default
    /// reads a finished game's goals, and otherwise turns a two-role [`Evaluator::estimate`] into goals
    /// (a guess through [`Evaluator::expected_goal`], 50 each when it has no goal meaning); games of
    /// other sizes get the state's goal values.
    fn values(&self, game: &G, state: &G::State, out: &mut [f64]) -> Result<(), GameError> {
        if game.is_terminal(state) || out.len() != 2 {
            return goals_into(game, state, out);
        }
        let first = match self.estimate(game, state)? {
            Estimate::Definitely(Outcome::Winner(0)) => 100.0,
            Estimate::Definitely(Outcome::Winner(_)) => 0.0,
            Estimate::Definitely(Outcome::Draw) => 50.0,
            Estimate::Guess(n) => self.expected_goal(n).unwrap_or(50.0),
        };
        out[0] = first;
        out[1] = 100.0 - first;
        Ok(())
    }
}

/// Each role's goal in `state` into `out`, clamped to 0..=100.
pub fn goals_into<G: Game>(game: &G, state: &G::State, out: &mut [f64]) -> Result<(), GameError> {
    for (r, v) in out.iter_mut().enumerate() {
        *v = f64::from(game.goal(state, r).clamp(0, 100));
    }
    Ok(())
}

/// The estimate of a finished state, or `None` while the game goes on or it has other than two roles.
pub fn final_estimate<G: Game>(game: &G, state: &G::State) -> Option<Estimate> {
    (game.info().num_roles() == 2 && game.is_terminal(state))
        .then(|| Estimate::from_goals(game.goal(state, 0), game.goal(state, 1)))
}

/// Judges by the goal values alone: exact in a finished game, `Guess(0)` before it (the judgement of a
/// game that brings no heuristic; `values` reads the state's goal values, which some games give before
/// the end).
#[derive(Clone, Copy, Debug, Default)]
pub struct GoalsOnly;

impl<G: Game> Evaluator<G> for GoalsOnly {
    fn name(&self) -> String {
        "goals".to_string()
    }

    fn estimate(&self, game: &G, state: &G::State) -> Result<Estimate, GameError> {
        Ok(final_estimate(game, state).unwrap_or(Estimate::Guess(0)))
    }

    fn values(&self, game: &G, state: &G::State, out: &mut [f64]) -> Result<(), GameError> {
        goals_into(game, state, out)
    }
}

/// The cheap guess for a two-role game that brings no heuristic: the goal difference of the state
/// (many games give partial credit before the end) weighted ten to one over the difference in legal
/// moves; exact in a finished game, `Guess(0)` for other numbers of roles.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoalMobility;

impl<G: Game> Evaluator<G> for GoalMobility {
    fn name(&self) -> String {
        "goals and mobility".to_string()
    }

    fn estimate(&self, game: &G, state: &G::State) -> Result<Estimate, GameError> {
        if game.info().num_roles() != 2 {
            return Ok(Estimate::Guess(0));
        }
        if let Some(done) = final_estimate(game, state) {
            return Ok(done);
        }
        let (g0, g1) = (game.goal(state, 0), game.goal(state, 1));
        let mut buf = Vec::new();
        game.legal_moves(state, 0, &mut buf);
        let m0 = buf.len() as i32;
        game.legal_moves(state, 1, &mut buf);
        let m1 = buf.len() as i32;
        Ok(Estimate::Guess((g0 - g1) * 10 + (m0 - m1)))
    }

    /// Ten points of guess are about one point of goal difference, so the first role expects half of
    /// it above 50.
    fn expected_goal(&self, guess: i32) -> Option<f64> {
        Some(goal_of_difference(guess))
    }
}

/// The first role's expected goal for a guess of ten times the expected goal difference (the scale of
/// [`Playouts`] and [`GoalMobility`]): `50 + guess / 20`, within 0..=100.
pub(crate) fn goal_of_difference(guess: i32) -> f64 {
    (50.0 + f64::from(guess) / 20.0).clamp(0.0, 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

    #[test]
    fn estimates_print_like_the_seeds() {
        assert_eq!(Estimate::Guess(-2).to_string(), "Guess:~2");
        assert_eq!(Estimate::Guess(3).to_string(), "Guess:3");
    }

    #[test]
    fn estimate_order_puts_certain_results_outside_guesses() {
        let win = Estimate::Definitely(Outcome::Winner(0)).score();
        let loss = Estimate::Definitely(Outcome::Winner(1)).score();
        assert!(win > Estimate::Guess(i32::MAX).score());
        assert!(loss < Estimate::Guess(i32::MIN).score());
    }

    #[test]
    fn goals_only_is_exact_at_the_end_and_neutral_before() {
        let g = TicTacToe::new(3, 3).unwrap();
        let s = g.initial_state();
        assert_eq!(GoalsOnly.estimate(&g, &s).unwrap(), Estimate::Guess(0));
        let mut s = s;
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
        assert_eq!(
            GoalsOnly.estimate(&g, &s).unwrap(),
            Estimate::Definitely(Outcome::Winner(0))
        );
        let mut v = [0.0; 2];
        GoalsOnly.values(&g, &s, &mut v).unwrap();
        assert_eq!(v, [100.0, 0.0]);
    }

    #[test]
    fn goal_mobility_counts_moves_and_says_goals() {
        let g = TicTacToe::new(3, 3).unwrap();
        // x to move has nine moves, o waits with one.
        let e = GoalMobility.estimate(&g, &g.initial_state()).unwrap();
        assert_eq!(e, Estimate::Guess(8));
        let mut v = [0.0; 2];
        GoalMobility.values(&g, &g.initial_state(), &mut v).unwrap();
        assert_eq!(v, [50.4, 49.6]);
    }
}
