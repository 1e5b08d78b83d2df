//! What every part of the web server shares: its settings, the library, the places for running
//! matches, ids, and the API's errors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::library::Library;
use crate::load::LoadOptions;
use crate::players::PlayerConfig;

/// How the web server runs.
#[derive(Clone, Debug)]
pub struct WebConfig {
    /// Folders of rule files shown beside the bundled games.
    pub folders: Vec<PathBuf>,
    /// Matches and tournaments running at once; more are refused with a message.
    pub max_matches: usize,
    /// The largest request body accepted (rules, a match record).
    pub max_body_bytes: usize,
    /// How the games are loaded (the command line's budgets).
    pub load: LoadOptions,
    /// The players' settings (threads, seed, depth).
    pub players: PlayerConfig,
    /// How long a match may go unwatched (its page closed) before it is stopped.
    pub abandon_after: Duration,
    /// How long a request's headers, and then its body, may take to arrive.
    pub read_timeout: Duration,
    /// The most bytes a match's events (its feed, kept for pages that join late) or a replay's
    /// drawings may take: a state's drawing can take tens of kilobytes (a 64 by 64 board), so a
    /// long match on a big board would otherwise grow the server by a gigabyte. A match is stopped
    /// past it; a replay is refused.
    pub max_shown_bytes: usize,
    /// Host names (lower case) a request may name besides `localhost` and IP addresses (see
    /// [`trusted_host`](super::trusted_host)).
    pub allowed_hosts: Vec<String>,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            folders: Vec::new(),
            max_matches: 4,
            max_body_bytes: 1 << 20,
            load: LoadOptions::default(),
            players: PlayerConfig::default(),
            abandon_after: Duration::from_secs(5),
            read_timeout: Duration::from_secs(10),
            max_shown_bytes: 32 << 20,
            allowed_hosts: Vec::new(),
        }
    }
}

/// What every request may need.
pub struct Shared {
    /// The settings.
    pub config: WebConfig,
    library: Library,
    next_id: AtomicU64,
    /// Matches and tournaments running now.
    running: Arc<AtomicUsize>,
    /// The editor's play-tests: one at a time, the newest only (see [`Shared::play_test_turn`]).
    play_tests: Mutex<()>,
    newest_play_test: AtomicU64,
}

/// Finished matches and tournaments kept for their pages and records; older ones are forgotten.
const KEPT: usize = 64;

/// The most bytes the ended rooms a server remembers may hold together (a match's events and record
/// reach 32 MB each, so [`KEPT`] of them alone could hold gigabytes): the oldest are forgotten past it.
const KEPT_BYTES: usize = 256 << 20;

impl Shared {
    /// The shared state: the bundled games and those of `config.folders`.
    pub fn new(config: WebConfig) -> std::io::Result<Shared> {
        let library = Library::new(&config.folders, config.load)?;
        Ok(Shared {
            config,
            library,
            next_id: AtomicU64::new(1),
            running: Arc::new(AtomicUsize::new(0)),
            play_tests: Mutex::new(()),
            newest_play_test: AtomicU64::new(0),
        })
    }

    /// A number for a play-test asked for now, newer than every one before.
    pub fn ask_play_test(&self) -> u64 {
        self.newest_play_test.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Waits for the turn of play-test `ticket`, and returns it held, or `None` when a newer one was
    /// asked for meanwhile. Play-tests run one at a time, the newest only: the editor asks again each
    /// time its user stops typing and ignores the answers to older questions, and a big game's network
    /// takes half a gigabyte while it is built, so a queue of loads could only waste the machine.
    pub fn play_test_turn(&self, ticket: u64) -> Option<MutexGuard<'_, ()>> {
        let turn = self
            .play_tests
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (self.newest_play_test.load(Ordering::SeqCst) == ticket).then_some(turn)
    }

    /// The games it offers.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Takes one of the places for a running match or tournament, or says why there is none.
    pub fn take_place(&self) -> Result<Place, ApiError> {
        let max = self.config.max_matches;
        let taken = self
            .running
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            });
        match taken {
            Ok(_) => Ok(Place(Arc::clone(&self.running))),
            Err(n) => Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "{n} matches and tournaments are running, the most this server plays at once \
                     (ggp-run web --max-matches); stop one or wait for one to end"
                ),
            )),
        }
    }

    /// A new match's or tournament's id.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// One running match's or tournament's place, given back when it ends.
pub struct Place(Arc<AtomicUsize>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a [`Rooms`] holds: a match or a tournament, which says when it is over.
pub trait Room {
    /// Whether it has ended (then it may be forgotten).
    fn is_over(&self) -> bool;

    /// About how many bytes it holds (its events and record).
    fn bytes(&self) -> usize {
        0
    }
}

/// The matches or tournaments a server remembers, by id; the oldest that are over are forgotten past
/// [`KEPT`] rooms or [`KEPT_BYTES`] in the rooms that are over.
pub struct Rooms<T> {
    rooms: Mutex<HashMap<u64, Arc<T>>>,
    /// What a room is called in messages (`match`).
    noun: &'static str,
}

impl<T: Room> Rooms<T> {
    /// None yet; `noun` names one in messages.
    pub fn new(noun: &'static str) -> Rooms<T> {
        Rooms {
            rooms: Mutex::new(HashMap::new()),
            noun,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<T>>> {
        self.rooms.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The room whose id is `id` as the address writes it, or a 404 that says why there is none.
    pub fn get(&self, id: &str) -> Result<Arc<T>, ApiError> {
        let noun = self.noun;
        let id: u64 = id.parse().map_err(|_| {
            ApiError::not_found(format!("no {noun} `{id}`: they are numbered from 1"))
        })?;
        self.lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no {noun} {id} on this server")))
    }

    /// Adds `room` as `id`, forgetting the oldest rooms that are over past [`KEPT`] rooms or
    /// [`KEPT_BYTES`].
    pub fn insert(&self, id: u64, room: Arc<T>) {
        let mut rooms = self.lock();
        rooms.insert(id, room);
        let mut over: Vec<(u64, usize)> = rooms
            .iter()
            .filter(|(_, r)| r.is_over())
            .map(|(k, r)| (*k, r.bytes()))
            .collect();
        over.sort_unstable();
        let mut held: usize = over.iter().map(|(_, b)| b).sum();
        for (id, bytes) in over {
            if rooms.len() <= KEPT && held <= KEPT_BYTES {
                break;
            }
            rooms.remove(&id);
            held -= bytes;
        }
    }

    /// Every room, oldest first.
    pub fn all(&self) -> Vec<(u64, Arc<T>)> {
        let mut all: Vec<(u64, Arc<T>)> = self
            .lock()
            .iter()
            .map(|(k, r)| (*k, Arc::clone(r)))
            .collect();
        all.sort_unstable_by_key(|(k, _)| *k);
        all
    }
}

/// The route's one variable part (a game's name, a match's id), or a JSON error when it is not text
/// (`%FF`), as every error of the API is; axum's own `Path` answers those in plain text.
pub struct Segment(pub String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<String>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(s)| Segment(s))
            .map_err(|e| ApiError::bad(format!("the address cannot be read: {}", e.body_text())))
    }
}

/// An API error: a status and a sentence that says what was expected, sent as `{"error": ...}`
/// (with the rules' diagnostics when they are the problem).
#[derive(Debug)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// The JSON sent.
    pub body: serde_json::Value,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: serde_json::json!({ "error": message.into() }),
        }
    }

    /// A 400 Bad Request.
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 500 Internal Server Error: the server's own failure (a task that panicked), not the
    /// request's.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// A 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// What an API handler answers.
pub type ApiResult = Result<Response, ApiError>;

/// The JSON body of a request, or a 4xx that says what was wrong with it.
pub fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(b)| b).map_err(|e| {
        ApiError::new(
            e.status(),
            format!(
                "the request's JSON body was not understood: {}",
                e.body_text()
            ),
        )
    })
}

/// `name` as a download's file name: ASCII letters, digits and `-`, anything else `_`.
pub fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_play_test_gets_a_turn() {
        let web = Shared::new(WebConfig::default()).expect("the bundled games");
        let (older, newer) = (web.ask_play_test(), web.ask_play_test());
        assert!(web.play_test_turn(older).is_none());
        let turn = web.play_test_turn(newer);
        assert!(turn.is_some());
        drop(turn);
        // Taken once, the turn is free again for the same ticket (nothing newer was asked).
        assert!(web.play_test_turn(newer).is_some());
    }

    struct Held {
        over: bool,
        bytes: usize,
    }

    impl Room for Held {
        fn is_over(&self) -> bool {
            self.over
        }
        fn bytes(&self) -> usize {
            self.bytes
        }
    }

    #[test]
    fn the_oldest_ended_rooms_are_forgotten_past_the_count_or_the_bytes() {
        let rooms = Rooms::new("match");
        let big = KEPT_BYTES / 4;
        // Five ended rooms of a quarter of the bytes each, and one still running, larger still.
        for id in 1..=5 {
            rooms.insert(
                id,
                Arc::new(Held {
                    over: true,
                    bytes: big,
                }),
            );
        }
        rooms.insert(
            6,
            Arc::new(Held {
                over: false,
                bytes: 2 * KEPT_BYTES,
            }),
        );
        let ids: Vec<u64> = rooms.all().iter().map(|(id, _)| *id).collect();
        assert_eq!(
            ids,
            [2, 3, 4, 5, 6],
            "the oldest ended room goes, a running one stays"
        );
        // Small rooms: the count decides.
        let rooms = Rooms::new("match");
        for id in 1..=(KEPT as u64 + 3) {
            rooms.insert(
                id,
                Arc::new(Held {
                    over: true,
                    bytes: 1,
                }),
            );
        }
        let ids: Vec<u64> = rooms.all().iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), KEPT);
        assert_eq!(ids[0], 4);
    }
}
