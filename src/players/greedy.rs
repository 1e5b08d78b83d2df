//! `greedy`, after Stanford's Gamemaster: plays the move whose next state gives this player the highest
//! goal value (goal proximity: many GDL games score unfinished states too), ties broken at random. Where
//! other roles move at the same time, each of this player's moves is scored against random replies.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{random_index, Game};
use crate::players::{all_legal_moves, Ask, Choice, Player, PlayerError, SearchStats};

/// The greedy player.
pub struct GreedyPlayer {
    rng: SmallRng,
}

impl GreedyPlayer {
    /// A greedy player breaking ties with a generator seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        GreedyPlayer {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl<G: Game> Player<G> for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".to_string()
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role) = (ask.game, ask.state, ask.role);
        let started = Instant::now();
        if let Some(choice) = ask.forced() {
            return Ok(choice);
        }
        let roles = game.info().num_roles();
        let lists = all_legal_moves(game, state)?;
        let mut best = (i32::MIN, Vec::new());
        let mut joint = Vec::with_capacity(roles);
        let mut judged = 0u64;
        for (i, mv) in lists[role].iter().enumerate() {
            // A step of a big game on Datalog takes milliseconds: past the deadline, the best so far.
            if i > 0 && ask.deadline.passed() {
                break;
            }
            judged += 1;
            joint.clear();
            for (r, list) in lists.iter().enumerate() {
                joint.push(if r == role {
                    mv.clone()
                } else {
                    list[random_index(&mut self.rng, list.len())].clone()
                });
            }
            let next = game.next_state(state, &joint);
            let value = game.goal(&next, role);
            if value > best.0 {
                best = (value, Vec::new());
            }
            if value == best.0 {
                best.1.push(i);
            }
        }
        let pick = best.1[self.rng.gen_range(0..best.1.len())];
        Ok(Choice {
            explanation: None,
            mv: lists[role][pick].clone(),
            stats: SearchStats {
                nodes: judged,
                elapsed: started.elapsed(),
                expected: Some(f64::from(best.0)),
                ..SearchStats::default()
            },
        })
    }
}
