//! Random playouts on the grounded network (single thread): one playout per iteration through
//! `Game::random_playout`, and 64 playouts per iteration through `NetGame::batch_playouts`.
//! Playouts per second = iterations per second (× 64 for the batch).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::game::Game;
use ggp::network::NetGame;
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::SeedableRng;

fn game(name: &str) -> NetGame {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/games/kif")
        .join(format!("{name}.kif"));
    let path = if path.exists() {
        path
    } else {
        std::path::PathBuf::from(format!("/work/shared/games/kif/{name}.kif"))
    };
    let src = std::fs::read_to_string(path).expect("game exists");
    NetGame::from_program(&parse_kif(&src).expect("parses"), name).expect("grounds")
}

fn playouts(c: &mut Criterion) {
    for name in ["ticTacToe", "connectFour", "breakthrough"] {
        let g = game(name);
        let start = g.initial_state();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut buf = Vec::new();
        let mut group = c.benchmark_group(format!("network/{name}"));
        group.throughput(Throughput::Elements(1));
        group.bench_function("playout", |b| {
            b.iter(|| g.random_playout(&start, &mut rng, &mut buf, 10_000).1)
        });
        group.throughput(Throughput::Elements(64));
        group.bench_function("batch64", |b| {
            b.iter(|| g.batch_playouts(&mut rng, 64, 10_000).1)
        });
        group.finish();
    }
}

criterion_group!(benches, playouts);
criterion_main!(benches);
