//! KIF → infix → KIF keeps every game of the corpus playing exactly as before: the game read back
//! replays its reference trace (`shared/conformance/`, FORMAT.md) wherever the original does. KIF's
//! ordinary relations named like infix built-ins (`plus`, `less`, `same`, ...) are what this guards:
//! the converter renames them on the way to infix and back on the way to KIF.
//!
//! Each game is loaded on the Datalog evaluator, as the engine chooses to run it; `GGP_CONFORMANCE_ONLY=a,b`
//! picks games.

use ggp::check::check;
use ggp::engine::{conformance, RuleGame};
use ggp::game::Game;
use ggp::print::{convert, to_infix, to_kif};
use ggp::syntax::ast::{Program, Syntax};
use ggp::syntax::{parse_infix, parse_kif};

use crate::common;
use common::shared;

/// Games whose trace records a reference problem rather than the game (FORMAT.md), and games whose
/// replay takes minutes on the Datalog evaluator, with the reason.
const SKIPPED: &[(&str, &str)] = &[(
    "ggpbase_test_case_3a",
    "the trace records the reference's reading of `(open2)` against `open2` (FORMAT.md)",
)];

/// The game through infix and back, or what went wrong on the way.
fn round_trip(kif: &Program) -> Result<Program, String> {
    let infix = convert(kif, Syntax::Infix).map_err(|e| format!("to infix: {e}"))?;
    let text = to_infix(&infix);
    let read =
        parse_infix(&text).map_err(|d| format!("the infix does not parse: {d:?}\n{text}"))?;
    // Infix asks more than KIF (every rule safe, ggpbase_test_case_3b, 3e, 3f): a KIF game `check`
    // accepts converts to infix that it accepts too.
    let infix_check = check(&read);
    if check(kif).is_ok() && !infix_check.is_ok() {
        return Err(format!(
            "the infix does not check: {:?}\n{text}",
            infix_check
                .errors
                .iter()
                .map(|d| &d.message)
                .collect::<Vec<_>>()
        ));
    }
    let back = convert(&read, Syntax::Kif).map_err(|e| format!("back to KIF: {e}"))?;
    let text = to_kif(&back);
    parse_kif(&text).map_err(|d| format!("the KIF does not parse: {d:?}"))
}

fn replay(program: &Program, name: &str, trace: &str) -> Result<conformance::ReplayReport, String> {
    let game = RuleGame::from_program(program, name).map_err(|e| e.to_string())?;
    Ok(conformance::replay(&game, trace))
}

#[test]
fn kif_to_infix_and_back_replays_every_trace() {
    let dir = shared().join("conformance");
    let names = common::trace_names();
    let only = common::chosen_traces(&names);
    let (mut passed, mut failures, mut games) = (0, Vec::new(), 0);
    for name in &names {
        if only.as_ref().is_some_and(|o| !o.contains(name)) {
            continue;
        }
        if let Some((_, why)) = SKIPPED.iter().find(|(n, _)| n == name) {
            println!("{name}: skipped: {why}");
            continue;
        }
        let kif = shared().join("games/kif").join(format!("{name}.kif"));
        let src = std::fs::read_to_string(&kif).expect("the game of each trace");
        let trace = std::fs::read_to_string(dir.join(format!("{name}.trace"))).unwrap();
        let original = parse_kif(&src).expect("corpus games parse");
        let back = match round_trip(&original) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        games += 1;
        match replay(&back, name, &trace) {
            Ok(r) if r.failed.is_empty() => {
                println!("{name}: {} passed", r.passed);
                passed += r.passed;
            }
            Ok(r) => {
                // A failure counts only where the original replays.
                let original = replay(&original, name, &trace);
                if original.is_ok_and(|o| o.failed.is_empty()) {
                    failures.push(format!("{name}: {r}"));
                } else {
                    println!("{name}: fails as the original does");
                }
            }
            Err(e) => failures.push(format!("{name}: does not load after the round trip: {e}")),
        }
    }
    println!(
        "{games} games, {passed} playouts passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The renaming itself, on a small game: `plus` and `plus_` are ordinary KIF relations.
#[test]
fn relations_named_like_builtins_are_renamed_and_back() {
    let kif = "(role r) (init (n 0)) (plus 0 1) (plus_ 1 2) (<= (legal r go) (plus ?x ?y) (plus_ ?y ?z))\n\
               (<= (next (n 1)) (true (n 0))) (<= terminal (true (n 1))) (goal r 100)\n";
    let p = parse_kif(kif).unwrap();
    let infix = to_infix(&convert(&p, Syntax::Infix).unwrap());
    assert!(
        infix.contains("plus_(0, 1)") && infix.contains("plus__(1, 2)"),
        "{infix}"
    );
    let back = to_kif(&convert(&parse_infix(&infix).unwrap(), Syntax::Kif).unwrap());
    assert!(
        back.contains("(plus 0 1)") && back.contains("(plus_ 1 2)"),
        "{back}"
    );
    // Infix reads built-ins in any case: KIF's `LESS` is an ordinary relation, renamed as `less` is.
    let kif = "(role r) (init (n 0)) (<= (legal r go) (LESS 1 2)) (<= (next (n 1)) (true (n 0)))\n\
               (<= terminal (true (n 1))) (goal r 100)\n";
    let infix = to_infix(&convert(&parse_kif(kif).unwrap(), Syntax::Infix).unwrap());
    assert!(infix.contains("\"LESS_\"(1, 2)"), "{infix}");
    let back = to_kif(&convert(&parse_infix(&infix).unwrap(), Syntax::Kif).unwrap());
    assert!(back.contains("(LESS 1 2)"), "{back}");
}

/// KIF's empty `(and)` (true) and `(or)` (false) have no infix spelling: they are written as the
/// comparisons they mean, and the infix game plays as the KIF one does.
#[test]
fn empty_conjunctions_and_disjunctions_keep_their_meaning_in_infix() {
    let kif = "(role a) (init s) (<= (legal a go) (true s)) (<= (next t) (does a go))\n\
               (<= p (and)) (<= q (or)) (<= (goal a 100) p (not q)) (<= (goal a 0) (not p))\n\
               (<= (goal a 0) q) (<= terminal (true t))\n";
    let infix = to_infix(&convert(&parse_kif(kif).unwrap(), Syntax::Infix).unwrap());
    assert!(
        infix.contains("p :- same(0, 0)") && infix.contains("q :- distinct(0, 0)"),
        "{infix}"
    );
    for program in [parse_kif(kif).unwrap(), parse_infix(&infix).unwrap()] {
        let game = RuleGame::from_program(&program, "empty").unwrap();
        let mut moves = Vec::new();
        game.legal_moves(&game.initial_state(), 0, &mut moves);
        let end = game.next_state(&game.initial_state(), &moves);
        assert_eq!(game.goal_values(&end, 0).unwrap(), vec![100], "{infix}");
    }
}

/// The bundled infix games (`games/*.gdl`) converted to KIF, as the referee sends them to remote
/// players: each is a valid game, and both it and the infix original replay, on both engines, the
/// random playouts that ggp-base's prover made of the converted KIF (`tests/data/converted/`, see its
/// README), so the conversion keeps the game and a reference prover reads it as we do.
#[test]
fn bundled_infix_games_convert_to_kif_that_the_reference_prover_plays_alike() {
    use ggp::load::{load, AnyGame, EngineChoice, GameSource, LoadOptions};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let games = common::file_stems(&root.join("games"), "gdl");
    assert!(games.len() >= 6, "{games:?}");
    let replay = |source: &GameSource, engine: EngineChoice, trace: &str| {
        let options = LoadOptions {
            engine,
            ..LoadOptions::default()
        };
        match load(source, &options).unwrap_or_else(|e| panic!("{source:?}: {e}")) {
            AnyGame::Network(l) => ggp::network::replay(l.game.as_ref(), trace),
            AnyGame::Datalog(l) => conformance::replay(l.game.as_ref(), trace),
            _ => panic!("a rule game"),
        }
    };
    for name in &games {
        let path = root.join("games").join(format!("{name}.gdl"));
        let trace_path = root.join(format!("tests/data/converted/{name}.trace"));
        let trace = std::fs::read_to_string(&trace_path).unwrap_or_else(|_| {
            panic!(
                "{} has no reference trace: make one as tests/data/converted/README.md says",
                path.display()
            )
        });
        let original = parse_infix(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let kif = to_kif(&convert(&original, Syntax::Kif).expect("converts"));
        let report = ggp::check::check(&parse_kif(&kif).expect("the KIF parses"));
        assert!(report.is_ok(), "{name}: {:?}\n{kif}", report.errors);
        let sources = [
            GameSource::RuleText {
                text: kif.clone(),
                name: name.clone(),
                syntax: Syntax::Kif,
            },
            GameSource::RuleFile(path.clone()),
        ];
        for source in &sources {
            for engine in [EngineChoice::Network, EngineChoice::Datalog] {
                let r = replay(source, engine, &trace);
                assert!(r.passed >= 6, "{name} {engine:?}: {} playouts", r.passed);
                assert!(r.failed.is_empty(), "{name} {engine:?} {source:?}: {r}");
            }
        }
    }
}

/// Arithmetic becomes tables over the numbers a game reaches, not over its goal values: Nim's pile of
/// 21 needs 0..21, not the 0..100 its goal of 100 spans; a goal computed by `times` gets the goal scale
/// for that table only.
#[test]
fn converted_arithmetic_tables_only_the_numbers_the_game_needs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| {
        parse_infix(&std::fs::read_to_string(root.join("games").join(name)).unwrap()).unwrap()
    };
    let (used, lo, hi, facts) = ggp::print::arithmetic_tables_of(&read("nim.gdl")).unwrap();
    assert_eq!(
        (used.join(" "), lo, hi, facts),
        ("leq minus".into(), 0, 21, 506)
    );
    let (used, lo, hi, facts) = ggp::print::arithmetic_tables_of(&read("knightstour.gdl")).unwrap();
    assert_eq!((used.len(), lo, hi), (4, 0, 100));
    assert!(facts < 2_000, "{facts} facts");
}

/// An operation game that writes `legal(R, A)` itself gets no `noop` for the roles not in control
/// when converted to KIF (only `legal(A)` implies one): it once did, and the KIF game had four first
/// moves where the original has one.
#[test]
fn operations_with_legal_of_two_arguments_convert_without_a_noop() {
    let infix = "role(x)\nrole(o)\ninit(c(0))\nlegal(x, go)\nlegal(o, stay)\n\
                 go :: c(0) ==> ~c(0) & c(1)\ngoal(x, 100) :- c(1)\ngoal(x, 0) :- c(0)\n\
                 goal(o, 0) :- c(1)\ngoal(o, 100) :- c(0)\nterminal :- c(1)\n";
    let original = parse_infix(infix).unwrap();
    let kif = to_kif(&convert(&original, Syntax::Kif).expect("converts"));
    assert!(!kif.contains("noop"), "{kif}");
    let converted = parse_kif(&kif).unwrap();
    let counts = |p: &Program| {
        let g = RuleGame::from_program(p, "one_step").unwrap();
        [1, 2].map(|d| ggp::game::perft(&g, &g.initial_state(), d))
    };
    assert_eq!(counts(&original), [1, 1]);
    assert_eq!(counts(&converted), [1, 1], "{kif}");
}
