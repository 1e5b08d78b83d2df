//! Random playouts 64 at once on the network, one per bit of every node's word: from one state
//! (`bench --lanes 64`, `Game::playout_goals`: `mcts` with `+batch`) or from a state per lane
//! (`Game::playout_goals_each`: `mcs`, `mcts`'s batched simulations, the playout judgement). Each
//! step is one full pass for all the lanes, so a batch costs about what one playout by passes does.

use std::cell::RefCell;

use rand::rngs::SmallRng;

use crate::game::random_index;

use super::*;

/// A batch's node values and lists, kept on each thread from one batch to the next: a network of
/// half a million nodes (chess) would otherwise have 4 MB mapped afresh, and faulted in page by
/// page, for every batch of a search's leaves.
struct BatchScratch {
    vals: Vec<u64>,
    /// Each proposition's next value, read before any is written.
    next: Vec<u64>,
    /// A role's legal outputs as words over the lanes.
    words: Vec<u64>,
    /// The `does` inputs set this step.
    touched: Vec<u32>,
}

thread_local! {
    static BATCH: RefCell<BatchScratch> = const { RefCell::new(BatchScratch {
        vals: Vec::new(),
        next: Vec::new(),
        words: Vec::new(),
        touched: Vec::new(),
    }) };
}

impl BatchScratch {
    /// The scratch for a batch on `net`: every node value zero.
    fn reset(&mut self, net: &Grounded) {
        self.vals.clear();
        self.vals.resize(net.num_nodes, 0);
        self.next.resize(net.props.len(), 0);
        self.touched.clear();
    }
}

impl NetGame {
    /// Plays up to 64 random playouts at once from the initial state, one per bit of every node; returns
    /// the number of playouts and the total number of joint moves played. Allocates only its scratch.
    pub fn batch_playouts(&self, rng: &mut SmallRng, lanes: u32, max_steps: u32) -> (u32, u64) {
        let (lanes, steps) =
            self.batch_playouts_from(&self.initial, rng, lanes, max_steps, &mut []);
        (lanes, steps)
    }

    /// Plays up to 64 random playouts at once from `state`, one per bit of every node, and adds each
    /// role's goal at the lanes' ends, summed over the lanes, to `goal_totals` (as many roles as it has
    /// room for); returns the number of playouts and the total number of joint moves played.
    pub fn batch_playouts_from(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        lanes: u32,
        max_steps: u32,
        goal_totals: &mut [i64],
    ) -> (u32, u64) {
        self.batch_playouts_until(state, rng, lanes, max_steps, goal_totals, None)
            .unwrap_or((lanes.clamp(1, 64), 0))
    }

    /// [`NetGame::batch_playouts_from`], stopped when `deadline` passes (the clock is read once a
    /// step): then `None`, and nothing is added to `goal_totals`.
    pub(crate) fn batch_playouts_until(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        lanes: u32,
        max_steps: u32,
        goal_totals: &mut [i64],
        deadline: Option<Instant>,
    ) -> Option<(u32, u64)> {
        let n = &self.net;
        let lanes = lanes.clamp(1, 64);
        let all = if lanes == 64 { !0 } else { (1u64 << lanes) - 1 };
        BATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            s.reset(n);
            for p in state.ones() {
                s.vals[1 + p] = !0;
            }
            let steps = self.play_lanes(s, rng, all, max_steps, deadline)?;
            if !goal_totals.is_empty() {
                let vals = &mut s.vals;
                self.run_pass(Part::AllState, vals);
                for (total, goals) in goal_totals.iter_mut().zip(&n.goals) {
                    for &(value, lit) in goals {
                        *total +=
                            i64::from(value) * i64::from((lit_val(vals, lit) & all).count_ones());
                    }
                }
            }
            Some((lanes, steps))
        })
    }

    /// Plays one random playout from each of `count` states (at most 64; `state_of(k)` is the
    /// `k`-th), one per bit of every node, and writes every role's goal at the end of playout `k`
    /// to `goals[k * roles + r]`; returns the total number of joint moves played, or `None` when
    /// `deadline` passed first (the clock is read once a step).
    pub fn batch_playouts_each<'s>(
        &self,
        count: usize,
        state_of: &dyn Fn(usize) -> &'s BitState,
        rng: &mut SmallRng,
        max_steps: u32,
        goals: &mut [i64],
        deadline: Instant,
    ) -> Option<u64> {
        let n = &self.net;
        let count = count.min(64);
        if count == 0 {
            return Some(0);
        }
        let all = if count == 64 { !0 } else { (1u64 << count) - 1 };
        BATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            s.reset(n);
            for k in 0..count {
                for p in state_of(k).ones() {
                    s.vals[1 + p] |= 1 << k;
                }
            }
            let steps = self.play_lanes(s, rng, all, max_steps, Some(deadline))?;
            let vals = &mut s.vals;
            self.run_pass(Part::AllState, vals);
            let roles = n.goals.len();
            for k in 0..count {
                for (r, role_goals) in n.goals.iter().enumerate() {
                    // The highest goal that holds, as `goal` reads a state.
                    let value = role_goals
                        .iter()
                        .rev()
                        .find(|(_, lit)| lit_val(vals, *lit) >> k & 1 != 0)
                        .map_or(0, |g| g.0);
                    if let Some(slot) = goals.get_mut(k * roles + r) {
                        *slot = i64::from(value);
                    }
                }
            }
            Some(steps)
        })
    }

    /// Plays random joint moves in the lanes `all` of the scratch's values (each lane a state, its
    /// state part not yet evaluated) until every lane is terminal or stuck, or `max_steps` joint
    /// moves; returns the joint moves played over all lanes, or `None` when `deadline` passed first.
    fn play_lanes(
        &self,
        s: &mut BatchScratch,
        rng: &mut SmallRng,
        all: u64,
        max_steps: u32,
        deadline: Option<Instant>,
    ) -> Option<u64> {
        let n = &self.net;
        let BatchScratch {
            vals,
            next,
            words,
            touched,
        } = s;
        let mut alive = all;
        let mut steps = 0u64;
        for _ in 0..max_steps {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            self.run_pass(Part::State, vals);
            alive &= !lit_val(vals, n.terminal);
            if alive == 0 {
                break;
            }
            for legal in &n.legal {
                // The role's legal outputs as words over the lanes, each read once a step.
                words.clear();
                words.extend(legal.iter().map(|o| lit_val(vals, o.lit) & alive));
                let mut held = words.iter().enumerate().filter(|(_, w)| **w != 0);
                if let (Some((j, &w)), None) = (held.next(), held.next()) {
                    // One move is the only one legal wherever the role has one (a waiting role's
                    // no-op): every such lane plays it, and a lane without one stops.
                    alive &= w;
                    let d = legal[j].does;
                    if d != u32::MAX {
                        vals[d as usize] |= w;
                        touched.push(d);
                    }
                    continue;
                }
                let mut lanes_left = alive;
                while lanes_left != 0 {
                    let bit = lanes_left & lanes_left.wrapping_neg();
                    lanes_left &= lanes_left - 1;
                    // A few uniform draws over all the outputs, kept when legal, then the k-th
                    // legal one: uniform over the legal moves either way, and where most outputs
                    // are legal the draws nearly always hit.
                    let mut pick = None;
                    // A role the rules give no move at all has no output to draw.
                    for _ in 0..if words.is_empty() { 0 } else { DRAWS } {
                        let j = random_index(rng, words.len());
                        if words.get(j).is_some_and(|w| w & bit != 0) {
                            pick = Some(j);
                            break;
                        }
                    }
                    if pick.is_none() {
                        let count = words.iter().filter(|w| **w & bit != 0).count();
                        if count > 0 {
                            let k = random_index(rng, count);
                            pick = words
                                .iter()
                                .enumerate()
                                .filter(|(_, w)| **w & bit != 0)
                                .nth(k)
                                .map(|(j, _)| j);
                        }
                    }
                    match pick {
                        None => alive &= !bit,
                        Some(j) => {
                            let d = legal[j].does;
                            if d != u32::MAX {
                                vals[d as usize] |= bit;
                                touched.push(d);
                            }
                        }
                    }
                }
            }
            steps += u64::from(alive.count_ones());
            self.run_pass(Part::Moves, vals);
            for (p, l) in n.next.iter().enumerate() {
                next[p] = lit_val(vals, *l);
            }
            for (p, v) in next.iter().enumerate() {
                // Finished lanes keep their state.
                let old = vals[1 + p];
                vals[1 + p] = (v & alive) | (old & !alive);
            }
            for &d in touched.iter() {
                vals[d as usize] = 0;
            }
            touched.clear();
        }
        Some(steps)
    }
}

/// Uniform draws over a role's legal outputs a batch lane tries before counting its legal moves.
const DRAWS: u32 = 4;
