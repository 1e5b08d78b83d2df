//! `search`, `perft` and `bench`: one move searched from the initial state, move sequences counted,
//! playouts and searches timed.

use std::io::Write;
use std::time::{Duration, Instant};

use ggp::bench::measure_playouts_parallel;
use ggp::evaluators::{Estimate, Evaluator, Outcome};
use ggp::game::{joint_moves, perft, Game, GameError};
use ggp::load::{Loaded, Visitor};
use ggp::players::seeds::trace::{seeds_text, Readable};
use ggp::players::{make_player, Ask, Clock, Deadline, PlayerConfig, PlayerKind, PlayerSpec};

use super::commands::{seconds, with_depth};
use super::spec::report_fields;
use super::CliError;

/// Chooses one move from the initial state.
pub struct Search {
    pub kind: PlayerKind,
    /// The player as named, switches included.
    pub player: PlayerSpec,
    pub config: PlayerConfig,
    pub clock: Clock,
    pub trace: bool,
    pub explain: bool,
}

impl Visitor for Search {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let game = loaded.game.as_ref();
        let state = game.initial_state();
        let config = with_depth(&self.config, &loaded);
        let deadline = self.clock.move_deadline(Instant::now());
        let Some(search) = self.kind.seed_search(config.fraction) else {
            return self.play_one(&loaded, &state, &config, deadline);
        };
        if self.explain {
            return Err(CliError::Usage(format!(
                "{} searches to a fixed depth and keeps no view of each move; --trace prints its \
                 whole search, and mcts and id explain their choice with --explain",
                self.kind
            )));
        }
        let evaluator = loaded.evaluator.as_ref();
        let searched = with_heartbeat(
            !self.trace,
            &format!("{}: searching depth {}", self.kind, config.depth),
            self.clock.play,
            || {
                search.run(
                    game,
                    evaluator,
                    &state,
                    config.depth,
                    self.trace,
                    Some(deadline),
                )
            },
        );
        let report = match searched {
            Err(GameError::OutOfTime) => {
                return Err(CliError::Failed(format!(
                    "{} did not finish depth {} within the {} play clock; give it longer with \
                     --playclock S, or ask for less with --depth",
                    self.kind,
                    config.depth,
                    seconds(self.clock.play)
                )))
            }
            other => other?,
        };
        let role = game.mover(&state).unwrap_or(0);
        let mut moves = Vec::new();
        game.legal_moves(&state, role, &mut moves);
        let mv = moves.get(report.best).ok_or_else(|| {
            CliError::Usage(format!(
                "the search chose a move ({}) that is not legal",
                report.best
            ))
        })?;
        // A move written as its own number (tree games) is better named by the node it leads to.
        let mut name = game.show_move(mv);
        if name == report.best.to_string() {
            name = game
                .state_name(&game.play(&state, role, mv))
                .unwrap_or(name);
        }
        let out = std::io::stdout();
        let mut out = out.lock();
        // The seeds' traces are of native games and trees, in the seeds' notation; a rule file's trace
        // speaks its own roles and writes guesses on the goal scale.
        let rules = loaded.report.engine.is_rules();
        let roles = &game.info().roles;
        let goal_of = |n: i32| evaluator.expected_goal(n);
        let mut readable = Readable::new(roles, &goal_of);
        let lines = if rules {
            readable.lines(&report.trace)
        } else {
            seeds_text(&report.trace)
        };
        for line in &lines {
            writeln!(out, "{line}")?;
        }
        if !self.trace {
            writeln!(out, "Terminals visited: {}", report.stats.leaves)?;
        }
        writeln!(out, "Overall choice: move {}[{name}]", report.best)?;
        let s = report.stats;
        // The seeds' notation where a trace is asked for; words and the game's own roles elsewhere.
        let value = match (self.trace, rules) {
            (true, true) => readable.estimate(report.value),
            (true, false) => report.value.to_string(),
            (false, _) => value_words(roles, report.value, evaluator),
        };
        writeln!(
            out,
            "Value: {value}; nodes: {}; time: {:.3}s; nodes/s: {:.0}",
            s.nodes,
            s.elapsed.as_secs_f64(),
            s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9)
        )?;
        Ok(())
    }
}

/// A search's value in words, with the game's role names: `x wins`, `a draw`, the first role's expected
/// goal where the evaluator's guesses mean one, and otherwise the heuristic's plain score.
fn value_words<G: Game>(roles: &[String], value: Estimate, evaluator: &dyn Evaluator<G>) -> String {
    let name = |r: usize| roles.get(r).map_or("?", |n| n.as_str());
    match value {
        Estimate::Definitely(Outcome::Winner(r)) => format!("{} wins with best play", name(r)),
        Estimate::Definitely(Outcome::Draw) => "a draw with best play".to_string(),
        Estimate::Guess(n) => match evaluator.expected_goal(n) {
            Some(expected) => {
                format!("{} expects a goal of about {expected:.1} of 100", name(0))
            }
            None => format!(
                "estimate {n} (the game's heuristic score; above 0 favours {})",
                name(0)
            ),
        },
    }
}

/// Runs `work`, printing `what` with the time spent on standard error every second while it runs (when
/// `on`): a search the seeds specify to a fixed depth has no progress of its own to tell.
fn with_heartbeat<T: Send>(
    on: bool,
    what: &str,
    clock: Duration,
    work: impl FnOnce() -> T + Send,
) -> T {
    if !on {
        return work();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut next = Duration::from_secs(1);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                if started.elapsed() >= next {
                    eprintln!("  {what}, {} of {}", seconds(next), seconds(clock));
                    next += Duration::from_secs(1);
                }
            }
        });
        let out = work();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    })
}

impl Search {
    /// A clocked player's move from `state`, with its effort.
    fn play_one<G: Game>(
        &self,
        loaded: &Loaded<G>,
        state: &G::State,
        config: &PlayerConfig,
        deadline: Deadline,
    ) -> Result<(), CliError> {
        if matches!(self.kind, PlayerKind::Legal | PlayerKind::Random) {
            return Err(CliError::Usage(format!(
                "`{}` does not search; use minimax, alphabeta or jamboree (to a fixed depth), or id, \
                 mcs, mcts, onestep, twostep, greedy or minimaxdepth (within the play clock)",
                self.kind
            )));
        }
        let game = loaded.game.as_ref();
        if game.is_terminal(state) {
            return Err(CliError::Usage(
                "the game is over in its initial state".into(),
            ));
        }
        let role = game.mover(state).unwrap_or(0);
        let evaluator = std::sync::Arc::clone(&loaded.evaluator);
        let mut player = make_player(&self.player, role, game, config, evaluator)?;
        // One search of the clock, all of it in `choose`.
        player.prepare(game, role, Deadline::after(Duration::ZERO))?;
        let choice = player.choose(&Ask::new(game, state, role, deadline))?;
        let mut moves = Vec::new();
        game.legal_moves(state, role, &mut moves);
        let index = moves.iter().position(|m| *m == choice.mv).unwrap_or(0);
        let out = std::io::stdout();
        let mut out = out.lock();
        writeln!(
            out,
            "Overall choice: move {index}[{}] for {}",
            game.show_move(&choice.mv),
            game.info().roles[role]
        )?;
        let effort = match choice.stats.effort() {
            e if e.is_empty() => "no search finished".to_string(),
            e => e,
        };
        writeln!(
            out,
            "Effort: {effort}; time: {:.3}s",
            choice.stats.elapsed.as_secs_f64()
        )?;
        if self.explain {
            match &choice.explanation {
                Some(why) => {
                    writeln!(out, "Moves considered, best first:")?;
                    for c in &why.candidates {
                        writeln!(out, "  {c}")?;
                    }
                    if why.line.is_empty() {
                        writeln!(out, "Principal variation: not known past this move")?;
                    } else {
                        writeln!(out, "Principal variation: {}", why.line.join(", "))?;
                    }
                }
                None => writeln!(out, "{} does not say why it chose this move", self.player)?,
            }
        }
        Ok(())
    }
}

/// Counts move sequences.
pub struct Perft {
    pub depth: u32,
}

impl Visitor for Perft {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        let game = loaded.game.as_ref();
        let started = Instant::now();
        let state = game.initial_state();
        let n = if self.depth == 0 || game.is_terminal(&state) {
            1
        } else {
            // Counted first move by first move, so that a long count shows how far it is.
            let mut buffers = vec![Vec::new(); game.info().num_roles()];
            let firsts = joint_moves(game, &state, &mut buffers);
            let bar = indicatif::ProgressBar::new(firsts.len() as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} first moves counted ({elapsed} elapsed, {eta} left)",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            let mut total = 0u64;
            for joint in &firsts {
                let next = game.next_state(&state, joint);
                total = total.saturating_add(perft(game, &next, self.depth - 1));
                bar.inc(1);
            }
            bar.finish_and_clear();
            total
        };
        println!("{n}");
        eprintln!(
            "perft {} took {:.3}s",
            self.depth,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }
}

/// Random playouts, or a player's search.
pub struct Bench {
    pub seconds: f64,
    pub seed: u64,
    pub threads: usize,
    pub lanes: u32,
    pub player: Option<PlayerSpec>,
}

impl Visitor for Bench {
    type Output = Result<(), CliError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Result<(), CliError> {
        if let Some(kind) = self.player.clone() {
            if self.lanes > 1 {
                return Err(CliError::Usage(
                    "--lanes measures bare playouts; a player's search (--player) sets its own"
                        .into(),
                ));
            }
            return self.search(kind, &loaded);
        }
        let game = loaded.game.as_ref();
        let stats =
            measure_playouts_parallel(game, self.seconds, self.seed, self.threads, self.lanes);
        if self.lanes > 1 {
            println!(
                "game={} playouts_per_sec={:.0} lanes={} threads={} {}",
                game.info().name,
                stats.playouts_per_sec(),
                self.lanes,
                self.threads,
                report_fields(&loaded.report)
            );
            if loaded.report.engine != ggp::load::EngineKind::Network {
                eprintln!(
                    "note: only the network plays playouts side by side; the {} engine played these \
                     one after the other",
                    loaded.report.engine.as_str()
                );
            }
            return Ok(());
        }
        println!(
            "game={} {stats} threads={} {}",
            game.info().name,
            self.threads,
            report_fields(&loaded.report)
        );
        if stats.cut > 0 {
            eprintln!(
                "note: {} of {} stopped at the limit of {} steps before the game ended (the \
                 rules may let a game go on for ever), so avg_depth and the rates count cut playouts",
                stats.cut,
                ggp::diagnostics::count(stats.playouts as usize, "playout"),
                ggp::bench::MAX_PLAYOUT_STEPS
            );
        }
        Ok(())
    }
}

impl Bench {
    /// One search of `kind` from the initial state for the whole time: its effort per second.
    fn search<G: Game>(self, kind: PlayerSpec, loaded: &Loaded<G>) -> Result<(), CliError> {
        if !matches!(
            kind.kind,
            PlayerKind::Mcts | PlayerKind::Uct | PlayerKind::Mcs | PlayerKind::Id
        ) {
            return Err(CliError::Usage(format!(
                "bench measures the searches of mcts, uct, mcs and id, not `{kind}`"
            )));
        }
        let game = loaded.game.as_ref();
        let state = game.initial_state();
        let role = game.mover(&state).unwrap_or(0);
        let config = PlayerConfig {
            seed: self.seed,
            threads: self.threads,
            ..PlayerConfig::default()
        };
        let evaluator = std::sync::Arc::clone(&loaded.evaluator);
        let mut player = make_player(&kind, role, game, &config, evaluator)?;
        let deadline = Deadline::after(Duration::from_secs_f64(self.seconds));
        let choice = player.choose(&Ask::new(game, &state, role, deadline))?;
        let s = choice.stats;
        let secs = s.elapsed.as_secs_f64().max(1e-9);
        println!(
            "game={} player={kind} simulations_per_sec={:.0} nodes_per_sec={:.0} simulations={} \
             nodes={} tree={} seconds={secs:.2} threads={} {}",
            game.info().name,
            s.simulations as f64 / secs,
            s.nodes as f64 / secs,
            s.simulations,
            s.nodes,
            s.tree,
            self.threads,
            report_fields(&loaded.report)
        );
        Ok(())
    }
}
