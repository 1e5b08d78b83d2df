//! The clocked players: perfect play where it can be proved, every corpus game played by `mcts` within
//! its clock, and players that differ where they should.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use ggp::engine::RuleGame;
use ggp::game::{Game, RoleIndex};
use ggp::games::tictactoe::TicTacToe;
use ggp::network::{Budget, NetGame};
use ggp::players::{make_player, Clock, Deadline, MctsPlayer, Player, PlayerConfig, PlayerKind};

mod common;
use common::shared;

fn corpus() -> PathBuf {
    let dir = shared().join("games/kif");
    assert!(
        dir.is_dir(),
        "the game corpus is not at {} (put shared/ beside the checkout or set GGP_SHARED)",
        dir.display()
    );
    dir
}

fn repo_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// A rule file on the network when it builds within `seconds`, else on the Datalog evaluator.
enum Rules {
    Network(Box<NetGame>),
    Datalog(Box<RuleGame>),
}

fn load(path: &Path, network_seconds: Option<f64>) -> Result<Rules, String> {
    let (program, _) = ggp::syntax::parse_file(path)
        .map_err(|(d, _)| format!("does not parse: {}", d[0].message))?;
    let report = ggp::check::check(&program);
    if !report.is_ok() {
        return Err(format!("is not valid: {}", report.errors[0].message));
    }
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    if let Some(seconds) = network_seconds {
        if let Ok(g) = NetGame::from_program_within(&program, &name, Budget::for_seconds(seconds)) {
            return Ok(Rules::Network(Box::new(g)));
        }
    }
    RuleGame::from_program(&program, &name)
        .map(|g| Rules::Datalog(Box::new(g)))
        .map_err(|e| format!("does not load: {e}"))
}

/// Plays every line the opponent can choose against `kind` playing `me`, and returns the number of games
/// and the worst goal `me` got.
fn worst_against_everything<G: Game>(game: &G, kind: PlayerKind, me: RoleIndex) -> (u64, i32) {
    let config = PlayerConfig {
        depth: 9,
        ..PlayerConfig::default()
    };
    let mut player = make_player::<G>(kind, me, &config);
    let mut games = 0;
    let mut worst = 100;
    let mut stack = vec![game.initial_state()];
    let mut moves = Vec::new();
    while let Some(state) = stack.pop() {
        if game.is_terminal(&state) {
            games += 1;
            worst = worst.min(game.goal(&state, me));
            continue;
        }
        let mover = game.mover(&state).expect("tic-tac-toe takes turns");
        if mover == me {
            let choice = player
                .choose(game, &state, me, Deadline::after(Duration::from_secs(30)))
                .expect("a move");
            stack.push(game.play(&state, me, &choice.mv));
        } else {
            game.legal_moves(&state, mover, &mut moves);
            stack.extend(moves.iter().map(|m| game.play(&state, mover, m)));
        }
    }
    (games, worst)
}

#[test]
fn id_and_full_depth_alphabeta_never_lose_tictactoe_to_any_line_of_play() {
    let native = TicTacToe::new(3, 3).unwrap();
    for kind in [PlayerKind::Id, PlayerKind::AlphaBeta] {
        for me in 0..2 {
            let (games, worst) = worst_against_everything(&native, kind, me);
            println!("{kind} as role {me}: {games} lines, worst goal {worst}");
            assert!(games > 50, "every reply was tried: {games}");
            assert!(worst >= 50, "{kind} lost as role {me} ({games} lines)");
        }
    }
    let Rules::Network(rules) = load(&repo_file("games/tictactoe.gdl"), Some(10.0)).unwrap() else {
        panic!("games/tictactoe.gdl builds its network");
    };
    for me in 0..2 {
        let (games, worst) = worst_against_everything(rules.as_ref(), PlayerKind::Id, me);
        assert!(
            worst >= 50,
            "id lost games/tictactoe.gdl as role {me} ({games} lines)"
        );
    }
}

/// Tests that check players against the clock take turns: each keeps both cores busy, and a thread that
/// waits for a core is a thread that may miss its deadline.
static ONE_CLOCKED_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

fn clocked_turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_CLOCKED_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Plays a whole match of `kinds` (one per role) on `game` with `clock`; every move is checked to be
/// legal and on time. Returns the goals.
fn play_match<G: Game>(game: &G, kinds: &[PlayerKind], clock: Clock, seed: u64) -> Vec<i32> {
    let config = PlayerConfig {
        seed,
        ..PlayerConfig::default()
    };
    let mut players: Vec<Box<dyn Player<G>>> = kinds
        .iter()
        .enumerate()
        .map(|(r, &k)| make_player::<G>(k, r, &config))
        .collect();
    let mut state = game.initial_state();
    let mut legal = Vec::new();
    let mut steps = 0;
    while !game.is_terminal(&state) {
        assert!(steps < 10_000, "the match ends");
        let mut joint = Vec::new();
        for (r, p) in players.iter_mut().enumerate() {
            let started = Instant::now();
            let c = p
                .choose(game, &state, r, clock.move_deadline(started))
                .unwrap();
            let took = started.elapsed();
            assert!(took <= clock.play, "{} took {took:?}", p.name());
            game.legal_moves(&state, r, &mut legal);
            assert!(legal.contains(&c.mv), "{} played an illegal move", p.name());
            joint.push(c.mv);
        }
        state = game.next_state(&state, &joint);
        steps += 1;
    }
    (0..kinds.len()).map(|r| game.goal(&state, r)).collect()
}

#[test]
fn random_players_of_different_roles_do_not_mirror_each_other() {
    let _turn = clocked_turn();
    let Rules::Network(g) = load(&repo_file("games/roshambo.gdl"), Some(10.0)).unwrap() else {
        panic!("roshambo builds its network");
    };
    let clock = Clock::new(Duration::from_secs(1), Duration::from_secs(1));
    let results: Vec<Vec<i32>> = (1..=12)
        .map(|seed| play_match(g.as_ref(), &[PlayerKind::Random; 2], clock, seed))
        .collect();
    assert!(
        results.iter().any(|goals| goals[0] != goals[1]),
        "some seed gives a decided match: {results:?}"
    );
}

#[test]
fn searchers_that_need_two_player_zero_sum_games_say_who_can_play_instead() {
    let Rules::Network(g) = load(&repo_file("games/roshambo.gdl"), Some(10.0)).unwrap() else {
        panic!("roshambo builds its network");
    };
    let err = PlayerKind::AlphaBeta
        .supports(g.info())
        .unwrap_err()
        .to_string();
    assert!(err.contains("simultaneously"), "{err}");
    assert!(err.contains("Players that can play it:"), "{err}");
    assert!(err.contains("mcts") && err.contains("id"), "{err}");
    assert!(PlayerKind::Mcts.supports(g.info()).is_ok());
}

#[test]
fn every_player_finishes_a_three_player_and_a_simultaneous_game_on_time() {
    let _turn = clocked_turn();
    let clock = Clock::new(Duration::from_secs(1), Duration::from_millis(200));
    for file in ["tictactoe_3player.kif", "gt_prisoner.kif"] {
        let Rules::Network(g) = load(&corpus().join(file), Some(10.0)).unwrap() else {
            panic!("{file} builds its network");
        };
        let roles = g.info().num_roles();
        for kind in [
            PlayerKind::Id,
            PlayerKind::Mcts,
            PlayerKind::Mcs,
            PlayerKind::OneStep,
            PlayerKind::TwoStep,
            PlayerKind::Greedy,
            PlayerKind::MinimaxDepth,
        ] {
            let mut kinds = vec![PlayerKind::Random; roles];
            kinds[0] = kind;
            let goals = play_match(g.as_ref(), &kinds, clock, 7);
            assert_eq!(goals.len(), roles, "{file} {kind}");
        }
    }
}

#[test]
fn mcts_with_a_simulation_limit_repeats_itself() {
    let g = TicTacToe::new(3, 3).unwrap();
    let s = g.initial_state();
    let choose = || {
        let mut p = MctsPlayer::new(9).with_simulation_limit(2_000);
        let c = Player::<TicTacToe>::choose(
            &mut p,
            &g,
            &s,
            0,
            Deadline::after(Duration::from_secs(30)),
        )
        .unwrap();
        (c.mv, c.stats.simulations)
    };
    let (first, sims) = choose();
    assert_eq!(sims, 2_000);
    assert_eq!(choose().0, first);
}

/// Corpus games that are not games on purpose (ggp-base's tests of invalid descriptions).
fn meant_invalid(name: &str) -> bool {
    name.contains("_invalid_")
}

/// Games also played on the Datalog evaluator: one whose network cannot be built, and three that have one.
const DATALOG_SAMPLE: [&str; 4] = ["linesOfAction", "connectFour", "ticTacToe", "breakthrough"];

/// Games left out, and why.
const NOT_PLAYED: [(&str, &str); 1] = [(
    "laikLee_hex",
    "its network cannot be built, and one step of the Datalog evaluator (hex's lists of visited cells) \
     can take seconds, which no clock can cut short (measured: a 12 s move at a 1 s clock)",
)];

/// The most one game may take (loading included) before the watchdog fails the test.
const GAME_LIMIT: Duration = Duration::from_secs(90);

/// Joint moves played in each game.
const STEPS: usize = 3;

/// The play clock of the corpus games on the network, and of the Datalog sample (whose single steps can
/// take tens of milliseconds).
const NETWORK_CLOCK: Duration = Duration::from_millis(300);
const DATALOG_CLOCK: Duration = Duration::from_secs(1);

/// What playing one corpus game gave: Ok(summary) or Err(why it failed); None when it is not a game of
/// two or more roles.
fn mcts_plays(name: &str, datalog: bool) -> Option<Result<String, String>> {
    if let Some((_, why)) = NOT_PLAYED.iter().find(|(n, _)| *n == name) {
        return Some(Ok(format!("not played: {why}")));
    }
    let play = if datalog {
        DATALOG_CLOCK
    } else {
        NETWORK_CLOCK
    };
    let clock = Clock::new(Duration::from_secs(10), play);
    let path = corpus().join(format!("{name}.kif"));
    let rules = match load(&path, (!datalog).then_some(5.0)) {
        Ok(r) => r,
        Err(why) if meant_invalid(name) => return Some(Ok(format!("rejected as meant: {why}"))),
        Err(why) => return Some(Err(why)),
    };
    match &rules {
        Rules::Network(g) => play_some(g.as_ref(), clock, "network"),
        Rules::Datalog(g) => play_some(g.as_ref(), clock, "datalog"),
    }
}

fn play_some<G: Game>(game: &G, clock: Clock, engine: &str) -> Option<Result<String, String>> {
    let roles = game.info().num_roles();
    if roles < 2 {
        return None;
    }
    let mut players: Vec<_> = (0..roles)
        .map(|r| make_player::<G>(PlayerKind::Mcts, r, &PlayerConfig::default()))
        .collect();
    let mut state = game.initial_state();
    let mut legal = Vec::new();
    let mut slowest = Duration::ZERO;
    let mut sims = 0;
    for _ in 0..STEPS {
        if game.is_terminal(&state) {
            break;
        }
        let mut joint = Vec::new();
        for (r, p) in players.iter_mut().enumerate() {
            let started = Instant::now();
            let c = match p.choose(game, &state, r, clock.move_deadline(started)) {
                Ok(c) => c,
                Err(e) => return Some(Err(format!("{engine}: role {r} could not move: {e}"))),
            };
            let took = started.elapsed();
            slowest = slowest.max(took);
            sims += c.stats.simulations;
            if took > clock.play {
                return Some(Err(format!(
                    "{engine}: role {r} took {took:?} against a {:?} clock",
                    clock.play
                )));
            }
            game.legal_moves(&state, r, &mut legal);
            if !legal.contains(&c.mv) {
                return Some(Err(format!("{engine}: role {r} played an illegal move")));
            }
            joint.push(c.mv);
        }
        state = game.next_state(&state, &joint);
    }
    Some(Ok(format!(
        "{engine}, {roles} roles, slowest move {} ms, {sims} simulations",
        slowest.as_millis()
    )))
}

#[test]
fn mcts_plays_every_corpus_game_legally_and_on_time() {
    let _turn = clocked_turn();
    let mut jobs: Vec<(String, bool)> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            Some(name.strip_suffix(".kif")?.to_string())
        })
        .map(|n| (n, false))
        .collect();
    jobs.sort();
    jobs.extend(DATALOG_SAMPLE.iter().map(|n| (n.to_string(), true)));
    assert!(
        jobs.len() > 100,
        "the corpus is there: {} games",
        jobs.len()
    );
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let running: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let (tx, rx) = mpsc::channel();
    for _ in 0..2 {
        let (jobs, next, running, tx) = (jobs.clone(), next.clone(), running.clone(), tx.clone());
        // Detached: a game that overruns fails the test through the watchdog below.
        std::thread::spawn(move || loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some((name, datalog)) = jobs.get(i) else {
                break;
            };
            running.lock().unwrap().push((name.clone(), Instant::now()));
            let outcome = mcts_plays(name, *datalog);
            running.lock().unwrap().retain(|(n, _)| n != name);
            if tx.send((name.clone(), outcome)).is_err() {
                break;
            }
        });
    }
    drop(tx);
    let (mut played, mut single, mut failures) = (0, 0, Vec::new());
    let mut reported = 0;
    while reported < jobs.len() {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok((name, outcome)) => {
                reported += 1;
                match outcome {
                    Some(Ok(summary)) => {
                        played += 1;
                        println!("{name}: {summary}");
                    }
                    Some(Err(why)) => {
                        println!("{name}: FAILED {why}");
                        failures.push(format!("{name}: {why}"));
                    }
                    None => single += 1,
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let running = running.lock().unwrap();
                if let Some((name, since)) = running.iter().find(|(_, t)| t.elapsed() > GAME_LIMIT)
                {
                    panic!(
                        "{name} did not finish in {} s (started {:.0} s ago)",
                        GAME_LIMIT.as_secs(),
                        since.elapsed().as_secs_f64()
                    );
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    assert_eq!(
        reported,
        jobs.len(),
        "a worker died before reporting every game"
    );
    println!(
        "{played} played, {single} one-player games left out, {} failed",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "failed games:\n{}",
        failures.join("\n")
    );
    assert!(played > 90, "{played} games played");
}
