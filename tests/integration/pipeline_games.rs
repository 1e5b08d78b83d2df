//! Small games that once broke a stage of the pipeline, each replayed against a trace made by hand from
//! its rules (in `../shared/conformance/FORMAT.md`'s format) on both engines, or on the Datalog evaluator
//! where the network refuses the game with its reason.

use ggp::engine::{conformance, RuleGame};
use ggp::game::Game;
use ggp::network::{self, NetGame};
use ggp::syntax::parse_kif;

/// Replays `trace` on the Datalog evaluator, and on the network unless `network` is false.
fn replay_both(name: &str, rules: &str, trace: &str, network: bool) {
    let program = parse_kif(rules).expect("parses");
    let rule = RuleGame::from_program(&program, name).expect("the Datalog evaluator loads it");
    let report = conformance::replay(&rule, trace);
    assert!(
        report.failed.is_empty() && report.passed == 1,
        "{name} on the Datalog evaluator: {report}"
    );
    if network {
        let net = NetGame::from_program(&program, name).expect("grounds");
        let report = network::replay(&net, trace);
        assert!(
            report.failed.is_empty() && report.passed == 1,
            "{name} on the network: {report}"
        );
    }
}

/// A user relation named like a generated one (`domain#q`: KIF allows `#` in names) is the author's:
/// the network once left it out of its rule's instances, as it does the domain copies it makes itself,
/// and played a → b → {b c} → {b c d}.
#[test]
fn a_user_relation_named_like_a_generated_one_plays_alike_on_both_engines() {
    let rules = "(role robot) (init (a)) (<= (domain#q) (true (a))) (<= (next (b)) (domain#q)) \
                 (<= (next (c)) (true (b))) (<= (legal robot go) (not (true (c)))) \
                 (<= (legal robot stop) (true (c))) (<= terminal (true (d))) \
                 (<= (next (d)) (true (c))) (goal robot 100)";
    let trace = "roles robot\nplayout 0\n\
                 state a\nlegal robot go\ndoes go\n\
                 state b\nlegal robot go\ndoes go\n\
                 state c\nlegal robot stop\ndoes stop\n\
                 state d\nterminal\ngoals 100\nend\n";
    replay_both("domain_q", rules, trace, true);
    // Every generated name a user might take, at once.
    let rules = "(role robot) (init (a)) (<= (domain#1) (true (a))) (<= (demand#q#b) (true (a))) \
                 (<= (elim#1) (true (b))) (<= (__not1) (true (c))) \
                 (<= (next (b)) (domain#1) (demand#q#b)) (<= (next (c)) (elim#1)) \
                 (<= (legal robot go) (not (__not1))) (<= (legal robot stop) (__not1)) \
                 (<= terminal (true (d))) (<= (next (d)) (true (c)) (not (and (true (a)) (true (b))))) \
                 (goal robot 100)";
    replay_both("generated_names", rules, trace, true);
}

/// A state of nested terms the load-time analysis cannot bound (it ignores `terminal`, so the relaxed
/// counter grows forever): ggp-base's prover plays ten `noop`s, then the game is over. The Datalog
/// evaluator must find the state propositions as play reaches them; the network may refuse, saying why.
#[test]
fn a_counter_of_nested_terms_plays_ten_steps() {
    let rules = "(role a) (init (n 0)) (<= (legal a noop) (true (n ?x))) \
                 (<= (next (n (s ?x))) (true (n ?x))) \
                 (<= terminal (true (n (s (s (s (s (s (s (s (s (s (s 0))))))))))))) (goal a 100)";
    let mut trace = String::from("roles a\nplayout 0\n");
    let mut count = String::from("0");
    for _ in 0..10 {
        trace.push_str(&format!("state (n {count})\nlegal a noop\ndoes noop\n"));
        count = format!("(s {count})");
    }
    trace.push_str(&format!("state (n {count})\nterminal\ngoals 100\nend\n"));
    replay_both("nested_counter", rules, &trace, false);
    let game = RuleGame::from_program(&parse_kif(rules).expect("parses"), "nested_counter")
        .expect("loads");
    assert!(
        game.finds_propositions_in_play(),
        "the analysis cannot bound it"
    );
}

/// The counter in the moves too: `(step (s (s 0)))` is found when a state makes it legal, and a move
/// that keeps the count (`stay`) leads back to a state already seen.
#[test]
fn moves_that_carry_a_counter_of_nested_terms_are_found_in_play() {
    let rules = "(role a) (init (n 0)) (<= (legal a (step ?x)) (true (n ?x))) \
                 (<= (legal a stay) (true (n ?x))) \
                 (<= (next (n (s ?x))) (does a (step ?x)) (true (n ?x))) \
                 (<= (next (n ?x)) (does a stay) (true (n ?x))) \
                 (<= terminal (true (n (s (s (s 0)))))) (goal a 100)";
    let mut trace = String::from("roles a\nplayout 0\n");
    let mut count = String::from("0");
    for stay in [true, false, false, true, false] {
        let step = format!("(step {count})");
        trace.push_str(&format!("state (n {count})\nlegal a {step} stay\n"));
        if stay {
            trace.push_str("does stay\n");
        } else {
            trace.push_str(&format!("does {step}\n"));
            count = format!("(s {count})");
        }
    }
    trace.push_str(&format!("state (n {count})\nterminal\ngoals 100\nend\n"));
    replay_both("nested_moves", rules, &trace, false);
}

/// Two roles taking turns over a nested counter: each role's moves and the control proposition are
/// found in play, the move that is legal for one role in one state for the other in the next.
#[test]
fn two_roles_take_turns_over_a_counter_of_nested_terms() {
    let rules = "(role a) (role b) (init (n 0)) (init (control a)) \
                 (<= (legal ?r (step ?x)) (true (control ?r)) (true (n ?x))) \
                 (<= (legal ?r noop) (role ?r) (not (true (control ?r)))) \
                 (<= (next (n (s ?x))) (true (n ?x))) \
                 (<= (next (control b)) (true (control a))) \
                 (<= (next (control a)) (true (control b))) \
                 (<= terminal (true (n (s (s (s (s 0))))))) \
                 (<= (goal a 100) (true (control a))) (<= (goal b 0) (true (control a))) \
                 (<= (goal a 0) (true (control b))) (<= (goal b 100) (true (control b)))";
    let mut trace = String::from("roles a b\nplayout 0\n");
    let mut count = String::from("0");
    for turn in 0..4 {
        let (mover, step) = (["a", "b"][turn % 2], format!("(step {count})"));
        trace.push_str(&format!("state (control {mover}) (n {count})\n"));
        if mover == "a" {
            trace.push_str(&format!("legal a {step}\nlegal b noop\ndoes {step} noop\n"));
        } else {
            trace.push_str(&format!("legal a noop\nlegal b {step}\ndoes noop {step}\n"));
        }
        count = format!("(s {count})");
    }
    trace.push_str(&format!(
        "state (control a) (n {count})\nterminal\ngoals 100 0\nend\n"
    ));
    replay_both("nested_turns", rules, &trace, false);
}

/// A counter of nested terms that nothing stops: play reaches the depth limit and the `try_` methods
/// say so, instead of running on; the `Game` methods then treat the state as terminal.
#[test]
fn a_nested_counter_with_no_end_stops_at_the_depth_limit() {
    let rules = "(role a) (init (n 0)) (<= (legal a noop) (true (n ?x))) \
                 (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (true (n stop))) (goal a 0)";
    let game =
        RuleGame::from_program(&parse_kif(rules).expect("parses"), "endless").expect("loads");
    let mut state = game.initial_state();
    let mut moves = Vec::new();
    for step in 0..1000 {
        let next = game
            .try_terminal(&state)
            .and_then(|_| game.try_legal(&state, 0, &mut moves))
            .and_then(|()| game.try_next(&state, &moves));
        match next {
            Ok(next) => state = next,
            Err(e) => {
                assert!(
                    matches!(e, ggp::engine::EngineError::Runaway(_)),
                    "{e} at step {step}"
                );
                // `(n 0)` is 1 deep; the next state of the 199th is 201 deep.
                assert_eq!(step, 199, "the default depth limit");
                assert!(game.is_terminal(&state));
                return;
            }
        }
    }
    panic!("no runaway in 1000 steps");
}
