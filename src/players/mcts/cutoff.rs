//! Playouts cut short and judged by the goals (`+cutoff`), where a probe in the start clock shows
//! that the goals say something before the end.
//!
//! Many games define their goals in every state, not only at the end: checkers and kalaha count
//! pieces and stones, so the goals halfway through a random game already lean towards its result.
//! There a playout of the whole game (a hundred moves of checkers) can stop after a few dozen and
//! read the goals of the state it reached: shorter playouts, more of them, and less noise from the
//! random moves it no longer plays. Where the goals are constant until the end (Connect Four,
//! breakthrough, chess) or point the wrong way (reversi's piece count halfway through), a cut-off
//! would judge by nothing, so the probe leaves the playouts whole.
//!
//! The probe plays random games from the state it is given and measures, for each role and each
//! candidate depth, how the goal at that depth correlates with the goal at the end (over the games
//! still going at that depth). The cut-off is the smallest candidate depth whose correlation, averaged
//! over the roles whose goals vary, reaches [`MIN_CORRELATION`], in games long enough that it saves
//! most of a playout.

use std::time::Instant;

use rand::rngs::SmallRng;

use super::stats::Pairs;
use crate::game::{Game, Pace};

/// The depths a cut-off may take, shortest first.
const DEPTHS: [u32; 7] = [8, 12, 16, 24, 32, 48, 64];

/// How well the goals at a depth must predict the goals at the end (Pearson's r, averaged over the
/// roles) before playouts stop there. At 0.35 kalaha was cut after 32 moves (r = 0.37) and lost 4
/// games of 16 against full playouts, while checkers (48 moves, r = 0.56) won 11 of 16.
pub(super) const MIN_CORRELATION: f64 = 0.5;

/// Games the probe plays at most.
const MAX_GAMES: usize = 400;

/// Games a probe must play to decide anything; with fewer (no time) it decides nothing.
pub(super) const MIN_GAMES: usize = 20;

/// Games still going at a depth that a correlation there needs.
const MIN_SAMPLES: usize = 40;

/// Joint moves a probe game plays at most.
pub(super) const MAX_GAME_STEPS: u32 = 1_000;

/// What the probe found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Probe {
    /// Random games played.
    pub(super) games: usize,
    /// Their mean length in joint moves.
    pub(super) mean_length: f64,
    /// Where playouts stop, and the correlation of the goals there with the goals at the end; `None`
    /// when no depth predicts well enough, or the games are too short for a cut-off to pay.
    pub(super) cutoff: Option<(u32, f64)>,
}

impl Probe {
    /// One line for the progress report.
    pub(super) fn describe(&self) -> String {
        match self.cutoff {
            Some((depth, r)) => format!(
                "playouts cut after {depth} moves and judged by the goals (their correlation with \
                 the final goals {r:.2}, {} random games of {:.0} moves on average)",
                self.games, self.mean_length
            ),
            None if self.games < MIN_GAMES => format!(
                "playouts played to the end (no time to probe: {} random games of {MIN_GAMES} \
                 needed)",
                self.games
            ),
            None => format!(
                "playouts played to the end (no depth's goals predict the final goals; {} random \
                 games of {:.0} moves on average)",
                self.games, self.mean_length
            ),
        }
    }
}

/// Plays random games from `from` until `deadline` (at most [`MAX_GAMES`]) and decides the
/// cut-off. The clock is read between games and between stretches of a game.
pub(super) fn probe<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    deadline: Instant,
) -> Probe {
    let roles = game.info().num_roles();
    let mut buf = Vec::new();
    // Per game: each role's goal at each depth it reached (not yet over), and at its end.
    let mut at_depth: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); roles]; DEPTHS.len()];
    let mut ends: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); roles]; DEPTHS.len()];
    let mut lengths = Vec::new();
    let mut pace = Pace::new();
    'games: while lengths.len() < MAX_GAMES {
        let mut state = from.clone();
        let mut steps = 0u32;
        let mut reached: Vec<(usize, Vec<f64>)> = Vec::new();
        for (d, &depth) in DEPTHS.iter().enumerate() {
            let Some((next, n)) = pace.play_on(state, steps, depth, deadline, |s, n| {
                game.random_playout(s, rng, &mut buf, n)
            }) else {
                break 'games;
            };
            (state, steps) = (next, n);
            if steps < depth || game.is_terminal(&state) {
                break;
            }
            reached.push((d, (0..roles).map(|r| goal(game, &state, r)).collect()));
        }
        let Some((state, steps)) = pace.play_on(state, steps, MAX_GAME_STEPS, deadline, |s, n| {
            game.random_playout(s, rng, &mut buf, n)
        }) else {
            break;
        };
        lengths.push(f64::from(steps));
        for (d, goals) in reached {
            for r in 0..roles {
                at_depth[d][r].push(goals[r]);
                ends[d][r].push(goal(game, &state, r));
            }
        }
    }
    let games = lengths.len();
    let mean_length = lengths.iter().sum::<f64>() / games.max(1) as f64;
    let cutoff = DEPTHS.iter().enumerate().find_map(|(d, &depth)| {
        if f64::from(depth) * 2.0 > mean_length || at_depth[d][0].len() < MIN_SAMPLES {
            return None;
        }
        let rs: Vec<f64> = (0..roles)
            .filter_map(|r| Pairs::of(&at_depth[d][r], &ends[d][r]).correlation())
            .collect();
        if rs.is_empty() {
            return None;
        }
        let r = rs.iter().sum::<f64>() / rs.len() as f64;
        (r >= MIN_CORRELATION).then_some((depth, r))
    });
    Probe {
        games,
        mean_length,
        cutoff,
    }
}

fn goal<G: Game>(game: &G, state: &G::State, role: usize) -> f64 {
    f64::from(game.goal(state, role))
}
