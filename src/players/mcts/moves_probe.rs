//! What a game's random games say about its moves, in the start clock: whether the moves by
//! themselves tell who wins (NST on or off), what a check for a move that wins at once costs
//! beside a playout (the tree's one-move lookahead on or off), and how many greedy playouts a second
//! buys (greedy playouts on or off, see [`MIN_GREEDY_RATE`]).
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
//! ((k − r) / (n − r) for `r` roles). Measured so, with up to 800 random games from the start (six
//! seeds each): chineseCheckers4 4.4–4.8%, knightThrough 2.6–3.0%, breakthrough 1.8–1.9%, skirmish
//! 1.2–2.3%; checkers 0.4–0.8%, reversi 0.1–0.7%, connectFour 0.2–0.3%, connectFourSimultaneous
//! 0.1–0.2%, 3pConnectFour 0.1–0.3%, pentago and hex 0.0–0.1%. The moves themselves are the signal
//! NST builds on (its pairs refine it, but pairs are too many for a probe's games to measure beyond
//! chance).
//!
//! That share misses games where each move weighs little but a game's many moves add up: in reversi
//! a corner taken is worth a little more than a middle square, and sixty moves decide. So the probe
//! also asks whether the moves predict the winner of games they were not learnt from: each move's
//! mean reward is learnt from half of the games (shrunk towards its role's mean), and in the other
//! half a role's mean move worth is correlated with its reward, then the halves swap. With the same
//! games: reversi 0.23–0.48 (about 380 games in the probe's time; five seeds of six at 0.25 or more),
//! chineseCheckers4 0.57–0.59, breakthrough 0.49–0.58, knightThrough 0.44–0.49; checkers 0.11–0.31,
//! skirmish 0.17–0.30; connectFour 0.09–0.20 (the centre column is worth a little, and NST still
//! loses there), `games/connect4.gdl` 0.16–0.21, connectFourSimultaneous 0.04–0.16, 3pConnectFour
//! 0.07–0.16, pentago 0.02–0.09, hex 0.01–0.06. NST is switched on where either test passes: 1% of the
//! variance explained, or a correlation of 0.25 out of sample.
//!
//! The probe also times a check for a move that wins at once ([`Game::decisive_move`]) at states a
//! few random plies from the state probed, against a whole random game. The tree's lookahead makes
//! that check at each new node, so it costs that share of every simulation; where the share is small
//! (pentago, checkers, hex) each new node is checked, where it is larger (breakthrough, reversi,
//! Connect Four) not. In Connect Four the lookahead cost 31% of the simulations and did not win
//! (7–1–8 against `mcts` without it); in pentago it cost 5%, and `mcts` with it beat `uct` 12–2–2.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;

use super::cutoff::MAX_GAME_STEPS;
use super::stats::{Centred, Pairs};
use crate::game::{random_index, Game, Pace, PlayoutGuide, RoleIndex};
use crate::players::thread_cpu_time;

/// Games the probe plays at most.
const MAX_GAMES: usize = 800;

/// The share of the rewards' variance that the moves must explain beyond chance for NST to be
/// switched on.
pub(super) const MIN_EXPLAINED: f64 = 0.01;

/// The out-of-sample correlation between a role's mean move worth and its reward that switches NST
/// on by itself.
pub(super) const MIN_PREDICTS: f64 = 0.25;

/// How far beyond chance that correlation must also be, in standard errors (r·√(games − 2), a game
/// counted once however many roles it has: in a game of two the roles' rewards mirror each other).
/// Where the probe finishes few games (a slow game, a short clock) a correlation of 0.25 is chance
/// (at 20 games one probe in seven reaches it); 3 standard errors asks for about 150 games.
const MIN_PREDICTS_SIGNIFICANCE: f64 = 3.0;

/// Choices a move's mean reward counts at its role's mean before its own (shrinkage: a move chosen
/// twice says little, and its raw mean would be mostly noise).
const PRIOR_CHOICES: f64 = 10.0;

/// The largest share of a random game's time that one check for a move winning at once may cost
/// for the tree to make it at each new node (`+lookahead`). Timed over whole random games, the probe
/// reads checkers 5.2%, pentago 6.6%; reversi 14.2%, breakthrough 17.7%, chineseCheckers4 22.2%, hex
/// 27.1%, 3pConnectFour 49.1%, connectFour 62.4% (2026-11-29). Timed over the first 16 plies, as
/// before, hex read 3.7–4.1% (its network answers at once while more than 64 moves are legal) and
/// the check lost there (`uct+lookahead` 4–12 against `uct`). 13% lies between the groups.
pub(super) const MAX_LOOKAHEAD_COST: f64 = 0.13;

/// Greedy playouts ([`Game::greedy_playout`]) a second of one thread's CPU time must hold for `mcts`
/// to play them: they try moves before playing one, and where a step is a full pass of a large
/// network the tree starves. Measured against `mcts` with random playouts at a 1 s clock (`ggp-run
/// tournament --players mcts+greedy,mcts`): Connect Four (about 17,000 a second, a fourteenth of
/// random playouts; 10,000 on a slower machine) won 25–0–7 and pentago (15,000, a third) 8–3–5, while
/// checkers (735, a fifth) lost 2–3–11 and hex (62, a thirty-fifth) lost all 16. 3,000 lies between,
/// three times or more from each side.
pub(super) const MIN_GREEDY_RATE: f64 = 3_000.0;

/// The share of the probe's time spent timing greedy playouts, or batches of playouts.
const GREEDY_SHARE: u32 = 5;

/// How many times the rate of random playouts one at a time a batch of 64 from different leaves
/// ([`Game::playout_goals_each`]) must reach for `mcts` to play its simulations in batches
/// ([`super::leaves`]) where several roles move at once. On connectFourSimultaneous the probe
/// reads 3.7–3.8× (`ggp-run bench --lanes 64`, one batch after another from the start, 8.4×), and
/// `uct+leaves` runs 286k simulations a second against `uct`'s 120k: the tree's own work, not the
/// playouts, then bounds it, so a batch that is not some times faster buys the virtual losses
/// nothing (hex's network runs 64 lanes 1.2× one).
pub(super) const MIN_LANES_SPEEDUP: f64 = 2.0;

/// States at which the probe times a check for a win in one move.
const CHECKS: u32 = 32;

/// The longest random game whose plies those states are spread over.
const MAX_CHECK_PLIES: u32 = 1000;

/// Games a probe must play to decide anything.
pub(super) const MIN_GAMES: usize = 20;

/// What a probe switched on for the match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Chosen {
    /// Playouts guided by NST.
    pub(super) nst: bool,
    /// Each new node checked for a move that wins at once.
    pub(super) lookahead: bool,
    /// Greedy playouts (where NST is not on: a guided playout is not greedy).
    pub(super) greedy: bool,
    /// Simulations in batches of leaves (where playouts are uniformly random).
    pub(super) leaves: bool,
}

/// What the probe found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct MovesProbe {
    /// Random games played to their end.
    pub(super) games: usize,
    /// The share of the final rewards' variance (within each role) that the moves played explain
    /// beyond chance.
    pub(super) explained: f64,
    /// How well the moves' mean rewards in half of the games predict the rewards in the other
    /// half: the correlation, within roles, of a role's mean move worth in a game with its reward.
    pub(super) predicts: f64,
    /// The time of one check for a move that wins at once ([`Game::decisive_move`]) a few plies
    /// from the state probed, as a share of a random game's; `None` where no role moves alone
    /// there, or no game finished.
    pub(super) lookahead_cost: Option<f64>,
    /// Greedy playouts from the state probed finished per second, when any was timed.
    pub(super) greedy_rate: Option<f64>,
    /// How many times faster random playouts from the state probed run 64 at a time (from
    /// different states, [`Game::playout_goals_each`]) than one at a time, where several roles
    /// move at once and both were timed.
    pub(super) lanes_speedup: Option<f64>,
    /// Whether the game is one of two roles taking turns whose rewards always sum the same (in the
    /// random games, and at the states where the check was timed): greedy playouts assume that a
    /// win handed to the next role is a loss for the role that moved.
    pub(super) duel: bool,
}

impl MovesProbe {
    /// Whether playouts should be guided by NST.
    pub(super) fn nst(&self) -> bool {
        let significance = self.predicts * (self.games as f64 - 2.0).max(0.0).sqrt();
        self.explained >= MIN_EXPLAINED
            || (self.predicts >= MIN_PREDICTS && significance >= MIN_PREDICTS_SIGNIFICANCE)
    }

    /// Whether each new node of the tree should be checked for a move of its mover that wins at
    /// once: where that check is cheap beside a playout (a game whose wins come in the middle, as
    /// pentago's, gains most; one whose wins come at the end loses little).
    pub(super) fn lookahead(&self) -> bool {
        self.lookahead_cost
            .is_some_and(|cost| cost <= MAX_LOOKAHEAD_COST)
    }

    /// Whether playouts should be greedy ([`Game::greedy_playout`]): in a duel whose greedy playouts
    /// are cheap enough for the tree to grow. In games of more roles handing over a win may pay (in
    /// 3pConnectFour the role before the winner scores 50, and greedy playouts lost 1–0–23 to random
    /// ones). With simultaneous moves greedy playouts once played at random there
    /// (connectFourSimultaneous 4–4–8 against `mcts`); the network's now try every role's moves
    /// there too, and `mcts` with them still lost 5–0–11 and 6–1–9 to `uct` (11,000 simulations a
    /// second against 133,000).
    pub(super) fn greedy(&self) -> bool {
        self.duel && self.greedy_rate.is_some_and(|rate| rate >= MIN_GREEDY_RATE)
    }

    /// Whether simulations should run in batches of leaves ([`super::leaves`]): where several
    /// roles move at once and a batch of playouts runs [`MIN_LANES_SPEEDUP`] times or more the
    /// rate of one at a time. Measured on connectFourSimultaneous only; in games of turns
    /// `mcts`'s playouts are greedy or guided where it matters, and a batch is random.
    pub(super) fn leaves(&self) -> bool {
        self.lanes_speedup
            .is_some_and(|speedup| speedup >= MIN_LANES_SPEEDUP)
    }

    /// One line for the progress report.
    pub(super) fn describe(&self, chosen: Chosen) -> String {
        let Chosen {
            nst,
            lookahead,
            greedy,
            leaves,
        } = chosen;
        let cost = match self.lookahead_cost {
            Some(cost) => format!("{:.1}% of a game", 100.0 * cost),
            None => "nothing (no role moves alone)".to_string(),
        };
        let rate = match self.greedy_rate {
            Some(rate) => format!("{rate:.0} greedy playouts a second"),
            None => "no greedy playout timed".to_string(),
        };
        let lanes = match (self.lanes_speedup, leaves) {
            (Some(s), true) => {
                format!("; 64 playouts at once run {s:.1}× one at a time: leaves in batches")
            }
            (Some(s), false) => {
                format!("; 64 playouts at once run {s:.1}× one at a time: one leaf at a time")
            }
            (None, _) => String::new(),
        };
        format!(
            "the moves played explain {:.1}% of who wins and predict it at r = {:.2} ({} random \
             games): playouts {}; a check for a win in one move costs {cost}: {}; {rate}{}: {}{lanes}",
            100.0 * self.explained,
            self.predicts,
            self.games,
            if nst {
                "guided by move pairs (NST)"
            } else {
                "uniformly random"
            },
            if lookahead {
                "each new node checked"
            } else {
                "not checked"
            },
            if self.duel {
                ""
            } else {
                " (not a duel of turns)"
            },
            if greedy {
                "greedy playouts, transpositions shared"
            } else {
                "no greedy playouts"
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

impl Group {
    fn add(&mut self, v: f64) {
        (self.n, self.sum) = (self.n + 1.0, self.sum + v);
    }
}

/// Plays random games from `from` until `deadline` (at most [`MAX_GAMES`]) and measures what the
/// moves played explain of the final rewards, how well they predict them out of sample, and what a
/// check for a win in one move costs beside a game.
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
    // Every choice of the finished games, as (game, `role * moves + move`), and each finished game's
    // rewards, role by role.
    let mut choices: Vec<(u32, u32)> = Vec::new();
    let mut outcomes: Vec<f64> = Vec::new();
    let (check_time, turns) = if moves > 0 {
        check_time(game, from, rng, &mut buf, deadline)
    } else {
        (None, false)
    };
    // Greedy playouts are timed only where they may be played.
    let greedy_rate = if moves > 0 && roles == 2 && turns {
        let now = Instant::now();
        let slice = deadline.saturating_duration_since(now) / GREEDY_SHARE;
        greedy_rate(game, from, rng, &mut buf, now + slice)
    } else {
        None
    };
    // Batches of leaves are timed only where several roles move at once.
    let lanes_speedup = if !turns {
        let now = Instant::now();
        let slice = deadline.saturating_duration_since(now) / GREEDY_SHARE;
        lanes_speedup(game, from, rng, &mut buf, now + slice)
    } else {
        None
    };
    let mut game_time = Duration::ZERO;
    let mut pace = Pace::new();
    while moves > 0 && tried < MAX_GAMES {
        tried += 1;
        recorder.seen.clear();
        let started = Instant::now();
        let Some((end, _)) = pace.play_on(from.clone(), 0, MAX_GAME_STEPS, deadline, |s, n| {
            game.guided_playout(s, rng, &mut buf, &mut numbers, n, &mut recorder)
        }) else {
            break;
        };
        // A game longer than the probe plays is left out.
        if !game.is_terminal(&end) {
            continue;
        }
        games += 1;
        game_time += started.elapsed();
        rewards.clear();
        rewards.extend((0..roles).map(|r| f64::from(game.goal(&end, r).clamp(0, 100)) / 100.0));
        outcomes.extend_from_slice(&rewards);
        choices.extend(recorder.seen.iter().map(|&at| (games as u32 - 1, at)));
        for &at in &recorder.seen {
            let role = at as usize / moves;
            let v = rewards[role];
            let (n, sum, squares) = &mut by_role[role];
            (*n, *sum, *squares) = (*n + 1.0, *sum + v, *squares + v * v);
            singles[at as usize].add(v);
        }
    }
    MovesProbe {
        games,
        explained: explained(singles.iter().copied().enumerate(), &by_role, |i| i / moves),
        predicts: predicts(&choices, &outcomes, roles, moves),
        lookahead_cost: check_time
            .filter(|_| games > 0 && !game_time.is_zero())
            .map(|check| check / (game_time.as_secs_f64() / games as f64)),
        greedy_rate,
        lanes_speedup,
        duel: roles == 2 && turns && games > 0 && constant_sum(&outcomes, roles),
    }
}

/// How many times the rate of random playouts from `from` one at a time a batch of 64
/// ([`Game::playout_goals_each`]) reaches, each timed in half the time to `deadline` by the
/// thread's CPU time (at most [`MAX_GAMES`] playouts each); `None` when either finished nothing.
/// A batch starts only while the playouts one at a time say it ends in time.
fn lanes_speedup<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    deadline: Instant,
) -> Option<f64> {
    let now = Instant::now();
    let half = now + deadline.saturating_duration_since(now) / 2;
    let timer = CpuTimer::start();
    let mut singles = 0u32;
    let mut pace = Pace::new();
    while singles < MAX_GAMES as u32 {
        let random = |s: &G::State, n| game.random_playout(s, rng, buf, n);
        if pace
            .play_on(from.clone(), 0, MAX_CHECK_PLIES, half, random)
            .is_none()
        {
            break;
        }
        singles += 1;
    }
    let single_time = timer.spent();
    if singles == 0 || single_time.is_zero() {
        return None;
    }
    let per_playout = single_time / singles;
    let mut goals = vec![0i64; 64 * game.info().num_roles()];
    let timer = CpuTimer::start();
    let mut batched = 0u32;
    while batched < MAX_GAMES as u32 && Instant::now() + per_playout * 64 < deadline {
        let state_of = |_: usize| from;
        if game
            .playout_goals_each(64, &state_of, rng, buf, &mut goals, deadline)
            .is_none()
        {
            break;
        }
        batched += 64;
    }
    let batch_time = timer.spent();
    (batched > 0 && !batch_time.is_zero()).then(|| {
        (f64::from(batched) / batch_time.as_secs_f64())
            / (f64::from(singles) / single_time.as_secs_f64())
    })
}

/// Time spent by this thread since it started (its CPU time where the system tells it, else the
/// wall clock's).
struct CpuTimer {
    started: Instant,
    cpu: Option<Duration>,
}

impl CpuTimer {
    fn start() -> Self {
        CpuTimer {
            started: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    fn spent(&self) -> Duration {
        match self.cpu {
            Some(at) => {
                thread_cpu_time().map_or(self.started.elapsed(), |now| now.saturating_sub(at))
            }
            None => self.started.elapsed(),
        }
    }
}

/// Whether every game's rewards (role by role in `outcomes`) sum the same.
fn constant_sum(outcomes: &[f64], roles: usize) -> bool {
    let mut sums = outcomes.chunks(roles.max(1)).map(|r| r.iter().sum::<f64>());
    let first = sums.next();
    sums.all(|sum| first.is_some_and(|f| (sum - f).abs() < 1e-9))
}

/// Greedy games from `from` played out (to the end, or the probe's step limit) per second, until
/// `deadline` or [`MAX_GAMES`], the time of a game cut short by the deadline not counted; `None`
/// when none was played out in time.
fn greedy_rate<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    deadline: Instant,
) -> Option<f64> {
    // Timed by the thread's CPU time where there is one: in a served match the opponent is often
    // busy in the same start clock, and at half a core the wall clock's rate fell below
    // MIN_GREEDY_RATE in some Connect Four matches and not in others.
    let timer = CpuTimer::start();
    let spent = || timer.spent();
    let (mut ended, mut time) = (0u32, Duration::ZERO);
    let mut pace = Pace::new();
    for _ in 0..MAX_GAMES {
        if pace
            .play_on(from.clone(), 0, MAX_GAME_STEPS, deadline, |s, n| {
                game.greedy_playout(s, rng, buf, n)
            })
            .is_none()
        {
            break;
        }
        (ended, time) = (ended + 1, spent());
    }
    (ended > 0 && !time.is_zero()).then(|| f64::from(ended) / time.as_secs_f64())
}

/// The mean time in seconds of one [`Game::decisive_move`] at [`CHECKS`] states spread evenly over
/// the plies of a random game from `from`, where one role moves alone: over a match the tree's new
/// nodes lie at every depth of the game, and the check's cost changes with it (a network answers at
/// once while a role has more than 64 moves: hex's check cost 2% of a game at states up to 16
/// plies on, where `uct+lookahead` kept 0.97 of `uct`'s simulations, but 0.72 after 30 moves, and
/// lost 4–12 to `uct`); `None` where there is no such state or no time. With it, whether
/// one role moved alone at every state that was not the end (the game takes turns).
fn check_time<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    deadline: Instant,
) -> (Option<f64>, bool) {
    let (mut total, mut checks, mut together) = (Duration::ZERO, 0u32, 0u32);
    let mut pace = Pace::new();
    let mut random = |s: &G::State, n| game.random_playout(s, rng, buf, n);
    let Some((_, length)) = pace.play_on(from.clone(), 0, MAX_CHECK_PLIES, deadline, &mut random)
    else {
        return (None, false);
    };
    // The longest check so far: the next starts only when one as long, or one step per move of
    // the mover (a check plays each of them), ends in time.
    let mut longest = Duration::ZERO;
    let mut moves = Vec::new();
    for i in 0..CHECKS {
        let Some((state, _)) =
            pace.play_on(from.clone(), 0, i * length / CHECKS, deadline, &mut random)
        else {
            break;
        };
        if game.is_terminal(&state) {
            continue;
        }
        let Some(mover) = game.mover(&state) else {
            together += 1;
            continue;
        };
        game.legal_moves(&state, mover, &mut moves);
        let guess = longest.max(pace.step_time() * moves.len() as u32);
        let started = Instant::now();
        if started + guess >= deadline {
            break;
        }
        game.decisive_move(&state, mover, &mut moves);
        let took = started.elapsed();
        (total, longest) = (total + took, longest.max(took));
        checks += 1;
    }
    let time = (checks > 0).then(|| total.as_secs_f64() / f64::from(checks));
    (time, checks > 0 && together == 0)
}

/// How well the moves predict who wins in games they were not learnt from. A move's *worth* is its
/// mean reward less its role's mean, shrunk towards 0 by [`PRIOR_CHOICES`]; a role's worth in a game
/// is the mean worth of the moves it chose there. Worths are learnt from one fold of the games (even
/// or odd) and paired with the rewards of the other, so that a move chosen in only one game cannot
/// predict that game by having learnt it; the folds then swap. The correlation of the pairs, pooled
/// within roles (each role's pairs about its own means); 0 when nothing varies. `choices` are
/// (game, `role * moves + move`), `outcomes` every game's rewards, role by role.
fn predicts(choices: &[(u32, u32)], outcomes: &[f64], roles: usize, moves: usize) -> f64 {
    if roles == 0 || moves == 0 {
        return 0.0;
    }
    let games = outcomes.len() / roles;
    let mut pooled = Centred::default();
    let mut learnt = vec![Group::default(); roles * moves];
    let mut role_means = vec![Group::default(); roles];
    let mut worths = vec![Group::default(); games * roles];
    for fold in 0..2 {
        learnt.fill(Group::default());
        role_means.fill(Group::default());
        worths.fill(Group::default());
        for &(g, at) in choices.iter().filter(|(g, _)| g % 2 != fold) {
            let role = at as usize / moves;
            let v = outcomes[g as usize * roles + role];
            learnt[at as usize].add(v);
            role_means[role].add(v);
        }
        for &(g, at) in choices.iter().filter(|(g, _)| g % 2 == fold) {
            let role = at as usize / moves;
            let (mean, move_) = (role_means[role], learnt[at as usize]);
            if mean.n == 0.0 {
                continue;
            }
            let mean = mean.sum / mean.n;
            let worth = (move_.sum + PRIOR_CHOICES * mean) / (move_.n + PRIOR_CHOICES) - mean;
            worths[g as usize * roles + role].add(worth);
        }
        for role in 0..roles {
            let mut pairs = Pairs::default();
            for g in (fold as usize..games).step_by(2) {
                let w = worths[g * roles + role];
                if w.n > 0.0 {
                    pairs.add(w.sum / w.n, outcomes[g * roles + role]);
                }
            }
            pooled.add(pairs.centred());
        }
    }
    pooled.correlation().unwrap_or(0.0)
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

    /// `games` random games of `roles` roles, each choosing two moves from four; role `r` gets
    /// `reward(r, first, second, rng)`.
    fn predicted(
        games: u32,
        roles: usize,
        seed: u64,
        mut reward: impl FnMut(usize, u32, u32, &mut SmallRng) -> f64,
    ) -> f64 {
        use rand::SeedableRng;
        let mut rng = SmallRng::seed_from_u64(seed);
        let (mut choices, mut outcomes) = (Vec::new(), Vec::new());
        for g in 0..games {
            for role in 0..roles {
                let (a, b) = (
                    random_index(&mut rng, 4) as u32,
                    random_index(&mut rng, 4) as u32,
                );
                let at = role as u32 * 4;
                choices.extend([(g, at + a), (g, at + b)]);
                outcomes.push(reward(role, a, b, &mut rng));
            }
        }
        predicts(&choices, &outcomes, roles, 4)
    }

    #[test]
    fn moves_that_win_in_one_half_of_the_games_predict_the_other_half() {
        let won = |won: bool| if won { 1.0 } else { 0.0 };
        for seed in 0..4 {
            // Playing move 0 wins: learnt in one fold, it predicts the other.
            let r = predicted(400, 1, seed, |_, a, b, _| won(a == 0 || b == 0));
            assert!(r > 0.8, "seed {seed}: {r}");
            // Each move counts a little: a game is won by the moves' sum, and a coin decides ties.
            let r = predicted(400, 1, seed, |_, a, b, rng| {
                won(a + b > 3 || (a + b == 3 && random_index(rng, 2) == 0))
            });
            assert!(r > 0.5, "seed {seed}: {r}");
            // Two roles, each with its own moves: the second role's move 3 wins for it.
            let r = predicted(400, 2, seed, |role, a, b, _| {
                won(role == 1 && (a == 3 || b == 3))
            });
            assert!(r > 0.5, "seed {seed}: {r}");
            // Who wins has nothing to do with the moves: a coin.
            let r = predicted(400, 2, seed, |_, _, _, rng| won(random_index(rng, 2) == 0));
            assert!(r.abs() < 0.15, "seed {seed}: {r}");
        }
        // Nothing varies: nothing to predict.
        assert_eq!(predicted(400, 1, 0, |_, _, _, _| 1.0), 0.0);
        assert_eq!(predicts(&[(0, 0)], &[1.0], 1, 0), 0.0);
    }

    #[test]
    fn a_correlation_from_few_games_does_not_switch_nst_on() {
        let probe = |games, predicts| MovesProbe {
            games,
            explained: 0.0,
            predicts,
            lookahead_cost: None,
            greedy_rate: None,
            lanes_speedup: None,
            duel: true,
        };
        assert!(!probe(20, 0.3).nst(), "chance at 20 games");
        assert!(probe(380, 0.3).nst());
        assert!(
            !probe(800, 0.2).nst(),
            "below the threshold however many games"
        );
        assert!(MovesProbe {
            explained: 0.02,
            ..probe(20, 0.0)
        }
        .nst());
    }

    #[test]
    fn the_lookahead_is_on_where_its_check_is_cheap_beside_a_game() {
        let probe = |lookahead_cost| MovesProbe {
            games: 400,
            explained: 0.0,
            predicts: 0.0,
            lookahead_cost,
            greedy_rate: None,
            lanes_speedup: None,
            duel: true,
        };
        // Pentago's 9%, Connect Four's 70%, and a game where no role moves alone.
        assert!(probe(Some(0.09)).lookahead());
        assert!(!probe(Some(0.7)).lookahead());
        assert!(!probe(None).lookahead());
    }

    #[test]
    fn the_probe_times_the_check_only_where_it_has_games_to_compare_with() {
        use rand::SeedableRng;
        let game = crate::games::connect4::Connect4::new(6, 7).unwrap();
        let start = game.initial_state();
        let mut rng = SmallRng::seed_from_u64(7);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let probe = probe(&game, &start, &mut rng, far);
        assert_eq!(probe.games, MAX_GAMES);
        assert!(probe.lookahead_cost.is_some_and(|c| c > 0.0), "{probe:?}");
        assert!(probe.duel, "{probe:?}");
        assert!(probe.greedy_rate.is_some_and(|r| r > 0.0), "{probe:?}");
        // No time: no game, no check, nothing decided.
        let probe = super::probe(&game, &start, &mut rng, Instant::now());
        assert_eq!((probe.games, probe.lookahead_cost), (0, None));
        assert_eq!((probe.greedy_rate, probe.greedy()), (None, false));
    }

    /// Connect Four whose check for a win in one move records how many stones each state it is
    /// asked about holds.
    struct Recorded {
        game: crate::games::connect4::Connect4,
        asked: std::sync::Mutex<Vec<u8>>,
    }

    impl Game for Recorded {
        type State = crate::games::connect4::Connect4State;
        type Move = crate::games::connect4::Connect4Move;
        fn info(&self) -> &crate::game::GameInfo {
            self.game.info()
        }
        fn initial_state(&self) -> Self::State {
            self.game.initial_state()
        }
        fn is_terminal(&self, state: &Self::State) -> bool {
            self.game.is_terminal(state)
        }
        fn legal_moves(&self, state: &Self::State, role: RoleIndex, out: &mut Vec<Self::Move>) {
            self.game.legal_moves(state, role, out);
        }
        fn next_state(&self, state: &Self::State, joint: &[Self::Move]) -> Self::State {
            self.game.next_state(state, joint)
        }
        fn goal(&self, state: &Self::State, role: RoleIndex) -> crate::game::Goal {
            self.game.goal(state, role)
        }
        fn mover(&self, state: &Self::State) -> Option<RoleIndex> {
            self.game.mover(state)
        }
        fn show_move(&self, mv: &Self::Move) -> String {
            self.game.show_move(mv)
        }
        fn show_state(&self, state: &Self::State) -> String {
            self.game.show_state(state)
        }
        fn decisive_move(
            &self,
            state: &Self::State,
            role: RoleIndex,
            buf: &mut Vec<Self::Move>,
        ) -> Option<usize> {
            self.asked.lock().unwrap().push(state.plies);
            self.game.decisive_move(state, role, buf)
        }
    }

    #[test]
    fn the_check_is_timed_at_states_spread_over_a_whole_game() {
        use rand::SeedableRng;
        let game = Recorded {
            game: crate::games::connect4::Connect4::new(6, 7).unwrap(),
            asked: std::sync::Mutex::new(Vec::new()),
        };
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let mut deepest = 0;
        for seed in 1..=5 {
            game.asked.lock().unwrap().clear();
            let mut rng = SmallRng::seed_from_u64(seed);
            let (time, turns) =
                check_time(&game, &game.initial_state(), &mut rng, &mut Vec::new(), far);
            assert!(time.is_some() && turns, "seed {seed}");
            let asked = game.asked.lock().unwrap().clone();
            // States at evenly spaced plies of one random game's length, from the start (a state
            // whose own random game ended sooner is passed over).
            assert!(asked.len() >= CHECKS as usize / 2, "seed {seed}: {asked:?}");
            assert_eq!(asked[0], 0, "seed {seed}: {asked:?}");
            assert!(
                asked.windows(2).all(|w| w[0] <= w[1] && w[1] - w[0] <= 4),
                "seed {seed}: {asked:?}"
            );
            deepest = deepest.max(*asked.last().unwrap());
        }
        // Past the 16 plies the probe once stopped at (hex's check is cheap there and dear later).
        assert!(deepest >= 20, "{deepest}");
    }

    #[test]
    fn greedy_playouts_are_for_duels_of_turns_where_they_are_cheap() {
        let probe = |greedy_rate, duel| MovesProbe {
            games: 400,
            explained: 0.0,
            predicts: 0.0,
            lookahead_cost: None,
            greedy_rate,
            lanes_speedup: None,
            duel,
        };
        // Connect Four's 17,000 a second; checkers' 735; not timed; a game of three roles.
        assert!(probe(Some(17_000.0), true).greedy());
        assert!(!probe(Some(735.0), true).greedy());
        assert!(!probe(None, true).greedy());
        assert!(!probe(Some(17_000.0), false).greedy());
    }

    #[test]
    fn a_game_of_simultaneous_moves_is_no_duel_of_turns() {
        use rand::SeedableRng;
        // Matching pennies: both roles pick at once, `a` wins when the picks match.
        let kif = include_str!("../../../tests/data/matching_pennies.kif");
        let program = crate::syntax::parse_kif(kif).unwrap();
        let game = crate::network::NetGame::from_program(&program, "pennies").unwrap();
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let mut rng = SmallRng::seed_from_u64(3);
        let probe = probe(&game, &game.initial_state(), &mut rng, far);
        assert!(probe.games > 0 && !probe.duel, "{probe:?}");
        assert!(!probe.greedy());
        assert!(constant_sum(&[1.0, 0.0, 0.5, 0.5], 2));
        assert!(!constant_sum(&[1.0, 0.0, 0.0, 0.0], 2));
    }
}
