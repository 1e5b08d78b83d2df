//! Random playouts on the grounded network (single thread): one playout per iteration by each
//! [`PlayoutMethod`] (full levelised pass per step, or change propagation), and 64 playouts per iteration
//! through `NetGame::batch_playouts`. Playouts per second = iterations per second (× 64 for the batch).
//!
//! `network_load/*`: building the network from parsed rules (grounding, compiling, choosing the playout
//! method), on rayon's threads. chess.kif's target is under 1 s (about 1.9 s on the 2-core development
//! machine, 2026-12-06); it is measured with the budget `--engine network` allows (120 s), so that a
//! slower machine than the default budget's measures it too.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::game::Game;
use ggp::network::{Budget, NetGame, PlayoutMethod};
use ggp::syntax::ast::Program;
use ggp::syntax::parse_file;
use rand::rngs::SmallRng;
use rand::SeedableRng;

#[path = "../tests/integration/common.rs"]
mod common;

fn rules(path: &str) -> Program {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // `games/...` in this repository, `shared/...` the shared material beside the checkout.
    let path = match path.strip_prefix("shared/") {
        Some(rest) => common::shared().join(rest),
        None => root.join(path),
    };
    parse_file(&path)
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
        .0
}

fn game(path: &str) -> NetGame {
    NetGame::from_program(&rules(path), path).expect("grounds")
}

fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("network_load");
    group.sample_size(10);
    for (name, path) in [
        ("breakthrough", "shared/games/kif/breakthrough.kif"),
        ("checkers", "shared/games/kif/checkers.kif"),
        ("skirmish", "shared/games/kif/skirmish.kif"),
        ("chess", "shared/games/kif/chess.kif"),
    ] {
        let program = rules(path);
        group.bench_function(name, |b| {
            b.iter(|| {
                NetGame::from_program_within(&program, name, Budget::for_seconds(120.0))
                    .expect("grounds")
                    .num_gates()
            })
        });
    }
    group.finish();
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

criterion_group!(benches, playouts, load);
criterion_main!(benches);
