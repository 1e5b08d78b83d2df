//! Random playouts from the initial state, one thread. Target for Connect Four: 2,000,000 playouts/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::bench::run_playouts;
use ggp::games::connect4::Connect4;
use ggp::games::tictactoe::TicTacToe;
use rand::rngs::SmallRng;
use rand::SeedableRng;

const BATCH: u64 = 1000;

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_playouts");
    group.throughput(Throughput::Elements(BATCH));
    let c4 = Connect4::new(6, 7).expect("6x7 board");
    let mut rng = SmallRng::seed_from_u64(1);
    group.bench_function("connect4_6x7", |b| {
        b.iter(|| run_playouts(&c4, BATCH, &mut rng))
    });
    let ttt = TicTacToe::new(3, 3).expect("3x3 board");
    group.bench_function("tictactoe_3x3", |b| {
        b.iter(|| run_playouts(&ttt, BATCH, &mut rng))
    });
    group.finish();
}

criterion_group!(benches, playouts);
criterion_main!(benches);
