//! Programs the fuzz once failed on, replayed on every run: named tests where the failure needed a
//! test of its own, and [`fuzz_regressions`] for the rest.

use ggp::engine::{Limits, RuleGame};
use ggp::game::Game;
use ggp::network::{ground_with, NetworkError};
use ggp::syntax::{parse_infix, Syntax};

use super::{budget, drive_caught};

/// A game whose goal value is computed (`times`) past the integers the rules name: 400 in the second
/// state (`an_arithmetic_result_past_the_analysis_is_refused_not_a_panic`).
const ARITHMETIC_GOAL_PAST_THE_ANALYSIS: &str = "role(r)\n\
     init(count(1))\n\
     legal(r, go)\n\
     next(count(100)) :- true(count(1))\n\
     terminal :- true(count(100))\n\
     goal(r, G) :- true(count(N)) & times(N, 4, G)";

/// The same with goal values in 0..100, a valid game: 4, then 28. The network's analysis clamps
/// arithmetic to the integers the rules name (1 and 7), so the network has no goal in the second state;
/// the Datalog evaluator computes 28.
const ARITHMETIC_GOAL_PAST_THE_NAMED: &str = "role(r)\n\
     init(count(1))\n\
     legal(r, go)\n\
     next(count(7)) :- true(count(1))\n\
     terminal :- true(count(7))\n\
     goal(r, G) :- true(count(N)) & times(N, 4, G)";

/// The grounder's workers made an arithmetic result the analysis had clamped away in their own copies
/// of the term store; `goal`, completed late from such instances, then held a term the ground program's
/// store did not have: an index out of bounds when the compiler read the goal values. (Mutant 338 of
/// knightstour.gdl, the default seed; the engines' disagreement on such games is the next test.) The
/// value, 400, is past the goal scale too: the network now refuses the game, saying so.
#[test]
fn an_arithmetic_result_past_the_analysis_is_refused_not_a_panic() {
    let p = parse_infix(ARITHMETIC_GOAL_PAST_THE_ANALYSIS).unwrap();
    let grounded = std::panic::catch_unwind(|| ground_with(&p, budget()).map(|_| ()));
    assert!(
        matches!(&grounded, Ok(Err(NetworkError::Unsupported(m))) if m.contains("computes 400")),
        "{grounded:?}"
    );
}

/// The engines disagreed on a goal value computed past the integers the rules name (Datalog [28],
/// network []): the network's analysis clamps arithmetic to those integers, and now makes the goal
/// scale besides.
#[test]
fn an_arithmetic_goal_value_past_the_named_integers() {
    let r = drive_caught(ARITHMETIC_GOAL_PAST_THE_NAMED, Syntax::Infix, 1);
    assert!(r.as_ref().is_ok_and(|r| r.compared && r.steps > 0), "{r:?}");
}

/// A late relation (`terminal`, grounded from its instances) computed past both the integers the rules
/// name and the goal scale: the network cannot number the result (280) and refuses the game, saying
/// so, rather than find no instance and call the second state non-terminal; the Datalog evaluator plays
/// it.
const ARITHMETIC_TERMINAL_PAST_THE_SCALE: &str = "role(r)\n\
     init(count(1))\n\
     legal(r, go)\n\
     next(count(7)) :- true(count(1))\n\
     terminal :- true(count(N)) & times(N, 40, G) & less(200, G)\n\
     goal(r, 100)";

#[test]
fn an_arithmetic_result_past_the_goal_scale_in_a_late_relation_is_refused_by_the_network() {
    let p = parse_infix(ARITHMETIC_TERMINAL_PAST_THE_SCALE).unwrap();
    let refused = ground_with(&p, budget());
    assert!(
        matches!(&refused, Err(NetworkError::Unsupported(m)) if m.contains("computes 280")),
        "{:?}",
        refused.map(|_| ())
    );
    let g = RuleGame::with_limits(&p, "terminal", Limits::default()).unwrap();
    let s = g.initial_state();
    assert!(!g.is_terminal(&s));
    let mut moves = Vec::new();
    g.legal_moves(&s, 0, &mut moves);
    assert!(g.is_terminal(&g.next_state(&s, &moves[..1])));
}

/// Mutants the fuzz once failed on, replayed on every run.
#[test]
fn fuzz_regressions() {
    // (what broke, the program's syntax and text, whether it is a game both engines must play alike)
    let cases: &[(&str, Syntax, &str, bool)] = &[
        (
            // Lowering made a relation for `(not (not ...))` and looked its name up in the source's
            // symbol table, which does not have it: an index out of bounds.
            "a doubly negated condition",
            Syntax::Kif,
            "(role r) (init (s 0)) (<= (legal r go) (not (not (true (s 0)))))\n\
             (<= (legal r wait) (not (true (s 0)))) (<= (next (s 1)) (true (s 0)))\n\
             (<= (next (s 2)) (true (s 1))) (<= terminal (true (s 2))) (goal r 100)",
            true,
        ),
        (
            // ...and lowered `(not (not x))` to a relation `__not1(?x) :- ~x`, whose variable nothing
            // binds: the network refused the game as unsafe, the Datalog evaluator played it.
            "a doubly negated condition with a variable",
            Syntax::Kif,
            "(role r) (init (s 0)) (n 0) (n 1) (n 2) (succ 0 1) (succ 1 2)\n\
             (<= (legal r (go ?x)) (n ?x) (not (not (true (s ?x)))))\n\
             (<= (next (s ?y)) (does r (go ?x)) (succ ?x ?y))\n\
             (<= terminal (true (s 2))) (goal r 100)",
            true,
        ),
        (
            // Splitting a negation out of a recursive component (`rewrite::prepare`) numbered its
            // relations' components before making new ones, then read the component of a new one:
            // an index out of bounds. (Seed 12, mutant 5866 of ggpbase_test_clean_not_distinct; an
            // invalid game, which must still be refused without a panic.)
            "a split negation read by another split negation's source",
            Syntax::Kif,
            "(role player) (domain 1) (domain 2) (domain 3) (c 2)\n\
             (<= a (not (distinct p p)))\n\
             (<= (b ?x) (c ?y) (domain ?x) (not (distinct ?x ?y)))\n\
             (<= (d 3) (c ?y) (not (goal 3 ?y)))\n\
             (<= (d 3) (c ?y) (not (distinct ?y 3)))\n\
             (<= (e 3) (c ?y) (not (distinct 2 ?y)))\n\
             (<= (f 3) (c ?y) (not (distinct ?y 2)))\n\
             (<= z (not (distinct p ?q)))\n\
             (<= success a (not (b 1)) (b 2) (not (d 3)) (e 3) (f 3) (not z))\n\
             (<= (goal player 100) success)\n\
             (<= (distinct player 0) (not success))\n\
             (legal player proceed)\n\
             (<= (next done) (does player proceed))\n\
             (<= terminal (true done))",
            false,
        ),
        (
            // A role without a legal move (here `b` once `s 1` holds) was taken for a waiting role,
            // so the other was `mover`; playing its move alone found no move for `b` and gave back
            // the same state, and the guided playout through the move methods played that one move
            // to its step limit where the network's own loop stopped. (Seed 0x5eed0021, mutants 261
            // of ticTacToe, 312 of numbertictactoe, 2628 of knightThrough and others.)
            "a stuck state taken for one role's turn",
            Syntax::Kif,
            "(role a) (role b) (init (s 0))\n\
             (legal a go) (<= (legal b noop) (true (s 0)))\n\
             (<= (next (s 1)) (true (s 0))) (<= (next (s 2)) (true (s 1)))\n\
             (<= terminal (true (s 2))) (goal a 100) (goal b 0)",
            true,
        ),
    ];
    for (what, syntax, text, plays) in cases {
        match drive_caught(text, *syntax, 1) {
            Ok(r) => assert!(
                r.lowered && (!plays || (r.compared && r.steps > 0)),
                "{what}: does not get as far as it should ({r:?})\n{text}"
            ),
            Err(why) => panic!("{what}: {why}\n{text}"),
        }
    }
}
