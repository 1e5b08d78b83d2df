//! `ggp-run train` and `ggp-run tournament`: the command-line faces of [`ggp::learn`] and
//! [`ggp::tournament`], with indicatif progress bars on standard error.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use ggp::game::Game;
use ggp::learn::train;
use ggp::players::{thousands, Clock, PlayerConfig, PlayerSpec};
use ggp::protocol::estimated::{Estimated, ESTIMATE_PLAYOUTS};
use ggp::protocol::referee::Seat;
use ggp::protocol::{load_kif, KifGame, KifVisitor};
use ggp::tournament::{
    entrant_names, run, run_with_remote, schedule, standings, to_csv, GameRecord, TournamentOptions,
};

use super::spec::GameSpec;
use super::{CliError, GameVisitor, Loaded};

/// Trains seed 2's learner by self-play and writes the scores.
pub struct Train {
    pub turns: u64,
    pub out: PathBuf,
    pub rate: f64,
    pub seed: u64,
}

impl GameVisitor for Train {
    type Output = ();

    fn visit<G: Game>(self, game: &G, _loaded: &Loaded) -> Result<(), CliError> {
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
            bar.set_message(format!(
                "{} games, {} states",
                thousands(p.games),
                thousands(p.states as u64)
            ));
        })
        .map_err(|e| CliError::Usage(e.to_string()))?;
        bar.finish_and_clear();
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        model
            .save(&self.out)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        println!(
            "Trained on {} for {} turns in {:.2} s ({} turns/s): {} states scored, written to {}",
            game.info().name,
            thousands(self.turns),
            secs,
            thousands((self.turns as f64 / secs) as u64),
            thousands(model.scores.len() as u64),
            self.out.display()
        );
        Ok(())
    }
}

/// Plays a round-robin tournament and prints the table.
pub struct Tournament {
    pub players: Vec<Seat>,
    pub games: u32,
    pub clock: Clock,
    pub config: PlayerConfig,
    pub workers: usize,
    pub csv: Option<PathBuf>,
}

impl Tournament {
    /// Runs the tournament on `spec`: locally when every entrant is local, through the referee when
    /// one is a remote player (the game must then be a rule file, whose rules the referee sends).
    pub fn run(self, spec: &GameSpec) -> Result<(), CliError> {
        if self.players.iter().all(|p| matches!(p, Seat::Local(_))) {
            return spec.visit(self);
        }
        let GameSpec::Rules(path, ..) = spec else {
            return Err(CliError::Usage(
                "remote players are sent the game's rules, so the game must be a rule file \
                 (.kif or .gdl), e.g. games/connect4.gdl rather than connect4"
                    .into(),
            ));
        };
        let rules = super::protocol::rules_kif(path)?;
        let name = path
            .file_stem()
            .map_or_else(|| "game".to_string(), |s| s.to_string_lossy().into_owned());
        let network_time = Duration::from_secs(u64::from(super::spec::DEFAULT_GROUNDING_SECONDS));
        let (engine, loaded) =
            load_kif(&rules, &name, network_time).map_err(|e| CliError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if let Some(why) = &loaded.fallback {
            eprintln!("note: {why}; the Datalog evaluator plays this game");
        }
        engine.visit(RemoteTournament {
            tournament: self,
            rules: &rules,
        })
    }

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

    fn options(&self, config: PlayerConfig) -> TournamentOptions {
        TournamentOptions {
            games: self.games,
            clock: self.clock,
            config,
            workers: self.workers,
        }
    }

    /// Prints the table (and writes the CSV) after `records`.
    fn report(&self, game_name: &str, records: &[GameRecord]) -> Result<(), CliError> {
        let table = standings(&entrant_names(&self.players), records);
        // The column appears when it has something to say: remote entrants, or a local move was late.
        let remote = self.players.iter().any(|p| matches!(p, Seat::Remote(_)))
            || table.iter().any(|s| s.substituted > 0);
        let width = table.iter().map(|s| s.name.len()).max().unwrap_or(6).max(6);
        let out = std::io::stdout();
        let mut out = out.lock();
        writeln!(
            out,
            "{} games of {}; score = win 1, draw 1/2 per seat, 95% interval by the normal approximation",
            records.len(),
            game_name
        )?;
        write!(
            out,
            "{:width$}  {:>5}  {:>5}  {:>5}  {:>6}  {:>8}  {:>5}  95% interval",
            "player", "games", "wins", "draws", "losses", "avg goal", "score"
        )?;
        writeln!(out, "{}", if remote { "  substituted moves" } else { "" })?;
        for s in &table {
            let interval = format!("{:.3}..{:.3}", s.low, s.high);
            write!(
                out,
                "{:width$}  {:>5}  {:>5}  {:>5}  {:>6}  {:>8.1}  {:>5.3}  {}",
                s.name, s.games, s.wins, s.draws, s.losses, s.average_goal, s.score, interval
            )?;
            if remote {
                write!(out, "{:>21}", s.substituted)?;
            }
            writeln!(out)?;
        }
        if let Some(path) = &self.csv {
            std::fs::write(path, to_csv(&table)).map_err(|e| CliError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
        }
        Ok(())
    }
}

impl GameVisitor for Tournament {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let specs: Vec<PlayerSpec> = self
            .players
            .iter()
            .filter_map(|p| match p {
                Seat::Local(spec) => Some(spec.clone()),
                Seat::Remote(_) => None,
            })
            .collect();
        let total = schedule(specs.len(), game.info().num_roles(), self.games).len();
        let bar = Self::bar(total);
        let options = self.options(super::commands::with_depth(&self.config, loaded));
        let records = run(game, &specs, &options, |done| bar.set_position(done as u64))
            .map_err(|e| CliError::Failed(e.to_string()))?;
        bar.finish_and_clear();
        self.report(&game.info().name, &records)
    }
}

/// A tournament with remote entrants, on whichever engine loaded the rules.
struct RemoteTournament<'a> {
    tournament: Tournament,
    rules: &'a str,
}

impl KifVisitor for RemoteTournament<'_> {
    type Output = Result<(), CliError>;

    fn visit<G: KifGame>(self, game: Box<G>) -> Self::Output {
        // As in `ggp-run match`: rules bring no heuristic, so depth-limited players judge by playouts.
        let game = Estimated::new(game, ESTIMATE_PLAYOUTS);
        let t = &self.tournament;
        let total = schedule(t.players.len(), game.info().num_roles(), t.games).len();
        let bar = Tournament::bar(total);
        let options = t.options(t.config.clone());
        let records = run_with_remote(&game, self.rules, &t.players, &options, |done| {
            bar.set_position(done as u64)
        })
        .map_err(|e| CliError::Failed(e.to_string()))?;
        bar.finish_and_clear();
        t.report(&game.info().name, &records)
    }
}
