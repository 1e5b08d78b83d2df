//! Arithmetic built-ins of the infix syntax on both engines (the Datalog evaluator and the network).

use std::path::Path;

use ggp::engine::RuleGame;
use ggp::game::{perft, Game};
use ggp::network::NetGame;

/// `~plus(X, N, 3)`: negated arithmetic is a filter on bound values, true when the operands are no
/// integers or their result is another. It once became a relation of its own over `X`, which no
/// rule could list, and the game failed to load as unsafe.
#[test]
fn negated_arithmetic_filters_on_both_engines() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arithmetic/negated_sum.gdl");
    let (program, _) = ggp::syntax::parse_file(&path).expect("parses");
    let net = NetGame::from_program(&program, "negated_sum").expect("grounds");
    let rule = RuleGame::from_program(&program, "negated_sum").expect("loads");
    // add(1) or add(2); then only add(1) from 1 and only add(2) from 2; then add(2) from 2, and 4
    // has ended (an ended sequence counts once).
    assert_eq!(counts(&net), [2, 2, 2], "network");
    assert_eq!(counts(&rule), [2, 2, 2], "datalog");
    // Only the first goal rule holds: a second value would be an invalid game.
    assert_eq!(
        net.goal_values(&after_two_twos(&net), 0),
        vec![100],
        "network"
    );
    assert_eq!(
        rule.goal_values(&after_two_twos(&rule), 0).expect("goals"),
        vec![100],
        "datalog"
    );
}

/// `~less(X, Y)` holds unless both are integers with X < Y: true of a symbol. It was once lowered
/// to `leq(Y, X)`, which is false of a symbol, and the game had no goal value.
#[test]
fn negated_orderings_hold_of_terms_that_are_no_integers_on_both_engines() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arithmetic/negated_order.gdl");
    let (program, _) = ggp::syntax::parse_file(&path).expect("parses");
    let net = NetGame::from_program(&program, "negated_order").expect("grounds");
    let rule = RuleGame::from_program(&program, "negated_order").expect("loads");
    assert_eq!(net.goal_values(&stopped(&net), 0), vec![100], "network");
    assert_eq!(
        rule.goal_values(&stopped(&rule), 0).expect("goals"),
        vec![100],
        "datalog"
    );
}

/// The state after the one move, `stop`: the end.
fn stopped<G: Game>(g: &G) -> G::State {
    let state = g.initial_state();
    let mut buf = Vec::new();
    g.legal_moves(&state, 0, &mut buf);
    assert_eq!(buf.len(), 1, "one legal move");
    let next = g.play(&state, 0, &buf[0]);
    assert!(g.is_terminal(&next));
    next
}

fn counts<G: Game>(g: &G) -> [u64; 3] {
    [1, 2, 3].map(|d| perft(g, &g.initial_state(), d))
}

/// The state after add(2) twice, at 4: the end.
fn after_two_twos<G: Game>(g: &G) -> G::State {
    let mut state = g.initial_state();
    let mut buf = Vec::new();
    for _ in 0..2 {
        g.legal_moves(&state, 0, &mut buf);
        let two = buf
            .iter()
            .find(|m| g.show_move(m) == "add(2)")
            .expect("add(2) is legal");
        state = g.play(&state, 0, two);
    }
    assert!(g.is_terminal(&state));
    state
}

/// `minus(N, 1, D)` with `D` unused: from 0 it is -1, which no rule names, and the move it guards is
/// legal all the same on both engines (the relaxed fixpoint once clamped it away, and the game had no
/// legal move).
#[test]
fn an_unused_arithmetic_result_past_the_named_integers_keeps_its_move_on_both_engines() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/arithmetic/unused_intermediate.gdl");
    let (program, _) = ggp::syntax::parse_file(&path).expect("parses");
    let net = NetGame::from_program(&program, "unused_intermediate").expect("grounds");
    let rule = RuleGame::from_program(&program, "unused_intermediate").expect("loads");
    assert_eq!(ticked_twice(&net), vec![100], "network");
    assert_eq!(ticked_twice(&rule), vec![100], "datalog");
}

/// The goals after the one legal move, `tick`, twice: the end.
fn ticked_twice<G: Game>(g: &G) -> Vec<ggp::game::Goal> {
    let mut state = g.initial_state();
    let mut buf = Vec::new();
    for _ in 0..2 {
        assert!(!g.is_terminal(&state));
        g.legal_moves(&state, 0, &mut buf);
        assert_eq!(
            buf.iter().map(|m| g.show_move(m)).collect::<Vec<_>>(),
            ["tick"]
        );
        state = g.play(&state, 0, &buf[0]);
    }
    assert!(g.is_terminal(&state));
    vec![g.goal(&state, 0)]
}
