//! No input makes the front end panic, hang or overflow the stack, and every diagnostic points inside
//! the input.

use ggp::diagnostics::Diagnostic;
use ggp::syntax::{parse_infix, parse_kif, Syntax};
use proptest::prelude::*;

use crate::common;

fn spans_inside(ds: &[Diagnostic], len: usize) {
    for d in ds {
        assert!(
            d.span.start <= d.span.end && d.span.end as usize <= len,
            "span {:?} outside input of {len} bytes: {}",
            d.span,
            d.message
        );
        for l in &d.labels {
            assert!(l.span.start <= l.span.end && l.span.end as usize <= len);
        }
    }
}

/// Parses in one syntax and, when that works, checks and prints; KIF printing must read back.
fn exercise(src: &str, syntax: Syntax) {
    match ggp::syntax::parse_str(src, syntax) {
        Err(ds) => {
            assert!(!ds.is_empty());
            spans_inside(&ds, src.len());
        }
        Ok(p) => {
            let report = ggp::check::check(&p);
            spans_inside(&report.errors, src.len());
            spans_inside(&report.warnings, src.len());
            let _ = ggp::check::strata(&p);
            let kif = ggp::print::to_kif(&p);
            if syntax == Syntax::Kif {
                let back = parse_kif(&kif).expect("printed KIF reads back");
                assert!(back == p, "printed KIF reads back differently:\n{kif}");
            }
            let infix = ggp::print::to_infix(&p);
            if syntax == Syntax::Infix {
                let back = parse_infix(&infix).expect("printed infix reads back");
                assert!(back == p, "printed infix reads back differently:\n{infix}");
            }
            let _ = ggp::print::convert(&p, Syntax::Kif);
        }
    }
}

const SEEDS: [&str; 3] = ["ticTacToe.kif", "nim1.kif", "connectFour.kif"];

fn seed(i: usize) -> String {
    let path = common::shared()
        .join("games/kif")
        .join(SEEDS[i % SEEDS.len()]);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the seed game {} cannot be read: {e}", path.display()))
}

/// Applies an edit to a corpus file at a position given as a fraction of its length.
fn mutate(src: &str, at: f64, kind: u8, piece: &str) -> String {
    let mut cut = ((src.len() as f64) * at) as usize;
    while !src.is_char_boundary(cut) {
        cut -= 1;
    }
    let (a, b) = src.split_at(cut);
    match kind % 3 {
        0 => format!("{a}{piece}{b}"),
        1 => {
            let skip = b
                .char_indices()
                .nth(piece.len().max(1))
                .map_or(b.len(), |(i, _)| i);
            format!("{a}{}", &b[skip..])
        }
        _ => format!("{a}{a}{b}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let src = String::from_utf8_lossy(&bytes);
        exercise(&src, Syntax::Kif);
        exercise(&src, Syntax::Infix);
    }

    #[test]
    fn arbitrary_tokens(src in "[()?;%\"a-zA-Z0-9_~&|:=>.,\\[\\] \n-]{0,200}") {
        exercise(&src, Syntax::Kif);
        exercise(&src, Syntax::Infix);
    }

    #[test]
    fn mutated_corpus_files(i in 0usize..3, at in 0.0f64..1.0, kind in any::<u8>(),
                            piece in "[()?;\"a-z ~&|:-]{0,4}") {
        let src = mutate(&seed(i), at, kind, &piece);
        exercise(&src, Syntax::Kif);
    }
}

/// Names the KIF reader refuses between statements (`%...`, an infix comment, and `:-`) are printed
/// quoted, so a program prints as KIF that reads back.
#[test]
fn names_like_the_other_syntax_print_quoted_in_kif() {
    for src in ["\"\"~\"\"&\"%\"", "(p \"%a\") \":-\""] {
        exercise(src, Syntax::Kif);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    for src in [
        "(".repeat(n),
        format!("(p {}a{})", "(f ".repeat(n), ")".repeat(n)),
        ")".repeat(n),
    ] {
        let e = parse_kif(&src).unwrap_err();
        spans_inside(&e, src.len());
    }
    for src in [
        "(".repeat(n),
        format!("p({}a{})", "f(".repeat(n), ")".repeat(n)),
        format!("p :- {}q", "~".repeat(n)),
        format!("p :- {}q{}", "(".repeat(n), ")".repeat(n)),
        // Within both the parentheses' and the `~` runs' own limits, but half a million deep.
        format!(
            "p :- {}q{}",
            format!("{}(", "~".repeat(499)).repeat(499),
            ")".repeat(499)
        ),
    ] {
        let e = parse_infix(&src).unwrap_err();
        spans_inside(&e, src.len());
    }
}

#[test]
fn nested_ors_are_checked_in_time_linear_in_their_depth() {
    // Each level's alternative binds a variable its sibling does not: a check that went over every
    // alternative until nothing more was bound, at every level, took three times as long per level
    // (about 10^14 steps here), so this test would not end.
    let depth = 40;
    let mut body = String::from("(q)");
    for k in (0..depth).rev() {
        body = format!("(or (and (p ?x{k}) {body}) (q))");
    }
    let src = format!(
        "(role r) (init (a)) (p 1) (q) (<= (legal r go) {body}) (<= (next (a)) (true (a))) \
         (goal r 100) (<= terminal (true (b)))"
    );
    let program = parse_kif(&src).expect("parses");
    let report = ggp::check::check(&program);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
}

#[test]
fn empty_and_blank_files() {
    for src in ["", " \n\t", "; only a comment", "% only a comment\n"] {
        let p = ggp::syntax::parse_str(src, ggp::syntax::guess_syntax(src)).unwrap();
        assert!(p.statements.is_empty());
        assert!(
            !ggp::check::check(&p).is_ok(),
            "an empty game is not a game"
        );
    }
}

#[test]
fn ten_megabyte_files() {
    let fact = "(cell 1 2 b) (<= (p ?x) (q ?x) (not (r ?x)))\n";
    let big = fact.repeat(10_000_000 / fact.len() + 1);
    let p = parse_kif(&big).unwrap();
    assert!(p.statements.len() > 200_000);
    let _ = ggp::check::check(&p);
    let garbage: String = (0..10_000_000u32)
        .map(|i| char::from(b"(()?x\"\n;)"[(i * 7 % 9) as usize]))
        .collect();
    let _ = parse_kif(&garbage);
    let _ = parse_infix(&garbage);
}
