//! Which game the command line names, and the one place where a game type is plugged in.
//!
//! A [`GameSpec`] is parsed from the GAME argument and its flags; [`GameSpec::visit`] builds the game and
//! hands it to a [`GameVisitor`], whose generic `visit` is each command's body. A new game type (the
//! rule engine, later) is one new variant and one new arm in `visit`.

use std::path::{Path, PathBuf};

use clap::Args;

use ggp::game::Game;
use ggp::games::connect4::Connect4;
use ggp::games::nim::Nim;
use ggp::games::tictactoe::TicTacToe;
use ggp::games::tree::TreeGame;

use super::CliError;

/// The GAME argument and the flags that shape a native game.
#[derive(Args, Debug, Clone)]
pub struct GameArgs {
    /// nim | tictactoe | connect4 | FILE.tree | FILE.gdl | FILE.kif
    // Optional to the type but required on the command line: the play form's copy of these flags sits
    // beside the subcommands, and must parse as absent when a subcommand is given.
    #[arg(required = true)]
    pub game: Option<String>,
    /// Nim: pieces in the pile [default: 21].
    #[arg(long)]
    pub pile: Option<u32>,
    /// Nim: whoever takes the last piece loses.
    #[arg(long)]
    pub misere: bool,
    /// Tic-tac-toe: board size N [default: 3].
    #[arg(long)]
    pub size: Option<usize>,
    /// Tic-tac-toe: marks in a row to win [default: the size].
    #[arg(long)]
    pub k: Option<usize>,
    /// Connect Four: rows [default: 6].
    #[arg(long)]
    pub rows: Option<u32>,
    /// Connect Four: columns [default: 7].
    #[arg(long)]
    pub cols: Option<u32>,
}

/// A game named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameSpec {
    /// Nim.
    Nim {
        /// Starting pile.
        pile: u32,
        /// Misère convention.
        misere: bool,
    },
    /// N×N tic-tac-toe, K in a row.
    TicTacToe {
        /// N.
        size: usize,
        /// K.
        k: usize,
    },
    /// Connect Four.
    Connect4 {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
    },
    /// An explicit game tree file.
    Tree(PathBuf),
    /// A GDL rule file (KIF or Epilog infix).
    Rules(PathBuf),
}

/// A command's body, generic over the game.
pub trait GameVisitor {
    /// What the command produces.
    type Output;
    /// Runs the command on `game`.
    fn visit<G: Game>(self, game: &G) -> Result<Self::Output, CliError>;
}

impl GameSpec {
    /// Reads the GAME argument and checks that only its own flags were given.
    pub fn from_args(a: &GameArgs) -> Result<GameSpec, CliError> {
        let name = a.game.as_deref().unwrap_or_default().trim();
        let lower = name.to_ascii_lowercase();
        let spec = match lower.as_str() {
            "nim" => GameSpec::Nim {
                pile: a.pile.unwrap_or(21),
                misere: a.misere,
            },
            "tictactoe" | "tic-tac-toe" | "ttt" => {
                let size = a.size.unwrap_or(3);
                GameSpec::TicTacToe {
                    size,
                    k: a.k.unwrap_or(size),
                }
            }
            "connect4" | "connect-four" | "c4" => GameSpec::Connect4 {
                rows: a.rows.unwrap_or(6),
                cols: a.cols.unwrap_or(7),
            },
            _ => match Path::new(name).extension().and_then(|e| e.to_str()) {
                Some("tree") => GameSpec::Tree(PathBuf::from(name)),
                Some("gdl" | "kif" | "hrf" | "lp") => GameSpec::Rules(PathBuf::from(name)),
                _ => {
                    return Err(CliError::Usage(format!(
                    "unknown game `{name}`: expected nim, tictactoe, connect4, a .tree file or a \
                         rule file (.gdl, .kif)"
                )))
                }
            },
        };
        let stray: Vec<&str> = [
            ("--pile", a.pile.is_some(), "nim"),
            ("--misere", a.misere, "nim"),
            ("--size", a.size.is_some(), "tictactoe"),
            ("--k", a.k.is_some(), "tictactoe"),
            ("--rows", a.rows.is_some(), "connect4"),
            ("--cols", a.cols.is_some(), "connect4"),
        ]
        .into_iter()
        .filter(|(_, given, owner)| *given && spec.kind() != *owner)
        .map(|(flag, _, _)| flag)
        .collect();
        if !stray.is_empty() {
            return Err(CliError::Usage(format!(
                "{} do(es) not apply to {}",
                stray.join(", "),
                spec.kind()
            )));
        }
        Ok(spec)
    }

    fn kind(&self) -> &'static str {
        match self {
            GameSpec::Nim { .. } => "nim",
            GameSpec::TicTacToe { .. } => "tictactoe",
            GameSpec::Connect4 { .. } => "connect4",
            GameSpec::Tree(_) => "a .tree file",
            GameSpec::Rules(_) => "a rule file",
        }
    }

    /// Builds the game and runs `visitor` on it.
    pub fn visit<V: GameVisitor>(&self, visitor: V) -> Result<V::Output, CliError> {
        match self {
            GameSpec::Nim { pile, misere } => visitor.visit(&Nim::new(*pile, *misere)),
            GameSpec::TicTacToe { size, k } => visitor.visit(&TicTacToe::new(*size, *k)?),
            GameSpec::Connect4 { rows, cols } => visitor.visit(&Connect4::new(*rows, *cols)?),
            GameSpec::Tree(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| CliError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                let tree = TreeGame::parse(&text).map_err(|e| CliError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                visitor.visit(&tree)
            }
            GameSpec::Rules(path) => Err(CliError::Usage(format!(
                "{}: rule files are not supported yet",
                path.display()
            ))),
        }
    }
}
