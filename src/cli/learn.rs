//! `ggp-run train` and `ggp-run tournament`: the command-line faces of [`ggp::learn`] and
//! [`ggp::tournament`], with indicatif progress bars on standard error.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use ggp::files::PendingFile;
use ggp::game::Game;
use ggp::learn::train;
use ggp::load::{Loaded, Visitor};
use ggp::players::{thousands, Clock, PlayerConfig, StopSwitch};
use ggp::referee::{SeatSpec, GRACE};
use ggp::tournament::{
    by_seat, entrant_names, games_csv, run, schedule, standings, to_csv, GameRecord,
    TournamentOptions, STOPPED_ON_REQUEST,
};

use super::{interrupt, CliError};

/// Learns a score for every position by self-play (temporal-difference learning) and writes the scores.
pub struct Train {
    pub turns: u64,
    pub out: PathBuf,
    pub rate: f64,
    pub seed: u64,
}

impl Visitor for Train {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let game = loaded.game.as_ref();
        // Before the temporary file exists, so that an interrupt never leaves it behind.
        interrupt::catch();
        let pending = super::output_file(&self.out)?;
        let bar = ProgressBar::new(self.turns);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} turns ({per_sec}, {eta} left) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let started = Instant::now();
        let model = train(game, self.turns, self.rate, self.seed, |p| {
            bar.set_position(p.turns);
            let cut_off = match p.cut_off {
                0 => String::new(),
                n => format!(" ({} cut off unfinished)", thousands(n)),
            };
            bar.set_message(format!(
                "{} games{cut_off}, {} states",
                thousands(p.games),
                thousands(p.states as u64)
            ));
            if interrupt::interrupted() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .map_err(|e| match interrupt::interrupted() {
            true => CliError::Interrupted(e.to_string()),
            false => CliError::Usage(e.to_string()),
        })?;
        bar.finish_and_clear();
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        super::finish_file(pending, &self.out, model.to_text())?;
        println!(
            "Trained on {} for {} turns in {:.2} s ({} turns/s): {} states scored, written to {}",
            game.info().name,
            thousands(model.header.turns),
            secs,
            thousands((model.header.turns as f64 / secs) as u64),
            thousands(model.scores.len() as u64),
            self.out.display()
        );
        if model.header.turns < self.turns {
            return Err(CliError::Interrupted(format!(
                "training stopped by Ctrl-C after {} of its {} turns; the scores learned in them are \
                 kept",
                thousands(model.header.turns),
                thousands(self.turns)
            )));
        }
        Ok(())
    }
}

/// The most games a tournament's schedule holds in all (pairs, or lone entrants of a one-role
/// game, times games).
const MAX_SCHEDULE: u64 = 1_000_000;

/// Plays a round-robin tournament and prints the table.
pub struct Tournament {
    pub players: Vec<SeatSpec>,
    pub games: u32,
    pub clock: Clock,
    pub config: PlayerConfig,
    pub workers: usize,
    pub csv: Option<PathBuf>,
    pub games_csv: Option<PathBuf>,
}

impl Tournament {
    /// The progress bar over `total` games.
    fn bar(total: usize) -> ProgressBar {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} games ({elapsed} elapsed, {eta} left)",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        bar
    }

    fn options(&self, config: PlayerConfig, stop: Arc<StopSwitch>) -> TournamentOptions {
        TournamentOptions {
            games: self.games,
            clock: self.clock,
            grace: GRACE,
            config,
            workers: self.workers,
            stop: Some(stop),
        }
    }

    /// Prints the table and the results by seat (and writes the CSVs) after `records`.
    fn report(
        &self,
        game: &str,
        roles: &[String],
        how: &str,
        records: &[GameRecord],
        (csv, games): (Option<PendingFile>, Option<PendingFile>),
    ) -> Result<(), CliError> {
        let names = entrant_names(&self.players);
        let table = standings(&names, records);
        // The column appears when it has something to say: remote entrants, or a local move was late.
        let remote = self
            .players
            .iter()
            .any(|p| matches!(p, SeatSpec::Remote(_)))
            || table.iter().any(|s| s.substituted > 0);
        // And the searches' mean depth, when one of them deepens.
        let deepens = table.iter().any(|s| s.mean_depth.is_some());
        let width = table.iter().map(|s| s.name.len()).max().unwrap_or(6).max(6);
        let out = std::io::stdout();
        let mut out = out.lock();
        writeln!(
            out,
            "{} games of {game} ({how}); score = win 1, draw 1/2 per game, 95% interval by Wilson's \
             score method",
            records.len(),
        )?;
        write!(
            out,
            "{:width$}  {:>5}  {:>5}  {:>5}  {:>6}  {:>8}  {:>5}  95% interval",
            "player", "games", "wins", "draws", "losses", "avg goal", "score"
        )?;
        write!(out, "{}", if remote { "  substituted moves" } else { "" })?;
        writeln!(out, "{}", if deepens { "  depth" } else { "" })?;
        for s in &table {
            // An entrant that played no game has no score: `-`, not a certain loss of 0..0.
            let (goal, score, interval) = if s.games == 0 {
                ("-".to_string(), "-".to_string(), "-".to_string())
            } else {
                (
                    format!("{:.1}", s.average_goal),
                    format!("{:.3}", s.score),
                    format!("{:.3}..{:.3}", s.low, s.high),
                )
            };
            write!(
                out,
                "{:width$}  {:>5}  {:>5}  {:>5}  {:>6}  {:>8}  {:>5}  {}",
                s.name, s.games, s.wins, s.draws, s.losses, goal, score, interval
            )?;
            if remote {
                write!(out, "{:>21}", s.substituted)?;
            }
            if let (true, Some(d)) = (deepens, s.mean_depth) {
                write!(out, "  {d:>5.1}")?;
            }
            writeln!(out)?;
        }
        if roles.len() > 1 {
            Self::print_by_seat(&mut out, &names, roles, records, width)?;
        }
        if let (Some(pending), Some(path)) = (csv, &self.csv) {
            super::finish_file(pending, path, to_csv(&table))?;
        }
        if let (Some(pending), Some(path)) = (games, &self.games_csv) {
            super::finish_file(pending, path, games_csv(&names, roles, records))?;
        }
        Ok(())
    }

    /// Each entrant's wins, draws and losses and its score in each role's seat: a seat that wins
    /// whoever holds it shows here, apart from the players' strength.
    fn print_by_seat(
        out: &mut impl Write,
        names: &[String],
        roles: &[String],
        records: &[GameRecord],
        width: usize,
    ) -> Result<(), CliError> {
        let seats = by_seat(names.len(), roles.len(), records);
        let (width, cell) = (width.max(15), 16);
        write!(out, "\n{:width$}", "by seat (w-d-l)")?;
        for role in roles {
            write!(out, "  {role:>cell$}")?;
        }
        writeln!(out)?;
        for (name, lines) in names.iter().zip(&seats) {
            write!(out, "{name:width$}")?;
            for line in lines {
                let text = match line.score() {
                    Some(score) => {
                        format!("{}-{}-{} {score:.2}", line.wins, line.draws, line.losses)
                    }
                    None => "-".to_string(),
                };
                write!(out, "  {text:>cell$}")?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}

impl Visitor for Tournament {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let info = loaded.game.info();
        // The schedule is made, with a slot for every result, before the first game.
        let n = self.players.len() as u64;
        let groups = if info.num_roles() <= 1 {
            n
        } else {
            n * n.saturating_sub(1) / 2
        };
        let scheduled = groups * u64::from(self.games);
        if scheduled > MAX_SCHEDULE {
            return Err(CliError::Usage(format!(
                "{n} entrants playing {} games each make {scheduled} games, more than the \
                 {MAX_SCHEDULE} a tournament holds: fewer entrants or fewer --games",
                self.games
            )));
        }
        let total = schedule(self.players.len(), info.num_roles(), self.games).len();
        let bar = Self::bar(total);
        // Ctrl-C ends the games in play at their next step and keeps the games that ended.
        interrupt::catch();
        let stop = Arc::new(StopSwitch::new());
        let options = self.options(
            super::commands::with_depth(&self.config, &loaded),
            stop.clone(),
        );
        let outputs = (
            self.csv.as_deref().map(super::output_file).transpose()?,
            self.games_csv
                .as_deref()
                .map(super::output_file)
                .transpose()?,
        );
        let finished = AtomicBool::new(false);
        let played = std::thread::scope(|scope| {
            scope.spawn(|| {
                // Bounded by the tournament: it ends when the games do.
                while !finished.load(Ordering::Relaxed) {
                    if interrupt::interrupted() {
                        stop.set();
                        bar.println(
                            "stopping: the games in play end at their next step (Ctrl-C again \
                             quits at once, and keeps nothing)",
                        );
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            // Set however `run` ends, a panic included, so that the watcher above ends too.
            struct Finished<'a>(&'a AtomicBool);
            impl Drop for Finished<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let _finished = Finished(&finished);
            run(&loaded, &self.players, &options, |done, _| {
                bar.set_position(done as u64)
            })
        })
        .map_err(|e| CliError::Failed(e.to_string()))?;
        bar.finish_and_clear();
        let how = format!(
            "{}, positions judged by {}",
            loaded.report.engine,
            loaded.evaluator.name()
        );
        // The games played before a failure still make a table.
        self.report(&info.name, &info.roles, &how, &played.records, outputs)?;
        match played.stopped {
            // A game that failed before the interrupt stopped it first, and says so below.
            Some(why) if why == STOPPED_ON_REQUEST && interrupt::interrupted() => {
                Err(CliError::Interrupted(format!(
                    "the tournament stopped by Ctrl-C after {} of its {} games; the table holds \
                     those",
                    played.records.len(),
                    played.total
                )))
            }
            Some(why) => Err(CliError::Failed(format!(
                "the tournament stopped after {} of its {} games: {why}",
                played.records.len(),
                played.total
            ))),
            None => Ok(()),
        }
    }
}
