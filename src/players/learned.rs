//! `learned:FILE`: seed 2's learned player, which moves to the next state with the best learned score.
//!
//! The scores come from [`crate::learn::train`] through a file ([`crate::learn::Model`]). The first role
//! moves to the next state with the highest score, the second to the lowest; a finished game scores by
//! its goals and a state never seen in training scores 0 (neutral), as in the seed. Equally good states
//! are chosen between at random, seeded per role. A choice costs one successor and one table look-up per
//! legal move, so the player answers at once, well inside any deadline.
//!
//! The file is read (and checked against the game) when the player prepares for a match, or at its first
//! move if nobody asked it to prepare; a file of another game is an error, not a silent bad player.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::{Game, GameError, RoleIndex};
use crate::learn::{best_next, check_supported, Model, ModelError};
use crate::players::forced_choice;
use crate::players::{Ask, Choice, Deadline, Player, PlayerError, SearchStats};

/// Seed 2's learned player.
pub struct LearnedPlayer {
    file: Option<PathBuf>,
    model: Option<Arc<Model>>,
    /// The game the model was last checked against, by its name and initial state: checking takes
    /// the states two joint moves deep (thousands of them on a big board), too slow for every move.
    checked: Option<(String, u64)>,
    rng: SmallRng,
}

impl LearnedPlayer {
    /// A player that reads its scores from `file` (`None`: it fails, asking for a file).
    pub fn new(file: Option<PathBuf>, seed: u64) -> LearnedPlayer {
        LearnedPlayer {
            file,
            model: None,
            checked: None,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// A player with the scores of `file` already read (a tournament reads each file once).
    pub fn with_model(file: PathBuf, model: Arc<Model>, seed: u64) -> LearnedPlayer {
        LearnedPlayer {
            file: Some(file),
            model: Some(model),
            checked: None,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Loads the file if needed and checks it against `game`.
    fn ready<G: Game>(&mut self, game: &G) -> Result<Arc<Model>, ModelError> {
        check_supported(game.info())?;
        let model = match &self.model {
            Some(m) => m.clone(),
            None => {
                let path = self.file.as_ref().ok_or(ModelError::NoFile)?;
                let m = Arc::new(Model::load(path)?);
                self.model = Some(m.clone());
                m
            }
        };
        let seen = (
            game.info().name.clone(),
            game.state_key(&game.initial_state()),
        );
        if self.checked.as_ref() != Some(&seen) {
            let path = self.file.clone().unwrap_or_else(|| PathBuf::from("scores"));
            model.check(game, &path)?;
            self.checked = Some(seen);
        }
        Ok(model)
    }
}

impl<G: Game> Player<G> for LearnedPlayer {
    fn name(&self) -> String {
        match &self.file {
            Some(f) => format!("learned:{}", f.display()),
            None => "learned".to_string(),
        }
    }

    fn prepare(
        &mut self,
        game: &G,
        _role: RoleIndex,
        _deadline: Deadline,
    ) -> Result<(), PlayerError> {
        self.ready(game)?;
        Ok(())
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role) = (ask.game, ask.state, ask.role);
        let started = Instant::now();
        let model = self.ready(game)?;
        if let Some(choice) = forced_choice(game, state, role, started) {
            return Ok(choice);
        }
        if game.mover(state) != Some(role) {
            return Err(GameError::Rules(format!(
                "{} waits but has not exactly one move (the learner plays two roles taking turns)",
                game.info().roles[role]
            ))
            .into());
        }
        let mut moves = Vec::new();
        let (i, _, score) = best_next(game, state, role, &model.scores, &mut self.rng, &mut moves)
            .ok_or_else(|| {
                GameError::Rules(format!("{} has no legal move", game.info().roles[role]))
            })?;
        // The score is the first role's, in -1..=1; as a goal for `role`, 0..=100.
        let mine = if role == 0 { score } else { -score };
        Ok(Choice {
            explanation: None,
            mv: moves.swap_remove(i),
            stats: SearchStats {
                nodes: moves.len() as u64 + 1,
                elapsed: started.elapsed(),
                expected: Some(50.0 + 50.0 * mine),
                ..SearchStats::default()
            },
        })
    }
}
