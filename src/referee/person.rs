//! A person at a terminal: the legal moves listed, a move read, asked again until it is legal.
//!
//! Lines are read on a thread of their own and handed over through a channel, so a seat with a clock
//! stops waiting when the clock runs out (the referee then plays a random legal move for the person
//! and says so), and the referee is never stuck on a read.

use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::events::Violation;
use super::seat::{Answer, MatchStart, Seat, Turn};
use crate::game::{kif_form, Game};

/// A person typing moves (see the module documentation).
pub struct Terminal {
    lines: Receiver<std::io::Result<String>>,
    output: Box<dyn Write + Send>,
    timed: bool,
    can_take_back: bool,
}

impl Terminal {
    /// A person on standard input and output; `timed` when their moves must come within the play
    /// clock.
    pub fn stdio(timed: bool) -> Terminal {
        Terminal::new(
            Box::new(std::io::BufReader::new(std::io::stdin())),
            Box::new(std::io::stdout()),
            timed,
        )
    }

    /// A person on any reader and writer (tests feed it a script).
    pub fn new(
        input: Box<dyn BufRead + Send>,
        output: Box<dyn Write + Send>,
        timed: bool,
    ) -> Terminal {
        let (tx, rx) = std::sync::mpsc::channel();
        // The reader thread ends with the input; a reader still blocked when the program ends is
        // simply dropped with it.
        std::thread::spawn(move || {
            let mut input = input;
            loop {
                // Bytes that are not UTF-8 (a terminal in another encoding) make a line that names no
                // move, answered as any mistyped move is, rather than an end of input.
                let mut bytes = Vec::new();
                match input.read_until(b'\n', &mut bytes) {
                    Ok(0) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&bytes).into_owned();
                        if tx.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        Terminal {
            lines: rx,
            output,
            timed,
            can_take_back: false,
        }
    }

    /// The next line typed, or why there is none: `Ok(None)` when the input ended, an error when the
    /// clock ran out first.
    fn read(&mut self, until: Option<Instant>) -> Result<Option<String>, Violation> {
        let next = match until {
            None => self
                .lines
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => self
                .lines
                .recv_timeout(t.saturating_duration_since(Instant::now())),
        };
        match next {
            Ok(Ok(line)) => Ok(Some(line)),
            Ok(Err(e)) => Err(Violation::ConnectionError {
                detail: format!("the input could not be read: {e}"),
            }),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
            Err(RecvTimeoutError::Timeout) => Err(Violation::Timeout {
                detail: "the play clock ran out while waiting for a move".into(),
            }),
        }
    }

    fn say(&mut self, text: std::fmt::Arguments<'_>) {
        // The person's terminal going away ends their input too; nothing else to do about it here.
        let _ = self.output.write_fmt(text);
        let _ = self.output.flush();
    }
}

impl<G: Game> Seat<G> for Terminal {
    fn name(&self) -> String {
        "human".to_string()
    }

    fn timed(&self) -> bool {
        self.timed
    }

    fn start(&mut self, _game: &G, start: &MatchStart<'_>) -> Result<String, Violation> {
        self.can_take_back = start.can_take_back;
        Ok("human".to_string())
    }

    fn ask(&mut self, turn: &Turn<'_, G>) -> Answer<G::Move> {
        let game = turn.game;
        let mut moves = Vec::new();
        game.legal_moves(turn.state, turn.role, &mut moves);
        // A role with a single move (the waiting role's no-op) has nothing to decide.
        if moves.len() == 1 {
            return Answer::Move {
                mv: moves.swap_remove(0),
                stats: None,
                explanation: None,
            };
        }
        let role = game.info().roles[turn.role].clone();
        // A role the rules give no move cannot be asked for one: the rules are at fault.
        if moves.is_empty() {
            return Answer::Failed(Violation::Illegal {
                answer: String::new(),
                detail: format!(
                    "{role} has no legal move in this state, so there is nothing to type"
                ),
            });
        }
        let listing: Vec<String> = moves.iter().map(|m| game.show_move(m)).collect();
        let until = self.timed.then(|| turn.asked + turn.clock.play);
        self.say(format_args!(
            "Legal moves for {role}: {}\n",
            listing.join(" ")
        ));
        if let Some(until) = until {
            let left = until.saturating_duration_since(Instant::now());
            self.say(format_args!(
                "({:.0} s to answer)\n",
                left.max(Duration::from_secs(1)).as_secs_f64()
            ));
        }
        loop {
            self.say(format_args!("{role}, please type your move: "));
            let line = match self.read(until) {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.say(format_args!("\n"));
                    return Answer::Quit;
                }
                Err(v) => {
                    self.say(format_args!("\n{}\n", v.detail()));
                    return Answer::Failed(v);
                }
            };
            let typed = line.trim();
            match typed {
                "" => continue,
                "help" | "?" => {
                    let undo = if self.can_take_back {
                        "`undo` takes back the last full round, "
                    } else {
                        ""
                    };
                    self.say(format_args!(
                        "Type one of the legal moves, as listed (`{}`) or in the other syntax \
                         (`{}`); a bare argument like `{}` picks the one move that has it. `moves` \
                         lists the legal moves again, {undo}and the end of input (Ctrl-D) stops the \
                         match.\n",
                        listing[0],
                        kif_form(&listing[0]),
                        only_argument(&listing[0]).unwrap_or("4"),
                    ));
                    continue;
                }
                "moves" => {
                    self.say(format_args!(
                        "Legal moves for {role}: {}\n",
                        listing.join(" ")
                    ));
                    continue;
                }
                "undo" if self.can_take_back => return Answer::TakeBack,
                "undo" => {
                    self.say(format_args!(
                        "Moves cannot be taken back in this match: a player outside this program \
                         has seen them.\n"
                    ));
                    continue;
                }
                _ => {}
            }
            let parsed = match game.parse_move(turn.state, turn.role, typed) {
                Ok(mv) => Ok(mv),
                Err(e) => by_argument(&moves, &listing, typed)
                    .map_err(|hint| hint.unwrap_or_else(|| e.to_string())),
            };
            match parsed {
                Ok(mv) => {
                    return Answer::Move {
                        mv,
                        stats: None,
                        explanation: None,
                    }
                }
                // The error lists the legal moves once.
                Err(e) => self.say(format_args!("{e}\n")),
            }
        }
    }
}

/// The one legal move whose only argument is `typed` (`4` for `drop(4)` or `(drop 4)`). When `typed`
/// is an argument of several moves (`2` in tic-tac-toe, a row or a column), the error says which, so
/// the person knows to type the whole move; `Err(None)` when no move has it.
fn by_argument<M: Clone>(
    moves: &[M],
    listing: &[String],
    typed: &str,
) -> Result<M, Option<String>> {
    if typed.is_empty() || typed.contains(|c: char| c.is_whitespace() || "(),".contains(c)) {
        return Err(None);
    }
    let only: Vec<usize> = (0..listing.len())
        .filter(|&i| only_argument(&listing[i]) == Some(typed))
        .collect();
    if let [i] = only.as_slice() {
        return Ok(moves[*i].clone());
    }
    let having: Vec<&str> = listing
        .iter()
        .filter(|text| arguments(text).any(|a| a == typed))
        .map(String::as_str)
        .collect();
    match having.as_slice() {
        [] => Err(None),
        [one] => Err(Some(format!(
            "`{typed}` is not a move; did you mean {one}?"
        ))),
        several => {
            let shown = several.len().min(6);
            let more = if several.len() > shown { ", ..." } else { "" };
            Err(Some(format!(
                "`{typed}` could be any of {}{more}; type the whole move",
                several[..shown].join(", ")
            )))
        }
    }
}

/// The arguments of a move written `name(a,b)` or `(name a b)`.
fn arguments(text: &str) -> impl Iterator<Item = &str> {
    let text = text.trim();
    let inner = match text.strip_prefix('(') {
        Some(rest) => rest
            .strip_suffix(')')
            .and_then(|r| r.split_once(char::is_whitespace).map(|(_, args)| args)),
        None => text.split_once('(').and_then(|(_, r)| r.strip_suffix(')')),
    };
    inner
        .unwrap_or("")
        .split(|c: char| c == ',' || c.is_whitespace())
        .map(str::trim)
        .filter(|a| !a.is_empty())
}

/// `4` in `drop(4)` or `(drop 4)`: the single argument of a move written with one.
fn only_argument(text: &str) -> Option<&str> {
    let text = text.trim();
    let inner = if let Some(rest) = text.strip_prefix('(') {
        let mut words = rest.strip_suffix(')')?.split_whitespace();
        let (_, arg) = (words.next()?, words.next()?);
        return words.next().is_none().then_some(arg);
    } else {
        text.split_once('(')?.1.strip_suffix(')')?
    };
    (!inner.contains(',')).then_some(inner.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_argument_picks_the_one_move_that_has_it() {
        let listing: Vec<String> = ["drop(1)", "drop(2)"].map(String::from).to_vec();
        assert_eq!(by_argument(&[1, 2], &listing, "2"), Ok(2));
        assert_eq!(by_argument(&[1, 2], &listing, "3"), Err(None));
        let marks: Vec<String> = ["mark(1,2)", "mark(2,1)", "mark(3,3)"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            by_argument(&[1, 2, 3], &marks, "2"),
            Err(Some(
                "`2` could be any of mark(1,2), mark(2,1); type the whole move".into()
            ))
        );
        let kif: Vec<String> = ["(put 2)", "(move 2 3)"].map(String::from).to_vec();
        assert_eq!(by_argument(&[1, 2], &kif, "2"), Ok(1));
        assert_eq!(
            by_argument(&[1, 2], &kif, "3"),
            Err(Some("`3` is not a move; did you mean (move 2 3)?".into()))
        );
    }
}
