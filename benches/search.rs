//! Alpha-beta and Jamboree on a mid-game Connect Four position: nodes per second (criterion's
//! throughput is set to the search's node count) and Jamboree's wall-clock speed-up over alpha-beta at
//! the same depth (compare the `midgame` times; Jamboree uses every core through rayon).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ggp::game::Game;
use ggp::games::connect4::{Connect4, Heuristic};
use ggp::players::SeedSearch;

const DEPTH: u32 = 10;

/// Four plies into a game, both sides with central stones and no immediate threat.
fn midgame(g: &Connect4) -> <Connect4 as Game>::State {
    [3u8, 3, 2, 4]
        .iter()
        .enumerate()
        .fold(g.initial_state(), |s, (i, c)| g.play(&s, i % 2, c))
}

fn search(c: &mut Criterion) {
    let g = Connect4::new(6, 7).expect("6x7 board");
    let s = midgame(&g);
    let mut group = c.benchmark_group("midgame");
    group.sample_size(10);

    let ab = SeedSearch::AlphaBeta
        .run(&g, &Heuristic, &s, DEPTH, false, None)
        .expect("alpha-beta searches");
    eprintln!(
        "alphabeta depth {DEPTH}: {} nodes, {} leaves",
        ab.stats.nodes, ab.stats.leaves
    );
    group.throughput(Throughput::Elements(ab.stats.nodes));
    group.bench_function(BenchmarkId::new("alphabeta", DEPTH), |b| {
        b.iter(|| SeedSearch::AlphaBeta.run(&g, &Heuristic, &s, DEPTH, false, None))
    });

    for fraction in [0.5, 0.75] {
        let jb = SeedSearch::Jamboree { fraction }
            .run(&g, &Heuristic, &s, DEPTH, false, None)
            .expect("jamboree searches");
        eprintln!(
            "jamboree {fraction} depth {DEPTH}: {} nodes, {} leaves",
            jb.stats.nodes, jb.stats.leaves
        );
        group.throughput(Throughput::Elements(jb.stats.nodes));
        group.bench_function(
            BenchmarkId::new(format!("jamboree{fraction}"), DEPTH),
            |b| {
                b.iter(|| {
                    SeedSearch::Jamboree { fraction }.run(&g, &Heuristic, &s, DEPTH, false, None)
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
