//! Matches on the page: the referee's match loop with the browser as one more seat
//! ([`BrowserSeat`], for each role a person plays) and one more observer (the room's [`Feed`], which
//! the page follows as server-sent events).
//!
//! Events, each a JSON object with a `type`: `starting` (seats), `ready` (a seat started, or why
//! not), `state` (the step, the drawing, the text drawing, whether it is over), `turn` (a person's
//! legal moves, each with the squares it changes, and the play clock), `thinking` (a search's line of
//! effort while it runs), `moves` (every role's move with its time, effort, candidates and
//! violation), `rejected` (a person's move that is not legal), `takenback`, `finished` (goals and the
//! verdict in words), `aborted`, `error`, and last `end`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

mod seat;

pub use seat::BrowserSeat;

use super::api::{load_error, syntax_named, unknown_game};
use super::shared::{body, ApiError, ApiResult, Place, Room, Rooms, Segment, Shared};
use crate::game::{Game, RoleIndex};
use crate::load::{load, GameSource, Loaded, Visitor};
use crate::players::{Candidate, Certainty, Clock, PlayerConfig, StopSwitch};
use crate::referee::record::Recorder;
use crate::referee::{
    make_seat, one_role_a_server, run_match, MatchEvent, MatchSettings, Observer, Seat, SeatSpec,
};

/// A sequence of JSON events that pages follow from any point; it ends with `end`.
pub struct Feed {
    events: Mutex<Vec<Arc<str>>>,
    /// The events' bytes, all together.
    bytes: AtomicUsize,
    /// The most bytes it keeps (see [`WebConfig::max_shown_bytes`](super::WebConfig)).
    limit: usize,
    done: AtomicBool,
    changed: tokio::sync::watch::Sender<usize>,
}

impl Feed {
    fn new(limit: usize) -> Feed {
        Feed {
            events: Mutex::new(Vec::new()),
            bytes: AtomicUsize::new(0),
            limit,
            done: AtomicBool::new(false),
            changed: tokio::sync::watch::channel(0).0,
        }
    }

    /// Adds an event.
    pub fn push(&self, event: Value) {
        // Past the bytes, what a page may send without end (moves it tries, a search's lines)
        // is dropped: the match stops at the referee's next event.
        if self.is_full() && matches!(event["type"].as_str(), Some("thinking" | "rejected")) {
            return;
        }
        let text: Arc<str> = event.to_string().into();
        self.bytes.fetch_add(text.len(), Ordering::SeqCst);
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        events.push(text);
        let n = events.len();
        drop(events);
        self.changed.send_replace(n);
    }

    /// Adds the last event.
    fn end(&self) {
        self.push(json!({ "type": "end" }));
        self.done.store(true, Ordering::SeqCst);
        let n = self.len();
        self.changed.send_replace(n);
    }

    fn len(&self) -> usize {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn get(&self, i: usize) -> Option<Arc<str>> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(i)
            .cloned()
    }

    /// Whether the events have passed the feed's limit.
    fn is_full(&self) -> bool {
        self.bytes.load(Ordering::SeqCst) > self.limit
    }

    /// Whether the last event is in.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// The events from `from` on as server-sent events (the event's id is its index, so that a
    /// reconnecting page resumes where it was), ending after `end`; `guard` lives as long as the
    /// stream.
    pub fn stream<G: Send + 'static>(
        self: Arc<Self>,
        from: usize,
        guard: G,
    ) -> impl futures_util::Stream<Item = Result<Event, Infallible>> {
        let rx = self.changed.subscribe();
        futures_util::stream::unfold(
            (self, rx, from, guard),
            |(feed, mut rx, next, guard)| async move {
                loop {
                    // `done` is read before the event: an event pushed between the two reads is
                    // then still sent.
                    let done = feed.is_done();
                    if let Some(e) = feed.get(next) {
                        let event = Event::default().id(next.to_string()).data(&*e);
                        return Some((Ok(event), (feed, rx, next + 1, guard)));
                    }
                    if done || rx.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
    }
}

/// The matches this server plays and remembers.
pub struct Matches {
    shared: Arc<Shared>,
    rooms: Rooms<MatchRoom>,
}

impl Matches {
    /// None yet.
    pub fn new(shared: Arc<Shared>) -> Matches {
        Matches {
            shared,
            rooms: Rooms::new("match"),
        }
    }
}

impl Room for MatchRoom {
    fn is_over(&self) -> bool {
        self.feed.is_done()
    }

    fn bytes(&self) -> usize {
        let record = self
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(0, String::len);
        self.feed.bytes.load(Ordering::SeqCst)
            + record
            + self.rules.as_ref().map_or(0, |r| r.text.len())
    }
}

/// What a person on the page sends for their role.
#[derive(Debug)]
enum Input {
    Move(String),
    TakeBack,
}

/// A role's inbox: what its person sent and the seat has not read yet, and which turn the seat is
/// asking (each `turn` event carries its number, so that a move sent for a turn that has ended is
/// refused instead of being played on the next one).
#[derive(Debug, Default)]
struct Inbox {
    queue: VecDeque<Input>,
    /// The number of the latest turn asked (from 1).
    turn: u64,
    /// Whether the seat is waiting on that turn now.
    asking: bool,
}

/// A match on the page: its feed, the people's inputs, and its record when it ends.
pub struct MatchRoom {
    id: u64,
    game: String,
    roles: Vec<String>,
    seats: Vec<String>,
    feed: Arc<Feed>,
    /// Per role, what its person sent and the seat has not read yet.
    inputs: Mutex<Vec<Inbox>>,
    input_arrived: Condvar,
    stop: Arc<StopSwitch>,
    record: Mutex<Option<String>>,
    /// Pages following the feed now, and when the last one left.
    watchers: AtomicUsize,
    left: Mutex<Instant>,
    abandon_after: Duration,
    rules: Option<TypedRules>,
}

/// Rules typed into the page for a match, in the syntax the page names them by.
#[derive(Clone, Debug, serde::Serialize)]
struct TypedRules {
    text: String,
    syntax: &'static str,
}

impl MatchRoom {
    fn inputs(&self) -> std::sync::MutexGuard<'_, Vec<Inbox>> {
        self.inputs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether nobody has followed the match for longer than it may go unwatched: then it stops.
    fn abandoned(&self) -> bool {
        self.watchers.load(Ordering::SeqCst) == 0
            && self
                .left
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed()
                > self.abandon_after
    }

    /// Asks the match to stop; a person's seat waiting for a move lets go at once.
    fn stop(&self) {
        self.stop.set();
        self.input_arrived.notify_all();
    }

    fn summary(&self) -> Value {
        json!({
            "id": self.id,
            "game": self.game,
            "roles": self.roles,
            "seats": self.seats,
            "done": self.feed.is_done(),
            "watchers": self.watchers.load(Ordering::SeqCst),
        })
    }
}

/// Counts a page following a room's feed for as long as it does.
struct Watching(Arc<MatchRoom>);

impl Watching {
    fn new(room: Arc<MatchRoom>) -> Watching {
        room.watchers.fetch_add(1, Ordering::SeqCst);
        Watching(room)
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        *self.0.left.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.watchers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A match's request.
#[derive(Deserialize)]
pub struct NewMatch {
    /// A game of the library...
    #[serde(default)]
    pub game: Option<String>,
    /// ...or rules typed into the page, with their syntax.
    #[serde(default)]
    pub text: Option<String>,
    /// `kif` or `gdl`.
    #[serde(default)]
    pub syntax: Option<String>,
    /// One seat per role in role order: `human`, a player kind (`mcts`, `id`, `random`,
    /// `learned:FILE`) or a GGP player's address (`http://host:port`).
    pub players: Vec<String>,
    /// Seconds to prepare.
    #[serde(default = "default_start")]
    pub startclock: f64,
    /// Seconds per move.
    #[serde(default = "default_play")]
    pub playclock: f64,
    /// Seeds the players and the substitute moves.
    #[serde(default)]
    pub seed: Option<u64>,
}

fn default_start() -> f64 {
    5.0
}

fn default_play() -> f64 {
    5.0
}

/// The longest clock the page accepts, in seconds.
const LONGEST_CLOCK: f64 = 3600.0;

fn clock_seconds(name: &str, s: f64) -> Result<Duration, ApiError> {
    if !(0.1..=LONGEST_CLOCK).contains(&s) {
        return Err(ApiError::bad(format!(
            "{name} must be between 0.1 and {LONGEST_CLOCK} seconds, not {s}"
        )));
    }
    Ok(Duration::from_secs_f64(s))
}

/// `POST /api/matches`: starts a match and answers its id.
pub async fn create(
    State(matches): State<Arc<Matches>>,
    body_: Result<Json<NewMatch>, JsonRejection>,
) -> ApiResult {
    let b = body(body_)?;
    let web = &matches.shared;
    let source = match (&b.game, &b.text) {
        (Some(name), None) => {
            let entry = web
                .library()
                .get(name)
                .ok_or_else(|| unknown_game(web, name))?;
            entry.source()
        }
        (None, Some(text)) => GameSource::RuleText {
            text: text.clone(),
            name: "rules".into(),
            syntax: syntax_named(b.syntax.as_deref().unwrap_or("gdl"))?,
        },
        _ => return Err(ApiError::bad(
            "give either \"game\" (a name from the library) or \"text\" (rules, with \"syntax\")",
        )),
    };
    let specs = b
        .players
        .iter()
        .map(|p| {
            p.parse::<SeatSpec>()
                .map_err(|e| ApiError::bad(format!("player `{p}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    one_role_a_server(&specs, |i| format!("player {}", i + 1)).map_err(ApiError::bad)?;
    let clock = Clock::new(
        clock_seconds("the start clock", b.startclock)?,
        clock_seconds("the play clock", b.playclock)?,
    );
    let place = web.take_place()?;
    let id = web.new_id();
    let mut config = web.config.players.clone();
    if let Some(seed) = b.seed {
        config.seed = seed;
    }
    let mut settings = MatchSettings::new(format!("web.{id}"), clock, config.seed);
    // The library's games are rule texts too: only the page's own are kept.
    let rules = match &source {
        GameSource::RuleText { text, syntax, .. } if b.text.is_some() => Some(TypedRules {
            text: text.clone(),
            syntax: match syntax {
                crate::syntax::ast::Syntax::Kif => "kif",
                crate::syntax::ast::Syntax::Infix => "gdl",
            },
        }),
        _ => None,
    };
    let prepare = Prepare {
        id,
        rules,
        specs,
        config,
        abandon_after: web.config.abandon_after,
        shown_bytes: web.config.max_shown_bytes,
        place,
    };
    settings.stop = Some(Arc::new(StopSwitch::new()));
    let options = web.config.load;
    let room = tokio::task::spawn_blocking(move || {
        let game = load(&source, &options).map_err(load_error)?;
        game.visit(Prepared { prepare, settings })
    })
    .await
    .map_err(|e| ApiError::internal(format!("the match could not start: {e}")))??;
    let summary = room.summary();
    matches.rooms.insert(id, room);
    Ok((StatusCode::CREATED, Json(summary)).into_response())
}

/// What a match needs before its game is known.
struct Prepare {
    id: u64,
    /// Rules typed into the page (not the library's), kept for the match's replay.
    rules: Option<TypedRules>,
    specs: Vec<SeatSpec>,
    config: PlayerConfig,
    abandon_after: Duration,
    shown_bytes: usize,
    place: Place,
}

/// Builds the seats for the loaded game and starts the match on a thread of its own.
struct Prepared {
    prepare: Prepare,
    settings: MatchSettings,
}

impl Visitor for Prepared {
    type Output = Result<Arc<MatchRoom>, ApiError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output {
        let Prepared {
            prepare: p,
            mut settings,
        } = self;
        let info = loaded.game.info().clone();
        if p.specs.len() != info.num_roles() {
            return Err(ApiError::bad(format!(
                "the game has {} ({}) but {} were given: give one player per role, in that order",
                crate::diagnostics::count(info.num_roles(), "role"),
                info.roles.join(", "),
                crate::diagnostics::count(p.specs.len(), "player"),
            )));
        }
        let stop = settings.stop.clone().unwrap_or_default();
        let room = Arc::new(MatchRoom {
            id: p.id,
            game: info.name.clone(),
            roles: info.roles.clone(),
            seats: p.specs.iter().map(|s| s.to_string()).collect(),
            feed: Arc::new(Feed::new(p.shown_bytes)),
            inputs: Mutex::new((0..info.num_roles()).map(|_| Inbox::default()).collect()),
            input_arrived: Condvar::new(),
            stop,
            record: Mutex::new(None),
            watchers: AtomicUsize::new(0),
            left: Mutex::new(Instant::now()),
            abandon_after: p.abandon_after,
            rules: p.rules,
        });
        let mut seats: Vec<Box<dyn Seat<G>>> = Vec::new();
        for (role, spec) in p.specs.iter().enumerate() {
            let mut config = p.config.clone();
            let feed = Arc::clone(&room.feed);
            config.progress = Some(Arc::new(move |line: &str| {
                feed.push(json!({ "type": "thinking", "role": role, "line": line }));
            }));
            let mut person = |role: RoleIndex| -> Result<Box<dyn Seat<G>>, _> {
                Ok(Box::new(BrowserSeat {
                    room: Arc::clone(&room),
                    role,
                    can_take_back: false,
                }))
            };
            let seat = make_seat(spec, role, &loaded, &config, &mut person)
                .map_err(|e| ApiError::bad(format!("{}: {e}", info.roles[role])))?;
            seats.push(seat);
        }
        let remote = p.specs.iter().any(|s| matches!(s, SeatSpec::Remote(_)));
        let rules = match (&loaded.rules, remote) {
            (Some(rules), true) => Some(rules.to_kif().map_err(|e| {
                ApiError::bad(format!("the rules cannot be sent to a remote player: {e}"))
            })?),
            _ => None,
        };
        settings.seed = p.config.seed;
        let run_room = Arc::clone(&room);
        let place = p.place;
        std::thread::Builder::new()
            .name(format!("web match {}", p.id))
            .spawn(move || {
                let _place = place;
                let room = run_room;
                let game = loaded.game.as_ref();
                let mut follow = Follow {
                    room: Arc::clone(&room),
                };
                // Nobody's page may follow a match between programs, whose referee events come
                // only as often as its clocks allow: the room is looked at between them too.
                let watched = Arc::clone(&room);
                let _ = std::thread::Builder::new()
                    .name(format!("web match {} watch", room.id))
                    .spawn(move || {
                        while !watched.feed.is_done() && !watched.stop.is_set() {
                            if watched.abandoned() {
                                watched.stop();
                            }
                            std::thread::sleep(WATCH_EVERY);
                        }
                    });
                let token = format!("{:016x}", settings.seed ^ room.id);
                let mut recorder = Recorder::new(game, &settings.match_id, settings.clock, token);
                let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_match(
                        game,
                        rules.as_deref(),
                        &mut seats,
                        &settings,
                        &mut [&mut follow, &mut recorder],
                    )
                }));
                let failure = match played {
                    Ok(Ok(_)) => None,
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(_) => Some("the match failed (a bug: please report it)".to_string()),
                };
                if let Some(message) = failure {
                    room.feed
                        .push(json!({ "type": "error", "message": message }));
                }
                *room.record.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(recorder.into_record().to_json());
                room.feed.end();
            })
            .map_err(|e| ApiError::internal(format!("no thread for the match: {e}")))?;
        Ok(room)
    }
}

/// How often a match's room is looked at for an abandoned page between referee events.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The room's observer: every referee event as a JSON event of the feed.
struct Follow {
    room: Arc<MatchRoom>,
}

impl<G: Game> Observer<G> for Follow {
    fn observe(&mut self, game: &G, event: &MatchEvent<'_, G>) {
        if self.room.abandoned() {
            self.room.stop();
        }
        let full = self.room.feed.is_full();
        if full {
            self.room.stop();
        }
        let roles = &game.info().roles;
        let event = match event {
            MatchEvent::Starting { seats, .. } => json!({
                "type": "starting", "game": game.info().name, "roles": roles, "seats": seats,
            }),
            MatchEvent::Ready {
                role,
                name,
                problem,
            } => json!({
                "type": "ready", "role": role, "name": name,
                "problem": problem.map(|p| p.to_string()),
            }),
            MatchEvent::State { step, state } => json!({
                "type": "state",
                "step": step,
                "drawing": game.drawing(state),
                "text": game.show_state(state),
                "terminal": game.is_terminal(state),
                "mover": game.mover(state),
            }),
            MatchEvent::Moves { step, mover, moves } => json!({
                "type": "moves",
                "step": step,
                "mover": mover,
                "moves": moves.iter().enumerate().map(|(role, m)| json!({
                    "role": role,
                    "move": game.show_move(&m.mv),
                    "took_ms": m.took.as_millis() as u64,
                    "effort": m.stats.map(|s| s.effort()),
                    "expected": m.stats.and_then(|s| s.expected),
                    "candidates": m.explanation.as_ref().map(|e| {
                        e.candidates.iter().map(candidate_json).collect::<Vec<_>>()
                    }),
                    "line": m.explanation.as_ref().map(|e| e.line.clone()),
                    "violation": m.violation.as_ref().map(|v| v.to_string()),
                })).collect::<Vec<_>>(),
            }),
            MatchEvent::TakenBack { role, step } => {
                json!({ "type": "takenback", "role": role, "step": step })
            }
            MatchEvent::Finished { goals, verdict } => json!({
                "type": "finished", "goals": goals, "result": verdict.words(roles),
            }),
            MatchEvent::Aborted { step, reason } => {
                let reason = match full {
                    true => format!(
                        "the match's events passed the {} bytes a match may show",
                        self.room.feed.limit
                    ),
                    false => reason.to_string(),
                };
                json!({ "type": "aborted", "step": step, "reason": reason })
            }
        };
        self.room.feed.push(event);
    }
}

fn candidate_json(c: &Candidate) -> Value {
    let (value, certainty) = match c.value {
        None => (None, None),
        Some((v, how)) => (
            Some(v),
            Some(match how {
                Certainty::Mean => "mean",
                Certainty::Proven => "proven",
                Certainty::Searched => "searched",
                Certainty::AtMost => "at most",
            }),
        ),
    };
    json!({ "move": c.mv, "visits": c.visits, "value": value, "certainty": certainty })
}

/// `GET /api/matches`: the matches this server remembers.
pub async fn list(State(matches): State<Arc<Matches>>) -> ApiResult {
    let list: Vec<Value> = matches
        .rooms
        .all()
        .iter()
        .map(|(_, r)| r.summary())
        .collect();
    Ok(Json(json!({ "matches": list })).into_response())
}

/// `GET /api/matches/{id}/rules`: the rules typed into the page that the match was played by, so
/// that its replay reads them and not whatever the editor holds now.
pub async fn rules(State(matches): State<Arc<Matches>>, Segment(id): Segment) -> ApiResult {
    let room = matches.rooms.get(&id)?;
    match &room.rules {
        Some(rules) => Ok(Json(rules).into_response()),
        None => Err(ApiError::not_found(format!(
            "match {id} was played by the library's game `{}`: GET /api/games/{} has its rules",
            room.game, room.game
        ))),
    }
}

/// `GET /api/matches/{id}`: a match's seats and whether it is over.
pub async fn status(State(matches): State<Arc<Matches>>, Segment(id): Segment) -> ApiResult {
    Ok(Json(matches.rooms.get(&id)?.summary()).into_response())
}

/// `GET /api/matches/{id}/events`: the match's events as server-sent events, from the first (or
/// after `Last-Event-ID` when the page reconnects).
pub async fn events(
    State(matches): State<Arc<Matches>>,
    Segment(id): Segment,
    headers: HeaderMap,
) -> ApiResult {
    let room = matches.rooms.get(&id)?;
    let from = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(0, |last| last.saturating_add(1));
    let feed = Arc::clone(&room.feed);
    let stream = feed.stream(from, Watching::new(room));
    // A keep-alive every second finds a closed page within a second, so its match stops in time.
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(1)))
        .into_response())
}

/// The longest move text a person may send: far past any legal move of the corpus (a move the
/// server offers must be one the person can send back), and a bounded parse.
const MOST_MOVE_BYTES: usize = 64 * 1024;

/// Moves (and take-backs) a person may send within one turn before their seat reads them.
const MOST_QUEUED: usize = 4;

/// A person's move (or taking one back).
#[derive(Deserialize)]
pub struct PersonMove {
    /// The role, by name or index.
    pub role: Value,
    /// The move, as the legal moves list writes it (`mark(1, 2)`), in KIF, or by its arguments.
    #[serde(default, rename = "move")]
    pub mv: Option<String>,
    /// Take back the role's last move instead.
    #[serde(default)]
    pub undo: bool,
    /// The turn the move answers (the `turn` event's number): a move for a turn that has ended is
    /// refused. Without it, the move answers the turn asked now (a seat not asked refuses it).
    #[serde(default)]
    pub turn: Option<u64>,
}

/// `POST /api/matches/{id}/move`: a person's move for their role.
pub async fn play(
    State(matches): State<Arc<Matches>>,
    Segment(id): Segment,
    body_: Result<Json<PersonMove>, JsonRejection>,
) -> ApiResult {
    let b = body(body_)?;
    let room = matches.rooms.get(&id)?;
    let role = match &b.role {
        Value::Number(n) => n.as_u64().map(|n| n as usize),
        Value::String(s) => room.roles.iter().position(|r| r == s),
        _ => None,
    }
    .filter(|&r| r < room.roles.len())
    .ok_or_else(|| {
        ApiError::bad(format!(
            "unknown role {}: the roles are {}",
            b.role,
            room.roles.join(", ")
        ))
    })?;
    if room.seats[role] != "human" {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{} is played by {}, not by a person on this page",
                room.roles[role], room.seats[role]
            ),
        ));
    }
    if room.feed.is_done() || room.stop.is_set() {
        return Err(ApiError::new(StatusCode::CONFLICT, "the match is over"));
    }
    let input =
        match (b.undo, b.mv) {
            (true, _) => Input::TakeBack,
            (false, Some(mv)) if mv.len() > MOST_MOVE_BYTES => {
                return Err(ApiError::bad(format!(
                    "a move is at most {MOST_MOVE_BYTES} bytes, e.g. \"mark(1, 2)\""
                )))
            }
            (false, Some(mv)) => Input::Move(mv),
            (false, None) => return Err(ApiError::bad(
                "say the move (\"move\": \"mark(1, 2)\") or ask to take one back (\"undo\": true)",
            )),
        };
    let what = match input {
        Input::TakeBack => "take-back",
        Input::Move(_) => "move",
    };
    let mut inputs = room.inputs();
    let inbox = &inputs[role];
    if let Some(asked) = b.turn {
        if asked != inbox.turn || !inbox.asking {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!(
                    "that {} was for turn {asked} of {}, which has ended{}",
                    what,
                    room.roles[role],
                    if inbox.asking {
                        format!("; its turn now is {}", inbox.turn)
                    } else {
                        String::new()
                    }
                ),
            ));
        }
    }
    // What is sent while the seat is not asked would only be cleared by its next turn.
    if !inbox.asking {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "{} is not asked for a move now: send the {what} after its next `turn` event",
                room.roles[role]
            ),
        ));
    }
    if inbox.queue.len() >= MOST_QUEUED {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{} already has {MOST_QUEUED} inputs waiting to be read; wait for the seat to read them",
                room.roles[role]
            ),
        ));
    }
    inputs[role].queue.push_back(input);
    drop(inputs);
    room.input_arrived.notify_all();
    Ok((StatusCode::ACCEPTED, Json(json!({ "queued": true }))).into_response())
}

/// `POST /api/matches/{id}/stop` with a JSON body (`{}`; a cross-site form cannot send one): stops a
/// match before its next step.
pub async fn stop(
    State(matches): State<Arc<Matches>>,
    Segment(id): Segment,
    body_: Result<Json<Value>, JsonRejection>,
) -> ApiResult {
    body(body_)?;
    let room = matches.rooms.get(&id)?;
    room.stop();
    Ok(Json(json!({ "stopping": !room.feed.is_done() })).into_response())
}

/// `GET /api/matches/{id}/record`: the match record (ggp-base's JSON) once the match has ended.
pub async fn record(State(matches): State<Arc<Matches>>, Segment(id): Segment) -> ApiResult {
    let room = matches.rooms.get(&id)?;
    let record = room
        .record
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    match record {
        Some(json) => Ok((
            [
                (
                    axum::http::header::CONTENT_TYPE,
                    "application/json".to_string(),
                ),
                (
                    axum::http::header::CONTENT_DISPOSITION,
                    format!(
                        "attachment; filename=\"{}-{}.json\"",
                        super::shared::file_name(&room.game),
                        room.id
                    ),
                ),
            ],
            json,
        )
            .into_response()),
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            "the match is still running; its record is ready when it ends",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feed_is_full_past_its_bytes() {
        let limit = 32 << 20;
        let feed = Feed::new(limit);
        let event = json!({ "type": "state", "text": "x".repeat(1 << 20) });
        let each = event.to_string().len();
        for _ in 0..limit / each {
            feed.push(event.clone());
        }
        assert!(
            !feed.is_full(),
            "{} bytes",
            feed.bytes.load(Ordering::SeqCst)
        );
        feed.push(event);
        assert!(feed.is_full());
        let bytes = feed.bytes.load(Ordering::SeqCst);
        feed.push(json!({ "type": "rejected", "move": "x" }));
        assert_eq!(
            feed.bytes.load(Ordering::SeqCst),
            bytes,
            "dropped once full"
        );
    }
}
