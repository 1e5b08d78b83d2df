//! The step from one state to the next as gates for the compiler: the general one ([`Part::Next`]
//! after the move gates) and one specialised to each move of each role.
//!
//! A move gate reads `does` inputs; once it is known which move a role plays while the others play
//! their no-op (a turn), every `does` input is a constant, and so are most move gates: in reversi a
//! placement's flips are gates of their own for each move, and in tic-tac-toe each cell's frame rule
//! reads every mark. Folding the constants through the move gates (a gate with a false input is
//! false, a true input drops out, a gate left with one input is that input) leaves each move a step
//! of a few gates where the move pass evaluates them all; the one-at-a-time playout by full passes
//! runs the step of the joint move it drew when at most one role's move is not its no-op, and
//! every other caller the general step.

use super::ground::{FALSE, TRUE};
use super::native::PassGate;
use super::*;

/// No specialised step: the general one is played.
pub(super) const NO_STEP: u32 = u32::MAX;

/// The most inputs all specialised steps of a game compile to together (Cranelift takes about 2 µs
/// an input, on the compiling thread), within the compiler's own limit; moves past it play the
/// general step.
const STEP_INPUTS: usize = 150_000;

/// The most gate readings the folding may take over all moves (each move reads the move gates once):
/// a game with thousands of moves and a large move part plays the general step.
const FOLD_WORK: usize = 20_000_000;

/// A literal's node, read through `sub` (a replacement literal per node, or `NONE`).
const NONE: NetLit = u32::MAX;

impl NetGame {
    /// The step to the next state as gates over `inputs` (appended to it): each proposition takes
    /// its `next` (one of `next`, a literal per proposition), every `next` read before any
    /// proposition is written, and the inputs are cleared (`set`: the only ones that may be set;
    /// `None`: every one). A `next` that is the proposition itself is left alone; one that reads
    /// another proposition is put past the nodes first (`vals[num_nodes + p]`); every other one is
    /// stored at once (it reads a gate, an input or a constant, which no proposition's writing
    /// changes), then the second kind are copied in, and the inputs cleared (gates without inputs,
    /// negated). Most propositions' `next` is a gate, so most of the step is one load and one store
    /// each.
    pub(super) fn next_gates(
        &self,
        next: &[NetLit],
        set: Option<&[u32]>,
        inputs: &mut Vec<NetLit>,
    ) -> Vec<PassGate> {
        let n = &self.net;
        let np = n.props.len();
        let reads_prop = |l: NetLit| (1..=np).contains(&((l >> 1) as usize));
        let mut gates = Vec::new();
        let mut copy = |node: usize, lit: NetLit, gates: &mut Vec<PassGate>| {
            let start = inputs.len() as u32;
            inputs.push(lit);
            gates.push(PassGate {
                node: node as u32,
                start,
                end: start + 1,
                negate: 0,
            });
        };
        let (parked, direct): (Vec<usize>, Vec<usize>) = (0..np)
            .filter(|&p| next[p] != ((1 + p) as NetLit) << 1)
            .partition(|&p| reads_prop(next[p]));
        for &p in &parked {
            copy(n.num_nodes + p, next[p], &mut gates);
        }
        for &p in &direct {
            copy(1 + p, next[p], &mut gates);
        }
        for &p in &parked {
            copy(1 + p, ((n.num_nodes + p) as NetLit) << 1, &mut gates);
        }
        let end = inputs.len() as u32;
        let clear = |i: usize| PassGate {
            node: i as u32,
            start: end,
            end,
            negate: !0,
        };
        match set {
            Some(set) => gates.extend(set.iter().map(|&i| clear(i as usize))),
            None => gates.extend((1 + np..n.first_gate).map(clear)),
        }
        gates
    }

    /// The specialised steps: for each role and each of its legal outputs, the gates of the step
    /// after that move while every other role plays its no-op (the move gates left once every
    /// `does` input is a constant, then the step to the next state) over `inputs` (appended to
    /// it), and per role and output the index of its step among the returned ones (or [`NO_STEP`]:
    /// another role has no no-op, or past the budgets: `budget` inputs in all, and this file's).
    /// `noop[r]` is the index of role `r`'s no-op among its legal outputs (or `u32::MAX`).
    pub(super) fn move_steps(
        &self,
        inputs: &mut Vec<NetLit>,
        budget: usize,
    ) -> (Vec<Vec<PassGate>>, Vec<Vec<u32>>) {
        let budget = budget.min(STEP_INPUTS);
        let n = &self.net;
        let moves = &self.pass[self.pass_state..];
        let move_inputs: usize = moves.iter().map(|g| (g.end - g.start) as usize).sum();
        let outputs: usize = n.legal.iter().map(Vec::len).sum();
        let mut index: Vec<Vec<u32>> = n.legal.iter().map(|l| vec![NO_STEP; l.len()]).collect();
        let mut steps = Vec::new();
        if outputs.saturating_mul(move_inputs.max(1)) > FOLD_WORK {
            return (steps, index);
        }
        let mut sub = vec![NONE; n.num_nodes];
        let mut kept = Vec::new();
        let first = inputs.len();
        for (r, legal) in n.legal.iter().enumerate() {
            let others_pass = (0..n.legal.len()).all(|q| q == r || self.noop_out[q] != u32::MAX);
            if !others_pass {
                continue;
            }
            for j in 0..legal.len() {
                let mark = inputs.len();
                let gates = self.fold_step(r, j, &mut sub, &mut kept, inputs);
                if inputs.len() - first > budget {
                    inputs.truncate(mark);
                    return (steps, index);
                }
                index[r][j] = steps.len() as u32;
                steps.push(gates);
            }
        }
        (steps, index)
    }

    /// The step after `role` plays its legal output `output` and every other role its no-op (see
    /// [`NetGame::move_steps`]); `sub` is all `NONE` before and after, `kept` scratch.
    fn fold_step(
        &self,
        role: usize,
        output: usize,
        sub: &mut [NetLit],
        kept: &mut Vec<NetLit>,
        inputs: &mut Vec<NetLit>,
    ) -> Vec<PassGate> {
        let n = &self.net;
        let resolve = |sub: &[NetLit], l: NetLit| match sub[(l >> 1) as usize] {
            NONE => l,
            s => s ^ (l & 1),
        };
        let mut touched = Vec::new();
        let mut set = Vec::new();
        for (q, legal) in n.legal.iter().enumerate() {
            let played = if q == role {
                output
            } else {
                self.noop_out[q] as usize
            };
            for (j, o) in legal.iter().enumerate() {
                if o.does != u32::MAX {
                    sub[o.does as usize] = if j == played { TRUE } else { FALSE };
                    touched.push(o.does);
                    if j == played {
                        set.push(o.does);
                    }
                }
            }
        }
        let mut gates = Vec::new();
        for g in &self.pass[self.pass_state..] {
            kept.clear();
            let mut zero = false;
            for &l in &n.inputs[g.start as usize..g.end as usize] {
                match resolve(sub, l) {
                    FALSE => {
                        zero = true;
                        break;
                    }
                    TRUE => {}
                    l => kept.push(l),
                }
            }
            let negate = NetLit::from(g.negate != 0);
            // The gate's value as a literal when it is a constant or one of its inputs.
            let same = match (zero, kept.as_slice()) {
                (true, _) => Some(FALSE ^ negate),
                (false, []) => Some(TRUE ^ negate),
                (false, [l]) => Some(l ^ negate),
                _ => None,
            };
            match same {
                Some(l) => {
                    sub[g.node as usize] = l;
                    touched.push(g.node);
                }
                None => {
                    let start = inputs.len() as u32;
                    inputs.extend_from_slice(kept);
                    gates.push(PassGate {
                        node: g.node,
                        start,
                        end: inputs.len() as u32,
                        negate: g.negate,
                    });
                }
            }
        }
        let next: Vec<NetLit> = n.next.iter().map(|&l| resolve(sub, l)).collect();
        gates.extend(self.next_gates(&next, Some(&set), inputs));
        for t in touched {
            sub[t as usize] = NONE;
        }
        gates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_turn_folds_the_move_gates_to_the_few_its_move_changes() {
        let program =
            crate::syntax::parse_infix(include_str!("../../games/tictactoe.gdl")).expect("parses");
        let mut g = NetGame::from_program(&program, "test").expect("grounds");
        let mut inputs = g.net.inputs.clone();
        let general =
            g.next_gates(&g.net.next, None, &mut inputs).len() + g.pass.len() - g.pass_state;
        let (steps, index) = g.move_steps(&mut inputs, usize::MAX);
        // The roles take turns, each with a no-op: every move of either has its step.
        assert!(index.iter().flatten().all(|&k| k != NO_STEP), "{index:?}");
        assert_eq!(steps.len(), index.iter().map(Vec::len).sum::<usize>());
        for step in &steps {
            assert!(
                step.len() * 4 < general,
                "{} gates of {general}",
                step.len()
            );
        }
        // Compiled, each step drawn leaves the general step's next state.
        assert!(g.set_compiled(true));
        let mut rng = SmallRng::seed_from_u64(3);
        assert!(g.check_compiled(&mut rng, 2, 20).expect("as interpreted") > 0);
    }
}
