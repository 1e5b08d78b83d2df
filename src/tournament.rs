//! Round-robin tournaments: the schedule, one game on the referee, and the table.
//!
//! # Schedule
//!
//! Every pair of entrants plays `games` games (a one-role game: every entrant plays `games` alone). The
//! seats rotate from game to game: in game `g` of a group, role `r` is taken by the group's entrant
//! `(r + g) mod size`. In a two-role game each entrant of a pair therefore sits first in half the games;
//! in a game of more roles than the group has entrants, an entrant takes several seats of one game, and
//! the games of a group are rounded up to a multiple of its size so that every entrant holds as many
//! seats as the others.
//!
//! # Results
//!
//! Results are counted per seat, as the referee judges them ([`seat_results`]): a seat **wins** when its
//! goal is strictly higher than every other seat's, **draws** when it ties for the highest, and **loses**
//! otherwise; alone in a one-player game it wins with the full score (100). An entrant holding several
//! seats of one game has one result in it, judged alike by the mean of its seats' goals against the
//! other entrants' (it does not play against itself, and a game is one trial of the interval below, not
//! two that cannot both be won); the table by seat ([`by_seat`]) and the CSV of every game
//! ([`games_csv`]) still give each seat's own result. A **score** is 1 for a win, ½ for a draw, 0 for
//! a loss; the table gives each entrant's mean score with a 95% Wilson interval
//! (honest at small counts: eight wins in eight games is not a certainty), and its mean goal.
//!
//! Every game is a match run by the [referee](crate::referee), so the same rules hold as anywhere: every
//! seat asked at once, an answer past the play clock and its grace, illegal or failed replaced by a
//! random legal move and counted against the seat ([`Standing::substituted`]). Games run on a few worker
//! threads at once ([`TournamentOptions::workers`]); each game's players are built afresh with a seed of
//! their own, so a tournament with the same seed plays the same games.
//!
//! # Remote entrants
//!
//! An entrant may be a player server (`http://host:port`) when the game is written as rules: the
//! referee sends it the rules, and it plays one game at a time (a player server plays one match at a
//! time; the other workers take games without it meanwhile). This is how one tournament spreads over
//! several machines: `ggp-run serve` on each, and their addresses as entrants.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use smallvec::SmallVec;

use crate::game::{mix64, Game, GameError, Goal};
use crate::learn::{Model, ModelError};
use crate::load::Loaded;
use crate::players::{Clock, PlayerConfig, PlayerKind, StopSwitch};
use crate::referee::{
    make_seat, run_match, seat_results, MatchEvent, MatchSettings, Observer, RefereeError, Seat,
    SeatResult, SeatSpec,
};

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// The settings make no tournament.
    #[error("{0}")]
    Usage(String),
    /// An entrant cannot play the game.
    #[error(transparent)]
    Game(#[from] GameError),
    /// A match could not be played.
    #[error(transparent)]
    Referee(#[from] RefereeError),
    /// A learned entrant's scores file cannot be read or belongs to another game.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// How to run a tournament.
#[derive(Clone, Debug)]
pub struct TournamentOptions {
    /// Games each pair (or each lone entrant of a one-role game) plays.
    pub games: u32,
    /// Every player's clocks.
    pub clock: Clock,
    /// How long past the play clock an answer is still taken.
    pub grace: Duration,
    /// The players' settings; each game's seed is derived from `config.seed` and the game's number.
    pub config: PlayerConfig,
    /// Games played at once (at least 1).
    pub workers: usize,
    /// Set by someone who wants the tournament stopped (a page's Stop button): no game starts after
    /// it, and the games in play end before their next step.
    pub stop: Option<Arc<StopSwitch>>,
}

/// [`Played::stopped`] of a tournament that ended because its [`TournamentOptions::stop`] was set.
pub const STOPPED_ON_REQUEST: &str = "stopped on request";

/// The games a tournament played: every game of its schedule, or those that ended before it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// The games that ended, in schedule order.
    pub records: Vec<GameRecord>,
    /// Games in the schedule.
    pub total: usize,
    /// Why the tournament stopped before the end of its schedule, when it did: a game that could not
    /// be played to its end (its players and reason), or a stop asked for.
    pub stopped: Option<String>,
}

/// One game of the schedule and its result.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// The game's place in the schedule, from 0 (a tournament stopped early has gaps).
    pub game: usize,
    /// The entrant (index into the entrants) in each role's seat.
    pub seats: Vec<usize>,
    /// Each role's goal at the end.
    pub goals: Vec<Goal>,
    /// Per role: answers replaced by a random legal move (late, illegal, or a failed seat).
    pub substituted: Vec<u32>,
    /// Per role: how much its player searched.
    pub effort: Vec<Effort>,
}

/// How much a seat searched over a game, from the effort its player reported with each move it chose
/// (a remote player reports none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Moves chosen where the role had a choice.
    pub moves: u32,
    /// The iterative-deepening depths finished, summed over those moves.
    pub depth: u64,
    /// Moves whose search reported a depth.
    pub deepened: u32,
    /// Search nodes, summed.
    pub nodes: u64,
    /// Simulations, summed.
    pub simulations: u64,
    /// The longest the seat took to answer, forced moves included (as the referee timed it).
    pub slowest: Duration,
}

/// Adds up each role's effort over a match (see [`Effort`]).
struct Tally(Vec<Effort>);

impl<G: Game> Observer<G> for Tally {
    fn observe(&mut self, _: &G, event: &MatchEvent<'_, G>) {
        let MatchEvent::Moves { mover, moves, .. } = event else {
            return;
        };
        for (role, m) in moves.iter().enumerate() {
            let Some(e) = self.0.get_mut(role) else {
                continue;
            };
            e.slowest = e.slowest.max(m.took);
            let Some(stats) = m.stats else {
                continue;
            };
            if mover.is_some_and(|who| who != role) {
                continue;
            }
            e.moves += 1;
            e.nodes += stats.nodes;
            e.simulations += stats.simulations;
            if stats.depth > 0 {
                e.deepened += 1;
                e.depth += u64::from(stats.depth);
            }
        }
    }
}

/// The seatings of every game: for each game, the entrant in each role's seat (see the module docs).
pub fn schedule(entrants: usize, roles: usize, games: u32) -> Vec<Vec<usize>> {
    let groups: Vec<Vec<usize>> = if roles <= 1 {
        (0..entrants).map(|e| vec![e]).collect()
    } else {
        let mut pairs = Vec::new();
        for a in 0..entrants {
            for b in a + 1..entrants {
                pairs.push(vec![a, b]);
            }
        }
        pairs
    };
    let mut out = Vec::new();
    for group in &groups {
        let size = group.len();
        // Seats rotate evenly only over a multiple of the group's size when it does not divide the roles.
        let games = if roles.is_multiple_of(size) {
            games as usize
        } else {
            (games as usize).div_ceil(size) * size
        };
        for g in 0..games {
            out.push((0..roles).map(|r| group[(r + g) % size]).collect());
        }
    }
    out
}

/// Plays the whole schedule of `entrants` on `loaded`'s game; `on_game` is called after each game with
/// the number finished so far and its record. A game that cannot be played to its end (the step cap, a
/// seat that fails to start) stops the tournament, which keeps the games already played. An error
/// means no game could start.
pub fn run<G: Game>(
    loaded: &Loaded<G>,
    entrants: &[SeatSpec],
    options: &TournamentOptions,
    on_game: impl Fn(usize, &GameRecord) + Sync,
) -> Result<Played, TournamentError> {
    let info = loaded.game.info();
    let roles = info.num_roles();
    for e in entrants {
        match e {
            SeatSpec::Person => {
                return Err(TournamentError::Usage(
                    "a tournament has no time for a human player".into(),
                ))
            }
            SeatSpec::Player(spec) => spec.kind.check(info)?,
            SeatSpec::Remote(_) => {}
        }
    }
    let remote = entrants
        .iter()
        .filter(|e| matches!(e, SeatSpec::Remote(_)))
        .count();
    if roles > 2 && remote > 0 {
        return Err(TournamentError::Usage(format!(
            "games are played in pairs, so a pair holds all {roles} seats of a match, and a remote \
             player takes only one: remote players can enter tournaments of one- and two-role games"
        )));
    }
    let rules =
        match (remote, &loaded.rules) {
            (0, _) => None,
            (_, Some(rules)) => {
                Some(rules.to_kif().map_err(|e| {
                    TournamentError::Usage(format!("the rules cannot be sent: {e}"))
                })?)
            }
            (_, None) => return Err(TournamentError::Usage(
                "remote players are sent the game's rules, so the game must be a rule file (.kif \
                 or .gdl), e.g. games/connect4.gdl rather than connect4"
                    .into(),
            )),
        };
    let exclusive: Vec<bool> = entrants
        .iter()
        .map(|e| matches!(e, SeatSpec::Remote(_)))
        .collect();
    let options = &with_models_read(loaded.game.as_ref(), entrants, options)?;
    let names = entrant_names(entrants);
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    run_schedule(
        entrants.len(),
        roles,
        options,
        &exclusive,
        |i, seats, config| {
            let mut seated = seats
                .iter()
                .enumerate()
                .map(|(role, &e)| {
                    make_seat(&entrants[e], role, loaded, config, &mut |_| {
                        Err(RefereeError::Seats(
                            "no person plays in a tournament".into(),
                        ))
                    })
                })
                .collect::<Result<Vec<Box<dyn Seat<G>>>, _>>()?;
            let settings = MatchSettings {
                grace: options.grace,
                stop: options.stop.clone(),
                ..MatchSettings::new(
                    format!("tournament.{run_id}.{i}"),
                    options.clock,
                    config.seed,
                )
            };
            let mut tally = Tally(vec![Effort::default(); roles]);
            let result = run_match(
                loaded.game.as_ref(),
                rules.as_deref(),
                &mut seated,
                &settings,
                &mut [&mut tally],
            )?;
            match (result.goals, result.aborted) {
                (Some(goals), None) => Ok((goals, result.substituted, tally.0)),
                (_, why) => Err(TournamentError::Usage(format!(
                    "game {} ({}) stopped early: {}",
                    i + 1,
                    seats
                        .iter()
                        .map(|&e| names[e].as_str())
                        .collect::<Vec<_>>()
                        .join(" against "),
                    why.unwrap_or_default()
                ))),
            }
        },
        on_game,
    )
}

/// `options` with the scores file of every `learned:FILE` entrant read and checked against `game`:
/// a missing or foreign file is refused before the first game, not when the game it sits in starts,
/// and a large one is not read again inside every game's start clock.
fn with_models_read<G: Game>(
    game: &G,
    entrants: &[SeatSpec],
    options: &TournamentOptions,
) -> Result<TournamentOptions, TournamentError> {
    let mut options = options.clone();
    for e in entrants {
        let SeatSpec::Player(spec) = e else { continue };
        let (PlayerKind::Learned, Some(file)) = (spec.kind, &spec.file) else {
            continue;
        };
        if options.config.models.iter().any(|(p, _)| p == file) {
            continue;
        }
        let model = Model::load(file)?;
        model.check(game, file)?;
        options.config.models.push((file.clone(), Arc::new(model)));
    }
    Ok(options)
}

/// What one game produced, per role: goals, substituted moves and effort.
type Outcome = (Vec<Goal>, Vec<u32>, Vec<Effort>);

/// The games not yet started, and which exclusive entrants are in a game now.
struct Pending {
    games: VecDeque<usize>,
    busy: Vec<bool>,
}

/// Runs the schedule on `options.workers` threads; `play(i, seats, config)` plays game `i`. An entrant
/// marked `exclusive` is in at most one game at a time.
fn run_schedule(
    entrants: usize,
    roles: usize,
    options: &TournamentOptions,
    exclusive: &[bool],
    play: impl Fn(usize, &[usize], &PlayerConfig) -> Result<Outcome, TournamentError> + Sync,
    on_game: impl Fn(usize, &GameRecord) + Sync,
) -> Result<Played, TournamentError> {
    if entrants < 2 && roles > 1 {
        return Err(TournamentError::Usage(
            "a tournament needs at least two players".into(),
        ));
    }
    let seatings = schedule(entrants, roles, options.games);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; seatings.len()]);
    // The first failure, and whether a stop had been asked for when it came (the games in play
    // still end after a failure, and a stop pressed meanwhile must not hide it).
    let first_error: Mutex<Option<(TournamentError, bool)>> = Mutex::new(None);
    let pending = Mutex::new(Pending {
        games: (0..seatings.len()).collect(),
        busy: vec![false; entrants],
    });
    let freed = Condvar::new();
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let asked_to_stop = || options.stop.as_ref().is_some_and(|s| s.is_set());
    // The next game this worker may start, its exclusive entrants marked busy; None when none is left.
    let take = || -> Option<usize> {
        let mut p = pending.lock().ok()?;
        loop {
            if stop.load(Ordering::Relaxed) || asked_to_stop() || p.games.is_empty() {
                return None;
            }
            let free =
                |p: &Pending, i: usize| seatings[i].iter().all(|&e| !(exclusive[e] && p.busy[e]));
            if let Some(at) = p.games.iter().position(|&i| free(&p, i)) {
                let i = p.games.remove(at)?;
                for &e in &seatings[i] {
                    p.busy[e] |= exclusive[e];
                }
                return Some(i);
            }
            // Every game left waits for an entrant in play: wait until a game ends.
            p = freed.wait_timeout(p, Duration::from_millis(200)).ok()?.0;
        }
    };
    let release = |i: usize| {
        if let Ok(mut p) = pending.lock() {
            for &e in &seatings[i] {
                if exclusive[e] {
                    p.busy[e] = false;
                }
            }
        }
        freed.notify_all();
    };
    std::thread::scope(|scope| {
        for _ in 0..options.workers.clamp(1, 64) {
            scope.spawn(|| {
                while let Some(i) = take() {
                    let mut config = options.config.clone();
                    // A seed of its own for every game, or every game between random players would repeat.
                    config.seed = mix64(options.config.seed ^ (i as u64 + 1));
                    // A game whose engine panics is that game's failure: the games already played
                    // keep their table instead of the whole tournament unwinding.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        play(i, &seatings[i], &config)
                    }))
                    .unwrap_or_else(|panic| {
                        let why = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "no message".into());
                        Err(TournamentError::Usage(format!(
                            "game {} failed inside the engine: {why}",
                            i + 1
                        )))
                    });
                    release(i);
                    match outcome {
                        Ok(outcome) => {
                            let record = GameRecord {
                                game: i,
                                seats: seatings[i].clone(),
                                goals: outcome.0.clone(),
                                substituted: outcome.1.clone(),
                                effort: outcome.2.clone(),
                            };
                            if let Ok(mut r) = results.lock() {
                                r[i] = Some(outcome);
                            }
                            on_game(done.fetch_add(1, Ordering::Relaxed) + 1, &record);
                        }
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            freed.notify_all();
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert((e, asked_to_stop()));
                            }
                            break;
                        }
                    }
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| TournamentError::Usage("a worker thread panicked".into()))?;
    let total = seatings.len();
    let records: Vec<GameRecord> = seatings
        .into_iter()
        .zip(results)
        .enumerate()
        .filter_map(|(game, (seats, outcome))| {
            outcome.map(|(goals, substituted, effort)| GameRecord {
                game,
                seats,
                goals,
                substituted,
                effort,
            })
        })
        .collect();
    let failed = first_error.into_inner().ok().flatten();
    // A stop asked for once every game had ended stopped nothing.
    let stopped = if records.len() == total {
        None
    } else if let Some((e, _)) = failed.filter(|(_, after_stop)| !after_stop) {
        Some(e.to_string())
    } else if asked_to_stop() {
        Some(STOPPED_ON_REQUEST.to_string())
    } else {
        Some("a game was not played".to_string())
    };
    Ok(Played {
        stopped,
        records,
        total,
    })
}

/// One entrant's line of the table.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Standing {
    /// The entrant's name.
    pub name: String,
    /// Games played.
    pub games: u32,
    /// Games it ended with the strictly highest goal (an entrant holding several seats of one game:
    /// the mean of theirs, against the other entrants'; see the module docs).
    pub wins: u32,
    /// Games it ended tied for the highest goal.
    pub draws: u32,
    /// Other games.
    pub losses: u32,
    /// Mean goal over the games (0 when `games` is 0: no score, printed as `-`).
    pub average_goal: f64,
    /// Mean score (win 1, draw ½, loss 0; 0 when `games` is 0).
    pub score: f64,
    /// The 95% interval of the score (Wilson's), low end.
    pub low: f64,
    /// The high end.
    pub high: f64,
    /// Moves replaced for this entrant: late, or (remote players) illegal or a failed connection.
    pub substituted: u32,
    /// The mean depth its searches finished, when they deepen (alpha-beta, `id`...).
    pub mean_depth: Option<f64>,
}

/// One entrant's part in one game.
struct EntrantResult {
    entrant: usize,
    /// The seats it held.
    seats: SmallVec<[usize; 4]>,
    /// The mean of their goals.
    goal: f64,
    result: SeatResult,
}

/// Each entrant's result in `rec`, in the order of their first seats: its goal (the mean of its
/// seats', when it held several) against the other entrants', as [`seat_results`] judges seats. So an
/// entrant holding two seats of a three-role game gets one result, never one against itself.
fn entrant_results(rec: &GameRecord) -> Vec<EntrantResult> {
    let mut out: Vec<EntrantResult> = Vec::new();
    for (seat, &entrant) in rec.seats.iter().enumerate() {
        let goal = f64::from(rec.goals.get(seat).copied().unwrap_or(0));
        match out.iter_mut().find(|o| o.entrant == entrant) {
            Some(o) => {
                o.seats.push(seat);
                o.goal += goal;
            }
            None => out.push(EntrantResult {
                entrant,
                seats: smallvec::smallvec![seat],
                goal,
                result: SeatResult::Loss,
            }),
        }
    }
    for o in &mut out {
        o.goal /= o.seats.len() as f64;
    }
    if out.len() == rec.seats.len() {
        // One seat each: the referee's own judgement (a lone seat wins with the full score).
        for (o, result) in out.iter_mut().zip(seat_results(&rec.goals)) {
            o.result = result;
        }
        return out;
    }
    let top = out.iter().map(|o| o.goal).fold(f64::MIN, f64::max);
    let at_top = out.iter().filter(|o| o.goal == top).count();
    for o in &mut out {
        o.result = match (o.goal == top, at_top) {
            (false, _) => SeatResult::Loss,
            (true, 1) => SeatResult::Win,
            (true, _) => SeatResult::Draw,
        };
    }
    out
}

/// The table of `names` (one per entrant) after `records`.
pub fn standings(names: &[String], records: &[GameRecord]) -> Vec<Standing> {
    let mut scores: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut table: Vec<Standing> = names
        .iter()
        .map(|n| Standing {
            name: n.clone(),
            games: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            average_goal: 0.0,
            score: 0.0,
            low: 0.0,
            high: 0.0,
            substituted: 0,
            mean_depth: None,
        })
        .collect();
    let mut depths = vec![(0u64, 0u32); names.len()];
    let mut goal_sums = vec![0.0; names.len()];
    for rec in records {
        for one in entrant_results(rec) {
            let e = one.entrant;
            let Some(s) = table.get_mut(e) else { continue };
            s.games += 1;
            for &seat in &one.seats {
                s.substituted += rec.substituted.get(seat).copied().unwrap_or(0);
                if let Some(effort) = rec.effort.get(seat) {
                    depths[e].0 += effort.depth;
                    depths[e].1 += effort.deepened;
                }
            }
            goal_sums[e] += one.goal;
            let result = one.result;
            match result {
                SeatResult::Win => s.wins += 1,
                SeatResult::Draw => s.draws += 1,
                SeatResult::Loss => s.losses += 1,
            }
            scores[e].push(result.score());
        }
    }
    for (e, s) in table.iter_mut().enumerate() {
        let n = scores[e].len() as f64;
        if n == 0.0 {
            continue;
        }
        s.average_goal = goal_sums[e] / n;
        s.score = scores[e].iter().sum::<f64>() / n;
        (s.low, s.high) = wilson(s.score, n);
        let (depth, deepened) = depths[e];
        s.mean_depth = (deepened > 0).then(|| depth as f64 / f64::from(deepened));
    }
    table
}

/// One entrant's results in one role's seat (see [`by_seat`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeatLine {
    /// Games won in the seat.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl SeatLine {
    /// Games played in the seat.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The mean score in the seat (win 1, draw ½), `None` when it played none there.
    pub fn score(&self) -> Option<f64> {
        let n = self.games();
        (n > 0).then(|| (f64::from(self.wins) + f64::from(self.draws) / 2.0) / f64::from(n))
    }
}

/// Per entrant, per role of a game of `roles` roles: its results in that role's seat, so that an
/// advantage of the first mover (or of any seat) shows apart from the players' strength.
pub fn by_seat(entrants: usize, roles: usize, records: &[GameRecord]) -> Vec<Vec<SeatLine>> {
    let mut table = vec![vec![SeatLine::default(); roles]; entrants];
    for rec in records {
        for (seat, result) in seat_results(&rec.goals).into_iter().enumerate() {
            let Some(line) = rec
                .seats
                .get(seat)
                .and_then(|&e| table.get_mut(e))
                .and_then(|row| row.get_mut(seat))
            else {
                continue;
            };
            match result {
                SeatResult::Win => line.wins += 1,
                SeatResult::Draw => line.draws += 1,
                SeatResult::Loss => line.losses += 1,
            }
        }
    }
    table
}

/// Every seat of every game as CSV, with a header line: the game's number (from 1, its place in
/// the schedule, so that a tournament stopped early leaves its unplayed games' numbers out), the role, the entrant in its seat, its goal and result, the moves replaced for
/// it, the moves it chose and the simulations and nodes its searches reported, and its slowest
/// answer in milliseconds.
pub fn games_csv(names: &[String], roles: &[String], records: &[GameRecord]) -> String {
    let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out =
        String::from(
        "game,role,player,goal,result,substituted_moves,moves,simulations,nodes,slowest_answer_ms\n",
    );
    for rec in records {
        for (seat, result) in seat_results(&rec.goals).into_iter().enumerate() {
            let name = rec.seats.get(seat).and_then(|&e| names.get(e));
            let role = roles.get(seat).map_or("", String::as_str);
            let effort = rec.effort.get(seat).copied().unwrap_or_default();
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{}\n",
                rec.game + 1,
                quoted(role),
                quoted(name.map_or("", String::as_str)),
                rec.goals[seat],
                match result {
                    SeatResult::Win => "win",
                    SeatResult::Draw => "draw",
                    SeatResult::Loss => "loss",
                },
                rec.substituted.get(seat).copied().unwrap_or(0),
                effort.moves,
                effort.simulations,
                effort.nodes,
                effort.slowest.as_millis(),
            ));
        }
    }
    out
}

/// The 95% Wilson score interval of a mean score `p` over `n` games: unlike the normal approximation
/// it never collapses to a point at 0 or 1, so eight wins in eight games reads 0.68..1, not 1..1.
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    const Z: f64 = 1.96;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The table as CSV, with a header line.
pub fn to_csv(table: &[Standing]) -> String {
    let mut out = String::from(
        "player,games,wins,draws,losses,average_goal,score,score_low95,score_high95,substituted_moves,\
         mean_depth\n",
    );
    for s in table {
        // A name is a player spec; quote it in case a file name holds a comma or a quote.
        let name = format!("\"{}\"", s.name.replace('"', "\"\""));
        // An entrant that played no game has no score: empty fields, not a certain loss.
        let scored = if s.games == 0 {
            ",,,".to_string()
        } else {
            format!(
                "{:.3},{:.4},{:.4},{:.4}",
                s.average_goal, s.score, s.low, s.high
            )
        };
        out.push_str(&format!(
            "{name},{},{},{},{},{scored},{},{}\n",
            s.games,
            s.wins,
            s.draws,
            s.losses,
            s.substituted,
            s.mean_depth.map(|d| format!("{d:.2}")).unwrap_or_default()
        ));
    }
    out
}

/// Distinct names for the entrants: the spec's text, with `#2`, `#3`... on repeats.
pub fn entrant_names<E: std::fmt::Display>(specs: &[E]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in specs {
        let base = s.to_string();
        let seen = names
            .iter()
            .filter(|n| **n == base || n.starts_with(&format!("{base}#")))
            .count();
        names.push(if seen == 0 {
            base
        } else {
            format!("{base}#{}", seen + 1)
        });
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_role_pairs_alternate_seats() {
        let s = schedule(3, 2, 2);
        assert_eq!(s.len(), 6);
        assert_eq!(s[0], vec![0, 1]);
        assert_eq!(s[1], vec![1, 0]);
        assert_eq!(s[5], vec![2, 1]);
    }

    #[test]
    fn three_seats_rotate_over_a_pair_evenly() {
        assert_eq!(schedule(2, 3, 2), vec![vec![0, 1, 0], vec![1, 0, 1]]);
        assert_eq!(
            schedule(2, 3, 1),
            schedule(2, 3, 2),
            "rounded up to even seats"
        );
        assert_eq!(schedule(3, 4, 1).len(), 3, "two seats each in one game");
    }

    #[test]
    fn wilson_intervals_are_honest_at_small_counts() {
        let (lo, hi) = wilson(1.0, 8.0);
        assert!((0.67..0.68).contains(&lo) && hi == 1.0, "{lo}..{hi}");
        let (lo, hi) = wilson(0.5, 1000.0);
        assert!((0.46..0.47).contains(&lo) && (0.53..0.54).contains(&hi));
    }

    #[test]
    fn ties_at_the_top_are_draws() {
        let names = vec!["a".to_string(), "b".to_string()];
        let recs = vec![
            GameRecord {
                game: 0,
                seats: vec![0, 1],
                goals: vec![100, 0],
                substituted: vec![0, 2],
                effort: vec![Effort::default(); 2],
            },
            GameRecord {
                game: 1,
                seats: vec![1, 0],
                goals: vec![50, 50],
                substituted: vec![0, 0],
                effort: vec![Effort::default(); 2],
            },
        ];
        let t = standings(&names, &recs);
        assert_eq!((t[0].wins, t[0].draws, t[0].losses), (1, 1, 0));
        assert_eq!((t[1].wins, t[1].draws, t[1].losses), (0, 1, 1));
        assert!((t[0].score - 0.75).abs() < 1e-12);
        assert!((t[1].average_goal - 25.0).abs() < 1e-12);
        assert_eq!((t[0].substituted, t[1].substituted), (0, 2));
    }

    #[test]
    fn an_entrant_holding_several_seats_has_one_result_by_their_mean_goal() {
        let names = vec!["a".to_string(), "b".to_string()];
        let game = |seats: Vec<usize>, goals: Vec<Goal>| GameRecord {
            game: 0,
            seats,
            goals,
            substituted: vec![1, 0, 2],
            effort: vec![Effort::default(); 3],
        };
        let recs = vec![
            // a's seats win and lose (mean 50), b's takes 50: a draw, not a win and a loss.
            game(vec![0, 1, 0], vec![100, 50, 0]),
            // b's seats average 75 against a's 0.
            game(vec![1, 0, 1], vec![100, 0, 50]),
        ];
        let t = standings(&names, &recs);
        assert_eq!(
            (t[0].games, t[0].wins, t[0].draws, t[0].losses),
            (2, 0, 1, 1)
        );
        assert_eq!(
            (t[1].games, t[1].wins, t[1].draws, t[1].losses),
            (2, 1, 1, 0)
        );
        assert!((t[0].average_goal - 25.0).abs() < 1e-12);
        assert!((t[1].average_goal - 62.5).abs() < 1e-12);
        assert!((t[1].score - 0.75).abs() < 1e-12);
        // Its seats' substituted moves all count.
        assert_eq!((t[0].substituted, t[1].substituted), (3, 3));
        // The table by seat keeps each seat's own result.
        let seats = by_seat(2, 3, &recs);
        assert_eq!(seats[0][0].wins + seats[0][2].losses, 2);
    }

    #[test]
    fn a_game_that_panics_stops_the_tournament_and_keeps_the_games_played() {
        let options = TournamentOptions {
            games: 4,
            clock: Clock::new(Duration::from_secs(1), Duration::from_secs(1)),
            grace: Duration::ZERO,
            config: PlayerConfig::default(),
            workers: 1,
            stop: None,
        };
        let played = run_schedule(
            2,
            2,
            &options,
            &[false, false],
            |i, _, _| {
                assert!(i < 2, "an engine's bug in game {}", i + 1);
                Ok((vec![100, 0], vec![0, 0], vec![Effort::default(); 2]))
            },
            |_, _| {},
        )
        .expect("two games were played");
        assert_eq!(played.records.len(), 2);
        let why = played.stopped.expect("the panic stops the tournament");
        assert!(
            why.contains("game 3") && why.contains("an engine's bug in game 3"),
            "{why}"
        );
    }

    #[test]
    fn an_entrant_that_played_no_game_has_no_score_in_the_csv() {
        let names = vec!["a".to_string(), "b".to_string(), "never".to_string()];
        let recs = vec![GameRecord {
            game: 0,
            seats: vec![0, 1],
            goals: vec![100, 0],
            substituted: vec![0, 0],
            effort: vec![Effort::default(); 2],
        }];
        let csv = to_csv(&standings(&names, &recs));
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[2].starts_with("\"b\",1,0,0,1,0.000,0.0000,0.0000,"),
            "{csv}"
        );
        assert_eq!(lines[3], "\"never\",0,0,0,0,,,,,0,", "{csv}");
    }

    #[test]
    fn results_by_seat_and_every_game_as_csv() {
        let names = vec!["a".to_string(), "b, \"2\"".to_string()];
        let roles = vec!["red".to_string(), "black".to_string()];
        let game = |game: usize, seats: [usize; 2], goals: [Goal; 2]| GameRecord {
            game,
            seats: seats.to_vec(),
            goals: goals.to_vec(),
            substituted: vec![0, 1],
            effort: vec![
                Effort {
                    moves: 3,
                    simulations: 70,
                    nodes: 9,
                    slowest: Duration::from_micros(250_900),
                    ..Effort::default()
                },
                Effort::default(),
            ],
        };
        // `a` wins twice as red and draws once as black; `b` loses twice as black. The third game of
        // the schedule was not played (a tournament stopped early): the fourth keeps its number.
        let recs = vec![
            game(0, [0, 1], [100, 0]),
            game(1, [1, 0], [50, 50]),
            game(3, [0, 1], [100, 0]),
        ];
        let seats = by_seat(2, 2, &recs);
        let line = |w, d, l| SeatLine {
            wins: w,
            draws: d,
            losses: l,
        };
        assert_eq!(seats[0], vec![line(2, 0, 0), line(0, 1, 0)]);
        assert_eq!(seats[1], vec![line(0, 1, 0), line(0, 0, 2)]);
        assert_eq!(seats[0][1].score(), Some(0.5));
        assert_eq!(SeatLine::default().score(), None);
        let csv = games_csv(&names, &roles, &recs);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 3 * 2, "{csv}");
        assert_eq!(
            lines[0],
            "game,role,player,goal,result,substituted_moves,moves,simulations,nodes,slowest_answer_ms"
        );
        assert_eq!(lines[1], "1,\"red\",\"a\",100,win,0,3,70,9,250");
        assert_eq!(lines[4], "2,\"black\",\"a\",50,draw,1,0,0,0,0");
        assert_eq!(lines[3], "2,\"red\",\"b, \"\"2\"\"\",50,draw,0,3,70,9,250");
        assert_eq!(lines[5], "4,\"red\",\"a\",100,win,0,3,70,9,250");
    }
}
