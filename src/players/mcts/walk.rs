//! A walk down the tree of [`super::MctsPlayer`]: a move selected for every role at each node, to
//! where the walk is judged.

use super::tree::{Descent, Tree, NONE, UNKEYED};
use crate::game::Game;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// Walks from the root, selecting a move of every role at each node, to a node solved before
    /// the walk, a new node (added, the last of `path`), or a state beyond the tree (when it is
    /// `full`, or the walk came round a cycle of a graph).
    pub(super) fn descend<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        exploration: f64,
        full: bool,
    ) -> Descent<S> {
        self.path.clear();
        self.picks.clear();
        self.marks.clear();
        self.detours.clear();
        if let Some(p) = &mut self.policy {
            p.begin();
        }
        let roles = self.roles;
        let mut node = 0u32;
        loop {
            if self.load_exact(node) {
                self.path.push((node, NONE));
                return Descent::Solved;
            }
            // Numbered in 64 bits: a simultaneous game's joint moves can pass 2^32.
            let mut joint = 0u64;
            let mut radix = 1u64;
            self.refer(game, node);
            if let Some(p) = &self.policy {
                self.marks.push(p.played.len() as u32);
            }
            for r in 0..roles {
                let i = self.select(game, node, r, exploration);
                if self.detoured != NONE {
                    self.detours.push((self.path.len() as u32, self.detoured));
                    self.detoured = NONE;
                }
                self.picks.push(i);
                if self.policy.is_some() {
                    let n = &self.nodes[node as usize];
                    let at = self.stat_index(n, r, i);
                    let choice = self.count(n, r) > 1;
                    let number = game.move_number(&self.moves[at]);
                    if let Some(p) = &mut self.policy {
                        p.note(r, number, choice);
                    }
                }
                joint = joint.saturating_add(u64::from(i).saturating_mul(radix));
                radix = radix.saturating_mul(u64::from(self.count(&self.nodes[node as usize], r)));
            }
            // A child's key is 32 bits: a joint move numbered past them is not linked (two would
            // share a key), and the walk plays out from its state.
            let keyed = u32::try_from(joint).ok().filter(|&j| j < UNKEYED);
            self.path.push((node, keyed.unwrap_or(UNKEYED)));
            let child = keyed.map_or(NONE, |j| self.child(&self.nodes[node as usize], j));
            // In a graph a walk can come back to a node of its path: it plays out from there.
            let cycle = child != NONE && self.on_path(child);
            if child != NONE && !cycle {
                node = child;
                continue;
            }
            let picks = &self.picks[self.picks.len() - roles..];
            self.joint.clear();
            for (r, &i) in picks.iter().enumerate() {
                let at = self.stat_index(&self.nodes[node as usize], r, i);
                self.joint.push(self.moves[at].clone());
            }
            let next = game.next_state(&self.nodes[node as usize].state, &self.joint);
            let Some(joint) = keyed else {
                return Descent::Beyond(next);
            };
            let same = if cycle {
                NONE
            } else {
                self.transposition(game, &next)
            };
            // The state of a node on the path: linked, the walk would go round the cycle.
            let cycle = cycle || (same != NONE && self.on_path(same));
            if same != NONE && !cycle {
                self.set_child(node, joint, same);
                node = same;
                continue;
            }
            if full || cycle {
                return Descent::Beyond(next);
            }
            let child = self.add(game, next);
            self.set_child(node, joint, child);
            self.seed_prior(game, node, child);
            self.path.push((child, NONE));
            if self.lookahead {
                self.take_decisive_move(game, child);
            }
            return Descent::Added(child);
        }
    }
}
