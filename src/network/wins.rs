//! Winning propositions: the base propositions that alone make a state terminal with goal 100 for a
//! role (a pawn on the last row of Breakthrough), and the moves that may make one of them true.
//!
//! Both are found once, by evaluating the network in three values (true, false, unknown), 64 cases at
//! a time, one per bit of a word:
//! - a proposition wins for a role when, with it true and every other proposition unknown, the
//!   terminal output and the role's goal-100 output are both definitely true (so it wins whatever
//!   else holds);
//! - a move may make a winning proposition true when, with the move's `does` input true, the role's
//!   other inputs false, every other role's inputs unknown and the role's winning propositions false,
//!   the `next` of one of them is not definitely false.
//!
//! A playout then finds a move that wins at once without trying every move: it intersects the role's
//! legal moves with those that may win (one AND a word), and tries only what is left, reading whether
//! a winning proposition becomes true from the pending bits of change propagation. Wins that no single
//! proposition makes (four in a row, no pieces left) are not seen; the analysis is sound, not complete.

use super::ground::{Grounded, NetLit};
use super::legal_sets::LegalSets;

/// Per role, its winning propositions and the legal-set bits of the moves that may make one true.
#[derive(Clone, Debug, Default)]
pub(super) struct Wins {
    /// Per role, proposition words (laid out as a state's): its winning propositions.
    pub(super) props: Vec<Vec<u64>>,
    /// Per role, words over its legal-set bits (see [`LegalSets`]): the moves that may make one of its
    /// winning propositions true.
    pub(super) moves: Vec<Vec<u64>>,
}

impl Wins {
    /// Whether any role has a move that may win through a winning proposition.
    pub(super) fn any(&self) -> bool {
        self.moves.iter().flatten().any(|&w| w != 0)
    }
}

/// The most input reads the analysis spends (about a tenth of a second); a larger network has none.
pub(super) const BUDGET: usize = 40_000_000;

/// Three values in 64 lanes: the lanes where a node is definitely true, and definitely false.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tri {
    pub(super) t: u64,
    pub(super) f: u64,
}

pub(super) const FALSE: Tri = Tri { t: 0, f: !0 };
pub(super) const UNKNOWN: Tri = Tri { t: 0, f: 0 };

#[inline]
pub(super) fn lit(v: &[Tri], l: NetLit) -> Tri {
    let x = v[(l >> 1) as usize];
    if l & 1 == 1 {
        Tri { t: x.f, f: x.t }
    } else {
        x
    }
}

/// Evaluates the first `gates` gates: an AND is true where every input is, false where one is.
pub(super) fn eval(n: &Grounded, v: &mut [Tri], gates: usize) {
    for (g, gate) in n.gates[..gates].iter().enumerate() {
        let (mut t, mut f) = (!0u64, 0u64);
        for &l in &n.inputs[gate.start as usize..gate.end as usize] {
            let x = lit(v, l);
            t &= x.t;
            f |= x.f;
        }
        v[n.first_gate + g] = if gate.negate != 0 {
            Tri { t: f, f: t }
        } else {
            Tri { t, f }
        };
    }
}

/// The winning propositions and moves of `n` (none when the analysis would pass its budget).
pub(super) fn wins_of(n: &Grounded, sets: &LegalSets) -> Wins {
    let roles = n.roles.len();
    let np = n.props.len();
    let words = np.div_ceil(64).max(1);
    let hundred: Vec<Option<NetLit>> = n
        .goals
        .iter()
        .map(|g| g.iter().find(|(value, _)| *value == 100).map(|x| x.1))
        .collect();
    let mut wins = Wins {
        props: vec![vec![0; words]; roles],
        moves: (0..roles)
            .map(|r| vec![0; (sets.word[r + 1] - sets.word[r]) as usize])
            .collect(),
    };
    if hundred.iter().all(Option::is_none) || np.div_ceil(64) * n.inputs.len() > BUDGET {
        return wins;
    }
    let mut v = vec![UNKNOWN; n.num_nodes];
    let inputs = 1 + np..n.first_gate;
    for c in 0..np.div_ceil(64) {
        v.fill(UNKNOWN);
        v[0] = FALSE;
        v[inputs.clone()].fill(FALSE);
        for k in 0..64 {
            if let Some(p) = (c * 64 + k < np).then_some(c * 64 + k) {
                v[1 + p].t = 1 << k;
            }
        }
        eval(n, &mut v, n.state_gates);
        let terminal = lit(&v, n.terminal).t;
        for (r, h) in hundred.iter().enumerate() {
            if let Some(h) = h {
                wins.props[r][c] = terminal & lit(&v, *h).t;
            }
        }
    }
    let passes: usize = (0..roles)
        .filter(|&r| wins.props[r].iter().any(|&w| w != 0))
        .map(|r| n.legal[r].len().div_ceil(64))
        .sum();
    if passes * n.inputs.len() > BUDGET {
        wins.props.iter_mut().flatten().for_each(|w| *w = 0);
        return wins;
    }
    for r in 0..roles {
        let winning: Vec<usize> = (0..np)
            .filter(|&p| wins.props[r][p / 64] >> (p % 64) & 1 == 1)
            .collect();
        if winning.is_empty() {
            continue;
        }
        let outs = &n.legal[r];
        for c in 0..outs.len().div_ceil(64) {
            v.fill(UNKNOWN);
            v[0] = FALSE;
            for &p in &winning {
                v[1 + p] = FALSE;
            }
            for o in outs.iter().filter(|o| o.does != u32::MAX) {
                v[o.does as usize] = FALSE;
            }
            let mut lanes = 0u64;
            for (k, o) in outs.iter().enumerate().skip(c * 64).take(64) {
                if o.does != u32::MAX {
                    let bit = 1u64 << (k - c * 64);
                    v[o.does as usize].t |= bit;
                    v[o.does as usize].f &= !bit;
                    lanes |= bit;
                }
            }
            eval(n, &mut v, n.gates.len());
            let may = winning
                .iter()
                .fold(0u64, |acc, &p| acc | !lit(&v, n.next[p]).f);
            if let Some(w) = wins.moves[r].get_mut(c) {
                *w = may & lanes;
            }
        }
    }
    wins
}
