//! Each role's legal moves as bitsets that change propagation keeps up to date.
//!
//! The entry point is [`LegalSets::new`], called once when a [`NetGame`](super::NetGame) is built; the
//! propagating playout ([`PlayoutMethod::Propagate`](super::PlayoutMethod)) then finds a role's moves
//! by counting bits instead of reading every legal output. The sets are laid out once: **bit `j` of a
//! role's words follows its `j`-th legal output less the output's guard** (the padding follows false;
//! a guarded gate of two inputs has its bit follow the other input, and is then kept up to date by
//! nobody, since nothing else reads it), and each group of moves
//! with the same guard has a mask over those words, so **a role's legal moves are the union of the
//! masks of the groups whose guard holds, intersected with the bits**. A guard is an input left out
//! of a legal gate's count of false inputs only when nothing else reads that gate, so leaving it out
//! changes no other value.

use hashbrown::HashMap;

use super::ground::{Grounded, NetLit, FALSE, TRUE};
use super::prop;

/// Each role's legal moves as a bitset that change propagation keeps up to date, so a step finds a
/// role's moves by counting bits instead of reading every legal output.
///
/// A role's legal gates usually share one input, its turn (`true(control white)`): that input flips
/// every step and would touch all of them. Such a *guard* is left out of the gate's count (when nothing
/// else reads the gate), and the role's moves are the union, over groups of moves with the same guard
/// whose guard holds, of the group's bits.
#[derive(Clone, Debug, Default)]
pub(super) struct LegalSets {
    /// Per role, its first word; role `r`'s bit `j` (its `j`-th legal output) is bit
    /// `64 * word[r] + j`. One more entry at the end.
    pub(super) word: Vec<u32>,
    /// Per bit, the literal it follows (legal outputs less their guards; padding follows false).
    pub(super) bit_lit: Vec<NetLit>,
    /// Per bit, the `does` node to set (or `u32::MAX`).
    pub(super) bit_does: Vec<u32>,
    /// Per gate (by gate index), the guard input its count leaves out, or [`prop::NO_GUARD`].
    pub(super) skip: Vec<NetLit>,
    /// Per role, `group[r]..group[r + 1]` index `guards` (one more entry at the end).
    pub(super) group: Vec<u32>,
    /// Per group, its guard literal (true for moves without a guard).
    pub(super) guards: Vec<NetLit>,
    /// Per group, its role's words of bits (`masks[k * words..]` for the `k`-th group).
    pub(super) masks: Vec<u64>,
    /// Per group, where its mask starts in `masks`.
    pub(super) mask_at: Vec<u32>,
    /// Per group, the words of its role's bits that its mask covers, from the first to the last
    /// with a bit set: a role whose turn it is not draws from its no-op's word alone.
    pub(super) span: Vec<(u32, u32)>,
}

impl LegalSets {
    /// The legal sets of `net`, each legal gate's guard chosen.
    pub(super) fn new(net: &Grounded) -> LegalSets {
        let first = net.first_gate;
        // How many times each node is read where change propagation keeps values.
        let mut uses = vec![0u32; net.num_nodes];
        for g in &net.gates {
            for &l in &net.inputs[g.start as usize..g.end as usize] {
                uses[(l >> 1) as usize] += 1;
            }
        }
        // Goals count too: a goal whose body is a legal move's reads that move's gate, and a guard
        // left out of the gate's count would make the goal hold on another role's turn.
        let outs = net.legal.iter().flatten().map(|o| o.lit);
        let goals = net.goals.iter().flatten().map(|&(_, l)| l);
        for l in outs
            .chain(goals)
            .chain(net.next.iter().copied())
            .chain([net.terminal])
        {
            uses[(l >> 1) as usize] += 1;
        }
        let mut sets = LegalSets {
            skip: vec![prop::NO_GUARD; net.gates.len()],
            ..LegalSets::default()
        };
        let mut w = 0u32;
        for outs in &net.legal {
            sets.word.push(w);
            let words = outs.len().div_ceil(64);
            // How many of this role's legal outputs are each node, plainly.
            let mut outputs: HashMap<usize, u32> = HashMap::new();
            for o in outs.iter().filter(|o| o.lit & 1 == 0) {
                *outputs.entry((o.lit >> 1) as usize).or_default() += 1;
            }
            // A guard candidate: a plain AND read only as this role's legal outputs (speedChess's
            // promotions to four pieces share one).
            let gate_of = |l: NetLit| {
                let node = (l >> 1) as usize;
                (l & 1 == 0 && node >= first && outputs.get(&node) == Some(&uses[node]))
                    .then(|| node - first)
                    .filter(|&g| {
                        net.gates[g].negate == 0 && net.gates[g].end - net.gates[g].start >= 2
                    })
            };
            let mut freq: HashMap<NetLit, u32> = HashMap::new();
            for o in outs {
                if let Some(g) = gate_of(o.lit) {
                    let gate = net.gates[g];
                    for &l in &net.inputs[gate.start as usize..gate.end as usize] {
                        *freq.entry(l).or_default() += 1;
                    }
                }
            }
            let mut guard_of = Vec::with_capacity(outs.len());
            for o in outs {
                let mut guard = TRUE;
                if let Some(g) = gate_of(o.lit) {
                    let gate = net.gates[g];
                    let best = net.inputs[gate.start as usize..gate.end as usize]
                        .iter()
                        .map(|&l| (freq[&l], std::cmp::Reverse(l)))
                        .max();
                    if let Some((f, std::cmp::Reverse(l))) = best {
                        if f >= 2 {
                            sets.skip[g] = l;
                            guard = l;
                        }
                    }
                }
                guard_of.push(guard);
            }
            let base = sets.bit_lit.len();
            sets.bit_lit.resize(base + words * 64, FALSE);
            sets.bit_does.resize(base + words * 64, u32::MAX);
            for (j, o) in outs.iter().enumerate() {
                sets.bit_lit[base + j] = match gate_of(o.lit) {
                    // A guarded gate of two inputs: its bit follows the other input itself, and the
                    // gate need not be kept up to date at all.
                    Some(g) if sets.skip[g] != prop::NO_GUARD => {
                        let gate = net.gates[g];
                        let inputs = &net.inputs[gate.start as usize..gate.end as usize];
                        match inputs {
                            &[a, b] => {
                                if a == sets.skip[g] {
                                    b
                                } else {
                                    a
                                }
                            }
                            _ => o.lit,
                        }
                    }
                    _ => o.lit,
                };
                sets.bit_does[base + j] = o.does;
            }
            sets.group.push(sets.guards.len() as u32);
            let mut distinct: Vec<NetLit> = guard_of.clone();
            distinct.sort_unstable();
            distinct.dedup();
            for guard in distinct {
                sets.guards.push(guard);
                sets.mask_at.push(sets.masks.len() as u32);
                let at = sets.masks.len();
                sets.masks.resize(at + words, 0);
                for (j, _) in guard_of.iter().enumerate().filter(|x| *x.1 == guard) {
                    sets.masks[at + j / 64] |= 1 << (j % 64);
                }
                let covered = |i: &usize| sets.masks[at + i] != 0;
                let first = (0..words).find(covered).unwrap_or(0);
                let last = (0..words).rev().find(covered).map_or(0, |i| i + 1);
                sets.span.push((first as u32, last as u32));
            }
            w += words as u32;
        }
        sets.word.push(w);
        sets.group.push(sets.guards.len() as u32);
        sets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::ground::testing::TURNS;

    #[test]
    fn a_goal_that_reads_a_legal_moves_gate_sees_its_guard() {
        use crate::game::Game;
        use crate::network::{NetGame, PlayoutMethod};
        // White's goal 100 has the body of its `(mark 1)`: one gate for both.
        let text = TURNS.replace(
            "(<= (goal ?r 50) (role ?r))",
            "(<= (goal white 100) (true (control white)) (not (true (marked 1))))
             (<= (goal white 0) (not (true (control white))))
             (<= (goal white 0) (true (marked 1)))
             (<= (goal black 50) (role black))",
        );
        let p = crate::syntax::parse_kif(&text).expect("parses");
        let mut g = NetGame::from_program(&p, "test").expect("grounds");
        g.set_playout_method(PlayoutMethod::Propagate);
        let start = g.initial_state();
        assert_eq!(g.goal(&start, 0), 100);
        // White marks 2: black's turn, cell 1 still empty, so white's goal is 0.
        let mut legal = Vec::new();
        g.legal_moves(&start, 0, &mut legal);
        let mark2 = legal.iter().find(|&&m| g.move_kif(m) == "(mark 2)");
        let after = g.play(&start, 0, mark2.expect("white may mark 2"));
        assert_eq!(g.goal(&after, 0), 0);
        assert_eq!(g.goal(&after, 1), 50);
    }

    #[test]
    fn the_turn_guards_the_moves_it_enables() {
        let p = crate::syntax::parse_kif(TURNS).expect("parses");
        let net = super::super::ground(&p).expect("grounds");
        let sets = LegalSets::new(&net);
        let prop_of = |text: &str| {
            let i = net.props.iter().position(|t| net.terms.kif(*t) == text);
            ((1 + i.expect("a proposition")) << 1) as NetLit
        };
        for (r, control) in [(0, "(control white)"), (1, "(control black)")] {
            let outs = &net.legal[r];
            // `(mark 1)`, `(mark 2)`, `noop`: one word, bit `j` following output `j`: a mark's
            // bit the cell's being unmarked, its gate's input besides the turn; `noop`'s its gate.
            assert_eq!(outs.len(), 3);
            let base = 64 * sets.word[r] as usize;
            for (j, o) in outs.iter().enumerate() {
                assert_eq!(sets.bit_does[base + j], o.does);
            }
            assert_eq!(sets.bit_lit[base], prop_of("(marked 1)") ^ 1);
            assert_eq!(sets.bit_lit[base + 1], prop_of("(marked 2)") ^ 1);
            assert_eq!(sets.bit_lit[base + 2], outs[2].lit);
            assert_eq!(sets.bit_lit[base + 3], FALSE);
            // Two groups: `noop` unguarded, both marks guarded by the role's turn, which their gates
            // leave out of their counts.
            let groups = sets.group[r] as usize..sets.group[r + 1] as usize;
            let by_guard: Vec<(NetLit, u64)> = groups
                .map(|k| (sets.guards[k], sets.masks[sets.mask_at[k] as usize]))
                .collect();
            assert_eq!(by_guard, [(TRUE, 0b100), (prop_of(control), 0b011)]);
            for o in &outs[..2] {
                let gate = (o.lit >> 1) as usize - net.first_gate;
                assert_eq!(sets.skip[gate], prop_of(control));
            }
        }
    }
}
