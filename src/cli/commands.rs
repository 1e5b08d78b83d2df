//! The commands, each a [`GameVisitor`] so that it runs on any game.

use std::io::Write;
use std::time::Instant;

use ggp::bench::measure_playouts_parallel;
use ggp::game::{perft, Game, RoleIndex};
use ggp::players::{make_player, run_search, PlayerConfig, PlayerError, PlayerKind};

use super::{CliError, GameVisitor, Loaded};

/// Plays one match and prints it.
pub struct Play {
    pub players: Vec<String>,
    pub config: PlayerConfig,
    pub quiet: bool,
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
fn with_depth(config: &PlayerConfig, loaded: &Loaded) -> PlayerConfig {
    let mut c = *config;
    if c.depth == 0 {
        c.depth = default_depth(loaded);
    }
    c
}

/// A match ends by itself long before this in every game we know; rule files might loop.
const MAX_MATCH_STEPS: usize = 100_000;

/// Reads the `--player` options into one kind per role.
fn assign_players(specs: &[String], roles: &[String]) -> Result<Vec<PlayerKind>, CliError> {
    let mut kinds: Vec<PlayerKind> = (0..roles.len())
        .map(|r| {
            if r == 0 {
                PlayerKind::Human
            } else {
                PlayerKind::AlphaBeta
            }
        })
        .collect();
    for spec in specs {
        match spec.split_once('=') {
            Some((role, kind)) => {
                let r = roles
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(role.trim()))
                    .ok_or_else(|| {
                        CliError::Usage(format!(
                            "unknown role `{}` in --player {spec}; the roles are {}",
                            role.trim(),
                            roles.join(", ")
                        ))
                    })?;
                kinds[r] = kind.parse()?;
            }
            None => {
                let k: PlayerKind = spec.parse()?;
                kinds.iter_mut().for_each(|slot| *slot = k);
            }
        }
    }
    Ok(kinds)
}

impl GameVisitor for Play {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let info = game.info();
        let kinds = assign_players(&self.players, &info.roles)?;
        for k in &kinds {
            if k.searches() {
                info.require_two_player_zero_sum(k.as_str())?;
            }
        }
        let mut players: Vec<_> = kinds
            .iter()
            .map(|&k| make_player::<G>(k, &with_depth(&self.config, loaded)))
            .collect();
        let out = std::io::stdout();
        let mut out = out.lock();
        if !self.quiet {
            let names: Vec<String> = info
                .roles
                .iter()
                .zip(&players)
                .map(|(r, p)| format!("{r}={}", p.name()))
                .collect();
            writeln!(
                out,
                "Game {} ({}): {}",
                info.name,
                loaded.engine,
                names.join(" ")
            )?;
        }
        let mut state = game.initial_state();
        let mut joint = Vec::with_capacity(info.num_roles());
        let mut steps = 0;
        while !game.is_terminal(&state) {
            if steps == MAX_MATCH_STEPS {
                return Err(CliError::Usage(format!(
                    "the match did not end within {MAX_MATCH_STEPS} moves"
                )));
            }
            if !self.quiet {
                writeln!(out, "\n{}", game.show_state(&state))?;
                out.flush()?;
            }
            let mover = game.mover(&state);
            joint.clear();
            for (role, player) in players.iter_mut().enumerate() {
                let choice = match player.choose(game, &state, role) {
                    Ok(c) => c,
                    Err(PlayerError::EndOfInput) => {
                        writeln!(out, "Input ended: the match stops here.")?;
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                };
                if !self.quiet && mover.is_none_or(|m| m == role) {
                    report_move(&mut out, game, role, &choice)?;
                }
                joint.push(choice.mv);
            }
            state = game.next_state(&state, &joint);
            steps += 1;
        }
        if !self.quiet {
            writeln!(out, "\n{}", game.show_state(&state))?;
        }
        let goals: Vec<String> = info
            .roles
            .iter()
            .enumerate()
            .map(|(r, name)| format!("{name}={}", game.goal(&state, r)))
            .collect();
        writeln!(out, "Goals: {}", goals.join(" "))?;
        Ok(())
    }
}

fn report_move<G: Game>(
    out: &mut impl Write,
    game: &G,
    role: RoleIndex,
    choice: &ggp::players::Choice<G::Move>,
) -> std::io::Result<()> {
    let s = &choice.stats;
    write!(
        out,
        "{} plays {} in {:.3}s",
        game.info().roles[role],
        game.show_move(&choice.mv),
        s.elapsed.as_secs_f64()
    )?;
    if s.nodes > 0 {
        let rate = s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9);
        write!(
            out,
            " ({} nodes, {} leaves, {rate:.0} nodes/s)",
            s.nodes, s.leaves
        )?;
    }
    writeln!(out)
}

/// Chooses one move from the initial state.
pub struct Search {
    pub kind: PlayerKind,
    pub config: PlayerConfig,
    pub trace: bool,
}

impl GameVisitor for Search {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let state = game.initial_state();
        let config = with_depth(&self.config, loaded);
        let report = run_search(self.kind, game, &state, &config, self.trace)?;
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
        for line in &report.trace {
            writeln!(out, "{line}")?;
        }
        if !self.trace {
            writeln!(out, "Terminals visited: {}", report.stats.leaves)?;
        }
        writeln!(out, "Overall choice: move {}[{name}]", report.best)?;
        let s = report.stats;
        writeln!(
            out,
            "Value: {}; nodes: {}; time: {:.3}s; nodes/s: {:.0}",
            report.value,
            s.nodes,
            s.elapsed.as_secs_f64(),
            s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9)
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

/// Random playouts.
pub struct Bench {
    pub seconds: f64,
    pub seed: u64,
    pub threads: usize,
}

impl GameVisitor for Bench {
    type Output = ();

    fn visit<G: Game>(self, game: &G, loaded: &Loaded) -> Result<(), CliError> {
        let stats = measure_playouts_parallel(game, self.seconds, self.seed, self.threads);
        println!(
            "game={} {stats} threads={} {}",
            game.info().name,
            self.threads,
            loaded.fields()
        );
        Ok(())
    }
}
