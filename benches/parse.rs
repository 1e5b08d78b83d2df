//! How long the front end takes on the largest corpus game: `chess.kif` must parse and check in well
//! under 20 ms.

use criterion::{black_box, criterion_group, criterion_main, Criterion};

#[path = "../tests/integration/common.rs"]
mod common;

fn chess() -> String {
    let path = common::shared().join("games/kif/chess.kif");
    std::fs::read_to_string(path).expect("chess.kif in the corpus")
}

fn bench(c: &mut Criterion) {
    let src = chess();
    c.bench_function("parse chess.kif", |b| {
        b.iter(|| ggp::syntax::parse_kif(black_box(&src)).expect("chess parses"))
    });
    c.bench_function("parse+check chess.kif", |b| {
        b.iter(|| {
            let p = ggp::syntax::parse_kif(black_box(&src)).expect("chess parses");
            ggp::check::check(&p)
        })
    });
    let p = ggp::syntax::parse_kif(&src).expect("chess parses");
    let infix = ggp::print::to_infix(&p);
    c.bench_function("parse chess as infix", |b| {
        b.iter(|| ggp::syntax::parse_infix(black_box(&infix)).expect("infix chess parses"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
