//! Tournaments on the page: [`crate::tournament::run`] on a thread of its own, its table refreshed
//! after every game for the page to poll, and its CSV to download.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::api::{load_error, unknown_game};
use super::shared::{body, ApiError, ApiResult, Place, Room, Rooms, Segment, Shared};
use crate::game::Game;
use crate::load::{load, Loaded, Visitor};
use crate::players::{Clock, PlayerConfig, StopSwitch};
use crate::referee::SeatSpec;
use crate::tournament::{self, GameRecord, Standing, TournamentOptions};

/// A tournament's request.
#[derive(Deserialize)]
pub struct NewTournament {
    /// A game of the library.
    pub game: String,
    /// The entrants: player kinds or GGP players' addresses.
    pub players: Vec<String>,
    /// Games each pair plays.
    #[serde(default = "two")]
    pub games: u32,
    /// Seconds per move.
    #[serde(default = "one")]
    pub playclock: f64,
}

fn two() -> u32 {
    2
}

fn one() -> f64 {
    1.0
}

/// The most players a tournament of the page takes.
const MOST_PLAYERS: usize = 16;

/// The most games a tournament of the page plays.
const MOST_GAMES: usize = 1000;

/// The tournaments this server runs and remembers.
pub struct Tournaments {
    shared: Arc<Shared>,
    rooms: Rooms<TournamentRoom>,
}

impl Tournaments {
    /// None yet.
    pub fn new(shared: Arc<Shared>) -> Tournaments {
        Tournaments {
            shared,
            rooms: Rooms::new("tournament"),
        }
    }
}

/// A tournament's progress.
pub struct TournamentRoom {
    id: u64,
    game: String,
    names: Vec<String>,
    progress: Mutex<Progress>,
    /// Set by the page's Stop: no game starts after it, and those in play end before their next step.
    stop: Arc<StopSwitch>,
}

#[derive(Default)]
struct Progress {
    total: usize,
    records: Vec<GameRecord>,
    done: bool,
    error: Option<String>,
}

impl TournamentRoom {
    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn table(&self) -> Vec<Standing> {
        tournament::standings(&self.names, &self.progress().records)
    }
}

impl Room for TournamentRoom {
    fn is_over(&self) -> bool {
        self.progress().done
    }
}

/// `POST /api/tournaments`: starts a tournament and answers its id.
pub async fn create(
    State(hall): State<Arc<Tournaments>>,
    body_: Result<Json<NewTournament>, JsonRejection>,
) -> ApiResult {
    let b = body(body_)?;
    let web = &hall.shared;
    let entry = Arc::clone(
        web.library()
            .get(&b.game)
            .ok_or_else(|| unknown_game(web, &b.game))?,
    );
    if b.players.len() < 2 || b.players.len() > MOST_PLAYERS {
        return Err(ApiError::bad(format!(
            "a tournament needs two to {MOST_PLAYERS} players (e.g. [\"mcts\", \"random\"])"
        )));
    }
    let specs = b
        .players
        .iter()
        .map(|p| {
            p.parse::<SeatSpec>()
                .map_err(|e| ApiError::bad(format!("player `{p}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !(1..=100).contains(&b.games) {
        return Err(ApiError::bad("games per pair must be between 1 and 100"));
    }
    if !(0.1..=600.0).contains(&b.playclock) {
        return Err(ApiError::bad(
            "the play clock must be between 0.1 and 600 seconds",
        ));
    }
    let place = web.take_place()?;
    let id = web.new_id();
    let options = TournamentOptions {
        games: b.games,
        clock: Clock::new(
            Duration::from_secs_f64(b.playclock.max(1.0)),
            Duration::from_secs_f64(b.playclock),
        ),
        grace: crate::referee::GRACE,
        config: PlayerConfig {
            progress: None,
            ..web.config.players.clone()
        },
        workers: 1,
        stop: Some(Arc::new(StopSwitch::new())),
    };
    let load_options = web.config.load;
    let room = tokio::task::spawn_blocking(move || {
        let source = entry.source();
        let game = load(&source, &load_options).map_err(load_error)?;
        game.visit(Start {
            id,
            specs,
            options,
            place,
        })
    })
    .await
    .map_err(|e| ApiError::internal(format!("the tournament could not start: {e}")))??;
    let summary = summary(&room);
    hall.rooms.insert(id, room);
    Ok((StatusCode::CREATED, Json(summary)).into_response())
}

struct Start {
    id: u64,
    specs: Vec<SeatSpec>,
    options: TournamentOptions,
    place: Place,
}

impl Visitor for Start {
    type Output = Result<Arc<TournamentRoom>, ApiError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output {
        let roles = loaded.game.info().num_roles();
        let total = tournament::schedule(self.specs.len(), roles, self.options.games).len();
        if total > MOST_GAMES {
            return Err(ApiError::bad(format!(
                "that is {total} games; the page plays at most {MOST_GAMES} (fewer players or games \
                 per pair)"
            )));
        }
        let room = Arc::new(TournamentRoom {
            id: self.id,
            game: loaded.game.info().name.clone(),
            names: tournament::entrant_names(&self.specs),
            progress: Mutex::new(Progress {
                total,
                ..Progress::default()
            }),
            stop: self.options.stop.clone().unwrap_or_default(),
        });
        let running = Arc::clone(&room);
        let Start {
            specs,
            options,
            place,
            ..
        } = self;
        std::thread::Builder::new()
            .name(format!("web tournament {}", room.id))
            .spawn(move || {
                // A panic in a game's engine ends the tournament with an error, not a room
                // polled as running for ever.
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    tournament::run(&loaded, &specs, &options, |_, record| {
                        running.progress().records.push(record.clone());
                    })
                }));
                // Free before it reads done, so that a page seeing it done may start another.
                drop(place);
                let mut progress = running.progress();
                match result {
                    Err(_) => {
                        progress.error = Some(format!(
                            "the tournament failed after {} games (a bug: please report it)",
                            progress.records.len()
                        ))
                    }
                    Ok(Ok(played)) => {
                        progress.records = played.records;
                        progress.error = played.stopped.map(|why| {
                            format!(
                                "stopped after {} of {} games: {why}",
                                progress.records.len(),
                                played.total
                            )
                        });
                    }
                    Ok(Err(e)) => progress.error = Some(e.to_string()),
                }
                progress.done = true;
            })
            .map_err(|e| ApiError::internal(format!("no thread for the tournament: {e}")))?;
        Ok(room)
    }
}

fn summary(room: &TournamentRoom) -> Value {
    let table = room.table();
    let progress = room.progress();
    json!({
        "id": room.id,
        "game": room.game,
        "players": room.names,
        "played": progress.records.len(),
        "total": progress.total,
        "done": progress.done,
        "stopping": room.stop.is_set() && !progress.done,
        "error": progress.error,
        "table": table,
    })
}

/// `GET /api/tournaments`: the tournaments this server remembers, without their tables (a page that
/// lost a tournament's address finds it here, and can follow or stop it).
pub async fn list(State(hall): State<Arc<Tournaments>>) -> ApiResult {
    let list: Vec<Value> = hall
        .rooms
        .all()
        .iter()
        .map(|(_, r)| {
            let mut s = summary(r);
            if let Some(fields) = s.as_object_mut() {
                fields.remove("table");
            }
            s
        })
        .collect();
    Ok(Json(json!({ "tournaments": list })).into_response())
}

/// `GET /api/tournaments/{id}`: games played so far and the table.
pub async fn status(State(hall): State<Arc<Tournaments>>, Segment(id): Segment) -> ApiResult {
    let room = hall.rooms.get(&id)?;
    Ok(Json(summary(&room)).into_response())
}

/// `POST /api/tournaments/{id}/stop` with a JSON body (`{}`, as a match's stop): no game starts after
/// it, and the games in play end before their next step (within a play clock). The tournament's table
/// keeps the games that ended.
pub async fn stop(
    State(hall): State<Arc<Tournaments>>,
    Segment(id): Segment,
    body_: Result<Json<Value>, JsonRejection>,
) -> ApiResult {
    body(body_)?;
    let room = hall.rooms.get(&id)?;
    room.stop.set();
    Ok(Json(summary(&room)).into_response())
}

/// `GET /api/tournaments/{id}/csv`: the table as CSV (as `ggp-run tournament --csv` writes it).
pub async fn csv(State(hall): State<Arc<Tournaments>>, Segment(id): Segment) -> ApiResult {
    let room = hall.rooms.get(&id)?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"tournament-{}-{}.csv\"",
                    super::shared::file_name(&room.game),
                    room.id
                ),
            ),
        ],
        tournament::to_csv(&room.table()),
    )
        .into_response())
}
