//! Proofs at simultaneous moves (`+saddle`): a node where two roles move at once is a matrix game,
//! and it is solved as soon as its solved children show a pure saddle point.
//!
//! MCTS-Solver's rule for simultaneous nodes (every joint move leads to the same exact outcome) waits
//! for all of a node's children, while a simultaneous game is usually decided by one role alone:
//! in connectFourSimultaneous a role with a line to complete wins whatever the other plays on its
//! own board, unless that one completes a line at the same step. Here, in a game of two roles whose
//! rewards always sum to 1, a move of a role whose every joint move has an exact child *guarantees*
//! the least of their values to that role; when the best guarantee of the first role and the best
//! guarantee of the second add up to 1, neither can do better against the other's guaranteeing
//! move, and the node's value is that of the child where the two meet. A guaranteed win (every
//! joint move with it wins) is the common case, and solves the node alone; a guaranteed draw met by
//! the other role's guaranteed draw is another. Every child such a proof reads must itself sum to 1
//! (the game's `zero_sum` pairs each role's goals with 100 less them, which an odd ending could
//! break): then neither guaranteeing move gains the other role anything by a change of move, and
//! the two make a pure equilibrium.

use super::tree::{Node, Tree, SIMULTANEOUS};

/// How far two guarantees may be from adding up to 1 (rewards are goals / 100).
const SUM_TOLERANCE: f64 = 1e-9;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// What role `role`'s move `i` at the simultaneous node `n` of a two-role game guarantees it:
    /// the least of its values over the joint moves that include it, and the child where that
    /// least is reached, when every one of them leads to an exact child.
    fn guarantee(&self, n: &Node<S>, role: usize, i: u32) -> Option<(f64, u32)> {
        let first = self.count(n, 0);
        let other = self.count(n, 1 - role);
        let mut least: Option<(f64, u32)> = None;
        for k in 0..other {
            // Joint moves number role 0's move first: joint = move0 + move1 · count0.
            let joint = if role == 0 {
                i + k * first
            } else {
                k + i * first
            };
            let child = self.child(n, joint);
            let values = self.exact_of(self.nodes.get(child as usize)?)?;
            // The game's analysis calls it constant-sum when each role's goals pair with 100 less
            // them; an ending where they do not is no part of a proof here.
            if (values[0] + values[1] - 1.0).abs() > SUM_TOLERANCE {
                return None;
            }
            if least.is_none_or(|(v, _)| values[role] < v) {
                least = Some((values[role], child));
            }
        }
        least
    }

    /// The best guarantee of role `role` at `n` ([`Tree::guarantee`]): its value, the move, and
    /// the child where the move's least value is reached.
    pub(super) fn best_guarantee(&self, n: &Node<S>, role: usize) -> Option<(f64, u32, u32)> {
        let mut best: Option<(f64, u32, u32)> = None;
        for i in 0..self.count(n, role) {
            if let Some((v, child)) = self.guarantee(n, role, i) {
                if best.is_none_or(|(b, _, _)| v > b) {
                    best = Some((v, i, child));
                }
            }
        }
        best
    }

    /// The child whose exact values are the simultaneous node `node`'s, where its solved children
    /// show a pure saddle point (see the module documentation); only for two roles whose rewards
    /// sum to 1.
    pub(super) fn saddle_point(&self, node: u32) -> Option<u32> {
        let n = &self.nodes[node as usize];
        if n.mover != SIMULTANEOUS || self.roles != 2 {
            return None;
        }
        let first = self.best_guarantee(n, 0);
        let second = self.best_guarantee(n, 1);
        for (v, _, child) in [first, second].into_iter().flatten() {
            if v >= 1.0 {
                return Some(child);
            }
        }
        let ((v0, i, _), (v1, j, _)) = (first?, second?);
        // Each guarantee bounds the value of the child where the two moves meet from its side:
        // when the bounds meet, that value is the game's.
        (v0 + v1 >= 1.0 - SUM_TOLERANCE).then(|| self.child(n, i + j * self.count(n, 0)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::DEFAULT_EXPLORATION;
    use super::*;
    use crate::network::NetGame;
    use std::time::{Duration, Instant};

    /// Matching pennies' root with its four children grown (joint move `a + 2 b`), each child then
    /// given the values of `matrix[a][b]` (rewards of roles `a` and `b`).
    fn pennies_with(
        matrix: [[[f64; 2]; 2]; 2],
    ) -> Tree<<NetGame as crate::game::Game>::State, <NetGame as crate::game::Game>::Move> {
        use crate::game::Game;
        let kif = include_str!("../../../tests/data/matching_pennies.kif");
        let program = crate::syntax::parse_kif(kif).unwrap();
        let game = NetGame::from_program(&program, "pennies").unwrap();
        let mut tree = Tree::new(2, 1);
        tree.add(&game, game.initial_state());
        let deadline = Instant::now() + Duration::from_secs(60);
        for _ in 0..1_000 {
            if tree.nodes.len() == 5 {
                break;
            }
            tree.simulate(&game, None, DEFAULT_EXPLORATION, false, deadline);
        }
        let root = tree.nodes[0].clone();
        assert_eq!(root.mover, SIMULTANEOUS);
        for (a, row) in matrix.iter().enumerate() {
            for (b, values) in row.iter().enumerate() {
                let child = tree.child(&root, (a + 2 * b) as u32);
                assert!(
                    child != super::super::tree::NONE,
                    "joint ({a}, {b}) not grown"
                );
                tree.set_exact(child, *values);
            }
        }
        tree
    }

    /// The values `saddle_point` gives matching pennies' root with these children.
    fn solved(matrix: [[[f64; 2]; 2]; 2]) -> Option<Vec<f64>> {
        let tree = pennies_with(matrix);
        let meet = tree.saddle_point(0)?;
        Some(tree.exact_of(&tree.nodes[meet as usize])?.to_vec())
    }

    #[test]
    fn a_pure_saddle_point_solves_a_simultaneous_node_and_a_mixed_game_does_not() {
        let (win, loss, draw) = ([1.0, 0.0], [0.0, 1.0], [0.5, 0.5]);
        for (matrix, expected, why) in [
            (
                [[win, loss], [loss, win]],
                None,
                "matching pennies: no pure saddle",
            ),
            (
                [[win, win], [loss, draw]],
                Some(win),
                "a's first move wins whatever b plays",
            ),
            (
                [[loss, draw], [loss, loss]],
                Some(loss),
                "b's first move wins whatever a plays",
            ),
            (
                [[draw, win], [loss, draw]],
                Some(draw),
                "a's first move guarantees a draw, b's first too",
            ),
            (
                [[draw, win], [loss, loss]],
                Some(draw),
                "a's first move guarantees a draw, and so does b's first against anything",
            ),
            (
                [[draw, win], [win, loss]],
                None,
                "a guarantees a draw, b nothing: the value (2/3 to a) needs mixed play",
            ),
            (
                [[win, [1.0, 1.0]], [loss, draw]],
                None,
                "an ending whose goals do not sum to 100 proves nothing",
            ),
        ] {
            assert_eq!(solved(matrix), expected.map(|v| v.to_vec()), "{why}");
        }
    }
}
