//! Seed 2's learned scores as an evaluator: a search of any kind can judge its horizon by what
//! self-play learned.

use std::sync::Arc;

use super::{final_estimate, goal_of_difference, Estimate, Evaluator};
use crate::game::{Game, GameError};
use crate::learn::Model;

/// Judges a state by its learned score (see [`crate::learn`]): the first role's score in -1..=1 is a
/// guess of a thousand times it, a state never seen in training is neutral, and a finished game is
/// exact.
#[derive(Clone, Debug)]
pub struct LearnedScores {
    model: Arc<Model>,
}

impl LearnedScores {
    /// Judges by `model`, which the caller has checked against the game ([`Model::check`]).
    pub fn new(model: Arc<Model>) -> LearnedScores {
        LearnedScores { model }
    }
}

impl<G: Game> Evaluator<G> for LearnedScores {
    fn name(&self) -> String {
        format!("learned scores of {}", self.model.header.game)
    }

    fn estimate(&self, game: &G, state: &G::State) -> Result<Estimate, GameError> {
        if let Some(done) = final_estimate(game, state) {
            return Ok(done);
        }
        let score = self.model.score(game.state_key(state));
        Ok(Estimate::Guess((score * 1000.0).round() as i32))
    }

    /// A score of `s` is a goal difference of `100 s`: the first role expects `50 + 50 s`.
    fn expected_goal(&self, guess: i32) -> Option<f64> {
        Some(goal_of_difference(guess))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;
    use crate::learn::{train, DEFAULT_RATE};

    #[test]
    fn learned_scores_judge_states_as_training_scored_them() {
        let g = TicTacToe::new(3, 3).unwrap();
        let model = Arc::new(
            train(&g, 5_000, DEFAULT_RATE, 3, |_| {
                std::ops::ControlFlow::Continue(())
            })
            .unwrap(),
        );
        let eval = LearnedScores::new(model.clone());
        let s = g.initial_state();
        let expected = (model.score(g.state_key(&s)) * 1000.0).round() as i32;
        assert_eq!(eval.estimate(&g, &s).unwrap(), Estimate::Guess(expected));
        let mut v = [0.0; 2];
        eval.values(&g, &s, &mut v).unwrap();
        assert!((v[0] - (50.0 + f64::from(expected) / 20.0)).abs() < 1e-9);
    }
}
