//! The grounded network against the reference traces and against the Datalog evaluator.
//!
//! Every corpus game whose trace exists is grounded; a game that has no network (budget, state-dependent
//! recursion) is skipped with the reason printed, exactly as the CLI would fall back. Every game that
//! grounds must replay its trace. The differential test plays random playouts on both engines and
//! compares legal sets, states, terminal flags and goals at every step.

use std::path::{Path, PathBuf};

use ggp::engine::RuleGame;
use ggp::game::Game;
use ggp::network::{replay, NetGame, NetworkError};
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Games whose trace records a reference problem (FORMAT.md), as in `tests/conformance.rs`.
const KNOWN_PROBLEMS: &[(&str, &str)] = &[(
    "ggpbase_test_case_3a",
    "the reference treats `(open2)` and `open2` as different relations",
)];

/// Games that do not get a network yet and take too long to find out in a routine run: the relaxed
/// (negation-free) fixpoint, run by the engine's evaluator before grounding, does not finish in minutes,
/// and the grounding budget cannot interrupt it. They run on the Datalog evaluator.
const NO_NETWORK_YET: &[(&str, &str)] = &[
    (
        "chess",
        "the relaxed fixpoint does not finish within minutes",
    ),
    ("chess_200", "the same rules as chess"),
    (
        "urmAdd",
        "loading runs over a minute (not yet diagnosed: likely the relaxed fixpoint's arithmetic)",
    ),
];

fn shared() -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if beside.join("conformance").is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared")
    }
}

fn load(name: &str) -> (ggp::syntax::ast::Program, String) {
    let src = std::fs::read_to_string(shared().join("games/kif").join(format!("{name}.kif")))
        .expect("game exists");
    (parse_kif(&src).expect("parses"), src)
}

#[test]
fn every_trace_replays_on_the_network() {
    let shared = shared();
    let mut traces: Vec<PathBuf> = std::fs::read_dir(shared.join("conformance"))
        .expect("shared/conformance exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    traces.sort();
    let only = std::env::var("GGP_CONFORMANCE_ONLY").ok();
    let (mut passed, mut failed, mut games, mut skipped) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for trace in traces {
        let name = trace.file_stem().unwrap().to_string_lossy().into_owned();
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        if let Some((_, why)) = KNOWN_PROBLEMS.iter().find(|(n, _)| *n == name) {
            println!("{name}: skipped, known reference problem: {why}");
            continue;
        }
        if let Some((_, why)) = NO_NETWORK_YET.iter().find(|(n, _)| *n == name) {
            skipped += 1;
            println!("{name}: skipped, no network yet: {why}");
            continue;
        }
        let (program, _) = load(&name);
        let started = std::time::Instant::now();
        let game = match NetGame::from_program(&program, &name) {
            Ok(g) => g,
            Err(e @ (NetworkError::Budget(_) | NetworkError::Cyclic(_))) => {
                skipped += 1;
                println!("{name}: skipped, no network (falls back to Datalog): {e}");
                continue;
            }
            Err(e) => {
                // The same verdict as the Datalog evaluator's is right; a network-only refusal is not.
                if let Err(re) = RuleGame::from_program(&program, &name) {
                    skipped += 1;
                    println!("{name}: skipped, neither engine loads it: {e} / {re}");
                } else {
                    failed += 1;
                    failures.push(format!("{name}: does not load: {e}"));
                }
                continue;
            }
        };
        let load_ms = started.elapsed().as_millis();
        let text = std::fs::read_to_string(&trace).expect("trace is readable");
        let report = replay(&game, &text);
        games += 1;
        println!(
            "{name}: {} passed, {} failed (load {load_ms} ms, {} props, {} gates, total {} ms)",
            report.passed,
            report.failed.len(),
            game.num_propositions(),
            game.num_gates(),
            started.elapsed().as_millis()
        );
        passed += report.passed;
        failed += report.failed.len();
        if let Some(d) = report.failed.first() {
            failures.push(format!("{name}: {d}"));
        }
    }
    println!(
        "{games} games on the network, {skipped} without one; {passed} passed, {failed} failed"
    );
    assert!(
        failures.is_empty(),
        "failed games:\n{}",
        failures.join("\n")
    );
}

/// Plays `playouts` random playouts on both engines with the same moves and compares every step.
fn differential(name: &str, playouts: usize) {
    let (program, _) = load(name);
    let net = NetGame::from_program(&program, name).expect("grounds");
    let rule = RuleGame::from_program(&program, name).expect("loads");
    assert_eq!(net.info().roles, rule.info().roles, "{name}: roles");
    assert_eq!(
        net.info().dynamics,
        rule.info().dynamics,
        "{name}: dynamics"
    );
    let mut rng = SmallRng::seed_from_u64(7);
    let roles = net.info().num_roles();
    let (mut nbuf, mut rbuf) = (Vec::new(), Vec::new());
    for k in 0..playouts {
        let mut ns = net.initial_state();
        let mut rs = rule.initial_state();
        for step in 0..500 {
            let at = format!("{name} playout {k} step {step}");
            assert_eq!(net.state_facts(&ns), rule.state_facts(&rs), "{at}: state");
            let term = net.is_terminal(&ns);
            assert_eq!(term, rule.is_terminal(&rs), "{at}: terminal");
            for r in 0..roles {
                assert_eq!(
                    net.goal_values(&ns, r),
                    rule.goal_values(&rs, r).unwrap(),
                    "{at}: goals of role {r}"
                );
            }
            assert_eq!(net.mover(&ns), rule.mover(&rs), "{at}: mover");
            if term {
                break;
            }
            let (mut nj, mut rj) = (Vec::new(), Vec::new());
            for r in 0..roles {
                net.legal_moves(&ns, r, &mut nbuf);
                rule.legal_moves(&rs, r, &mut rbuf);
                let nt: Vec<String> = nbuf.iter().map(|m| net.show_move(m)).collect();
                let rt: Vec<String> = rbuf.iter().map(|m| rule.show_move(m)).collect();
                assert_eq!(nt, rt, "{at}: legal moves of role {r}");
                if nbuf.is_empty() {
                    break;
                }
                let i = rng.gen_range(0..nbuf.len());
                nj.push(nbuf[i]);
                rj.push(rbuf[i]);
            }
            if nj.len() < roles {
                break;
            }
            ns = net.next_state(&ns, &nj);
            rs = rule.next_state(&rs, &rj);
        }
    }
}

#[test]
fn network_and_datalog_agree_on_random_playouts() {
    for (name, n) in [
        ("ticTacToe", 100),
        ("connectFour", 20),
        ("breakthrough", 5),
        ("3pConnectFour", 5),
        ("blocker", 20),
        ("pentago", 5),
    ] {
        differential(name, n);
    }
}

#[test]
fn batch_playouts_end_in_terminal_states() {
    let (program, _) = load("ticTacToe");
    let net = NetGame::from_program(&program, "ticTacToe").unwrap();
    let mut rng = SmallRng::seed_from_u64(1);
    let (lanes, steps) = net.batch_playouts(&mut rng, 64, 1000);
    assert_eq!(lanes, 64);
    // Every tic-tac-toe playout lasts 5 to 9 moves.
    assert!((64 * 5..=64 * 9).contains(&steps), "{steps}");
}

#[test]
fn random_playout_reaches_a_terminal_state() {
    let (program, _) = load("connectFour");
    let net = NetGame::from_program(&program, "connectFour").unwrap();
    let mut rng = SmallRng::seed_from_u64(3);
    let mut buf = Vec::new();
    for _ in 0..50 {
        let (s, steps) = net.random_playout(&net.initial_state(), &mut rng, &mut buf, 1000);
        assert!(net.is_terminal(&s));
        assert!((7..=48).contains(&steps), "{steps}");
    }
}
