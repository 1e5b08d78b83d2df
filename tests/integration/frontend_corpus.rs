//! The whole KIF corpus in `../shared/games/kif` beside the checkout (or `$GGP_SHARED/games/kif`) goes
//! through the front end.

use std::path::PathBuf;

use crate::common;

use ggp::syntax::{parse_kif, Syntax};

fn corpus() -> Vec<PathBuf> {
    let dir = common::shared().join("games/kif");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the corpus {}: {e}", dir.display()))
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
    let mut longest = (0, String::new());
    for path in corpus() {
        let src = std::fs::read_to_string(&path).unwrap();
        match parse_kif(&src) {
            Ok(p) => {
                assert_eq!(p.syntax, Syntax::Kif);
                assert!(!p.statements.is_empty(), "{}", path.display());
                for st in &p.statements {
                    longest = longest.max((st.longest_body(), path.display().to_string()));
                }
            }
            Err(e) => failures.push(format!("{}: {:?}", path.display(), e)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The limit on a rule's conditions leaves the real games far from it.
    eprintln!(
        "the corpus's longest rule: {} conditions, in {}",
        longest.0, longest.1
    );
    assert!(
        longest.0 * 4 <= ggp::syntax::ast::MAX_RULE_CONDITIONS,
        "a corpus rule of {} conditions ({}) is near the limit",
        longest.0,
        longest.1
    );
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
                .find(|d| d.message.contains("where it is first used"));
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

/// The program with each statement's variables renamed `V0`, `V1`, ... in order of first occurrence:
/// infix spells KIF's `?x` as `X`, so the infix round trip is compared up to this renaming.
fn canonical(p: &ggp::syntax::ast::Program) -> ggp::syntax::ast::Program {
    use ggp::syntax::ast::{Literal, Statement, Sym, Term};
    use std::collections::HashMap;
    fn term(t: &mut Term, map: &mut HashMap<Sym, Sym>, names: &mut Vec<Sym>) {
        match t {
            Term::Var(v, _) => {
                let n = map.len();
                *v = *map.entry(*v).or_insert_with(|| names[n]);
            }
            Term::Const(..) => {}
            Term::Func(_, args, _) => args.iter_mut().for_each(|a| term(a, map, names)),
        }
    }
    fn lit(l: &mut Literal, map: &mut HashMap<Sym, Sym>, names: &mut Vec<Sym>) {
        match l {
            Literal::Atom(a) => a.args.iter_mut().for_each(|t| term(t, map, names)),
            Literal::Not(x, _) => lit(x, map, names),
            Literal::Or(ls, _) | Literal::And(ls, _) => {
                ls.iter_mut().for_each(|x| lit(x, map, names))
            }
        }
    }
    let mut q = p.clone();
    let mut names: Vec<Sym> = (0..1024)
        .map(|i| q.symbols.intern(&format!("V{i}")))
        .collect();
    for st in &mut q.statements {
        let mut map = HashMap::new();
        match st {
            Statement::Rule { head, body, .. } => {
                head.args
                    .iter_mut()
                    .for_each(|t| term(t, &mut map, &mut names));
                body.iter_mut().for_each(|l| lit(l, &mut map, &mut names));
            }
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                action
                    .args
                    .iter_mut()
                    .for_each(|t| term(t, &mut map, &mut names));
                conditions
                    .iter_mut()
                    .for_each(|l| lit(l, &mut map, &mut names));
                for e in effects {
                    e.atom
                        .args
                        .iter_mut()
                        .for_each(|t| term(t, &mut map, &mut names));
                }
            }
        }
    }
    q
}

#[test]
fn corpus_round_trips_through_both_printers() {
    let mut failures = Vec::new();
    for path in corpus() {
        let src = std::fs::read_to_string(&path).unwrap();
        let p = parse_kif(&src).unwrap();
        let kif = ggp::print::to_kif(&p);
        match parse_kif(&kif) {
            Ok(q) if q == p => {}
            Ok(_) => failures.push(format!("{}: KIF round trip differs", path.display())),
            Err(e) => failures.push(format!(
                "{}: printed KIF does not parse: {e:?}",
                path.display()
            )),
        }
        let infix = ggp::print::to_infix(&p);
        match ggp::syntax::parse_infix(&infix) {
            Ok(q) if canonical(&q) == canonical(&p) => {}
            Ok(_) => failures.push(format!("{}: infix round trip differs", path.display())),
            Err(e) => failures.push(format!(
                "{}: printed infix does not parse: {:?}",
                path.display(),
                e.iter()
                    .map(|d| ggp::diagnostics::render(d, "out.gdl", &infix))
                    .collect::<Vec<_>>()
            )),
        }
        // Formatting is stable: printing the re-read program gives the same text.
        assert_eq!(
            ggp::print::to_kif(&parse_kif(&kif).unwrap()),
            kif,
            "{}",
            path.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
