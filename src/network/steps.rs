//! The step from one state to the next as gates for the compiler: the general one ([`Part::Next`]
//! after the move gates) and one specialised to each move of each role.
//!
//! A move gate reads `does` inputs; once it is known which move a role plays while the others play
//! their no-op (a turn), every `does` input is a constant, and so are most move gates: in reversi a
//! placement's flips are gates of their own for each move, and in tic-tac-toe each cell's frame rule
//! reads every mark. Folding the constants through the move gates (a gate with a false input is
//! false, a true input drops out, a gate left with one input is that input) leaves each move a step
//! of a few gates where the move pass evaluates them all; the one-at-a-time playout by full passes
//! runs the step of the joint move it drew when at most one role's move is not its no-op (see
//! [`TurnStep`]), and every other caller the general step.
//!
//! A move's step also knows which propositions it may write (those whose `next` did not fold to
//! themselves), so it goes on to evaluate only the gates of the playout's state part downstream of
//! them (the move's cone), in the state part's order: every other gate keeps its value from the
//! state before, which was evaluated. In Connect Four a disc changes one column's cells and the
//! control, and the cone is the lines through those cells and the legal moves. Within the cone, gates
//! downstream of few of the written propositions run only when one of those changed (see
//! [`guarded`]): a disc may write any of its column's cells, but changes one.

use super::ground::{FALSE, TRUE};
use hashbrown::HashMap;
use smallvec::SmallVec;

use super::native::{Op, PassGate};
use super::*;

/// No specialised step: the general one is played.
pub(super) const NO_STEP: u32 = u32::MAX;

/// The most inputs all specialised steps of a game compile to together, their cones included
/// (Cranelift takes about 2 µs an input, on the compiling thread), within the compiler's own limit;
/// moves past it play the general step, or leave the state part to the caller. Breakthrough's 310
/// steps and 276 of their cones fill it.
const STEP_INPUTS: usize = 300_000;

/// The most gate readings the folding may take over all moves (each move reads the move gates once):
/// a game with thousands of moves and a large move part plays the general step.
pub(super) const FOLD_WORK: usize = 20_000_000;

/// The most gate readings finding the cones may take over all moves (each move reads the state
/// part once): past it, every move's step leaves the whole state part to the caller.
const CONE_WORK: usize = 20_000_000;

/// The most propositions a guard in a cone tests: gates downstream of more of the propositions a
/// move writes run unguarded.
const GUARD_PROPS: usize = 4;

/// The fewest inputs the gates under one guard read: fewer cost less than the guard's test and
/// branch.
const GUARD_INPUTS: usize = 8;

/// A literal's node, read through `sub` (a replacement literal per node, or `NONE`).
pub(super) const NONE: NetLit = u32::MAX;

/// Whether a step writes proposition `p` whose `next` is the literal `next`: not when that is the
/// proposition itself. The step leaves such a proposition alone, and its cone starts from the others.
pub(super) fn writes(p: usize, next: NetLit) -> bool {
    next != ((1 + p) as NetLit) << 1
}

/// Where the step specialised to one move is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MoveStep {
    /// Its index among the steps (or the compiled parts); [`NO_STEP`]: none, the general step is
    /// played.
    pub(super) part: u32,
    /// Whether the step goes on to evaluate the playout's state part downstream of what the move
    /// can change (see the module's documentation); otherwise the caller runs the whole state part.
    pub(super) state: bool,
}

impl MoveStep {
    /// No specialised step.
    pub(super) const NONE: MoveStep = MoveStep {
        part: NO_STEP,
        state: false,
    };
}

/// Which specialised step a joint move plays, given each role's drawn output in role order: the
/// move of the one role not playing its no-op, or the first role's no-op when every role plays its
/// own; none when two or more roles move (the general step is played).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TurnStep {
    step: Option<(usize, usize)>,
    movers: u32,
}

impl TurnStep {
    /// Adds `role`'s drawn legal output `output`; `noop` is the index of its no-op among its legal
    /// outputs (`u32::MAX`: none).
    #[inline]
    pub(super) fn add(&mut self, role: usize, output: usize, noop: u32) {
        if output as u32 != noop {
            self.movers += 1;
            self.step = Some((role, output));
        } else if self.step.is_none() {
            self.step = Some((role, output));
        }
    }

    /// The role and output whose specialised step plays the joint move, if one does.
    #[inline]
    pub(super) fn step(&self) -> Option<(usize, usize)> {
        self.step.filter(|_| self.movers <= 1)
    }
}

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
            .filter(|&p| writes(p, next[p]))
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
    /// `does` input is a constant, then the step to the next state, then, where the budget allows,
    /// the move's cone of the state part) over `inputs` (appended to it), and per role and output
    /// where its step is among the returned ones (or [`MoveStep::NONE`]: another role has no no-op,
    /// or past the budgets: `budget` inputs in all, and this file's).
    pub(super) fn move_steps(
        &self,
        inputs: &mut Vec<NetLit>,
        budget: usize,
    ) -> (Vec<Vec<Op>>, Vec<Vec<MoveStep>>) {
        let budget = budget.min(STEP_INPUTS);
        let n = &self.net;
        let moves = &self.pass[self.pass_state..];
        let move_inputs: usize = moves.iter().map(|g| (g.end - g.start) as usize).sum();
        let outputs: usize = n.legal.iter().map(Vec::len).sum();
        let mut index: Vec<Vec<MoveStep>> = n
            .legal
            .iter()
            .map(|l| vec![MoveStep::NONE; l.len()])
            .collect();
        let mut steps = Vec::new();
        if outputs.saturating_mul(move_inputs.max(1)) > FOLD_WORK {
            return (steps, index);
        }
        let mut sub = vec![NONE; n.num_nodes];
        let mut kept = Vec::new();
        let first = inputs.len();
        // Per step: its role and output, the propositions it may write, and those it sets to a
        // constant or another proposition.
        let mut made: Vec<(usize, usize, Vec<u32>, Vec<u32>)> = Vec::new();
        'roles: for (r, role_index) in index.iter_mut().enumerate() {
            let others_pass = (0..n.legal.len()).all(|q| q == r || self.noop_out[q] != u32::MAX);
            if !others_pass {
                continue;
            }
            for (j, slot) in role_index.iter_mut().enumerate() {
                let mark = inputs.len();
                let (gates, written, fixed) = self.fold_step(r, j, &mut sub, &mut kept, inputs);
                if inputs.len() - first > budget {
                    inputs.truncate(mark);
                    break 'roles;
                }
                *slot = MoveStep {
                    part: steps.len() as u32,
                    state: false,
                };
                steps.push(super::native::ops(&gates));
                made.push((r, j, written, fixed));
            }
        }
        // The cones, while the budget lasts (each reuses the state part's inputs, but compiles them
        // again).
        let state = &self.pass[..self.pass_state];
        let state_inputs: usize = state.iter().map(|g| (g.end - g.start) as usize).sum();
        if made.len().saturating_mul(state_inputs) > CONE_WORK {
            return (steps, index);
        }
        let mut used = inputs.len() - first;
        let mut changed = vec![false; n.num_nodes];
        for (k, (r, j, written, fixed)) in made.iter().enumerate() {
            let cone = self.cone(written, &mut changed);
            let cone_inputs: usize = cone.iter().map(|g| (g.end - g.start) as usize).sum();
            // A cone as big as the state part saves nothing over running it.
            if cone_inputs < state_inputs && used + cone_inputs <= budget {
                let mark = inputs.len();
                let (cone, tracked) =
                    guarded(&cone, written, fixed, &n.inputs, n.num_nodes, inputs);
                used += cone_inputs + inputs.len() - mark;
                // The step's writes of the propositions the guards test record what they changed.
                for op in &mut steps[k] {
                    if let Op::Gate(g) = *op {
                        let p = (g.node as usize).wrapping_sub(1);
                        if p < n.props.len() && tracked.binary_search(&(p as u32)).is_ok() {
                            *op = Op::Tracked {
                                gate: g,
                                changed: (n.num_nodes + p) as u32,
                            };
                        }
                    }
                }
                steps[k].extend(cone);
                index[*r][*j].state = true;
            }
        }
        (steps, index)
    }

    /// The gates of the playout's state part downstream of the propositions `written`, in the state
    /// part's order (which evaluates a gate's inputs before it); `changed` is all false before and
    /// after.
    fn cone(&self, written: &[u32], changed: &mut [bool]) -> Vec<PassGate> {
        let n = &self.net;
        for &p in written {
            changed[1 + p as usize] = true;
        }
        let cone: Vec<PassGate> = self.pass[..self.pass_state]
            .iter()
            .filter(|g| {
                let hit = n.inputs[g.start as usize..g.end as usize]
                    .iter()
                    .any(|&l| changed[(l >> 1) as usize]);
                changed[g.node as usize] |= hit;
                hit
            })
            .copied()
            .collect();
        for &p in written {
            changed[1 + p as usize] = false;
        }
        for g in &cone {
            changed[g.node as usize] = false;
        }
        cone
    }

    /// The step after `role` plays its legal output `output` and every other role its no-op (see
    /// [`NetGame::move_steps`]), the propositions it may write, and those of them it sets to a
    /// constant or to another proposition; `sub` is all `NONE` before and
    /// after, `kept` scratch.
    fn fold_step(
        &self,
        role: usize,
        output: usize,
        sub: &mut [NetLit],
        kept: &mut Vec<NetLit>,
        inputs: &mut Vec<NetLit>,
    ) -> (Vec<PassGate>, Vec<u32>, Vec<u32>) {
        let (mut gates, next, set) = self.fold_moves(role, output, sub, kept, inputs);
        gates.extend(self.next_gates(&next, Some(&set), inputs));
        let written = (0..next.len())
            .filter(|&p| writes(p, next[p]))
            .map(|p| p as u32)
            .collect();
        let fixed = (0..next.len())
            .filter(|&p| writes(p, next[p]) && (next[p] >> 1) as usize <= next.len())
            .map(|p| p as u32)
            .collect();
        (gates, written, fixed)
    }

    /// The move gates left when `role` plays its legal output `output` and every other role its
    /// no-op (every `does` input a constant), each proposition's `next` through them, and the
    /// `does` inputs set; `sub` is all `NONE` before and after, `kept` scratch.
    pub(super) fn fold_moves(
        &self,
        role: usize,
        output: usize,
        sub: &mut [NetLit],
        kept: &mut Vec<NetLit>,
        inputs: &mut Vec<NetLit>,
    ) -> (Vec<PassGate>, Vec<NetLit>, Vec<u32>) {
        let n = &self.net;
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
            match fold_gate(sub, n, g, kept) {
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
        for t in touched {
            sub[t as usize] = NONE;
        }
        (gates, next, set)
    }
}

/// Literal `l` with the nodes `sub` folds replaced ([`NONE`]: kept).
#[inline]
pub(super) fn resolve(sub: &[NetLit], l: NetLit) -> NetLit {
    match sub[(l >> 1) as usize] {
        NONE => l,
        s => s ^ (l & 1),
    }
}

/// Gate `g` with its inputs replaced by what `sub` folds them to: its value as a literal when that
/// is a constant or one of its inputs, else `None` and the inputs it still reads in `kept`.
pub(super) fn fold_gate(
    sub: &[NetLit],
    n: &Grounded,
    g: &PassGate,
    kept: &mut Vec<NetLit>,
) -> Option<NetLit> {
    kept.clear();
    let negate = NetLit::from(g.negate != 0);
    for &l in &n.inputs[g.start as usize..g.end as usize] {
        match resolve(sub, l) {
            FALSE => return Some(FALSE ^ negate),
            TRUE => {}
            l => kept.push(l),
        }
    }
    match kept.as_slice() {
        [] => Some(TRUE ^ negate),
        [l] => Some(l ^ negate),
        _ => None,
    }
}

/// Which of the propositions a move may write a gate of its cone is downstream of: a few of them,
/// sorted, or more than [`GUARD_PROPS`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Sources {
    Few(SmallVec<[u32; GUARD_PROPS]>),
    Many,
}

impl Sources {
    /// Both sets together.
    fn union(&self, other: &Sources) -> Sources {
        let (Sources::Few(a), Sources::Few(b)) = (self, other) else {
            return Sources::Many;
        };
        let mut both: SmallVec<[u32; 8]> = a.iter().chain(b).copied().collect();
        both.sort_unstable();
        both.dedup();
        if both.len() > GUARD_PROPS {
            Sources::Many
        } else {
            Sources::Few(both.into_iter().collect())
        }
    }
}

/// A move's cone (in the state part's order) with guards: its gates grouped by which of the
/// propositions the move writes they are downstream of, each group that reads enough inputs run only
/// when one of those propositions changed (in Connect Four a drop may write any cell of its column
/// but changes one, and the lines through the others keep their values). A gate's group is a subset
/// of the groups it reads, so groups go smallest first, and gates downstream of many propositions
/// last, unguarded. `written` are the propositions the move may write, `fixed` those it sets to a
/// constant or another proposition. The guards test `vals[num_nodes + p]`, which the step's write
/// of `p` must set to the lanes it changed; returns the instructions, their guards' nodes appended
/// to `inputs`, and those propositions, sorted.
fn guarded(
    cone: &[PassGate],
    written: &[u32],
    fixed: &[u32],
    gate_inputs: &[NetLit],
    num_nodes: usize,
    inputs: &mut Vec<NetLit>,
) -> (Vec<Op>, Vec<u32>) {
    // A proposition set to a constant or to another proposition is taken to change (the piece
    // placed, the control of a turn-taking game): what reads it runs unguarded.
    let mut sources: HashMap<u32, Sources> = written
        .iter()
        .map(|&p| {
            let from = if fixed.contains(&p) {
                Sources::Many
            } else {
                Sources::Few(smallvec::smallvec![p])
            };
            (1 + p, from)
        })
        .collect();
    let mut keyed: Vec<(Sources, PassGate)> = Vec::with_capacity(cone.len());
    for g in cone {
        let mut from = Sources::Few(SmallVec::new());
        for &l in &gate_inputs[g.start as usize..g.end as usize] {
            let node = l >> 1;
            if let Some(s) = sources.get(&node) {
                from = from.union(s);
            }
        }
        sources.insert(g.node, from.clone());
        keyed.push((from, *g));
    }
    keyed.sort_by(|(a, _), (b, _)| match (a, b) {
        (Sources::Few(a), Sources::Few(b)) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    });
    let mut ops = Vec::with_capacity(keyed.len());
    let mut tracked = Vec::new();
    for run in keyed.chunk_by(|(a, _), (b, _)| a == b) {
        let reads: usize = run.iter().map(|(_, g)| (g.end - g.start) as usize).sum();
        if let (Sources::Few(props), true) = (&run[0].0, reads >= GUARD_INPUTS) {
            let start = inputs.len() as u32;
            inputs.extend(
                props
                    .iter()
                    .map(|&p| ((num_nodes + p as usize) as NetLit) << 1),
            );
            ops.push(Op::Guard {
                start,
                end: inputs.len() as u32,
                len: run.len() as u32,
            });
            tracked.extend_from_slice(props);
        }
        ops.extend(run.iter().map(|&(_, g)| Op::Gate(g)));
    }
    tracked.sort_unstable();
    tracked.dedup();
    (ops, tracked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_turn_folds_the_move_gates_to_the_few_its_move_changes() {
        let mut g = crate::network::tic_tac_toe();
        let mut inputs = g.net.inputs.clone();
        let general =
            g.next_gates(&g.net.next, None, &mut inputs).len() + g.pass.len() - g.pass_state;
        let (steps, index) = g.move_steps(&mut inputs, usize::MAX);
        // The roles take turns, each with a no-op: every move of either has its step, and its cone.
        assert!(
            index.iter().flatten().all(|k| k.part != NO_STEP && k.state),
            "{index:?}"
        );
        assert_eq!(steps.len(), index.iter().map(Vec::len).sum::<usize>());
        for step in &steps {
            // Each step holds its cone: a mark's legal moves, lines and terminal test, less than the
            // whole state part (the step of both roles' no-ops, which never happens, changes
            // nothing and is empty).
            let cone = step
                .iter()
                .filter_map(Op::gate)
                .filter(|s| g.pass[..g.pass_state].iter().any(|p| p.node == s.node))
                .count();
            assert!(cone < g.pass_state, "{cone} of {}", g.pass_state);
            assert!(cone > 0 || step.is_empty(), "{step:?}");
            assert!(
                (step.len() - cone) * 4 < general,
                "{} gates of {general}",
                step.len() - cone
            );
        }
        // Compiled, each step drawn leaves the general step's next state and state part.
        assert!(g.set_compiled(true));
        let mut rng = SmallRng::seed_from_u64(3);
        assert!(g.check_compiled(&mut rng, 2, 20).expect("as interpreted") > 0);
    }

    #[test]
    fn a_negated_gate_left_with_one_input_is_that_input_negated() {
        // The grounder stores no gate negated (an OR is an AND read negated); stored negated and
        // read negated, every move gate computes what it did, so the steps must not change.
        let mut g = crate::network::tic_tac_toe();
        let moves: Vec<bool> = (0..g.net.num_nodes)
            .map(|i| i >= g.net.first_gate + g.net.state_gates)
            .collect();
        let flip = |l: &mut NetLit| *l ^= NetLit::from(moves[(*l >> 1) as usize]);
        let mut folded_to_one = 0;
        let net = std::sync::Arc::make_mut(&mut g.net);
        for p in &mut g.pass[g.pass_state..] {
            p.negate = !p.negate;
            net.gates[p.node as usize - net.first_gate].negate = p.negate;
            let ins = &mut net.inputs[p.start as usize..p.end as usize];
            ins.iter_mut().for_each(flip);
            // An OR of a `does` input and another literal: the case folded to one input.
            folded_to_one += usize::from(ins.len() == 2);
        }
        net.next.iter_mut().for_each(flip);
        assert!(folded_to_one > 0);
        // Compiled again from the network as changed (the passes compiled at load are the old one's).
        assert!(!g.set_compiled(false));
        assert!(g.set_compiled(true));
        let mut rng = SmallRng::seed_from_u64(5);
        assert!(g.check_compiled(&mut rng, 2, 20).expect("as interpreted") > 0);
    }

    #[test]
    fn guards_group_a_cone_by_the_written_propositions_it_reads_smallest_group_first() {
        // Propositions 0 to 3 are nodes 1 to 4; node 5 is a state input. Gates 10 and 11 read one
        // proposition each, gate 12 both of theirs, gate 13 proposition 2 (set to a constant, so
        // taken to change), gate 14 one more input of proposition 1 (in gate 11's group), and gate
        // 15 one input of proposition 3 (a group too small to guard).
        let wide = |node: u32| [node << 1; GUARD_INPUTS].to_vec();
        let mut gate_inputs = Vec::new();
        let mut gate = |node: u32, reads: Vec<NetLit>| {
            let start = gate_inputs.len() as u32;
            gate_inputs.extend(reads);
            PassGate {
                node,
                start,
                end: gate_inputs.len() as u32,
                negate: 0,
            }
        };
        // In the state part's order, which is not the groups'.
        let cone = [
            gate(12, [wide(10), wide(11)].concat()),
            gate(13, wide(3)),
            gate(10, [wide(1), vec![5 << 1]].concat()),
            gate(11, wide(2)),
            gate(14, vec![2 << 1]),
            gate(15, vec![4 << 1]),
        ];
        let cone = [cone[2], cone[3], cone[4], cone[5], cone[0], cone[1]];
        let num_nodes = 20;
        let mut inputs = vec![0; 3];
        let (ops, tracked) = guarded(
            &cone,
            &[0, 1, 2, 3],
            &[2],
            &gate_inputs,
            num_nodes,
            &mut inputs,
        );
        let tests = |start: u32, end: u32| -> Vec<usize> {
            inputs[start as usize..end as usize]
                .iter()
                .map(|&l| (l >> 1) as usize - num_nodes)
                .collect()
        };
        let shape: Vec<String> = ops
            .iter()
            .map(|op| match *op {
                Op::Guard { start, end, len } => format!("guard {:?} {len}", tests(start, end)),
                Op::Gate(g) => format!("{}", g.node),
                Op::Tracked { .. } => "tracked".into(),
            })
            .collect();
        assert_eq!(
            shape,
            [
                "guard [0] 1",
                "10",
                "guard [1] 2",
                "11",
                "14",
                "15",
                "guard [0, 1] 1",
                "12",
                "13"
            ]
        );
        assert_eq!(tracked, [0, 1]);
    }

    #[test]
    fn connect_fours_cones_are_guarded_and_leave_what_the_general_step_does() {
        let program =
            crate::syntax::parse_infix(include_str!("../../games/connect4.gdl")).expect("parses");
        let mut g = NetGame::from_program(&program, "test").expect("grounds");
        let mut inputs = g.net.inputs.clone();
        let (steps, _) = g.move_steps(&mut inputs, usize::MAX);
        let guards = steps
            .iter()
            .flatten()
            .filter(|op| matches!(op, Op::Guard { .. }))
            .count();
        let tracked = steps
            .iter()
            .flatten()
            .filter(|op| matches!(op, Op::Tracked { .. }))
            .count();
        assert!(
            guards >= steps.len() / 2,
            "{guards} guards in {} steps",
            steps.len()
        );
        assert!(tracked > 0);
        assert!(g.set_compiled(true));
        let mut rng = SmallRng::seed_from_u64(11);
        assert!(g.check_compiled(&mut rng, 4, 50).expect("as interpreted") > 0);
    }

    #[test]
    fn a_turn_step_is_the_one_move_off_its_no_op() {
        let step = |drawn: &[(usize, u32)]| {
            let mut t = TurnStep::default();
            for (r, &(j, noop)) in drawn.iter().enumerate() {
                t.add(r, j, noop);
            }
            t.step()
        };
        assert_eq!(step(&[(0, 0), (3, 0)]), Some((1, 3)));
        assert_eq!(step(&[(2, 0), (0, 0)]), Some((0, 2)));
        assert_eq!(step(&[(0, 0), (0, 0)]), Some((0, 0)));
        assert_eq!(step(&[(1, 0), (1, 0)]), None);
        // A role without a no-op always moves.
        assert_eq!(step(&[(0, u32::MAX), (0, 0)]), Some((0, 0)));
        assert_eq!(step(&[(0, u32::MAX), (0, u32::MAX)]), None);
    }
}
