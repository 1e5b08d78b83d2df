//! The protocol's commands: `serve` (a player server), `match` (a referee) and `view` (a match record).

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use ggp::players::{PlayerConfig, PlayerKind, PlayerSpec};
use ggp::protocol::messages::compact_kif;
use ggp::protocol::record::MatchRecord;
use ggp::protocol::referee::{MatchSettings, RefereeEvent, RunMatch, Seat};
use ggp::protocol::server::{self, ServerConfig};
use ggp::protocol::{load_kif, secs_checked, KifGame, KifVisitor};

use super::{clock_seconds, CliError};

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The port to listen on; 0 picks a free one (the address is printed first thing).
    #[arg(long, default_value_t = 9147)]
    port: u16,
    /// The address to listen on (0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// The player every match gets.
    #[arg(long, default_value = "mcts")]
    player: String,
    /// The name `info` reports.
    #[arg(long, default_value = "ggp-rust")]
    name: String,
    /// Seconds kept out of each clock for the reply to travel (more when replies are seen to need it).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    margin: f64,
    /// Matches played at once.
    #[arg(long, default_value_t = 4)]
    capacity: usize,
    /// Seconds a request's body may take to arrive.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    read_timeout: f64,
    /// Seed for random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads of each mcts player.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Search depth of minimax, alphabeta, jamboree and minimaxdepth, and the deepest iteration of id
    /// when given [default: 4; id unlimited].
    #[arg(long)]
    depth: Option<u32>,
}

#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    /// The game: a rule file (.kif, or .gdl converted to KIF for the players).
    game: PathBuf,
    /// ROLE=KIND or ROLE=http://host:port (repeatable); a bare KIND or URL plays every role not named.
    #[arg(long = "player", value_name = "ROLE=KIND|URL")]
    players: Vec<String>,
    /// Seconds each player has to prepare.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    startclock: f64,
    /// Seconds each player has for a move.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    playclock: f64,
    /// Write the match record (ggp-base's JSON) here.
    #[arg(long, value_name = "FILE.json")]
    out: Option<PathBuf>,
    /// The match id [default: one made from the time].
    #[arg(long)]
    match_id: Option<String>,
    /// Seed for local players and substituted moves.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads of each local mcts player.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Search depth of local minimax, alphabeta, jamboree and minimaxdepth players, and the deepest
    /// iteration of id when given [default: 4; id unlimited].
    #[arg(long)]
    depth: Option<u32>,
    /// Print only the result.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ViewArgs {
    /// A match record (ggp-base's JSON).
    file: PathBuf,
    /// The game's rule file: the record's moves are replayed on it and each state drawn as a board.
    #[arg(long, value_name = "GAME.kif")]
    game: Option<PathBuf>,
}

/// Replays a record's moves on the game and draws every state (the record keeps only facts).
struct Boards<'a>(&'a MatchRecord);

impl KifVisitor for Boards<'_> {
    type Output = Result<(Vec<String>, Vec<String>), String>;

    fn visit<G: KifGame>(self, game: Box<G>) -> Self::Output {
        let mut state = game.initial_state();
        let mut boards = vec![game.show_state(&state)];
        for (step, joint) in self.0.moves.iter().enumerate() {
            let moves = joint
                .iter()
                .enumerate()
                .map(|(role, text)| game.parse_move(&state, role, text))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("step {} does not replay: {e}", step + 1))?;
            state = game.next_state(&state, &moves);
            boards.push(game.show_state(&state));
        }
        Ok((game.info().roles.clone(), boards))
    }
}

/// `ggp-run serve`.
pub fn serve(a: ServeArgs) -> Result<(), CliError> {
    let spec: PlayerSpec = a.player.parse()?;
    let player = spec.kind;
    if player == PlayerKind::Human {
        return Err(CliError::Usage(
            "a server has nobody to ask: choose a program player".into(),
        ));
    }
    if a.capacity == 0 || a.capacity > 1024 {
        return Err(CliError::Usage(format!(
            "--capacity must be between 1 and 1024, not {}",
            a.capacity
        )));
    }
    let margin = secs_checked(a.margin)
        .ok_or_else(|| CliError::Usage(format!("--margin must be seconds, not {}", a.margin)))?;
    let config = ServerConfig {
        name: a.name.split_whitespace().collect::<Vec<_>>().join("_"),
        player,
        player_config: PlayerConfig {
            seed: a.seed,
            threads: a.threads.clamp(1, 256),
            depth: a.depth.unwrap_or(PlayerConfig::default().depth).max(1),
            id_depth: a.depth.map(|d| d.max(1)),
            learned: spec.file.clone(),
            ..PlayerConfig::default()
        },
        margin,
        capacity: a.capacity,
        read_timeout: clock_seconds("--read-timeout", a.read_timeout)?,
        ..ServerConfig::default()
    };
    let log: server::Log = Arc::new(|line: &str| eprintln!("{line}"));
    server::run(SocketAddr::new(a.host, a.port), config, log, |addr| {
        // Tests and scripts read this line to learn the port.
        println!("listening on http://{addr}");
        let _ = std::io::stdout().flush();
        eprintln!("{} listening on http://{addr}", server::time_of_day());
    })
    .map_err(|e| CliError::Failed(format!("the server stopped: {e}")))
}

/// The rules of `path` as one line of KIF sentences, what the players are sent.
pub(super) fn rules_kif(path: &Path) -> Result<String, CliError> {
    let is_kif = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("kif"));
    let text = if is_kif {
        std::fs::read_to_string(path).map_err(|e| CliError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?
    } else {
        super::rules::convert_file(path, ggp::syntax::ast::Syntax::Kif)?
    };
    compact_kif(&text).map_err(|e| CliError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Reads `--player` options into one seat per role.
fn assign_seats(specs: &[String], roles: &[String]) -> Result<Vec<Seat>, CliError> {
    let mut seats: Vec<Option<Seat>> = vec![None; roles.len()];
    let mut everyone: Option<Seat> = None;
    for spec in specs {
        // A URL has `=` only after its `?`; a role name never contains `:`.
        match spec.split_once('=').filter(|(role, _)| !role.contains(':')) {
            Some((role, seat)) => {
                let r = super::role_named(roles, role, spec)?;
                seats[r] = Some(seat.parse()?);
            }
            None => everyone = Some(spec.parse()?),
        }
    }
    seats
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            s.or_else(|| everyone.clone()).ok_or_else(|| {
                CliError::Usage(format!(
                    "nobody plays {}: give --player {}=KIND or --player {}=http://host:port",
                    roles[r], roles[r], roles[r]
                ))
            })
        })
        .collect()
}

/// `ggp-run match`.
pub fn run_match(a: MatchArgs) -> Result<(), CliError> {
    let start_clock = clock_seconds("--startclock", a.startclock)?;
    let play_clock = clock_seconds("--playclock", a.playclock)?;
    let rules = rules_kif(&a.game)?;
    let name = a
        .game
        .file_stem()
        .map_or_else(|| "game".to_string(), |s| s.to_string_lossy().into_owned());
    let network_time = Duration::from_secs(u64::from(super::spec::DEFAULT_GROUNDING_SECONDS));
    let (engine, loaded) = load_kif(&rules, &name, network_time).map_err(|e| CliError::File {
        path: a.game.clone(),
        message: e.to_string(),
    })?;
    if let Some(why) = &loaded.fallback {
        eprintln!("note: {why}; the Datalog evaluator plays this game");
    }
    let roles = engine.roles().to_vec();
    let seats = assign_seats(&a.players, &roles)?;
    let match_id = a.match_id.clone().unwrap_or_else(|| {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("{name}.{ms}")
    });
    let settings = MatchSettings {
        match_id,
        start_clock,
        play_clock,
        player_config: PlayerConfig {
            seed: a.seed,
            threads: a.threads.clamp(1, 256),
            depth: a.depth.unwrap_or(PlayerConfig::default().depth).max(1),
            id_depth: a.depth.map(|d| d.max(1)),
            ..PlayerConfig::default()
        },
    };
    let out = std::io::stdout();
    let mut out = out.lock();
    let seat_names: Vec<String> = roles
        .iter()
        .zip(&seats)
        .map(|(r, s)| match s {
            Seat::Local(k) => format!("{r}={k}"),
            Seat::Remote(url) => format!("{r}={url}"),
        })
        .collect();
    if !a.quiet {
        writeln!(
            out,
            "Match {} of {} ({}): {}; start clock {:.2} s, play clock {:.2} s",
            settings.match_id,
            name,
            loaded.engine,
            seat_names.join(" "),
            start_clock.as_secs_f64(),
            play_clock.as_secs_f64()
        )?;
    }
    let quiet = a.quiet;
    let mut io_error = None;
    let mut observe = |event: RefereeEvent<'_>| {
        if quiet {
            return;
        }
        if let Err(e) = print_event(&mut out, event, play_clock) {
            io_error.get_or_insert(e);
        }
    };
    let record = engine.visit(RunMatch {
        rules: &rules,
        seats: &seats,
        settings: &settings,
        observe: &mut observe,
    });
    if let Some(e) = io_error {
        return Err(e.into());
    }
    let record = record.map_err(|e| CliError::Failed(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    if record.is_completed {
        writeln!(
            out,
            "{}",
            super::commands::result_line(&roles, &record.goal_values)
        )?;
    } else {
        writeln!(
            out,
            "The match was aborted after {} steps",
            record.moves.len()
        )?;
    }
    writeln!(out, "Errors: {}", error_summary(&record, &roles))?;
    if let Some(path) = &a.out {
        std::fs::write(path, record.to_json()).map_err(|e| CliError::File {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if !a.quiet {
            writeln!(out, "Record written to {}", path.display())?;
        }
    }
    Ok(())
}

fn print_event(
    out: &mut impl Write,
    event: RefereeEvent<'_>,
    play_clock: Duration,
) -> std::io::Result<()> {
    match event {
        RefereeEvent::Started {
            role,
            name,
            problem,
        } => match problem {
            None => writeln!(out, "{role}: {name} is ready"),
            Some(why) => writeln!(
                out,
                "{role}: {name} missed the start ({why}); random legal moves replace it"
            ),
        },
        RefereeEvent::Board { board, .. } => writeln!(out, "\n{board}"),
        RefereeEvent::Step { step, mover, moves } => {
            for (r, (role, m)) in moves.iter().enumerate() {
                // In a turn-taking state the others' no-ops say nothing, unless they went wrong.
                if mover.is_some_and(|who| who != r) && m.error.is_none() {
                    continue;
                }
                write!(
                    out,
                    "Step {step}: {role} plays {} in {:.3}s of {:.2}s",
                    m.mv,
                    m.took.as_secs_f64(),
                    play_clock.as_secs_f64()
                )?;
                if !m.effort.is_empty() {
                    write!(out, " ({})", m.effort)?;
                }
                if let Some(code) = &m.error {
                    let code = code.split_whitespace().next().unwrap_or(code);
                    write!(
                        out,
                        " [{code}, substituted: {}]",
                        m.detail.as_deref().unwrap_or("")
                    )?;
                }
                writeln!(out)?;
            }
            out.flush()
        }
    }
}

/// `xplayer none; oplayer 2 TO, 1 IL`.
fn error_summary(record: &MatchRecord, roles: &[String]) -> String {
    roles
        .iter()
        .enumerate()
        .map(|(r, role)| {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for step in &record.errors {
                let code = step
                    .get(r)
                    .and_then(|e| e.split_whitespace().next())
                    .unwrap_or("");
                if code.is_empty() {
                    continue;
                }
                match counts.iter_mut().find(|(c, _)| c == code) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((code.to_string(), 1)),
                }
            }
            if counts.is_empty() {
                format!("{role} none")
            } else {
                let list: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
                format!("{role} {}", list.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `ggp-run view`.
pub fn view(a: ViewArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&a.file).map_err(|e| CliError::File {
        path: a.file.clone(),
        message: e.to_string(),
    })?;
    let record = MatchRecord::from_json(&text).map_err(|e| CliError::File {
        path: a.file.clone(),
        message: e.to_string(),
    })?;
    let mut roles = record.role_names();
    let mut boards = None;
    if let Some(path) = &a.game {
        let rules = rules_kif(path)?;
        let name = path
            .file_stem()
            .map_or_else(|| "game".to_string(), |s| s.to_string_lossy().into_owned());
        let network_time = Duration::from_secs(u64::from(super::spec::DEFAULT_GROUNDING_SECONDS));
        let (engine, _) = load_kif(&rules, &name, network_time).map_err(|e| CliError::File {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let (game_roles, drawn) = engine
            .visit(Boards(&record))
            .map_err(|why| CliError::Failed(format!("{}: {why}", a.file.display())))?;
        roles = game_roles;
        boards = Some(drawn);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "Match {}{}: start clock {} s, play clock {} s, {} steps{}",
        record.match_id,
        record
            .game_name
            .as_deref()
            .map(|g| format!(" of {g}"))
            .unwrap_or_default(),
        record.start_clock,
        record.play_clock,
        record.moves.len(),
        if record.is_completed {
            ""
        } else if record.is_aborted {
            " (aborted)"
        } else {
            " (not completed)"
        }
    )?;
    for (r, role) in roles.iter().enumerate() {
        let name = record
            .player_names_from_host
            .get(r)
            .map_or("?", String::as_str);
        writeln!(out, "  {role}: {name}")?;
    }
    for (step, state) in record.states.iter().enumerate() {
        match boards.as_ref().and_then(|b| b.get(step)) {
            Some(board) => writeln!(out, "\n{board}")?,
            None => writeln!(out, "\nState {step}: {state}")?,
        }
        if let Some(joint) = record.moves.get(step) {
            for (r, mv) in joint.iter().enumerate() {
                let role = roles.get(r).map_or("?", String::as_str);
                let error = record
                    .errors
                    .get(step)
                    .and_then(|e| e.get(r))
                    .filter(|e| !e.is_empty())
                    .map(|e| format!(" [{e}]"))
                    .unwrap_or_default();
                writeln!(out, "Step {}: {role} plays {mv}{error}", step + 1)?;
            }
        }
    }
    if record.is_completed {
        writeln!(
            out,
            "\n{}",
            super::commands::result_line(&roles, &record.goal_values)
        )?;
    }
    writeln!(out, "Errors: {}", error_summary(&record, &roles))?;
    Ok(())
}
