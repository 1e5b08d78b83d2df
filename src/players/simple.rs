//! Players that do not search: `legal` (the first legal move) and `random` (a seeded uniform choice).

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{Game, GameError, RoleIndex};
use crate::players::no_effort;
use crate::players::{Ask, Choice, Player, PlayerError};

fn pick<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    choose: impl FnOnce(usize) -> usize,
) -> Result<Choice<G::Move>, PlayerError> {
    let started = Instant::now();
    let mut moves = Vec::new();
    game.legal_moves(state, role, &mut moves);
    if moves.is_empty() {
        return Err(PlayerError::Game(GameError::Rules(format!(
            "{} has no legal move",
            game.info().roles.get(role).map_or("?", |r| r.as_str())
        ))));
    }
    let i = choose(moves.len());
    Ok(Choice {
        explanation: None,
        mv: moves.swap_remove(i),
        stats: no_effort(started.elapsed()),
    })
}

/// Always plays the first legal move.
#[derive(Clone, Debug, Default)]
pub struct LegalPlayer;

impl<G: Game> Player<G> for LegalPlayer {
    fn name(&self) -> String {
        "legal".to_string()
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role) = (ask.game, ask.state, ask.role);
        pick(game, state, role, |_| 0)
    }
}

/// Plays a uniformly random legal move; the same seed gives the same moves.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: SmallRng,
    seed: u64,
}

impl RandomPlayer {
    /// A random player seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        RandomPlayer {
            rng: SmallRng::seed_from_u64(seed),
            seed,
        }
    }
}

impl<G: Game> Player<G> for RandomPlayer {
    fn name(&self) -> String {
        format!("random(seed {})", self.seed)
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role) = (ask.game, ask.state, ask.role);
        let rng = &mut self.rng;
        pick(game, state, role, |n| rng.gen_range(0..n))
    }
}
