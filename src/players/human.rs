//! A person at the keyboard: lists the legal moves, reads one, asks again until it is legal.

use std::io::{BufRead, Write};
use std::time::Instant;

use crate::game::{Game, RoleIndex};
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
        let listing: Vec<String> = moves.iter().map(|m| game.show_move(m)).collect();
        let mut line = String::new();
        loop {
            writeln!(
                self.output,
                "Legal moves for {role_name}: {}",
                listing.join(" ")
            )?;
            write!(self.output, "{role_name}, please type your move: ")?;
            self.output.flush()?;
            line.clear();
            if self.input.read_line(&mut line)? == 0 {
                writeln!(self.output)?;
                return Err(PlayerError::EndOfInput);
            }
            if line.trim().is_empty() {
                continue;
            }
            match game.parse_move(state, role, &line) {
                Ok(mv) => {
                    return Ok(Choice {
                        mv,
                        stats: no_effort(started.elapsed()),
                    })
                }
                Err(e) => writeln!(self.output, "{e}")?,
            }
        }
    }
}
