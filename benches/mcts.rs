//! Monte Carlo tree search against the bare playouts it is built on, on `connectFour.kif`'s network, one
//! thread: the target is simulations per second within 2× of random playouts per second (both groups
//! set criterion's throughput to the number of playouts, so the two rates compare directly).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::bench::run_playouts;
use ggp::game::Game;
use ggp::network::NetGame;
use ggp::players::{Ask, Deadline, MctsPlayer, Player};
use rand::rngs::SmallRng;
use rand::SeedableRng;

#[path = "../tests/integration/common.rs"]
mod common;

/// Simulations (and playouts) a measured iteration runs.
const SIMULATIONS: u64 = 2_000;

fn connect_four() -> NetGame {
    let path = common::shared().join("games/kif/connectFour.kif");
    let (program, _) = ggp::syntax::parse_file(&path).expect("connectFour.kif parses");
    NetGame::from_program(&program, "connectFour").expect("its network builds")
}

fn mcts(c: &mut Criterion) {
    let g = connect_four();
    let s = g.initial_state();
    let mut group = c.benchmark_group("connectFour");
    group.throughput(Throughput::Elements(SIMULATIONS));
    let mut rng = SmallRng::seed_from_u64(1);
    group.bench_function("random_playouts", |b| {
        b.iter(|| run_playouts(&g, SIMULATIONS, &mut rng))
    });
    group.bench_function("mcts_simulations", |b| {
        b.iter(|| {
            // A fresh tree each time: the first simulations of a search, which add a node each.
            let mut p = MctsPlayer::new(1).with_simulation_limit(SIMULATIONS);
            let c = p
                .choose(&Ask::new(
                    &g,
                    &s,
                    0,
                    Deadline::after(Duration::from_secs(60)),
                ))
                .expect("a move");
            assert_eq!(c.stats.simulations, SIMULATIONS);
        })
    });
    group.finish();
}

criterion_group!(benches, mcts);
criterion_main!(benches);
