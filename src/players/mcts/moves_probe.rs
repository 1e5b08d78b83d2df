//! Whether a game's moves, by themselves, tell who wins: the probe that decides NST per game.
//!
//! NST ([`policy`](super::policy)) steers playouts towards moves, and moves answering moves, that
//! won before. That pays where a move's identity carries the outcome: in breakthrough a move onto the
//! last rows, or the capture of the piece that just moved, wins wherever it is played (NST beat plain
//! playouts 15 games to 1). Where a move's worth depends on the rest of the position (a column of
//! Connect Four, a marble of pentago), the averages are noise, and steering by them made the playouts
//! worse judges than random ones (0.41 and 0.34 against `uct`).
//!
//! The probe plays random games and measures how much of the variance of a role's final reward the
//! identity of the moves it chose explains: the correlation ratio η² of the moves' mean rewards about
//! their role's mean, less the share that chance alone gives `k` groups of `n` samples
//! ((k − r) / (n − r) for `r` roles). Measured so, with 400 random games from the start: knightThrough
//! 2.5%, breakthrough 1.8%, skirmish 1.4%, chineseCheckers4 4.4%; checkers 0.7%, reversi 0.3%,
//! connectFour 0.2%, connectFourSimultaneous 0.1%, pentago, hex and 3pConnectFour 0.0%. The moves
//! themselves are the signal NST builds on (its pairs refine it, but pairs are too many for 400 games
//! to measure beyond chance).

use std::time::Instant;

use rand::rngs::SmallRng;

use crate::game::{random_index, Game, PlayoutGuide, RoleIndex};

/// Games the probe plays at most.
const MAX_GAMES: usize = 400;

/// The share of the rewards' variance that the moves must explain beyond chance for NST to be
/// switched on.
pub(super) const MIN_EXPLAINED: f64 = 0.01;

/// Games a probe must play to decide anything.
pub(super) const MIN_GAMES: usize = 20;

/// Joint moves a probe game plays at most; a longer game is left out.
const MAX_GAME_STEPS: u32 = 1_000;

/// What the probe found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct MovesProbe {
    /// Random games played to their end.
    pub(super) games: usize,
    /// The share of the final rewards' variance (within each role) that the moves played explain
    /// beyond chance.
    pub(super) explained: f64,
}

impl MovesProbe {
    /// One line for the progress report.
    pub(super) fn describe(&self, nst: bool) -> String {
        format!(
            "the moves played explain {:.1}% of who wins ({} random games): playouts {}",
            100.0 * self.explained,
            self.games,
            if nst {
                "guided by move pairs (NST)"
            } else {
                "uniformly random"
            }
        )
    }
}

/// Records the choices of a random game, as `role * moves + move`.
struct Recorder {
    moves: usize,
    seen: Vec<u32>,
}

impl PlayoutGuide for Recorder {
    fn pick(&mut self, role: RoleIndex, moves: &[u32], rng: &mut SmallRng) -> usize {
        let i = random_index(rng, moves.len());
        if moves.len() > 1 {
            if let Some(&n) = moves.get(i).filter(|&&n| (n as usize) < self.moves) {
                self.seen.push((role * self.moves) as u32 + n);
            }
        }
        i
    }
}

/// Counts and reward sums of one group of samples.
#[derive(Clone, Copy, Default)]
struct Group {
    n: f64,
    sum: f64,
}

/// Plays random games from `from` until `deadline` (at most [`MAX_GAMES`]) and measures what the
/// moves played explain of the final rewards.
pub(super) fn probe<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    deadline: Instant,
) -> MovesProbe {
    let moves = game.move_count();
    let roles = game.info().num_roles();
    let mut recorder = Recorder {
        moves,
        seen: Vec::new(),
    };
    let (mut buf, mut numbers, mut rewards) = (Vec::new(), Vec::new(), Vec::new());
    let mut singles = vec![Group::default(); roles * moves];
    // Per role: samples, their sum and their sum of squares.
    let mut by_role = vec![(0.0f64, 0.0f64, 0.0f64); roles];
    let mut games = 0;
    let mut tried = 0;
    'games: while moves > 0 && tried < MAX_GAMES {
        tried += 1;
        recorder.seen.clear();
        // In stretches, the clock read between them: a game of chess takes tens of milliseconds.
        let (mut end, mut steps) = (from.clone(), 0);
        while !game.is_terminal(&end) && steps < MAX_GAME_STEPS {
            if Instant::now() >= deadline {
                break 'games;
            }
            let (next, n) =
                game.guided_playout(&end, rng, &mut buf, &mut numbers, 64, &mut recorder);
            (end, steps) = (next, steps + n);
            if n == 0 {
                break;
            }
        }
        if !game.is_terminal(&end) {
            continue;
        }
        games += 1;
        rewards.clear();
        rewards.extend((0..roles).map(|r| f64::from(game.goal(&end, r).clamp(0, 100)) / 100.0));
        for &at in &recorder.seen {
            let role = at as usize / moves;
            let v = rewards[role];
            let (n, sum, squares) = &mut by_role[role];
            (*n, *sum, *squares) = (*n + 1.0, *sum + v, *squares + v * v);
            let single = &mut singles[at as usize];
            (single.n, single.sum) = (single.n + 1.0, single.sum + v);
        }
    }
    MovesProbe {
        games,
        explained: explained(singles.iter().copied().enumerate(), &by_role, |i| i / moves),
    }
}

/// The correlation ratio within roles (η²: the share of the sum of squares about each role's mean
/// that lies between the groups' means) less what chance gives as many groups; 0 when nothing
/// varies. `groups` are the groups with their move (`role * moves + move`), `role_of` the role of a
/// move, `by_role` each role's count, sum and sum of squares.
fn explained(
    groups: impl IntoIterator<Item = (usize, Group)>,
    by_role: &[(f64, f64, f64)],
    role_of: impl Fn(usize) -> usize,
) -> f64 {
    let mut between = 0.0;
    let mut k = 0.0;
    for (i, g) in groups {
        if g.n == 0.0 {
            continue;
        }
        let Some(&(n, sum, _)) = by_role.get(role_of(i)) else {
            continue;
        };
        let mean = sum / n;
        between += g.n * (g.sum / g.n - mean).powi(2);
        k += 1.0;
    }
    let (mut n, mut total, mut roles) = (0.0, 0.0, 0.0);
    for &(rn, sum, squares) in by_role.iter().filter(|r| r.0 > 0.0) {
        n += rn;
        total += squares - sum * sum / rn;
        roles += 1.0;
    }
    if total <= 1e-9 || n <= roles {
        return 0.0;
    }
    (between / total - (k - roles) / (n - roles)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_explain_what_their_means_differ_by_within_roles_less_chance() {
        let group = |n: f64, sum: f64| Group { n, sum };
        // One role, two groups of 50: all wins and all losses explain everything, less 1/99.
        let by_role = [(100.0, 50.0, 50.0)];
        let split = [(0, group(50.0, 50.0)), (1, group(50.0, 0.0))];
        let e = explained(split, &by_role, |_| 0);
        assert!((e - (1.0 - 1.0 / 99.0)).abs() < 1e-9, "{e}");
        // Two groups with the same mean explain nothing.
        let even = [(0, group(50.0, 25.0)), (1, group(50.0, 25.0))];
        assert_eq!(explained(even, &by_role, |_| 0), 0.0);
        // Nothing varies: nothing to explain.
        assert_eq!(
            explained(even, &[(100.0, 50.0, 50.0 * 50.0 / 100.0)], |_| 0),
            0.0
        );
        // Two roles, one winning always and one never, a move each: the roles differ, their moves
        // explain nothing within them.
        let by_role = [(50.0, 50.0, 50.0), (50.0, 0.0, 0.0)];
        let roles = [(0, group(50.0, 50.0)), (1, group(50.0, 0.0))];
        assert_eq!(explained(roles, &by_role, |i| i), 0.0);
    }
}
