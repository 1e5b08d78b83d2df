//! Random playouts through the `Game` trait on the Datalog evaluator (`RuleGame`).
//!
//! `cargo bench --bench engine -- --warm-up-time 1 --measurement-time 3`; one iteration is one playout
//! from the initial state to a terminal state, choosing each role's move uniformly at random.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::engine::{RuleGame, RuleMove};
use ggp::game::Game;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[path = "../tests/integration/common.rs"]
mod common;
use common::shared;

fn load(name: &str) -> RuleGame {
    let path = shared().join("games/kif").join(format!("{name}.kif"));
    let src = std::fs::read_to_string(path).expect("corpus game");
    let program = ggp::syntax::parse_kif(&src).expect("parses");
    RuleGame::from_program(&program, name).expect("loads")
}

/// One random playout; returns its length so the work is not optimised away.
fn playout(
    game: &RuleGame,
    rng: &mut SmallRng,
    bufs: &mut [Vec<RuleMove>],
    joint: &mut Vec<RuleMove>,
) -> usize {
    let mut s = game.initial_state();
    let mut depth = 0;
    while !game.is_terminal(&s) {
        joint.clear();
        for (r, buf) in bufs.iter_mut().enumerate() {
            game.legal_moves(&s, r, buf);
            if buf.is_empty() {
                return depth;
            }
            joint.push(buf[rng.gen_range(0..buf.len())]);
        }
        s = game.next_state(&s, joint);
        depth += 1;
    }
    depth
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("datalog_playout");
    group.throughput(Throughput::Elements(1));
    for name in ["ticTacToe", "connectFour"] {
        let game = load(name);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut bufs = vec![Vec::new(); game.info().num_roles()];
        let mut joint = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| playout(&game, &mut rng, &mut bufs, &mut joint))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
