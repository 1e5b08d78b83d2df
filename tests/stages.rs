//! Snapshot tests of the compilation stages: each stage prints itself as readable rules or equations,
//! and what it makes of a few small games must equal the golden file in tests/data/stages
//! (`UPDATE_GOLDEN=1` rewrites them; review the diff before committing). A change in any stage shows up
//! here as a readable difference, not only as a failed playout.

use std::path::Path;

use ggp::engine::plan::PlanDisplay;
use ggp::engine::{lower, ops, RuleGame};

/// The games: operation rules with arithmetic, operation rules on a board, classic GDL written infix.
const GAMES: &[&str] = &["games/nim.gdl", "games/tictactoe.gdl", "games/roshambo.gdl"];

/// Games whose network is not snapshotted, with the reason.
const NO_NETWORK: &[(&str, &str)] = &[];

fn stages(game: &str, path: &Path) -> Vec<(&'static str, String)> {
    let (program, _) =
        ggp::syntax::parse_file(path).unwrap_or_else(|_| panic!("{} parses", path.display()));
    let lowered = ops::to_classic(&lower(&program).expect("lowers")).expect("becomes classic");
    let rules = RuleGame::from_program(&program, "game").expect("loads");
    let plan = PlanDisplay {
        program: rules.program(),
        plan: rules.plan(),
    };
    let mut out = vec![("lowered", lowered.to_string()), ("plan", plan.to_string())];
    let network = ggp::network::ground(&program);
    match (network, NO_NETWORK.iter().find(|(g, _)| *g == game)) {
        (Ok(net), None) => out.push(("network", net.to_string())),
        (Err(e), None) => panic!("{game}: the network does not ground: {e}"),
        (Ok(_), Some(_)) => panic!("{game} grounds now: take it off NO_NETWORK"),
        (Err(_), Some((_, why))) => eprintln!("{game}: no network snapshot: {why}"),
    }
    out
}

fn check(actual: &str, golden: &Path) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().expect("a folder")).expect("folder made");
        std::fs::write(golden, actual).expect("golden written");
        return;
    }
    let expected = std::fs::read_to_string(golden).unwrap_or_else(|_| {
        panic!(
            "{}: no golden file; run with UPDATE_GOLDEN=1",
            golden.display()
        )
    });
    if actual != expected {
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} differs from line {}:\n  now:      {}\n  expected: {}\n(UPDATE_GOLDEN=1 rewrites it)",
            golden.display(),
            first + 1,
            actual.lines().nth(first).unwrap_or("<end>"),
            expected.lines().nth(first).unwrap_or("<end>"),
        );
    }
}

#[test]
fn every_stage_of_the_small_games_matches_its_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for game in GAMES {
        let path = root.join(game);
        let stem = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        for (stage, text) in stages(game, &path) {
            assert!(
                !text.trim().is_empty(),
                "{game}: the {stage} stage prints nothing"
            );
            check(
                &text,
                &root.join(format!("tests/data/stages/{stem}.{stage}")),
            );
        }
    }
}
