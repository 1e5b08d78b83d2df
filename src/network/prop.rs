//! Forward change propagation over the network, one game at a time (the Sancho / ggplib method).
//!
//! Every node holds one packed word whose sign is its value; a gate's word counts its inputs that are
//! currently false (an AND holds when that count is 0; see [`VAL`]). When an input flips, only its
//! fan-out is touched: each reader's count moves by one, and a reader whose value flips passes the
//! change on, unless it has flipped back by the time its turn on the queue comes (see [`TOLD`]). Most
//! of a state survives a move (a Connect Four move changes about four propositions), so a step costs
//! a few hundred word updates instead of a pass over every gate.
//!
//! The queue is first in, first out, not in level order, although a gate that a change reaches by
//! paths of different lengths can then flip, be passed on, and flip back. Level order (one bucket a
//! level, a gate's level one more than its inputs' highest) passes each gate on at most once: it cut
//! reversi's passes by 36% and its word updates by 24%, yet its bookkeeping (a level and a bucket's
//! tail for each update) left reversi no faster and made speedChess 13-26% and hex 8-23% slower, in
//! three variants (2026-12-04).
//!
//! Only the *cone* of the playout outputs (terminal, legal, next) is kept up to date: gates that only
//! feed goals are never touched during a playout (goals are read once, at the end, by the full pass).
//!
//! Changes also keep a bitset up to date, so a step never reads every output: each role's legal moves
//! (see `LegalSets` in the parent module) and, per proposition, whether its `next` differs from its
//! value (the propositions to flip when the state moves on).

use super::ground::{Grounded, NetLit};

/// The value bit of a node word.
///
/// A gate's word is its count of false inputs `c`, kept so that the value is the sign: `4 * (c - 1)`
/// for a plain gate (negative exactly when no input is false), `-4 * c` for a negated one, with the
/// [`NOTE`] and [`TOLD`] bits below. A literal's change then moves the word by 4 up or down, and the
/// gate changed exactly when the sign did: one addition and no test of the count, where a count
/// beside a value bit took a comparison and a second write of the value.
const VAL: u32 = 1 << 31;
/// Set on nodes whose changes toggle bits of the bitset (see [`Fanout::note`]).
const NOTE: u32 = 1;
/// A gate's value as its readers were last told it (bit 1 of its word; the count steps by 4 so that
/// no addition reaches it). A gate queued when its value flipped is passed on only if the value
/// still differs from this when its turn comes: one that flipped back in the meantime (reversi's
/// line patterns, when a move turns several discs at once, do so in one change of ten) is skipped,
/// and so is every change it would have set off, and the change back.
const TOLD: u32 = 2;
/// No guard.
pub(crate) const NO_GUARD: NetLit = u32::MAX;

/// A gate whose value flipped, waiting on the queue for its readers to be told (see [`TOLD`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Change(u32);

/// Who reads each node and which bits each node's changes toggle, in compressed sparse row form.
#[derive(Clone, Debug, Default)]
struct Rows {
    /// `start[n]..start[n + 1]` are node `n`'s readers in `edges`: first, up to `up[n]`, those whose
    /// word moves *down* when the node becomes true (a plain reader of a plain input, or a negated
    /// one of a negated input), then those whose word moves up (see [`VAL`]). Split so, the step of
    /// each reader's word is known from the list it is in and the node's new value, and an edge is
    /// the bare gate node: an update is four instructions fewer than with the way kept in the edge.
    start: Vec<u32>,
    /// Where node `n`'s readers whose word moves up when it becomes true begin.
    up: Vec<u32>,
    /// The reading gates' nodes.
    edges: Vec<u32>,
    /// `lw_start[n]..lw_start[n + 1]` are the bits that node `n` toggles in `lw`: the legal-set bits
    /// that follow it, and (in the whole cone's rows) the *pending* bit of each proposition whose
    /// `next` or own node it is.
    lw_start: Vec<u32>,
    lw: Vec<u32>,
}

/// The fan-out lists of the playout cone, in compressed sparse row form: those of the whole cone,
/// and those of its state part alone (see [`Fanout::flip_state`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Fanout {
    /// The whole cone's rows.
    full: Rows,
    /// The rows of the gates no `does` input reaches, with the pending bits only of the propositions
    /// whose `next` no move changes (see [`Fanout::kept_pending`]).
    state: Rows,
    /// The cone's gates, by gate index (not node), in evaluation order.
    cone: Vec<u32>,
    /// The cone's gates that a `does` input reaches (its move part), in evaluation order.
    moves: Vec<u32>,
    /// The cone's gates that propagation keeps up to date, in evaluation order: all but the legal
    /// gates whose bits follow another literal (see `LegalSets`).
    updated: Vec<u32>,
    /// Per legal-set bit, the literal it follows (the legal literal, or its gate less the guard).
    bit_lit: Vec<NetLit>,
    /// Per gate (by gate index), the input left out of its count (a legal move's guard), or
    /// [`NO_GUARD`].
    skip: Vec<NetLit>,
    /// Proposition `p`'s pending bit is `pending + p` (`bit_lit.len()`, a multiple of 64).
    pending: usize,
    /// The number of propositions.
    props: usize,
    /// Whether a legal move or the terminal test reads a `does` input (never in a well-formed game):
    /// the move part then reaches the legal-set bits too.
    moves_reach_legal: bool,
    /// Over the pending bits' words, the propositions whose `next` is a literal of the state part
    /// (no move changes it: a step counter, whose turn it is) and not the proposition itself: their
    /// pending bits are kept by the state part's rows too (see [`Fanout::kept_pending`]).
    kept: Vec<u64>,
}

impl Fanout {
    /// The fan-out of the gates that `roots` (literals) depend on. `skip[g]` is an input of gate `g`
    /// that the gate's count leaves out (or [`NO_GUARD`]); `bit_lit[b]` is the literal legal-set bit
    /// `b` follows.
    pub(crate) fn new(
        n: &Grounded,
        roots: impl Iterator<Item = NetLit>,
        skip: Vec<NetLit>,
        bit_lit: Vec<NetLit>,
    ) -> Fanout {
        let first = n.first_gate;
        // The gates propagation keeps up to date (`told`): those the legal-set bits, their guards,
        // `next` and terminal read, which leaves out a guarded legal gate whose bit follows its
        // other input. Both sets are found side by side.
        let guards = skip.iter().filter(|&&l| l != NO_GUARD);
        let told_roots: Vec<NetLit> = bit_lit
            .iter()
            .chain(guards)
            .chain(&n.next)
            .chain([&n.terminal])
            .copied()
            .collect();
        let roots: Vec<NetLit> = roots.collect();
        let (needed, told) = rayon::join(
            || read_by(n, roots.iter().copied()),
            || read_by(n, told_roots.iter().copied()),
        );
        let cone: Vec<u32> = (0..n.gates.len() as u32)
            .filter(|&g| needed[g as usize])
            .collect();
        let skip_of = |g: u32| skip.get(g as usize).copied().unwrap_or(NO_GUARD);
        // A gate is in the move part when it reads a `does` input or a gate of the move part (the
        // cone is in evaluation order, so its inputs are marked before it).
        let does = 1 + n.props.len()..first;
        let reads_moves = |l: NetLit, moving: &[bool]| {
            let node = (l >> 1) as usize;
            does.contains(&node) || (node >= first && moving[node - first])
        };
        let mut moving = vec![false; n.gates.len()];
        for &g in &cone {
            let gate = n.gates[g as usize];
            moving[g as usize] = n.inputs[gate.start as usize..gate.end as usize]
                .iter()
                .any(|&l| reads_moves(l, &moving));
        }
        let moves: Vec<u32> = cone
            .iter()
            .copied()
            .filter(|&g| moving[g as usize])
            .collect();
        let edges_of = |gates: &[u32]| {
            let (start, edges) = csr(
                n.num_nodes,
                gates.iter().flat_map(|&g| {
                    let gate = n.gates[g as usize];
                    let node = (first as u32 + g) << 1 | u32::from(gate.negate != 0);
                    n.inputs[gate.start as usize..gate.end as usize]
                        .iter()
                        .filter(move |&&l| l != skip_of(g))
                        .map(move |&l| ((l >> 1) as usize, node ^ (l & 1)))
                }),
            );
            split_by_way(start, edges)
        };
        let pending = bit_lit.len().div_ceil(64) * 64;
        let legal_bits = bit_lit
            .iter()
            .enumerate()
            .map(|(b, &l)| ((l >> 1) as usize, b as u32));
        let updated: Vec<u32> = cone.iter().copied().filter(|&g| told[g as usize]).collect();
        let (lw_start, lw) = csr(
            n.num_nodes,
            legal_bits
                .clone()
                .chain(n.next.iter().enumerate().flat_map(move |(p, &l)| {
                    let bit = (pending + p) as u32;
                    [((l >> 1) as usize, bit), (1 + p, bit)]
                })),
        );
        // Legal moves and the terminal test never read a `does` input in a well-formed game; where
        // one does, the state part's rows are the whole cone's.
        let split = !bit_lit
            .iter()
            .chain([&n.terminal])
            .any(|&l| reads_moves(l, &moving));
        let state_gates: Vec<u32> = updated
            .iter()
            .copied()
            .filter(|&g| !(split && moving[g as usize]))
            .collect();
        // The two sets of rows read the same gates and are built side by side.
        let ((start, up, edges), (state_start, state_up, state_edges)) =
            rayon::join(|| edges_of(&updated), || edges_of(&state_gates));
        // A proposition whose `next` no move changes has its pending bit kept by the state part's
        // rows as by the whole cone's: a literal that is a constant, a proposition, or a state gate
        // whose word holds its value (no guard left out).
        let np = n.next.len();
        let kept_by_state = |l: NetLit| {
            let node = (l >> 1) as usize;
            node <= np
                || node >= first && {
                    let g = node - first;
                    told[g] && !moving[g] && skip_of(g as u32) == NO_GUARD
                }
        };
        let mut kept = vec![0u64; (pending + np).div_ceil(64) - pending / 64];
        for (p, &l) in n.next.iter().enumerate() {
            if split && l != ((1 + p) as NetLit) << 1 && kept_by_state(l) {
                kept[p / 64] |= 1 << (p % 64);
            }
        }
        let (state_lw_start, state_lw) = if split {
            csr(
                n.num_nodes,
                legal_bits.chain(n.next.iter().enumerate().flat_map(|(p, &l)| {
                    let bit = (pending + p) as u32;
                    let on = kept[p / 64] >> (p % 64) & 1 == 1;
                    on.then_some([((l >> 1) as usize, bit), (1 + p, bit)])
                        .into_iter()
                        .flatten()
                })),
            )
        } else {
            (lw_start.clone(), lw.clone())
        };
        Fanout {
            full: Rows {
                start,
                up,
                edges,
                lw_start,
                lw,
            },
            state: Rows {
                start: state_start,
                up: state_up,
                edges: state_edges,
                lw_start: state_lw_start,
                lw: state_lw,
            },
            cone,
            moves,
            updated,
            bit_lit,
            skip,
            pending,
            props: n.next.len(),
            moves_reach_legal: !split,
            kept,
        }
    }

    /// The words of the bitset: legal sets, then pending propositions.
    pub(crate) fn bit_words(&self) -> usize {
        (self.pending + self.props).div_ceil(64)
    }

    /// Over the pending bits' words (from [`Fanout::pending_word`]), the propositions whose `next`
    /// no move changes and that the state part's rows keep the pending bits of, as
    /// [`Fanout::flip_all`] keeps every proposition's: a step through [`Fanout::flip_state`] leaves
    /// theirs right, so a turn played by its writes need not write them (speedChess's step counter,
    /// 201 propositions, and whose turn it is).
    pub(crate) fn kept_pending(&self) -> &[u64] {
        &self.kept
    }

    /// The first word of the pending propositions' bits.
    pub(crate) fn pending_word(&self) -> usize {
        self.pending / 64
    }

    /// The first word of the bitset that setting a `does` input can change: the pending
    /// propositions' (see [`Fanout::pending_word`]), or the first when legal moves read the inputs.
    pub(crate) fn move_bits_from(&self) -> usize {
        if self.moves_reach_legal {
            0
        } else {
            self.pending_word()
        }
    }

    /// The cone's gates (gate indices, ascending).
    pub(crate) fn cone(&self) -> &[u32] {
        &self.cone
    }

    /// Sets every node word from the base propositions in `props` (`does` inputs false): one full pass
    /// over the cone.
    pub(crate) fn load(
        &self,
        n: &Grounded,
        w: &mut Vec<u32>,
        lbits: &mut Vec<u64>,
        props: impl Fn(usize) -> bool,
    ) {
        w.clear();
        w.resize(n.num_nodes, 0);
        for p in 0..n.props.len() {
            if props(p) {
                w[1 + p] = VAL;
            }
        }
        for &g in &self.updated {
            let gate = n.gates[g as usize];
            let mut false_inputs = 0;
            let skip = self.skip.get(g as usize).copied().unwrap_or(NO_GUARD);
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                if l != skip {
                    false_inputs += 1 ^ lit(w, l);
                }
            }
            w[n.first_gate + g as usize] = gate_word(false_inputs, gate.negate != 0);
        }
        for (node, x) in w.iter_mut().enumerate() {
            if self.full.lw_start[node] < self.full.lw_start[node + 1] {
                *x |= NOTE;
            }
        }
        lbits.clear();
        lbits.resize(self.bit_words(), 0);
        for (b, &l) in self.bit_lit.iter().enumerate() {
            lbits[b / 64] |= u64::from(lit(w, l)) << (b % 64);
        }
        for (p, &l) in n.next.iter().enumerate() {
            let b = self.pending + p;
            lbits[b / 64] |= u64::from(lit(w, l) ^ (w[1 + p] >> 31)) << (b % 64);
        }
    }

    /// Flips input node `node` and propagates the change (breadth first, through a queue of the
    /// changes in the order they happen, so that each node's changes reach its readers in that order
    /// and every count stays within its gate's input count), toggling the bits that changed nodes
    /// follow.
    ///
    /// `w` must hold one word per node, as [`Fanout::load`] leaves them (otherwise nothing happens);
    /// `queue` grows when a propagation needs more room than it has (start it at
    /// [`Fanout::queue_len`]).
    #[inline]
    pub(crate) fn flip(
        &self,
        w: &mut [u32],
        queue: &mut Vec<Change>,
        lbits: &mut [u64],
        node: u32,
    ) {
        self.flip_in::<false>(&self.full, w, queue, lbits, &[node], &mut Vec::new());
    }

    /// Flips each of `nodes` (input nodes, in that order) and propagates the changes together, as
    /// [`Fanout::flip`] does one: one queue for all of them.
    #[inline]
    pub(crate) fn flip_all(
        &self,
        w: &mut [u32],
        queue: &mut Vec<Change>,
        lbits: &mut [u64],
        nodes: &[u32],
    ) {
        self.flip_in::<false>(&self.full, w, queue, lbits, nodes, &mut Vec::new());
    }

    /// [`Fanout::flip_all`], every node word it writes recorded first in `undo` (as `node << 32 |
    /// old word`, in the order written), so that [`undo`] puts the words back as they were. A step
    /// that sets its `does` inputs only to read which propositions change takes them back so, instead
    /// of a second propagation: hex's move part passes each placement on to 82 readers, once for
    /// each step of the game, and would do it again to take the move off.
    #[inline]
    pub(crate) fn flip_all_undoable(
        &self,
        w: &mut [u32],
        queue: &mut Vec<Change>,
        lbits: &mut [u64],
        nodes: &[u32],
        undo: &mut Vec<u64>,
    ) {
        self.flip_in::<true>(&self.full, w, queue, lbits, nodes, undo);
    }

    /// Flips proposition nodes `nodes` and propagates the changes through the state part alone (as
    /// [`Fanout::flip_all`] through the whole cone): the gates no `does` input reaches and the
    /// legal-set bits. The move part's words and the pending bits are left as they were, stale until
    /// [`Fanout::sync_moves`], but for the pending bits of [`Fanout::kept_pending`], which stay
    /// right; a turn played by its writes (see `turn_writes::TurnWrites`) needs no more,
    /// and leaving out breakthrough's frame gates makes its random playouts about 1.1 times as fast.
    /// Same requirements as [`Fanout::flip`].
    #[inline]
    pub(crate) fn flip_state(
        &self,
        w: &mut [u32],
        queue: &mut Vec<Change>,
        lbits: &mut [u64],
        nodes: &[u32],
    ) {
        self.flip_in::<false>(&self.state, w, queue, lbits, nodes, &mut Vec::new());
    }

    /// Where `stale` says [`Fanout::flip_state`] left them stale, sets the move part's words and the
    /// pending bits again from the state part's words and the `does` inputs (one pass over the move
    /// part), and clears `stale`.
    #[inline]
    pub(crate) fn sync_moves(
        &self,
        n: &Grounded,
        w: &mut [u32],
        lbits: &mut [u64],
        stale: &mut bool,
    ) {
        if *stale {
            self.pass_over_moves(n, w, lbits);
            *stale = false;
        }
    }

    /// [`Fanout::sync_moves`]' pass. Kept out of line, so that the propagating playout's loop stays
    /// as it was for the games that never call it (hex read 0.78x in four rounds with it inlined,
    /// 0.97x in six without).
    #[inline(never)]
    fn pass_over_moves(&self, n: &Grounded, w: &mut [u32], lbits: &mut [u64]) {
        if w.len() != n.num_nodes || lbits.len() < self.bit_words() {
            return;
        }
        for &g in &self.moves {
            let gate = n.gates[g as usize];
            let skip = self.skip.get(g as usize).copied().unwrap_or(NO_GUARD);
            let mut false_inputs = 0;
            for &l in &n.inputs[gate.start as usize..gate.end as usize] {
                if l != skip {
                    false_inputs += 1 ^ lit(w, l);
                }
            }
            let x = &mut w[n.first_gate + g as usize];
            *x = gate_word(false_inputs, gate.negate != 0) | (*x & NOTE);
        }
        for (p, &l) in n.next.iter().enumerate() {
            let b = self.pending + p;
            let bit = u64::from(lit(w, l) ^ (w[1 + p] >> 31)) << (b % 64);
            lbits[b / 64] = lbits[b / 64] & !(1 << (b % 64)) | bit;
        }
    }

    /// [`Fanout::flip_all`] through `rows`; with `LOG`, each word written is recorded in `undo` first
    /// (see [`Fanout::flip_all_undoable`]).
    #[inline(always)]
    fn flip_in<const LOG: bool>(
        &self,
        rows: &Rows,
        w: &mut [u32],
        queue: &mut Vec<Change>,
        lbits: &mut [u64],
        roots: &[u32],
        undo: &mut Vec<u64>,
    ) {
        let nodes = rows.start.len() - 1;
        if w.len() != nodes || lbits.len() < self.bit_words() {
            return;
        }
        let (mut q, mut room) = (queue.as_mut_ptr(), queue.len());
        // The record is written through a pointer as the queue is, its length set at the end.
        let mut logged = undo.len();
        // SAFETY: `new` built `start` with one entry per node plus one, non-decreasing, ending at
        // `edges.len()`, with `up[n]` in `start[n]..=start[n + 1]` for each node `n` (by
        // `split_by_way`), and every edge names a node below `nodes`; `w` has `nodes` words (checked
        // above), and a root is flipped only below `nodes`. The queue holds `room` changes, and a
        // node's readers go at `tail..tail + readers`, the queue grown to hold them first. `lw` holds
        // bits below `pending + props < 64 * lbits.len()`. With `LOG`, the record is grown before each
        // write that would pass its capacity (a root's, or a node's readers at `logged..logged +
        // readers`), and its length covers exactly the entries written.
        unsafe {
            // The roots' changes first, in order, straight from `roots` (a root is an input, never a
            // reader, so each node's changes still pass on in the order they happen); then the
            // queue's.
            let (mut next_root, mut head, mut tail) = (0usize, 0usize, 0usize);
            loop {
                let (cur, val) = if let Some(&node) = roots.get(next_root) {
                    next_root += 1;
                    let Some(x) = w.get_mut(node as usize) else {
                        continue;
                    };
                    if LOG {
                        if logged == undo.capacity() {
                            Self::grow_record(undo, logged, 1);
                        }
                        undo.as_mut_ptr()
                            .add(logged)
                            .write(u64::from(node) << 32 | u64::from(*x));
                        logged += 1;
                    }
                    *x ^= VAL;
                    (node as usize, *x >> 31)
                } else if head < tail {
                    let Change(g) = q.add(head).read();
                    head += 1;
                    let x = w.get_unchecked_mut(g as usize);
                    let val = *x >> 31;
                    if val == (*x & TOLD) >> 1 {
                        continue;
                    }
                    *x ^= TOLD;
                    (g as usize, val)
                } else {
                    break;
                };
                if *w.get_unchecked(cur) & NOTE != 0 {
                    Self::note(rows, cur, lbits);
                }
                let (s, e) = (
                    *rows.start.get_unchecked(cur) as usize,
                    *rows.start.get_unchecked(cur + 1) as usize,
                );
                if tail + (e - s) > room {
                    Self::grow(queue, tail + (e - s));
                    (q, room) = (queue.as_mut_ptr(), queue.len());
                }
                if LOG && logged + (e - s) > undo.capacity() {
                    Self::grow_record(undo, logged, e - s);
                }
                let record = undo.as_mut_ptr();
                // Every reader is written at the queue's tail, which moves on only past those that
                // changed: no branch on whether one did, which the processor cannot guess. Against a
                // depth-first walk that branched there, random playouts ran 1.12 times as fast on
                // breakthrough and speedChess, 1.09 on hex.
                // The first readers' words move down by 4 when the node becomes true (a false input
                // fewer for a plain reader, one more for a negated one) and up when it becomes false;
                // the others' the other way.
                let m = *rows.up.get_unchecked(cur) as usize;
                let step = 4u32.wrapping_neg().wrapping_add(8 * (1 ^ val));
                for (readers, step) in [(s..m, step), (m..e, step.wrapping_neg())] {
                    for &g in rows.edges.get_unchecked(readers) {
                        let x = w.get_unchecked_mut(g as usize);
                        if LOG {
                            record.add(logged).write(u64::from(g) << 32 | u64::from(*x));
                            logged += 1;
                        }
                        let y = x.wrapping_add(step);
                        let changed = (*x ^ y) >> 31;
                        *x = y;
                        q.add(tail).write(Change(g));
                        tail += changed as usize;
                    }
                }
            }
            if LOG {
                undo.set_len(logged);
            }
        }
    }

    /// Makes room in the record of written words for `more` beyond its first `logged` (kept out
    /// of line, as [`Fanout::grow`]).
    #[cold]
    #[inline(never)]
    fn grow_record(undo: &mut Vec<u64>, logged: usize, more: usize) {
        // SAFETY: the first `logged` entries were written by `flip_in` (within the capacity).
        unsafe { undo.set_len(logged) };
        undo.reserve((logged + more).max(2 * undo.capacity()) - logged);
    }

    /// Makes room for `needed` changes on the queue: a network where changes pass on through many
    /// paths can queue more than one change a node (kept out of line: no corpus game's playouts
    /// need it once the queue starts at [`Fanout::queue_len`]).
    #[cold]
    #[inline(never)]
    fn grow(queue: &mut Vec<Change>, needed: usize) {
        queue.resize(needed.max(2 * queue.len()), Change::default());
    }

    /// Toggles the bits that node `g` follows (it changed).
    ///
    /// # Safety
    /// `g` is a node and `lbits` holds every bit (as [`Fanout::flip`] checks).
    #[inline]
    unsafe fn note(rows: &Rows, g: usize, lbits: &mut [u64]) {
        let (s, e) = (
            *rows.lw_start.get_unchecked(g) as usize,
            *rows.lw_start.get_unchecked(g + 1) as usize,
        );
        for &b in rows.lw.get_unchecked(s..e) {
            *lbits.get_unchecked_mut(b as usize / 64) ^= 1 << (b % 64);
        }
    }

    /// Whether gate `g` (by gate index) leaves an input out of its count, so that its word does not
    /// hold the gate's value.
    pub(crate) fn skips(&self, g: u32) -> bool {
        self.skip.get(g as usize).is_some_and(|&l| l != NO_GUARD)
    }

    /// The queue length [`Fanout::flip`] starts with: room for each node to change once.
    pub(crate) fn queue_len(&self) -> usize {
        self.full.start.len() + 1
    }
}

/// Per gate of `n`, whether a literal of `roots` reads it, directly or through other gates.
fn read_by(n: &Grounded, roots: impl Iterator<Item = NetLit>) -> Vec<bool> {
    let first = n.first_gate;
    let mut read = vec![false; n.gates.len()];
    let mut todo: Vec<usize> = Vec::new();
    let mut mark = |l: NetLit, todo: &mut Vec<usize>| {
        let node = (l >> 1) as usize;
        if node >= first && !read[node - first] {
            read[node - first] = true;
            todo.push(node - first);
        }
    };
    for l in roots {
        mark(l, &mut todo);
    }
    while let Some(g) = todo.pop() {
        let gate = n.gates[g];
        for &l in &n.inputs[gate.start as usize..gate.end as usize] {
            mark(l, &mut todo);
        }
    }
    read
}

/// Compressed sparse rows: `(start, items)` with `items[start[k]..start[k + 1]]` the values given for
/// key `k < keys` (keys out of range are left out).
pub(super) fn csr(
    keys: usize,
    pairs: impl Iterator<Item = (usize, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut count = vec![0u32; keys + 1];
    for (k, _) in pairs.clone() {
        if k < keys {
            count[k] += 1;
        }
    }
    let mut start = Vec::with_capacity(keys + 1);
    let mut acc = 0u32;
    for c in &count[..keys] {
        start.push(acc);
        acc += c;
    }
    start.push(acc);
    let mut fill = start.clone();
    let mut items = vec![0u32; acc as usize];
    for (k, v) in pairs {
        if k < keys {
            items[fill[k] as usize] = v;
            fill[k] += 1;
        }
    }
    (start, items)
}

/// Each key's items of `(start, items)` (items `gate node << 1 | way`) reordered, way 0 first, and
/// the way dropped: `(start, up, gate nodes)`, key `k`'s way-1 items from `up[k]`.
fn split_by_way(start: Vec<u32>, mut items: Vec<u32>) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut up = Vec::with_capacity(start.len().saturating_sub(1));
    for k in start.windows(2) {
        let row = &mut items[k[0] as usize..k[1] as usize];
        row.sort_by_key(|&x| x & 1);
        up.push(k[0] + row.iter().filter(|&&x| x & 1 == 0).count() as u32);
        row.iter_mut().for_each(|x| *x >>= 1);
    }
    (start, up, items)
}

/// Appends to `nodes` the proposition node of every set bit of `words` (proposition `p` at bit `p`
/// of the bitset, node `1 + p`), in order: the list [`Fanout::flip_all`] and
/// [`Fanout::flip_state`] take.
#[inline(always)]
pub(crate) fn push_prop_nodes(words: impl IntoIterator<Item = u64>, nodes: &mut Vec<u32>) {
    for (i, word) in words.into_iter().enumerate() {
        let mut x = word;
        while x != 0 {
            nodes.push(1 + (i * 64) as u32 + x.trailing_zeros());
            x &= x - 1;
        }
    }
}

/// Puts back the node words that [`Fanout::flip_all_undoable`] recorded in `undo`, the last written
/// first, and empties the record.
#[inline]
pub(crate) fn undo(w: &mut [u32], undo: &mut Vec<u64>) {
    for &e in undo.iter().rev() {
        if let Some(x) = w.get_mut((e >> 32) as usize) {
            *x = e as u32;
        }
    }
    undo.clear();
}

/// The word of a gate with `false_inputs` false inputs (see [`VAL`]), its readers told its value
/// ([`TOLD`]), without its [`NOTE`] bit.
fn gate_word(false_inputs: u32, negated: bool) -> u32 {
    let w = if negated {
        false_inputs.wrapping_mul(4).wrapping_neg()
    } else {
        false_inputs.wrapping_sub(1).wrapping_mul(4)
    };
    w | ((w >> 31) * TOLD)
}

/// The value of a literal in packed node words.
#[inline(always)]
pub(crate) fn lit(w: &[u32], l: NetLit) -> u32 {
    (w.get((l >> 1) as usize).copied().unwrap_or(0) >> 31) ^ (l & 1)
}

#[cfg(test)]
mod tests {
    use super::{gate_word, NOTE, TOLD};
    use crate::network::NetGame;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Asserts that words `w` and bits `lbits` are what a fresh load of `g` gives for the state
    /// whose proposition `p` holds when `on(p)`.
    fn assert_as_loaded(
        g: &NetGame,
        w: &[u32],
        lbits: &[u64],
        on: impl Fn(usize) -> bool,
        case: &str,
    ) {
        let (mut fresh, mut fresh_bits) = (Vec::new(), Vec::new());
        g.fan.load(&g.net, &mut fresh, &mut fresh_bits, on);
        assert_eq!(w, fresh, "node words, {case}");
        assert_eq!(lbits, fresh_bits, "bits, {case}");
    }

    #[test]
    fn a_gate_words_sign_is_its_value_and_each_input_moves_it_by_four() {
        for negated in [false, true] {
            for c in 0..5u32 {
                let w = gate_word(c, negated) | NOTE;
                // An AND of its inputs: true when none is false, negated or not.
                assert_eq!(
                    w >> 31 == 1,
                    (c == 0) != negated,
                    "c = {c}, negated = {negated}"
                );
                assert_eq!(w & NOTE, NOTE);
                // A fresh word's readers have been told its value.
                assert_eq!((w & TOLD) >> 1, w >> 31, "c = {c}, negated = {negated}");
                // One more false input moves a plain gate's word up by 4, a negated one's down by
                // 4, leaving the two low bits alone.
                let more = gate_word(c + 1, negated) | NOTE;
                let step = if negated { 4u32.wrapping_neg() } else { 4 };
                assert_eq!(w.wrapping_add(step) & !TOLD, more & !TOLD);
            }
        }
    }

    #[test]
    fn propagation_leaves_the_words_a_fresh_load_gives_growing_its_queue_as_it_needs() {
        let g = crate::network::tic_tac_toe();
        let (fan, net) = (&g.fan, &g.net);
        let props = net.props.len();
        let mut on: Vec<bool> = (0..props)
            .map(|p| net.initial.contains(&(p as u32)))
            .collect();
        let (mut w, mut lbits) = (Vec::new(), Vec::new());
        fan.load(net, &mut w, &mut lbits, |p| on[p]);
        // No room at first: the first propagation grows the queue.
        let mut queue = Vec::new();
        let mut rng = SmallRng::seed_from_u64(7);
        for round in 0..200 {
            // One proposition, or three at once (the same one may come twice: it flips back).
            let count = if round % 2 == 0 { 1 } else { 3 };
            let nodes: Vec<u32> = (0..count)
                .map(|_| 1 + rng.gen_range(0..props) as u32)
                .collect();
            for &n in &nodes {
                on[n as usize - 1] ^= true;
            }
            if count == 1 {
                fan.flip(&mut w, &mut queue, &mut lbits, nodes[0]);
            } else {
                fan.flip_all(&mut w, &mut queue, &mut lbits, &nodes);
            }
            let case = format!("after flipping {nodes:?} (round {round})");
            assert_as_loaded(&g, &w, &lbits, |p| on[p], &case);
        }
        assert!(!queue.is_empty(), "the queue grew");
    }

    #[test]
    fn a_gate_that_flips_back_before_its_turn_leaves_the_words_a_fresh_load_gives() {
        // `g` is `p and not q`, read by an OR (`h`), a legal move and the terminal test: flipping
        // `p` and `q` together from a state with neither flips `g` on and off again before its turn
        // on the queue, so its readers must not be told either change.
        let program = crate::syntax::parse_kif(
            "(role a)
             (init (q))
             (<= (next (p)) (true (q)))
             (<= (next (q)) (true (r)))
             (<= (next (r)) (true (p)))
             (<= (g) (true (p)) (not (true (q))))
             (<= (h) (g))
             (<= (h) (true (r)))
             (<= (legal a noop))
             (<= (legal a x) (g))
             (<= terminal (h) (true (q)))
             (<= (goal a 100) (g))
             (<= (goal a 0) (not (g)))",
        )
        .expect("parses");
        let g = NetGame::from_program(&program, "test").expect("grounds");
        let (fan, net) = (&g.fan, &g.net);
        let props = net.props.len() as u32;
        assert_eq!(props, 3, "p, q and r");
        let mut queue = Vec::new();
        // Every state, and every two roots in either order (the same one twice flips it back).
        for state in 0..8u32 {
            for first in 1..=props {
                for second in 1..=props {
                    let on = |p: usize| state >> p & 1 == 1;
                    let (mut w, mut lbits) = (Vec::new(), Vec::new());
                    fan.load(net, &mut w, &mut lbits, on);
                    fan.flip_all(&mut w, &mut queue, &mut lbits, &[first, second]);
                    let flipped = |p: usize| {
                        let n = 1 + p as u32;
                        on(p) ^ (n == first) ^ (n == second)
                    };
                    let case = format!("state {state:03b}, roots {first} then {second}");
                    assert_as_loaded(&g, &w, &lbits, flipped, &case);
                }
            }
        }
    }

    #[test]
    fn undoing_a_propagation_puts_back_every_word_its_record_growing_as_it_needs() {
        let g = crate::network::tic_tac_toe();
        let (fan, net) = (&g.fan, &g.net);
        let props = net.props.len();
        let (mut w, mut lbits) = (Vec::new(), Vec::new());
        fan.load(net, &mut w, &mut lbits, |p| {
            net.initial.contains(&(p as u32))
        });
        let mut queue = Vec::new();
        let mut rng = SmallRng::seed_from_u64(3);
        let does: Vec<u32> = net.legal.iter().flatten().map(|o| o.does).collect();
        let does: Vec<u32> = does.into_iter().filter(|&d| d != u32::MAX).collect();
        for round in 0..200 {
            // Propositions and `does` inputs, several at once (a root may come twice).
            let nodes: Vec<u32> = (0..1 + round % 4)
                .map(|_| match rng.gen_bool(0.5) {
                    true => 1 + rng.gen_range(0..props) as u32,
                    false => does[rng.gen_range(0..does.len())],
                })
                .collect();
            let (before, before_bits) = (w.clone(), lbits.clone());
            let (mut flipped, mut flipped_bits) = (w.clone(), lbits.clone());
            fan.flip_all(&mut flipped, &mut queue, &mut flipped_bits, &nodes);
            // No room at first: the record grows between the roots too.
            let mut record = Vec::new();
            fan.flip_all_undoable(&mut w, &mut queue, &mut lbits, &nodes, &mut record);
            assert_eq!(w, flipped, "words after flipping {nodes:?} (round {round})");
            assert_eq!(lbits, flipped_bits, "bits after flipping {nodes:?}");
            assert!(record.len() >= nodes.len(), "every root is recorded");
            super::undo(&mut w, &mut record);
            assert_eq!(w, before, "words put back after {nodes:?} (round {round})");
            assert!(record.is_empty());
            lbits = before_bits;
            // Keep some of the flips, so that later rounds start elsewhere.
            if round % 3 == 0 {
                (w, lbits) = (flipped, flipped_bits);
            }
        }
    }
}
