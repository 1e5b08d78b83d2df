//! The pages' files, embedded in the binary so that an installed `ggp-run` serves them with nothing
//! else on the machine: one HTML page, its script and its stylesheet, no build step.

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

use super::shared::{ApiError, Segment};

const INDEX: &str = include_str!("assets/index.html");

/// The files under `/assets/`: name, content type, content.
const FILES: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
];

/// `GET /`: the page (it shows the library, the editor, a match, a replay or a tournament by the
/// address's `#` part).
pub async fn index() -> Html<&'static str> {
    Html(INDEX)
}

/// `GET /assets/{file}`.
pub async fn file(Segment(name): Segment) -> Result<Response, ApiError> {
    let (_, kind, text) = FILES
        .iter()
        .find(|f| f.0 == name)
        .ok_or_else(|| ApiError::not_found(format!("no asset `{name}`")))?;
    Ok(([(header::CONTENT_TYPE, *kind)], *text).into_response())
}
