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
//! joint move with it wins) is the common case; a guaranteed draw met by the other role's
//! guaranteed draw is another.

use super::tree::{Node, Tree, SIMULTANEOUS};

/// How far two guarantees may be from adding up to 1 (rewards are goals / 100).
const SUM_TOLERANCE: f64 = 1e-9;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// What role `role`'s move `i` at the simultaneous node `n` of a two-role game guarantees it:
    /// the least of its values over the joint moves that include it, and the child where that
    /// least is reached, when every one of them leads to an exact child.
    pub(super) fn guarantee(&self, n: &Node<S>, role: usize, i: u32) -> Option<(f64, u32)> {
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
            let value = self.exact_of(self.nodes.get(child as usize)?)?[role];
            if least.is_none_or(|(v, _)| value < v) {
                least = Some((value, child));
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
