//! Playing a game on against a deadline, in stretches paced by the game's own speed ([`Pace`]).

use std::time::{Duration, Instant};

/// A stretch of a game that took less than this plays twice as many steps next time, one that
/// took more than twice this half as many.
const QUICK_STRETCH: Duration = Duration::from_millis(1);

/// The most steps a stretch plays.
const MAX_STRETCH: u32 = 64;

/// How a game is played on against a deadline: in stretches between two readings of the clock, as
/// long as the game's speed lets a stretch take about [`QUICK_STRETCH`]. A step of tic-tac-toe takes
/// a fraction of a microsecond, one of chess on the network most of a millisecond: stretches of a
/// fixed length either read the clock at every step of the first or overrun a window of a few tens
/// of milliseconds by a whole stretch of the second (`mcts`'s moves probe overran its 20 ms by 100 ms
/// and more, every move of a chess match at a quarter-second clock). A pace carries what it has
/// learnt from one game on to the next.
///
/// ```
/// use ggp::game::{Game, Pace};
/// use ggp::games::tictactoe::TicTacToe;
/// use std::time::{Duration, Instant};
///
/// let game = TicTacToe::new(3, 3).unwrap();
/// let mut rng = rand::SeedableRng::seed_from_u64(1);
/// let mut buf = Vec::new();
/// let mut pace = Pace::new();
/// let deadline = Instant::now() + Duration::from_secs(60);
/// let (end, steps) = pace
///     .play_on(game.initial_state(), 0, 100, deadline, |s, n| {
///         game.random_playout(s, &mut rng, &mut buf, n)
///     })
///     .expect("in time");
/// assert!(game.is_terminal(&end) && (5..=9).contains(&steps));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    stretch: u32,
    /// The time of a step in the last stretch.
    step: Duration,
}

impl Pace {
    /// A pace that knows nothing of the game yet: its first stretch is one step.
    pub const fn new() -> Pace {
        Pace {
            stretch: 1,
            step: Duration::ZERO,
        }
    }

    /// The time of a step in the last stretch played (zero before any).
    pub fn step_time(&self) -> Duration {
        self.step
    }

    /// Plays a game on from `state`, `steps` joint moves into it, by `play(state, n)` (a
    /// playout of at most `n` joint moves, fewer only where the game ends): until the game ends
    /// (a stretch plays fewer joint moves than it may; the game's own playout tells, so the pace
    /// asks nothing of the game itself) or reaches `limit` joint moves. A stretch starts only
    /// while the last one's pace says it ends before `deadline`. The last state and the joint
    /// moves played in all; `None` when `deadline` came first.
    pub fn play_on<S>(
        &mut self,
        mut state: S,
        mut steps: u32,
        limit: u32,
        deadline: Instant,
        mut play: impl FnMut(&S, u32) -> (S, u32),
    ) -> Option<(S, u32)> {
        while steps < limit {
            let n = self.stretch.min(limit - steps);
            let now = Instant::now();
            if now + self.step * n >= deadline {
                return None;
            }
            let (next, played) = play(&state, n);
            let took = now.elapsed();
            if played > 0 {
                self.step = took / played;
            }
            if took < QUICK_STRETCH {
                self.stretch = (self.stretch * 2).min(MAX_STRETCH);
            } else if took > QUICK_STRETCH * 2 {
                self.stretch = (self.stretch / 2).max(1);
            }
            (state, steps) = (next, steps + played);
            // A stretch cut short ended the game (or found a role without a move).
            if played < n {
                break;
            }
        }
        Some((state, steps))
    }
}

impl Default for Pace {
    fn default() -> Self {
        Pace::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rand::rngs::SmallRng;

    #[test]
    fn a_pace_plays_quick_steps_in_long_stretches_and_starts_none_past_the_deadline() {
        use crate::games::connect4::Connect4;
        use rand::SeedableRng;
        use std::cell::Cell;
        let game = Connect4::new(6, 7).unwrap();
        let start = game.initial_state();
        let mut rng = SmallRng::seed_from_u64(3);
        let mut buf = Vec::new();
        let calls = Cell::new(0u32);
        let mut play = |s: &_, n| {
            calls.set(calls.get() + 1);
            game.random_playout(s, &mut rng, &mut buf, n)
        };
        let mut pace = Pace::new();
        // A deadline passed: nothing is played.
        assert!(pace
            .play_on(start, 0, 1000, Instant::now(), &mut play)
            .is_none());
        assert_eq!(calls.get(), 0);
        let far = Instant::now() + Duration::from_secs(60);
        // The limit stops a game short, in the middle of a stretch if need be.
        let (state, steps) = pace.play_on(start, 0, 5, far, &mut play).unwrap();
        assert_eq!(steps, 5);
        assert!(!game.is_terminal(&state));
        // Games of Connect Four go on to their end, in stretches longer than one step.
        let (mut played, mut games) = (0, 0);
        calls.set(0);
        while games < 20 {
            let (end, steps) = pace.play_on(start, 0, 1000, far, &mut play).unwrap();
            assert!(game.is_terminal(&end));
            (played, games) = (played + steps, games + 1);
        }
        assert!(
            calls.get() * 4 < played,
            "{} stretches for {played} steps",
            calls.get()
        );
        assert!(pace.step_time() > Duration::ZERO);
    }
}
