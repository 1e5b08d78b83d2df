//! The catalogue of bad inputs: every file in tests/data/bad is read, parsed and checked, and the
//! rendered diagnostics must equal its golden `.expected` file. `UPDATE_GOLDEN=1` rewrites them.
//! Files named `warn_*` must produce warnings and no error; all others at least one error.

use std::path::{Path, PathBuf};

use ggp::diagnostics::{render, Diagnostic};

/// Everything the front end says about one file, rendered as the CLI shows it.
fn diagnose(path: &Path) -> (String, usize, usize) {
    let name = format!("bad/{}", path.file_name().unwrap().to_string_lossy());
    let show =
        |ds: &[Diagnostic], src: &str| ds.iter().map(|d| render(d, &name, src)).collect::<String>();
    match ggp::syntax::parse_file(path) {
        Err((errors, src)) => (show(&errors, &src), errors.len(), 0),
        Ok((program, src)) => {
            let report = ggp::check::check(&program);
            let text = show(&report.errors, &src) + &show(&report.warnings, &src);
            (text, report.errors.len(), report.warnings.len())
        }
    }
}

fn check(input: &Path, expected: &Path) {
    let (actual, errors, warnings) = diagnose(input);
    let stem = input.file_stem().unwrap().to_string_lossy().to_string();
    if stem.starts_with("warn_") {
        assert!(
            errors == 0 && warnings > 0,
            "{stem}: expected only warnings:\n{actual}"
        );
    } else {
        assert!(errors > 0, "{stem}: expected an error, got:\n{actual}");
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(expected, &actual).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(expected).unwrap_or_else(|_| {
        panic!(
            "{}: no golden file; run with UPDATE_GOLDEN=1",
            expected.display()
        )
    });
    assert_eq!(
        actual,
        golden,
        "{stem}: diagnostics differ from {}",
        expected.display()
    );
}

#[test]
fn bad_inputs_match_their_golden_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "kif" || x == "gdl"))
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 30,
        "the catalogue has {} inputs",
        inputs.len()
    );
    for input in inputs {
        let expected = input.with_extension("expected");
        check(&input, &expected);
    }
}
