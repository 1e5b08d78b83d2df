//! Forward change propagation over the network, one game at a time (the Sancho / ggplib method).
//!
//! Every node holds one packed word: bit 31 is its value, bit 30 says the gate's output is negated, and
//! the low bits count the gate's inputs that are currently false (an AND holds when that count is 0).
//! When an input flips, only its fan-out is touched: each reader's count moves by one, and a reader whose
//! value flips passes the change on. Most of a state survives a move (a Connect Four move changes about
//! four propositions), so a step costs a few hundred word updates instead of a pass over every gate.
//!
//! Only the *cone* of the playout outputs (terminal, legal, next) is kept up to date: gates that only
//! feed goals are never touched during a playout (goals are read once, at the end, by the full pass).

use super::ground::{Grounded, NetLit};

/// The value bit of a node word.
const VAL: u32 = 1 << 31;
/// The negated-output bit of a gate word.
const NEG: u32 = 1 << 30;
/// The count of false inputs.
const CNT: u32 = NEG - 1;

/// The fan-out lists of the playout cone, in compressed sparse row form.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fanout {
    /// `start[n]..start[n + 1]` are node `n`'s readers in `edges`.
    start: Vec<u32>,
    /// `gate node << 1 | 1 if the gate reads the node negated`.
    edges: Vec<u32>,
    /// The cone's gates, by gate index (not node), in evaluation order.
    cone: Vec<u32>,
}

impl Fanout {
    /// The fan-out of the gates that `roots` (literals) depend on.
    pub(crate) fn new(n: &Grounded, roots: impl Iterator<Item = NetLit>) -> Fanout {
        let first = n.first_gate;
        let mut needed = vec![false; n.gates.len()];
        let mut todo: Vec<usize> = Vec::new();
        let mark = |l: NetLit, needed: &mut Vec<bool>, todo: &mut Vec<usize>| {
            let node = (l >> 1) as usize;
            if node >= first && !needed[node - first] {
                needed[node - first] = true;
                todo.push(node - first);
            }
        };
        for l in roots {
            mark(l, &mut needed, &mut todo);
        }
        while let Some(g) = todo.pop() {
            let gate = n.gates[g];
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                mark(l, &mut needed, &mut todo);
            }
        }
        let cone: Vec<u32> = (0..n.gates.len() as u32)
            .filter(|&g| needed[g as usize])
            .collect();
        let mut count = vec![0u32; n.num_nodes + 1];
        for &g in &cone {
            let gate = n.gates[g as usize];
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                count[(l >> 1) as usize] += 1;
            }
        }
        let mut start = Vec::with_capacity(n.num_nodes + 1);
        let mut acc = 0u32;
        for c in &count[..n.num_nodes] {
            start.push(acc);
            acc += c;
        }
        start.push(acc);
        let mut fill = start.clone();
        let mut edges = vec![0u32; acc as usize];
        for &g in &cone {
            let gate = n.gates[g as usize];
            let node = (first as u32 + g) << 1;
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                let src = (l >> 1) as usize;
                edges[fill[src] as usize] = node | (l & 1);
                fill[src] += 1;
            }
        }
        Fanout { start, edges, cone }
    }

    /// Sets every node word from the base propositions in `props` (`does` inputs false): one full pass
    /// over the cone.
    pub(crate) fn load(&self, n: &Grounded, w: &mut Vec<u32>, props: impl Fn(usize) -> bool) {
        w.clear();
        w.resize(n.num_nodes, 0);
        for p in 0..n.props.len() {
            if props(p) {
                w[1 + p] = VAL;
            }
        }
        for &g in &self.cone {
            let gate = n.gates[g as usize];
            let mut false_inputs = 0;
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                false_inputs += 1 ^ lit(w, l);
            }
            let neg = if gate.negate != 0 { NEG } else { 0 };
            let val = u32::from(false_inputs == 0) ^ u32::from(neg != 0);
            w[n.first_gate + g as usize] = val << 31 | neg | false_inputs;
        }
    }

    /// Flips input node `node` and propagates the change (depth first, so each node's changes reach its
    /// readers in the order they happen and every count stays within its gate's input count).
    #[inline]
    pub(crate) fn flip(&self, w: &mut [u32], frames: &mut Vec<(u32, u32, u32)>, node: u32) {
        let Some(x) = w.get_mut(node as usize) else {
            return;
        };
        *x ^= VAL;
        let v = *x >> 31;
        let (s, e) = self.range(node);
        frames.clear();
        frames.push((s, e, v));
        while let Some(top) = frames.last_mut() {
            if top.0 == top.1 {
                frames.pop();
                continue;
            }
            let edge = self.edges.get(top.0 as usize).copied().unwrap_or(0);
            top.0 += 1;
            let v = top.2;
            let g = (edge >> 1) as usize;
            let Some(x) = w.get_mut(g) else { continue };
            // The literal became true: one false input fewer.
            let mut y = if v ^ (edge & 1) == 1 {
                x.wrapping_sub(1)
            } else {
                x.wrapping_add(1)
            };
            let nv = u32::from(y & CNT == 0) ^ (y >> 30 & 1);
            let changed = nv != y >> 31;
            if changed {
                y ^= VAL;
            }
            *x = y;
            if changed {
                let (s, e) = self.range(g as u32);
                if s < e {
                    frames.push((s, e, nv));
                }
            }
        }
    }

    #[inline(always)]
    fn range(&self, node: u32) -> (u32, u32) {
        let i = node as usize;
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&s), Some(&e)) => (s, e),
            _ => (0, 0),
        }
    }
}

/// The value of a literal in packed node words.
#[inline(always)]
pub(crate) fn lit(w: &[u32], l: NetLit) -> u32 {
    (w.get((l >> 1) as usize).copied().unwrap_or(0) >> 31) ^ (l & 1)
}
