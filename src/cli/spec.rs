//! Which game the command line names, and the one place where a game type is plugged in.
//!
//! A [`GameSpec`] is parsed from the GAME argument and its flags; [`GameSpec::visit`] builds the game and
//! hands it to a [`GameVisitor`], whose generic `visit` is each command's body. A new game type is one
//! new variant and one new arm in `visit`.
//!
//! A rule file runs on the grounded network when it grounds within its budget and on the Datalog
//! evaluator otherwise (`--engine` forces one); the choice and its reason are reported on stderr and
//! handed to the visitor as [`Loaded`].

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use ggp::engine::RuleGame;
use ggp::game::Game;
use ggp::games::connect4::Connect4;
use ggp::games::nim::Nim;
use ggp::games::tictactoe::TicTacToe;
use ggp::games::tree::TreeGame;
use ggp::network::{Budget, NetGame, NetworkError};
use ggp::players::PlayoutEstimate;

use super::CliError;

/// Random playouts behind each estimate of a rule game: enough to tell a won position from a lost one,
/// few enough that a depth-4 search plays a whole game of Connect Four in seconds.
pub const DEFAULT_ESTIMATE_PLAYOUTS: u32 = 8;

/// Seconds a rule file's network may take to build by default (the default [`Budget`]).
pub const DEFAULT_GROUNDING_SECONDS: u32 = 10;

/// Seconds the network may take when `--engine network` asks for it: a user who forces the network
/// would rather wait for it than get an error (chess's takes about 15 s).
pub const FORCED_GROUNDING_SECONDS: u32 = 120;

/// Which engine plays a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// The grounded network when the rules ground within budget, else the Datalog evaluator.
    Auto,
    /// The grounded propositional network (rule files).
    Network,
    /// The Datalog evaluator (rule files).
    Datalog,
    /// The hand-written game (native games).
    Native,
}

/// How the game a visitor receives was built.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// `native`, `tree`, `network` or `datalog`.
    pub engine: &'static str,
    /// Reading, parsing, checking, grounding and compiling.
    pub load: Duration,
    /// The network's propositions and gates.
    pub network_size: Option<(usize, usize)>,
    /// Why the network was not used, when it was tried.
    pub fallback: Option<String>,
    /// Whether the Datalog evaluator runs the rules demand-driven (see `ggp::engine::Evaluation`).
    pub demand: bool,
}

impl Loaded {
    fn native(engine: &'static str) -> Loaded {
        Loaded {
            engine,
            load: Duration::ZERO,
            network_size: None,
            fallback: None,
            demand: false,
        }
    }

    /// `engine=... load_ms=...` and the network's size, for one-line reports.
    pub fn fields(&self) -> String {
        let mut s = format!(
            "engine={} load_ms={:.1}",
            self.engine,
            self.load.as_secs_f64() * 1e3
        );
        if let Some((props, gates)) = self.network_size {
            s.push_str(&format!(" propositions={props} gates={gates}"));
        }
        if self.demand {
            s.push_str(" evaluation=demand");
        }
        s
    }
}

/// `cannot read FILE: no such file` when `path` cannot be read as a file, in one line: a file that is
/// not there has no line and column to show.
pub fn unreadable(path: &Path) -> Option<String> {
    let reason = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => "it is a directory".to_string(),
        Ok(_) => match std::fs::File::open(path) {
            Ok(_) => return None,
            Err(e) => io_reason(&e),
        },
        Err(e) => io_reason(&e),
    };
    Some(format!("cannot read {}: {reason}", path.display()))
}

/// An I/O error in a few plain words.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Reads, parses and checks a rule file; errors come back rendered with file, line and column.
pub fn read_rules(path: &Path) -> Result<(ggp::syntax::ast::Program, String), CliError> {
    if let Some(why) = unreadable(path) {
        return Err(CliError::Failed(why));
    }
    let file = path.display().to_string();
    let (program, src) = ggp::syntax::parse_file(path)
        .map_err(|(diags, src)| CliError::Rules(render_errors(&diags, &file, &src)))?;
    let report = ggp::check::check(&program);
    if !report.is_ok() {
        return Err(CliError::Rules(render_errors(&report.errors, &file, &src)));
    }
    Ok((program, src))
}

/// Renders the errors among `diags`, one after the other.
pub fn render_errors(diags: &[ggp::diagnostics::Diagnostic], file: &str, src: &str) -> String {
    let mut out = String::new();
    for d in diags.iter().filter(|d| d.is_error()) {
        out.push_str(&ggp::diagnostics::render(d, file, src));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out.trim_end().to_string()
}

/// A rule file loaded on one of the two engines.
pub enum RuleEngine {
    /// The grounded network.
    Network(Box<NetGame>),
    /// The Datalog evaluator.
    Datalog(Box<RuleGame>),
}

/// What to add to a network error that ran out of budget: the flag that gives it more.
pub fn budget_hint(e: &NetworkError) -> &'static str {
    match e {
        NetworkError::Budget(_) => {
            " (`--grounding-seconds S` gives the network S seconds and limits scaled alike)"
        }
        _ => "",
    }
}

/// Loads a rule file on the engine `choice` asks for (see the module documentation).
pub fn load_rules(
    path: &Path,
    choice: EngineChoice,
    budget: Budget,
) -> Result<(RuleEngine, Loaded), CliError> {
    let started = Instant::now();
    let (program, _) = read_rules(path)?;
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let engine_error = |e: String| CliError::File {
        path: path.to_path_buf(),
        message: e,
    };
    let mut fallback = None;
    if choice != EngineChoice::Datalog {
        match NetGame::from_program_within(&program, &name, budget) {
            Ok(g) => {
                let loaded = Loaded {
                    engine: "network",
                    load: started.elapsed(),
                    network_size: Some((g.num_propositions(), g.num_gates())),
                    fallback: None,
                    demand: false,
                };
                return Ok((RuleEngine::Network(Box::new(g)), loaded));
            }
            Err(e) if choice == EngineChoice::Network => {
                return Err(engine_error(format!(
                    "the network cannot be built: {e}{}",
                    budget_hint(&e)
                )));
            }
            Err(e) => fallback = Some(e.to_string()),
        }
    }
    let g = RuleGame::from_program(&program, &name).map_err(|e| engine_error(e.to_string()))?;
    let loaded = Loaded {
        engine: "datalog",
        load: started.elapsed(),
        network_size: None,
        fallback,
        demand: g.uses_demand(),
    };
    Ok((RuleEngine::Datalog(Box::new(g)), loaded))
}

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
    /// Tic-tac-toe: board size N, 1 to 8 [default: 3].
    #[arg(long)]
    pub size: Option<usize>,
    /// Tic-tac-toe: marks in a row to win [default: the size].
    #[arg(long)]
    pub k: Option<usize>,
    /// Connect Four: rows [default: 6]; the board is one 64-bit word, so (rows + 1) × cols must be at
    /// most 64 (7 columns take up to 8 rows, 8 columns 7, 10 columns 5).
    #[arg(long)]
    pub rows: Option<u32>,
    /// Connect Four: columns [default: 7]; see --rows for the limit.
    #[arg(long)]
    pub cols: Option<u32>,
    /// Rule files: the engine [default: auto, the network when it grounds within budget].
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,
    /// Rule files: random playouts per position a depth-limited player estimates; 0 estimates from goal
    /// values and mobility instead [default: 8].
    #[arg(long)]
    pub playouts: Option<u32>,
    /// Rule files: seconds the network may take to build before the Datalog evaluator takes over; its
    /// size limits scale with it [default: 10, or 120 with `--engine network`].
    #[arg(long, value_name = "SECONDS")]
    pub grounding_seconds: Option<u32>,
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
    /// A GDL rule file (KIF or Epilog infix), the engine to play it on, the playouts per estimate and
    /// the seconds the network may take to build.
    Rules(PathBuf, EngineChoice, u32, u32),
}

/// A command's body, generic over the game.
pub trait GameVisitor {
    /// What the command produces.
    type Output;
    /// Runs the command on `game`, built as `loaded` says.
    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<Self::Output, CliError>;
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
                Some("gdl" | "kif" | "hrf" | "epilog") => {
                    let engine = a.engine.unwrap_or(EngineChoice::Auto);
                    let seconds = match engine {
                        EngineChoice::Network => FORCED_GROUNDING_SECONDS,
                        _ => DEFAULT_GROUNDING_SECONDS,
                    };
                    GameSpec::Rules(
                        PathBuf::from(name),
                        engine,
                        a.playouts.unwrap_or(DEFAULT_ESTIMATE_PLAYOUTS),
                        a.grounding_seconds.unwrap_or(seconds),
                    )
                }
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
            ("--playouts", a.playouts.is_some(), "a rule file"),
            (
                "--grounding-seconds",
                a.grounding_seconds.is_some(),
                "a rule file",
            ),
        ]
        .into_iter()
        .filter(|(_, given, owner)| *given && spec.kind() != *owner)
        .map(|(flag, _, _)| flag)
        .collect();
        if let Some(engine) = a.engine {
            let fits = match spec {
                GameSpec::Rules(..) => engine != EngineChoice::Native,
                _ => engine == EngineChoice::Native,
            };
            if !fits {
                return Err(CliError::Usage(format!(
                    "--engine {} does not apply to {}: native games use `native`, rule files \
                     `auto`, `network` or `datalog`",
                    engine
                        .to_possible_value()
                        .map_or("?".into(), |v| v.get_name().to_string()),
                    spec.kind()
                )));
            }
        }
        if !stray.is_empty() {
            let verb = if stray.len() == 1 { "does" } else { "do" };
            return Err(CliError::Usage(format!(
                "{} {verb} not apply to {}",
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
            GameSpec::Rules(..) => "a rule file",
        }
    }

    /// Builds the game and runs `visitor` on it.
    pub fn visit<V: GameVisitor>(&self, visitor: V) -> Result<V::Output, CliError> {
        match self {
            GameSpec::Nim { pile, misere } => {
                visitor.visit(&Nim::new(*pile, *misere), &Loaded::native("native"))
            }
            GameSpec::TicTacToe { size, k } => {
                visitor.visit(&TicTacToe::new(*size, *k)?, &Loaded::native("native"))
            }
            GameSpec::Connect4 { rows, cols } => {
                visitor.visit(&Connect4::new(*rows, *cols)?, &Loaded::native("native"))
            }
            GameSpec::Tree(path) => {
                if let Some(why) = unreadable(path) {
                    return Err(CliError::Failed(why));
                }
                let text = std::fs::read_to_string(path).map_err(|e| CliError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                let tree = TreeGame::parse(&text).map_err(|e| CliError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                visitor.visit(&tree, &Loaded::native("tree"))
            }
            GameSpec::Rules(path, choice, playouts, seconds) => {
                let budget = Budget::for_seconds(f64::from(*seconds));
                let (game, loaded) = load_rules(path, *choice, budget)?;
                if let Some(why) = &loaded.fallback {
                    eprintln!("note: {why}; the Datalog evaluator plays this game");
                }
                match (game, playouts) {
                    (RuleEngine::Network(g), 0) => visitor.visit(g.as_ref(), &loaded),
                    (RuleEngine::Datalog(g), 0) => visitor.visit(g.as_ref(), &loaded),
                    (RuleEngine::Network(g), &n) => {
                        visitor.visit(&PlayoutEstimate::new(g.as_ref(), n), &loaded)
                    }
                    (RuleEngine::Datalog(g), &n) => {
                        visitor.visit(&PlayoutEstimate::new(g.as_ref(), n), &loaded)
                    }
                }
            }
        }
    }
}
