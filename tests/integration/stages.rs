//! Snapshot tests of the compilation stages: each stage prints itself as readable rules or equations,
//! and what it makes of a few small games must equal the golden file in tests/data/stages
//! (`UPDATE_GOLDEN=1` rewrites them; review the diff before committing). A change in any stage shows up
//! here as a readable difference, not only as a failed playout.

use std::path::Path;

use ggp::pipeline::{print, Stage};

use crate::common;

/// The games: operation rules with arithmetic, operation rules on a board, classic GDL written infix,
/// a corpus game in KIF, and a game whose propositions only play finds.
const GAMES: &[&str] = &[
    "games/nim.gdl",
    "games/tictactoe.gdl",
    "games/roshambo.gdl",
    "shared:games/kif/buttons.kif",
    "tests/data/nested_counter.kif",
];

/// Stages that fail on a game, with what their error must say.
const FAILS: &[(&str, Stage, &str)] = &[(
    "tests/data/nested_counter.kif",
    Stage::Network,
    "nested more than 200 deep: (n (s (s",
)];

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
        let path = match game.strip_prefix("shared:") {
            Some(rest) => common::shared().join(rest),
            None => root.join(game),
        };
        let (program, _) =
            ggp::syntax::parse_file(&path).unwrap_or_else(|_| panic!("{} parses", path.display()));
        let stem = path.file_stem().expect("a name").to_string_lossy();
        for stage in Stage::ALL {
            let name = stage.name();
            let expected_failure = FAILS
                .iter()
                .find(|(g, s, _)| g == game && *s == stage)
                .map(|f| f.2);
            match (print(&program, &stem, stage), expected_failure) {
                (Ok(text), None) => {
                    assert!(
                        !text.trim().is_empty(),
                        "{game}: the {name} stage prints nothing"
                    );
                    check(
                        &text,
                        &root.join(format!("tests/data/stages/{stem}.{name}")),
                    );
                }
                (Err(e), Some(why)) => assert!(e.to_string().contains(why), "{game} {name}: {e}"),
                (Err(e), None) => panic!("{game}: the {name} stage fails: {e}"),
                (Ok(_), Some(_)) => panic!("{game}: the {name} stage works now: take it off FAILS"),
            }
        }
    }
}
