//! The player server: answers a game manager's messages over HTTP (axum on tokio), any number of
//! matches at once up to a capacity, each with its own game and player.
//!
//! Leniency (PROTOCOL.md): any path, `OPTIONS` answered empty, a `GET` whose URL-encoded query is the
//! message, keywords in any case; every reply carries CORS headers. Searches run on tokio's blocking
//! pool, never on the threads that serve HTTP, and stop at a deadline that keeps a margin of the play
//! clock for the reply's way back. Bodies are bounded in size and in the time they take to arrive, so a
//! slow or huge request costs one connection, never the server.
//!
//! One leniency of hand-written GGP servers is out of reach of a real HTTP stack: a request with neither
//! `Content-Length` nor chunked encoding has an empty body (RFC 9112), so its message is taken from the
//! URL's query when there is one, and is otherwise answered with a clear error.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;

mod http;
pub mod session;
mod stall;

pub(crate) use http::read_body;
pub use http::{run_router, serve_router, MAX_CONNECTIONS};

use crate::load::{load, GameSource, LoadOptions};
use crate::players::{Deadline, PlayerConfig, PlayerKind, PlayerSpec, StopSwitch};
use crate::protocol::messages::Message;
use crate::protocol::secs;
use crate::syntax::ast::Syntax;
use session::{NewSession, Session, Tracker};

/// Where the server writes its log, one line per message.
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// How a player server plays and what it accepts.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The name `info` reports.
    pub name: String,
    /// The player every match gets.
    pub player: PlayerSpec,
    /// Its settings.
    pub player_config: PlayerConfig,
    /// How the games sent are loaded (engine, grounding time, playouts behind each judgement); the
    /// network also gets at most half of what is left of the start clock.
    pub load: LoadOptions,
    /// Time kept out of each clock for the reply to travel (at least what replies are seen to need).
    pub margin: Duration,
    /// Matches played at once; `info` says `busy` when they are all taken.
    pub capacity: usize,
    /// The largest message accepted (a game description is rarely above 100 kB).
    pub max_message_bytes: usize,
    /// How long a request's body may take to arrive.
    pub read_timeout: Duration,
    /// Whether a match's player goes on thinking after its answer until the next request comes
    /// (see [`Player::ponder`](crate::players::Player::ponder)), while it is the server's only match.
    pub ponder: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            name: "ggp-rust".into(),
            player: PlayerKind::Mcts.into(),
            player_config: PlayerConfig::default(),
            load: LoadOptions::default(),
            margin: Duration::from_secs(1),
            capacity: 4,
            max_message_bytes: 2 << 20,
            read_timeout: Duration::from_secs(10),
            ponder: true,
        }
    }
}

/// A match the server plays.
struct MatchEntry {
    /// `None` while the game is being built.
    session: Option<Playing>,
    /// The match's steps: the joint move of every play and stop, in the order they came, answered
    /// or not (a play answered while the game is built, or by the fallback, is a step all the
    /// same). Whoever holds the session or the tracker applies those it has not applied yet, so
    /// that each sees every step once and in order, whichever task runs first.
    steps: Steps,
    /// Why a game built after the start's answer cannot be played: the first play is told so.
    failed: Option<String>,
    play_clock: Duration,
    last_seen: Instant,
    /// A match not heard from for this long is taken to be abandoned by its manager.
    idle_limit: Duration,
    /// What the player's thinking after its last answer watches: the next request, or the match's
    /// end, stops it.
    wanted: Wanted,
    /// Held by every task working for the match (its build, its searches): see
    /// [`PlayerServer::let_go`].
    work: Arc<()>,
    /// Set when the match is let go (an abort, an eviction): its preparation and searches end then,
    /// instead of running out their clocks for nobody.
    stop: Arc<StopSwitch>,
}

/// A match's steps (see [`MatchEntry::steps`]).
type Steps = Arc<Mutex<Vec<Vec<String>>>>;

/// A built match: its session, and its state followed apart from it, for a random legal move when the
/// player cannot answer in time (the session may be held by its player); each with the number of
/// the match's steps it has applied.
struct Playing {
    session: Arc<Mutex<(Box<dyn Session>, usize)>>,
    track: Arc<Mutex<(Box<dyn Tracker>, usize)>>,
}

impl Playing {
    fn new(mut session: Box<dyn Session>) -> Playing {
        Playing {
            track: Arc::new(Mutex::new((session.tracker(), 0))),
            session: Arc::new(Mutex::new((session, 0))),
        }
    }
}

/// Applies the steps of `steps` past the first `applied` with `advance`, counting each applied even
/// when it fails (a step that does not fit is reported once, not again at every request).
fn catch_up(
    steps: &Steps,
    applied: &mut usize,
    mut advance: impl FnMut(&[String]) -> Result<(), session::SessionError>,
) -> Result<(), session::SessionError> {
    let new: Vec<Vec<String>> = {
        let steps = steps.lock().unwrap_or_else(PoisonError::into_inner);
        steps.get(*applied..).unwrap_or_default().to_vec()
    };
    for moves in &new {
        *applied += 1;
        advance(moves)?;
    }
    Ok(())
}

/// The count a pondering player watches (see [`Player::ponder`](crate::players::Player::ponder)): 2
/// while nobody needs the session, 0 once a request does or the match is gone (on drop), so that
/// the session's lock is free at once.
struct Wanted(Arc<AtomicUsize>);

impl Wanted {
    fn new() -> Wanted {
        Wanted(Arc::new(AtomicUsize::new(2)))
    }

    fn stop(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

impl Drop for Wanted {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server's shared state.
pub struct PlayerServer {
    config: ServerConfig,
    log: Log,
    matches: Mutex<HashMap<String, MatchEntry>>,
    /// The work still running for matches the server has let go (aborted, stopped, evicted): a
    /// build or a search runs to its deadline, which a start clock of days puts far off, so it
    /// counts against capacity until it ends, and a manager that starts and aborts matches cannot
    /// pile them up.
    orphans: Mutex<Vec<std::sync::Weak<()>>>,
    /// The longest recent time, in microseconds, between a search's return and its reply being ready
    /// plus the time before the search started: what the margin must cover on this machine.
    overhead_micros: AtomicU64,
    /// Long messages parsed at once: a message's parse tree takes tens of times its text, so
    /// hundreds of 2 MB messages parsed side by side would take gigabytes.
    long_parses: Arc<tokio::sync::Semaphore>,
}

/// Long messages (see [`PlayerServer::long_parses`]) parsed at once.
const LONG_PARSES: usize = 2;

/// When a request came: when its headers had been read (the manager's clock started earlier still, so
/// deadlines count from here) and when its whole message had (the player's own overhead counts from
/// there).
#[derive(Clone, Copy, Debug)]
struct Arrival {
    headers: Instant,
    read: Instant,
}

impl Arrival {
    #[cfg(test)]
    fn now() -> Arrival {
        let now = Instant::now();
        Arrival {
            headers: now,
            read: now,
        }
    }
}

/// A reply: status and body.
struct Reply {
    status: StatusCode,
    body: String,
    /// What the log line adds: the engine chosen, the search's effort, why a fallback move was sent.
    note: Option<String>,
}

impl Reply {
    fn ok(body: impl Into<String>) -> Reply {
        Reply {
            status: StatusCode::OK,
            body: body.into(),
            note: None,
        }
    }

    fn noted(mut self, note: impl Into<String>) -> Reply {
        let note = note.into();
        if !note.is_empty() {
            self.note = Some(note);
        }
        self
    }

    fn error(status: StatusCode, why: impl std::fmt::Display) -> Reply {
        Reply {
            status,
            body: format!("error: {why}"),
            note: None,
        }
    }
}

impl PlayerServer {
    /// A server with `config`, logging through `log`.
    pub fn new(config: ServerConfig, log: Log) -> Arc<PlayerServer> {
        Arc::new(PlayerServer {
            config,
            log,
            matches: Mutex::new(HashMap::new()),
            orphans: Mutex::new(Vec::new()),
            overhead_micros: AtomicU64::new(0),
            long_parses: Arc::new(tokio::sync::Semaphore::new(LONG_PARSES)),
        })
    }

    fn matches(&self) -> std::sync::MutexGuard<'_, HashMap<String, MatchEntry>> {
        // A panic never happens while this lock is held, but a poisoned map is still a valid map.
        self.matches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets matches whose manager has gone quiet, so that they do not hold capacity for ever.
    fn evict_abandoned(&self) {
        let mut matches = self.matches();
        let quiet: Vec<String> = matches
            .iter()
            .filter(|(_, m)| {
                (m.session.is_some() || m.failed.is_some()) && m.last_seen.elapsed() >= m.idle_limit
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &quiet {
            if let Some(entry) = matches.remove(id) {
                self.let_go(&entry);
            }
        }
        if !quiet.is_empty() {
            (self.log)(&format!(
                "{} - evicted {}",
                time_of_day(),
                crate::diagnostics::count_as(quiet.len(), "abandoned match", "abandoned matches")
            ));
        }
    }

    /// Notes the work still running for a match the server no longer holds (see `orphans`).
    fn let_go(&self, entry: &MatchEntry) {
        entry.stop.set();
        if Arc::strong_count(&entry.work) > 1 {
            let mut orphans = self.orphans.lock().unwrap_or_else(PoisonError::into_inner);
            orphans.push(Arc::downgrade(&entry.work));
        }
    }

    /// The places taken: the matches held, and those let go whose work still runs.
    fn occupied(&self, matches: &HashMap<String, MatchEntry>) -> usize {
        let mut orphans = self.orphans.lock().unwrap_or_else(PoisonError::into_inner);
        orphans.retain(|w| w.strong_count() > 0);
        matches.len() + orphans.len()
    }

    fn busy(&self) -> bool {
        let matches = self.matches();
        self.occupied(&matches) >= self.config.capacity
    }

    /// The margin kept out of a play clock: the configured one, or twice the overhead replies have been
    /// seen to need if that is more, but never more than three quarters of the clock.
    fn margin(&self, clock: Duration) -> Duration {
        let seen = Duration::from_micros(self.overhead_micros.load(Ordering::Relaxed));
        self.config.margin.max(seen * 2).min(clock * 3 / 4)
    }

    fn note_overhead(&self, overhead: Duration) {
        let new = overhead.as_micros().min(u128::from(u64::MAX)) as u64;
        let old = self.overhead_micros.load(Ordering::Relaxed);
        // Decays slowly, so one slow reply raises the margin for a while and not for ever.
        let decayed = old - old / 16;
        self.overhead_micros
            .store(decayed.max(new), Ordering::Relaxed);
    }

    async fn answer(self: &Arc<Self>, message: Message, arrival: Arrival) -> Reply {
        let arrived = arrival.headers;
        match message {
            Message::Info => {
                self.evict_abandoned();
                let status = if self.busy() { "busy" } else { "available" };
                Reply::ok(format!("((name {}) (status {status}))", self.config.name))
            }
            Message::Preview { .. } => Reply::ok("ready"),
            Message::Start {
                match_id,
                role,
                rules,
                start_clock,
                play_clock,
            } => {
                self.start(
                    match_id,
                    role,
                    rules,
                    secs(start_clock),
                    secs(play_clock),
                    arrived,
                )
                .await
            }
            Message::Play { match_id, moves } => self.play(&match_id, moves, arrival).await,
            Message::Stop { match_id, moves } => {
                let entry = {
                    let mut matches = self.matches();
                    let Some(entry) = matches.remove(&match_id) else {
                        return Reply::ok("busy");
                    };
                    // Under the lock, so that no start sees the place free meanwhile.
                    self.let_go(&entry);
                    entry
                };
                entry.wanted.stop();
                let Some(Playing { session, .. }) = entry.session else {
                    return Reply::ok("done");
                };
                let steps = entry.steps;
                let outcome = tokio::task::spawn_blocking(move || {
                    let mut guard = session.lock().unwrap_or_else(PoisonError::into_inner);
                    let (s, applied) = &mut *guard;
                    catch_up(&steps, applied, |m| s.advance(m))?;
                    s.stop(moves.as_deref())
                })
                .await;
                let note = match outcome {
                    Ok(Ok(Some(goal))) => format!("goal {goal}"),
                    Ok(Ok(None)) => "the game is not over".to_string(),
                    Ok(Err(e)) => format!("the last moves do not apply: {e}"),
                    Err(e) => format!("stopping failed: {e}"),
                };
                Reply::ok("done").noted(note)
            }
            Message::Abort { match_id } => match self.matches().remove(&match_id) {
                Some(entry) => {
                    self.let_go(&entry);
                    Reply::ok("aborted")
                }
                None => Reply::ok("busy"),
            },
        }
    }

    async fn start(
        self: &Arc<Self>,
        match_id: String,
        role: String,
        rules: String,
        start_clock: Duration,
        play_clock: Duration,
        arrived: Instant,
    ) -> Reply {
        self.evict_abandoned();
        let work = Arc::new(());
        let stop = Arc::new(StopSwitch::new());
        {
            let mut matches = self.matches();
            if matches.contains_key(&match_id) || self.occupied(&matches) >= self.config.capacity {
                return Reply::ok("busy");
            }
            // Holds the slot while the game is built, so that capacity counts it.
            matches.insert(
                match_id.clone(),
                MatchEntry {
                    session: None,
                    steps: Steps::default(),
                    failed: None,
                    play_clock,
                    last_seen: arrived,
                    idle_limit: (start_clock + play_clock) * 2 + Duration::from_secs(60),
                    wanted: Wanted::new(),
                    work: Arc::clone(&work),
                    stop: Arc::clone(&stop),
                },
            );
        }
        let margin = self.margin(start_clock);
        let deadline =
            Deadline::at(arrived + start_clock.saturating_sub(margin)).or_stop(Some(stop.token()));
        // At most half of what is left builds the network; the evaluator, built in milliseconds, and
        // the player's preparation get the rest.
        let options = LoadOptions {
            grounding: Some(
                self.config
                    .load
                    .grounding_time()
                    .min(deadline.remaining() / 2),
            ),
            ..self.config.load
        };
        let server = Arc::clone(self);
        let id = match_id.clone();
        // Which entry is this start's: an abort and a new start of the same id may replace it.
        let building = Building {
            server: self,
            match_id: &match_id,
            mine: Arc::downgrade(&work),
            armed: true,
        };
        let mut build = tokio::task::spawn_blocking(move || {
            let _working = work;
            // The switch lives as long as the preparation that reads it.
            let _stop = stop;
            let source = GameSource::RuleText {
                text: rules,
                name: id,
                syntax: Syntax::Kif,
            };
            let game = load(&source, &options).map_err(|e| load_problem(&e))?;
            let report = game.report().clone();
            let mut session = game
                .visit(NewSession {
                    role: &role,
                    spec: &server.config.player,
                    config: &server.config.player_config,
                })
                .map_err(|e| e.to_string())?;
            let prepared = session.prepare(deadline);
            Ok::<_, String>((session, report, prepared))
        });
        // The answer is due at the start clock, less half the margin for its way back, whether or
        // not the game is built by then (a big game on the Datalog evaluator, or sent with a
        // start clock too short for it): a late "ready" is no answer at all to the manager. The
        // build then goes on, and the first play waits for it.
        let answer_by = arrived + start_clock.saturating_sub(margin / 2);
        let joined =
            tokio::time::timeout_at(tokio::time::Instant::from_std(answer_by), &mut build).await;
        let mine = building.disarm();
        let Ok(joined) = joined else {
            let server = Arc::clone(self);
            tokio::spawn(async move {
                let built = build.await.unwrap_or_else(|e| Err(build_failed(&e)));
                let reply = server.install(&match_id, &mine, built, true);
                (server.log)(&format!(
                    "{} - {match_id} built after its start answer: {}{}",
                    time_of_day(),
                    reply.body,
                    reply.note.map(|n| format!(" ({n})")).unwrap_or_default()
                ));
            });
            return Reply::ok("ready").noted("the game is still being built: the first play waits");
        };
        self.install(
            &match_id,
            &mine,
            joined.unwrap_or_else(|e| Err(build_failed(&e))),
            false,
        )
    }

    /// Puts a built game in its match's place (unless the match was let go meanwhile), or says why
    /// it cannot be played and lets the place go; `late` (the start has answered "ready" already)
    /// keeps the place instead, for the first play to be told why.
    fn install(
        &self,
        match_id: &str,
        mine: &std::sync::Weak<()>,
        built: Built,
        late: bool,
    ) -> Reply {
        let mut matches = self.matches();
        if !is_mine(&matches, match_id, mine) {
            return Reply::ok("busy").noted("aborted while the game was built");
        }
        let refuse = |matches: &mut HashMap<String, MatchEntry>, why: String| {
            match matches.get_mut(match_id) {
                Some(entry) if late => entry.failed = Some(why.clone()),
                _ => {
                    matches.remove(match_id);
                }
            }
            Reply::error(StatusCode::BAD_REQUEST, why)
        };
        match built {
            Ok((session, report, prepared)) => {
                let mut note = format!(
                    "plays {} on the {} ({:.0} ms)",
                    session.role(),
                    report.engine,
                    report.took.as_secs_f64() * 1e3
                );
                if let Some(why) = &report.fallback {
                    note.push_str(&format!("; no network: {why}"));
                }
                // A player that cannot play this game says so now, not by playing at random later.
                if let Some(why) = prepared {
                    let why = format!("{} cannot play this game: {why}", self.config.player);
                    return refuse(&mut matches, why);
                }
                match matches.get_mut(match_id) {
                    Some(entry) => {
                        entry.session = Some(Playing::new(session));
                        entry.last_seen = Instant::now();
                        Reply::ok("ready").noted(note)
                    }
                    None => Reply::ok("busy").noted("aborted while the game was built"),
                }
            }
            Err(why) => refuse(&mut matches, why),
        }
    }

    async fn play(
        self: &Arc<Self>,
        match_id: &str,
        mut moves: Option<Vec<String>>,
        arrival: Arrival,
    ) -> Reply {
        let arrived = arrival.headers;
        // The entry this play found first (its work token): a build waited for must be that
        // match's, not a new start's of the same id after an abort.
        let mut first_seen: Option<std::sync::Weak<()>> = None;
        let mut waited = Duration::ZERO;
        let (session, track, steps, play_clock, wanted, ponder, work, stop) = loop {
            // In a block of its own, so that the lock is not held across the wait below.
            let found = {
                let mut matches = self.matches();
                let alone = matches.len() == 1;
                if let Some(entry) = matches.get(match_id) {
                    let mine = first_seen.get_or_insert_with(|| Arc::downgrade(&entry.work));
                    if !std::sync::Weak::ptr_eq(mine, &Arc::downgrade(&entry.work)) {
                        return Reply::ok("busy");
                    }
                    if let Some(why) = &entry.failed {
                        let reply = Reply::error(StatusCode::BAD_REQUEST, why);
                        matches.remove(match_id);
                        return reply;
                    }
                    // The step happened whether or not this play gets its answer in time.
                    if let Some(moves) = moves.take() {
                        entry
                            .steps
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(moves);
                    }
                }
                match matches.get_mut(match_id) {
                    Some(MatchEntry {
                        session: Some(Playing { session: s, track }),
                        steps,
                        play_clock,
                        last_seen,
                        wanted,
                        work,
                        stop,
                        ..
                    }) => {
                        *last_seen = arrived;
                        // The previous answer's thinking stops (its count drops to 0) and lets go of
                        // the session; this answer's starts with a count of its own.
                        *wanted = Wanted::new();
                        let ponder = self.config.ponder && alone;
                        Some((
                            Arc::clone(s),
                            Arc::clone(track),
                            Arc::clone(steps),
                            *play_clock,
                            Arc::clone(&wanted.0),
                            ponder,
                            Arc::clone(work),
                            Arc::clone(stop),
                        ))
                    }
                    // Its game is still being built (it outlasted the start clock): the play waits for
                    // it until its own answer is due.
                    Some(MatchEntry {
                        session: None,
                        play_clock,
                        ..
                    }) => {
                        let due = arrived + play_clock.saturating_sub(self.margin(*play_clock) / 2);
                        if Instant::now() >= due {
                            return Reply::error(
                                StatusCode::SERVICE_UNAVAILABLE,
                                "the game is still being built: no move is ready in time",
                            );
                        }
                        None
                    }
                    None => return Reply::ok("busy"),
                }
            };
            match found {
                Some(found) => break found,
                None => {
                    tokio::time::sleep(BUILD_POLL).await;
                    waited += BUILD_POLL;
                }
            }
        };
        let margin = self.margin(play_clock);
        let deadline =
            Deadline::at(arrived + play_clock.saturating_sub(margin)).or_stop(Some(stop.token()));
        // The last moment to answer with the fallback move if the search overruns its deadline: half
        // the margin is still kept for the reply's way back.
        let last_moment = arrived + play_clock.saturating_sub(margin / 2);
        let (fallback_tx, fallback_rx) = tokio::sync::oneshot::channel();
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        // The fallback comes from the tracker, not the session: the player's thinking after its
        // last answer may hold the session past this answer's moment.
        let tracked = Arc::clone(&steps);
        tokio::task::spawn_blocking(move || {
            let mut guard = track.lock().unwrap_or_else(PoisonError::into_inner);
            let (t, applied) = &mut *guard;
            let fallback =
                catch_up(&tracked, applied, |m| t.advance(m)).and_then(|()| t.fallback_move());
            let _ = fallback_tx.send(fallback);
        });
        // The search's task answers through `reply_tx`, then may go on thinking (holding the
        // session) until the next request or the match's end lowers `wanted`.
        tokio::task::spawn_blocking(move || {
            let _working = work;
            // The switch lives as long as the search that reads it.
            let _stop = stop;
            let mut guard = session.lock().unwrap_or_else(PoisonError::into_inner);
            let (s, applied) = &mut *guard;
            let searching = Instant::now();
            if let Err(e) = catch_up(&steps, applied, |m| s.advance(m)) {
                let _ = reply_tx.send((Err(e), searching.elapsed()));
                return;
            }
            // Answered already (by the fallback, the session held past this play's moment): a
            // later play's search chooses from the state it finds.
            if reply_tx.is_closed() {
                return;
            }
            let reply = s.choose(deadline);
            let answered = reply.is_ok();
            let _ = reply_tx.send((reply, searching.elapsed()));
            if ponder && answered {
                // At most one more play clock: a manager that never comes back does not keep a
                // core busy.
                s.ponder(Deadline::after(play_clock), &wanted);
            }
        });
        let outcome =
            match tokio::time::timeout_at(tokio::time::Instant::from_std(last_moment), reply_rx)
                .await
            {
                Ok(Ok(outcome)) => Ok(outcome),
                Ok(Err(_)) => Err("the search failed"),
                Err(_) => {
                    // The player did not obey its deadline (or the previous step's search still
                    // holds the match): a legal move now beats a good one too late.
                    let mut fallback_rx = fallback_rx;
                    return match fallback_rx.try_recv() {
                        Ok(Ok(mv)) => Reply::ok(mv)
                            .noted("the search overran its deadline: random legal move"),
                        // The manager's moves do not play on here (or the game is over): the same
                        // answer as the search would have given.
                        Ok(Err(e)) => Reply::error(StatusCode::BAD_REQUEST, e),
                        _ => Reply::error(
                            StatusCode::SERVICE_UNAVAILABLE,
                            format!(
                                "no move was ready in time: the previous step's search still holds \
                                 this match, or a play clock of {:.3} s is too short to start one",
                                play_clock.as_secs_f64()
                            ),
                        ),
                    };
                }
            };
        match outcome {
            Ok((Ok(reply), searched)) => {
                // From the message read, not its headers: a client that sends its body slowly
                // must not widen every match's margin.
                // Nor the time waited for a build: the overhead is the server's own.
                self.note_overhead(arrival.read.elapsed().saturating_sub(searched + waited));
                let note = match &reply.fallback {
                    Some(why) => format!("random legal move: {why}"),
                    None => reply.effort,
                };
                Reply::ok(reply.mv).noted(note)
            }
            Ok((Err(e), _)) => Reply::error(StatusCode::BAD_REQUEST, e),
            Err(e) => Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e),
        }
    }
}

/// A built game: the session, how it was loaded, and why the player cannot play it (if it cannot).
type Built = Result<(Box<dyn Session>, crate::load::LoadReport, Option<String>), String>;

/// How often a play for a match whose game is still being built looks whether it is.
const BUILD_POLL: Duration = Duration::from_millis(10);

/// A build's task that ended without a result (it panicked).
fn build_failed(e: &tokio::task::JoinError) -> String {
    format!("building the game failed: {e}")
}

/// Whether `matches` holds `match_id` as the entry whose work token `mine` is.
fn is_mine(
    matches: &HashMap<String, MatchEntry>,
    match_id: &str,
    mine: &std::sync::Weak<()>,
) -> bool {
    matches
        .get(match_id)
        .is_some_and(|e| std::sync::Weak::ptr_eq(mine, &Arc::downgrade(&e.work)))
}

/// A start's place until its answer is due: if the start's future is dropped before then (the
/// runtime shutting down; a connection reset would, but the server's half-closing connections do
/// not watch for one while a request is answered), the place is let go then, not
/// held until an abort names the match; the build still counts against capacity until it ends. A
/// start whose answer goes nowhere leaves a match that is evicted when idle like any other.
struct Building<'a> {
    server: &'a PlayerServer,
    match_id: &'a str,
    mine: std::sync::Weak<()>,
    armed: bool,
}

impl Building<'_> {
    /// The start's answer is due (its build ended, or goes on in a task that finishes the entry):
    /// the start goes on with its entry's token.
    fn disarm(mut self) -> std::sync::Weak<()> {
        self.armed = false;
        std::mem::take(&mut self.mine)
    }
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut matches = self.server.matches();
        if is_mine(&matches, self.match_id, &self.mine) {
            if let Some(entry) = matches.remove(self.match_id) {
                self.server.let_go(&entry);
            }
        }
    }
}

/// Why sent rules cannot be played, in one line: the first error with its place in the rules.
fn load_problem(e: &crate::load::LoadError) -> String {
    match e {
        crate::load::LoadError::Invalid { text, errors, .. } => {
            let first = errors
                .iter()
                .find(|d| d.is_error())
                .map(|d| {
                    crate::diagnostics::render(d, "rules", text)
                        .trim()
                        .to_string()
                })
                .unwrap_or_else(|| "the rules have errors".to_string());
            format!("invalid rules: {first}")
        }
        other => format!("the rules cannot be played: {other}"),
    }
}

/// The time of day (UTC) as `HH:MM:SS.mmm`, for log lines.
pub fn time_of_day() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let ms = now.as_millis() % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A reply on one line for the log: at most `limit` characters.
fn log_text(text: &str, limit: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::diagnostics::printable(&one_line, limit)
}

fn respond(reply: Reply) -> Response {
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/acl"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("POST, GET, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type"),
    );
    response
}

/// Reads the message of a request: the body of a `POST`, or the URL-encoded query of a `GET` (or of a
/// `POST` with an empty body).
async fn read_message(server: &PlayerServer, req: Request) -> Result<String, Reply> {
    let query = req.uri().query().map(|q| {
        // Browsers encode spaces in a query as `+`; ggp-base's reader decodes them so too.
        let q = q.replace('+', " ");
        percent_encoding::percent_decode_str(&q)
            .decode_utf8_lossy()
            .into_owned()
    });
    if req.method() == Method::GET {
        return query
            .ok_or_else(|| Reply::error(StatusCode::BAD_REQUEST, "no message in the query"));
    }
    let limit = server.config.max_message_bytes;
    let sized = req.headers().contains_key(header::CONTENT_LENGTH)
        || req.headers().contains_key(header::TRANSFER_ENCODING);
    let body = read_body(req.into_body(), limit, server.config.read_timeout)
        .await
        .map_err(|e| Reply::error(e.status(), e))?;
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| Reply::error(StatusCode::BAD_REQUEST, "the message is not UTF-8"))?;
    match query {
        Some(q) if text.trim().is_empty() => Ok(q),
        // Without a length or chunks, HTTP gives a request no body: the message sent was lost.
        None if text.is_empty() && !sized => Err(Reply::error(
            StatusCode::LENGTH_REQUIRED,
            "the request has no message: send it as the body of a POST with a Content-Length \
             header, or in the query of a GET (`GET /?(info)`)",
        )),
        _ => Ok(text),
    }
}

async fn handle(State(server): State<Arc<PlayerServer>>, req: Request) -> Response {
    let arrived = Instant::now();
    if req.method() == Method::OPTIONS {
        return respond(Reply::ok(""));
    }
    let message = read_message(&server, req).await;
    let read = Instant::now();
    let message = match message {
        // A long message (a start's rules) is parsed on the blocking pool, so that the runtime's
        // few threads go on answering the other matches meanwhile.
        Ok(text) if text.len() > 64 << 10 => {
            // The permit goes with the parse, which outlives this future if it is dropped; the
            // semaphore is never closed.
            let parsing = Arc::clone(&server.long_parses).acquire_owned().await;
            tokio::task::spawn_blocking(move || {
                let _parsing = parsing;
                Message::parse(&text)
            })
            .await
            .map_err(|e| Reply::error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
            .map(|parsed| parsed.map_err(|e| Reply::error(StatusCode::BAD_REQUEST, e)))
        }
        Ok(text) => Ok(Message::parse(&text).map_err(|e| Reply::error(StatusCode::BAD_REQUEST, e))),
        Err(reply) => Err(reply),
    };
    let (kind, id, reply) = match message {
        Err(reply) => ("-".to_string(), "-".to_string(), reply),
        Ok(parsed) => match parsed {
            Err(reply) => ("?".to_string(), "-".to_string(), reply),
            Ok(message) => {
                let kind = message.kind().to_string();
                // A quoted id may hold line breaks: it must not forge lines of the log.
                let id = crate::diagnostics::printable(message.match_id().unwrap_or("-"), 100);
                let arrival = Arrival {
                    headers: arrived,
                    read,
                };
                let reply = server.answer(message, arrival).await;
                (kind, id, reply)
            }
        },
    };
    (server.log)(&format!(
        "{} {id} {kind} -> {} {} ({:.1} ms){}",
        time_of_day(),
        reply.status.as_u16(),
        // An error says where the rules or the message went wrong: worth a longer line.
        log_text(
            &reply.body,
            if reply.status.is_success() { 80 } else { 400 }
        ),
        arrived.elapsed().as_secs_f64() * 1e3,
        reply
            .note
            .as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default()
    ));
    respond(reply)
}

/// The server's routes: every method and path goes to one handler.
pub fn router(server: Arc<PlayerServer>) -> Router {
    Router::new().fallback(handle).with_state(server)
}

/// Binds `addr` (port 0 picks a free port), calls `bound` with the address bound, and serves for ever
/// on a runtime of its own.
pub fn run(
    addr: SocketAddr,
    config: ServerConfig,
    log: Log,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let read_timeout = config.read_timeout;
    let server = PlayerServer::new(config, Arc::clone(&log));
    run_router(addr, router(server), read_timeout, log, bound)
}

#[cfg(test)]
mod tests;
