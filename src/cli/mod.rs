//! The `ggp-run` command line: argument parsing (clap derive) and the commands.

mod commands;
mod interrupt;
mod learn;
mod protocol;
mod rules;
mod search;
mod spec;
mod start;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

use ggp::files::PendingFile;
use ggp::game::GameError;
use ggp::players::{
    Clock, PlayerConfig, PlayerError, PlayerKind, PlayerSpec, Progress, UnknownPlayer,
};

use spec::{EngineArg, GameArgs, GameSpec};

/// Plays, searches, counts and benchmarks games.
///
/// `ggp-run GAME [options]` plays a match; the subcommands do the rest.
#[derive(Parser, Debug)]
#[command(
    name = "ggp-run",
    version,
    arg_required_else_help = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    play: PlayArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Plays a match (the same as giving no subcommand).
    Play(PlayArgs),
    /// Chooses one move from the initial state and reports the search's effort.
    Search(SearchArgs),
    /// Counts the move sequences of a given length from the initial state.
    Perft(PerftArgs),
    /// Random playouts from the initial state, as fast as possible.
    Bench(BenchArgs),
    /// Checks a rule file: every problem with its place, or a summary of the game; random matches on the
    /// loaded game look for roles left without a move and terminal states without goals.
    Check(CheckArgs),
    /// Prints a rule file in its own syntax, neatly laid out.
    Fmt(FmtArgs),
    /// Writes a rule file in the other syntax (operation rules become classic GDL).
    Convert(ConvertArgs),
    /// Replays a reference trace (shared/conformance/FORMAT.md) and reports `N passed, M failed`.
    Replay(ReplayArgs),
    /// Prints what one stage of the pipeline makes of a rule file (program, classic, prepared, analysed,
    /// plan, decomposed, network).
    Stage(StageArgs),
    /// Serves a player over the GGP protocol (HTTP), for game managers to play against.
    Serve(protocol::ServeArgs),
    /// Serves the web pages: the game library, a rule editor with the checker's diagnostics, matches
    /// to play or watch in the browser, replays and tournaments.
    Web(protocol::WebArgs),
    /// Referees a match between local players and players served over the GGP protocol.
    Match(protocol::MatchArgs),
    /// Prints a match record (ggp-base's JSON) step by step.
    View(protocol::ViewArgs),
    /// Learns a score for every position by playing itself (temporal-difference learning over a table
    /// of positions; two-role turn-taking games) and writes the scores, for the `learned:FILE` player.
    Train(TrainArgs),
    /// Plays every pair of players against each other and prints a table of results.
    Tournament(TournamentArgs),
}

#[derive(Args, Debug, Clone)]
struct TrainArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Turns (moves) of self-play.
    #[arg(long, allow_negative_numbers = true)]
    turns: u64,
    /// Where to write the learned scores (for `learned:FILE`).
    #[arg(long)]
    out: PathBuf,
    /// Learning rate: how far a state's score moves toward the next state's.
    #[arg(long, allow_negative_numbers = true, default_value_t = ggp::learn::DEFAULT_RATE)]
    rate: f64,
    /// Seed for the random choice between equally good moves.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seed: u64,
}

#[derive(Args, Debug, Clone)]
struct TournamentArgs {
    #[command(flatten)]
    game: GameArgs,
    /// The entrants, comma-separated: KINDs (learned:FILE included) or remote GGP players
    /// (http://host:port, with a rule file as GAME), e.g. `mcts,random,http://10.0.0.2:9147`.
    #[arg(long, value_name = "KIND,KIND,...")]
    players: String,
    /// Games each pair plays (seats alternating).
    #[arg(long, allow_negative_numbers = true, default_value_t = 10)]
    games: u32,
    /// Games played at once [default: the number of cores, at most 2; each mcts uses --threads].
    #[arg(long, allow_negative_numbers = true)]
    workers: Option<usize>,
    /// Write the table here as CSV too.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write every game here as CSV: one line per seat (game, role, player, goal, result, moves
    /// replaced, moves chosen, simulations, nodes, slowest answer in ms).
    #[arg(long, value_name = "FILE")]
    games_csv: Option<PathBuf>,
    #[command(flatten)]
    search: PlayerArgs,
    #[command(flatten)]
    clocks: ClockArgs,
}

#[derive(Args, Debug, Clone)]
struct StageArgs {
    /// The rule file.
    file: PathBuf,
    /// The stage to print.
    #[arg(long, value_enum, default_value = "plan")]
    stage: rules::StageArg,
}

#[derive(Args, Debug, Clone)]
struct FmtArgs {
    /// The rule file (.kif, or .gdl for Epilog infix).
    file: PathBuf,
    /// Rewrite the file in place (only when the result reads back as the same rules, comments
    /// included) instead of printing it.
    #[arg(long)]
    write: bool,
}

#[derive(Args, Debug, Clone)]
struct CheckArgs {
    /// The rule files (.kif, or .gdl for Epilog infix); several get a summary line at the end.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Seconds the network may take to build; its size limits scale with it.
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS", default_value_t = DEFAULT_GROUNDING_SECONDS)]
    grounding_seconds: u32,
}

/// A target syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SyntaxName {
    /// Classic prefix KIF GDL.
    Kif,
    /// Epilog infix.
    Gdl,
}

#[derive(Args, Debug, Clone)]
struct ConvertArgs {
    /// The rule file.
    file: PathBuf,
    /// The syntax to write.
    #[arg(long, value_enum)]
    to: SyntaxName,
    /// Write here instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
struct ReplayArgs {
    /// The rule file the trace was made from.
    game: PathBuf,
    /// The trace.
    trace: PathBuf,
    /// The engine [default: auto].
    #[arg(long, value_enum, default_value = "auto")]
    engine: EngineArg,
    /// Seconds the network may take to build before the Datalog evaluator takes over; its size limits
    /// scale with it [default: 10, or 120 with `--engine network`].
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS")]
    grounding_seconds: Option<u32>,
}

/// How the commands that build players build them.
#[derive(Args, Debug, Clone)]
struct PlayerArgs {
    /// Search depth in plies (1 to 1000) of minimax, alphabeta, jamboree and minimaxdepth, and the
    /// deepest iteration of id when given [default: 8 for native games, 4 for rule files, whose
    /// positions cost more].
    #[arg(long, allow_hyphen_values = true, value_parser = parse_depth)]
    depth: Option<u32>,
    /// Seed for random choices; each role's player gets its own seed derived from it.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seed: u64,
    /// Jamboree: share of each node's children searched sequentially, 0 to 1 [default: 0.5]. Only
    /// jamboree reads it, so it is refused without a jamboree player.
    #[arg(long, allow_negative_numbers = true)]
    fraction: Option<f64>,
    /// Threads of each mcts player (one search tree each).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    threads: usize,
}

/// The clocks of a match.
#[derive(Args, Debug, Clone)]
struct ClockArgs {
    /// Seconds each player has for a move; a search plays the best move it found when they run out
    /// (a tenth of it, at least 50 ms and at most 1 s, is kept as a margin).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        default_value_t = 5.0
    )]
    playclock: f64,
    /// Seconds each player has to prepare before the first move.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        default_value_t = 10.0
    )]
    startclock: f64,
}

impl ClockArgs {
    fn clock(&self) -> Result<Clock, CliError> {
        Ok(Clock::new(
            clock_seconds("--startclock", self.startclock)?,
            clock_seconds("--playclock", self.playclock)?,
        ))
    }
}

/// `--depth`: a whole number of plies from 1 to the deepest search the players accept, with one wording
/// for every way of getting it wrong (a negative number included).
fn parse_depth(text: &str) -> Result<u32, String> {
    let max = ggp::players::seeds::MAX_DEPTH;
    match text.trim().parse::<i64>() {
        Ok(d) if (1..=i64::from(max)).contains(&d) => Ok(d as u32),
        _ => Err(format!(
            "the depth must be a whole number of plies between 1 and {max} (leave --depth out for \
             the game's default)"
        )),
    }
}

/// Seconds a rule file's network may take to build by default.
const DEFAULT_GROUNDING_SECONDS: u32 = 10;
const _: () = assert!(ggp::load::DEFAULT_GROUNDING.as_secs() == DEFAULT_GROUNDING_SECONDS as u64);

/// The longest clock the command line accepts: a day.
const MAX_CLOCK_SECONDS: f64 = 86_400.0;

/// The longest sequences perft counts: recursion one level a move, and 2^64 sequences past any count.
const MAX_PERFT_DEPTH: u32 = 64;

/// The most games a pair plays in a tournament (the schedule is made before the first game).
const MAX_TOURNAMENT_GAMES: u32 = 100_000;

/// The most entrants a tournament takes.
const MAX_ENTRANTS: usize = 64;

fn clock_seconds(flag: &str, seconds: f64) -> Result<std::time::Duration, CliError> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_CLOCK_SECONDS {
        Ok(std::time::Duration::from_secs_f64(seconds))
    } else {
        Err(CliError::Usage(format!(
            "{flag} must be a number of seconds above 0 and at most {MAX_CLOCK_SECONDS}, not {seconds}"
        )))
    }
}

impl PlayerArgs {
    /// Which of these flags were given.
    fn given(&self) -> commands::FlagsGiven {
        commands::FlagsGiven {
            fraction: self.fraction.is_some(),
            depth: self.depth.is_some(),
            threads: self.threads != 1,
        }
    }

    /// The players' settings; a search that runs long reports its progress on standard error when
    /// `progress` (the depth stays 0, "not given", until the game is known).
    fn config(&self, progress: bool) -> Result<PlayerConfig, CliError> {
        let fraction = self
            .fraction
            .unwrap_or(ggp::players::seeds::DEFAULT_FRACTION);
        if !(0.0..=1.0).contains(&fraction) {
            return Err(CliError::Usage(format!(
                "--fraction must be between 0 and 1, not {fraction}"
            )));
        }
        if !(1..=256).contains(&self.threads) {
            return Err(CliError::Usage(format!(
                "--threads must be between 1 and 256, not {}",
                self.threads
            )));
        }
        let progress: Option<Progress> =
            progress.then(|| std::sync::Arc::new(|line: &str| eprintln!("  {line}")) as Progress);
        Ok(PlayerConfig {
            depth: self.depth.unwrap_or(0),
            id_depth: self.depth,
            seed: self.seed,
            fraction,
            threads: self.threads,
            progress,
            models: Vec::new(),
        })
    }
}

#[derive(Args, Debug, Clone)]
struct PlayArgs {
    #[command(flatten)]
    game: GameArgs,
    /// KIND for every role, or ROLE=KIND (repeatable). Kinds: human, legal, random, minimax,
    /// alphabeta, jamboree, id, mcs, mcts, uct, onestep, twostep, greedy, minimaxdepth, learned:FILE,
    /// or a player server's http://host:port; mcts and uct take switches (mcts+mast, see `search
    /// --help`). Default: human for the first role, and for the others
    /// alphabeta where it can play (two players taking turns, zero-sum), else mcts.
    #[arg(long = "player", value_name = "KIND|ROLE=KIND")]
    players: Vec<String>,
    #[command(flatten)]
    search: PlayerArgs,
    #[command(flatten)]
    clocks: ClockArgs,
    /// Write the match record (ggp-base's JSON) here.
    #[arg(long, value_name = "FILE.json")]
    out: Option<PathBuf>,
    /// Print only the result.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args, Debug, Clone)]
struct SearchArgs {
    #[command(flatten)]
    game: GameArgs,
    /// minimax | alphabeta | jamboree (the seeds' searches, to exactly --depth), or id | mcs | mcts |
    /// uct | onestep | twostep | greedy | minimaxdepth (a move within --playclock); mcts and uct take
    /// switches (`mcts+mast`, `uct+rave`)
    #[arg(long = "player", default_value = "alphabeta")]
    player: String,
    #[command(flatten)]
    search: PlayerArgs,
    #[command(flatten)]
    clocks: ClockArgs,
    /// List every move the player considered with its visits and value (mcts) or score (id), and the
    /// line of play it expects (the principal variation).
    #[arg(long)]
    explain: bool,
    /// Print the seeds' trace ("Evaluating state ... / Result of ...").
    #[arg(long)]
    trace: bool,
}

#[derive(Args, Debug, Clone)]
struct PerftArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Sequence length.
    depth: u32,
}

#[derive(Args, Debug, Clone)]
struct BenchArgs {
    #[command(flatten)]
    game: GameArgs,
    /// How long to measure, after a warm-up.
    #[arg(long, allow_negative_numbers = true, default_value_t = 3.0)]
    seconds: f64,
    /// Seed for the playouts.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    seed: u64,
    /// Independent playouts on this many threads at once.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    threads: usize,
    /// Playouts side by side in the bits of a word, 1 to 64 (the network plays 64 at once: what the
    /// playout estimate and mcts's leaf playouts use).
    #[arg(long, allow_negative_numbers = true, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    lanes: u32,
    /// Measure this player's search from the initial state instead of bare playouts (`mcts`: its
    /// simulations per second).
    #[arg(long)]
    player: Option<String>,
}

/// Everything that can make `ggp-run` fail.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line asks for something impossible.
    #[error("{0}")]
    Usage(String),
    /// A rule file has errors; the diagnostics, rendered.
    #[error("{0}")]
    Rules(String),
    /// The command ran and found failures (a trace that does not replay, a file with errors).
    #[error("{0}")]
    Failed(String),
    /// A file could not be read or parsed.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The game refused.
    #[error(transparent)]
    Game(#[from] GameError),
    /// A player failed.
    #[error(transparent)]
    Player(#[from] PlayerError),
    /// A player kind does not exist.
    #[error(transparent)]
    UnknownPlayer(#[from] UnknownPlayer),
    /// Writing the output failed.
    #[error("output: {0}")]
    Io(#[from] std::io::Error),
    /// Ctrl-C stopped the work; what was done is kept, as the message says.
    #[error("{0}")]
    Interrupted(String),
}

/// Writes `text` to the file at `path`, whole or not at all (a rule file formatted in place is never
/// left cut short); a failure names the file.
pub(crate) fn write_file(path: &Path, text: impl AsRef<[u8]>) -> Result<(), CliError> {
    ggp::files::write_whole(path, text.as_ref()).map_err(|e| file_error(path, e))
}

/// The output file at `path`, created (under a temporary name) before the work that fills it, so
/// that a path that cannot be written is refused before minutes of training or play, not after.
pub(crate) fn output_file(path: &Path) -> Result<PendingFile, CliError> {
    PendingFile::create(path).map_err(|e| file_error(path, e))
}

/// Fills an [`output_file`] and puts it in its place.
pub(crate) fn finish_file(
    pending: PendingFile,
    path: &Path,
    text: impl AsRef<[u8]>,
) -> Result<(), CliError> {
    pending
        .finish(text.as_ref())
        .map_err(|e| file_error(path, e))
}

fn file_error(path: &Path, e: std::io::Error) -> CliError {
    CliError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl CliError {
    /// 2 for a bad command line, 1 for anything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) | CliError::UnknownPlayer(_) => 2,
            CliError::Interrupted(_) => interrupt::EXIT_STATUS,
            _ => 1,
        }
    }
}

/// The index of the role `role` names (any letter case) in the `--player` option `spec`.
fn role_named(roles: &[String], role: &str, spec: &str) -> Result<usize, CliError> {
    roles
        .iter()
        .position(|n| n.eq_ignore_ascii_case(role.trim()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "unknown role `{}` in --player {spec}; the roles are {}",
                role.trim(),
                roles.join(", ")
            ))
        })
}

/// Refuses `--playouts` for a command that judges no position by playouts (`what` says what it does
/// instead).
fn playouts_unread(game: &GameArgs, what: &str) -> Result<(), CliError> {
    match game.load.playouts {
        Some(_) => Err(CliError::Usage(format!(
            "--playouts sets how a depth-limited player judges positions, and {what}: leave it out"
        ))),
        None => Ok(()),
    }
}

/// Runs the command the arguments name.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match (cli.command, cli.play) {
        (Some(Command::Play(a)), _) | (None, a) => play(a),
        (Some(Command::Search(a)), _) => {
            let spec = GameSpec::from_args(&a.game)?;
            let player: PlayerSpec = a.player.parse()?;
            a.search.given().are_read(&[player.kind])?;
            let config = a.search.config(!a.trace)?;
            let clock = a.clocks.clock()?;
            spec.load()?.visit(search::Search {
                kind: player.kind,
                player,
                config,
                clock,
                trace: a.trace,
                explain: a.explain,
            })
        }
        (Some(Command::Perft(a)), _) => {
            playouts_unread(&a.game, "perft counts move sequences")?;
            let spec = GameSpec::from_args(&a.game)?;
            if a.depth > MAX_PERFT_DEPTH {
                return Err(CliError::Usage(format!(
                    "perft's depth must be at most {MAX_PERFT_DEPTH} (sequences of two moves a step \
                     that long are more than any machine counts), not {}",
                    a.depth
                )));
            }
            spec.load()?.visit(search::Perft { depth: a.depth })
        }
        (Some(Command::Bench(a)), _) => {
            let spec = GameSpec::from_args(&a.game)?;
            clock_seconds("--seconds", a.seconds)?;
            // The measurement's own limits: said here, not applied in silence.
            if a.seconds > 3600.0 {
                return Err(CliError::Usage(format!(
                    "--seconds must be at most 3600 for a benchmark, not {}",
                    a.seconds
                )));
            }
            if !(1..=256).contains(&a.threads) {
                return Err(CliError::Usage(format!(
                    "--threads must be between 1 and 256, not {}",
                    a.threads
                )));
            }
            let player: Option<PlayerSpec> = a.player.as_deref().map(str::parse).transpose()?;
            if let Some(p) = &player {
                let threaded = matches!(p.kind, PlayerKind::Mcts | PlayerKind::Uct);
                if a.threads > 1 && !threaded {
                    return Err(CliError::Usage(format!(
                        "--threads applies to mcts and uct; {} searches on one thread",
                        p.kind
                    )));
                }
            }
            let mut game = spec.load()?;
            game.wait_compiled();
            game.visit(search::Bench {
                seconds: a.seconds,
                seed: a.seed,
                threads: a.threads,
                lanes: a.lanes,
                player,
            })
        }
        (Some(Command::Check(a)), _) => {
            let grounding = std::time::Duration::from_secs(u64::from(a.grounding_seconds));
            rules::check_files(&a.files, grounding, &mut std::io::stdout().lock())
        }
        (Some(Command::Fmt(a)), _) => {
            let (text, changed) = rules::fmt_file(&a.file)?;
            if !a.write {
                std::io::stdout().lock().write_all(text.as_bytes())?;
            } else if changed {
                write_file(&a.file, text)?;
                eprintln!("formatted {}", a.file.display());
            } else {
                eprintln!("{} is already formatted", a.file.display());
            }
            Ok(())
        }
        (Some(Command::Convert(a)), _) => {
            let to = match a.to {
                SyntaxName::Kif => ggp::syntax::ast::Syntax::Kif,
                SyntaxName::Gdl => ggp::syntax::ast::Syntax::Infix,
            };
            let text = rules::convert_file(&a.file, to)?;
            match &a.output {
                Some(path) => write_file(path, text),
                None => Ok(std::io::stdout().lock().write_all(text.as_bytes())?),
            }
        }
        (Some(Command::Stage(a)), _) => {
            let text = rules::stage_text(&a.file, a.stage.0)?;
            std::io::stdout().lock().write_all(text.as_bytes())?;
            Ok(())
        }
        (Some(Command::Serve(a)), _) => protocol::serve(a),
        (Some(Command::Web(a)), _) => protocol::web(a),
        (Some(Command::Match(a)), _) => protocol::run_match_command(a),
        (Some(Command::View(a)), _) => protocol::view(a),
        (Some(Command::Train(a)), _) => {
            if a.turns == 0 {
                return Err(CliError::Usage("--turns must be at least 1".into()));
            }
            playouts_unread(&a.game, "training plays every turn by its scores")?;
            GameSpec::from_args(&a.game)?.load()?.visit(learn::Train {
                turns: a.turns,
                out: a.out,
                rate: a.rate,
                seed: a.seed,
            })
        }
        (Some(Command::Tournament(a)), _) => {
            let players = a
                .players
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(str::parse)
                .collect::<Result<Vec<ggp::referee::SeatSpec>, _>>()?;
            if !(1..=MAX_ENTRANTS).contains(&players.len()) {
                return Err(CliError::Usage(format!(
                    "--players must name between 1 and {MAX_ENTRANTS} entrants (every pair plays), \
                     not {}",
                    players.len()
                )));
            }
            if !(1..=MAX_TOURNAMENT_GAMES).contains(&a.games) {
                return Err(CliError::Usage(format!(
                    "--games must be between 1 and {MAX_TOURNAMENT_GAMES} (games per pair), not {}",
                    a.games
                )));
            }
            a.search.given().are_read_by(&players)?;
            let config = a.search.config(false)?;
            let clock = a.clocks.clock()?;
            let spec = GameSpec::from_args(&a.game)?;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let workers = a.workers.unwrap_or(cores.min(2));
            if !(1..=64).contains(&workers) {
                return Err(CliError::Usage(format!(
                    "--workers must be between 1 and 64 (games played at once), not {workers}"
                )));
            }
            spec.load()?.visit(learn::Tournament {
                players,
                games: a.games,
                clock,
                config,
                workers,
                csv: a.csv,
                games_csv: a.games_csv,
            })
        }
        (Some(Command::Replay(a)), _) => {
            let choice = a.engine.choice()?;
            let out = std::io::stdout();
            let grounding = a
                .grounding_seconds
                .map(|s| std::time::Duration::from_secs(u64::from(s)));
            if rules::replay_file(&a.game, &a.trace, choice, grounding, &mut out.lock())? {
                Ok(())
            } else {
                Err(CliError::Failed(format!(
                    "{} does not replay on {}",
                    a.trace.display(),
                    a.game.display()
                )))
            }
        }
    }
}

fn play(a: PlayArgs) -> Result<(), CliError> {
    let spec = GameSpec::from_args(&a.game)?;
    let config = a.search.config(!a.quiet)?;
    let clock = a.clocks.clock()?;
    spec.load()?.visit(commands::Play {
        players: a.players,
        config,
        clock,
        quiet: a.quiet,
        flags: a.search.given(),
        out: a.out,
    })
}
