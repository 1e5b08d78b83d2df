//! `mcs`: Monte Carlo search (Gamemaster's MCS player). Each of this player's moves in turn is followed
//! by random replies of the other roles and a random playout to the end; when the deadline comes, the
//! move with the best average goal is played. No tree is kept: it sees one move deep, and every playout
//! costs the same.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::{random_index, Captures, Game, Pace, PlayoutGuide};
use crate::players::clock::{Progress, ProgressTimer, Ticker};
use crate::players::{all_legal_moves, Ask, Choice, Player, PlayerError, SearchStats};

/// The longest playout: games that can go on for ever are scored where the playout stops.
pub(crate) const MAX_PLAYOUT_STEPS: u32 = 10_000;

/// Playouts of one move played at once, where the game plays them so (one per bit of a word).
const BATCH: usize = 64;

/// How many times as fast as one at a time (in playouts a second) a batch must play for `mcs` to
/// play its playouts in batches: they are the same random playouts, so any gain is a gain.
const MIN_BATCH_SPEEDUP: f64 = 1.5;

/// A playout that took longer than this is slow: the next ones read the clock as they go.
const SLOW_PLAYOUT: Duration = Duration::from_millis(2);

/// Random playouts that never make a move late.
///
/// A fast game's playout is one call of [`Game::random_playout`]. A slow one (chess on the Datalog
/// evaluator: a quarter of a second a playout) could overrun the deadline by itself, so while playouts are
/// slow, or before the first one has shown their cost, a playout goes in stretches read by a [`Pace`]
/// (the one way every player plays a game on against a deadline) and gives up as soon as the pace
/// says the next stretch would end past the deadline. The stretches cost a state copy each, which
/// is noise next to a slow step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Playouts {
    cautious: bool,
    pace: Pace,
    /// Plays decisive playouts ([`Game::decisive_playout`]) instead of uniformly random ones.
    pub(crate) decisive: bool,
    /// Plays greedy playouts ([`Game::greedy_playout`]) instead of uniformly random ones.
    pub(crate) greedy: bool,
    /// Plays winning playouts ([`Game::winning_playout`]) instead of uniformly random ones.
    pub(crate) winning: bool,
    /// Winning playouts also block another role's such win (see [`Game::winning_playout`]).
    pub(crate) blocking: bool,
    /// Joint moves a playout plays at most before it stops where it is, to be judged by the goals of
    /// the state it reached (a cut-off, see `mcts::cutoff`); [`MAX_PLAYOUT_STEPS`] otherwise.
    pub(crate) max_steps: u32,
    /// The joint moves the last playout played.
    pub(crate) steps: u32,
}

impl Playouts {
    pub(crate) fn new() -> Self {
        Playouts {
            cautious: true,
            pace: Pace::new(),
            decisive: false,
            greedy: false,
            winning: false,
            blocking: false,
            max_steps: MAX_PLAYOUT_STEPS,
            steps: 0,
        }
    }

    /// The end of a random playout from `from`, or `None` when `deadline` passed first.
    pub(crate) fn run<G: Game>(
        &mut self,
        game: &G,
        from: &G::State,
        rng: &mut SmallRng,
        buf: &mut Vec<G::Move>,
        deadline: Instant,
    ) -> Option<G::State> {
        let (decisive, winning, blocking) = (self.decisive, self.winning, self.blocking);
        let greedy = self.greedy;
        self.run_by(from, deadline, |state, steps| {
            if greedy {
                game.greedy_playout(state, rng, buf, steps)
            } else if decisive {
                game.decisive_playout(state, rng, buf, steps)
            } else if winning {
                game.winning_playout(state, rng, buf, steps, blocking)
            } else {
                game.random_playout(state, rng, buf, steps)
            }
        })
    }

    /// The end of a playout from `from` whose moves `guide` picks ([`Game::guided_playout`]), or
    /// `None` when `deadline` passed first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_guided<G: Game>(
        &mut self,
        game: &G,
        from: &G::State,
        rng: &mut SmallRng,
        buf: &mut Vec<G::Move>,
        numbers: &mut Vec<u32>,
        guide: &mut dyn PlayoutGuide,
        deadline: Instant,
    ) -> Option<G::State> {
        self.run_by(from, deadline, |state, steps| {
            game.guided_playout(state, rng, buf, numbers, steps, guide)
        })
    }

    /// The end of a playout from `from` that takes a piece where it can with probability `rate` and
    /// lets `guide` (uniformly random moves without one) pick the rest ([`Game::capturing_playout`]),
    /// or `None` when `deadline` passed first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_capturing<G: Game>(
        &mut self,
        game: &G,
        from: &G::State,
        rng: &mut SmallRng,
        buf: &mut Vec<G::Move>,
        numbers: &mut Vec<u32>,
        (captures, rate): (&Captures, f64),
        guide: Option<&mut dyn PlayoutGuide>,
        deadline: Instant,
    ) -> Option<G::State> {
        let mut uniform = Uniform;
        let guide = guide.unwrap_or(&mut uniform);
        self.run_by(from, deadline, |state, steps| {
            game.capturing_playout(state, rng, buf, numbers, steps, captures, rate, guide)
        })
    }

    /// A playout by `play(state, max steps)`, all at once or in stretches that fit the deadline.
    fn run_by<S: Clone>(
        &mut self,
        from: &S,
        deadline: Instant,
        mut play: impl FnMut(&S, u32) -> (S, u32),
    ) -> Option<S> {
        let started = Instant::now();
        let max_steps = self.max_steps.clamp(1, MAX_PLAYOUT_STEPS);
        let (end, steps) = if self.cautious {
            self.pace
                .play_on(from.clone(), 0, max_steps, deadline, play)?
        } else {
            play(from, max_steps)
        };
        self.cautious = started.elapsed() > SLOW_PLAYOUT;
        self.steps = steps;
        Some(end)
    }
}

/// Uniformly random moves, as a guide.
struct Uniform;

impl PlayoutGuide for Uniform {
    fn pick(&mut self, _: usize, moves: &[u32], rng: &mut SmallRng) -> usize {
        random_index(rng, moves.len())
    }
}

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

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role, deadline) = (ask.game, ask.state, ask.role, ask.deadline);
        let started = Instant::now();
        if let Some(choice) = ask.forced() {
            return Ok(choice);
        }
        let roles = game.info().num_roles();
        let lists = all_legal_moves(game, state)?;
        let n = lists[role].len();
        // (playouts, total goal) per move.
        let mut stats = vec![(0u64, 0u64); n];
        let mut ticker = Ticker::new(deadline);
        let mut progress = ProgressTimer::new(self.progress.clone());
        let mut joint = Vec::with_capacity(roles);
        let mut buf = Vec::new();
        let mut simulations = 0u64;
        let mut playouts = Playouts::new();
        let mean = |(count, total): (u64, u64)| total as f64 / count.max(1) as f64;
        let best = |stats: &[(u64, u64)]| {
            (0..stats.len())
                .max_by(|&a, &b| mean(stats[a]).total_cmp(&mean(stats[b])).then(b.cmp(&a)))
                .unwrap_or(0)
        };
        // Where no other role has a choice, each move leads to one state, and where the game plays
        // 64 playouts at once faster than one at a time, each move's playouts go 64 at once.
        let others_fixed = lists
            .iter()
            .enumerate()
            .all(|(r, list)| r == role || list.len() == 1);
        let batches = others_fixed && game.batch_speedup().is_some_and(|x| x >= MIN_BATCH_SPEEDUP);
        let nexts: Vec<G::State> = if batches {
            (0..n)
                .map(|i| {
                    let joint: Vec<G::Move> = lists
                        .iter()
                        .enumerate()
                        .map(|(r, list)| list[if r == role { i } else { 0 }].clone())
                        .collect();
                    game.next_state(state, &joint)
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut goals = vec![0i64; if batches { BATCH * roles } else { 0 }];
        'search: loop {
            for (i, slot) in stats.iter_mut().enumerate() {
                if ticker.tick() {
                    break 'search;
                }
                if let Some(next) = nexts.get(i) {
                    let state_of = |_: usize| next;
                    let until = deadline.instant();
                    if game
                        .playout_goals_each(
                            BATCH,
                            &state_of,
                            &mut self.rng,
                            &mut buf,
                            &mut goals,
                            until,
                        )
                        .is_none()
                    {
                        break 'search;
                    }
                    for lane in goals.chunks(roles.max(1)) {
                        slot.1 += lane[role].clamp(0, 100) as u64;
                    }
                    slot.0 += BATCH as u64;
                    simulations += BATCH as u64;
                    continue;
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
                let Some(end) =
                    playouts.run(game, &next, &mut self.rng, &mut buf, deadline.instant())
                else {
                    break 'search;
                };
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
            explanation: None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::batching::Batching;
    use crate::players::clock::Deadline;

    #[test]
    fn mcs_takes_a_win_in_one_with_and_without_batches() {
        for (speedup, batched) in [(2.0, true), (1.0, false)] {
            let g = Batching::new(speedup);
            let mut s = g.initial_state();
            for (role, text) in [
                (0, "mark(1,1)"),
                (1, "mark(2,1)"),
                (0, "mark(1,2)"),
                (1, "mark(2,2)"),
            ] {
                let mv = g.parse_move(&s, role, text).unwrap();
                s = g.play(&s, role, &mv);
            }
            let ask = Ask::new(&g, &s, 0, Deadline::after(Duration::from_millis(300)));
            let c = McsPlayer::new(7).choose(&ask).unwrap();
            assert_eq!(g.show_move(&c.mv), "mark(1,3)", "speedup {speedup}");
            let sims = c.stats.simulations;
            assert!(sims > 0);
            // The game counts a playout where it ends, the player where it gets the result: the
            // deadline may cut a batch after some of its playouts, or come just after a playout
            // played in stretches reached the end, and those the player rightly leaves uncounted.
            let played = u64::from(g.playouts());
            let cut = if batched { BATCH as u64 - 1 } else { 1 };
            assert!(
                (sims..=sims + cut).contains(&played),
                "each simulation one playout: {sims} simulations, {played} playouts"
            );
            if batched {
                assert_eq!(sims % BATCH as u64, 0, "whole batches: {sims}");
            }
        }
    }
}
