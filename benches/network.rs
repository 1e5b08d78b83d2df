//! Random playouts on the grounded network (single thread): one playout per iteration by each
//! [`PlayoutMethod`] (full levelised pass per step, or change propagation), and 64 playouts per iteration
//! through `NetGame::batch_playouts`. Playouts per second = iterations per second (× 64 for the batch).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::game::Game;
use ggp::network::{NetGame, PlayoutMethod};
use ggp::syntax::parse_file;
use rand::rngs::SmallRng;
use rand::SeedableRng;

fn game(path: &str) -> NetGame {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = [root.join(path), root.join("..").join(path)]
        .into_iter()
        .chain([std::path::PathBuf::from("/work").join(path)])
        .find(|p| p.exists())
        .expect("game exists");
    let (program, _) = parse_file(&path).expect("parses");
    NetGame::from_program(&program, path.to_string_lossy().as_ref()).expect("grounds")
}

fn playouts(c: &mut Criterion) {
    for (name, path) in [
        ("ticTacToe", "shared/games/kif/ticTacToe.kif"),
        ("connectFour", "shared/games/kif/connectFour.kif"),
        ("connect4.gdl", "games/connect4.gdl"),
        ("breakthrough", "shared/games/kif/breakthrough.kif"),
    ] {
        let g = game(path);
        let start = g.initial_state();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut group = c.benchmark_group(format!("network/{name}"));
        group.throughput(Throughput::Elements(1));
        for (label, method) in [
            ("full_pass", PlayoutMethod::FullPass),
            ("propagate", PlayoutMethod::Propagate),
        ] {
            group.bench_function(label, |b| {
                b.iter(|| g.random_playout_with(method, &start, &mut rng, 10_000).1)
            });
        }
        group.throughput(Throughput::Elements(64));
        group.bench_function("batch64", |b| {
            b.iter(|| g.batch_playouts(&mut rng, 64, 10_000).1)
        });
        group.finish();
    }
}

criterion_group!(benches, playouts);
criterion_main!(benches);
