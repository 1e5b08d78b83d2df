//! How the material prior of `+pieces` enters a tree: the seed of each new node's move, from the
//! piece counts of [`super::pieces`].

use super::pieces::{heuristic, seed_value};
use super::tree::{Tree, SIMULTANEOUS};
use crate::game::Game;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// Seeds the statistics of the move of `node`'s mover that led to its new child `child` with
    /// the material prior's value, counted as its weight in visits (see [`super::pieces`]). Only in turns:
    /// the current walk's picks at `node` are the last ones.
    pub(super) fn seed_prior<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        node: u32,
        child: u32,
    ) {
        let Some(prior) = &self.prior else {
            return;
        };
        let n = &self.nodes[node as usize];
        let mover = n.mover as usize;
        if n.mover == SIMULTANEOUS || mover > 1 || self.count(n, mover) < 2 {
            return;
        }
        let counts = prior
            .material
            .counts(game.state_words(&self.nodes[child as usize].state));
        let h = heuristic(counts, prior.root, mover);
        let (mean, visits) = self.root_mean(mover);
        let value = seed_value(mean, visits, h);
        let weight = prior.weight;
        let i = self.picks[self.picks.len() - self.roles + mover];
        let at = self.stat_index(&self.nodes[node as usize], mover, i);
        let st = &mut self.stats[at];
        st.visits += weight;
        st.total += f64::from(weight) * value;
        st.squares += (f64::from(weight) * value * value) as f32;
    }

    /// `role`'s mean reward over its moves at the root, and the visits it is over.
    fn root_mean(&self, role: usize) -> (f64, u32) {
        let Some(root) = self.nodes.first() else {
            return (0.5, 0);
        };
        let (mut visits, mut total) = (0u32, 0.0);
        for i in 0..self.count(root, role) {
            let st = self.stats[self.stat_index(root, role, i)];
            visits += st.visits;
            total += st.total;
        }
        (total / f64::from(visits.max(1)), visits)
    }
}
