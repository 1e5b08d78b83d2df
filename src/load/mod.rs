//! One way to load a game: a native game's name, a `.tree` file, a rule file or rules sent as text,
//! with the options that shape it, become one [`AnyGame`] that every caller uses (the command line, the
//! player server, the referee, tournaments, the learner).
//!
//! A rule file is read, parsed and checked, then built as the grounded network when it grounds within
//! its budget and on the Datalog evaluator otherwise ([`EngineChoice`] forces one). Why the network was
//! not used is data ([`LoadReport::fallback`]), for the caller to say. Each game comes with the
//! [`Evaluator`] its depth-limited searches judge positions by: a native game's hand-written heuristic,
//! a tree's values, and for rule files, which bring no heuristic, random playouts ([`Playouts`]) or, with
//! zero playouts, goals and mobility.
//!
//! [`AnyGame::visit`] runs code generic over the game type on whichever game was loaded ([`Visitor`]).
//! [`AnyGame::play_test`] plays random matches on a loaded rule game for what the checker cannot see
//! in the rules alone ([`play_test`]: a role left without a move, a terminal state without its goals).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod playtest;
pub mod position;

pub use playtest::{play_test, PlayTest, PlayTestReport, RulePlaces};

use crate::diagnostics::Diagnostic;
use crate::engine::{EngineError, RuleGame};
use crate::evaluators::{Evaluator, GoalMobility, Playouts};
use crate::game::{Game, GameError, GameInfo};
use crate::games::connect4::{self, Connect4};
use crate::games::nim::{self, Nim};
use crate::games::tictactoe::{self, TicTacToe};
use crate::games::tree::{TreeError, TreeGame, TreeValues};
use crate::network::{Budget, NetGame, NetworkError, PlayoutMethod};
use crate::print::ConvertError;
use crate::syntax::ast::{Program, Syntax};

/// Seconds a rule file's network may take to build by default (the default [`Budget`]).
pub const DEFAULT_GROUNDING: Duration = Duration::from_secs(10);

/// Seconds the network may take when [`EngineChoice::Network`] asks for it: a user who forces the
/// network would rather wait for it than get an error (chess's takes a few seconds).
pub const FORCED_GROUNDING: Duration = Duration::from_secs(120);

/// A hand-written game and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeGame {
    /// Nim: a pile, take one to three.
    Nim {
        /// Starting pile.
        pile: u32,
        /// Whoever takes the last piece loses.
        misere: bool,
    },
    /// N×N tic-tac-toe, K in a row.
    TicTacToe {
        /// N.
        size: usize,
        /// K.
        k: usize,
    },
    /// R×C Connect Four.
    Connect4 {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
    },
}

/// Where a game comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameSource {
    /// A hand-written game.
    Native(NativeGame),
    /// An explicit game tree file (seed 3's trees).
    Tree(PathBuf),
    /// A rule file, KIF or Epilog infix.
    RuleFile(PathBuf),
    /// Rules as text (a manager's `start` message, a page's editor), with a name for the game.
    RuleText {
        /// The rules.
        text: String,
        /// The game's name.
        name: String,
        /// Their syntax.
        syntax: Syntax,
    },
}

impl GameSource {
    /// The source a command line names: `nim`, `tictactoe`, `connect4` (with their default sizes), a
    /// `.tree` file or a rule file.
    pub fn named(name: &str) -> Result<GameSource, LoadError> {
        let name = name.trim();
        Ok(match name.to_ascii_lowercase().as_str() {
            "nim" => GameSource::Native(NativeGame::Nim {
                pile: 21,
                misere: false,
            }),
            "tictactoe" | "tic-tac-toe" | "ttt" => {
                GameSource::Native(NativeGame::TicTacToe { size: 3, k: 3 })
            }
            "connect4" | "connect-four" | "c4" => {
                GameSource::Native(NativeGame::Connect4 { rows: 6, cols: 7 })
            }
            _ => match Path::new(name).extension().and_then(|e| e.to_str()) {
                Some(ext) if ext.eq_ignore_ascii_case("tree") => GameSource::Tree(name.into()),
                Some(ext)
                    if ["gdl", "kif", "hrf", "epilog"]
                        .iter()
                        .any(|e| ext.eq_ignore_ascii_case(e)) =>
                {
                    GameSource::RuleFile(name.into())
                }
                // A file of another name is read as rules, in the syntax its text is written in.
                _ if Path::new(name).is_file() => GameSource::RuleFile(name.into()),
                _ => return Err(LoadError::UnknownGame(name.to_string())),
            },
        })
    }

    /// Whether the game is written as rules.
    pub fn is_rules(&self) -> bool {
        matches!(self, GameSource::RuleFile(_) | GameSource::RuleText { .. })
    }
}

/// Which engine plays a rule file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// The grounded network when the rules ground within budget, else the Datalog evaluator.
    #[default]
    Auto,
    /// The grounded propositional network.
    Network,
    /// The Datalog evaluator.
    Datalog,
}

/// How to load a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// The engine of a rule file.
    pub engine: EngineChoice,
    /// The time the network may take to build (its size limits scale with it); `None` for the default
    /// of the engine choice ([`DEFAULT_GROUNDING`], or [`FORCED_GROUNDING`] when the network is forced).
    pub grounding: Option<Duration>,
    /// Random playouts behind each judgement of a rule game's position; 0 judges by goals and mobility.
    pub playouts: u32,
    /// Run the network's full passes on the interpreter (the reference) instead of as machine code
    /// (see [`NetGame::set_compiled`]).
    pub interpreted: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            engine: EngineChoice::Auto,
            grounding: None,
            playouts: crate::evaluators::DEFAULT_PLAYOUTS,
            interpreted: false,
        }
    }
}

impl LoadOptions {
    /// The time the network may take.
    pub fn grounding_time(&self) -> Duration {
        self.grounding.unwrap_or(match self.engine {
            EngineChoice::Network => FORCED_GROUNDING,
            _ => DEFAULT_GROUNDING,
        })
    }
}

/// What plays a loaded game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// A hand-written game.
    Native,
    /// An explicit game tree.
    Tree,
    /// The grounded propositional network.
    Network,
    /// The Datalog evaluator.
    Datalog,
}

impl EngineKind {
    /// `native`, `tree`, `network` or `datalog`.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Native => "native",
            EngineKind::Tree => "tree",
            EngineKind::Network => "network",
            EngineKind::Datalog => "datalog",
        }
    }

    /// Whether the game is played from its rules.
    pub fn is_rules(self) -> bool {
        matches!(self, EngineKind::Network | EngineKind::Datalog)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a game was loaded.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// What plays it.
    pub engine: EngineKind,
    /// Reading, parsing, checking, grounding and compiling.
    pub took: Duration,
    /// The network's propositions and gates.
    pub network_size: Option<(usize, usize)>,
    /// Why the network was not used, when it was tried.
    pub fallback: Option<NetworkError>,
    /// Whether the Datalog evaluator runs the rules demand-driven (see `crate::engine::Evaluation`).
    pub demand: bool,
    /// Whether the network's full passes run as machine code (see [`NetGame::set_compiled`]).
    pub compiled: bool,
    /// How many times as fast 64 playouts at once run as one at a time, once measured (see
    /// [`Game::batch_speedup`]).
    pub batch_speedup: Option<f64>,
    /// How the network's random playouts run (chosen by timing both on the thread that compiles the
    /// passes, or at load where they run interpreted; see [`NetGame::playout_method`]).
    pub playout_method: Option<PlayoutMethod>,
    /// Whether propagating playouts take each step's joint move back rather than leave it set
    /// (chosen with the playout method; see [`NetGame::step_undo`]).
    pub step_undo: bool,
    /// Whether propagating playouts play a turn whose writes are known by them (chosen with the
    /// playout method; see [`NetGame::turns_by_writes`]).
    pub turns_by_writes: bool,
}

impl LoadReport {
    fn native(engine: EngineKind) -> LoadReport {
        LoadReport {
            engine,
            took: Duration::ZERO,
            network_size: None,
            fallback: None,
            demand: false,
            compiled: false,
            batch_speedup: None,
            playout_method: None,
            step_undo: false,
            turns_by_writes: false,
        }
    }
}

/// A game's rules as they were read: what remote players are sent and what a page shows.
#[derive(Debug)]
pub struct Rules {
    /// The parsed, checked program.
    pub program: Program,
    /// The text it was read from.
    pub text: String,
    /// Its file name, or the name given with the text.
    pub file: String,
    /// Which syntax was assumed, when the file's name says another
    /// ([`crate::syntax::syntax_of_file`]).
    pub syntax_note: Option<String>,
}

impl Rules {
    /// The rules as one line of KIF sentences, what the GGP protocol sends: a KIF file compacted, an
    /// infix file converted to classic KIF.
    pub fn to_kif(&self) -> Result<String, KifError> {
        let kif = match self.program.syntax {
            Syntax::Kif => self.text.clone(),
            Syntax::Infix => {
                crate::print::to_kif(&crate::print::convert(&self.program, Syntax::Kif)?)
            }
        };
        Ok(crate::protocol::messages::compact_kif(&kif)?)
    }
}

/// Why rules cannot be sent as KIF.
#[derive(Debug, thiserror::Error)]
pub enum KifError {
    /// The conversion to classic GDL fails.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The KIF text does not read back (a bug of the printer, reported rather than sent).
    #[error("the KIF text does not read back: {0}")]
    Text(#[from] crate::protocol::messages::MessageError),
}

/// A loaded game of type `G`: the game, the judgement its searches use, how it was loaded and, for a
/// rule game, its rules. Cheap to clone (shared pointers), so a session or a page can keep it.
pub struct Loaded<G: Game> {
    /// The game.
    pub game: Arc<G>,
    /// How its depth-limited searches judge positions.
    pub evaluator: Arc<dyn Evaluator<G>>,
    /// How it was loaded.
    pub report: LoadReport,
    /// Its rules, for a rule game.
    pub rules: Option<Arc<Rules>>,
}

impl<G: Game> Clone for Loaded<G> {
    fn clone(&self) -> Self {
        Loaded {
            game: Arc::clone(&self.game),
            evaluator: Arc::clone(&self.evaluator),
            report: self.report.clone(),
            rules: self.rules.clone(),
        }
    }
}

/// Code generic over the game type, run on whichever game was loaded.
pub trait Visitor {
    /// What it produces.
    type Output;
    /// Runs on `loaded`.
    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output;
}

/// A loaded game of any type.
pub enum AnyGame {
    /// Nim.
    Nim(Loaded<Nim>),
    /// Tic-tac-toe.
    TicTacToe(Loaded<TicTacToe>),
    /// Connect Four.
    Connect4(Loaded<Connect4>),
    /// A game tree.
    Tree(Loaded<TreeGame>),
    /// A rule game on the network.
    Network(Loaded<NetGame>),
    /// A rule game on the Datalog evaluator.
    Datalog(Loaded<RuleGame>),
}

/// Runs `$body` with `$l` bound to the [`Loaded`] of whichever game `$any` holds.
macro_rules! each_game {
    ($any:expr, $l:ident => $body:expr) => {
        match $any {
            AnyGame::Nim($l) => $body,
            AnyGame::TicTacToe($l) => $body,
            AnyGame::Connect4($l) => $body,
            AnyGame::Tree($l) => $body,
            AnyGame::Network($l) => $body,
            AnyGame::Datalog($l) => $body,
        }
    };
}

impl AnyGame {
    /// Runs `visitor` on the game.
    pub fn visit<V: Visitor>(self, visitor: V) -> V::Output {
        each_game!(self, l => visitor.visit(l))
    }

    /// Waits until a network's full passes are compiled, when they are being compiled on a thread of
    /// their own (see [`NetGame::wait_compiled`]), and says so in the report: for a measurement of
    /// steady speed.
    pub fn wait_compiled(&mut self) {
        if let AnyGame::Network(l) = self {
            l.report.compiled = l.game.wait_compiled();
            l.report.batch_speedup = l.game.batch_speedup();
            l.report.playout_method = Some(l.game.playout_method());
            l.report.step_undo = l.game.step_undo();
            l.report.turns_by_writes = l.game.turns_by_writes();
        }
    }

    /// How it was loaded.
    pub fn report(&self) -> &LoadReport {
        each_game!(self, l => &l.report)
    }

    /// The game's static facts.
    pub fn info(&self) -> &GameInfo {
        each_game!(self, l => l.game.info())
    }

    /// Its rules, for a rule game.
    pub fn rules(&self) -> Option<&Arc<Rules>> {
        each_game!(self, l => l.rules.as_ref())
    }

    /// `check`'s play-test of a rule game on the engine it loaded on (see
    /// [`play_test`]); `None` for a native game or a tree, which have no
    /// rules to blame.
    pub fn play_test(&self, options: PlayTest) -> Option<PlayTestReport> {
        let rules = self.rules()?;
        match self {
            AnyGame::Network(l) => Some(play_test(&rules.program, l.game.as_ref(), options)),
            AnyGame::Datalog(l) => Some(play_test(&rules.program, l.game.as_ref(), options)),
            _ => None,
        }
    }
}

/// Why a game could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file cannot be read.
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why, in a few words.
        reason: String,
    },
    /// The name is neither a native game nor a file of a known kind.
    #[error(
        "unknown game `{0}`: expected nim, tictactoe, connect4, a .tree file or a rule file (.gdl, \
         .kif)"
    )]
    UnknownGame(String),
    /// A native game's size is impossible.
    #[error(transparent)]
    Native(GameError),
    /// A tree file does not parse.
    #[error("{}: {source}", path.display())]
    Tree {
        /// The file.
        path: PathBuf,
        /// Where and what.
        source: TreeError,
    },
    /// The rules do not parse or are not a valid game: every error with its place, for the caller to
    /// render ([`crate::diagnostics::render`]).
    #[error("{file}: {} in the rules", crate::diagnostics::count(errors.len(), "error"))]
    Invalid {
        /// The file name (or the name given with the text).
        file: String,
        /// The text, for rendering.
        text: String,
        /// The errors.
        errors: Vec<Diagnostic>,
    },
    /// The network was asked for and cannot be built.
    #[error("the network cannot be built: {0}")]
    Network(NetworkError),
    /// The Datalog evaluator cannot play the rules.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Loads the game `source` names, as `options` ask (see the module documentation).
pub fn load(source: &GameSource, options: &LoadOptions) -> Result<AnyGame, LoadError> {
    match source {
        GameSource::Native(native) => load_native(*native),
        GameSource::Tree(path) => {
            let text = read(path)?;
            let tree = TreeGame::parse(&text).map_err(|source| LoadError::Tree {
                path: path.clone(),
                source,
            })?;
            Ok(AnyGame::Tree(native(
                tree,
                Arc::new(TreeValues::new()),
                EngineKind::Tree,
            )))
        }
        GameSource::RuleFile(path) => {
            let started = Instant::now();
            let text = read(path)?;
            let (syntax, note) = crate::syntax::syntax_of_file(path, &text);
            let name = path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
            let mut rules = read_rules(text, path.display().to_string(), syntax)?;
            rules.syntax_note = note;
            build_rules(rules, &name, options, started)
        }
        GameSource::RuleText { text, name, syntax } => {
            let started = Instant::now();
            let rules = read_rules(text.clone(), name.clone(), *syntax)?;
            build_rules(rules, name, options, started)
        }
    }
}

fn load_native(game: NativeGame) -> Result<AnyGame, LoadError> {
    Ok(match game {
        NativeGame::Nim { pile, misere } => AnyGame::Nim(native(
            Nim::new(pile, misere),
            Arc::new(nim::Heuristic),
            EngineKind::Native,
        )),
        NativeGame::TicTacToe { size, k } => AnyGame::TicTacToe(native(
            TicTacToe::new(size, k).map_err(LoadError::Native)?,
            Arc::new(tictactoe::Heuristic),
            EngineKind::Native,
        )),
        NativeGame::Connect4 { rows, cols } => AnyGame::Connect4(native(
            Connect4::new(rows, cols).map_err(LoadError::Native)?,
            Arc::new(connect4::Heuristic),
            EngineKind::Native,
        )),
    })
}

fn native<G: Game>(game: G, evaluator: Arc<dyn Evaluator<G>>, engine: EngineKind) -> Loaded<G> {
    Loaded {
        game: Arc::new(game),
        evaluator,
        report: LoadReport::native(engine),
        rules: None,
    }
}

/// A file's text, or why it cannot be read, in one line: a file that is not there has no line and
/// column to show.
pub fn read(path: &Path) -> Result<String, LoadError> {
    let unreadable = |reason: String| LoadError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(unreadable("it is a directory".into())),
        Ok(_) => {}
        Err(e) => return Err(unreadable(io_reason(&e))),
    }
    let bytes = crate::syntax::read_source(path).map_err(|e| unreadable(io_reason(&e)))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        LoadError::Invalid {
            file: path.display().to_string(),
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            errors: vec![Diagnostic::error(
                crate::syntax::ast::Span::new(at, at + 1),
                "the file is not UTF-8 text",
            )
            .with_help("save the file as UTF-8")],
        }
    })
}

/// An I/O error in a few plain words.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Parses and checks rules; every error comes back with its place.
pub fn read_rules(text: String, file: String, syntax: Syntax) -> Result<Rules, LoadError> {
    let program = match crate::syntax::parse_str(&text, syntax) {
        Ok(p) => p,
        Err(errors) => return Err(LoadError::Invalid { file, text, errors }),
    };
    let report = crate::check::check(&program);
    if !report.is_ok() {
        return Err(LoadError::Invalid {
            file,
            text,
            errors: report.errors,
        });
    }
    Ok(Rules {
        program,
        text,
        file,
        syntax_note: None,
    })
}

/// Builds rules already read and checked ([`read_rules`]) on the engine `options` ask for, as [`load`]
/// does: for a caller that reads the rules itself (`check` prints their warnings first).
pub fn load_checked(rules: Rules, name: &str, options: &LoadOptions) -> Result<AnyGame, LoadError> {
    build_rules(rules, name, options, Instant::now())
}

/// Builds checked rules on the engine `options` ask for.
fn build_rules(
    rules: Rules,
    name: &str,
    options: &LoadOptions,
    started: Instant,
) -> Result<AnyGame, LoadError> {
    let rules = Arc::new(rules);
    let mut fallback = None;
    let grounding = options.grounding_time();
    if options.engine != EngineChoice::Datalog {
        let budget = Budget::for_seconds(grounding.as_secs_f64());
        let built = if options.interpreted {
            NetGame::from_program_interpreted(&rules.program, name, budget)
        } else {
            NetGame::from_program_within(&rules.program, name, budget)
        };
        match built {
            Ok(mut g) => {
                if g.info().zero_sum && !zero_sum_survives_play(&g) {
                    g.not_zero_sum();
                }
                let report = LoadReport {
                    engine: EngineKind::Network,
                    took: started.elapsed(),
                    network_size: Some((g.num_propositions(), g.num_gates())),
                    fallback: None,
                    demand: false,
                    compiled: g.is_compiled(),
                    batch_speedup: g.batch_speedup(),
                    playout_method: Some(g.playout_method()),
                    step_undo: g.step_undo(),
                    turns_by_writes: g.turns_by_writes(),
                };
                return Ok(AnyGame::Network(Loaded {
                    game: Arc::new(g),
                    evaluator: rule_evaluator(options),
                    report,
                    rules: Some(rules),
                }));
            }
            Err(e) if options.engine == EngineChoice::Network => return Err(LoadError::Network(e)),
            Err(e) => fallback = Some(e),
        }
    }
    let mut g = RuleGame::from_program(&rules.program, name)?;
    if g.info().zero_sum && !zero_sum_survives_play(&g) {
        g.not_zero_sum();
    }
    let report = LoadReport {
        engine: EngineKind::Datalog,
        took: started.elapsed(),
        network_size: None,
        fallback,
        demand: g.uses_demand(),
        compiled: false,
        batch_speedup: None,
        playout_method: None,
        step_undo: false,
        turns_by_writes: false,
    };
    Ok(AnyGame::Datalog(Loaded {
        game: Arc::new(g),
        evaluator: rule_evaluator(options),
        report,
        rules: Some(rules),
    }))
}

/// The random matches [`zero_sum_survives_play`] plays at most, their joint moves in all, and the
/// time they may take: the joint moves bound it on the network (a few milliseconds), so that a game
/// always gets the same verdict; the time only where an engine is slower (a big game on the Datalog
/// evaluator), which may then play fewer.
const ZERO_SUM_MATCHES: u32 = 32;
const ZERO_SUM_MOVES: u32 = 2_000;
const ZERO_SUM_TIME: Duration = Duration::from_millis(40);

/// Whether random matches of `game` (see [`ZERO_SUM_MATCHES`], from a fixed seed) end only where the
/// two goals add up to 100. The engines call a game zero-sum when
/// each role's possible goal values mirror the other's, which a game of shared payoffs can match:
/// gt_ultimatum's values run from 0 to 100 for both roles, and both get 0 when the offer is
/// refused. A searcher that takes such a game for zero-sum reads the other role's gain as its own
/// loss (and refuses a gift of 3). Play can only refute the claim, never prove it.
fn zero_sum_survives_play<G: Game>(game: &G) -> bool {
    use rand::{rngs::SmallRng, SeedableRng};
    let deadline = Instant::now() + ZERO_SUM_TIME;
    let mut rng = SmallRng::seed_from_u64(0x5EED);
    let mut buf = Vec::new();
    let start = game.initial_state();
    let mut moves_left = ZERO_SUM_MOVES;
    for _ in 0..ZERO_SUM_MATCHES {
        let mut pace = crate::game::Pace::new();
        let Some((end, played)) = pace.play_on(start.clone(), 0, moves_left, deadline, |s, n| {
            game.random_playout(s, &mut rng, &mut buf, n)
        }) else {
            break;
        };
        if game.is_terminal(&end) && game.goal(&end, 0) + game.goal(&end, 1) != 100 {
            return false;
        }
        moves_left = moves_left.saturating_sub(played);
        if moves_left == 0 {
            break;
        }
    }
    true
}

/// How a rule game's positions are judged: `options.playouts` random playouts, or goals and mobility.
fn rule_evaluator<G: Game>(options: &LoadOptions) -> Arc<dyn Evaluator<G>> {
    match options.playouts {
        0 => Arc::new(GoalMobility),
        n => Arc::new(Playouts::new(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = "(role r) (init (s 0)) (legal r go) (<= (next (s 1)) (true (s 0))) \
                         (<= terminal (true (s 1))) (goal r 100)";

    fn text(engine: EngineChoice, grounding: Option<Duration>) -> Result<AnyGame, LoadError> {
        let source = GameSource::RuleText {
            text: RULES.into(),
            name: "t".into(),
            syntax: Syntax::Kif,
        };
        let options = LoadOptions {
            engine,
            grounding,
            ..LoadOptions::default()
        };
        load(&source, &options)
    }

    #[test]
    fn rules_load_on_the_network_and_the_evaluator() {
        let net = text(EngineChoice::Auto, None).unwrap();
        assert_eq!(net.report().engine, EngineKind::Network);
        assert_eq!(net.info().roles, ["r"]);
        let datalog = text(EngineChoice::Datalog, None).unwrap();
        assert_eq!(datalog.report().engine, EngineKind::Datalog);
        let no_time = text(EngineChoice::Auto, Some(Duration::ZERO)).unwrap();
        assert_eq!(no_time.report().engine, EngineKind::Datalog);
        assert!(matches!(
            no_time.report().fallback,
            Some(NetworkError::Budget(_))
        ));
        assert_eq!(
            net.rules().unwrap().to_kif().unwrap(),
            "(role r) (init (s 0)) (legal r go) (<= (next (s 1)) (true (s 0))) (<= terminal \
             (true (s 1))) (goal r 100)"
        );
    }

    /// An offer and its answer. The goal values of each role mirror the other's, which is all the
    /// engines' analysis reads; whether a refused fair offer gives both roles 0 (`fair_refused`) or
    /// the answerer 100 decides whether the game is zero-sum.
    fn offer(fair_refused: &str) -> GameSource {
        let text = format!(
            "(role a) (role b) (init (turn a)) \
             (<= (legal a fair) (true (turn a))) (<= (legal a greedy) (true (turn a))) \
             (<= (legal a noop) (not (true (turn a)))) \
             (<= (legal b yes) (not (true (turn a)))) (<= (legal b no) (not (true (turn a)))) \
             (<= (legal b noop) (true (turn a))) \
             (<= (next (offered ?o)) (does a ?o) (distinct ?o noop)) \
             (<= (next (offered ?o)) (true (offered ?o))) \
             (<= (next (answered ?x)) (does b ?x) (distinct ?x noop)) \
             (<= terminal (true (answered ?x))) \
             (<= (goal a 60) (true (offered fair)) (true (answered yes))) \
             (<= (goal b 40) (true (offered fair)) (true (answered yes))) \
             (<= (goal a 0) (true (offered fair)) (true (answered no))) \
             (<= (goal b {fair_refused}) (true (offered fair)) (true (answered no))) \
             (<= (goal a 100) (true (offered greedy)) (true (answered yes))) \
             (<= (goal b 0) (true (offered greedy)) (true (answered yes))) \
             (<= (goal a 0) (true (offered greedy)) (true (answered no))) \
             (<= (goal b 100) (true (offered greedy)) (true (answered no))) \
             (<= (goal ?r 50) (role ?r) (not terminal))"
        );
        GameSource::RuleText {
            text,
            name: "offer".into(),
            syntax: Syntax::Kif,
        }
    }

    #[test]
    fn a_game_whose_goals_only_look_zero_sum_is_found_out_by_play() {
        for engine in [EngineChoice::Network, EngineChoice::Datalog] {
            let load = |fair_refused| {
                load(
                    &offer(fair_refused),
                    &LoadOptions {
                        engine,
                        ..LoadOptions::default()
                    },
                )
            };
            let shared = load("0").unwrap();
            assert!(
                !shared.info().zero_sum,
                "{engine:?}: a refusal gives both 0"
            );
            let zero_sum = load("100").unwrap();
            assert!(
                zero_sum.info().zero_sum,
                "{engine:?}: every ending adds up to 100"
            );
        }
    }

    #[test]
    fn invalid_rules_keep_every_error_with_its_place() {
        let source = GameSource::RuleText {
            text: "(role r) (<= (legal r ?x) (true (p)))".into(),
            name: "t".into(),
            syntax: Syntax::Kif,
        };
        match load(&source, &LoadOptions::default()) {
            Err(LoadError::Invalid { file, errors, .. }) => {
                assert_eq!(file, "t");
                assert!(!errors.is_empty());
            }
            other => panic!("expected invalid rules, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn names_pick_native_games_and_files() {
        assert_eq!(
            GameSource::named("TTT").unwrap(),
            GameSource::Native(NativeGame::TicTacToe { size: 3, k: 3 })
        );
        assert_eq!(
            GameSource::named("games/x.GDL").unwrap(),
            GameSource::RuleFile("games/x.GDL".into())
        );
        assert!(matches!(
            GameSource::named("chess"),
            Err(LoadError::UnknownGame(_))
        ));
        let e = load(
            &GameSource::RuleFile("no/such/file.kif".into()),
            &LoadOptions::default(),
        )
        .map(|_| ())
        .unwrap_err();
        assert_eq!(e.to_string(), "cannot read no/such/file.kif: no such file");
    }
}
