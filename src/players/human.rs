//! A person at the keyboard: lists the legal moves, reads one, asks again until it is legal.

use std::io::{BufRead, Write};
use std::time::Instant;

use crate::game::{Game, GameError, RoleIndex};
use crate::players::search::no_effort;
use crate::players::{Choice, Deadline, Player, PlayerError};

/// Reads moves from `input` and prompts on `output`.
pub struct HumanPlayer {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
}

impl HumanPlayer {
    /// A human player on standard input and output.
    pub fn stdio() -> Self {
        HumanPlayer::new(
            Box::new(std::io::BufReader::new(std::io::stdin())),
            Box::new(std::io::stdout()),
        )
    }

    /// A human player on any reader and writer (tests feed it a script).
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> Self {
        HumanPlayer { input, output }
    }
}

impl<G: Game> Player<G> for HumanPlayer {
    fn name(&self) -> String {
        "human".to_string()
    }

    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        _deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError> {
        let started = Instant::now();
        let mut moves = Vec::new();
        game.legal_moves(state, role, &mut moves);
        // A role with a single move (the waiting role's no-op) has nothing to decide.
        if moves.len() == 1 {
            return Ok(Choice {
                mv: moves.swap_remove(0),
                stats: no_effort(started.elapsed()),
            });
        }
        let role_name = game
            .info()
            .roles
            .get(role)
            .map_or("?", |r| r.as_str())
            .to_string();
        // A role the rules give no move cannot be asked for one: the rules are at fault.
        if moves.is_empty() {
            return Err(PlayerError::Game(GameError::Rules(format!(
                "{role_name} has no legal move in this state, so there is nothing to type"
            ))));
        }
        let listing: Vec<String> = moves.iter().map(|m| game.show_move(m)).collect();
        writeln!(
            self.output,
            "Legal moves for {role_name}: {}",
            listing.join(" ")
        )?;
        let mut line = String::new();
        loop {
            write!(self.output, "{role_name}, please type your move: ")?;
            self.output.flush()?;
            line.clear();
            if self.input.read_line(&mut line)? == 0 {
                writeln!(self.output)?;
                return Err(PlayerError::EndOfInput);
            }
            let typed = line.trim();
            match typed {
                "" => continue,
                "help" | "?" => {
                    writeln!(
                        self.output,
                        "Type one of the legal moves, as listed (`{}`) or in the other syntax \
                         (`{}`); a bare argument like `{}` picks the one move that has it. `moves` \
                         lists the legal moves again, `undo` takes back the last full round, and the \
                         end of input (Ctrl-D) stops the match.",
                        listing[0],
                        kif_form(&listing[0]),
                        bare_example(&listing[0]).unwrap_or("4"),
                    )?;
                    continue;
                }
                "moves" => {
                    writeln!(
                        self.output,
                        "Legal moves for {role_name}: {}",
                        listing.join(" ")
                    )?;
                    continue;
                }
                "undo" => return Err(PlayerError::Undo),
                _ => {}
            }
            let parsed = game
                .parse_move(state, role, typed)
                .or_else(|e| by_argument(&moves, &listing, typed).cloned().ok_or(e));
            match parsed {
                Ok(mv) => {
                    return Ok(Choice {
                        mv,
                        stats: no_effort(started.elapsed()),
                    })
                }
                // The error lists the legal moves once.
                Err(e) => writeln!(self.output, "{e}")?,
            }
        }
    }
}

/// The one legal move whose only argument is `typed` (`4` for `drop(4)` or `(drop 4)`), if exactly one
/// has it.
fn by_argument<'m, M>(moves: &'m [M], listing: &[String], typed: &str) -> Option<&'m M> {
    if typed.is_empty() || typed.contains(|c: char| c.is_whitespace() || "(),".contains(c)) {
        return None;
    }
    let mut found = listing
        .iter()
        .zip(moves)
        .filter(|(text, _)| only_argument(text) == Some(typed));
    match (found.next(), found.next()) {
        (Some((_, mv)), None) => Some(mv),
        _ => None,
    }
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

/// An example of a bare argument for the help text, when the moves take one.
fn bare_example(text: &str) -> Option<&str> {
    only_argument(text)
}

/// `mark(1,2)` as KIF writes it, `(mark 1 2)`, for the help text (a KIF move is returned as it is).
fn kif_form(text: &str) -> String {
    match text.split_once('(') {
        Some((name, args)) if !name.is_empty() => {
            let args: Vec<&str> = args
                .trim_end_matches(')')
                .split(',')
                .map(str::trim)
                .collect();
            format!("({name} {})", args.join(" "))
        }
        _ => text.to_string(),
    }
}
