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

#[cfg(test)]
mod tests {
    use crate::game::Game;
    use crate::players::mcts::MctsPlayer;
    use crate::players::{Ask, Player};

    /// Five roles of 100 moves each move at once: 10^10 joint moves, past what a child's 32-bit key
    /// holds. Every child linked under a key must be the state its key's joint move leads to (the key
    /// once wrapped round, so most children sat under another joint move's key).
    #[test]
    fn a_joint_move_numbered_past_a_childs_key_links_no_child() {
        let values: String = (0..100).map(|i| format!("(v {i}) ")).collect();
        let roles: String = (1..=5).map(|i| format!("(role r{i}) ")).collect();
        let program = crate::syntax::parse_kif(&format!(
            "{roles} {values} (init (step 0))
             (<= (legal ?r (m ?x)) (role ?r) (v ?x))
             (<= (next (p ?r ?x)) (does ?r (m ?x)))
             (<= (next (step 1)) (true (step 0)))
             (<= terminal (true (step 1)))
             (<= (goal ?r 50) (role ?r))"
        ))
        .unwrap();
        let g = crate::network::NetGame::from_program(&program, "crowd").unwrap();
        let start = g.initial_state();
        let mut p = MctsPlayer::baseline(1).with_simulation_limit(3_000);
        p.choose(&Ask::new(&g, &start, 0, super::super::tests::far()))
            .unwrap();
        let tree = &p.trees[0];
        let root = &tree.nodes[0];
        let crate::players::mcts::tree::Children::Sparse(i) = root.children else {
            panic!("10^10 joint moves are not direct children");
        };
        let linked = &tree.sparse[i as usize];
        assert!(!linked.is_empty(), "no child of the root is linked");
        for &(key, child) in linked {
            // The key's mixed-radix digits, the first role's lowest.
            let mut rest = u64::from(key);
            let joint: Vec<_> = (0..5)
                .map(|r| {
                    let n = u64::from(tree.count(root, r));
                    let at = tree.stat_index(root, r, (rest % n) as u32);
                    rest /= n;
                    tree.moves[at]
                })
                .collect();
            assert_eq!(
                g.state_key(&tree.nodes[child as usize].state),
                g.state_key(&g.next_state(&start, &joint)),
                "the child under key {key}"
            );
        }
    }
}
