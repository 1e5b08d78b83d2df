//! `ggp-run GAME` (play): a match on the referee, printed for a person by an observer.

use std::io::Write;
use std::time::Duration;

use ggp::game::{Game, Goal, RoleIndex};
use ggp::load::{Loaded, Visitor};
use ggp::players::{Clock, PlayerConfig, PlayerKind};
use ggp::referee::person::Terminal;
use ggp::referee::record::Recorder;
use ggp::referee::{
    make_seat, run_match, MatchEvent, MatchSettings, MissedStart, Observer, RefereeError, Seat,
    SeatSpec,
};

use super::CliError;

/// Plays one match and prints it.
pub struct Play {
    pub players: Vec<String>,
    pub config: PlayerConfig,
    pub clock: Clock,
    pub quiet: bool,
    /// The player flags given (each refused unless a player reads it).
    pub flags: FlagsGiven,
    /// Where to write the match record.
    pub out: Option<std::path::PathBuf>,
}

/// The configuration with the depth filled in for this game (0 stands for "not given").
pub(super) fn with_depth<G: Game>(config: &PlayerConfig, loaded: &Loaded<G>) -> PlayerConfig {
    let mut c = config.clone();
    if c.depth == 0 {
        c.depth = super::spec::default_depth(loaded.report.engine);
    }
    c
}

/// Reads the `--player` options into one seat per role: `ROLE=SEAT` for one role, a bare `SEAT` for
/// every role not named, and `default(role)` for a role nothing names. A role given twice, or two bare
/// seats, is an error rather than a silent choice of the last.
pub(super) fn assign_seats(
    specs: &[String],
    roles: &[String],
    default: impl Fn(RoleIndex) -> Option<SeatSpec>,
) -> Result<Vec<SeatSpec>, CliError> {
    let mut named: Vec<Option<(SeatSpec, &str)>> = vec![None; roles.len()];
    let mut every: Option<(SeatSpec, &str)> = None;
    for spec in specs {
        // A URL has `=` only after its `?`; a role name never contains `:`.
        match spec.split_once('=').filter(|(role, _)| !role.contains(':')) {
            Some((role, seat)) => {
                let r = super::role_named(roles, role, spec)?;
                if let Some((_, earlier)) = &named[r] {
                    return Err(CliError::Usage(format!(
                        "--player gives {} twice ({earlier} and {spec}); give each role once",
                        roles[r]
                    )));
                }
                named[r] = Some((seat.parse()?, spec));
            }
            None => {
                if let Some((_, earlier)) = &every {
                    return Err(CliError::Usage(format!(
                        "--player gives a kind for every role twice ({earlier} and {spec}); give \
                         one, and ROLE=KIND for the roles that differ"
                    )));
                }
                every = Some((spec.parse()?, spec));
            }
        }
    }
    let seats = named
        .into_iter()
        .enumerate()
        .map(|(r, k)| match (k, &every) {
            (Some((k, _)), _) => Ok(k),
            (None, Some((k, _))) => Ok(k.clone()),
            (None, None) => default(r).ok_or_else(|| {
                CliError::Usage(format!(
                    "nobody plays {}: give --player {}=KIND or --player {}=http://host:port",
                    roles[r], roles[r], roles[r]
                ))
            }),
        })
        .collect::<Result<Vec<SeatSpec>, CliError>>()?;
    ggp::referee::one_role_a_server(&seats, |r| roles[r].clone()).map_err(CliError::Usage)?;
    Ok(seats)
}

/// The program `play` seats where nothing is said: alpha-beta where it can play, else Monte Carlo tree
/// search, which plays any game.
fn default_program(info: &ggp::game::GameInfo) -> SeatSpec {
    let kind = if PlayerKind::AlphaBeta.check(info).is_ok() {
        PlayerKind::AlphaBeta
    } else {
        PlayerKind::Mcts
    };
    SeatSpec::Player(kind.into())
}

/// Which of the players' flags the command line gave: a flag that no player of the match reads is
/// refused, not silently ignored.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FlagsGiven {
    pub fraction: bool,
    pub depth: bool,
    /// `--threads` above 1.
    pub threads: bool,
}

impl FlagsGiven {
    /// Refuses each flag given that none of the `kinds` (the local programs) reads.
    pub(super) fn are_read(&self, kinds: &[PlayerKind]) -> Result<(), CliError> {
        use PlayerKind::*;
        let checks: [(bool, &str, &[PlayerKind], &str); 3] = [
            (self.fraction, "--fraction", &[Jamboree], "jamboree"),
            (
                self.depth,
                "--depth",
                &[Minimax, AlphaBeta, Jamboree, Id, MinimaxDepth],
                "minimax, alphabeta, jamboree, id and minimaxdepth",
            ),
            (self.threads, "--threads", &[Mcts, Uct], "mcts and uct"),
        ];
        for (given, flag, readers, names) in checks {
            if given && !kinds.iter().any(|k| readers.contains(k)) {
                let mut programs: Vec<String> = Vec::new();
                for kind in kinds.iter().map(ToString::to_string) {
                    if !programs.contains(&kind) {
                        programs.push(kind);
                    }
                }
                let programs = match programs.as_slice() {
                    [] => "no program plays here".to_string(),
                    _ => format!("the programs here: {}", programs.join(", ")),
                };
                return Err(CliError::Usage(format!(
                    "{flag} applies only to {names}, and no player here is one ({programs})"
                )));
            }
        }
        Ok(())
    }

    /// [`FlagsGiven::are_read`] by the programs among `seats` (not people, nor remote players, which
    /// are given no flags).
    pub(super) fn are_read_by(&self, seats: &[SeatSpec]) -> Result<(), CliError> {
        let kinds: Vec<PlayerKind> = seats
            .iter()
            .filter_map(|s| match s {
                SeatSpec::Player(p) => Some(p.kind),
                _ => None,
            })
            .collect();
        self.are_read(&kinds)
    }
}

/// Builds every seat of a match; a person sits at this terminal (`timed`: against the play clock).
pub(super) fn seats_for<G: Game>(
    specs: &[SeatSpec],
    loaded: &Loaded<G>,
    config: &PlayerConfig,
    timed: bool,
) -> Result<Vec<Box<dyn Seat<G>>>, CliError> {
    specs
        .iter()
        .enumerate()
        .map(|(role, spec)| {
            make_seat(spec, role, loaded, config, &mut |_| {
                Ok(Box::new(Terminal::stdio(timed)) as Box<dyn Seat<G>>)
            })
            .map_err(|e| referee_error(e, false))
        })
        .collect()
}

/// A referee's error as the command line says it; `play_on`: whether the command takes `--play-on`,
/// which plays a match whose seat did not start.
pub(super) fn referee_error(e: RefereeError, play_on: bool) -> CliError {
    match e {
        RefereeError::Game(g) => CliError::Game(g),
        RefereeError::MissedStart { .. } if play_on => CliError::Failed(format!(
            "{e}; the match did not start (--play-on plays it anyway, with random moves in that \
             seat's place)"
        )),
        RefereeError::MissedStart { .. } => {
            CliError::Failed(format!("{e}; the match did not start"))
        }
        other => CliError::Failed(other.to_string()),
    }
}

/// The error of a match aborted before the game ended (past the most steps a match may take, or
/// by a seat), once its record is written: the command fails.
pub(super) fn aborted(steps: usize, why: Option<&str>) -> CliError {
    CliError::Failed(format!(
        "the match was aborted after {steps} steps: {}",
        why.unwrap_or("no reason given")
    ))
}

impl Visitor for Play {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let game = loaded.game.as_ref();
        let info = game.info();
        let specs = assign_seats(&self.players, &info.roles, |r| {
            Some(if r == 0 {
                SeatSpec::Person
            } else {
                default_program(info)
            })
        })?;
        self.flags.are_read_by(&specs)?;
        let config = with_depth(&self.config, &loaded);
        let mut seats = seats_for(&specs, &loaded, &config, false)?;
        let pending = self.out.as_deref().map(super::output_file).transpose()?;
        // A person at the keyboard needs the board and the other moves whatever `--quiet` says.
        let quiet = self.quiet && !specs.contains(&SeatSpec::Person);
        let rules = match (
            &loaded.rules,
            specs.iter().any(|s| matches!(s, SeatSpec::Remote(_))),
        ) {
            (Some(rules), true) => Some(rules.to_kif().map_err(|e| {
                CliError::Failed(format!("the rules cannot be sent to a remote player: {e}"))
            })?),
            _ => None,
        };
        let settings = MatchSettings {
            missed_start: MissedStart::Abort,
            ..MatchSettings::new(
                format!("{}.{}", info.name, ggp::referee::record::epoch_millis()),
                self.clock,
                self.config.seed,
            )
        };
        let mut printer = Printing::new(PlayPrinter {
            engine: loaded.report.engine.as_str(),
            clock: self.clock,
            quiet,
        });
        let mut recorder = Recorder::new(game, &settings.match_id, self.clock, String::new());
        let mut observers: Vec<&mut dyn Observer<G>> = vec![&mut printer];
        if self.out.is_some() {
            observers.push(&mut recorder);
        }
        let played = run_match(
            game,
            rules.as_deref(),
            &mut seats,
            &settings,
            &mut observers,
        );
        if let Some(e) = printer.error.take() {
            return Err(e.into());
        }
        let result = played.map_err(|e| referee_error(e, false))?;
        // The result first: a record that cannot be written must not hide it.
        let mut out = std::io::stdout().lock();
        let mut failed = None;
        match (&result.goals, result.aborted.as_deref()) {
            (Some(goals), _) => writeln!(out, "{}", result_line(&info.roles, goals))?,
            (None, Some("input ended")) => writeln!(out, "Input ended: the match stops here.")?,
            (None, why) => failed = Some(aborted(result.steps, why)),
        }
        if let (Some(pending), Some(path)) = (pending, &self.out) {
            super::finish_file(pending, path, recorder.record().to_json())?;
            if !quiet {
                writeln!(out, "Record written to {}", path.display())?;
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Prints a match as `ggp-run GAME` shows it: the board before each move, the moves, the result.
struct PlayPrinter {
    engine: &'static str,
    clock: Clock,
    quiet: bool,
}

impl PrintEvents for PlayPrinter {
    fn print<G: Game>(&mut self, game: &G, event: &MatchEvent<'_, G>) -> std::io::Result<()> {
        // Standard output is taken for each event, never for the whole match: a person's seat writes
        // its prompts there too, from its own thread.
        let mut out = std::io::stdout().lock();
        let info = game.info();
        match event {
            MatchEvent::Starting { seats, .. } if !self.quiet => {
                let names: Vec<String> = info
                    .roles
                    .iter()
                    .zip(seats.iter())
                    .map(|(r, p)| format!("{r}={p}"))
                    .collect();
                writeln!(
                    out,
                    "Game {} ({}): {}; play clock {}",
                    info.name,
                    self.engine,
                    names.join(" "),
                    seconds(self.clock.play)
                )?;
            }
            MatchEvent::State { state, .. } if !self.quiet => {
                let drawn = game.show_state(state);
                if game.is_terminal(state) {
                    writeln!(out, "\n{}", without_control(&drawn))?;
                } else {
                    writeln!(out, "\n{drawn}")?;
                }
            }
            MatchEvent::Moves { mover, moves, .. } => {
                for (role, m) in moves.iter().enumerate() {
                    if let Some(v) = &m.violation {
                        writeln!(
                            out,
                            "warning: {} plays {} in place of its answer ({}: {})",
                            info.roles[role],
                            game.show_move(&m.mv),
                            v.code(),
                            v.detail()
                        )?;
                        continue;
                    }
                    if self.quiet || mover.is_some_and(|who| who != role) {
                        continue;
                    }
                    write!(out, "{} plays {}", info.roles[role], game.show_move(&m.mv))?;
                    // A person's typing is not the program's time: no time for a person's move.
                    if let Some(stats) = &m.stats {
                        write!(out, " in {:.3}s", m.took.as_secs_f64())?;
                        let effort = stats.effort();
                        if !effort.is_empty() {
                            write!(out, " ({effort})")?;
                        }
                    }
                    writeln!(out)?;
                }
            }
            MatchEvent::TakenBack { role, step } => {
                writeln!(out, "{}", taken_back(&info.roles[*role], *step))?
            }
            _ => {}
        }
        out.flush()
    }
}

/// A printer of a match's events; [`Printing`] makes it an observer that keeps its first error.
pub(super) trait PrintEvents {
    /// Prints one event.
    fn print<G: Game>(&mut self, game: &G, event: &MatchEvent<'_, G>) -> std::io::Result<()>;
}

/// An observer that prints with `P`, keeping the first failure to write for when the match is over.
pub(super) struct Printing<P> {
    pub printer: P,
    pub error: Option<std::io::Error>,
}

impl<P> Printing<P> {
    pub(super) fn new(printer: P) -> Printing<P> {
        Printing {
            printer,
            error: None,
        }
    }
}

impl<G: Game, P: PrintEvents> Observer<G> for Printing<P> {
    fn observe(&mut self, game: &G, event: &MatchEvent<'_, G>) {
        if let Err(e) = self.printer.print(game, event) {
            self.error.get_or_insert(e);
        }
    }
}

/// What taking back a move did, in words.
pub(super) fn taken_back(role: &str, step: Option<usize>) -> String {
    match step {
        Some(_) => format!("Taken back: the game is where {role} last chose a move."),
        None => "Nothing to take back yet.".to_string(),
    }
}

/// A drawn state without its `control(...)` fact: whose turn it is means nothing once the game is over.
fn without_control(drawn: &str) -> String {
    drawn
        .lines()
        .filter(|l| !(l.starts_with("control(") || l.starts_with("(control ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `Goals: x=100 o=0 (x wins)`: the goals, and in words who won (as the referee judges it); a one-role
/// game (a puzzle) says how much of the full score was reached.
pub(super) fn result_line(roles: &[String], goals: &[Goal]) -> String {
    let listed: Vec<String> = roles
        .iter()
        .zip(goals)
        .map(|(name, g)| format!("{name}={g}"))
        .collect();
    let words = ggp::referee::verdict(goals).words(roles);
    format!("Goals: {} ({words})", listed.join(" "))
}

/// A duration as `1.25 s`.
pub(super) fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}
