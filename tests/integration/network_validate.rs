//! `NetGame::from_grounded` validates a network before wrapping it: the evaluation loops index gates,
//! inputs and node values without bounds checks (`unsafe`), and rest on exactly what `validate` proves.
//! Each test here breaks one invariant of a valid corpus network and shows the network is refused with
//! the invariant named, and the networks of a sample of corpus games pass.
//!
//! The invariants (see `validate` in `src/network/mod.rs`):
//! - node counts: the gates are the last nodes (`first_gate + gates.len() == num_nodes`), and the state
//!   part is a prefix of them (`state_gates <= gates.len()`);
//! - input range: each gate's inputs are `inputs[start..end]` with `start <= end <= inputs.len()`;
//! - order: a gate reads only nodes before its own (not itself, not a later gate);
//! - outputs: every legal, goal, `next` and terminal literal names a node of the network, and every
//!   legal output's `does` input is an input node (below the first gate) or `u32::MAX`;
//! - what building the game indexes: the propositions are nodes before the first gate, the initial
//!   propositions are propositions, there is one `next` per proposition, one set of legal and goal
//!   outputs per role, and every legal output's move is a move.

use ggp::game::Game;
use ggp::network::{ground, Grounded, NetGame, NetworkError};
use ggp::syntax::parse_kif;

use crate::common;
use common::shared;

fn grounded(name: &str) -> Grounded {
    let path = shared().join("games/kif").join(format!("{name}.kif"));
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let p = parse_kif(&src).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    ground(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Tic-tac-toe's network: small, with gates in both parts, goals, legal moves with `does` inputs.
fn valid() -> Grounded {
    let n = grounded("ticTacToe");
    assert!(n.gates.len() > 10 && n.state_gates > 0 && n.state_gates < n.gates.len());
    assert!(n.legal.iter().flatten().any(|o| o.does != u32::MAX));
    n
}

/// Asserts that `net` is refused as malformed, for `what`.
#[track_caller]
fn refused(net: Grounded, what: &str) {
    match NetGame::from_grounded(net, "broken") {
        Err(NetworkError::Unsupported(msg)) => assert!(
            msg.contains("malformed network") && msg.contains(what),
            "refused, but not for {what:?}: {msg}"
        ),
        Err(e) => panic!("refused for another reason than {what:?}: {e}"),
        Ok(_) => panic!("a network breaking {what:?} was accepted"),
    }
}

#[test]
fn the_unbroken_network_is_accepted() {
    let g = NetGame::from_grounded(valid(), "ticTacToe").expect("valid");
    assert_eq!(g.info().roles.len(), 2);
}

#[test]
fn node_counts_must_add_up() {
    let mut n = valid();
    n.num_nodes += 1;
    refused(n, "node counts");
    let mut n = valid();
    n.num_nodes -= 1;
    refused(n, "node counts");
    let mut n = valid();
    n.first_gate -= 1;
    refused(n, "node counts");
    let mut n = valid();
    n.state_gates = n.gates.len() + 1;
    refused(n, "node counts");
    // The boundary: every gate in the state part is allowed.
    let mut n = valid();
    n.state_gates = n.gates.len();
    NetGame::from_grounded(n, "all state").expect("state_gates == gates.len() is valid");
}

#[test]
fn input_ranges_must_lie_within_the_inputs() {
    let mut n = valid();
    let last = n.gates.len() - 1;
    n.gates[last].end = n.inputs.len() as u32 + 1;
    refused(n, "input range");
    let mut n = valid();
    let g = n.gates.iter().position(|g| g.end > g.start).unwrap();
    n.gates[g].start = n.gates[g].end + 1;
    refused(n, "input range");
    let mut n = valid();
    n.gates[0].start = u32::MAX;
    n.gates[0].end = u32::MAX;
    refused(n, "input range");
}

#[test]
fn a_gate_reads_only_earlier_nodes() {
    // Itself.
    let mut n = valid();
    let g = n.gates.iter().position(|g| g.end > g.start).unwrap();
    let own = ((n.first_gate + g) as u32) << 1;
    let at = n.gates[g].start as usize;
    n.inputs[at] = own;
    refused(n, "a gate reads a later node");
    // A later gate, negated.
    let mut n = valid();
    n.inputs[at] = (((n.first_gate + g + 1) as u32) << 1) | 1;
    refused(n, "a gate reads a later node");
    // A node beyond the network.
    let mut n = valid();
    n.inputs[at] = u32::MAX;
    refused(n, "a gate reads a later node");
    // The boundary: the node just before the gate is allowed.
    let mut n = valid();
    let g = n
        .gates
        .iter()
        .skip(1)
        .position(|g| g.end > g.start)
        .unwrap()
        + 1;
    let at = n.gates[g].start as usize;
    n.inputs[at] = ((n.first_gate + g - 1) as u32) << 1;
    NetGame::from_grounded(n, "previous node").expect("reading the previous node is valid");
}

#[test]
fn outputs_name_nodes_of_the_network() {
    let outside = |n: &Grounded| (n.num_nodes as u32) << 1;
    let mut n = valid();
    n.terminal = outside(&n);
    refused(n, "an output outside the network");
    let mut n = valid();
    n.next[0] = outside(&n) | 1;
    refused(n, "an output outside the network");
    let mut n = valid();
    n.goals[1][0].1 = outside(&n);
    refused(n, "an output outside the network");
    let mut n = valid();
    n.legal[0][0].lit = outside(&n);
    refused(n, "an output outside the network");
    // A `does` input must be an input node, not a gate.
    let mut n = valid();
    let o = n.legal[1].iter().position(|o| o.does != u32::MAX).unwrap();
    n.legal[1][o].does = n.first_gate as u32;
    refused(n, "an output outside the network");
    // The boundary: the last node is a valid output.
    let mut n = valid();
    n.terminal = ((n.num_nodes - 1) as u32) << 1;
    NetGame::from_grounded(n, "last node").expect("the last node is a valid output");
}

#[test]
fn corpus_networks_pass() {
    // Small and quick to ground, and between them: turns, simultaneous moves, one to four roles, the
    // decomposed strategy (checkersTiny), arithmetic tables.
    for name in [
        "ticTacToe",
        "connectFour",
        "roshambo2",
        "checkersTiny",
        "buttons",
        "3pffa",
        "smallest_4player",
        "nim1",
        "hanoi",
        "eightPuzzle",
    ] {
        let n = grounded(name);
        let gates = n.gates.len();
        let g = NetGame::from_grounded(n, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(g.num_gates(), gates, "{name}");
        let s = g.initial_state();
        let mut moves = Vec::new();
        for r in 0..g.info().roles.len() {
            g.legal_moves(&s, r, &mut moves);
            assert!(!moves.is_empty(), "{name}: role {r} has no legal move");
        }
    }
}

#[test]
fn what_the_game_indexes_is_in_range() {
    let mut n = valid();
    n.initial.push(n.props.len() as u32);
    refused(n, "an initial proposition outside the propositions");
    let mut n = valid();
    n.next.pop();
    refused(n, "not one next output per proposition");
    let mut n = valid();
    n.legal.pop();
    refused(n, "not one set of legal and goal outputs per role");
    let mut n = valid();
    n.goals.push(Vec::new());
    refused(n, "not one set of legal and goal outputs per role");
    let mut n = valid();
    let moves = n.moves.len() as u32;
    n.legal[0][0].mv = moves;
    refused(n, "a legal output for a move outside the moves");
    let mut n = valid();
    n.first_gate = n.props.len();
    n.num_nodes = n.first_gate + n.gates.len();
    refused(n, "node counts");
}
