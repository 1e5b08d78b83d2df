//! Unit tests of what a move's clock affords `mcts`: keeping what the last move's trees and puzzle
//! search found below the state reached, or starting again when that would take too long.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::tests::far;
use super::tree::slide_time;
use super::*;
use crate::game::{Dynamics, GameInfo, Goal};
use crate::games::connect4::{Connect4, Connect4Move, Connect4State};

/// Connect Four's tree after `simulations` simulations from the start, and a child of its root.
fn grown(g: &Connect4, simulations: u64) -> (Tree<Connect4State, Connect4Move>, Connect4State) {
    let mut p = MctsPlayer::baseline(7).with_simulation_limit(simulations);
    p.choose(&Ask::new(g, &g.initial_state(), 0, far()))
        .unwrap();
    let tree = p.trees.remove(0);
    let child = tree.children_of(0)[0];
    let state = tree.nodes[child as usize].state;
    (tree, state)
}

#[test]
fn a_tree_too_big_to_slide_in_the_time_afforded_starts_again_and_a_big_one_is_handed_back() {
    let g = Connect4::new(6, 7).unwrap();
    // Time enough: the child's subtree slides down.
    let (mut tree, child) = grown(&g, 5_000);
    let afford = slide_time(tree.nodes.len());
    assert!(tree.reroot(&g, &child, 1, afford).is_none());
    assert!(tree.nodes.len() > 1 && tree.nodes[0].state == child);
    // No time: the tree starts again at the child; a small old tree is freed at once.
    let (mut tree, child) = grown(&g, 5_000);
    assert!(tree.reroot(&g, &child, 1, afford / 2).is_none());
    assert!(tree.nodes.len() == 1 && tree.nodes[0].state == child);
    // A big one is the caller's, to free when no clock runs.
    let (mut tree, child) = grown(&g, 60_000);
    let nodes = tree.nodes.len();
    let old = tree
        .reroot(&g, &child, 1, Duration::ZERO)
        .expect("a big tree");
    assert_eq!(old.nodes.len(), nodes);
    assert!(tree.nodes.len() == 1 && tree.nodes[0].state == child);
}

/// A one-player puzzle of 2^20 states: each move flips one of 20 bits, and the goal is all bits set.
/// With `forced_first`, it starts with bit 21 set and one move, which clears it.
struct Bits(GameInfo, bool);

impl Bits {
    fn new() -> Bits {
        Bits::with_forced_first(false)
    }

    fn with_forced_first(forced_first: bool) -> Bits {
        Bits(
            GameInfo {
                name: "bits".into(),
                roles: vec!["p".into()],
                dynamics: Dynamics::TurnTaking,
                zero_sum: false,
            },
            forced_first,
        )
    }
}

impl Game for Bits {
    type State = u32;
    type Move = u32;
    fn info(&self) -> &GameInfo {
        &self.0
    }
    fn initial_state(&self) -> u32 {
        if self.1 {
            1 << 21
        } else {
            0
        }
    }
    fn is_terminal(&self, state: &u32) -> bool {
        *state == (1 << 20) - 1
    }
    fn legal_moves(&self, state: &u32, _: RoleIndex, out: &mut Vec<u32>) {
        out.clear();
        if state & (1 << 21) != 0 {
            out.push(21);
        } else {
            out.extend(0..20);
        }
    }
    fn next_state(&self, state: &u32, joint: &[u32]) -> u32 {
        state ^ (1 << joint[0])
    }
    fn goal(&self, state: &u32, _: RoleIndex) -> Goal {
        if self.is_terminal(state) {
            100
        } else {
            0
        }
    }
    fn mover(&self, _: &u32) -> Option<RoleIndex> {
        Some(0)
    }
    fn show_move(&self, mv: &u32) -> String {
        format!("flip({mv})")
    }
    fn show_state(&self, state: &u32) -> String {
        format!("{state:020b}")
    }
}

#[test]
fn a_puzzle_search_too_big_to_move_down_in_the_time_afforded_starts_again() {
    let g = Bits::new();
    let start = g.initial_state();
    let child = g.next_state(&start, &[3]);
    for (expanded, afford, kept) in [
        (20, Duration::MAX, true),
        (20, Duration::ZERO, false),
        (20_000, Duration::ZERO, false),
    ] {
        let mut puzzle = PuzzlePlay::default();
        assert!(puzzle.solver_at(&g, &start, Duration::MAX).is_none());
        let solver = puzzle.solver.as_mut().unwrap();
        solver.run(&g, far(), &AtomicBool::new(false), expanded);
        let found = solver.states();
        assert!(
            expanded < 20_000 || found >= 50_000,
            "{found} states: not big"
        );
        let old = puzzle.solver_at(&g, &child, afford);
        let solver = puzzle.solver.as_ref().unwrap();
        assert_eq!(solver.root(), &child);
        // Moved down, the search goes on with its count; started again, it has expanded nothing.
        assert_eq!(solver.expanded() > 0, kept, "{expanded} states expanded");
        // A big search replaced is handed back, to be freed when no clock runs.
        assert_eq!(
            old.map(|s| s.states()),
            (!kept && found >= 50_000).then_some(found)
        );
    }
}

#[test]
fn a_forced_move_in_a_puzzle_keeps_its_search_going() {
    let g = Bits::with_forced_first(true);
    let start = g.initial_state();
    let mut p = MctsPlayer::new(5);
    p.prepare(&g, 0, Deadline::after(Duration::from_millis(200)))
        .unwrap();
    let before = p
        .puzzle
        .solver
        .as_ref()
        .expect("the start clock's search")
        .expanded();
    assert!(before > 0);
    let choice = p
        .choose(&Ask::new(
            &g,
            &start,
            0,
            Deadline::after(Duration::from_millis(200)),
        ))
        .unwrap();
    assert_eq!(choice.mv, 21);
    // The forced move's time went to the search, which is still there for the next move.
    let solver = p
        .puzzle
        .solver
        .as_ref()
        .expect("the search survives the forced move");
    assert!(
        solver.expanded() > before,
        "{} <= {before}",
        solver.expanded()
    );
}
