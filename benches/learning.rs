//! Seed 2's self-play learner: training turns per second (criterion's throughput is the turns of one
//! iteration) on native tic-tac-toe and on `games/tictactoe.gdl` grounded to the network. Each iteration
//! trains from an empty table, so the figure includes the table's growth, as `ggp-run train` does.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ggp::games::tictactoe::TicTacToe;
use ggp::learn::{train, DEFAULT_RATE};
use ggp::network::NetGame;
use ggp::syntax::parse_file;

const NATIVE_TURNS: u64 = 100_000;
const RULE_TURNS: u64 = 10_000;

fn learning(c: &mut Criterion) {
    let mut group = c.benchmark_group("learning");
    group.sample_size(10);
    let native = TicTacToe::new(3, 3).expect("3x3 board");
    group.throughput(Throughput::Elements(NATIVE_TURNS));
    group.bench_function("tictactoe_native", |b| {
        b.iter(|| {
            train(&native, NATIVE_TURNS, DEFAULT_RATE, 1, |_| {
                std::ops::ControlFlow::Continue(())
            })
            .expect("trains")
            .scores
            .len()
        })
    });
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.gdl");
    let program = parse_file(&path).expect("parses").0;
    let net = NetGame::from_program(&program, "tictactoe").expect("grounds");
    group.throughput(Throughput::Elements(RULE_TURNS));
    group.bench_function("tictactoe_gdl_network", |b| {
        b.iter(|| {
            train(&net, RULE_TURNS, DEFAULT_RATE, 1, |_| {
                std::ops::ControlFlow::Continue(())
            })
            .expect("trains")
            .scores
            .len()
        })
    });
    group.finish();
}

criterion_group!(benches, learning);
criterion_main!(benches);
