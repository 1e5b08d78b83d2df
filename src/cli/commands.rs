//! The commands, each a [`GameVisitor`] so that it runs on any game.

use std::io::Write;
use std::time::Instant;

use ggp::bench::measure_playouts_parallel;
use ggp::game::{perft, Estimate, Game, GameError, Goal, Outcome, RoleIndex};
use ggp::players::{
    make_player, run_seed_search, Clock, Deadline, PlayerConfig, PlayerError, PlayerKind,
    PlayerSpec,
};

use super::{CliError, GameVisitor, Loaded};

/// Plays one match and prints it.
pub struct Play {
    pub players: Vec<String>,
    pub config: PlayerConfig,
    pub clock: Clock,
    pub quiet: bool,
    /// Whether `--fraction` was given (refused unless a player is jamboree).
    pub fraction_given: bool,
}

/// The search depth when `--depth` is not given: deep enough to play well, shallow enough that a whole
/// match takes seconds (a rule game's position costs playouts, a native one's a few instructions).
fn default_depth(loaded: &Loaded) -> u32 {
    match loaded.engine {
        "native" => 8,
        "tree" => 2,
        _ => 4,
    }
}

/// The configuration with the depth filled in for this game (0 stands for "not given").
pub(super) fn with_depth(config: &PlayerConfig, loaded: &Loaded) -> PlayerConfig {
    let mut c = config.clone();
    if c.depth == 0 {
        c.depth = default_depth(loaded);
    }
    c
}

/// A match ends by itself long before this in every game we know; rule files might loop.
const MAX_MATCH_STEPS: usize = 100_000;

/// Reads the `--player` options into one kind per role: `ROLE=KIND` for one role, a bare `KIND` for
/// every role not named, human for the first role and alphabeta for the others when nothing is said. A
/// role given twice, or two bare kinds, is an error rather than a silent choice of the last.
fn assign_players(specs: &[String], roles: &[String]) -> Result<Vec<PlayerSpec>, CliError> {
    let mut named: Vec<Option<(PlayerSpec, &str)>> = vec![None; roles.len()];
    let mut every: Option<(PlayerSpec, &str)> = None;
    for spec in specs {
        match spec.split_once('=') {
            Some((role, kind)) => {
                let r = super::role_named(roles, role, spec)?;
                if let Some((_, earlier)) = &named[r] {
                    return Err(CliError::Usage(format!(
                        "--player gives {} twice ({earlier} and {spec}); give each role once",
                        roles[r]
                    )));
                }
                named[r] = Some((kind.parse()?, spec));
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
    Ok(named
        .into_iter()
        .enumerate()
        .map(|(r, k)| match (k, &every) {
            (Some((k, _)), _) => k,
            (None, Some((k, _))) => k.clone(),
            (None, None) if r == 0 => PlayerKind::Human.into(),
            (None, None) => PlayerKind::AlphaBeta.into(),
        })
        .collect())
}

impl GameVisitor for Play {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let info = game.info();
        let kinds = assign_players(&self.players, &info.roles)?;
        for k in &kinds {
            k.kind.supports(info)?;
        }
        if self.fraction_given && !kinds.iter().any(|k| k.kind == PlayerKind::Jamboree) {
            return Err(CliError::Usage(
                "--fraction applies only to jamboree, and no player here is one".into(),
            ));
        }
        let config = with_depth(&self.config, loaded);
        let mut players: Vec<_> = kinds
            .iter()
            .enumerate()
            .map(|(role, k)| make_player::<G>(k.kind, role, &k.config(&config)))
            .collect();
        let out = std::io::stdout();
        let mut out = out.lock();
        // A person at the keyboard needs the board and the other moves whatever `--quiet` says.
        let has_human = kinds.iter().any(|k| k.kind == PlayerKind::Human);
        let quiet = self.quiet && !has_human;
        if !quiet {
            let names: Vec<String> = info
                .roles
                .iter()
                .zip(&players)
                .map(|(r, p)| format!("{r}={}", p.name()))
                .collect();
            writeln!(
                out,
                "Game {} ({}): {}; play clock {}",
                info.name,
                loaded.engine,
                names.join(" "),
                seconds(self.clock.play)
            )?;
        }
        let clock = self.clock;
        for (role, player) in players.iter_mut().enumerate() {
            let started = Instant::now();
            player.prepare(game, role, clock.start_deadline(started))?;
        }
        let mut state = game.initial_state();
        let mut joint = Vec::with_capacity(info.num_roles());
        // The state before each step, for `undo`.
        let mut history: Vec<G::State> = Vec::new();
        'steps: while !game.is_terminal(&state) {
            if history.len() == MAX_MATCH_STEPS {
                return Err(CliError::Usage(format!(
                    "the match did not end within {MAX_MATCH_STEPS} moves"
                )));
            }
            if !quiet {
                writeln!(out, "\n{}", game.show_state(&state))?;
                out.flush()?;
            }
            let mover = game.mover(&state);
            joint.clear();
            for (role, player) in players.iter_mut().enumerate() {
                let started = Instant::now();
                let choice = match player.choose(game, &state, role, clock.move_deadline(started)) {
                    Ok(c) => c,
                    Err(PlayerError::EndOfInput) => {
                        writeln!(out, "Input ended: the match stops here.")?;
                        return Ok(());
                    }
                    Err(PlayerError::Undo) => {
                        match last_choice(game, &history, role) {
                            Some(back) => {
                                history.truncate(back + 1);
                                state = history.pop().unwrap_or_else(|| game.initial_state());
                                writeln!(
                                    out,
                                    "Taken back: the game is where {} last chose a move.",
                                    info.roles[role]
                                )?;
                            }
                            None => writeln!(out, "Nothing to take back yet.")?,
                        }
                        continue 'steps;
                    }
                    Err(e) => return Err(e.into()),
                };
                let took = started.elapsed();
                let human = kinds[role].kind == PlayerKind::Human;
                if !quiet && mover.is_none_or(|m| m == role) {
                    // A person's typing is not the program's time: no time for a human's move.
                    let took = (!human).then_some(took);
                    report_move(&mut out, game, role, &choice, took)?;
                }
                if took > clock.play && !human {
                    eprintln!(
                        "warning: {} took {} for its move, past its {} play clock",
                        info.roles[role],
                        seconds(took),
                        seconds(clock.play)
                    );
                }
                joint.push(choice.mv);
            }
            history.push(state.clone());
            state = game.next_state(&state, &joint);
        }
        if !quiet {
            writeln!(out, "\n{}", without_control(&game.show_state(&state)))?;
        }
        let goals: Vec<Goal> = (0..info.num_roles())
            .map(|r| game.goal(&state, r))
            .collect();
        writeln!(out, "{}", result_line(&info.roles, &goals))?;
        Ok(())
    }
}

/// The index in `history` of the last state where `role` had a choice to make (more than one legal
/// move): `undo` goes back there, taking back the role's last move and every move since.
fn last_choice<G: Game>(game: &G, history: &[G::State], role: RoleIndex) -> Option<usize> {
    let mut moves = Vec::new();
    history.iter().rposition(|s| {
        game.legal_moves(s, role, &mut moves);
        moves.len() > 1
    })
}

/// A drawn state without its `control(...)` fact: whose turn it is means nothing once the game is over.
fn without_control(drawn: &str) -> String {
    drawn
        .lines()
        .filter(|l| !(l.starts_with("control(") || l.starts_with("(control ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `Goals: x=100 o=0 (x wins)`: the goals, and in words who won. A win is a strictly highest goal, a
/// draw a highest goal shared (by every role, or by some: `a draw between a and b`); a one-role game
/// (a puzzle) says how much of the full score was reached.
pub(super) fn result_line(roles: &[String], goals: &[Goal]) -> String {
    let listed: Vec<String> = roles
        .iter()
        .zip(goals)
        .map(|(name, g)| format!("{name}={g}"))
        .collect();
    let best = goals.iter().copied().max().unwrap_or(0);
    let top: Vec<&str> = roles
        .iter()
        .zip(goals)
        .filter(|(_, &g)| g == best)
        .map(|(name, _)| name.as_str())
        .collect();
    let words = match (roles.len(), top.as_slice()) {
        (1, _) if best == 100 => "solved, full score".to_string(),
        (1, _) => format!("{best} of 100"),
        (_, [winner]) => format!("{winner} wins"),
        (n, tied) if tied.len() == n => "a draw".to_string(),
        (_, tied) => format!("a draw between {}", tied.join(" and ")),
    };
    format!("Goals: {} ({words})", listed.join(" "))
}

/// A duration as `1.25 s`.
fn seconds(d: std::time::Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn report_move<G: Game>(
    out: &mut impl Write,
    game: &G,
    role: RoleIndex,
    choice: &ggp::players::Choice<G::Move>,
    took: Option<std::time::Duration>,
) -> std::io::Result<()> {
    write!(
        out,
        "{} plays {}",
        game.info().roles[role],
        game.show_move(&choice.mv)
    )?;
    if let Some(took) = took {
        write!(out, " in {:.3}s", took.as_secs_f64())?;
    }
    let effort = choice.stats.effort();
    if !effort.is_empty() {
        write!(out, " ({effort})")?;
    }
    writeln!(out)
}

/// Chooses one move from the initial state.
pub struct Search {
    pub kind: PlayerKind,
    pub config: PlayerConfig,
    pub clock: Clock,
    pub trace: bool,
}

impl GameVisitor for Search {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let state = game.initial_state();
        let config = with_depth(&self.config, loaded);
        let deadline = self.clock.move_deadline(Instant::now());
        if !self.kind.is_seed_search() {
            return self.play_one(game, &state, &config, deadline);
        }
        let searched = with_heartbeat(
            !self.trace,
            &format!("{}: searching depth {}", self.kind, config.depth),
            self.clock.play,
            || run_seed_search(self.kind, game, &state, &config, self.trace, deadline),
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
            name = game.state_name(&game.play(&state, role, mv));
        }
        let out = std::io::stdout();
        let mut out = out.lock();
        // The seeds' traces are of native games and trees; a rule file's trace speaks its own roles
        // and writes negative numbers plainly.
        let rules = matches!(loaded.engine, "network" | "datalog");
        let mut states = StateNumbers::default();
        for line in &report.trace {
            if rules {
                let line = rule_trace_line(line, &game.info().roles);
                writeln!(out, "{}", states.rename(&line))?;
            } else {
                writeln!(out, "{line}")?;
            }
        }
        if !self.trace {
            writeln!(out, "Terminals visited: {}", report.stats.leaves)?;
        }
        writeln!(out, "Overall choice: move {}[{name}]", report.best)?;
        let s = report.stats;
        // The seeds' notation where a trace is asked for; words and the game's own roles elsewhere.
        let value = if self.trace && rules {
            rule_trace_line(&report.value.to_string(), &game.info().roles)
        } else if self.trace {
            report.value.to_string()
        } else {
            value_words(&game.info().roles, report.value, loaded)
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

/// A trace line of the seeds' searches with the roles of a rule file instead of Maxie and Minnie, `-2`
/// instead of SML's `~2`, and guesses on the goal scale (the first role's expected goal).
fn rule_trace_line(line: &str, roles: &[String]) -> String {
    let (first, second) = match roles {
        [a, b, ..] => (a.as_str(), b.as_str()),
        _ => return line.to_string(),
    };
    line.replace("(Maxie,", &format!("({first},"))
        .replace("(Minnie,", &format!("({second},"))
        .replace("Winner Maxie", &format!("Winner {first}"))
        .replace("Winner Minnie", &format!("Winner {second}"))
        .replace(":~", ":-")
        .split("Guess:")
        .enumerate()
        .map(|(i, piece)| {
            if i == 0 {
                piece.to_string()
            } else {
                guess_on_goal_scale(piece)
            }
        })
        .collect::<Vec<_>>()
        .join("Guess:")
}

/// The piece of a trace line after `Guess:`, its number (the playout estimate) put on the goal scale: the
/// first role's expected goal, as [`value_words`] says it.
fn guess_on_goal_scale(piece: &str) -> String {
    let end = piece
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '~'))))
        .map_or(piece.len(), |(i, _)| i);
    match piece[..end].replace('~', "-").parse::<i32>() {
        Ok(n) => format!(
            "{:.1}{}",
            (50.0 + f64::from(n) / 20.0).clamp(0.0, 100.0),
            &piece[end..]
        ),
        Err(_) => piece.to_string(),
    }
}

/// Names a rule file's states in a trace `s1`, `s2`... in the order they first appear, in place of the
/// 12 hex digits of their hash (which name them in the seeds' traces of native games).
#[derive(Default)]
struct StateNumbers {
    seen: std::collections::HashMap<String, usize>,
}

impl StateNumbers {
    fn rename(&mut self, line: &str) -> String {
        let mut out = String::with_capacity(line.len());
        let mut word = String::new();
        let flush = |word: &mut String,
                     out: &mut String,
                     seen: &mut std::collections::HashMap<String, usize>| {
            if word.len() == 12 && word.chars().all(|c| c.is_ascii_hexdigit()) {
                let next = seen.len() + 1;
                let n = *seen.entry(word.clone()).or_insert(next);
                out.push_str(&format!("s{n}"));
            } else {
                out.push_str(word);
            }
            word.clear();
        };
        for c in line.chars() {
            if c.is_ascii_alphanumeric() {
                word.push(c);
            } else {
                flush(&mut word, &mut out, &mut self.seen);
                out.push(c);
            }
        }
        flush(&mut word, &mut out, &mut self.seen);
        out
    }
}

/// A search's value in words, with the game's role names: `x wins`, `a draw`, for a rule file the first
/// role's expected goal (its playout estimate is ten times the mean goal difference, so on a zero-sum
/// game the first role expects 50 + estimate / 20), and for a native game its heuristic score, a plain
/// number that favours the first role when positive.
fn value_words(roles: &[String], value: Estimate, loaded: &Loaded) -> String {
    let name = |r: usize| roles.get(r).map_or("?", |n| n.as_str());
    match value {
        Estimate::Definitely(Outcome::Winner(r)) => format!("{} wins with best play", name(r)),
        Estimate::Definitely(Outcome::Draw) => "a draw with best play".to_string(),
        Estimate::Guess(n) if matches!(loaded.engine, "network" | "datalog") => {
            let expected = (50.0 + f64::from(n) / 20.0).clamp(0.0, 100.0);
            format!("{} expects a goal of about {expected:.1} of 100", name(0))
        }
        Estimate::Guess(n) => format!(
            "estimate {n} (the game's heuristic score; above 0 favours {})",
            name(0)
        ),
    }
}

/// Runs `work`, printing `what` with the time spent on standard error every second while it runs (when
/// `on`): a search the seeds specify to a fixed depth has no progress of its own to tell.
fn with_heartbeat<T: Send>(
    on: bool,
    what: &str,
    clock: std::time::Duration,
    work: impl FnOnce() -> T + Send,
) -> T {
    if !on {
        return work();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut next = std::time::Duration::from_secs(1);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(20));
                if started.elapsed() >= next {
                    eprintln!("  {what}, {} of {}", seconds(next), seconds(clock));
                    next += std::time::Duration::from_secs(1);
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
        game: &G,
        state: &G::State,
        config: &PlayerConfig,
        deadline: ggp::players::Deadline,
    ) -> Result<(), CliError> {
        if matches!(
            self.kind,
            PlayerKind::Human | PlayerKind::Legal | PlayerKind::Random
        ) {
            return Err(CliError::Usage(format!(
                "`{}` does not search; use minimax, alphabeta or jamboree (to a fixed depth), or id, \
                 mcs, mcts, onestep, twostep, greedy or minimaxdepth (within the play clock)",
                self.kind
            )));
        }
        self.kind.supports(game.info())?;
        if game.is_terminal(state) {
            return Err(CliError::Usage(
                "the game is over in its initial state".into(),
            ));
        }
        let role = game.mover(state).unwrap_or(0);
        let mut player = make_player::<G>(self.kind, role, config);
        player.prepare(game, role, deadline)?;
        let choice = player.choose(game, state, role, deadline)?;
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
        writeln!(
            out,
            "Effort: {}; time: {:.3}s",
            choice.stats.effort(),
            choice.stats.elapsed.as_secs_f64()
        )?;
        Ok(())
    }
}

/// Counts move sequences.
pub struct Perft {
    pub depth: u32,
}

impl GameVisitor for Perft {
    type Output = ();

    fn visit<G: Game>(self, game: &G, _loaded: &Loaded) -> Result<(), CliError> {
        let started = Instant::now();
        let n = perft(game, &game.initial_state(), self.depth);
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
    pub player: Option<PlayerKind>,
}

impl GameVisitor for Bench {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        if let Some(kind) = self.player {
            return self.search(kind, game, loaded);
        }
        let stats = measure_playouts_parallel(game, self.seconds, self.seed, self.threads);
        println!(
            "game={} {stats} threads={} {}",
            game.info().name,
            self.threads,
            loaded.fields()
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
    fn search<G: Game>(self, kind: PlayerKind, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        if !matches!(kind, PlayerKind::Mcts | PlayerKind::Mcs | PlayerKind::Id) {
            return Err(CliError::Usage(format!(
                "bench measures the searches of mcts, mcs and id, not `{kind}`"
            )));
        }
        let state = game.initial_state();
        let role = game.mover(&state).unwrap_or(0);
        let config = PlayerConfig {
            seed: self.seed,
            threads: self.threads,
            ..PlayerConfig::default()
        };
        let mut player = make_player::<G>(kind, role, &config);
        let deadline = Deadline::after(std::time::Duration::from_secs_f64(self.seconds));
        let choice = player.choose(game, &state, role, deadline)?;
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
            loaded.fields()
        );
        Ok(())
    }
}
