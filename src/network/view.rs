//! The `Game` queries (terminal, legal moves, mover, next state, goals) answered from the change
//! propagation's words, for games whose playouts propagate.
//!
//! A search asks about a state, plays a move from it, asks about the state that follows and plays out
//! from there. A full pass answers each new state by evaluating every state gate again; here the words
//! are *moved* to the state asked about by flipping the propositions that differ (a move changes a
//! few), so a step of the search costs about what a step of a playout costs, and the playout that
//! follows starts from words already in place. **The words always hold one known state with no `does`
//! input set** (`PropScratch::at`) between calls; a query about a far-away state loads them afresh
//! instead of flipping most propositions one by one.
//!
//! Gates that only goals read are outside the propagation's cone: they are evaluated in one short
//! pass, once per state, when a goal is asked.

use super::*;

impl NetGame {
    /// Runs `f` on the propagation words brought to `state`.
    pub(super) fn with_prop<R>(
        &self,
        state: &BitState,
        f: impl FnOnce(&mut PropScratch) -> R,
    ) -> R {
        PROP.with(|s| {
            let mut s = s.borrow_mut();
            self.move_prop_to(&mut s, state);
            f(&mut s)
        })
    }

    /// Brings the words to `state`: nothing when they hold it, the saved words of the last playout's
    /// start when that is `state`, flips of the propositions that differ when they are few (from the
    /// state the words hold or from the saved start, whichever is nearer: a tree search starts each
    /// playout at a node near the last one's start, far from where that playout ended), and a full
    /// load otherwise.
    pub(super) fn move_prop_to(&self, s: &mut PropScratch, state: &BitState) {
        let n = &self.net;
        let target = state.words();
        let fresh = s.game == self.id && s.words.len() == n.num_nodes && s.at.len() == target.len();
        if fresh && *s.at == *target {
            return;
        }
        s.goals_fresh = false;
        let snapped = fresh
            && s.snap_state.len() == target.len()
            && s.snap.len() == s.words.len()
            && s.lsnap.len() == s.lbits.len();
        let from_at = if fresh {
            differ(&s.at, target)
        } else {
            u32::MAX
        };
        let from_snap = if snapped {
            differ(&s.snap_state, target)
        } else {
            u32::MAX
        };
        if from_snap < from_at && self.few(from_snap) {
            s.words.copy_from_slice(&s.snap);
            s.lbits.copy_from_slice(&s.lsnap);
            s.moves_stale = s.snap_stale;
            s.at.clear();
            s.at.extend_from_slice(&s.snap_state);
        }
        if fresh && *s.at != *target && self.few(from_at.min(from_snap)) {
            let PropScratch {
                words,
                queue,
                lbits,
                at,
                moves_stale,
                flip_nodes: nodes,
                ..
            } = s;
            nodes.clear();
            prop::push_prop_nodes(at.iter().zip(target).map(|(&a, &b)| a ^ b), nodes);
            // With the move part stale, the state part alone is moved: cheaper, and it stays stale.
            if *moves_stale {
                self.fan.flip_state(words, queue, lbits, nodes);
            } else {
                self.fan.flip_all(words, queue, lbits, nodes);
            }
        } else if *s.at != *target || !fresh {
            self.fan
                .load(n, &mut s.words, &mut s.lbits, |p| state.get(p));
            s.queue.clear();
            s.queue
                .resize(self.fan.queue_len(), prop::Change::default());
            s.game = self.id;
            s.moves_stale = false;
            // The saved words belong to whatever game was here before.
            s.snap_state.clear();
        }
        s.at.clear();
        s.at.extend_from_slice(target);
    }

    /// Brings the move part's words and the pending bits up to date when turns played by their
    /// writes left them stale.
    #[inline]
    pub(super) fn sync_moves(&self, s: &mut PropScratch) {
        self.fan
            .sync_moves(&self.net, &mut s.words, &mut s.lbits, &mut s.moves_stale);
    }

    /// Whether flipping `differ` propositions is likely cheaper than a load.
    fn few(&self, differ: u32) -> bool {
        (differ as usize).saturating_mul(FLIPS_PER_LOAD) <= self.fan.cone().len().max(64)
    }

    /// Role `r`'s legal bits in the words (bit `j`: its `j`-th legal output), its groups' guards
    /// applied; `comb` is room to combine them. Always inlined: it sits in every step of a playout.
    #[inline(always)]
    pub(super) fn role_bits<'a>(
        &self,
        r: usize,
        w: &[u32],
        lbits: &'a [u64],
        comb: &'a mut Vec<u64>,
    ) -> Option<&'a [u64]> {
        let sets = &self.sets;
        let (w0, w1) = (*sets.word.get(r)? as usize, *sets.word.get(r + 1)? as usize);
        let (g0, g1) = (sets.group[r] as usize, sets.group[r + 1] as usize);
        let bits = lbits.get(w0..w1)?;
        if g1 == g0 + 1 && sets.guards[g0] == ground::TRUE {
            return Some(bits);
        }
        comb.clear();
        comb.resize(bits.len(), 0);
        for g in g0..g1 {
            if prop::lit(w, sets.guards[g]) != 0 {
                let at = sets.mask_at[g] as usize;
                let mask = sets.masks.get(at..at + bits.len())?;
                for ((c, &m), &b) in comb.iter_mut().zip(mask).zip(bits) {
                    *c |= m & b;
                }
            }
        }
        Some(comb)
    }

    /// [`NetGame::role_bits`] over the words its groups that hold cover alone: the first of them
    /// (within the role's words) and their bits. Kept out of line: inlined into the playout loop, it
    /// made breakthrough's playouts 0.97 times as fast even where it was not called.
    #[inline(never)]
    pub(super) fn role_span<'a>(
        &self,
        r: usize,
        w: &[u32],
        lbits: &'a [u64],
        comb: &'a mut Vec<u64>,
    ) -> Option<(usize, &'a [u64])> {
        let sets = &self.sets;
        let (w0, w1) = (*sets.word.get(r)? as usize, *sets.word.get(r + 1)? as usize);
        let (g0, g1) = (sets.group[r] as usize, sets.group[r + 1] as usize);
        let bits = lbits.get(w0..w1)?;
        if g1 == g0 + 1 && sets.guards[g0] == ground::TRUE {
            return Some((0, bits));
        }
        if g1 - g0 > 64 {
            return Some((0, self.role_bits(r, w, lbits, comb)?));
        }
        // The groups that hold, one bit each, and the words they cover.
        let (mut holds, mut lo, mut hi) = (0u64, u32::MAX, 0);
        for (k, g) in (g0..g1).enumerate() {
            if prop::lit(w, sets.guards[g]) != 0 {
                holds |= 1 << k;
                let (a, b) = sets.span[g];
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        comb.clear();
        if lo >= hi {
            return Some((0, comb));
        }
        let (lo, hi) = (lo as usize, hi as usize);
        comb.resize(hi - lo, 0);
        while holds != 0 {
            let g = g0 + holds.trailing_zeros() as usize;
            holds &= holds - 1;
            let (a, b) = (sets.span[g].0 as usize, sets.span[g].1 as usize);
            let at = sets.mask_at[g] as usize;
            let (Some(mask), Some(out), Some(x)) = (
                sets.masks.get(at + a..at + b),
                comb.get_mut(a - lo..b - lo),
                bits.get(a..b),
            ) else {
                return None;
            };
            for ((c, &m), &x) in out.iter_mut().zip(mask).zip(x) {
                *c |= m & x;
            }
        }
        Some((lo, comb))
    }

    /// Role `r`'s legal moves in the state the words hold, in move order.
    pub(super) fn prop_legal(&self, s: &mut PropScratch, r: usize, out: &mut Vec<NetMove>) {
        out.clear();
        let PropScratch {
            words, lbits, comb, ..
        } = s;
        let (Some(bits), Some(outputs)) =
            (self.role_bits(r, words, lbits, comb), self.net.legal.get(r))
        else {
            return;
        };
        for (i, &word) in bits.iter().enumerate() {
            let mut x = word;
            while x != 0 {
                let j = i * 64 + x.trailing_zeros() as usize;
                x &= x - 1;
                if let Some(o) = outputs.get(j) {
                    out.push(NetMove(o.mv));
                }
            }
        }
    }

    /// The role in control of the state the words hold (see [`Game::mover`]).
    pub(super) fn prop_mover(&self, s: &mut PropScratch) -> Option<RoleIndex> {
        if prop::lit(&s.words, self.net.terminal) != 0 {
            return None;
        }
        let PropScratch {
            words, lbits, comb, ..
        } = s;
        mover_of(self.net.roles.len(), |r| {
            let Some(bits) = self.role_bits(r, words, lbits, comb) else {
                return Choice::of(0, || false);
            };
            let count: u32 = bits.iter().map(|x| x.count_ones()).sum();
            Choice::of(count as usize, || {
                let first = bits
                    .iter()
                    .enumerate()
                    .find(|(_, &x)| x != 0)
                    .map(|(i, x)| i * 64 + x.trailing_zeros() as usize);
                first
                    .and_then(|j| self.net.legal[r].get(j))
                    .is_some_and(|o| self.is_noop(o.mv))
            })
        })
    }

    /// The state after `joint` from the state the words hold; the words hold that state again after.
    pub(super) fn prop_next(&self, s: &mut PropScratch, joint: &[NetMove]) -> BitState {
        // A turn played by its writes reads them off the words as they are: no input goes on, and
        // the move part may stay stale.
        let turns = self.turn_writes.get_or_init(|| self.turn_writes());
        s.chosen.clear();
        s.chosen.extend(joint.iter().enumerate().map(|(r, m)| {
            let does = self.does_of.get(r).and_then(|v| v.get(m.0 as usize));
            does.copied().unwrap_or(u32::MAX)
        }));
        if joint.len() == self.net.legal.len() {
            if let Some(writes) = turns.of(&s.chosen) {
                let mut out = BitState::from_words(&s.at);
                let words = out.words_mut();
                for pair in writes.chunks_exact(2) {
                    let (p, value) = (pair[0] as usize, u64::from(prop::lit(&s.words, pair[1])));
                    if let Some(x) = words.get_mut(p / 64) {
                        *x = *x & !(1 << (p % 64)) | value << (p % 64);
                    }
                }
                // Those no move changes flip where their pending bits say so.
                let pending = s.lbits.get(self.fan.pending_word()..).unwrap_or(&[]);
                for ((x, &b), &k) in words.iter_mut().zip(pending).zip(self.fan.kept_pending()) {
                    *x ^= b & k;
                }
                return out;
            }
        }
        self.sync_moves(s);
        let PropScratch {
            words,
            queue,
            lbits,
            chosen,
            at,
            ..
        } = s;
        // `chosen` keeps the inputs flipped on here, to flip them off again: an input already set
        // (the same move given twice) stays set once.
        for d in chosen.iter_mut() {
            if *d != u32::MAX && prop::lit(words, *d << 1) == 0 {
                self.fan.flip(words, queue, lbits, *d);
            } else {
                *d = u32::MAX;
            }
        }
        // A pending bit says that a proposition's next value differs from its value.
        let pending = lbits.get(self.fan.pending_word()..).unwrap_or(&[]);
        let mut out = BitState::from_words(at);
        for (o, &p) in out.words_mut().iter_mut().zip(pending) {
            *o ^= p;
        }
        for &d in chosen.iter().rev().filter(|&&d| d != u32::MAX) {
            self.fan.flip(words, queue, lbits, d);
        }
        out
    }

    /// Role `role`'s goal in the state the words hold (the last value that holds, as
    /// [`NetGame::goal_values`] lists them).
    pub(super) fn prop_goal(&self, s: &mut PropScratch, role: RoleIndex) -> Goal {
        let n = &self.net;
        if !s.goals_fresh {
            for &g in &self.goal_gates {
                let gate = n.gates[g as usize];
                let inputs = &n.inputs[gate.start as usize..gate.end as usize];
                let all = inputs.iter().all(|&l| prop::lit(&s.words, l) != 0);
                let val = u32::from(all) ^ u32::from(gate.negate != 0);
                // Nothing propagates through these gates: the value bit is all they hold.
                s.words[n.first_gate + g as usize] = val << 31;
            }
            s.goals_fresh = true;
        }
        n.goals.get(role).map_or(0, |g| {
            g.iter()
                .rev()
                .find(|(_, l)| prop::lit(&s.words, *l) != 0)
                .map_or(0, |x| x.0)
        })
    }
}

/// The words are loaded afresh when more propositions differ than the cone's gates divided by this
/// (a flip touches a few readers, a load every gate of the cone). On connectFour and breakthrough,
/// anything from 1 to 16 searched as fast; loading every time ran at 0.44× on connectFour.
const FLIPS_PER_LOAD: usize = 8;

/// The gates that goals read and the propagation's cone leaves out, ascending (an order in which
/// every gate comes after its inputs).
pub(super) fn goal_gates(n: &Grounded, cone: &[u32]) -> Vec<u32> {
    let first = n.first_gate;
    let mut needed = vec![false; n.gates.len()];
    for &g in cone {
        needed[g as usize] = true;
    }
    let mut goal = vec![false; n.gates.len()];
    let mut todo: Vec<usize> = n
        .goals
        .iter()
        .flatten()
        .map(|(_, l)| (l >> 1) as usize)
        .collect();
    while let Some(node) = todo.pop() {
        if node < first || needed[node - first] || goal[node - first] {
            continue;
        }
        let g = node - first;
        goal[g] = true;
        let gate = n.gates[g];
        todo.extend(
            n.inputs[gate.start as usize..gate.end as usize]
                .iter()
                .map(|&l| (l >> 1) as usize),
        );
    }
    (0..n.gates.len() as u32)
        .filter(|&g| goal[g as usize])
        .collect()
}

/// How many propositions differ between two states' words.
fn differ(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

#[cfg(test)]
mod tests {
    use crate::game::Game;
    use crate::network::NetGame;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A role's span is its legal words from the span's first on, and nothing outside it is legal:
    /// along random games, in every state, for every role.
    #[test]
    fn a_roles_span_holds_all_its_legal_bits_at_their_places() {
        let mut spans_inside = 0;
        for (name, text) in [
            ("breakthrough", include_str!("../../games/breakthrough.gdl")),
            ("connect4", include_str!("../../games/connect4.gdl")),
            ("knightstour", include_str!("../../games/knightstour.gdl")),
        ] {
            let program = crate::syntax::parse_infix(text).expect("parses");
            let g = NetGame::from_program(&program, name).expect("grounds");
            let mut rng = SmallRng::seed_from_u64(7);
            let mut buf = Vec::new();
            for _ in 0..5 {
                let mut s = g.initial_state();
                while !g.is_terminal(&s) {
                    g.with_prop(&s, |p| {
                        for r in 0..g.net.legal.len() {
                            let mut comb = Vec::new();
                            let all = g
                                .role_bits(r, &p.words, &p.lbits, &mut comb)
                                .expect("bits")
                                .to_vec();
                            let (first, words) =
                                g.role_span(r, &p.words, &p.lbits, &mut comb).expect("span");
                            let mut placed = vec![0u64; all.len()];
                            placed[first..first + words.len()].copy_from_slice(words);
                            assert_eq!(placed, all, "{name}, role {r}");
                            spans_inside += usize::from(first > 0 && words.iter().any(|&x| x != 0));
                        }
                    });
                    let joint: Vec<_> = (0..g.net.legal.len())
                        .map(|r| {
                            g.legal_moves(&s, r, &mut buf);
                            buf[rng.gen_range(0..buf.len())]
                        })
                        .collect();
                    s = g.next_state(&s, &joint);
                }
            }
        }
        // Breakthrough's waiting role draws from its no-op's word, past its moves'.
        assert!(spans_inside > 0, "no span begins past the first word");
    }
}
