//! Proofs from short greedy playouts (`+endings`): Sancho's greedy rollouts mark a node
//! complete when its rollout ends within two moves, and so does the tree here, after checking.
//!
//! A greedy playout ([`crate::game::Game::greedy_playout`]) takes a move that wins at once, and
//! otherwise draws moves until one leaves the next role no such win. So one that ends at its first
//! move with a win for the new node's mover found a winning move there, and one that ends at its
//! second move with a win for the other role of a duel found that every move of the mover hands
//! that role a win (where the playout could try them all). Either is a proof of the node's value,
//! found by a playout the search ran anyway; the tree checks it through the rules (one search for a
//! winning move, or one per move of the mover) before it solves the node, so a playout that drew
//! its moves at random (more than 64 of them) proves nothing by mistake. The check runs only where
//! the playout's end suggests a proof, so it costs nothing elsewhere, unlike `+lookahead`'s check at
//! every new node.

use super::tree::{Tree, NONE, SIMULTANEOUS};
use crate::game::Game;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// After the greedy playout of `steps` moves from the new node `node` (its rewards in
    /// `self.rewards`): solves the node where the playout's end proves its value (see the module
    /// documentation), and loads the solved values into the rewards.
    pub(super) fn prove_ending<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        node: u32,
        steps: u32,
    ) {
        let n = &self.nodes[node as usize];
        if !self.endings || !self.playouts.greedy || n.exact != NONE || n.mover == SIMULTANEOUS {
            return;
        }
        let mover = n.mover as usize;
        let won = |r: usize| self.rewards[r] >= 1.0;
        match steps {
            1 if won(mover) => self.take_decisive_move(game, node),
            2 if self.roles == 2 && won(1 - mover) => self.prove_every_move_loses(game, node),
            _ => return,
        }
        self.load_exact(node);
    }

    /// Solves `node` as a loss for its mover when every move of the mover leads to a node whose
    /// mover (the other role) wins at once: each child is added (or found) and checked for that win.
    fn prove_every_move_loses<G: Game<State = S, Move = M>>(&mut self, game: &G, node: u32) {
        let other = 1 - self.nodes[node as usize].mover as usize;
        for joint in 0..self.nodes[node as usize].joints {
            let child = self.turn_child(game, node, joint);
            self.take_decisive_move(game, child);
            let c = &self.nodes[child as usize];
            if !self.exact_of(c).is_some_and(|v| v[other] >= 1.0) {
                return;
            }
        }
        self.try_solve(node);
    }
}
