//! The judgement of games that bring none: the mean outcome of random playouts.
//!
//! A rule file says how a game ends but not who stands better in the middle of it; goal values of
//! unfinished states are usually flat. [`Playouts`] judges a state by the goals at the ends of a few random
//! playouts from it, which is what makes a depth-limited search play sensibly on any rule file.
//!
//! The judgement is repeatable: the playouts' generator is seeded from the state's hash, so a search
//! visits the same leaves with the same values every time (and Jamboree's parallel leaves agree with a
//! sequential search's). On the network a judgement may play 64 playouts at once instead (see
//! [`Playouts`]'s `play`), once the game has measured that this pays, a moment after it loads.

use std::hash::{Hash, Hasher};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{final_estimate, goal_of_difference, goals_into, Estimate, Evaluator};
use crate::game::{Game, GameError, Pace};

/// The longest playout a judgement plays before scoring the state it reached.
const MAX_STEPS: u32 = 1_000;

thread_local! {
    /// The pace of the judgements with a deadline on this thread: a search judges leaf after leaf of
    /// one game, and a pace learnt anew at each would play its first stretch unmeasured (32 moves of
    /// chess on the network, 20 ms, made `id` answer 10–34 ms past its deadline at a quarter-second
    /// clock). The pace decides only where the clock is read, never a move.
    static PACE: std::cell::Cell<Pace> = const { std::cell::Cell::new(Pace::new()) };
}

/// The playouts of a judgement played at once, where the game plays them so (one per bit of a word).
const BATCH: u32 = 64;

/// How far off a judgement without a deadline puts the deadline of a batch.
const NO_DEADLINE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The random playouts behind each judgement of a rule game by default: enough to tell a won position
/// from a lost one, few enough that a depth-4 search plays a whole game of Connect Four in seconds.
pub const DEFAULT_PLAYOUTS: u32 = 8;

/// Judges a state by the mean outcome of random playouts (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Playouts {
    playouts: u32,
}

impl Playouts {
    /// Each judgement plays `playouts` random playouts (at least one).
    pub fn new(playouts: u32) -> Playouts {
        Playouts {
            playouts: playouts.max(1),
        }
    }

    /// The playouts behind each judgement.
    pub fn count(&self) -> u32 {
        self.playouts
    }

    /// Every role's goal summed over the playouts from `state`, into `totals`; returns how many
    /// playouts were summed. The generator is seeded by the state, so the same state gives the same
    /// sums. With a `deadline`, the clock is read between stretches of moves paced by the game's speed
    /// (a [`Pace`]; between steps of a batch) and the judgement gives up once it would end past it.
    ///
    /// Where the game plays 64 playouts at once in no more time than it plays this judgement's
    /// playouts one at a time (its [`Game::batch_speedup`] times their number is 64 or more: Connect
    /// Four on the network), the judgement plays those 64 instead: a finer mean for no more time.
    fn play<G: Game>(
        &self,
        game: &G,
        state: &G::State,
        totals: &mut [i64],
        deadline: Option<Instant>,
    ) -> Result<u32, GameError> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        state.hash(&mut hasher);
        let mut rng = SmallRng::seed_from_u64(hasher.finish());
        // One buffer per judgement: its allocation is noise next to the playouts it serves, and a buffer
        // shared between Jamboree's threads would need a lock.
        let mut buf = Vec::new();
        if game
            .batch_speedup()
            .is_some_and(|x| x * f64::from(self.playouts) >= f64::from(BATCH))
        {
            let roles = game.info().num_roles();
            let mut goals = vec![0i64; BATCH as usize * roles];
            let until = deadline.unwrap_or_else(|| Instant::now() + NO_DEADLINE);
            game.playout_goals_each(
                BATCH as usize,
                &|_| state,
                &mut rng,
                &mut buf,
                &mut goals,
                until,
            )
            .ok_or(GameError::OutOfTime)?;
            for lane in goals.chunks(roles.max(1)) {
                for (total, goal) in totals.iter_mut().zip(lane) {
                    *total += goal;
                }
            }
            return Ok(BATCH);
        }
        let mut pace = PACE.get();
        for _ in 0..self.playouts {
            // A playout in stretches draws the same moves as one in a single call (each step draws
            // from the generator alike), so a judgement does not depend on whether a clock was read.
            let end = match deadline {
                None => game.random_playout(state, &mut rng, &mut buf, MAX_STEPS).0,
                Some(d) => {
                    let played = pace.play_on(state.clone(), 0, MAX_STEPS, d, |s, n| {
                        game.random_playout(s, &mut rng, &mut buf, n)
                    });
                    PACE.set(pace);
                    played.ok_or(GameError::OutOfTime)?.0
                }
            };
            for (r, total) in totals.iter_mut().enumerate() {
                *total += i64::from(game.goal(&end, r));
            }
        }
        Ok(self.playouts)
    }

    /// [`Evaluator::estimate`] and [`Evaluator::estimate_until`].
    fn judge<G: Game>(
        &self,
        game: &G,
        state: &G::State,
        deadline: Option<Instant>,
    ) -> Result<Estimate, GameError> {
        if game.info().num_roles() != 2 {
            return Ok(Estimate::Guess(0));
        }
        if let Some(done) = final_estimate(game, state) {
            return Ok(done);
        }
        let mut totals = [0i64; 2];
        let played = self.play(game, state, &mut totals, deadline)?;
        let mean_times_ten = (totals[0] - totals[1]) * 10 / i64::from(played);
        Ok(Estimate::Guess(mean_times_ten.clamp(-1000, 1000) as i32))
    }
}

impl Default for Playouts {
    fn default() -> Self {
        Playouts::new(DEFAULT_PLAYOUTS)
    }
}

impl<G: Game> Evaluator<G> for Playouts {
    fn name(&self) -> String {
        format!("playouts({})", self.playouts)
    }

    /// Exact in finished states; otherwise ten times role 0's mean goal minus role 1's over the playouts
    /// (so -1000..=1000). Games of other than two roles get `Guess(0)`.
    fn estimate(&self, game: &G, state: &G::State) -> Result<Estimate, GameError> {
        self.judge(game, state, None)
    }

    /// As `estimate`, reading the clock between stretches of a playout's moves.
    fn estimate_until(
        &self,
        game: &G,
        state: &G::State,
        deadline: Instant,
    ) -> Result<Estimate, GameError> {
        self.judge(game, state, Some(deadline))
    }

    fn expected_goal(&self, guess: i32) -> Option<f64> {
        Some(goal_of_difference(guess))
    }

    /// Each role's mean goal over the playouts, for any number of roles.
    fn values(&self, game: &G, state: &G::State, out: &mut [f64]) -> Result<(), GameError> {
        if game.is_terminal(state) {
            return goals_into(game, state, out);
        }
        let mut totals = vec![0i64; out.len()];
        let played = self.play(game, state, &mut totals, None)?;
        for (v, t) in out.iter_mut().zip(totals) {
            *v = (t as f64 / f64::from(played)).clamp(0.0, 100.0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluators::GoalsOnly;
    use crate::games::batching::Batching;
    use crate::games::tictactoe::TicTacToe;

    fn play(g: &TicTacToe, moves: &[(usize, &str)]) -> <TicTacToe as Game>::State {
        let mut s = g.initial_state();
        for &(role, text) in moves {
            let mv = g.parse_move(&s, role, text).unwrap();
            s = g.play(&s, role, &mv);
        }
        s
    }

    #[test]
    fn a_won_position_estimates_high_and_estimates_repeat() {
        let g = TicTacToe::new(3, 3).unwrap();
        let est = Playouts::new(32);
        // x holds two corners and the centre with o to move: x wins most random continuations.
        let s = play(
            &g,
            &[
                (0, "mark(1,1)"),
                (1, "mark(1,2)"),
                (0, "mark(2,2)"),
                (1, "mark(2,1)"),
                (0, "mark(3,1)"),
            ],
        );
        let first = est.estimate(&g, &s).unwrap();
        assert!(matches!(first, Estimate::Guess(v) if v > 300), "{first}");
        assert_eq!(est.estimate(&g, &s).unwrap(), first, "seeded by the state");
        let mut v = [0.0; 2];
        est.values(&g, &s, &mut v).unwrap();
        assert!(v[0] > 65.0 && (v[0] + v[1] - 100.0).abs() < 1e-9, "{v:?}");
    }

    #[test]
    fn a_judgement_plays_a_batch_where_it_costs_no_more_than_its_playouts() {
        for (speedup, expected) in [(8.0, 64), (7.9, 8), (100.0, 64)] {
            let g = Batching::new(speedup);
            let s = play(&g.game, &[(0, "mark(2,2)")]);
            let first = Playouts::new(8).estimate(&g, &s).unwrap();
            let played = g.playouts();
            assert_eq!(played, expected, "speedup {speedup}");
            assert!(matches!(first, Estimate::Guess(v) if (-1000..=1000).contains(&v)));
            assert_eq!(
                Playouts::new(8).estimate(&g, &s).unwrap(),
                first,
                "repeatable"
            );
            let mut v = [0.0; 2];
            Playouts::new(8).values(&g, &s, &mut v).unwrap();
            assert!(v.iter().all(|x| (0.0..=100.0).contains(x)), "{v:?}");
        }
    }

    #[test]
    fn terminal_states_keep_their_exact_value() {
        let g = TicTacToe::new(3, 3).unwrap();
        let s = play(
            &g,
            &[
                (0, "mark(1,1)"),
                (1, "mark(2,1)"),
                (0, "mark(1,2)"),
                (1, "mark(2,2)"),
                (0, "mark(1,3)"),
            ],
        );
        assert!(g.is_terminal(&s));
        assert_eq!(
            Playouts::new(4).estimate(&g, &s).unwrap(),
            GoalsOnly.estimate(&g, &s).unwrap()
        );
    }

    #[test]
    fn a_judgement_with_a_deadline_gives_up_after_it_and_otherwise_agrees() {
        // A pile of 400 takes about 200 moves to empty: several stretches of a playout.
        let g = crate::games::nim::Nim::new(400, false);
        let s = g.initial_state();
        let est = Playouts::new(4);
        let passed = Instant::now();
        assert!(matches!(
            est.estimate_until(&g, &s, passed),
            Err(GameError::OutOfTime)
        ));
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        assert_eq!(
            est.estimate_until(&g, &s, far).unwrap(),
            est.estimate(&g, &s).unwrap()
        );
        // However short the game, no stretch starts past the deadline; before it, the pace that
        // judged the long game (kept by the thread) judges a short one alike.
        let short = crate::games::nim::Nim::new(5, false);
        let s = short.initial_state();
        assert!(matches!(
            est.estimate_until(&short, &s, passed),
            Err(GameError::OutOfTime)
        ));
        assert_eq!(
            est.estimate_until(&short, &s, far).unwrap(),
            est.estimate(&short, &s).unwrap()
        );
    }
}
