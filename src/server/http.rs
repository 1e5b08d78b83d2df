//! The HTTP side of the servers (the player server's and the web page's): connections accepted up
//! to a cap, each served by hyper with bounded headers, bodies ([`read_body`]) and stalled replies
//! ([`StallLimit`](super::stall::StallLimit)), and [`run_router`], their one way to run.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::Router;

use super::{stall, time_of_day, Log};

/// Why a request's body was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// More bytes than the server reads.
    #[error("the body is longer than the {0} bytes this server reads")]
    TooLarge(usize),
    /// Not all there within the read timeout.
    #[error("the body did not arrive within {0:?}")]
    Late(Duration),
    /// Broken off or malformed (a reset connection, a bad chunk).
    #[error("the body could not be read: {0}")]
    Broken(String),
}

impl BodyError {
    /// The status that answers it.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Late(_) => StatusCode::REQUEST_TIMEOUT,
            BodyError::Broken(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// A request's whole body, at most `limit` bytes and all there within `time`: the connection times
/// the headers only, and a body sent a byte a minute would otherwise hold a connection for ever.
pub(crate) async fn read_body(
    body: Body,
    limit: usize,
    time: Duration,
) -> Result<axum::body::Bytes, BodyError> {
    use http_body_util::BodyExt as _;
    let limited = http_body_util::Limited::new(body, limit);
    match tokio::time::timeout(time, limited.collect()).await {
        Err(_) => Err(BodyError::Late(time)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge(limit)),
        Ok(Err(e)) => {
            // hyper's errors name what was being done ("reading a body"), their sources what
            // went wrong (a bad chunk size).
            let mut why = e.to_string();
            let mut cause = e.source();
            while let Some(c) = cause {
                // axum's wrapper shows its source's text as its own.
                let text = c.to_string();
                if !why.ends_with(&text) {
                    why.push_str(": ");
                    why.push_str(&text);
                }
                cause = c.source();
            }
            Err(BodyError::Broken(why))
        }
    }
}

/// Connections served at once; more are refused on arrival (a 503 that says why, written within a
/// second, to at most [`MAX_REFUSING`] of them at a time; past that they are closed unanswered), so
/// that a flood costs the server nothing but the refusals.
pub const MAX_CONNECTIONS: usize = 512;

/// Refusals written at once; a flood past them is closed without a word.
const MAX_REFUSING: usize = 64;

/// What a connection past [`MAX_CONNECTIONS`] is told.
pub(super) const REFUSAL: &str = "the server holds as many connections as it takes; try again\n";

/// Serves `router` on `listener` until the process ends, each connection with a header read timeout
/// (so a client that trickles its headers is cut off like one that trickles its body) and at most
/// [`MAX_CONNECTIONS`] at once: the player server's and the web page's one way to serve.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    read_timeout: Duration,
    log: Log,
) -> std::io::Result<()> {
    serve_at_most(listener, router, read_timeout, log, MAX_CONNECTIONS).await
}

/// [`serve_router`] with room for `cap` connections.
pub(super) async fn serve_at_most(
    listener: tokio::net::TcpListener,
    router: Router,
    read_timeout: Duration,
    log: Log,
    cap: usize,
) -> std::io::Result<()> {
    let open = Arc::new(tokio::sync::Semaphore::new(cap));
    let refusing = Arc::new(tokio::sync::Semaphore::new(MAX_REFUSING));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted: wait a
                // moment rather than spin, and keep serving.
                log(&format!("{} - accept failed: {e}", time_of_day()));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            if let Ok(refusal) = Arc::clone(&refusing).try_acquire_owned() {
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    let _refusal = refusal;
                    let mut stream = stream;
                    let reply = format!(
                        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
                         Connection: close\r\nRetry-After: 1\r\nContent-Length: {}\r\n\r\n{REFUSAL}",
                        REFUSAL.len()
                    );
                    // Written, then the request read off and dropped: closing a socket with
                    // unread input resets it, and the reset may overtake the reply.
                    let refuse = async {
                        use tokio::io::AsyncReadExt;
                        stream.write_all(reply.as_bytes()).await?;
                        stream.shutdown().await?;
                        let mut sink = [0u8; 4096];
                        let mut left = 64usize << 10;
                        while left > 0 {
                            match stream.read(&mut sink).await? {
                                0 => break,
                                n => left = left.saturating_sub(n),
                            }
                        }
                        std::io::Result::Ok(())
                    };
                    let _ = tokio::time::timeout(Duration::from_secs(1), refuse).await;
                });
            }
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(read_timeout)
                // A simple manager may shut its side of the connection once its message is sent; it
                // still wants the reply.
                .half_close(true)
                .serve_connection(
                    // A reply the client does not read within the read timeout ends the
                    // connection: otherwise it would hold its place for as long as it liked.
                    hyper_util::rt::TokioIo::new(stall::StallLimit::new(stream, read_timeout)),
                    service,
                );
            // A connection that fails (a client that hung up, a timeout) concerns that client only.
            let _ = connection.await;
        });
    }
}

/// Binds `addr` (port 0 picks a free port), calls `bound` with the address bound, and serves `router`
/// for ever on a runtime of its own ([`serve_router`]): the player server's and the web page's one way
/// to run.
pub fn run_router(
    addr: SocketAddr,
    router: Router,
    read_timeout: Duration,
    log: Log,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        bound(listener.local_addr()?);
        serve_router(listener, router, read_timeout, log).await
    })
}
