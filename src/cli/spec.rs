//! The GAME argument and its flags, turned into what the one loader ([`ggp::load`]) takes, and the
//! loader's answer turned into what the command line prints.

use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use ggp::load::{
    load, AnyGame, EngineChoice, EngineKind, GameSource, LoadError, LoadOptions, LoadReport,
    NativeGame,
};
use ggp::network::{NetworkError, PlayoutMethod};

use super::CliError;

/// Which engine plays a game, as `--engine` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// The grounded network when the rules ground within budget, else the Datalog evaluator.
    Auto,
    /// The grounded propositional network (rule files).
    Network,
    /// The Datalog evaluator (rule files).
    Datalog,
    /// The hand-written game (native games).
    Native,
}

impl EngineArg {
    fn name(self) -> String {
        self.to_possible_value()
            .map_or("?".into(), |v| v.get_name().to_string())
    }

    /// The loader's engine choice for a rule file.
    pub fn choice(self) -> Result<EngineChoice, CliError> {
        match self {
            EngineArg::Auto => Ok(EngineChoice::Auto),
            EngineArg::Network => Ok(EngineChoice::Network),
            EngineArg::Datalog => Ok(EngineChoice::Datalog),
            EngineArg::Native => Err(CliError::Usage(
                "--engine native does not apply to a rule file: use auto, network or datalog"
                    .into(),
            )),
        }
    }
}

/// The GAME argument and the flags that shape a game.
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
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub start: super::start::StartArgs,
}

/// How a rule game is loaded: the flags `serve` shares with every command that names a game.
#[derive(Args, Debug, Clone, Default)]
pub struct LoadArgs {
    /// Rule files: the engine [default: auto, the network when it grounds within budget].
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// Rule files: random playouts per position a depth-limited player estimates; 0 estimates from goal
    /// values and mobility instead [default: 8].
    #[arg(long)]
    pub playouts: Option<u32>,
    /// Rule files: seconds the network may take to build before the Datalog evaluator takes over; its
    /// size limits scale with it [default: 10, or 120 with `--engine network`].
    #[arg(long, value_name = "SECONDS")]
    pub grounding_seconds: Option<u32>,
    /// Rule files on the network: run its full passes on the interpreter, the reference, instead of as
    /// machine code compiled once the game has loaded (for comparing the two).
    #[arg(long)]
    pub interpreted: bool,
}

impl LoadArgs {
    /// The loader's options for a rule game (`--engine native` is refused: it names no engine of a
    /// rule file).
    pub fn options(&self, native: Option<&str>) -> Result<LoadOptions, CliError> {
        let engine = match (self.engine, native) {
            (Some(EngineArg::Native), Some(_)) | (None, _) => EngineChoice::Auto,
            (Some(e), _) => e.choice()?,
        };
        Ok(LoadOptions {
            engine,
            grounding: self
                .grounding_seconds
                .map(|s| Duration::from_secs(u64::from(s))),
            playouts: self.playouts.unwrap_or(ggp::evaluators::DEFAULT_PLAYOUTS),
            interpreted: self.interpreted,
        })
    }
}

/// What a game needs from the flags: where it comes from and how to load it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSpec {
    /// Where the game comes from.
    pub source: GameSource,
    /// How to load it.
    pub options: LoadOptions,
    /// Where it starts, when not at its rules' `init`.
    pub start: super::start::StartArgs,
}

fn kind(source: &GameSource) -> &'static str {
    match source {
        GameSource::Native(NativeGame::Nim { .. }) => "nim",
        GameSource::Native(NativeGame::TicTacToe { .. }) => "tictactoe",
        GameSource::Native(NativeGame::Connect4 { .. }) => "connect4",
        GameSource::Tree(_) => "a .tree file",
        GameSource::RuleFile(_) | GameSource::RuleText { .. } => "a rule file",
    }
}

impl GameSpec {
    /// Reads the GAME argument and checks that only its own flags were given.
    pub fn from_args(a: &GameArgs) -> Result<GameSpec, CliError> {
        let name = a.game.as_deref().unwrap_or_default();
        let mut source = GameSource::named(name).map_err(|e| CliError::Usage(e.to_string()))?;
        match &mut source {
            GameSource::Native(NativeGame::Nim { pile, misere }) => {
                *pile = a.pile.unwrap_or(*pile);
                *misere = a.misere;
            }
            GameSource::Native(NativeGame::TicTacToe { size, k }) => {
                *size = a.size.unwrap_or(*size);
                *k = a.k.unwrap_or(*size);
            }
            GameSource::Native(NativeGame::Connect4 { rows, cols }) => {
                *rows = a.rows.unwrap_or(*rows);
                *cols = a.cols.unwrap_or(*cols);
            }
            _ => {}
        }
        let what = kind(&source);
        let stray: Vec<&str> = [
            ("--pile", a.pile.is_some(), "nim"),
            ("--misere", a.misere, "nim"),
            ("--size", a.size.is_some(), "tictactoe"),
            ("--k", a.k.is_some(), "tictactoe"),
            ("--rows", a.rows.is_some(), "connect4"),
            ("--cols", a.cols.is_some(), "connect4"),
            ("--playouts", a.load.playouts.is_some(), "a rule file"),
            ("--interpreted", a.load.interpreted, "a rule file"),
            (
                "--grounding-seconds",
                a.load.grounding_seconds.is_some(),
                "a rule file",
            ),
        ]
        .into_iter()
        .filter(|(_, given, owner)| *given && what != *owner)
        .map(|(flag, _, _)| flag)
        .collect();
        if let Some(engine) = a.load.engine {
            let fits = match source {
                GameSource::RuleFile(_) | GameSource::RuleText { .. } => {
                    engine != EngineArg::Native
                }
                _ => engine == EngineArg::Native,
            };
            if !fits {
                return Err(CliError::Usage(format!(
                    "--engine {} does not apply to {what}: native games use `native`, rule files \
                     `auto`, `network` or `datalog`",
                    engine.name(),
                )));
            }
        }
        if !stray.is_empty() {
            let verb = if stray.len() == 1 { "does" } else { "do" };
            return Err(CliError::Usage(format!(
                "{} {verb} not apply to {what}",
                stray.join(", ")
            )));
        }
        let native = (!source.is_rules()).then_some(what);
        let options = a.load.options(native)?;
        if a.start.given() && !source.is_rules() {
            return Err(CliError::Usage(format!(
                "--state, --moves and --from start rule files anywhere, not {what}"
            )));
        }
        Ok(GameSpec {
            source,
            options,
            start: a.start.clone(),
        })
    }

    /// Loads the game, saying on standard error why the network was not used when it was not.
    pub fn load(&self) -> Result<AnyGame, CliError> {
        let mut game = while_loading(&self.source, &self.options, || {
            load(&self.source, &self.options)
        })
        .map_err(|e| load_error(e, &self.source))?;
        if let Some(note) = game.rules().and_then(|r| r.syntax_note.as_ref()) {
            eprintln!("note: {note}");
        }
        if self.start.given() {
            game = super::start::started(game, &self.source, &self.options, &self.start)?;
        }
        if let Some(why) = fallback_note(game.report()) {
            eprintln!("{why}");
        }
        Ok(game)
    }
}

/// Runs `load` (of `source` with `options`) under a spinner on standard error that says what is
/// loading, for rule files: building a big game's network takes seconds (chess about 2 s), and
/// finding that one does not ground can take seconds (laikLee_hex 3.5 s), which a user at
/// a terminal should not sit through in silence. indicatif draws nothing when standard error is not a
/// terminal, so piped and tested output stays as it was.
pub fn while_loading<T>(source: &GameSource, options: &LoadOptions, load: impl FnOnce() -> T) -> T {
    match loading_message(source, options) {
        Some(message) => under_spinner(message, load),
        None => load(),
    }
}

/// Runs `work` under a spinner on standard error that says `message` and the time so far (nothing is
/// drawn when standard error is not a terminal).
pub fn under_spinner<T>(message: String, work: impl FnOnce() -> T) -> T {
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {elapsed:>3} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    spinner.set_message(message);
    // Drawn once now, however fast the work: the ticker's first tick may come after it.
    spinner.tick();
    spinner.enable_steady_tick(Duration::from_millis(120));
    let done = work();
    spinner.finish_and_clear();
    done
}

/// What [`while_loading`] says while `source` loads, `None` for a game that loads at once (a native
/// game, a tree): `chess.kif: building its network (up to 10 s; --engine datalog skips it)`.
pub fn loading_message(source: &GameSource, options: &LoadOptions) -> Option<String> {
    let name = match source {
        GameSource::RuleFile(path) => path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        ),
        GameSource::RuleText { name, .. } => name.clone(),
        GameSource::Native(_) | GameSource::Tree(_) => return None,
    };
    let seconds = options.grounding_time().as_secs_f64();
    Some(match options.engine {
        EngineChoice::Datalog => format!("{name}: loading on the Datalog evaluator"),
        EngineChoice::Network => format!("{name}: building its network (up to {seconds} s)"),
        EngineChoice::Auto => {
            format!("{name}: building its network (up to {seconds} s; --engine datalog skips it)")
        }
    })
}

/// `note: ...; the Datalog evaluator plays this game` when the network was tried and not used.
pub fn fallback_note(report: &LoadReport) -> Option<String> {
    report
        .fallback
        .as_ref()
        .map(|why| format!("note: {why}; the Datalog evaluator plays this game"))
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

/// A loader's error as the command line says it: a rule file's errors rendered with file, line and
/// column, an engine's refusal after the file's name.
pub fn load_error(e: LoadError, source: &GameSource) -> CliError {
    let in_file = |message: String| match source {
        GameSource::RuleFile(path) | GameSource::Tree(path) => CliError::File {
            path: path.clone(),
            message,
        },
        _ => CliError::Failed(message),
    };
    match e {
        LoadError::Unreadable { .. } => CliError::Failed(e.to_string()),
        LoadError::UnknownGame(_) => CliError::Usage(e.to_string()),
        LoadError::Invalid { file, text, errors } => {
            CliError::Rules(render_errors(&errors, &file, &text))
        }
        LoadError::Native(g) => CliError::Game(g),
        LoadError::Tree { path, source } => CliError::File {
            path,
            message: source.to_string(),
        },
        LoadError::Network(n) => in_file(format!(
            "the network cannot be built: {n}{}",
            budget_hint(&n)
        )),
        LoadError::Engine(e) => in_file(e.to_string()),
    }
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

/// `engine=... load_ms=...` and the network's size, for one-line reports.
pub fn report_fields(report: &LoadReport) -> String {
    let mut s = format!(
        "engine={} load_ms={:.1}",
        report.engine,
        report.took.as_secs_f64() * 1e3
    );
    if let Some((props, gates)) = report.network_size {
        s.push_str(&format!(
            " propositions={props} gates={gates} passes={}",
            if report.compiled {
                "compiled"
            } else {
                "interpreted"
            }
        ));
    }
    if let Some(method) = report.playout_method {
        s.push_str(match (method, report.step_undo) {
            (PlayoutMethod::Propagate, false) => " playouts=propagate",
            (PlayoutMethod::Propagate, true) => " playouts=propagate step_moves=undone",
            (PlayoutMethod::FullPass, _) => " playouts=passes",
        });
        if method == PlayoutMethod::Propagate && report.turns_by_writes {
            s.push_str(" turns=by_writes");
        }
    }
    if let Some(x) = report.batch_speedup {
        s.push_str(&format!(" batch_speedup={x:.1}"));
    }
    if report.demand {
        s.push_str(" evaluation=demand");
    }
    s
}

/// The search depth when `--depth` is not given: deep enough to play well, shallow enough that a whole
/// match takes seconds (a rule game's position costs playouts, a native one's a few instructions).
pub fn default_depth(engine: EngineKind) -> u32 {
    match engine {
        EngineKind::Native => 8,
        EngineKind::Tree => 2,
        EngineKind::Network | EngineKind::Datalog => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn says(source: GameSource, engine: EngineChoice, grounding: Option<u64>) -> Option<String> {
        let options = LoadOptions {
            engine,
            grounding: grounding.map(Duration::from_secs),
            ..LoadOptions::default()
        };
        loading_message(&source, &options)
    }

    #[test]
    fn a_rule_files_load_says_what_it_builds_and_how_long_it_may_take() {
        let file = || GameSource::RuleFile("games/chess/chess.kif".into());
        let cases: [(GameSource, EngineChoice, Option<u64>, Option<&str>); 6] = [
            (
                file(),
                EngineChoice::Auto,
                None,
                Some("chess.kif: building its network (up to 10 s; --engine datalog skips it)"),
            ),
            (
                file(),
                EngineChoice::Auto,
                Some(3),
                Some("chess.kif: building its network (up to 3 s; --engine datalog skips it)"),
            ),
            (
                file(),
                EngineChoice::Network,
                None,
                Some("chess.kif: building its network (up to 120 s)"),
            ),
            (
                file(),
                EngineChoice::Datalog,
                None,
                Some("chess.kif: loading on the Datalog evaluator"),
            ),
            (
                GameSource::RuleText {
                    text: "(role r)".into(),
                    name: "sent".into(),
                    syntax: ggp::syntax::ast::Syntax::Kif,
                },
                EngineChoice::Auto,
                None,
                Some("sent: building its network (up to 10 s; --engine datalog skips it)"),
            ),
            (
                GameSource::named("connect4").unwrap(),
                EngineChoice::Auto,
                None,
                None,
            ),
        ];
        for (source, engine, grounding, expected) in cases {
            let what = format!("{source:?} {engine:?} {grounding:?}");
            assert_eq!(
                says(source, engine, grounding).as_deref(),
                expected,
                "{what}"
            );
        }
    }
}
