//! GGP players that misbehave on purpose, for the referee's tests: late, illegal, unreadable,
//! missing the start, sending escape sequences, or hanging up.

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// How a test player misbehaves.
#[derive(Clone, Copy, Debug)]
pub enum Misbehaviour {
    /// Replies to `play` long after the play clock.
    Sleeps,
    /// Replies with a move that is not legal.
    Illegal,
    /// Replies with text that is not an s-expression.
    Garbage,
    /// Never replies to `start` in time.
    MissesStart,
    /// Names itself and replies with a terminal's escape sequences (which must not reach the
    /// operator's terminal).
    Escapes,
    /// Replies to `play` only after an hour.
    Silent,
    /// Replies to `start` with something other than `ready`.
    GarbageStart,
}

/// A test player written with axum: ready to start, and misbehaving as told.
///
/// It serves on a thread of its own until the test process ends.
pub fn misbehaving_player(how: Misbehaviour) -> String {
    use axum::Router;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = Router::new().fallback(move |body: String| async move {
                let lower = body.trim_start().to_ascii_lowercase();
                if lower.starts_with("(info") {
                    if let Misbehaviour::Escapes = how {
                        return "((name \"evil\u{1b}[2J\") (status available))".to_string();
                    }
                    return "((name misbehaving) (status available))".to_string();
                }
                if lower.starts_with("(start") {
                    match how {
                        Misbehaviour::MissesStart => {
                            tokio::time::sleep(Duration::from_secs(4)).await
                        }
                        Misbehaviour::GarbageStart => return "(((garbage".to_string(),
                        _ => {}
                    }
                    return "ready".to_string();
                }
                if lower.starts_with("(play") {
                    return match how {
                        Misbehaviour::Sleeps => {
                            tokio::time::sleep(Duration::from_secs(3)).await;
                            "noop".to_string()
                        }
                        Misbehaviour::Silent => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            "noop".to_string()
                        }
                        Misbehaviour::Illegal => "(mark 9 9)".to_string(),
                        Misbehaviour::Garbage => ")) not ((a move".to_string(),
                        Misbehaviour::MissesStart | Misbehaviour::GarbageStart => {
                            "noop".to_string()
                        }
                        Misbehaviour::Escapes => "(mark \u{1b}[2J 9)".to_string(),
                    };
                }
                "done".to_string()
            });
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
    url
}

/// A test player that accepts connections and closes them without a word.
pub fn hanging_up_player() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let started = Instant::now();
        // Bounded: the test's matches are over well within this.
        while started.elapsed() < Duration::from_secs(60) {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    let mut buf = [0u8; 64];
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    let _ = stream.read(&mut buf);
                    // Dropped: the connection closes with no reply.
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    url
}
