//! Many leaves at once (`+leaves`): a batch of walks down the tree, each to a new leaf, then one
//! random playout from every leaf in one call ([`Game::playout_goals_each`]: on the network, 64
//! playouts from 64 different states, one per bit of a word), then every walk backed up.
//!
//! A walk still waiting for its playout holds a *virtual loss*: every move it selected, and every
//! node it passed, counts one more visit with no reward, so the walks after it in the batch turn to
//! other moves where the difference was small (the device of parallel tree searches). The loss is
//! taken back before the walk's real reward is backed up.
//!
//! Only plain random playouts are batched: no playout policy, no captures, no evaluator, no batch
//! of playouts per leaf, no detours (the player switches this on only then, see
//! [`Tree::batches_leaves`]).

use std::time::Instant;

use super::tree::{goal_reward_of, Batch, Descent, Tree, Waiting, NONE};
use crate::game::Game;

/// Leaves a batch gathers at most: one per bit of the network's words.
pub(super) const LEAVES: usize = 64;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// Whether this tree can run its simulations in batches of leaves: with plain random playouts
    /// (not guided, capturing, greedy, decisive or cut short) judged one per leaf, and walks that
    /// take no detours.
    pub(super) fn batches_leaves(&self) -> bool {
        self.policy.is_none()
            && self.captures.is_none()
            && self.leaf_playouts == 1
            && !self.playouts.greedy
            && !self.playouts.decisive
            && self.playouts.max_steps == crate::players::mcs::MAX_PLAYOUT_STEPS
            && !self.detour
            && !self.endings
    }

    /// Up to [`LEAVES`] simulations from the root, their playouts in one batch (see the module
    /// documentation). Walks that end in a solved node, or beyond a `full` tree, are finished at
    /// once; the batch stops gathering at `deadline`, and playouts the deadline cuts count nothing.
    pub(super) fn simulate_leaves<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        exploration: f64,
        full: bool,
        deadline: Instant,
    ) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.waiting.clear();
        batch.paths.clear();
        batch.picks.clear();
        for _ in 0..LEAVES {
            match self.descend(game, exploration, full) {
                Descent::Solved => self.finish(game, true, false),
                Descent::Added(child) if self.load_exact(child) => self.finish(game, false, true),
                Descent::Added(child) => {
                    let path = (batch.paths.len() as u32, self.path.len() as u32);
                    let picks = (batch.picks.len() as u32, self.picks.len() as u32);
                    batch.paths.extend_from_slice(&self.path);
                    batch.picks.extend_from_slice(&self.picks);
                    self.virtual_loss(1);
                    batch.waiting.push(Waiting {
                        path,
                        picks,
                        leaf: child,
                    });
                }
                Descent::Beyond(next) => {
                    if !self.play_out(game, &next, deadline) {
                        break;
                    }
                    self.finish(game, false, false);
                }
            }
            if self.nodes[0].exact != NONE || Instant::now() >= deadline {
                break;
            }
        }
        let roles = self.roles;
        let count = batch.waiting.len();
        batch.goals.clear();
        batch.goals.resize(count * roles, 0);
        let ended = {
            let Tree {
                nodes, rng, buf, ..
            } = &mut *self;
            let Batch { waiting, goals, .. } = &mut batch;
            let (nodes, waiting) = (&*nodes, &*waiting);
            let state_of = move |k: usize| &nodes[waiting[k].leaf as usize].state;
            game.playout_goals_each(count, &state_of, rng, buf, goals, deadline)
                .is_some()
        };
        for (k, w) in batch.waiting.iter().enumerate() {
            self.path.clear();
            self.picks.clear();
            self.detours.clear();
            let (at, len) = (w.path.0 as usize, w.path.1 as usize);
            self.path.extend_from_slice(&batch.paths[at..at + len]);
            let (at, len) = (w.picks.0 as usize, w.picks.1 as usize);
            self.picks.extend_from_slice(&batch.picks[at..at + len]);
            self.virtual_loss(-1);
            if !ended {
                // Cut by the deadline: the walk learnt nothing (its leaf stays, unvisited).
                continue;
            }
            for r in 0..roles {
                self.rewards[r] = goal_reward_of(batch.goals[k * roles + r]);
            }
            self.finish(game, false, false);
        }
        self.batch = batch;
    }

    /// Adds (`sign` 1) or takes back (`sign` -1) a visit without reward on every node of `path`
    /// and every move of `picks`.
    fn virtual_loss(&mut self, sign: i32) {
        let roles = self.roles;
        let mut picks = self.picks.len();
        for k in (0..self.path.len()).rev() {
            let (node, joint) = self.path[k];
            let n = &mut self.nodes[node as usize];
            n.visits = n.visits.wrapping_add_signed(sign);
            if joint == NONE {
                continue;
            }
            picks -= roles;
            for r in 0..roles {
                let at = self.stat_index(&self.nodes[node as usize], r, self.picks[picks + r]);
                let st = &mut self.stats[at];
                st.visits = st.visits.wrapping_add_signed(sign);
            }
        }
    }
}
