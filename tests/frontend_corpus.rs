//! The whole KIF corpus in /work/shared/games/kif (or `$GGP_KIF_DIR`) goes through the front end.

use std::path::PathBuf;

use ggp::syntax::{parse_kif, Syntax};

fn corpus() -> Vec<PathBuf> {
    let dir = std::env::var("GGP_KIF_DIR").unwrap_or_else(|_| "/work/shared/games/kif".into());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the corpus {dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 100,
        "expected the 149-file corpus, found {}",
        files.len()
    );
    files
}

#[test]
fn every_corpus_file_parses() {
    let mut failures = Vec::new();
    for path in corpus() {
        let src = std::fs::read_to_string(&path).unwrap();
        match parse_kif(&src) {
            Ok(p) => {
                assert_eq!(p.syntax, Syntax::Kif);
                assert!(!p.statements.is_empty(), "{}", path.display());
            }
            Err(e) => failures.push(format!("{}: {:?}", path.display(), e)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_file_checks_except_the_two_invalid_ones() {
    let mut failures = Vec::new();
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let program = parse_kif(&src).unwrap();
        let report = ggp::check::check(&program);
        if name.starts_with("ggpbase_test_invalid_") {
            let e = report
                .errors
                .iter()
                .find(|d| d.message.contains("argument(s) here but"));
            match e {
                Some(d) => {
                    assert_eq!(d.labels.len(), 1, "{name}: both places are named");
                    assert!(d.message.contains('1') || d.message.contains('2'), "{d:?}");
                }
                None => failures.push(format!(
                    "{name}: not rejected for arity: {:?}",
                    report.errors
                )),
            }
        } else if !report.errors.is_empty() {
            let shown: Vec<String> = report
                .errors
                .iter()
                .take(3)
                .map(|d| ggp::diagnostics::render(d, &name, &src))
                .collect();
            failures.push(shown.join(""));
        }
    }
    assert!(
        failures.is_empty(),
        "{} files:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
