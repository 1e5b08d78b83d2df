//! The network's fast playout paths against each other and against the Datalog evaluator.
//!
//! `NetGame::random_playout_with` promises the same playout for the same generator whichever way it
//! evaluates the network, so every method must end in the same state after the same number of moves;
//! and a playout on the Datalog evaluator that draws its moves the same way (role order, each role's
//! legal moves in move order) must end there too.

use std::path::{Path, PathBuf};

use ggp::engine::RuleGame;
use ggp::game::Game;
use ggp::network::{NetGame, PlayoutMethod};
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn load(name: &str) -> (NetGame, ggp::syntax::ast::Program) {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/games/kif");
    let dir = if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/games/kif")
    };
    let src = std::fs::read_to_string(dir.join(format!("{name}.kif"))).expect("game exists");
    let program = parse_kif(&src).expect("parses");
    (
        NetGame::from_program(&program, name).expect("grounds"),
        program,
    )
}

/// A state a few random moves into the game (a playout start other than the initial state).
fn midgame(g: &NetGame, rng: &mut SmallRng, moves: u32) -> <NetGame as Game>::State {
    g.random_playout_with(PlayoutMethod::FullPass, &g.initial_state(), rng, moves)
        .0
}

/// Playouts from the initial state and from midgame states, alternating between two games on one thread
/// so that the propagation scratch is reloaded and reused: every method gives the same result.
fn methods_agree(name: &str, other: &NetGame, playouts: u64) {
    let (g, _) = load(name);
    let mut pick = SmallRng::seed_from_u64(11);
    for k in 0..playouts {
        let start = if k % 3 == 0 {
            g.initial_state()
        } else {
            let moves = pick.gen_range(1..8);
            midgame(&g, &mut pick, moves)
        };
        let mut results = Vec::new();
        // Propagation twice: the second starts from the saved words of the same start state.
        for method in [
            PlayoutMethod::FullPass,
            PlayoutMethod::Propagate,
            PlayoutMethod::Propagate,
        ] {
            let mut rng = SmallRng::seed_from_u64(k);
            results.push(g.random_playout_with(method, &start, &mut rng, 500));
        }
        assert_eq!(results[0], results[1], "{name}: playout {k}");
        assert_eq!(results[0], results[2], "{name}: playout {k} again");
        if k % 5 == 4 {
            let mut rng = SmallRng::seed_from_u64(k);
            other.random_playout_with(
                PlayoutMethod::Propagate,
                &other.initial_state(),
                &mut rng,
                500,
            );
        }
    }
}

#[test]
fn full_pass_and_propagation_give_the_same_playouts() {
    let (other, _) = load("ticTacToe");
    for (name, n) in [
        ("ticTacToe", 200),
        ("connectFour", 100),
        ("breakthrough", 10),
        ("3pConnectFour", 20),
        ("blocker", 50),
        ("pentago", 10),
        ("chineseCheckers4", 5),
        ("nineBoardTicTacToe", 20),
    ] {
        methods_agree(name, &other, n);
    }
}

/// The same playout on the Datalog evaluator, drawing moves exactly as the network does.
fn datalog_playout(g: &RuleGame, rng: &mut SmallRng, max_steps: u32) -> (Vec<String>, u32) {
    let mut s = g.initial_state();
    let mut buf = Vec::new();
    let mut steps = 0;
    'play: while steps < max_steps && !g.is_terminal(&s) {
        let mut joint = Vec::new();
        for r in 0..g.info().num_roles() {
            g.legal_moves(&s, r, &mut buf);
            if buf.is_empty() {
                break 'play;
            }
            joint.push(buf[rng.gen_range(0..buf.len())]);
        }
        s = g.next_state(&s, &joint);
        steps += 1;
    }
    (g.state_facts(&s), steps)
}

#[test]
fn propagation_playouts_match_the_datalog_evaluator() {
    for (name, n) in [("ticTacToe", 30), ("connectFour", 10), ("blocker", 10)] {
        let (net, program) = load(name);
        let rule = RuleGame::from_program(&program, name).expect("loads");
        for k in 0..n {
            let mut a = SmallRng::seed_from_u64(k);
            let mut b = SmallRng::seed_from_u64(k);
            let (s, steps) = net.random_playout_with(
                PlayoutMethod::Propagate,
                &net.initial_state(),
                &mut a,
                300,
            );
            let (facts, rsteps) = datalog_playout(&rule, &mut b, 300);
            assert_eq!(
                (net.state_facts(&s), steps),
                (facts, rsteps),
                "{name}: playout {k}"
            );
        }
    }
}
