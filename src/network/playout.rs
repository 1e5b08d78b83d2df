//! Playouts on the network: one at a time by change propagation or by a levelised pass (the faster
//! of the two is chosen at load), and 64 at once, one per bit of a word.

use crate::engine::ones;
use crate::game::{draw_move, nth_set_bit, random_index, Captures};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore};

use super::ground::LegalOut;
use super::steps::TurnStep;

use super::*;

impl NetGame {
    /// A random playout from `state` by `method`: uniformly random legal moves for every role (in role
    /// order, each drawn by [`draw_move`] from its legal moves in move order) until a terminal state,
    /// a role without moves, or `max_steps` joint moves. Returns the last state and the number of
    /// joint moves played.
    pub fn random_playout_with(
        &self,
        method: PlayoutMethod,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
    ) -> (BitState, u32) {
        self.random_playout_by(method, self.step_way(), state, rng, max_steps)
    }

    /// [`NetGame::random_playout_with`], propagation playing each step the `way` given (see
    /// [`StepWay`]).
    pub(super) fn random_playout_by(
        &self,
        method: PlayoutMethod,
        way: StepWay,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
    ) -> (BitState, u32) {
        match method {
            PlayoutMethod::FullPass => self.playout_full_pass(state, rng, max_steps, false),
            PlayoutMethod::Propagate => self.playout_propagate::<false>(
                state,
                rng,
                max_steps,
                None,
                way,
                &mut |_, _, words, _, rng| pick_random(words, rng),
            ),
        }
    }

    /// A random playout (see [`NetGame::random_playout_with`]) in which a role with a move that makes
    /// one of its winning propositions true plays the first such move (see `wins`): the playout then
    /// ends in the role's win. Without winning propositions it is the plain random playout.
    pub fn winning_playout(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
        block: bool,
    ) -> (BitState, u32) {
        let wins = self
            .wins
            .get_or_init(|| wins::wins_of(&self.net, &self.sets));
        if !wins.any() {
            return self.random_playout_with(self.playout_method(), state, rng, max_steps);
        }
        let blocks = block.then(|| {
            self.blocks
                .get_or_init(|| blocks::blocks_of(&self.net, wins))
                .as_ref()
        });
        let wins = Some(WinPlay { wins, blocks });
        self.playout_propagate::<true>(
            state,
            rng,
            max_steps,
            wins,
            StepWay {
                writes: false,
                undo: false,
            },
            &mut |_, _, words, _, rng| pick_random(words, rng),
        )
    }

    /// A propagating playout whose moves `guide` picks (see [`Game::guided_playout`]), except that,
    /// with `captures`, a role with moves that take a piece plays one of them (drawn uniformly) with
    /// the probability given beside the table (see [`Game::capturing_playout`]); a game whose playouts
    /// take the full pass plays it through the trait's move methods.
    pub(super) fn guided_playout_with(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        numbers: &mut Vec<u32>,
        max_steps: u32,
        captures: Option<(&Captures, f64)>,
        guide: &mut dyn crate::game::PlayoutGuide,
    ) -> (BitState, u32) {
        let legal = &self.net.legal;
        let way = self.step_way();
        self.playout_propagate::<false>(
            state,
            rng,
            max_steps,
            None,
            way,
            &mut |r, first, words, w, rng| {
                let outs = legal[r].get(first * 64..).unwrap_or(&[]);
                if let Some((table, rate)) = captures {
                    if let Some(k) = pick_capture(table, rate, outs, r, words, w, numbers, rng) {
                        return Some(k);
                    }
                }
                numbers.clear();
                for (i, &x) in words.iter().enumerate() {
                    let mut x = x;
                    while x != 0 {
                        let j = i * 64 + x.trailing_zeros() as usize;
                        x &= x - 1;
                        numbers.push(outs.get(j).map_or(u32::MAX, |o| o.mv));
                    }
                }
                if numbers.is_empty() {
                    return None;
                }
                let k = guide.pick(r, numbers, rng).min(numbers.len() - 1);
                kth_bit(words, k as u32)
            },
        )
    }

    /// A playout by change propagation; `pick(role, first, legal words, node words, rng)` chooses a
    /// role's move among the set bits of its legal words from word `first` on (bit `b` is the role's
    /// `64 * first + b`-th legal output) and gives that `b`.
    /// With `wins`, a role's move that makes one of its winning propositions true is played instead,
    /// and a blocking playout takes back and replays (see [`Retreat`]) a step that lets another role
    /// win so. `WINS` compiles the winning and blocking steps in: without them the loop stays small
    /// enough for the propagation to be inlined into it (a random playout lost 5 to 17% when one
    /// function held both). Without `WINS`, the steps are played the `way` given (see [`StepWay`]):
    /// the winning playouts try each step's inputs, so they take every step the long way, the joint
    /// move left set.
    fn playout_propagate<const WINS: bool>(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
        wins: Option<WinPlay<'_>>,
        way: StepWay,
        pick: &mut impl FnMut(usize, usize, &[u64], &[u32], &mut SmallRng) -> Option<u32>,
    ) -> (BitState, u32) {
        let n = &self.net;
        let np = n.props.len();
        let sets = &self.sets;
        let fan = &self.fan;
        PROP.with(|s| {
            let mut s = s.borrow_mut();
            self.move_prop_to(&mut s, state);
            let PropScratch {
                words: w,
                queue,
                lbits,
                comb,
                chosen,
                flips,
                played,
                snap,
                lsnap,
                snap_state,
                at,
                goals_fresh,
                tries,
                back_inputs,
                back_flips,
                cands,
                threats,
                flip_nodes,
                moves_stale,
                snap_stale,
                undo: record,
                bits_before,
                ..
            } = &mut *s;
            let turns =
                (!WINS && way.writes).then(|| self.turn_writes.get_or_init(|| self.turn_writes()));
            if **snap_state != *state.words() {
                snap.clear();
                snap.extend_from_slice(w);
                lsnap.clear();
                lsnap.extend_from_slice(lbits);
                snap_state.clear();
                snap_state.extend_from_slice(state.words());
                *snap_stale = *moves_stale;
            }
            *goals_fresh = false;
            played.clear();
            played.resize(n.legal.len(), u32::MAX);
            let roles = n.legal.len();
            let pw = fan.pending_word();
            let block = if WINS {
                wins.as_ref().and_then(|x| x.blocks)
            } else {
                None
            };
            // Whether the way back over the last step is recorded, and what is left to try there.
            let (mut recorded, mut retreat) = (false, Retreat::Untried);
            let mut steps = 0;
            while steps < max_steps && prop::lit(w, n.terminal) == 0 {
                chosen.clear();
                for r in 0..roles {
                    let Some(d) = self.choose(sets, r, w, lbits, comb, rng, pick) else {
                        break;
                    };
                    if let Some(t) = turns {
                        t.prefetch(d);
                    }
                    chosen.push(d);
                }
                if chosen.len() < roles {
                    break;
                }
                // A turn that only writes constants and literals propagation keeps: its flips
                // straight away, every literal read before any flips; through the state part alone
                // where every turn is so played (the move part is then read by no step).
                if let Some(writes) = turns.and_then(|t| t.of(chosen)) {
                    flip_nodes.clear();
                    for pair in writes.chunks_exact(2) {
                        let (p, l) = (pair[0] + 1, pair[1]);
                        if prop::lit(w, l) != prop::lit(w, p << 1) {
                            flip_nodes.push(p);
                        }
                    }
                    // And those no move changes, off their pending bits.
                    let kept = fan.kept_pending().iter();
                    let pending = lbits[pw..].iter().zip(kept).map(|(&b, &k)| b & k);
                    prop::push_prop_nodes(pending, flip_nodes);
                    if turns.is_some_and(|t| t.every_turn) {
                        flip_state_part(fan, w, queue, lbits, flip_nodes);
                        *moves_stale = true;
                    } else {
                        fan.flip_all(w, queue, lbits, flip_nodes);
                    }
                    steps += 1;
                    continue;
                }
                fan.sync_moves(n, w, lbits, moves_stale);
                if !WINS && way.undo {
                    // The joint move goes on only to read which propositions change, and is taken
                    // back by putting back the words it wrote: cheaper than propagating it off.
                    flip_nodes.clear();
                    flip_nodes.extend(chosen.iter().copied().filter(|&d| d != u32::MAX));
                    let from = fan.move_bits_from();
                    bits_before.clear();
                    bits_before.extend_from_slice(&lbits[from..]);
                    fan.flip_all_undoable(w, queue, lbits, flip_nodes, record);
                    flips.clear();
                    flips.extend_from_slice(&lbits[pw..]);
                    prop::undo(w, record);
                    lbits[from..].copy_from_slice(bits_before);
                    flip_props(fan, w, queue, lbits, flips, flip_nodes);
                    steps += 1;
                    continue;
                }
                // The last joint move stays set until now (legal, goal and terminal do not read it), so
                // a role that plays the same input again (a `noop`, often) changes nothing. Every new
                // input goes on before any old one goes off (on the queue in that order): an OR over
                // several roles' inputs (some role moved) then stays true instead of flipping twice.
                flip_nodes.clear();
                for (&old, &new) in played.iter().zip(chosen.iter()) {
                    if old != new && new != u32::MAX {
                        flip_nodes.push(new);
                    }
                }
                for (old, &new) in played.iter_mut().zip(chosen.iter()) {
                    if *old != new {
                        if *old != u32::MAX {
                            flip_nodes.push(*old);
                        }
                        *old = new;
                    }
                }
                fan.flip_all(w, queue, lbits, flip_nodes);
                let mut again = false;
                if let (true, Some(wp)) = (WINS, &wins) {
                    let winner = self.play_a_win(wp.wins, played, w, queue, lbits, comb, tries);
                    if let (Some(win), Some(blocks), true) = (winner, block, recorded) {
                        if retreat != Retreat::Exhausted {
                            // Back to the last step's state, with its inputs set.
                            for (input, &d) in played.iter_mut().zip(back_inputs.iter()) {
                                set_input(fan, w, queue, lbits, input, d);
                            }
                            flip_props(fan, w, queue, lbits, back_flips, flip_nodes);
                            retreat = self.draw_again(
                                win,
                                blocks,
                                played,
                                (w, queue, lbits, comb),
                                (cands, threats),
                                back_flips,
                                retreat,
                                rng,
                            );
                            steps -= 1;
                            again = true;
                        }
                    }
                }
                // The propositions whose `next` differs from their value, all read before any flips.
                flips.clear();
                flips.extend_from_slice(&lbits[pw..]);
                flip_props(fan, w, queue, lbits, flips, flip_nodes);
                if WINS && block.is_some() {
                    back_inputs.clear();
                    back_inputs.extend_from_slice(played);
                    std::mem::swap(flips, back_flips);
                    recorded = true;
                    if !again {
                        retreat = Retreat::Untried;
                    }
                }
                steps += 1;
            }
            // Between playouts no input is played.
            if played.iter().any(|&d| d != u32::MAX) {
                fan.sync_moves(n, w, lbits, moves_stale);
            }
            for &d in played.iter() {
                if d != u32::MAX {
                    fan.flip(w, queue, lbits, d);
                }
            }
            let mut out = BitState::with_words(self.words);
            pack_values(&w[1..=np], out.words_mut());
            at.clear();
            at.extend_from_slice(out.words());
            (out, steps)
        })
    }

    /// With every role's drawn input set (`played`), makes the first role with a move that makes one
    /// of its winning propositions true play the first such move instead. Only the legal moves that
    /// may do so (`wins.moves`) are tried: each in turn as the role's input, and since no winning
    /// proposition holds before the step (the state is not terminal), one that is about to become
    /// true shows as a pending bit. Returns the role that wins so and its `does` input, if one does.
    #[allow(clippy::too_many_arguments)]
    fn play_a_win(
        &self,
        wins: &wins::Wins,
        played: &mut [u32],
        w: &mut [u32],
        queue: &mut Vec<prop::Change>,
        lbits: &mut [u64],
        comb: &mut Vec<u64>,
        tries: &mut Vec<u32>,
    ) -> Option<(usize, u32)> {
        let (fan, sets, pw) = (&self.fan, &self.sets, self.fan.pending_word());
        for (r, input) in played.iter_mut().enumerate() {
            let Some(mask) = wins.moves.get(r).filter(|m| m.iter().any(|&x| x != 0)) else {
                continue;
            };
            tries.clear();
            if let Some(bits) = self.role_bits(r, w, lbits, comb) {
                let base = sets.word[r] as usize * 64;
                for (i, (&b, &m)) in bits.iter().zip(mask).enumerate() {
                    let mut x = b & m;
                    while x != 0 {
                        let j = i * 64 + x.trailing_zeros() as usize;
                        x &= x - 1;
                        tries.push(sets.bit_does.get(base + j).copied().unwrap_or(u32::MAX));
                    }
                }
            }
            if tries.is_empty() {
                continue;
            }
            let drawn = *input;
            let props = &wins.props[r];
            for &d in tries.iter() {
                set_input(fan, w, queue, lbits, input, d);
                let pending = lbits.get(pw..).unwrap_or(&[]);
                if pending.iter().zip(props).any(|(&p, &q)| p & q != 0) {
                    return Some((r, d));
                }
            }
            set_input(fan, w, queue, lbits, input, drawn);
        }
        None
    }

    /// Back in the state of a step after which role `q` wins by the `does` input `win`, with that
    /// step's inputs set and its changes in `changed`: sets another move for the role that alone had
    /// a choice there, drawn uniformly among those not yet tried that may block every win seen (see
    /// [`blocks`]), and says whether any is left to try. Without a single role other than `q` that
    /// had a choice, nothing changes; when no move may block, the last one looked at stays set.
    #[allow(clippy::too_many_arguments)]
    fn draw_again(
        &self,
        (q, win): (usize, u32),
        blocks: Option<&blocks::Blocks>,
        played: &mut [u32],
        (w, queue, lbits, comb): Words<'_>,
        (cands, threats): (&mut Vec<u32>, &mut Vec<u64>),
        changed: &[u64],
        retreat: Retreat,
        rng: &mut SmallRng,
    ) -> Retreat {
        let r = match retreat {
            Retreat::Exhausted => return Retreat::Exhausted,
            Retreat::Mover(r) => r,
            Retreat::Untried => {
                let mut mover = None;
                for r in 0..played.len() {
                    let n: u32 = self
                        .role_bits(r, w, lbits, comb)
                        .map_or(0, |b| b.iter().map(|x| x.count_ones()).sum());
                    if n > 1 {
                        if mover.is_some() {
                            return Retreat::Exhausted;
                        }
                        mover = Some(r);
                    }
                }
                let Some(r) = mover.filter(|&r| r != q) else {
                    return Retreat::Exhausted;
                };
                let sets = &self.sets;
                let base = sets.word[r] as usize * 64;
                cands.clear();
                if let Some(bits) = self.role_bits(r, w, lbits, comb) {
                    let does = ones(bits).filter_map(|j| sets.bit_does.get(base + j));
                    cands.extend(does.filter(|&&d| d != played[r]));
                }
                threats.clear();
                r
            }
        };
        // Each win seen: its support, and the part of it that the move tried before changed.
        let support = blocks.map_or(&[][..], |b| b.support(win));
        let words = support.len();
        if words > 0 {
            threats.extend_from_slice(support);
            threats.extend(support.iter().zip(changed).map(|(&s, &c)| s & c));
        }
        let pw = self.fan.pending_word();
        while !cands.is_empty() {
            let d = cands.swap_remove(rng.gen_range(0..cands.len()));
            set_input(&self.fan, w, queue, lbits, &mut played[r], d);
            let pending = lbits.get(pw..).unwrap_or(&[]);
            let may_block = words == 0
                || threats.chunks(2 * words).all(|t| {
                    let (support, was) = t.split_at(words);
                    let now = support.iter().zip(pending).map(|(&s, &p)| s & p);
                    now.zip(was).any(|(a, &b)| a != b)
                });
            if may_block {
                return if cands.is_empty() {
                    Retreat::Exhausted
                } else {
                    Retreat::Mover(r)
                };
            }
        }
        Retreat::Exhausted
    }

    /// Role `r`'s move, as `pick` chooses it among the role's legal bits (a random pick draws the
    /// `k`-th of its legal moves in move order, as the full pass does): its `does` node (`u32::MAX`:
    /// none), or `None` when the role has no legal move.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn choose(
        &self,
        sets: &LegalSets,
        r: usize,
        w: &[u32],
        lbits: &[u64],
        comb: &mut Vec<u64>,
        rng: &mut SmallRng,
        pick: &mut impl FnMut(usize, usize, &[u64], &[u32], &mut SmallRng) -> Option<u32>,
    ) -> Option<u32> {
        let (first, words) = if sets.word.get(r + 1)? - sets.word.get(r)? > SPAN_FROM_WORDS {
            self.role_span(r, w, lbits, comb)?
        } else {
            (0, self.role_bits(r, w, lbits, comb)?)
        };
        let bit = pick(r, first, words, w, rng)?;
        sets.bit_does
            .get((sets.word[r] as usize + first) * 64 + bit as usize)
            .copied()
    }

    /// A playout by levelised passes, uniformly random but for decisive moves when `decisive`: where
    /// one role has a choice of at most 64 moves, each of them is played in a lane of its own (bit `i`
    /// of every node is the state after move `i`), and a move that ends the game with goal 100 for the
    /// role is played when there is one. The lanes cost one pass, as one move does: the lane of the
    /// move played becomes the next state, its state part already evaluated.
    pub(super) fn playout_full_pass(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
        decisive: bool,
    ) -> (BitState, u32) {
        let n = &self.net;
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            self.start_pass(&mut s, state);
            let Scratch { vals, moves, .. } = &mut *s;
            let mut steps = 0;
            while steps < max_steps {
                if lit_val(vals, n.terminal) & 1 != 0 {
                    break;
                }
                if decisive {
                    match self.decisive_step(vals, rng) {
                        Lanes::Played => {
                            steps += 1;
                            continue;
                        }
                        Lanes::Stuck => break,
                        Lanes::NoChoice => {}
                    }
                }
                if !self.random_step(vals, moves, rng) {
                    break;
                }
                steps += 1;
            }
            (self.lane_state(vals, 0), steps)
        })
    }

    /// Loads `state` into the scratch's values for a pass-based playout, its state part evaluated
    /// (from the copy kept of the last start state when it is the same); the scratch no longer
    /// matches any state afterwards, as the playout moves on.
    pub(super) fn start_pass(&self, s: &mut Scratch, state: &BitState) {
        let n = &self.net;
        let size = n.num_nodes + n.props.len();
        if s.snap_game == self.id && s.vals.len() == size && *s.snap_state == *state.words() {
            let Scratch { vals, snap, .. } = s;
            vals[..snap.len()].copy_from_slice(snap);
        } else {
            if !(s.valid && s.game == self.id && *s.state == *state.words()) {
                self.load(s, state);
            }
            let Scratch {
                vals,
                snap,
                snap_state,
                ..
            } = s;
            snap.clear();
            snap.extend_from_slice(&vals[..n.num_nodes]);
            snap_state.clear();
            snap_state.extend_from_slice(state.words());
            s.snap_game = self.id;
        }
        s.valid = false;
    }

    /// One uniformly random joint move on `vals` (a state, its state part evaluated, every lane
    /// alike, lane 0 read): every role draws from its legal moves, and the state is advanced and its
    /// state part evaluated (by the joint move's specialised step and its cone where it has them:
    /// every lane must hold the same state for the gates outside the cone to stay right). False,
    /// with nothing played, when a role has no legal move.
    pub(super) fn random_step(
        &self,
        vals: &mut [u64],
        moves: &mut Vec<u32>,
        rng: &mut SmallRng,
    ) -> bool {
        let n = &self.net;
        let np = n.props.len();
        let mut turn = TurnStep::default();
        for (r, legal) in n.legal.iter().enumerate() {
            // Each output goes into the next free slot, kept only when legal: no branch on a coin
            // toss (a test and push per output took a third of a tic-tac-toe playout; bits and a
            // drawn set bit took 7% more than this).
            if moves.len() < legal.len() {
                moves.resize(legal.len(), 0);
            }
            let slots = &mut moves[..legal.len()];
            let mut count = 0;
            for (j, o) in legal.iter().enumerate() {
                if let Some(slot) = slots.get_mut(count) {
                    *slot = j as u32;
                }
                count += (lit_val(vals, o.lit) & 1) as usize;
            }
            if count == 0 {
                for v in &mut vals[1 + np..n.first_gate] {
                    *v = 0;
                }
                return false;
            }
            let j = slots[draw_move(rng, count)] as usize;
            let d = legal[j].does;
            if d != u32::MAX {
                vals[d as usize] = !0;
            }
            turn.add(r, j, self.noop_out[r]);
        }
        let stepped = turn
            .step()
            .and_then(|(r, j)| self.run_move_step(vals, r, j));
        match stepped {
            Some(true) => {}
            Some(false) => self.run_pass(Part::State, vals),
            None => {
                self.play_inputs(vals);
                self.run_pass(Part::State, vals);
            }
        }
        true
    }

    /// The state in lane `lane` of `vals`.
    pub(super) fn lane_state(&self, vals: &[u64], lane: u32) -> BitState {
        let mut out = BitState::with_words(self.words);
        let props = vals.get(1..=self.net.props.len()).unwrap_or(&[]);
        for (word, chunk) in out.words_mut().iter_mut().zip(props.chunks(64)) {
            for (i, &v) in chunk.iter().enumerate() {
                *word |= (v >> lane & 1) << i;
            }
        }
        out
    }

    /// Plays the `does` inputs set in `vals` (in every lane): the move part (`move_part`, the pass's
    /// move gates) evaluated, each proposition set to its `next`, and the inputs cleared. The state
    /// part is left for the caller to evaluate.
    pub(super) fn play_inputs(&self, vals: &mut [u64]) {
        self.run_pass(Part::Moves, vals);
        self.run_pass(Part::Next, vals);
    }

    /// One step of a decisive playout on `vals` (a state, its state part evaluated, every lane alike):
    /// the role with a choice plays each of its moves in a lane ([`NetGame::try_moves`]), the first
    /// decisive one in move order if any and otherwise one drawn by [`random_index`], as
    /// [`Game::decisive_playout`]'s default does, and the lane played is copied to every lane.
    fn decisive_step(&self, vals: &mut [u64], rng: &mut SmallRng) -> Lanes {
        let (count, wins) = match self.try_moves(vals) {
            Ok((_, count, wins)) => (count, wins),
            Err(status) => return status,
        };
        let lane = if wins != 0 {
            wins.trailing_zeros()
        } else {
            random_index(rng, count) as u32
        };
        broadcast(&mut vals[..self.net.num_nodes], lane);
        Lanes::Played
    }

    /// The first move (by its index among `role`'s legal moves) with which `role`, the one role with
    /// a choice in `state`, ends the game with goal 100, tried in the lanes of one pass.
    pub(super) fn decisive_move_of(&self, state: &BitState, role: usize) -> Option<usize> {
        self.with_state(state, |s| {
            let tried = self.try_moves(&mut s.vals);
            // The lanes now hold the states after the moves.
            s.valid = false;
            match tried {
                Ok((Some(mover), _, wins)) if mover == role && wins != 0 => {
                    Some(wins.trailing_zeros() as usize)
                }
                _ => None,
            }
        })
    }

    /// Plays each move of the role with a choice in `vals` (a state, its state part evaluated, every
    /// lane alike) in a lane of its own: lane `i` becomes the state after the role's `i`-th legal
    /// move, its state part evaluated. Returns that role (when every role is forced, one lane: the
    /// role whose move is not the no-op, or `None`), its number of moves, and the lanes that end the game with goal 100 for it; or, with
    /// `vals` untouched, [`Lanes::Stuck`] when a role has no legal move and [`Lanes::NoChoice`] when
    /// several roles have a choice or one has more than 64 moves.
    pub(super) fn try_moves(&self, vals: &mut [u64]) -> Result<(Option<usize>, usize, u64), Lanes> {
        let n = &self.net;
        let mut chooser = None;
        for r in 0..n.legal.len() {
            let count = self.legal_count(vals, r);
            match count {
                0 => return Err(Lanes::Stuck),
                1 => {}
                2..=64 if chooser.is_none() => chooser = Some((r, count)),
                _ => return Err(Lanes::NoChoice),
            }
        }
        let (mover, count) = match chooser {
            Some((r, c)) => (Some(r), c),
            // Every role has one move: the role in control is the one whose move is not the no-op,
            // as `Game::mover` says (its one move may end the game).
            None => (self.forced_mover(vals), 1),
        };
        let all = if count == 64 { !0 } else { (1u64 << count) - 1 };
        self.set_inputs(
            vals,
            |r, lane| if Some(r) == mover { 1 << lane } else { !0 },
        );
        self.play_inputs(vals);
        self.run_pass(Part::State, vals);
        let ended = lit_val(vals, n.terminal) & all;
        let mut wins = 0;
        if ended != 0 {
            // The playout's pass leaves out the gates only goals read: the whole state part, once.
            self.run_pass(Part::AllState, vals);
            let won = mover.and_then(|m| n.goals[m].iter().find(|(v, _)| *v == 100));
            if let Some(&(_, won)) = won {
                wins = ended & lit_val(vals, won);
            }
        }
        Ok((mover, count, wins))
    }

    /// The number of `role`'s legal moves in lane 0 of `vals`.
    pub(super) fn legal_count(&self, vals: &[u64], role: usize) -> usize {
        self.net.legal[role]
            .iter()
            .filter(|o| lit_val(vals, o.lit) & 1 != 0)
            .count()
    }

    /// Sets the `does` input of each role's `i`-th legal move in `vals` (a state, lanes alike) to
    /// `lanes(role, i)`: the lanes that play it.
    pub(super) fn set_inputs(&self, vals: &mut [u64], lanes: impl Fn(usize, usize) -> u64) {
        for (r, legal) in self.net.legal.iter().enumerate() {
            let mut i = 0;
            for o in legal {
                if lit_val(vals, o.lit) & 1 == 0 {
                    continue;
                }
                if o.does != u32::MAX {
                    vals[o.does as usize] |= lanes(r, i);
                }
                i += 1;
            }
        }
    }

    /// The one role whose one legal move in `vals` is not the no-op, if exactly one is.
    fn forced_mover(&self, vals: &[u64]) -> Option<usize> {
        let mut found = None;
        for (r, legal) in self.net.legal.iter().enumerate() {
            let moving = legal
                .iter()
                .any(|o| lit_val(vals, o.lit) & 1 != 0 && !self.is_noop(o.mv));
            if moving {
                if found.is_some() {
                    return None;
                }
                found = Some(r);
            }
        }
        found
    }
}

/// Makes `d` the role's input in place of `*played` (`u32::MAX`: none), flipping what changes.
#[inline]
fn set_input(
    fan: &prop::Fanout,
    w: &mut [u32],
    queue: &mut Vec<prop::Change>,
    lbits: &mut [u64],
    played: &mut u32,
    d: u32,
) {
    if *played != d {
        if d != u32::MAX {
            fan.flip(w, queue, lbits, d);
        }
        if *played != u32::MAX {
            fan.flip(w, queue, lbits, *played);
        }
        *played = d;
    }
}

/// The words a propagating playout works on: node values, propagation queue, legal and pending
/// bits, and room to combine a role's legal groups.
type Words<'a> = (
    &'a mut [u32],
    &'a mut Vec<prop::Change>,
    &'a mut [u64],
    &'a mut Vec<u64>,
);

/// What a winning playout knows: the winning propositions, and for a blocking playout which moves
/// may block a win (`None` inside: every move may).
struct WinPlay<'a> {
    wins: &'a wins::Wins,
    blocks: Option<Option<&'a blocks::Blocks>>,
}

/// Flips the proposition nodes `nodes` through the state part alone ([`prop::Fanout::flip_state`]).
/// Out of line, so that the playout loop holds one inlined copy of the propagation, as it did
/// before this way existed (the games that never take it keep their loop); a step pays one call.
#[inline(never)]
fn flip_state_part(
    fan: &prop::Fanout,
    w: &mut [u32],
    queue: &mut Vec<prop::Change>,
    lbits: &mut [u64],
    nodes: &[u32],
) {
    fan.flip_state(w, queue, lbits, nodes);
}

/// Flips the propositions set in `words` (proposition `p` at bit `p`), listed in `nodes` first.
#[inline(always)]
fn flip_props(
    fan: &prop::Fanout,
    w: &mut [u32],
    queue: &mut Vec<prop::Change>,
    lbits: &mut [u64],
    words: &[u64],
    nodes: &mut Vec<u32>,
) {
    nodes.clear();
    prop::push_prop_nodes(words.iter().copied(), nodes);
    fan.flip_all(w, queue, lbits, nodes);
}

/// Where a blocking playout stands with its last step, which let another role win (see
/// [`Game::winning_playout`]): it replays the step with another move of the role that alone had a
/// choice there, until one leaves no such win or none is left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retreat {
    /// The step has not been taken back yet.
    Untried,
    /// The step's mover; some of its moves are left to try.
    Mover(usize),
    /// Nothing more to try: the step stands.
    Exhausted,
}

/// What [`NetGame::decisive_step`] did.
pub(super) enum Lanes {
    /// A move was played.
    Played,
    /// A role has no legal move.
    Stuck,
    /// No single role had a choice of at most 64 moves: nothing was played.
    NoChoice,
}

/// Packs the value bits of `words` (node words) into `out`, 64 to a word: word `i`'s bit `j` is
/// the value of `words[64 * i + j]`. A word at a time and without a branch, since it runs once a
/// playout (bit by bit through the state's setter, the loop reread the scratch vector each time).
#[inline]
fn pack_values(words: &[u32], out: &mut [u64]) {
    for (word, chunk) in out.iter_mut().zip(words.chunks(64)) {
        let mut x = 0u64;
        for (j, &v) in chunk.iter().enumerate() {
            x |= u64::from(v >> 31) << j;
        }
        *word = x;
    }
}

/// Makes every lane of `vals` a copy of lane `lane`.
pub(super) fn broadcast(vals: &mut [u64], lane: u32) {
    for v in vals {
        *v = 0u64.wrapping_sub((*v >> lane) & 1);
    }
}

/// With probability `rate`, a uniformly drawn legal bit (among `words`, over `outs`) of a move of
/// `role` that takes a piece in the state of node words `w`; `None` when the draw says no or no move
/// takes one. `bits` is scratch space.
#[allow(clippy::too_many_arguments)]
fn pick_capture(
    table: &Captures,
    rate: f64,
    outs: &[LegalOut],
    role: usize,
    words: &[u64],
    w: &[u32],
    bits: &mut Vec<u32>,
    rng: &mut SmallRng,
) -> Option<u32> {
    if words.iter().map(|x| x.count_ones()).sum::<u32>() < 2 {
        return None;
    }
    bits.clear();
    bits.extend(
        ones(words)
            .filter(|&j| {
                outs.get(j).is_some_and(|o| {
                    let held = |&p: &u32| w.get(1 + p as usize).is_some_and(|x| x >> 31 == 1);
                    table.victims(role, o.mv).iter().any(held)
                })
            })
            .map(|j| j as u32),
    );
    // A uniform draw in [0, 1) from the top 53 bits.
    if bits.is_empty() || (rng.next_u64() >> 11) as f64 >= rate * (1u64 << 53) as f64 {
        return None;
    }
    bits.get(random_index(rng, bits.len())).copied()
}

/// A role with more words of legal bits than this draws from the words its groups that hold cover
/// alone ([`NetGame::role_span`]).
const SPAN_FROM_WORDS: u32 = 8;

/// A uniformly random set bit of `words`: its offset from the first word's bit 0.
#[inline]
fn pick_random(words: &[u64], rng: &mut SmallRng) -> Option<u32> {
    let count: u32 = words.iter().map(|x| x.count_ones()).sum();
    if count == 0 {
        return None;
    }
    kth_bit(words, draw_move(rng, count as usize) as u32)
}

/// The most words [`kth_bit`] reads all of, without a branch (breakthrough's roles hold three).
const FEW_WORDS: usize = 4;

/// The `k`-th set bit of `words` (from 0): its offset from the first word's bit 0.
///
/// Over a few words, every word is read and the one holding the bit kept without a branch: which
/// word a random draw lands in is a branch the processor cannot guess (breakthrough, three words a
/// role, 1.04x). Over more, the words past the bit are not worth reading; that loop is kept out of
/// line (inlined, speedChess read 0.96-0.98x).
#[inline]
fn kth_bit(words: &[u64], k: u32) -> Option<u32> {
    if words.len() > FEW_WORDS {
        return kth_bit_of_many(words, k);
    }
    let (mut before, mut at, mut word, mut base) = (0u32, u32::MAX, 0u64, 0u32);
    for (i, &x) in words.iter().enumerate() {
        let c = x.count_ones();
        let here = k.wrapping_sub(before) < c;
        at = if here { i as u32 } else { at };
        word = if here { x } else { word };
        base = if here { before } else { base };
        before += c;
    }
    (at != u32::MAX).then(|| at * 64 + nth_set_bit(word, (k - base) as usize))
}

/// [`kth_bit`] over many words: up to the word that holds the bit.
#[inline(never)]
fn kth_bit_of_many(words: &[u64], mut k: u32) -> Option<u32> {
    for (i, &x) in words.iter().enumerate() {
        let c = x.count_ones();
        if k < c {
            return Some(i as u32 * 64 + nth_set_bit(x, k as usize));
        }
        k -= c;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_kth_set_bit_of_a_few_words_or_many_is_the_kth_counted_one_by_one() {
        let mut rng = SmallRng::seed_from_u64(3);
        for len in 0..8 {
            for _ in 0..20 {
                let words: Vec<u64> = (0..len)
                    .map(|_| rng.next_u64() & rng.next_u64() & rng.next_u64())
                    .collect();
                let set: Vec<u32> = (0..64 * len as u32)
                    .filter(|&b| words[b as usize / 64] >> (b % 64) & 1 == 1)
                    .collect();
                for k in 0..set.len() as u32 + 2 {
                    let expected = set.get(k as usize).copied();
                    assert_eq!(kth_bit(&words, k), expected, "bit {k} of {words:x?}");
                }
            }
        }
    }
}
