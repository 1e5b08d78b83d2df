//! `ggp-run check` must not call a game valid that play would then refuse. Every file in
//! `tests/check_unplayable/` is checked by the binary: a file whose name starts with `warn_` is valid
//! (exit 0) with warnings, every other one exits non-zero with located errors. What the command prints
//! (up to the summary of a valid game or of what was loaded, whose load times vary) must equal the file's golden `.expected`
//! file; `UPDATE_GOLDEN=1` rewrites them.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn unplayable_games_fail_check_with_located_errors() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(tests.join("check_unplayable"))
        .expect("the folder exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "kif" || x == "gdl"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 6, "the catalogue is there");
    for input in inputs {
        let stem = input.file_stem().unwrap().to_string_lossy().to_string();
        let relative = input.strip_prefix(&tests).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
            .arg("check")
            .arg(relative)
            .current_dir(&tests)
            .output()
            .expect("ggp-run runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let shown: String = stdout
            .lines()
            // What the summary shows of the loaded game (after a play-test's errors too) holds times.
            .take_while(|l| !l.contains(": valid game") && !l.starts_with("  network: "))
            .map(|l| format!("{l}\n"))
            .collect();
        if stem.starts_with("warn_") {
            assert!(out.status.success(), "{stem}: should be valid:\n{stdout}");
            assert!(shown.contains("warning:"), "{stem}: should warn:\n{stdout}");
        } else {
            assert!(!out.status.success(), "{stem}: check passed:\n{stdout}");
            assert!(
                shown.contains(": error:"),
                "{stem}: no located error:\n{stdout}"
            );
        }
        let expected = input.with_extension("expected");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&expected, &shown).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&expected)
            .unwrap_or_else(|_| panic!("{}: no golden file", expected.display()));
        assert_eq!(
            shown,
            golden,
            "{stem}: output differs from {}",
            expected.display()
        );
    }
}
