//! Random playouts from the initial state, for `ggp-run bench` and the criterion benches.
//!
//! The loop is [`Game::random_playout`], which allocates nothing per move, so the numbers measure the
//! game's move generation and state update.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::Game;

/// A playout stops after this many joint moves even if the game has not ended (rule games may loop).
pub const MAX_PLAYOUT_STEPS: u32 = 10_000;

/// What a batch of playouts did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlayoutStats {
    /// Playouts finished.
    pub playouts: u64,
    /// Joint moves played in all of them (states reached).
    pub states: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Playouts stopped at [`MAX_PLAYOUT_STEPS`] before the game ended.
    pub cut: u64,
}

impl PlayoutStats {
    /// Playouts per second.
    pub fn playouts_per_sec(&self) -> f64 {
        self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// States reached per second.
    pub fn states_per_sec(&self) -> f64 {
        self.states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Average number of moves in a playout.
    pub fn avg_depth(&self) -> f64 {
        if self.playouts == 0 {
            0.0
        } else {
            self.states as f64 / self.playouts as f64
        }
    }
}

impl std::fmt::Display for PlayoutStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "playouts_per_sec={:.0} states_per_sec={:.0} avg_depth={:.2}",
            self.playouts_per_sec(),
            self.states_per_sec(),
            self.avg_depth()
        )
    }
}

/// Plays `count` random playouts from the initial state with a generator seeded by `seed`.
pub fn run_playouts<G: Game>(game: &G, count: u64, rng: &mut SmallRng) -> PlayoutStats {
    let start = game.initial_state();
    let mut buf = Vec::new();
    let started = Instant::now();
    let mut states = 0u64;
    let mut cut = 0u64;
    for _ in 0..count {
        let (end, steps) = game.random_playout(&start, rng, &mut buf, MAX_PLAYOUT_STEPS);
        states += u64::from(steps);
        if steps >= MAX_PLAYOUT_STEPS && !game.is_terminal(&end) {
            cut += 1;
        }
    }
    PlayoutStats {
        playouts: count,
        states,
        elapsed: started.elapsed(),
        cut,
    }
}

/// Random playouts for about `seconds` seconds after a warm-up of a tenth of that (at most one second).
///
/// Playouts run in batches between readings of the clock: one playout at first, twice as many each
/// time a batch takes under a millisecond, up to 64. A slow game (chess on the Datalog evaluator, a
/// third of a second a playout) so overruns the time by one playout at most, not by a batch of 64.
pub fn measure_playouts<G: Game>(game: &G, seconds: f64, seed: u64) -> PlayoutStats {
    measure_playouts_in_lanes(game, seconds, seed, 1)
}

/// [`measure_playouts`] with playouts `lanes` at a time (2 to 64) through [`Game::playout_goals`]:
/// the network plays them together, one per bit of a word; other engines one after the other. The
/// moves of batched playouts are not counted (`states` stays 0).
pub fn measure_playouts_in_lanes<G: Game>(
    game: &G,
    seconds: f64,
    seed: u64,
    lanes: u32,
) -> PlayoutStats {
    let mut rng = SmallRng::seed_from_u64(seed);
    let lanes = lanes.clamp(1, 64);
    let start = game.initial_state();
    let mut buf = Vec::new();
    let mut goals = vec![0i64; game.info().num_roles()];
    let seconds = if seconds.is_finite() {
        seconds.clamp(0.01, 3600.0)
    } else {
        1.0
    };
    let mut batch = 1;
    let mut timed = |rng: &mut SmallRng, batch: &mut u64| {
        let stats = if lanes == 1 {
            run_playouts(game, *batch, rng)
        } else {
            let started = Instant::now();
            let mut playouts = 0u64;
            for _ in 0..*batch {
                playouts +=
                    u64::from(game.playout_goals(&start, rng, &mut buf, lanes, &mut goals, None));
            }
            PlayoutStats {
                playouts,
                elapsed: started.elapsed(),
                ..PlayoutStats::default()
            }
        };
        if stats.elapsed < Duration::from_millis(1) && *batch < 64 {
            *batch *= 2;
        }
        stats
    };
    let warm_up = Duration::from_secs_f64((seconds / 10.0).min(1.0));
    let warm_start = Instant::now();
    while warm_start.elapsed() < warm_up {
        timed(&mut rng, &mut batch);
    }
    let budget = Duration::from_secs_f64(seconds);
    let mut total = PlayoutStats::default();
    let started = Instant::now();
    while started.elapsed() < budget {
        let done = timed(&mut rng, &mut batch);
        total.playouts += done.playouts;
        total.states += done.states;
        total.cut += done.cut;
    }
    total.elapsed = started.elapsed();
    total
}

/// [`measure_playouts`] on `threads` threads at once, each with its own generator (seeded `seed`,
/// `seed + 1`, ...): the counts add up and the elapsed time is the longest thread's.
pub fn measure_playouts_parallel<G: Game>(
    game: &G,
    seconds: f64,
    seed: u64,
    threads: usize,
    lanes: u32,
) -> PlayoutStats {
    if threads <= 1 {
        return measure_playouts_in_lanes(game, seconds, seed, lanes);
    }
    let per_thread: Vec<PlayoutStats> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                s.spawn(move || {
                    measure_playouts_in_lanes(game, seconds, seed.wrapping_add(t), lanes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    per_thread
        .iter()
        .fold(PlayoutStats::default(), |acc, s| PlayoutStats {
            playouts: acc.playouts + s.playouts,
            states: acc.states + s.states,
            elapsed: acc.elapsed.max(s.elapsed),
            cut: acc.cut + s.cut,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::tictactoe::TicTacToe;

    #[test]
    fn playouts_end_and_are_counted() {
        let g = TicTacToe::new(3, 3).unwrap();
        let mut rng = SmallRng::seed_from_u64(7);
        let s = run_playouts(&g, 100, &mut rng);
        assert_eq!(s.playouts, 100);
        // A 3×3 game lasts 5 to 9 moves.
        assert!((5.0..=9.0).contains(&s.avg_depth()), "{s}");
    }
}
