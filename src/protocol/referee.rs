//! The referee (game manager): runs a match between any mix of local players and remote players that
//! speak the protocol over HTTP, and keeps ggp-base's match record.
//!
//! Remote players of one step are asked at once, each request bounded by the clock plus a grace second
//! (what ggp-base's managers allow). A reply that is late (`TO`), unreadable or illegal (`IL`), or a
//! connection that fails (`CE`) is replaced by a random legal move and recorded; a player that misses
//! `start` is replaced for the whole match. The match always finishes.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{Game, GameError, GameInfo};
use crate::players::{make_player, Clock, Player, PlayerConfig, PlayerSpec};

use super::estimated::{Estimated, ESTIMATE_PLAYOUTS};
use super::messages::{ggp_base_spacing, parse_one, Message};
use super::record::{state_text, MatchRecord};
use super::{KifGame, KifVisitor};

/// How long past its clock a remote reply is still accepted (ggp-base's managers allow a second).
pub const GRACE: Duration = Duration::from_secs(1);

/// A match ends by itself long before this in every game we know; rules might loop.
pub const MAX_STEPS: usize = 10_000;

/// The longest reply read from a player: a move is a few dozen bytes.
const MAX_REPLY_BYTES: u64 = 64 * 1024;

/// Who plays a role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seat {
    /// A player of this kind (with its scores file for `learned:FILE`), in the referee's own process.
    Local(PlayerSpec),
    /// A player server at this URL (`http://host:port`).
    Remote(String),
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Seat::Local(spec) => write!(f, "{spec}"),
            Seat::Remote(url) => f.write_str(url),
        }
    }
}

impl std::str::FromStr for Seat {
    type Err = crate::players::UnknownPlayer;

    /// `http://...` (or `https://...`) or `host:port` is a remote player, anything else a player kind.
    fn from_str(s: &str) -> Result<Seat, Self::Err> {
        let t = s.trim();
        // `learned:FILE` names a local player even when FILE looks like a port.
        if t.to_ascii_lowercase().starts_with("learned:") {
            return t.parse().map(Seat::Local);
        }
        let host_port = t
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if t.starts_with("http://") || t.starts_with("https://") {
            Ok(Seat::Remote(t.to_string()))
        } else if host_port {
            Ok(Seat::Remote(format!("http://{t}")))
        } else {
            t.parse().map(Seat::Local)
        }
    }
}

/// A match's settings.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// The match id sent to the players.
    pub match_id: String,
    /// Seconds to prepare.
    pub start_clock: Duration,
    /// Seconds per move.
    pub play_clock: Duration,
    /// Settings of the local players, and the seed of substituted moves.
    pub player_config: PlayerConfig,
}

/// One role's part in a step.
#[derive(Clone, Debug)]
pub struct MoveReport {
    /// The move played, as KIF (the substitute when there was an error).
    pub mv: String,
    /// How long the player took.
    pub took: Duration,
    /// Search effort (local players), empty otherwise.
    pub effort: String,
    /// `TO`, `CE` or `IL <reply>` when the move was substituted.
    pub error: Option<String>,
    /// What went wrong, in words, when the move was substituted.
    pub detail: Option<String>,
}

/// What happens in a match, as it happens: the command line prints it.
#[derive(Debug)]
pub enum RefereeEvent<'a> {
    /// A player was asked to start: its name and, if it failed, why (it is then replaced throughout).
    Started {
        /// The role.
        role: &'a str,
        /// The player's name.
        name: &'a str,
        /// Why it missed the start.
        problem: Option<&'a str>,
    },
    /// A state, drawn by the game, before step `step` (or the final state).
    Board {
        /// The number of joint moves played so far.
        step: usize,
        /// The drawing.
        board: &'a str,
    },
    /// One joint move: per role (in role order) its name and report.
    Step {
        /// The step, counting from 1.
        step: usize,
        /// The role in control, in a turn-taking state.
        mover: Option<usize>,
        /// Per role: name and report.
        moves: &'a [(String, MoveReport)],
    },
}

/// Why a match could not be run.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    /// The seats do not fit the game.
    #[error("{0}")]
    Seats(String),
    /// A local player cannot play the game.
    #[error(transparent)]
    Game(#[from] GameError),
}

/// The way a seat answered one request.
enum Answer<M> {
    /// A local player's move.
    Move { mv: M, effort: String },
    /// A remote player's reply text.
    Reply(String),
    /// Nothing usable: the error code and why.
    Failed { code: String, detail: String },
}

/// A remote player's connection.
struct Remote {
    agent: ureq::Agent,
    url: String,
    receiver: String,
}

impl Remote {
    fn new(url: &str) -> Remote {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A player server may keep a connection between messages or not; fresh ones are safer
            // with servers that close after each reply (ggp-base's players do).
            .max_idle_connections(0)
            .build()
            .into();
        let receiver = url
            .split("://")
            .nth(1)
            .unwrap_or(url)
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        Remote {
            agent,
            url: url.to_string(),
            receiver,
        }
    }

    /// Sends `message` and waits at most `timeout` for the reply.
    fn send(&self, message: &Message, timeout: Duration) -> Result<String, (String, String)> {
        let response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "text/acl")
            .header("Sender", "GAMESERVER")
            .header("Receiver", &self.receiver)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .send(message.to_string());
        let classify = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => ("TO".to_string(), format!("no reply within {timeout:.1?}")),
            other => ("CE".to_string(), other.to_string()),
        };
        let mut response = response.map_err(classify)?;
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(classify)?;
        if !status.is_success() {
            return Err((
                "CE".to_string(),
                format!(
                    "HTTP {status}: {}",
                    body.chars().take(200).collect::<String>()
                ),
            ));
        }
        Ok(body)
    }

    /// The player's name from `(info)`, if it says one.
    fn name(&self) -> Option<String> {
        let reply = self.send(&Message::Info, Duration::from_secs(2)).ok()?;
        let sexp = parse_one(&reply).ok()?;
        let super::messages::Sexp::List(items, _) = sexp else {
            return None;
        };
        items.iter().find_map(|item| match item {
            super::messages::Sexp::List(pair, _) if pair.len() == 2 && pair[0].is_word("name") => {
                Some(pair[1].to_string())
            }
            _ => None,
        })
    }
}

/// A seat with what it needs to play.
enum SeatPlayer<G: Game> {
    Local(Box<dyn Player<G>>),
    Remote(Remote),
}

fn epoch_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Runs a match of `game` (whose rules, as KIF sentences, are `rules`) between `seats` (one per role, in
/// role order), telling `observe` what happens; returns the record.
pub fn run_match<G: KifGame>(
    game: &G,
    rules: &str,
    seats: &[Seat],
    settings: &MatchSettings,
    observe: &mut dyn FnMut(RefereeEvent<'_>),
) -> Result<MatchRecord, RefereeError> {
    let info = game.info();
    check_seats(info, seats)?;
    let clock = Clock::new(settings.start_clock, settings.play_clock);
    let mut players = seat_players(seats, settings);
    let mut rng = SmallRng::seed_from_u64(settings.player_config.seed ^ 0x5eed);
    let start_time = epoch_millis();
    let random_token = format!("{:016x}", rng.gen::<u64>());
    let started = start_all(game, rules, &mut players, settings, clock);
    for (role, (name, problem)) in started.iter().enumerate() {
        observe(RefereeEvent::Started {
            role: &info.roles[role],
            name,
            problem: problem.as_ref().map(|(_, why)| why.as_str()),
        });
    }
    let (names, missed) = started.into_iter().unzip();
    let mut record = new_record(info, settings, random_token, start_time, names);
    let mut referee = Referee {
        game,
        settings,
        clock,
        players,
        missed,
        rng,
        legal: Vec::new(),
    };
    let last = referee.play(&mut record, observe)?;
    referee.say_goodbye(record.is_completed, last);
    Ok(record)
}

/// Refuses seats that do not fit the game before any player is contacted, so that no player is told
/// of a match that cannot be played: one seat per role, and local players that can play the game.
fn check_seats(info: &GameInfo, seats: &[Seat]) -> Result<(), RefereeError> {
    let roles = &info.roles;
    if seats.len() != roles.len() {
        return Err(RefereeError::Seats(format!(
            "the game has {} ({}) but {} {} given",
            crate::diagnostics::count(roles.len(), "role"),
            roles.join(", "),
            crate::diagnostics::count(seats.len(), "player"),
            if seats.len() == 1 { "was" } else { "were" }
        )));
    }
    for seat in seats {
        if let Seat::Local(spec) = seat {
            spec.kind.supports(info)?;
        }
    }
    Ok(())
}

/// Each seat's player: a local player is made with its own configuration, a remote one gets its
/// connection, so that the rest of the match treats both through [`SeatPlayer`].
fn seat_players<G: KifGame>(seats: &[Seat], settings: &MatchSettings) -> Vec<SeatPlayer<G>> {
    seats
        .iter()
        .enumerate()
        .map(|(role, seat)| match seat {
            Seat::Local(spec) => {
                let config = spec.config(&settings.player_config);
                SeatPlayer::Local(make_player::<G>(spec.kind, role, &config))
            }
            Seat::Remote(url) => SeatPlayer::Remote(Remote::new(url)),
        })
        .collect()
}

/// Starts every player at once, so that the start clock runs once for all of them; per role, the
/// player's name and, when it missed the start (it is then replaced throughout), the error code and
/// why.
fn start_all<G: KifGame>(
    game: &G,
    rules: &str,
    players: &mut [SeatPlayer<G>],
    settings: &MatchSettings,
    clock: Clock,
) -> Vec<(String, Option<(String, String)>)> {
    let roles = &game.info().roles;
    std::thread::scope(|scope| {
        let handles: Vec<_> = players
            .iter_mut()
            .enumerate()
            .map(|(role, seat)| {
                let message = Message::Start {
                    match_id: settings.match_id.clone(),
                    role: roles[role].to_string(),
                    rules: rules.to_string(),
                    start_clock: settings.start_clock.as_secs_f64(),
                    play_clock: settings.play_clock.as_secs_f64(),
                };
                scope.spawn(move || start_one(game, role, seat, &message, settings, clock))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| ("?".into(), Some(("CE".into(), "it panicked".into()))))
            })
            .collect()
    })
}

/// Starts one seat, as [`start_all`] reports it: a local player prepares (an error or a panic is a
/// missed start, so that one bad player cannot end the match); a remote one is asked its name and sent
/// `start`.
fn start_one<G: KifGame>(
    game: &G,
    role: usize,
    seat: &mut SeatPlayer<G>,
    message: &Message,
    settings: &MatchSettings,
    clock: Clock,
) -> (String, Option<(String, String)>) {
    match seat {
        SeatPlayer::Local(player) => {
            let deadline = clock.start_deadline(Instant::now());
            let name = player.name();
            match catch_unwind(AssertUnwindSafe(|| player.prepare(game, role, deadline))) {
                Ok(Ok(())) => (name, None),
                Ok(Err(e)) => (name, Some(("CE".to_string(), e.to_string()))),
                Err(_) => (name, Some(("CE".to_string(), "it panicked".to_string()))),
            }
        }
        SeatPlayer::Remote(remote) => {
            let name = remote.name().unwrap_or_else(|| remote.receiver.clone());
            match remote.send(message, settings.start_clock + GRACE) {
                // A player in another match says so, and will not play this one.
                Ok(reply) if reply.trim().eq_ignore_ascii_case("busy") => (
                    name,
                    Some(("CE".to_string(), "it replied `busy`".to_string())),
                ),
                Ok(_) => (name, None),
                Err(problem) => (name, Some(problem)),
            }
        }
    }
}

/// The record as the start leaves it (ggp-base's fields, no state or move yet), for the play to fill
/// in.
fn new_record(
    info: &GameInfo,
    settings: &MatchSettings,
    random_token: String,
    start_time: i64,
    player_names: Vec<String>,
) -> MatchRecord {
    MatchRecord {
        match_id: settings.match_id.clone(),
        random_token,
        start_time,
        game_meta_url: String::new(),
        start_clock: settings.start_clock.as_secs_f64(),
        play_clock: settings.play_clock.as_secs_f64(),
        preview_clock: -1.0,
        is_completed: false,
        is_aborted: false,
        scrambled: false,
        states: Vec::new(),
        moves: Vec::new(),
        state_times: Vec::new(),
        errors: Vec::new(),
        goal_values: Vec::new(),
        player_names_from_host: player_names,
        game_name: Some(info.name.clone()),
        game_role_names: Some(info.roles.clone()),
    }
}

/// Per role, in role order, its name and its part in one step (what [`RefereeEvent::Step`] shows).
type StepReports = Vec<(String, MoveReport)>;

/// A started match: what every step needs, kept together so that the steps are methods rather than
/// functions of a dozen arguments.
struct Referee<'a, G: KifGame> {
    game: &'a G,
    settings: &'a MatchSettings,
    clock: Clock,
    players: Vec<SeatPlayer<G>>,
    /// Per role, the error code and why when its player missed the start.
    missed: Vec<Option<(String, String)>>,
    /// Picks the substitute moves, seeded from the match's seed so that a match can be replayed.
    rng: SmallRng,
    /// A role's legal moves when it needs a substitute, kept so that substitutes do not allocate.
    legal: Vec<G::Move>,
}

impl<G: KifGame> Referee<'_, G> {
    /// Plays from the initial state until the game ends (or, after [`MAX_STEPS`], aborts it), filling
    /// in the record as it goes; returns the last joint move, which `stop` tells the players.
    fn play(
        &mut self,
        record: &mut MatchRecord,
        observe: &mut dyn FnMut(RefereeEvent<'_>),
    ) -> Result<Option<Vec<String>>, RefereeError> {
        let game = self.game;
        let mut state = game.initial_state();
        let mut last: Option<Vec<String>> = None;
        loop {
            record.states.push(state_text(&game.state_kif(&state)));
            record.state_times.push(epoch_millis());
            let step = record.moves.len();
            observe(RefereeEvent::Board {
                step,
                board: &game.show_state(&state),
            });
            if game.is_terminal(&state) {
                break;
            }
            if step == MAX_STEPS {
                record.is_aborted = true;
                break;
            }
            let (joint, reports) = self.collect_moves(&state, &last)?;
            observe(RefereeEvent::Step {
                step: step + 1,
                mover: game.mover(&state),
                moves: &reports,
            });
            record.moves.push(
                reports
                    .iter()
                    .map(|(_, r)| ggp_base_spacing(&r.mv))
                    .collect(),
            );
            record.errors.push(
                reports
                    .iter()
                    .map(|(_, r)| r.error.clone().unwrap_or_default())
                    .collect(),
            );
            state = game.next_state(&state, &joint);
            last = Some(reports.iter().map(|(_, r)| r.mv.clone()).collect());
        }
        if game.is_terminal(&state) {
            record.is_completed = true;
            record.goal_values = (0..game.info().roles.len())
                .map(|r| game.goal(&state, r))
                .collect();
        }
        Ok(last)
    }

    /// One step's joint move in `state`: every seat is asked at once, and a move that is late, failed
    /// or illegal is replaced so that the match goes on. Returns the joint move and, per role, its name
    /// and report.
    fn collect_moves(
        &mut self,
        state: &G::State,
        last: &Option<Vec<String>>,
    ) -> Result<(Vec<G::Move>, StepReports), RefereeError> {
        let game = self.game;
        let roles = &game.info().roles;
        let answers = ask_all(
            game,
            state,
            &mut self.players,
            &self.missed,
            self.settings,
            self.clock,
            last,
        );
        let mut joint = Vec::with_capacity(roles.len());
        let mut reports = Vec::with_capacity(roles.len());
        for (role, (answer, took)) in answers.into_iter().enumerate() {
            let (mv, report) = match self.accept(state, role, answer, took) {
                Ok((mv, effort)) => {
                    let report = MoveReport {
                        mv: game.move_kif(&mv),
                        took,
                        effort,
                        error: None,
                        detail: None,
                    };
                    (mv, report)
                }
                Err(problem) => self.substitute(state, role, took, problem)?,
            };
            joint.push(mv);
            reports.push((roles[role].clone(), report));
        }
        Ok((joint, reports))
    }

    /// The move `role` answered, with its search effort, or the error code and why it cannot be
    /// played: an answer past the clock and its grace is a timeout even when it is legal, so that a
    /// slow player gains nothing by being slow.
    fn accept(
        &self,
        state: &G::State,
        role: usize,
        answer: Answer<G::Move>,
        took: Duration,
    ) -> Result<(G::Move, String), (String, String)> {
        let late = took > self.settings.play_clock + GRACE;
        match answer {
            _ if late => Err(("TO".to_string(), format!("replied after {took:.2?}"))),
            Answer::Move { mv, effort } => Ok((mv, effort)),
            Answer::Reply(text) => {
                read_move(self.game, state, role, &text).map(|mv| (mv, String::new()))
            }
            Answer::Failed { code, detail } => Err((code, detail)),
        }
    }

    /// A random legal move in place of one that cannot be played, reported with the error code and
    /// why, so that the match always finishes. A role without a legal move is an error of the rules.
    fn substitute(
        &mut self,
        state: &G::State,
        role: usize,
        took: Duration,
        (code, detail): (String, String),
    ) -> Result<(G::Move, MoveReport), RefereeError> {
        let game = self.game;
        game.legal_moves(state, role, &mut self.legal);
        if self.legal.is_empty() {
            return Err(GameError::Rules(format!(
                "{} has no legal move in a non-terminal state",
                game.info().roles[role]
            ))
            .into());
        }
        let mv = self.legal[self.rng.gen_range(0..self.legal.len())].clone();
        let report = MoveReport {
            mv: game.move_kif(&mv),
            took,
            effort: String::new(),
            error: Some(code),
            detail: Some(detail),
        };
        Ok((mv, report))
    }

    /// Tells the remote players that started how the match ended, all at once: `stop` with the last
    /// joint move when it finished, `abort` otherwise. Their answers do not matter.
    fn say_goodbye(&self, completed: bool, last: Option<Vec<String>>) {
        let match_id = self.settings.match_id.clone();
        let goodbye = if completed {
            Message::Stop {
                match_id,
                moves: last,
            }
        } else {
            Message::Abort { match_id }
        };
        let goodbye = &goodbye;
        let timeout = self.settings.play_clock + GRACE;
        std::thread::scope(|scope| {
            for (seat, missed) in self.players.iter().zip(&self.missed) {
                if let (SeatPlayer::Remote(remote), None) = (seat, missed) {
                    scope.spawn(move || {
                        let _ = remote.send(goodbye, timeout);
                    });
                }
            }
        });
    }
}

/// Reads a remote player's reply as a legal move of `role`.
fn read_move<G: Game>(
    game: &G,
    state: &G::State,
    role: usize,
    reply: &str,
) -> Result<G::Move, (String, String)> {
    let shown: String = reply.trim().chars().take(100).collect();
    let il = |why: String| (format!("IL {shown}"), why);
    let sexp = parse_one(reply).map_err(|e| il(format!("unreadable reply `{shown}`: {e}")))?;
    game.parse_move(state, role, &sexp.to_string())
        .map_err(|e| il(e.to_string()))
}

/// Asks every seat for its move in `state` at once; returns each answer with the time it took.
fn ask_all<G: KifGame>(
    game: &G,
    state: &G::State,
    seats: &mut [SeatPlayer<G>],
    missed: &[Option<(String, String)>],
    settings: &MatchSettings,
    clock: Clock,
    last: &Option<Vec<String>>,
) -> Vec<(Answer<G::Move>, Duration)> {
    let message = Message::Play {
        match_id: settings.match_id.clone(),
        moves: last.clone(),
    };
    let message = &message;
    std::thread::scope(|scope| {
        let handles: Vec<_> = seats
            .iter_mut()
            .zip(missed)
            .enumerate()
            .map(|(role, (seat, missed))| {
                scope.spawn(move || {
                    let asked = Instant::now();
                    let answer = match (seat, missed) {
                        (_, Some((code, why))) => Answer::Failed {
                            code: code.clone(),
                            detail: format!("missed the start ({why})"),
                        },
                        (SeatPlayer::Local(player), None) => {
                            let deadline = clock.move_deadline(asked);
                            match catch_unwind(AssertUnwindSafe(|| {
                                player.choose(game, state, role, deadline)
                            })) {
                                Ok(Ok(c)) => Answer::Move {
                                    mv: c.mv,
                                    effort: c.stats.effort(),
                                },
                                Ok(Err(e)) => Answer::Failed {
                                    code: "IL".into(),
                                    detail: format!("the local player failed: {e}"),
                                },
                                Err(_) => Answer::Failed {
                                    code: "IL".into(),
                                    detail: "the local player panicked".into(),
                                },
                            }
                        }
                        (SeatPlayer::Remote(remote), None) => {
                            match remote.send(message, settings.play_clock + GRACE) {
                                Ok(text) => Answer::Reply(text),
                                Err((code, detail)) => Answer::Failed { code, detail },
                            }
                        }
                    };
                    (answer, asked.elapsed())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (
                        Answer::Failed {
                            code: "CE".into(),
                            detail: "the request thread panicked".into(),
                        },
                        Duration::ZERO,
                    )
                })
            })
            .collect()
    })
}

/// Runs [`run_match`] on whichever engine the game was loaded.
pub struct RunMatch<'a> {
    /// The rules sent to remote players (KIF sentences).
    pub rules: &'a str,
    /// One seat per role.
    pub seats: &'a [Seat],
    /// The match's settings.
    pub settings: &'a MatchSettings,
    /// Told what happens.
    pub observe: &'a mut dyn FnMut(RefereeEvent<'_>),
}

impl KifVisitor for RunMatch<'_> {
    type Output = Result<MatchRecord, RefereeError>;

    fn visit<G: KifGame>(self, game: Box<G>) -> Self::Output {
        // Rules bring no heuristic: depth-limited local players judge their horizon by playouts.
        let game = Estimated::new(game, ESTIMATE_PLAYOUTS);
        run_match(&game, self.rules, self.seats, self.settings, self.observe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_kinds_urls_or_host_and_port() {
        assert_eq!(
            "mcts".parse::<Seat>().unwrap(),
            Seat::Local(crate::players::PlayerKind::Mcts.into())
        );
        assert_eq!(
            "http://10.0.0.1:9147".parse::<Seat>().unwrap(),
            Seat::Remote("http://10.0.0.1:9147".into())
        );
        assert_eq!(
            "localhost:9147".parse::<Seat>().unwrap(),
            Seat::Remote("http://localhost:9147".into())
        );
        assert!("nobody".parse::<Seat>().is_err());
    }
}
