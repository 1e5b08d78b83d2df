//! A seat played by a player server over the GGP protocol (PROTOCOL.md in the shared reference): the
//! rules and clocks go out in `start`, each step's joint move in `play`, and the end in `stop` or
//! `abort`. Every request is bounded by its clock plus the referee's grace, and every reply by size.

use std::time::Duration;

use super::events::Violation;
use super::seat::{Answer, MatchStart, Seat, Turn};
use crate::diagnostics::printable;
use crate::game::Game;
use crate::players::Stop;
use crate::protocol::messages::{parse_one, Message, Sexp};

/// The longest reply read from a player: a move is a few dozen bytes.
const MAX_REPLY_BYTES: u64 = 64 * 1024;

/// How long a player has to say its name.
const INFO_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the goodbye of a stopped match may take: a player still thinking may answer only after
/// its search, and nothing waits for that answer.
const STOPPED_GOODBYE: Duration = Duration::from_secs(2);

/// The most requests a stop has left running, each on a thread of its own until its timeout: past
/// it, a stopped match waits for its reply as before, holding its place.
const MOST_LEFT_RUNNING: usize = 64;

/// The requests a stop has left running now.
static LEFT_RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A player server at a URL.
#[derive(Clone)]
pub struct RemoteSeat {
    agent: ureq::Agent,
    url: String,
    receiver: String,
    match_id: String,
    /// Whether `start` was answered (only then is the player told the end).
    started: bool,
    /// How long the goodbye may take.
    goodbye: Duration,
    /// Whether the match was stopped while a request waited (then the goodbye is short).
    stopped: bool,
}

impl RemoteSeat {
    /// A seat for the player server at `url` (`http://host:port`).
    pub fn new(url: &str) -> RemoteSeat {
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
        RemoteSeat {
            agent,
            url: url.to_string(),
            receiver,
            match_id: String::new(),
            started: false,
            goodbye: Duration::from_secs(2),
            stopped: false,
        }
    }

    /// Sends `message` and waits at most `timeout` for the reply.
    fn send(&self, message: &Message, timeout: Duration) -> Result<String, Violation> {
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
            ureq::Error::Timeout(_) => Violation::Timeout {
                detail: format!("no reply within {timeout:.1?}"),
            },
            other => Violation::ConnectionError {
                detail: format!("{}: {other}", self.url),
            },
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
            return Err(Violation::ConnectionError {
                detail: format!(
                    "{} answered HTTP {status}: {}",
                    self.url,
                    printable(&body, 200)
                ),
            });
        }
        Ok(body)
    }

    /// [`send`](Self::send), unless `stop` is set first: then the match no longer waits for the
    /// reply (the request runs on, to its own timeout, on a thread of its own; at most
    /// [`MOST_LEFT_RUNNING`] at once, past which the reply is waited for as without a stop).
    fn send_unless_stopped(
        &mut self,
        message: Message,
        timeout: Duration,
        stop: Option<Stop>,
    ) -> Result<String, Violation> {
        use std::sync::atomic::Ordering;
        let Some(stop) = stop else {
            return self.send(&message, timeout);
        };
        if LEFT_RUNNING.load(Ordering::Acquire) >= MOST_LEFT_RUNNING {
            return self.send(&message, timeout);
        }
        // Whether the request has ended, or been left running: whichever of the two marks second
        // finds the other's mark, so the count of requests left running is raised once and
        // lowered once.
        const RUNNING: u8 = 0;
        const ENDED: u8 = 1;
        const LEFT: u8 = 2;
        let fate = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(RUNNING));
        let (tx, rx) = std::sync::mpsc::channel();
        let seat = self.clone();
        let ends = std::sync::Arc::clone(&fate);
        let spawned = std::thread::Builder::new()
            .name("remote player".into())
            .spawn(move || {
                let _ = tx.send(seat.send(&message, timeout));
                if ends.swap(ENDED, Ordering::AcqRel) == LEFT {
                    LEFT_RUNNING.fetch_sub(1, Ordering::AcqRel);
                }
            });
        if let Err(e) = spawned {
            return Err(Violation::ConnectionError {
                detail: format!("no thread for the request: {e}"),
            });
        }
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(reply) => return reply,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Violation::ConnectionError {
                        detail: "the request failed".into(),
                    })
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if stop.is_set() => {
                    // Raised before the mark, so the thread's lowering never comes first.
                    LEFT_RUNNING.fetch_add(1, Ordering::AcqRel);
                    if fate.swap(LEFT, Ordering::AcqRel) == ENDED {
                        LEFT_RUNNING.fetch_sub(1, Ordering::AcqRel);
                    }
                    self.stopped = true;
                    return Err(Violation::ConnectionError {
                        detail: "the match was stopped before the player answered".into(),
                    });
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The player's name from `(info)`, if it says one.
    fn info_name(&self) -> Option<String> {
        let reply = self.send(&Message::Info, INFO_TIMEOUT).ok()?;
        let Sexp::List(items, _) = parse_one(&reply).ok()? else {
            return None;
        };
        items.iter().find_map(|item| match item {
            Sexp::List(pair, _) if pair.len() == 2 && pair[0].is_word("name") => {
                Some(printable(&pair[1].to_string(), 100))
            }
            _ => None,
        })
    }

    fn kif_moves<G: Game>(game: &G, joint: Option<&[G::Move]>) -> Option<Vec<String>> {
        joint.map(|j| j.iter().map(|m| game.move_kif(m)).collect())
    }
}

impl<G: Game> Seat<G> for RemoteSeat {
    fn name(&self) -> String {
        self.url.clone()
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn start(&mut self, game: &G, start: &MatchStart<'_>) -> Result<String, Violation> {
        let rules = start.rules.ok_or_else(|| Violation::ConnectionError {
            detail: "a remote player is sent the game's rules, and this game has none (play a \
                     rule file)"
                .into(),
        })?;
        let name = self.info_name().unwrap_or_else(|| self.receiver.clone());
        self.match_id = start.match_id.to_string();
        self.goodbye = start.clock.play + Duration::from_secs(1);
        let message = Message::Start {
            match_id: start.match_id.to_string(),
            role: game.info().roles[start.role].clone(),
            rules: rules.to_string(),
            start_clock: start.clock.start.as_secs_f64(),
            play_clock: start.clock.play.as_secs_f64(),
        };
        match self.send_unless_stopped(
            message,
            start.clock.start + Duration::from_secs(1),
            start.stop,
        ) {
            // A player in another match says so, and will not play this one.
            Ok(reply) if reply.trim().eq_ignore_ascii_case("busy") => {
                Err(Violation::ConnectionError {
                    detail: format!("{} replied `busy`", self.url),
                })
            }
            Ok(reply) if is_ready(&reply) => {
                self.started = true;
                Ok(name)
            }
            Ok(reply) => {
                // It answered something: it may have taken the match, so it is told the end.
                self.started = true;
                Err(Violation::ConnectionError {
                    detail: format!(
                        "{} replied `{}` to start, not `ready`",
                        self.url,
                        crate::diagnostics::printable(reply.trim(), 60)
                    ),
                })
            }
            Err(problem) => {
                // Stopped while the player prepared: it may have taken the match, so it is told the
                // end.
                self.started = self.stopped;
                Err(problem)
            }
        }
    }

    fn ask(&mut self, turn: &Turn<'_, G>) -> Answer<G::Move> {
        let message = Message::Play {
            match_id: self.match_id.clone(),
            moves: Self::kif_moves(turn.game, turn.last),
        };
        let reply = match self.send_unless_stopped(message, turn.limit(), turn.stop) {
            Ok(reply) => reply,
            Err(problem) => return Answer::Failed(problem),
        };
        // What a remote player sends is printed on terminals and pages: no escape sequences.
        let shown = printable(reply.trim(), 100);
        let illegal = |detail: String| {
            Answer::Failed(Violation::Illegal {
                answer: shown.clone(),
                detail,
            })
        };
        let sexp = match parse_one(&reply) {
            Ok(sexp) => sexp,
            Err(e) => {
                return illegal(format!(
                    "unreadable reply `{shown}`: {}",
                    printable(&e.to_string(), 200)
                ))
            }
        };
        match turn
            .game
            .parse_move(turn.state, turn.role, &sexp.to_string())
        {
            Ok(mv) => Answer::Move {
                mv,
                stats: None,
                explanation: None,
            },
            Err(e) => illegal(printable(&e.to_string(), 300)),
        }
    }

    fn finish(&mut self, game: &G, last: Option<&[G::Move]>, completed: bool) {
        if !self.started {
            return;
        }
        let match_id = self.match_id.clone();
        let goodbye = if completed {
            Message::Stop {
                match_id,
                moves: Self::kif_moves(game, last),
            }
        } else {
            Message::Abort { match_id }
        };
        // The answer does not matter.
        let wait = match self.stopped {
            true => self.goodbye.min(STOPPED_GOODBYE),
            false => self.goodbye,
        };
        let _ = self.send(&goodbye, wait);
    }
}

/// Whether a reply to start says the player is ready: `ready` in any letter case, also in
/// parentheses, as some players write it.
fn is_ready(reply: &str) -> bool {
    let reply = reply.trim();
    let bare = reply
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(reply);
    bare.trim().eq_ignore_ascii_case("ready")
}
