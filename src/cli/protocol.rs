//! The protocol's commands: `serve` (a player server), `match` (a referee) and `view` (a match record).

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use ggp::game::Game;
use ggp::load::{Loaded, Visitor};
use ggp::players::{Clock, PlayerConfig};
use ggp::protocol::record::MatchRecord;
use ggp::protocol::secs_checked;
use ggp::referee::record::{epoch_millis, Recorder};
use ggp::referee::{run_match, MatchEvent, MatchSettings, MissedStart, SeatSpec};
use ggp::server::{self, ServerConfig};

use super::commands::{
    aborted, assign_seats, referee_error, result_line, seats_for, taken_back, PrintEvents, Printing,
};
use super::spec::GameSpec;
use super::{clock_seconds, CliError};

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The port to listen on; 0 picks a free one (the address is printed first thing).
    #[arg(long, allow_negative_numbers = true, default_value_t = 9147)]
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
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        default_value_t = 1.0
    )]
    margin: f64,
    /// Matches played at once; `info` answers `busy` once they are all taken (PROTOCOL.md's `busy`
    /// while in any match is `--capacity 1`).
    #[arg(long, allow_negative_numbers = true, default_value_t = 4)]
    capacity: usize,
    /// Seconds a request's body may take to arrive.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        default_value_t = 10.0
    )]
    read_timeout: f64,
    /// Answer and wait: by default `mcts` goes on searching after each answer until the next request
    /// comes (while it is the server's only match), as the manager gathers the other players' moves.
    #[arg(long)]
    no_ponder: bool,
    #[command(flatten)]
    search: super::PlayerArgs,
    #[command(flatten)]
    load: super::spec::LoadArgs,
}

#[derive(Args, Debug, Clone)]
pub struct WebArgs {
    /// The port to listen on; 0 picks a free one (the address is printed first thing).
    #[arg(long, allow_negative_numbers = true, default_value_t = 8080)]
    port: u16,
    /// The address to listen on. Anyone who reaches it can run matches on this machine, so opening it
    /// beyond this machine (0.0.0.0) prints a warning.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// A folder of rule files (.kif, .gdl) to offer beside the bundled games (repeatable).
    #[arg(long = "games", value_name = "DIR")]
    folders: Vec<PathBuf>,
    /// Matches and tournaments running at once; more are refused with a message.
    #[arg(long, allow_negative_numbers = true, default_value_t = 4)]
    max_matches: usize,
    /// Seconds a match may go unwatched (its page closed) before it is stopped.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "SECONDS",
        default_value_t = 5.0
    )]
    abandon_after: f64,
    /// A host name the pages may be reached by besides `localhost` and IP addresses (repeatable):
    /// requests naming another host are refused, so that no other site's page can drive the server
    /// by pointing its own name here.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    #[command(flatten)]
    search: super::PlayerArgs,
    #[command(flatten)]
    load: super::spec::LoadArgs,
}

#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    game: super::spec::GameArgs,
    /// ROLE=KIND or ROLE=http://host:port (repeatable); a bare KIND (or the URL of a one-role game) plays every role not named; a player server plays one role of a match.
    /// `human` is a person at this terminal, under the play clock.
    #[arg(long = "player", value_name = "ROLE=KIND|URL")]
    players: Vec<String>,
    /// Write the match record (ggp-base's JSON) here.
    #[arg(long, value_name = "FILE.json")]
    out: Option<PathBuf>,
    /// The match id [default: one made from the game's name and the time].
    #[arg(long)]
    match_id: Option<String>,
    /// Play even when a seat cannot start (a remote player that does not answer), with random legal
    /// moves in its place.
    #[arg(long)]
    play_on: bool,
    #[command(flatten)]
    search: super::PlayerArgs,
    #[command(flatten)]
    clocks: super::ClockArgs,
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

impl Visitor for Boards<'_> {
    type Output = Result<(Vec<String>, Vec<String>), String>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output {
        let game = loaded.game.as_ref();
        // `replay` refuses a record of other roles too, saying so.
        let states = ggp::referee::record::replay(game, self.0)?;
        let boards = states.iter().map(|s| game.show_state(s)).collect();
        Ok((game.info().roles.clone(), boards))
    }
}

/// `ggp-run serve`.
pub fn serve(a: ServeArgs) -> Result<(), CliError> {
    let seat: SeatSpec = a.player.parse()?;
    let SeatSpec::Player(player) = seat else {
        return Err(CliError::Usage(
            "a server has nobody to ask and no player to forward to: choose a program player"
                .into(),
        ));
    };
    if a.capacity == 0 || a.capacity > 1024 {
        return Err(CliError::Usage(format!(
            "--capacity must be between 1 and 1024, not {}",
            a.capacity
        )));
    }
    let margin = secs_checked(a.margin)
        .ok_or_else(|| CliError::Usage(format!("--margin must be seconds, not {}", a.margin)))?;
    a.search.given().are_read(&[player.kind])?;
    let mut player_config = a.search.config(false)?;
    if player_config.depth == 0 {
        player_config.depth = PlayerConfig::default().depth;
    }
    let config = ServerConfig {
        name: a.name.split_whitespace().collect::<Vec<_>>().join("_"),
        player,
        player_config,
        load: a.load.options(None)?,
        margin,
        capacity: a.capacity,
        read_timeout: clock_seconds("--read-timeout", a.read_timeout)?,
        ponder: !a.no_ponder,
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

/// `ggp-run web`.
pub fn web(a: WebArgs) -> Result<(), CliError> {
    if a.max_matches == 0 || a.max_matches > 256 {
        return Err(CliError::Usage(format!(
            "--max-matches must be between 1 and 256, not {}",
            a.max_matches
        )));
    }
    let mut players = a.search.config(false)?;
    if players.depth == 0 {
        players.depth = PlayerConfig::default().depth;
    }
    let config = ggp::web::WebConfig {
        folders: a.folders.clone(),
        max_matches: a.max_matches,
        load: a.load.options(None)?,
        players,
        abandon_after: clock_seconds("--abandon-after", a.abandon_after)?,
        allowed_hosts: a
            .allow_hosts
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect(),
        ..Default::default()
    };
    if !a.host.is_loopback() {
        eprintln!(
            "warning: listening on {}: anyone who reaches this address can run matches and \
             programs' searches on this machine",
            a.host
        );
    }
    let log: server::Log = Arc::new(|line: &str| eprintln!("{line}"));
    ggp::web::run(SocketAddr::new(a.host, a.port), config, log, |addr| {
        // Tests and scripts read this line to learn the port.
        println!("listening on http://{addr}");
        let _ = std::io::stdout().flush();
        eprintln!("open http://{addr}/ in a browser");
    })
    .map_err(|e| CliError::Failed(format!("the web server stopped: {e}")))
}

/// `ggp-run match`.
pub fn run_match_command(a: MatchArgs) -> Result<(), CliError> {
    let spec = GameSpec::from_args(&a.game)?;
    let clock = a.clocks.clock()?;
    let config = a.search.config(false)?;
    spec.load()?.visit(Match {
        args: a,
        config,
        clock,
    })
}

/// A match between local and remote seats, printed step by step, its record written on request.
struct Match {
    args: MatchArgs,
    config: PlayerConfig,
    clock: Clock,
}

impl Visitor for Match {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let a = &self.args;
        let game = loaded.game.as_ref();
        let info = game.info();
        let roles = &info.roles;
        let specs = assign_seats(&a.players, roles, |_| None)?;
        a.search.given().are_read_by(&specs)?;
        let config = super::commands::with_depth(&self.config, &loaded);
        let mut seats = seats_for(&specs, &loaded, &config, true)?;
        let remote = specs.iter().any(|s| matches!(s, SeatSpec::Remote(_)));
        let rules = match (&loaded.rules, remote) {
            (Some(r), true) => Some(r.to_kif().map_err(|e| {
                CliError::Failed(format!("the rules cannot be sent to a remote player: {e}"))
            })?),
            _ => None,
        };
        if let Some(id) = &a.match_id {
            let unfit = |c: char| c.is_whitespace() || "()\";?".contains(c) || c.is_control();
            if id.is_empty() || id.chars().any(unfit) {
                return Err(CliError::Usage(format!(
                    "--match-id `{id}`: a match id is sent in the protocol's messages as one word: \
                     give one without spaces, parentheses, quotes, `;` or `?` (e.g. my-match.1)"
                )));
            }
        }
        let match_id = a
            .match_id
            .clone()
            .unwrap_or_else(|| format!("{}.{}", info.name, epoch_millis()));
        let settings = MatchSettings {
            missed_start: if a.play_on {
                MissedStart::PlayOn
            } else {
                MissedStart::Abort
            },
            ..MatchSettings::new(match_id, self.clock, config.seed)
        };
        let quiet = a.quiet && !specs.contains(&SeatSpec::Person);
        if !quiet {
            let seat_names: Vec<String> = roles
                .iter()
                .zip(&specs)
                .map(|(r, s)| format!("{r}={s}"))
                .collect();
            println!(
                "Match {} of {} ({}): {}; start clock {:.2} s, play clock {:.2} s",
                settings.match_id,
                info.name,
                loaded.report.engine,
                seat_names.join(" "),
                self.clock.start.as_secs_f64(),
                self.clock.play.as_secs_f64()
            );
        }
        let token = format!(
            "{:016x}",
            ggp::game::mix64(settings.seed ^ epoch_millis() as u64)
        );
        let pending = a.out.as_deref().map(super::output_file).transpose()?;
        let mut recorder = Recorder::new(game, &settings.match_id, self.clock, token);
        let mut printer = Printing::new(MatchPrinter {
            play_clock: self.clock.play,
            quiet,
        });
        let played = run_match(
            game,
            rules.as_deref(),
            &mut seats,
            &settings,
            &mut [&mut printer, &mut recorder],
        );
        if let Some(e) = printer.error.take() {
            return Err(e.into());
        }
        let result = played.map_err(|e| referee_error(e, true))?;
        let record = recorder.into_record();
        let mut out = std::io::stdout().lock();
        let failed = match (&result.goals, result.aborted.as_deref()) {
            (Some(goals), _) => {
                writeln!(out, "{}", result_line(roles, goals))?;
                None
            }
            // A person who ends the input ends the match, as with `play`.
            (None, Some("input ended")) => {
                writeln!(out, "Input ended: the match stops here.")?;
                None
            }
            (None, why) => Some(aborted(result.steps, why)),
        };
        writeln!(out, "Errors: {}", error_summary(&record, roles))?;
        if let (Some(pending), Some(path)) = (pending, &a.out) {
            super::finish_file(pending, path, record.to_json())?;
            if !a.quiet {
                writeln!(out, "Record written to {}", path.display())?;
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Prints a match as `ggp-run match` shows it: who is ready, each state, each step with its time,
/// effort and substitutions.
struct MatchPrinter {
    play_clock: Duration,
    quiet: bool,
}

impl PrintEvents for MatchPrinter {
    fn print<G: Game>(&mut self, game: &G, event: &MatchEvent<'_, G>) -> std::io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        // Standard output is taken for each event, never for the whole match: a person's seat writes
        // its prompts there too, from its own thread.
        let mut out = std::io::stdout().lock();
        let roles = &game.info().roles;
        match event {
            MatchEvent::Ready {
                role,
                name,
                problem,
            } => match problem {
                None => writeln!(out, "{}: {name} is ready", roles[*role])?,
                Some(v) => writeln!(
                    out,
                    "{}: {name} missed the start ({})",
                    roles[*role],
                    v.detail()
                )?,
            },
            MatchEvent::State { state, .. } => writeln!(out, "\n{}", game.show_state(state))?,
            MatchEvent::Moves { step, mover, moves } => {
                for (r, m) in moves.iter().enumerate() {
                    // In a turn-taking state the others' no-ops say nothing, unless they went wrong.
                    if mover.is_some_and(|who| who != r) && m.violation.is_none() {
                        continue;
                    }
                    write!(
                        out,
                        "Step {step}: {} plays {} in {:.3}s of {:.2}s",
                        roles[r],
                        game.move_kif(&m.mv),
                        m.took.as_secs_f64(),
                        self.play_clock.as_secs_f64()
                    )?;
                    if let Some(effort) = m.stats.map(|s| s.effort()).filter(|e| !e.is_empty()) {
                        write!(out, " ({effort})")?;
                    }
                    if let Some(v) = &m.violation {
                        write!(out, " [{}, substituted: {}]", v.code(), v.detail())?;
                    }
                    writeln!(out)?;
                }
            }
            MatchEvent::TakenBack { role, step } => {
                writeln!(out, "{}", taken_back(&roles[*role], *step))?
            }
            _ => {}
        }
        out.flush()
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
        let source = ggp::load::GameSource::named(&path.display().to_string())
            .map_err(|e| CliError::Usage(e.to_string()))?;
        // A record of a match started anywhere (`--state`, `--moves`) replays from its own first
        // state; a native game's records have no states to start from.
        let first_state = record.states.first().is_some_and(|s| {
            !s.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .is_empty()
        });
        let rule_file = matches!(source, ggp::load::GameSource::RuleFile(_));
        let start = super::start::StartArgs {
            from: (first_state && rule_file).then(|| a.file.clone()),
            step: Some(0),
            ..Default::default()
        };
        let spec = GameSpec {
            source,
            options: ggp::load::LoadOptions::default(),
            start,
        };
        let (game_roles, drawn) = spec
            .load()?
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
    // A record may keep its moves without their states (a long match sent whole): the moves are
    // shown all the same, and the boards when the game is given.
    let steps = record
        .states
        .len()
        .max(record.moves.len())
        .max(boards.as_ref().map_or(0, Vec::len));
    for step in 0..steps {
        match (
            boards.as_ref().and_then(|b| b.get(step)),
            record.states.get(step),
        ) {
            (Some(board), _) => writeln!(out, "\n{board}")?,
            (None, Some(state)) => writeln!(out, "\nState {step}: {state}")?,
            (None, None) if step == 0 => {
                writeln!(out, "\nThe record keeps no states: --game GAME draws them.")?
            }
            (None, None) => {}
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
