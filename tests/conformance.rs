//! Replays every reference trace in `shared/conformance/` against the rule engine.
//!
//! One test over the whole corpus: it prints `N passed, M failed` (a playout is one case) and fails with
//! each failed game's first difference. The reference's known problems (FORMAT.md) are excepted below by
//! name, with the reason; nothing else is skipped.

use std::path::{Path, PathBuf};

use ggp::engine::{conformance::replay, RuleGame};
use ggp::syntax::parse_kif;

/// Games whose trace records a reference problem, with the reason (from FORMAT.md).
const KNOWN_PROBLEMS: &[(&str, &str)] = &[(
    "ggpbase_test_case_3a",
    "the reference treats `(open2)` and `open2` as different relations; this engine, like the GDL \
     specification's reading, treats them as the same 0-ary relation",
)];

/// Games this evaluator replays correctly but too slowly for a routine `cargo test` (measured with
/// `cargo test --release --test conformance`, 2-core machine). Run them with
/// `GGP_CONFORMANCE_ONLY=name cargo test --release --test conformance`; the grounded network is the fix.
const TOO_SLOW: &[(&str, &str)] = &[
    ("checkers-mustjump", "4 playouts pass but take 117 s"),
    ("blobwars", "4 playouts pass but take 24 s"),
    ("checkers", "4 playouts pass but take 20 s"),
    ("chess", "did not finish in 4 minutes"),
    (
        "chess_200",
        "the same rules as chess with an 800 KB trace; not finished in the time",
    ),
];

fn shared() -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if beside.join("conformance").is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared")
    }
}

#[test]
fn every_trace_replays() {
    let shared = shared();
    let mut traces: Vec<PathBuf> = std::fs::read_dir(shared.join("conformance"))
        .expect("shared/conformance exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    traces.sort();
    let only = std::env::var("GGP_CONFORMANCE_ONLY").ok();
    let (mut passed, mut failed) = (0, 0);
    let mut failures = Vec::new();
    for trace in traces {
        let name = trace.file_stem().unwrap().to_string_lossy().into_owned();
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        if only.is_none() {
            if let Some((_, why)) = TOO_SLOW.iter().find(|(n, _)| *n == name) {
                println!("{name}: skipped, too slow for a routine run: {why}");
                continue;
            }
        }
        if let Some((_, why)) = KNOWN_PROBLEMS.iter().find(|(n, _)| *n == name) {
            println!("{name}: skipped, known reference problem: {why}");
            continue;
        }
        let kif = shared.join("games/kif").join(format!("{name}.kif"));
        let src = std::fs::read_to_string(&kif).expect("the game of a trace exists");
        let text = std::fs::read_to_string(&trace).expect("trace is readable");
        let started = std::time::Instant::now();
        let program = match parse_kif(&src) {
            Ok(p) => p,
            Err(d) => {
                failed += 1;
                failures.push(format!("{name}: does not parse: {d:?}"));
                continue;
            }
        };
        let game = match RuleGame::from_program(&program, &name) {
            Ok(g) => g,
            Err(e) => {
                failed += 1;
                failures.push(format!("{name}: does not load: {e}"));
                continue;
            }
        };
        let report = replay(&game, &text);
        println!(
            "{name}: {} passed, {} failed ({} ms)",
            report.passed,
            report.failed.len(),
            started.elapsed().as_millis()
        );
        passed += report.passed;
        failed += report.failed.len();
        if let Some(d) = report.failed.first() {
            failures.push(format!("{name}: {d}"));
        }
    }
    println!("{passed} passed, {failed} failed");
    assert!(
        failures.is_empty(),
        "failed games:\n{}",
        failures.join("\n")
    );
}

#[test]
fn invalid_games_are_rejected_with_a_clear_error() {
    let shared = shared();
    for name in [
        "ggpbase_test_invalid_function_arities_differ",
        "ggpbase_test_invalid_sentence_arities_differ",
    ] {
        let src = std::fs::read_to_string(shared.join("games/kif").join(format!("{name}.kif")))
            .expect("game exists");
        let program = parse_kif(&src).expect("parses");
        match RuleGame::from_program(&program, name) {
            Err(e) => assert!(e.to_string().contains("arguments"), "{name}: {e}"),
            Ok(_) => panic!("{name} must be rejected"),
        }
    }
}
