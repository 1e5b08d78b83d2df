//! Which moves may block a win: what a blocking playout (see [`crate::game::Game::winning_playout`])
//! reads to replay only the moves that can matter when it takes back a step that let another role
//! win.
//!
//! A winning move's *support* is the set of base propositions that its legality, or the `next` of
//! its role's winning propositions, read: the only ones whose values decide whether it still wins.
//! Found once, from the cones of those outputs.
//!
//! Back in the state before the step, a move's changes are the pending bits of change propagation
//! once its input is set, which costs one input flip. The states after two moves `t` and `a` of the
//! same role (the other roles' inputs unchanged) differ exactly where their changes differ. So when
//! the opponent wins by `d` after `t`, and `a` changes the same propositions of `d`'s support as `t`
//! did, it wins by `d` after `a` as well: `a` need not be played out. The filter is sound, never
//! complete (the other roles' next moves are drawn again after each try).

use super::ground::{Grounded, NetLit};
use super::wins::Wins;

/// The support of every move that may win, as proposition words (laid out as a state's), one row
/// per `does` input.
#[derive(Clone, Debug)]
pub(super) struct Blocks {
    /// The first `does` node: row `i` is node `first + i`.
    first: usize,
    /// Words a row.
    words: usize,
    support: Vec<u64>,
}

/// The most words the table holds (8 MB); a larger game tries every move.
const MAX_WORDS: usize = 1 << 20;

/// The most gate visits the cones cost.
const BUDGET: usize = 40_000_000;

impl Blocks {
    /// The support of `win` (a `does` input), empty when it is outside the table.
    pub(super) fn support(&self, win: u32) -> &[u64] {
        let i = (win as usize).wrapping_sub(self.first);
        self.support
            .get(i * self.words..(i + 1) * self.words)
            .unwrap_or(&[])
    }
}

/// The supports of `n`'s winning moves, or `None` when the table or the walk over the cones would
/// pass its budget.
pub(super) fn blocks_of(n: &Grounded, wins: &Wins) -> Option<Blocks> {
    let np = n.props.len();
    let first = 1 + np;
    let rows = n.first_gate - first;
    let words = np.div_ceil(64).max(1);
    if rows * words > MAX_WORDS {
        return None;
    }
    let mut blocks = Blocks {
        first,
        words,
        support: vec![0; rows * words],
    };
    let mut cone = Cone {
        n,
        stamp: vec![0; n.num_nodes],
        round: 0,
        stack: Vec::new(),
        out: Vec::new(),
        visits: 0,
    };
    let props = 1..first;
    for (r, outs) in n.legal.iter().enumerate() {
        let winning: Vec<NetLit> = (0..np)
            .filter(|&p| wins.props[r][p / 64] >> (p % 64) & 1 == 1)
            .map(|p| n.next[p])
            .collect();
        if winning.is_empty() {
            continue;
        }
        let mut shared = vec![0u64; words];
        for node in cone.leaves(&winning).filter(|x| props.contains(x)) {
            shared[(node - 1) / 64] |= 1 << ((node - 1) % 64);
        }
        for o in outs.iter().filter(|o| o.does != u32::MAX) {
            let row = (o.does as usize - first) * words;
            let support = &mut blocks.support[row..row + words];
            support.copy_from_slice(&shared);
            for node in cone.leaves(&[o.lit]).filter(|x| props.contains(x)) {
                support[(node - 1) / 64] |= 1 << ((node - 1) % 64);
            }
            if cone.visits > BUDGET {
                return None;
            }
        }
    }
    Some(blocks)
}

/// A walk down the gates to the nodes that are not gates (the constant, propositions, inputs).
struct Cone<'a> {
    n: &'a Grounded,
    stamp: Vec<u32>,
    round: u32,
    stack: Vec<usize>,
    out: Vec<usize>,
    visits: usize,
}

impl Cone<'_> {
    /// The non-gate nodes that the literals `from` read, each once.
    fn leaves(&mut self, from: &[NetLit]) -> impl Iterator<Item = usize> + '_ {
        self.round += 1;
        let n = self.n;
        self.out.clear();
        self.stack.clear();
        self.stack.extend(from.iter().map(|&l| (l >> 1) as usize));
        while let Some(node) = self.stack.pop() {
            if self.stamp[node] == self.round {
                continue;
            }
            self.stamp[node] = self.round;
            self.visits += 1;
            match node.checked_sub(n.first_gate) {
                Some(g) => {
                    let gate = &n.gates[g];
                    let inputs = &n.inputs[gate.start as usize..gate.end as usize];
                    self.stack.extend(inputs.iter().map(|&l| (l >> 1) as usize));
                }
                None => self.out.push(node),
            }
        }
        self.out.iter().copied()
    }
}
