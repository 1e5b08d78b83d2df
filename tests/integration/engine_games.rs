//! The `.gdl` games in `games/` load and play through the `Game` trait: known perft counts, and random
//! playouts that end in a terminal state with a goal for every role.

use std::path::Path;

use std::sync::Arc;

use ggp::engine::RuleGame;
use ggp::game::{perft, Game};
use ggp::load::{load as load_game, AnyGame, EngineChoice, GameSource, LoadOptions};
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// A bundled game on the Datalog evaluator, through the one loader.
fn load(name: &str) -> Arc<RuleGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("games")
        .join(name);
    let options = LoadOptions {
        engine: EngineChoice::Datalog,
        ..LoadOptions::default()
    };
    match load_game(&GameSource::RuleFile(path), &options) {
        Ok(AnyGame::Datalog(l)) => l.game,
        Ok(_) => panic!("{name}: asked for the Datalog evaluator"),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// Loads `name`, checks perft for depths 1.. against `counts`, plays `playouts` random games to the end
/// and checks every goal lies in 0..=100 and that the first legal move prints as `first_move`.
fn check(name: &str, counts: &[u64], playouts: u32, first_move: &str) {
    let g = load(name);
    let g = g.as_ref();
    let s0 = g.initial_state();
    for (d, &want) in counts.iter().enumerate() {
        assert_eq!(perft(g, &s0, d as u32 + 1), want, "{name} perft {}", d + 1);
    }
    let mover = g.mover(&s0).unwrap_or(0);
    let mut buf = Vec::new();
    g.legal_moves(&s0, mover, &mut buf);
    assert_eq!(g.show_move(&buf[0]), first_move, "{name}");
    let mut rng = SmallRng::seed_from_u64(7);
    for _ in 0..playouts {
        let (end, steps) = g.random_playout(&s0, &mut rng, &mut buf, 10_000);
        assert!(
            g.is_terminal(&end),
            "{name}: not terminal after {steps} steps"
        );
        for r in 0..g.info().num_roles() {
            let v = g.goal_values(&end, r).unwrap();
            assert_eq!(v.len(), 1, "{name}: role {r} goals {v:?}");
            assert!((0..=100).contains(&v[0]));
        }
    }
}

#[test]
fn tictactoe() {
    check("tictactoe.gdl", &[9, 72, 504, 3024], 50, "mark(1,1)");
}

#[test]
fn nim() {
    check("nim.gdl", &[3, 9, 27], 50, "take(1)");
}

#[test]
fn connect4() {
    check("connect4.gdl", &[7, 49, 343], 20, "drop(1)");
}

#[test]
fn breakthrough() {
    check("breakthrough.gdl", &[], 5, "move(1,2,1,3)");
}

#[test]
fn knightstour() {
    check("knightstour.gdl", &[2], 20, "jump(2,3)");
}

#[test]
fn roshambo() {
    check("roshambo.gdl", &[9], 20, "throw(paper)");
}
