//! Round-robin tournaments between local players: the schedule, one clocked game, and the table.
//!
//! # Schedule
//!
//! Every pair of entrants plays `games` games (a one-role game: every entrant plays `games` alone). The
//! seats rotate from game to game: in game `g` of a group, role `r` is taken by the group's entrant
//! `(r + g) mod size`. In a two-role game each entrant of a pair therefore sits first in half the games;
//! in a game of more roles than the group has entrants, an entrant takes several seats of one game.
//!
//! # Results
//!
//! Results are counted per seat: a seat **wins** when its goal is strictly higher than every other seat's,
//! **draws** when it ties for the highest, and **loses** otherwise. An entrant holding two seats of one
//! game gets two results. A seat's **score** is 1 for a win, ½ for a draw, 0 for a loss; the table gives
//! each entrant's mean score with a 95% interval by the normal approximation (mean ± 1.96 × the sample
//! standard deviation / √n, clamped to 0..=1), and its mean goal.
//!
//! Games run on a few worker threads at once ([`TournamentOptions::workers`]); each game's players are
//! built afresh with a seed of their own, so a tournament with the same seed plays the same games.
//!
//! # Remote entrants
//!
//! [`run_with_remote`] seats players that speak the GGP protocol (`http://host:port`) beside local ones:
//! each game is then a match run by the [referee](crate::protocol::referee), which sends the rules as
//! KIF, and a remote entrant plays one game at a time (a player server plays one match at a time; the
//! other workers take games without it meanwhile). A move the referee had to substitute (late, illegal,
//! or a failed connection) counts against the seat in [`Standing::substituted`]; so does a local player's
//! move that comes after its play clock, replaced by a random legal move in the same way. This is how one
//! tournament spreads over several machines: `ggp-run serve` on each, and their addresses as entrants.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{mix64, Game, GameError, Goal};
use crate::players::{make_player, Clock, PlayerConfig, PlayerError, PlayerSpec};
use crate::protocol::referee::{run_match, MatchSettings, RefereeError, Seat};
use crate::protocol::KifGame;

/// A game ends by itself long before this in every game we know; rule files might loop.
const MAX_STEPS: usize = 10_000;

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// The settings make no tournament.
    #[error("{0}")]
    Usage(String),
    /// An entrant cannot play the game.
    #[error(transparent)]
    Game(#[from] GameError),
    /// A player failed during a game.
    #[error("{player}: {source}")]
    Player {
        /// The entrant.
        player: String,
        /// What went wrong.
        source: PlayerError,
    },
    /// The referee could not run a match with remote players.
    #[error(transparent)]
    Referee(#[from] RefereeError),
}

/// How to run a tournament.
#[derive(Clone, Debug)]
pub struct TournamentOptions {
    /// Games each pair (or each lone entrant of a one-role game) plays.
    pub games: u32,
    /// Every player's clocks.
    pub clock: Clock,
    /// The players' settings; each game's seed is derived from `config.seed` and the game's number.
    pub config: PlayerConfig,
    /// Games played at once (at least 1).
    pub workers: usize,
}

/// One game of the schedule and its result.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// The entrant (index into the entrants) in each role's seat.
    pub seats: Vec<usize>,
    /// Each role's goal at the end.
    pub goals: Vec<Goal>,
    /// Per role: moves replaced by a random legal one (late; for remote players also illegal or failed).
    pub substituted: Vec<u32>,
}

/// What one game produced, per role: goals and substituted moves.
type Outcome = (Vec<Goal>, Vec<u32>);

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
        for g in 0..games as usize {
            out.push((0..roles).map(|r| group[(r + g) % group.len()]).collect());
        }
    }
    out
}

/// Plays one game with the entrants `specs[seats[r]]` in the seats, under `clock`; returns each role's
/// goal and how many of its moves came after the play clock. A late move is replaced by a random legal
/// one, as a referee would replace it, so a player cannot buy strength with time it was not given.
pub fn play_game<G: Game>(
    game: &G,
    specs: &[PlayerSpec],
    seats: &[usize],
    clock: Clock,
    config: &PlayerConfig,
) -> Result<(Vec<Goal>, Vec<u32>), TournamentError> {
    let players: Vec<_> = seats
        .iter()
        .enumerate()
        .map(|(role, &e)| make_player::<G>(specs[e].kind, role, &specs[e].config(config)))
        .collect();
    play_with(game, players, clock, config.seed, |role, source| {
        TournamentError::Player {
            player: specs[seats[role]].to_string(),
            source,
        }
    })
}

/// [`play_game`] with the players built: `players[r]` plays role `r`; `failed` names a player's error.
fn play_with<G: Game>(
    game: &G,
    mut players: Vec<Box<dyn crate::players::Player<G>>>,
    clock: Clock,
    seed: u64,
    failed: impl Fn(usize, PlayerError) -> TournamentError,
) -> Result<(Vec<Goal>, Vec<u32>), TournamentError> {
    for (role, p) in players.iter_mut().enumerate() {
        p.prepare(game, role, clock.start_deadline(Instant::now()))
            .map_err(|e| failed(role, e))?;
    }
    let mut state = game.initial_state();
    let mut joint = Vec::with_capacity(players.len());
    let mut late = vec![0u32; players.len()];
    let mut legal = Vec::new();
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x1a7e);
    let mut steps = 0;
    while !game.is_terminal(&state) {
        if steps == MAX_STEPS {
            return Err(TournamentError::Usage(format!(
                "a game did not end within {MAX_STEPS} moves"
            )));
        }
        joint.clear();
        for (role, p) in players.iter_mut().enumerate() {
            let asked = Instant::now();
            let choice = p
                .choose(game, &state, role, clock.move_deadline(asked))
                .map_err(|e| failed(role, e))?;
            if asked.elapsed() <= clock.play {
                joint.push(choice.mv);
                continue;
            }
            late[role] += 1;
            game.legal_moves(&state, role, &mut legal);
            if legal.is_empty() {
                return Err(GameError::Rules(format!(
                    "{} has no legal move in a non-terminal state",
                    game.info().roles[role]
                ))
                .into());
            }
            joint.push(legal[rng.gen_range(0..legal.len())].clone());
        }
        state = game.next_state(&state, &joint);
        steps += 1;
    }
    let goals = (0..players.len()).map(|r| game.goal(&state, r)).collect();
    Ok((goals, late))
}

/// Plays the whole schedule of `specs` on `game`; `on_game` is called after each game with the number
/// finished so far. Records come back in schedule order.
pub fn run<G: Game>(
    game: &G,
    specs: &[PlayerSpec],
    options: &TournamentOptions,
    on_game: impl Fn(usize) + Sync,
) -> Result<Vec<GameRecord>, TournamentError> {
    let info = game.info();
    for s in specs {
        refuse_unfit(s, game)?;
    }
    let exclusive = vec![false; specs.len()];
    run_schedule(
        specs.len(),
        info.num_roles(),
        options,
        &exclusive,
        |_, seats, config| play_game(game, specs, seats, options.clock, config),
        on_game,
    )
}

/// Plays the whole schedule of `entrants`, local or remote, on `game`, whose rules as KIF sentences are
/// `rules` (what remote players are sent); each game is a match run by the referee (see the module docs).
pub fn run_with_remote<G: KifGame>(
    game: &G,
    rules: &str,
    entrants: &[Seat],
    options: &TournamentOptions,
    on_game: impl Fn(usize) + Sync,
) -> Result<Vec<GameRecord>, TournamentError> {
    let roles = game.info().num_roles();
    for e in entrants {
        if let Seat::Local(spec) = e {
            refuse_unfit(spec, game)?;
        }
    }
    let remote = entrants.len()
        - entrants
            .iter()
            .filter(|e| matches!(e, Seat::Local(_)))
            .count();
    if roles > 2 && remote > 0 {
        return Err(TournamentError::Usage(format!(
            "games are played in pairs, so a pair holds all {roles} seats of a match, and a remote \
             player takes only one: remote players can enter tournaments of one- and two-role games"
        )));
    }
    let exclusive: Vec<bool> = entrants
        .iter()
        .map(|e| matches!(e, Seat::Remote(_)))
        .collect();
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    run_schedule(
        entrants.len(),
        roles,
        options,
        &exclusive,
        |i, seats, config| {
            let seated: Vec<Seat> = seats.iter().map(|&e| entrants[e].clone()).collect();
            let settings = MatchSettings {
                match_id: format!("tournament.{run_id}.{i}"),
                start_clock: options.clock.start,
                play_clock: options.clock.play,
                player_config: config.clone(),
            };
            let record = run_match(game, rules, &seated, &settings, &mut |_| {})?;
            if !record.is_completed {
                return Err(TournamentError::Usage(format!(
                    "a game did not end within {} moves",
                    record.moves.len()
                )));
            }
            let mut substituted = vec![0u32; seats.len()];
            for step in &record.errors {
                for (count, error) in substituted.iter_mut().zip(step) {
                    *count += u32::from(!error.is_empty());
                }
            }
            Ok((record.goal_values, substituted))
        },
        on_game,
    )
}

/// Refuses a local entrant that cannot play `game` before any game starts.
fn refuse_unfit<G: Game>(spec: &PlayerSpec, game: &G) -> Result<(), TournamentError> {
    spec.kind.supports(game.info())?;
    if spec.kind == crate::players::PlayerKind::Human {
        return Err(TournamentError::Usage(
            "a tournament has no time for a human player".into(),
        ));
    }
    Ok(())
}

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
    on_game: impl Fn(usize) + Sync,
) -> Result<Vec<GameRecord>, TournamentError> {
    if entrants < 2 && roles > 1 {
        return Err(TournamentError::Usage(
            "a tournament needs at least two players".into(),
        ));
    }
    let seatings = schedule(entrants, roles, options.games);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; seatings.len()]);
    let first_error: Mutex<Option<TournamentError>> = Mutex::new(None);
    let pending = Mutex::new(Pending {
        games: (0..seatings.len()).collect(),
        busy: vec![false; entrants],
    });
    let freed = Condvar::new();
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // The next game this worker may start, its exclusive entrants marked busy; None when none is left.
    let take = || -> Option<usize> {
        let mut p = pending.lock().ok()?;
        loop {
            if stop.load(Ordering::Relaxed) || p.games.is_empty() {
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
                    let outcome = play(i, &seatings[i], &config);
                    release(i);
                    match outcome {
                        Ok(outcome) => {
                            if let Ok(mut r) = results.lock() {
                                r[i] = Some(outcome);
                            }
                            on_game(done.fetch_add(1, Ordering::Relaxed) + 1);
                        }
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            freed.notify_all();
                            if let Ok(mut slot) = first_error.lock() {
                                slot.get_or_insert(e);
                            }
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let results = results
        .into_inner()
        .map_err(|_| TournamentError::Usage("a worker thread panicked".into()))?;
    seatings
        .into_iter()
        .zip(results)
        .map(|(seats, outcome)| {
            outcome
                .map(|(goals, substituted)| GameRecord {
                    seats,
                    goals,
                    substituted,
                })
                .ok_or_else(|| TournamentError::Usage("a game was not played".into()))
        })
        .collect()
}

/// One entrant's line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// The entrant's name.
    pub name: String,
    /// Seats played (see the module docs: an entrant may hold several seats of one game).
    pub games: u32,
    /// Seats with the strictly highest goal.
    pub wins: u32,
    /// Seats tied for the highest goal.
    pub draws: u32,
    /// Other seats.
    pub losses: u32,
    /// Mean goal over the seats.
    pub average_goal: f64,
    /// Mean score (win 1, draw ½, loss 0).
    pub score: f64,
    /// The 95% interval of the score (normal approximation), low end.
    pub low: f64,
    /// The high end.
    pub high: f64,
    /// Moves replaced for this entrant: late, or (remote players) illegal or a failed connection.
    pub substituted: u32,
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
        })
        .collect();
    let mut goal_sums = vec![0.0; names.len()];
    for rec in records {
        let Some(&top) = rec.goals.iter().max() else {
            continue;
        };
        let at_top = rec.goals.iter().filter(|&&g| g == top).count();
        for (seat, (&e, &goal)) in rec.seats.iter().zip(&rec.goals).enumerate() {
            let Some(s) = table.get_mut(e) else { continue };
            s.games += 1;
            s.substituted += rec.substituted.get(seat).copied().unwrap_or(0);
            goal_sums[e] += f64::from(goal);
            let score = if goal < top {
                s.losses += 1;
                0.0
            } else if at_top == 1 {
                s.wins += 1;
                1.0
            } else {
                s.draws += 1;
                0.5
            };
            scores[e].push(score);
        }
    }
    for (e, s) in table.iter_mut().enumerate() {
        let n = scores[e].len() as f64;
        if n == 0.0 {
            continue;
        }
        s.average_goal = goal_sums[e] / n;
        s.score = scores[e].iter().sum::<f64>() / n;
        let var = if n > 1.0 {
            scores[e].iter().map(|x| (x - s.score).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let half = 1.96 * (var / n).sqrt();
        s.low = (s.score - half).max(0.0);
        s.high = (s.score + half).min(1.0);
    }
    table
}

/// The table as CSV, with a header line.
pub fn to_csv(table: &[Standing]) -> String {
    let mut out = String::from(
        "player,games,wins,draws,losses,average_goal,score,score_low95,score_high95,substituted_moves\n",
    );
    for s in table {
        // A name is a player spec; quote it in case a file name holds a comma or a quote.
        let name = format!("\"{}\"", s.name.replace('"', "\"\""));
        out.push_str(&format!(
            "{name},{},{},{},{},{:.3},{:.4},{:.4},{:.4},{}\n",
            s.games,
            s.wins,
            s.draws,
            s.losses,
            s.average_goal,
            s.score,
            s.low,
            s.high,
            s.substituted
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

    /// Takes the first legal move, after sleeping past the play clock when told to.
    struct Sleepy {
        sleep: std::time::Duration,
    }

    impl<G: Game> crate::players::Player<G> for Sleepy {
        fn name(&self) -> String {
            "sleepy".into()
        }
        fn choose(
            &mut self,
            game: &G,
            state: &G::State,
            role: usize,
            _deadline: crate::players::Deadline,
        ) -> Result<crate::players::Choice<G::Move>, PlayerError> {
            std::thread::sleep(self.sleep);
            let mut moves = Vec::new();
            game.legal_moves(state, role, &mut moves);
            Ok(crate::players::Choice {
                mv: moves.swap_remove(0),
                stats: crate::players::SearchStats::default(),
            })
        }
    }

    #[test]
    fn late_local_moves_are_replaced_and_counted() {
        let game = crate::games::nim::Nim::new(7, false);
        let clock = Clock::new(Duration::from_secs(1), Duration::from_millis(20));
        let players: Vec<Box<dyn crate::players::Player<_>>> = vec![
            Box::new(Sleepy {
                sleep: Duration::ZERO,
            }),
            Box::new(Sleepy {
                sleep: Duration::from_millis(40),
            }),
        ];
        let (goals, late) = play_with(&game, players, clock, 1, |_, e| TournamentError::Player {
            player: "sleepy".into(),
            source: e,
        })
        .unwrap();
        assert_eq!(goals.len(), 2);
        assert_eq!(late[0], 0);
        assert!(
            late[1] >= 1,
            "every move of the second player is late: {late:?}"
        );
    }

    #[test]
    fn two_role_pairs_alternate_seats() {
        let s = schedule(3, 2, 2);
        assert_eq!(s.len(), 6);
        assert_eq!(s[0], vec![0, 1]);
        assert_eq!(s[1], vec![1, 0]);
        assert_eq!(s[5], vec![2, 1]);
    }

    #[test]
    fn three_seats_rotate_over_a_pair() {
        assert_eq!(schedule(2, 3, 2), vec![vec![0, 1, 0], vec![1, 0, 1]]);
    }

    #[test]
    fn ties_at_the_top_are_draws() {
        let names = vec!["a".to_string(), "b".to_string()];
        let recs = vec![
            GameRecord {
                seats: vec![0, 1],
                goals: vec![100, 0],
                substituted: vec![0, 2],
            },
            GameRecord {
                seats: vec![1, 0],
                goals: vec![50, 50],
                substituted: vec![0, 0],
            },
        ];
        let t = standings(&names, &recs);
        assert_eq!((t[0].wins, t[0].draws, t[0].losses), (1, 1, 0));
        assert_eq!((t[1].wins, t[1].draws, t[1].losses), (0, 1, 1));
        assert!((t[0].score - 0.75).abs() < 1e-12);
        assert!((t[1].average_goal - 25.0).abs() < 1e-12);
        assert_eq!((t[0].substituted, t[1].substituted), (0, 2));
    }
}
