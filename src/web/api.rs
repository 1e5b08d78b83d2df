//! The API of the library, the editor and the replay page: games, `check`, `fmt`, `convert` and
//! match records replayed into drawings.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::shared::{body, ApiError, ApiResult, Segment, Shared};
use crate::diagnostics::{line_col, render, Diagnostic, Severity};
use crate::game::Game;
use crate::load::{
    load, load_checked, GameSource, LoadError, LoadOptions, Loaded, PlayTest, PlayTestReport,
    Rules, Visitor,
};
use crate::protocol::record::MatchRecord;
use crate::syntax::ast::Syntax;

/// Rules sent by the page: the text and its syntax (`kif` or `gdl`, the infix of `.gdl` files).
#[derive(Deserialize)]
pub struct RulesBody {
    /// The rules.
    pub text: String,
    /// `kif` or `gdl` (`infix` too).
    pub syntax: String,
    /// For `convert`: the syntax wanted.
    #[serde(default)]
    pub to: Option<String>,
    /// For `check`: also load the game and play-test it (random matches looking for roles left
    /// without a move and terminal states without goals), when the rules have no error.
    #[serde(default)]
    pub play: bool,
}

/// `kif`, `gdl` or `infix` as a syntax.
pub fn syntax_named(name: &str) -> Result<Syntax, ApiError> {
    match name.to_ascii_lowercase().as_str() {
        "kif" => Ok(Syntax::Kif),
        "gdl" | "infix" | "epilog" => Ok(Syntax::Infix),
        other => Err(ApiError::bad(format!(
            "unknown syntax `{other}`: expected `kif` (classic GDL) or `gdl` (Epilog infix)"
        ))),
    }
}

fn syntax_name(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Kif => "kif",
        Syntax::Infix => "gdl",
    }
}

/// A diagnostic as the editor shows it: its place as line and column, what is wrong, how to fix it,
/// and the text the command line would print.
pub fn diagnostic_json(d: &Diagnostic, file: &str, text: &str) -> Value {
    let (line, column) = line_col(text, d.span.start as usize);
    let (end_line, end_column) = line_col(text, d.span.end as usize);
    json!({
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "message": d.message,
        "help": d.help,
        "labels": d.labels.iter().map(|l| {
            let (line, column) = line_col(text, l.span.start as usize);
            json!({ "line": line, "column": column, "message": l.message })
        }).collect::<Vec<_>>(),
        "rendered": render(d, file, text),
    })
}

/// Why a game did not load, as JSON: the rules' diagnostics when they are the problem.
pub fn load_error(e: LoadError) -> ApiError {
    match e {
        LoadError::Invalid { file, text, errors } => ApiError {
            status: axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            body: json!({
                "error": format!("{file}: {} in the rules", crate::diagnostics::count(errors.len(), "error")),
                "diagnostics": errors.iter().map(|d| diagnostic_json(d, &file, &text)).collect::<Vec<_>>(),
            }),
        },
        other => ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            other.to_string(),
        ),
    }
}

/// `GET /api/games`: every game, with what loading it told when that is known.
pub async fn games(State(web): State<Arc<Shared>>) -> ApiResult {
    let games: Vec<Value> = web
        .library()
        .entries()
        .iter()
        .map(|e| {
            let described = web.library().description(&e.name);
            json!({
                "name": e.name,
                "file": e.file,
                "syntax": syntax_name(e.syntax),
                "described": described.as_ref().map(|d| d.as_ref().ok()),
                "problem": described.as_ref().and_then(|d| d.as_ref().err()),
            })
        })
        .collect();
    Ok(Json(json!({ "games": games })).into_response())
}

/// `GET /api/games/{name}`: a game's rules and stylesheet.
pub async fn game(State(web): State<Arc<Shared>>, Segment(name): Segment) -> ApiResult {
    let entry = web
        .library()
        .get(&name)
        .ok_or_else(|| unknown_game(&web, &name))?;
    Ok(Json(json!({
        "name": entry.name,
        "file": entry.file,
        "syntax": syntax_name(entry.syntax),
        "text": entry.text,
        "style": entry.style,
        "described": web.library().description(&name).and_then(|d| d.ok()),
    }))
    .into_response())
}

/// The 404 of a game not in the library, with the names that are.
pub fn unknown_game(web: &Shared, name: &str) -> ApiError {
    let names: Vec<&str> = web
        .library()
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    ApiError::not_found(format!(
        "no game `{name}` in the library; it has {}",
        names.join(", ")
    ))
}

/// `POST /api/check`: every error and warning with its place, or a summary of the game; with
/// `"play": true`, the play-test's problems too and what it played (`"play_test"`).
pub async fn check(
    State(web): State<Arc<Shared>>,
    body_: Result<Json<RulesBody>, JsonRejection>,
) -> ApiResult {
    let b = body(body_)?;
    let syntax = syntax_named(&b.syntax)?;
    let file = format!("rules.{}", syntax_name(syntax));
    let (text, play) = (b.text, b.play);
    let ticket = play.then(|| web.ask_play_test());
    let answer = off_the_runtime(move || {
        let diags = |ds: &[Diagnostic]| -> Vec<Value> {
            ds.iter()
                .map(|d| diagnostic_json(d, &file, &text))
                .collect()
        };
        Ok(match crate::syntax::parse_str(&text, syntax) {
            Err(errors) => json!({ "ok": false, "diagnostics": diags(&errors) }),
            Ok(program) => {
                let report = crate::check::check(&program);
                let mut all = report.errors.clone();
                all.extend(report.warnings.iter().cloned());
                all.sort_by_key(|d| d.span.start);
                let mut ok = report.is_ok();
                let mut played = None;
                if let (true, Some(ticket)) = (ok, ticket) {
                    // An older question waiting its turn is answered without a play-test.
                    if let Some(_turn) = web.play_test_turn(ticket) {
                        let tested = play_test(program, &text, &file);
                        ok = !tested.has_errors();
                        played = (tested.played > 0).then(|| tested.summary());
                        // Each is placed by a scan of the text: a few hundred at most.
                        all.extend(crate::diagnostics::capped(tested.problems));
                    }
                }
                json!({
                    "ok": ok,
                    "diagnostics": diags(&all),
                    "roles": report.summary.roles,
                    "rules": report.summary.rules,
                    "facts": report.summary.facts,
                    "operations": report.summary.operations,
                    "play_test": played,
                })
            }
        })
    })
    .await?;
    Ok(Json(answer).into_response())
}

/// How long the editor's play-test may build a network, and then play: the page checks as its user
/// types, so it is given less than the command line's `check`.
const EDITOR_GROUNDING: std::time::Duration = std::time::Duration::from_secs(3);
const EDITOR_PLAY_TEST: std::time::Duration = std::time::Duration::from_secs(2);

/// The play-test of checked rules, as `ggp-run check` runs it, or the reason they cannot be loaded.
fn play_test(program: crate::syntax::ast::Program, text: &str, file: &str) -> PlayTestReport {
    let options = LoadOptions {
        grounding: Some(EDITOR_GROUNDING),
        ..LoadOptions::default()
    };
    let places = crate::load::RulePlaces::of(&program);
    let rules = Rules {
        program,
        text: text.to_string(),
        file: file.to_string(),
        syntax_note: None,
    };
    match load_checked(rules, "rules", &options) {
        Ok(game) => game
            .play_test(PlayTest {
                max_time: EDITOR_PLAY_TEST,
                ..PlayTest::default()
            })
            .unwrap_or_default(),
        Err(e) => PlayTestReport::unplayable(&e, &places),
    }
}

/// Parses rules the page sent, or answers their syntax errors.
fn parse(b: &RulesBody) -> Result<crate::syntax::ast::Program, ApiError> {
    let syntax = syntax_named(&b.syntax)?;
    crate::syntax::parse_str(&b.text, syntax).map_err(|errors| {
        load_error(LoadError::Invalid {
            file: format!("rules.{}", syntax_name(syntax)),
            text: b.text.clone(),
            errors,
        })
    })
}

/// How many requests' rules ([`off_the_runtime`]) are read at once: a parse tree takes some twenty
/// times its text, so 128 editors checking a megabyte each at once took the server to 2.3 GB.
const RULE_WORKERS: usize = 4;

static RULE_WORK: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(RULE_WORKERS);

/// Runs `work` on the blocking pool, at most [`RULE_WORKERS`] at once (the others wait their
/// turn): parsing and printing a megabyte of rules takes long enough to stall the runtime's few
/// threads, and with them every page and event stream.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let turn = RULE_WORK
        .acquire()
        .await
        .map_err(|e| ApiError::internal(format!("the request's work could not start: {e}")))?;
    // The turn goes with the work, which runs on when a client that hung up drops this future.
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        work()
    })
    .await
    .map_err(|e| ApiError::internal(format!("the request's work failed: {e}")))?
}

/// `POST /api/fmt`: the rules laid out in their own syntax.
pub async fn fmt(body_: Result<Json<RulesBody>, JsonRejection>) -> ApiResult {
    let b = body(body_)?;
    off_the_runtime(move || {
        let program = parse(&b)?;
        let text = crate::print::format(&program);
        if !crate::print::reads_back(&program, &text) {
            return Err(ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "the formatted text does not read back as the same rules, so the rules are left as \
                 they are (please report this)",
            ));
        }
        Ok(Json(json!({ "text": text })).into_response())
    })
    .await
}

/// `POST /api/convert`: the rules in the other syntax (`to`).
pub async fn convert(body_: Result<Json<RulesBody>, JsonRejection>) -> ApiResult {
    let b = body(body_)?;
    let to = syntax_named(b.to.as_deref().ok_or_else(|| {
        ApiError::bad("say which syntax to convert to: \"to\": \"kif\" or \"to\": \"gdl\"")
    })?)?;
    off_the_runtime(move || {
        let program = parse(&b)?;
        let converted = crate::print::convert(&program, to).map_err(|e| {
            ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        })?;
        let text = match to {
            Syntax::Kif => crate::print::to_kif(&converted),
            Syntax::Infix => crate::print::to_infix(&converted),
        };
        Ok(Json(json!({ "text": text, "syntax": syntax_name(to) })).into_response())
    })
    .await
}

/// A replay's request: the record, and the game when the record's name is not one of the library.
#[derive(Deserialize)]
pub struct ReplayBody {
    /// The record (ggp-base's match JSON), as an object or as text.
    pub record: Value,
    /// The library's game to replay it on [default: the record's `gameName`]...
    #[serde(default)]
    pub game: Option<String>,
    /// ...or rules (the editor's), with their syntax.
    #[serde(default)]
    pub text: Option<String>,
    /// `kif` or `gdl`.
    #[serde(default)]
    pub syntax: Option<String>,
}

/// `POST /api/replay`: a match record replayed on its game, every state drawn.
pub async fn replay(
    State(web): State<Arc<Shared>>,
    body_: Result<Json<ReplayBody>, JsonRejection>,
) -> ApiResult {
    let b = body(body_)?;
    let record = match &b.record {
        Value::String(text) => MatchRecord::from_json(text),
        other => MatchRecord::from_json(&other.to_string()),
    }
    .map_err(|e| ApiError::bad(e.to_string()))?;
    if record.moves.len() > crate::referee::MAX_STEPS {
        return Err(ApiError::bad(format!(
            "the record has {} joint moves, more than the {} a match here may have",
            record.moves.len(),
            crate::referee::MAX_STEPS
        )));
    }
    let source = match (&b.text, &b.game) {
        (Some(text), _) => GameSource::RuleText {
            text: text.clone(),
            name: record.game_name.clone().unwrap_or_else(|| "rules".into()),
            syntax: syntax_named(b.syntax.as_deref().unwrap_or("gdl"))?,
        },
        (None, game) => {
            let name = game
                .clone()
                .or_else(|| record.game_name.clone())
                .ok_or_else(|| {
                    ApiError::bad(
                        "the record does not name its game: choose the game to replay it on",
                    )
                })?;
            let entry = web
                .library()
                .get(&name)
                .ok_or_else(|| unknown_game(&web, &name))?;
            entry.source()
        }
    };
    let options = web.config.load;
    let limit = web.config.max_shown_bytes;
    // A replay loads a game and draws every state, as a match does: it takes a match's place.
    let place = web.take_place()?;
    let frames = tokio::task::spawn_blocking(move || {
        let _place = place;
        let game = load(&source, &options).map_err(load_error)?;
        game.visit(Frames(&record, limit))
            .map_err(|why| ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, why))
    })
    .await
    .map_err(|e| ApiError::internal(format!("the replay failed: {e}")))??;
    Ok(Json(frames).into_response())
}

/// A joint move of a record (KIF, ggp-base's spacing) in the game's own notation, as the match page
/// shows moves; a move that does not read stays as it was written.
fn shown_moves<G: Game>(game: &G, state: &G::State, joint: &[String]) -> Vec<String> {
    joint
        .iter()
        .enumerate()
        .map(|(role, text)| match game.parse_move(state, role, text) {
            Ok(mv) => game.show_move(&mv),
            Err(_) => text.clone(),
        })
        .collect()
}

/// A record's states drawn, with the moves that led to each, in at most so many bytes (drawings
/// and texts together; see [`WebConfig::max_shown_bytes`](super::WebConfig)).
struct Frames<'a>(&'a MatchRecord, usize);

impl Visitor for Frames<'_> {
    type Output = Result<Value, String>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output {
        let game = loaded.game.as_ref();
        let Frames(record, limit) = self;
        let states = crate::referee::record::replay(game, record)?;
        let mut steps: Vec<Value> = Vec::with_capacity(states.len());
        let mut bytes = 0usize;
        for (step, state) in states.iter().enumerate() {
            let frame = json!({
                "step": step,
                "drawing": game.drawing(state),
                "text": game.show_state(state),
                "moves": step.checked_sub(1).map(|s| shown_moves(game, &states[s], &record.moves[s])),
                "errors": step.checked_sub(1).and_then(|s| record.errors.get(s)),
            });
            bytes += frame.to_string().len();
            if bytes > limit {
                return Err(format!(
                    "the replay's first {} states take more than the {limit} bytes a replay may \
                     send",
                    step + 1,
                ));
            }
            steps.push(frame);
        }
        Ok(json!({
            "game": game.info().name,
            "roles": game.info().roles,
            "players": record.player_names_from_host,
            "steps": steps,
            "goals": record.goal_values,
            "completed": record.is_completed,
        }))
    }
}
