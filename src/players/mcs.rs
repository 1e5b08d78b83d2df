//! `mcs`: Monte Carlo search (Gamemaster's MCS player). Each of this player's moves in turn is followed
//! by random replies of the other roles and a random playout to the end; when the deadline comes, the
//! move with the best average goal is played. No tree is kept: it sees one move deep, and every playout
//! costs the same.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::{random_index, Game, GameError, RoleIndex};
use crate::players::clock::{Deadline, Progress, ProgressTimer, Ticker};
use crate::players::{forced_move, Choice, Player, PlayerError, SearchStats};

/// The longest playout: games that can go on for ever are scored where the playout stops.
pub(crate) const MAX_PLAYOUT_STEPS: u32 = 10_000;

/// The Monte Carlo search player.
pub struct McsPlayer {
    rng: SmallRng,
    progress: Option<Progress>,
}

impl McsPlayer {
    /// A player whose playouts are seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        McsPlayer {
            rng: SmallRng::seed_from_u64(seed),
            progress: None,
        }
    }

    /// Reports progress about once a second to `progress`.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }
}

impl<G: Game> Player<G> for McsPlayer {
    fn name(&self) -> String {
        "mcs".to_string()
    }

    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError> {
        let started = Instant::now();
        if let Some(mv) = forced_move(game, state, role) {
            return Ok(Choice {
                mv,
                stats: SearchStats {
                    elapsed: started.elapsed(),
                    ..SearchStats::default()
                },
            });
        }
        let roles = game.info().num_roles();
        let mut lists: Vec<Vec<G::Move>> = vec![Vec::new(); roles];
        for (r, list) in lists.iter_mut().enumerate() {
            game.legal_moves(state, r, list);
            if list.is_empty() {
                return Err(GameError::Rules(format!(
                    "{} has no legal move",
                    game.info().roles[r]
                ))
                .into());
            }
        }
        let n = lists[role].len();
        // (playouts, total goal) per move.
        let mut stats = vec![(0u64, 0u64); n];
        let mut ticker = Ticker::new(deadline);
        let mut progress = ProgressTimer::new(self.progress.clone());
        let mut joint = Vec::with_capacity(roles);
        let mut buf = Vec::new();
        let mut simulations = 0u64;
        let mean = |(count, total): (u64, u64)| total as f64 / count.max(1) as f64;
        let best = |stats: &[(u64, u64)]| {
            (0..stats.len())
                .max_by(|&a, &b| mean(stats[a]).total_cmp(&mean(stats[b])).then(b.cmp(&a)))
                .unwrap_or(0)
        };
        'search: loop {
            for (i, slot) in stats.iter_mut().enumerate() {
                if ticker.tick() {
                    break 'search;
                }
                joint.clear();
                for (r, list) in lists.iter().enumerate() {
                    joint.push(if r == role {
                        list[i].clone()
                    } else {
                        list[random_index(&mut self.rng, list.len())].clone()
                    });
                }
                let next = game.next_state(state, &joint);
                let (end, _) =
                    game.random_playout(&next, &mut self.rng, &mut buf, MAX_PLAYOUT_STEPS);
                slot.0 += 1;
                slot.1 += game.goal(&end, role).clamp(0, 100) as u64;
                simulations += 1;
            }
            progress.maybe(|| {
                let b = best(&stats);
                format!(
                    "mcs: {simulations} simulations, best {} averaging {:.0}",
                    game.show_move(&lists[role][b]),
                    mean(stats[b])
                )
            });
        }
        let b = best(&stats);
        Ok(Choice {
            mv: lists[role][b].clone(),
            stats: SearchStats {
                elapsed: started.elapsed(),
                simulations,
                expected: (stats[b].0 > 0).then(|| mean(stats[b])),
                ..SearchStats::default()
            },
        })
    }
}
