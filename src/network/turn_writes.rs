//! The turns played by their writes alone (see [`TurnWrites`]): a turn-taking game's move, with every
//! other role passing, often folds to writes of constants and of literals propagation keeps (the
//! squares a piece leaves and reaches), and is then played without its `does` input.

use super::ground::{FALSE, TRUE};
use super::steps::{fold_gate, resolve, writes, NONE};
use super::*;

impl NetGame {
    /// The writes of each turn that are all constants or literals of the state part, by the `does`
    /// input of the turn's move (see [`TurnWrites`]).
    ///
    /// The move part is folded once a role with every other role's no-op set, and then, for each of
    /// the role's moves, only the gates its input reaches are folded again: folding the whole move
    /// part for each move read speedChess's 1,566 move gates 7,666 times (0.8 s).
    pub(super) fn turn_writes(&self) -> TurnWrites {
        let n = &self.net;
        let np = n.props.len();
        let moves = &self.pass[self.pass_state..];
        let inputs_of_moves: usize = moves.iter().map(|g| (g.end - g.start) as usize).sum();
        let mut out = TurnWrites::none(self);
        // Each role's fold of the whole move part alone past the budget: nothing to try.
        if out.noop.iter().filter(|&&d| d == NO_NOOP).count() > 1
            || n.legal.len().saturating_mul(inputs_of_moves) > TURN_FOLD_WORK
        {
            return out;
        }
        // The propositions whose pending bits the state part keeps are read off those bits at each
        // turn (see `Fanout::kept_pending`), not written.
        let kept = self.fan.kept_pending();
        let read_off = |p: usize| kept.get(p / 64).is_some_and(|w| w >> (p % 64) & 1 == 1);
        let write_of = |sub: &[NetLit], p: usize| {
            let l = resolve(sub, n.next[p]);
            (writes(p, l) && !read_off(p)).then_some(l)
        };
        // Which move gates read each node, and which propositions' `next` each node is.
        let readers = Csr::new(
            n.num_nodes,
            moves.iter().enumerate().flat_map(|(k, g)| {
                n.inputs[g.start as usize..g.end as usize]
                    .iter()
                    .map(move |&l| ((l >> 1) as usize, k as u32))
            }),
        );
        let next_of = Csr::new(
            n.num_nodes,
            (0..np).map(|p| ((n.next[p] >> 1) as usize, p as u32)),
        );
        let mut sub = vec![NONE; n.num_nodes];
        let mut in_cone = vec![false; moves.len()];
        let (mut kept_inputs, mut cone, mut saved, mut changed) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut work, mut tried) = (0usize, 0usize);
        'roles: for (r, legal) in n.legal.iter().enumerate() {
            let others_pass = (0..n.legal.len()).all(|q| q == r || out.noop[q] != NO_NOOP);
            if !others_pass {
                continue;
            }
            work += inputs_of_moves;
            if work > TURN_FOLD_WORK {
                break 'roles;
            }
            // Every other role's no-op on, every other input off.
            let mut touched = Vec::new();
            for (q, outputs) in n.legal.iter().enumerate() {
                for (j, o) in outputs.iter().enumerate() {
                    if o.does != u32::MAX {
                        let on = q != r && j == self.noop_out[q] as usize;
                        sub[o.does as usize] = if on { TRUE } else { FALSE };
                        touched.push(o.does);
                    }
                }
            }
            for g in moves {
                if let Some(l) = fold_gate(&sub, n, g, &mut kept_inputs) {
                    sub[g.node as usize] = l;
                    touched.push(g.node);
                }
            }
            let base: Vec<(u32, NetLit)> = (0..np)
                .filter_map(|p| write_of(&sub, p).map(|l| (p as u32, l)))
                .collect();
            for o in legal {
                let Some(k) = (o.does as usize)
                    .checked_sub(out.first as usize)
                    .filter(|&k| k < out.start.len())
                else {
                    continue;
                };
                // The move gates the input reaches, in evaluation order, folded again with it on.
                cone.clear();
                cone.extend_from_slice(readers.of(o.does as usize));
                let mut at = 0;
                while let Some(&k) = cone.get(at) {
                    at += 1;
                    if !std::mem::replace(&mut in_cone[k as usize], true) {
                        let node = moves[k as usize].node as usize;
                        cone.extend_from_slice(readers.of(node));
                    }
                    if work + cone.len() > TURN_FOLD_WORK {
                        break 'roles;
                    }
                }
                cone.retain(|&k| std::mem::replace(&mut in_cone[k as usize], false));
                cone.sort_unstable();
                // The inputs of the move's way through the move gates, each read once more to fold.
                let way: usize = cone
                    .iter()
                    .map(|&k| (moves[k as usize].end - moves[k as usize].start) as usize)
                    .sum();
                work += at + way;
                if work > TURN_FOLD_WORK {
                    break 'roles;
                }
                saved.clear();
                saved.push((o.does, sub[o.does as usize]));
                sub[o.does as usize] = TRUE;
                for &k in &cone {
                    let g = &moves[k as usize];
                    saved.push((g.node, sub[g.node as usize]));
                    sub[g.node as usize] = fold_gate(&sub, n, g, &mut kept_inputs).unwrap_or(NONE);
                }
                // The writes: the role's common ones but where a refolded node is the `next`.
                changed.clear();
                for &(node, _) in &saved {
                    changed.extend_from_slice(next_of.of(node as usize));
                }
                changed.sort_unstable();
                changed.dedup();
                let mut writes: Vec<(u32, NetLit)> = base
                    .iter()
                    .copied()
                    .filter(|(p, _)| changed.binary_search(p).is_err())
                    .chain(
                        changed
                            .iter()
                            .filter_map(|&p| write_of(&sub, p as usize).map(|l| (p, l))),
                    )
                    .collect();
                writes.sort_unstable();
                for &(node, old) in saved.iter().rev() {
                    sub[node as usize] = old;
                }
                // Reading a write costs about what passing a change to one reader does: a move
                // whose way through the move gates reads many inputs may write more.
                if writes.len() <= TURN_WRITES.max(way / WAY_PER_WRITE)
                    && writes.iter().all(|&(_, l)| self.kept_by_propagation(l))
                {
                    out.set(k, &writes);
                }
                tried += 1;
                if tried == FIRST_TRIES && out.writes.is_empty() {
                    break 'roles;
                }
            }
            for t in touched {
                sub[t as usize] = NONE;
            }
        }
        if work > TURN_FOLD_WORK {
            out.start.fill(NO_WRITES);
            out.writes.clear();
            return out;
        }
        out.every_turn = out.covers_every_turn(n);
        out
    }

    /// Whether propagation keeps the value of literal `l`: a constant, a proposition, or a gate of
    /// the state part in its cone that counts all its inputs (a legal move's gate may leave its
    /// guard out).
    fn kept_by_propagation(&self, l: NetLit) -> bool {
        let n = &self.net;
        let node = (l >> 1) as usize;
        node <= n.props.len()
            || (n.first_gate..n.first_gate + n.state_gates).contains(&node) && {
                let g = (node - n.first_gate) as u32;
                self.fan.cone().binary_search(&g).is_ok() && !self.fan.skips(g)
            }
    }
}

/// Compressed sparse rows: the values given for each key below `keys`.
struct Csr {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    /// The rows of `pairs` (see [`prop::csr`]).
    fn new(keys: usize, pairs: impl Iterator<Item = (usize, u32)> + Clone) -> Csr {
        let (start, items) = prop::csr(keys, pairs);
        Csr { start, items }
    }

    fn of(&self, key: usize) -> &[u32] {
        match (self.start.get(key), self.start.get(key + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The most input readings finding the turns' writes may take (each role's whole move part once,
/// and each move's way through it): past it, no turn is played by its writes. speedChess takes
/// about 6 million (7,666 moves, each through about 800 inputs); chess's and hex's moves reach tens
/// of thousands of move gates each, and stop here at a few tens of milliseconds.
const TURN_FOLD_WORK: usize = 8_000_000;

/// The moves tried before giving up when none of them is played by its writes: where one is, most
/// are (a game's moves are alike), and hex's or chess's moves, each through tens of thousands of move
/// gates, would take 40-60 ms to find none.
const FIRST_TRIES: usize = 16;

/// The most propositions a turn played by its writes may write: each is read at every such turn,
/// where the move gates' way reaches only those that change (a move in breakthrough writes five or
/// six).
const TURN_WRITES: usize = 8;

/// A move may write one proposition more than [`TURN_WRITES`] for each this many inputs its way
/// through the move gates reads (speedChess: 31 writes against 802 inputs, its move part's
/// propagation on and off again 0.8 times as fast as its writes; simultaneousWin2's 16 writes
/// against 62 inputs, 0.8 times as fast as its move part).
const WAY_PER_WRITE: usize = 16;

/// No turn's writes for a `does` input.
const NO_WRITES: u32 = u32::MAX;

/// A role without a no-op.
const NO_NOOP: u32 = u32::MAX - 1;

/// The turns whose step is only writes of constants and of literals that propagation keeps up to
/// date: a turn-taking game's move sets the squares it empties and fills to constants, and many
/// games' moves are nothing else. Such a step is played without its `does` input: each written
/// proposition whose literal differs from its value flips, and the input's way through the move
/// gates (on, and off again at the next step) is not taken. In breakthrough that way is as long as
/// the flips' own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct TurnWrites {
    /// The node of the first `does` input.
    first: u32,
    /// Per `does` input (from `first`), where its writes start in `writes`, or [`NO_WRITES`].
    start: Vec<u32>,
    /// At each start, the number of writes, then each write as `proposition, literal`.
    writes: Vec<u32>,
    /// Per role, the `does` input of its no-op (`u32::MAX` where nothing reads it), or [`NO_NOOP`].
    noop: Vec<u32>,
    /// Whether every move but the no-ops has writes: a turn-taking game's every step is then played
    /// by its writes, and its playouts may leave the move part stale throughout (see
    /// [`prop::Fanout::flip_state`]). Where some turns are played the long way, each of them would
    /// sync the move part first: cephalopodMicro's playouts took 1.5 times as long.
    pub(super) every_turn: bool,
}

impl TurnWrites {
    /// Records the writes of the `k`-th `does` input (from `first`).
    fn set(&mut self, k: usize, writes: &[(u32, NetLit)]) {
        self.start[k] = self.writes.len() as u32;
        self.writes.push(writes.len() as u32);
        self.writes.extend(writes.iter().flat_map(|&(p, l)| [p, l]));
    }

    /// Whether every move but the no-ops has writes (see [`TurnWrites::every_turn`]).
    fn covers_every_turn(&self, n: &Grounded) -> bool {
        n.legal.iter().zip(&self.noop).all(|(legal, &noop)| {
            legal.iter().all(|o| {
                let slot = (o.does as usize)
                    .checked_sub(self.first as usize)
                    .and_then(|k| self.start.get(k));
                o.does == noop || slot.is_some_and(|&s| s != NO_WRITES)
            })
        })
    }

    /// No move's writes yet, each role's no-op found.
    fn none(g: &NetGame) -> TurnWrites {
        let n = &g.net;
        let np = n.props.len();
        TurnWrites {
            first: 1 + np as u32,
            start: vec![NO_WRITES; n.first_gate - 1 - np],
            writes: Vec::new(),
            noop: n
                .legal
                .iter()
                .zip(&g.noop_out)
                .map(|(legal, &j)| legal.get(j as usize).map_or(NO_NOOP, |o| o.does))
                .collect(),
            every_turn: false,
        }
    }

    /// The writes of the joint move of `does` inputs `chosen` (one per role, `u32::MAX` for a move
    /// nothing reads), as `proposition, literal` pairs: where every role but one plays its no-op
    /// and that one's move has such writes.
    #[inline]
    pub(super) fn of(&self, chosen: &[u32]) -> Option<&[u32]> {
        let mut mover = None;
        for (&d, &noop) in chosen.iter().zip(&self.noop) {
            if d != noop {
                if mover.is_some() {
                    return None;
                }
                mover = Some(d);
            }
        }
        let k = mover?.checked_sub(self.first)? as usize;
        let at = *self.start.get(k)? as usize;
        let count = *self.writes.get(at)? as usize;
        self.writes.get(at + 1..at + 1 + 2 * count)
    }

    /// Asks the processor to fetch the writes of `does` input `d` while the other roles choose: the
    /// table is too large for the nearest cache, and the chosen move's entry was a tenth of the
    /// playout loop's time.
    #[inline(always)]
    pub(super) fn prefetch(&self, d: u32) {
        if let Some(&at) = d
            .checked_sub(self.first)
            .and_then(|k| self.start.get(k as usize))
        {
            if let Some(x) = self.writes.get(at as usize) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a prefetch reads nothing and faults on no address.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        (x as *const u32).cast(),
                    );
                }
                #[cfg(not(target_arch = "x86_64"))]
                let _ = x;
            }
        }
    }

    /// Whether no turn has writes (every step is then played the long way).
    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// How many `does` inputs have writes.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.start.iter().filter(|&&s| s != NO_WRITES).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn turns_are_played_by_their_writes_where_the_others_pass() {
        // Tic-tac-toe: each mark fills its cell (a constant) and hands over control (a
        // proposition), so all nine marks of each role are writes alone.
        let g = crate::network::tic_tac_toe();
        assert_eq!(g.turn_writes().len(), 18);
        assert!(g.turn_writes().every_turn && !g.turn_writes().is_empty());
        // Rock-paper-scissors: no role has a no-op, so no move is a turn.
        let program =
            crate::syntax::parse_infix(include_str!("../../games/roshambo.gdl")).expect("parses");
        let g = NetGame::from_program(&program, "test").expect("grounds");
        assert_eq!(g.turn_writes().len(), 0);
        assert!(!g.turn_writes().every_turn && g.turn_writes().is_empty());
        // Without writes, the load's timing has no way by writes to choose.
        g.wait_compiled();
        assert!(!g.turns_by_writes());
    }

    /// [`NetGame::turn_writes`] the way it was first written: the whole move part folded for each
    /// move, and each move's way through the move gates found by a scan of them in order.
    fn turn_writes_by_whole_folds(g: &NetGame) -> TurnWrites {
        let n = &g.net;
        let np = n.props.len();
        let moves = &g.pass[g.pass_state..];
        let read_off = |p: usize| g.fan.kept_pending()[p / 64] >> (p % 64) & 1 == 1;
        let mut out = TurnWrites::none(g);
        let mut sub = vec![NONE; n.num_nodes];
        let (mut kept, mut scratch) = (Vec::new(), Vec::new());
        let mut tried = 0;
        for (r, legal) in n.legal.iter().enumerate() {
            if (0..n.legal.len()).any(|q| q != r && out.noop[q] == NO_NOOP) {
                continue;
            }
            for (j, o) in legal.iter().enumerate() {
                let Some(k) = (o.does as usize)
                    .checked_sub(out.first as usize)
                    .filter(|&k| k < out.start.len())
                else {
                    continue;
                };
                let (_, next, _) = g.fold_moves(r, j, &mut sub, &mut kept, &mut scratch);
                let writes: Vec<(u32, NetLit)> = (0..np)
                    .filter(|&p| writes(p, next[p]) && !read_off(p))
                    .map(|p| (p as u32, next[p]))
                    .collect();
                let mut reached = vec![false; n.num_nodes];
                reached[o.does as usize] = true;
                let mut way = 0;
                for m in moves {
                    let ins = &n.inputs[m.start as usize..m.end as usize];
                    if ins.iter().any(|&l| reached[(l >> 1) as usize]) {
                        reached[m.node as usize] = true;
                        way += ins.len();
                    }
                }
                if writes.len() <= TURN_WRITES.max(way / WAY_PER_WRITE)
                    && writes.iter().all(|&(_, l)| g.kept_by_propagation(l))
                {
                    out.set(k, &writes);
                }
                tried += 1;
                if tried == FIRST_TRIES && out.writes.is_empty() {
                    return out;
                }
            }
        }
        out.every_turn = out.covers_every_turn(n);
        out
    }

    /// A race to five: each role in turn moves its counter on one or two, the other passes; a step
    /// counter and whose turn it is change whatever the move.
    const RACE: &str = "
        (role left) (role right)
        (init (control left)) (init (step 0)) (init (at left 0)) (init (at right 0))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
        (succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12)
        (place 0) (place 1) (place 2) (place 3) (place 4) (place 5)
        (<= (legal ?r (go ?n)) (true (control ?r)) (true (at ?r ?x)) (succ ?x ?n) (place ?n))
        (<= (legal ?r (jump ?n))
            (true (control ?r)) (true (at ?r ?x)) (succ ?x ?y) (succ ?y ?n) (place ?n))
        (<= (legal ?r noop) (role ?r) (not (true (control ?r))))
        (<= (next (at ?r ?n)) (does ?r (go ?n)))
        (<= (next (at ?r ?n)) (does ?r (jump ?n)))
        (<= (next (at ?r ?x)) (true (at ?r ?x)) (does ?r noop))
        (<= (next (step ?n)) (true (step ?x)) (succ ?x ?n))
        (<= (next (control right)) (true (control left)))
        (<= (next (control left)) (true (control right)))
        (<= (won ?r) (true (at ?r 5)))
        (<= terminal (won ?r))
        (<= terminal (true (step 12)))
        (<= (goal ?r 100) (won ?r))
        (<= (goal ?r 0) (role ?r) (not (won ?r)))";

    #[test]
    fn each_move_folds_only_what_its_input_reaches_to_the_writes_of_a_whole_fold() {
        let race = crate::syntax::parse_kif(RACE).expect("parses");
        let games = [
            ("tictactoe.gdl", crate::network::tic_tac_toe()),
            (
                "race",
                NetGame::from_program(&race, "race").expect("grounds"),
            ),
        ]
        .into_iter()
        .chain(
            [
                "breakthrough.gdl",
                "connect4.gdl",
                "knightstour.gdl",
                "roshambo.gdl",
            ]
            .map(|name| {
                let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("games")
                    .join(name);
                let program = crate::syntax::parse_file(&file).expect("parses").0;
                (
                    name,
                    NetGame::from_program(&program, name).expect("grounds"),
                )
            }),
        );
        for (name, g) in games {
            let writes = g.turn_writes();
            assert_eq!(writes, turn_writes_by_whole_folds(&g), "{name}");
            // Not vacuous: these two play every turn by writes.
            if ["tictactoe.gdl", "race"].contains(&name) {
                assert!(writes.every_turn && !writes.is_empty(), "{name}");
            }
        }
    }

    #[test]
    fn a_counter_and_the_turn_are_read_off_their_pending_bits_not_written() {
        let race = crate::syntax::parse_kif(RACE).expect("parses");
        let g = NetGame::from_program(&race, "race").expect("grounds");
        let n = &g.net;
        let kept: Vec<String> = (0..n.props.len())
            .filter(|&p| g.fan.kept_pending()[p / 64] >> (p % 64) & 1 == 1)
            .map(|p| n.terms.kif(n.props[p]))
            .collect();
        // The counter's steps but the first (whose `next` is false), and both turns.
        assert!(kept.iter().any(|k| k == "(control left)"), "{kept:?}");
        assert!(kept.iter().any(|k| k == "(step 5)"), "{kept:?}");
        assert!(!kept.iter().any(|k| k.starts_with("(at ")), "{kept:?}");
        let writes = g.turn_writes();
        assert!(writes.every_turn);
        // Playouts by the writes reach the states the full passes reach.
        let mut by_pass = NetGame::from_program(&race, "race").expect("grounds");
        by_pass.set_playout_method(PlayoutMethod::FullPass);
        for seed in 0..20 {
            let start = g.initial_state();
            let (mut a, mut b) = (SmallRng::seed_from_u64(seed), SmallRng::seed_from_u64(seed));
            assert_eq!(
                g.random_playout_with(PlayoutMethod::Propagate, &start, &mut a, 100),
                by_pass.random_playout_with(PlayoutMethod::FullPass, &start, &mut b, 100),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn turns_played_by_their_writes_leave_the_move_part_stale_until_synced() {
        let g = crate::network::tic_tac_toe();
        let start = g.initial_state();
        let mut rng = SmallRng::seed_from_u64(5);
        let (state, steps) = g.random_playout_with(PlayoutMethod::Propagate, &start, &mut rng, 3);
        assert_eq!(steps, 3);
        let (mut words, mut lbits) = (Vec::new(), Vec::new());
        g.fan.load(&g.net, &mut words, &mut lbits, |p| state.get(p));
        PROP.with(|s| {
            let mut s = s.borrow_mut();
            assert_eq!(*s.at, *state.words());
            // Three marks by their writes: the frame gates and pending bits still show the start.
            assert!(s.moves_stale);
            assert!(s.words != words || s.lbits != lbits);
            g.sync_moves(&mut s);
            assert!(!s.moves_stale);
            assert_eq!(s.words, words);
            assert_eq!(s.lbits, lbits);
        });
        // And the next state read off the writes is the one the long way gives.
        let mut by_pass = crate::network::tic_tac_toe();
        by_pass.set_playout_method(PlayoutMethod::FullPass);
        let mut legal = Vec::new();
        let joint: Vec<NetMove> = (0..g.net.legal.len())
            .map(|r| {
                g.legal_moves(&state, r, &mut legal);
                legal[legal.len() - 1]
            })
            .collect();
        let before = g.with_prop(&state, |s| s.words.clone());
        assert_eq!(
            g.with_prop(&state, |s| g.prop_next(s, &joint)),
            by_pass.next_state(&state, &joint)
        );
        // Read off the words, which stay as they were.
        assert_eq!(g.with_prop(&state, |s| s.words.clone()), before);
    }
}
