//! Gamemaster in the browser: `ggp-run web` serves pages where a person browses the games, edits
//! rules with the checker's diagnostics beside them, plays against the players (or plays every role),
//! watches programs play with their reasoning, replays match records and runs tournaments.
//!
//! The pages are plain HTML, CSS and JavaScript embedded in the binary ([`assets`]); everything they
//! show comes from a JSON API under `/api/`. A match is the referee's ([`crate::referee::run_match`]):
//! the browser is one more [seat](matches::BrowserSeat) and one more observer, whose events reach the
//! page as server-sent events. Rules typed into the page load through the one loader with the command
//! line's budgets.
//!
//! Reliability: the server listens on loopback unless told otherwise; request bodies are bounded;
//! every API error is a 4xx with a JSON `{"error": ...}` that says what was expected; at most
//! [`WebConfig::max_matches`] matches and tournaments run at once; a match nobody watches any more (the
//! tab was closed) is stopped within its clocks.

pub mod api;
pub mod assets;
pub mod library;
pub mod matches;
pub mod shared;
pub mod tournaments;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::{get, post};
use axum::Router;

use matches::Matches;
pub use shared::WebConfig;
use shared::{ApiError, Shared};
use tournaments::Tournaments;

/// The server's state: what every request shares, and the matches and tournaments.
#[derive(Clone)]
struct App {
    shared: Arc<Shared>,
    matches: Arc<Matches>,
    tournaments: Arc<Tournaments>,
}

impl FromRef<App> for Arc<Shared> {
    fn from_ref(app: &App) -> Self {
        Arc::clone(&app.shared)
    }
}

impl FromRef<App> for Arc<Matches> {
    fn from_ref(app: &App) -> Self {
        Arc::clone(&app.matches)
    }
}

impl FromRef<App> for Arc<Tournaments> {
    fn from_ref(app: &App) -> Self {
        Arc::clone(&app.tournaments)
    }
}

/// How much of a request body the server waits for, and how long.
#[derive(Clone, Copy)]
struct BodyBounds {
    bytes: usize,
    time: std::time::Duration,
}

/// Reads a request's whole body, within the read timeout, before any route sees it (see
/// [`read_body`](crate::server::read_body)).
async fn body_in_time(
    axum::extract::State(bounds): axum::extract::State<BodyBounds>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = req.into_parts();
    match crate::server::read_body(body, bounds.bytes, bounds.time).await {
        Ok(bytes) => {
            let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
            next.run(req).await
        }
        Err(e) => ApiError::new(e.status(), e.to_string()).into_response(),
    }
}

/// Whether a request's `Host` header names this server as a browser reaches it directly: an IP
/// address, `localhost`, or a name in `allowed`. A page of another site whose name was pointed at
/// this address (DNS rebinding) sends its own name and is refused; it could otherwise start matches,
/// learn which files exist through `learned:` seats and reach other machines through `http://` seats.
pub fn trusted_host(host: &str, allowed: &[String]) -> bool {
    let name = match host.strip_prefix('[') {
        // An IPv6 address, with or without a port.
        Some(rest) => return rest.contains(']'),
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        },
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name.parse::<std::net::Ipv4Addr>().is_ok()
        || name == "localhost"
        || name.ends_with(".localhost")
        || allowed.contains(&name)
}

/// Refuses a request whose `Host` is not [`trusted_host`], and a POST whose `Origin` names another
/// host than its `Host` (a form of another site).
async fn host_checked(
    axum::extract::State(allowed): axum::extract::State<Arc<Vec<String>>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match refusal(&req, &allowed) {
        Some(refused) => refused.into_response(),
        None => next.run(req).await,
    }
}

/// Why [`host_checked`] refuses `req`, if it does.
fn refusal(req: &axum::extract::Request, allowed: &[String]) -> Option<ApiError> {
    use axum::http::header::{HOST, ORIGIN};
    use axum::http::StatusCode;
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let host = header(HOST);
    if let Some(host) = host.filter(|h| !trusted_host(h, allowed)) {
        let message = format!(
            "this server answers to localhost and IP addresses, not to `{host}`: start it with \
             --allow-host NAME to be reached by that name"
        );
        return Some(ApiError::new(StatusCode::MISDIRECTED_REQUEST, message));
    }
    let foreign = match (header(ORIGIN), host) {
        (Some(origin), Some(host)) => {
            let from = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            !from.eq_ignore_ascii_case(host)
        }
        _ => false,
    };
    (req.method() == axum::http::Method::POST && foreign).then(|| {
        let message = "a page of another site may not send requests to this server";
        ApiError::new(StatusCode::FORBIDDEN, message)
    })
}

/// The server's routes for `shared`: the pages, their assets and the API.
pub fn router(shared: Arc<Shared>) -> Router {
    let limit = shared.config.max_body_bytes;
    let allowed = Arc::new(shared.config.allowed_hosts.clone());
    let bounds = BodyBounds {
        bytes: limit,
        time: shared.config.read_timeout,
    };
    let app = App {
        matches: Arc::new(Matches::new(Arc::clone(&shared))),
        tournaments: Arc::new(Tournaments::new(Arc::clone(&shared))),
        shared,
    };
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{file}", get(assets::file))
        .route("/api/games", get(api::games))
        .route("/api/games/{name}", get(api::game))
        .route("/api/check", post(api::check))
        .route("/api/fmt", post(api::fmt))
        .route("/api/convert", post(api::convert))
        .route("/api/replay", post(api::replay))
        .route("/api/matches", post(matches::create).get(matches::list))
        .route("/api/matches/{id}", get(matches::status))
        .route("/api/matches/{id}/events", get(matches::events))
        .route("/api/matches/{id}/move", post(matches::play))
        .route("/api/matches/{id}/stop", post(matches::stop))
        .route("/api/matches/{id}/record", get(matches::record))
        .route("/api/matches/{id}/rules", get(matches::rules))
        .route(
            "/api/tournaments",
            post(tournaments::create).get(tournaments::list),
        )
        .route("/api/tournaments/{id}", get(tournaments::status))
        .route("/api/tournaments/{id}/stop", post(tournaments::stop))
        .route("/api/tournaments/{id}/csv", get(tournaments::csv))
        .fallback(|| async {
            ApiError::not_found("no such page or API route; the pages start at /")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "this route takes another method: the API's reads are GET, everything else POST \
                 with a JSON body",
            )
        })
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(bounds, body_in_time))
        .layer(axum::middleware::from_fn_with_state(allowed, host_checked))
        .with_state(app)
}

/// Binds `addr` (port 0 picks a free port), calls `bound` with the address bound, and serves for ever
/// on a runtime of its own.
pub fn run(
    addr: SocketAddr,
    config: WebConfig,
    log: crate::server::Log,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let shared = Arc::new(Shared::new(config)?);
    shared.library().describe_in_background();
    let read_timeout = shared.config.read_timeout;
    crate::server::run_router(addr, router(shared), read_timeout, log, bound)
}
