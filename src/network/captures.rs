//! Captures: the pieces of the other roles that each move may take, found once by evaluating the
//! network in three values (see `wins`), 64 moves at a time, one per bit of a word.
//!
//! With every piece of the other roles true, every other proposition unknown, the move's `does` input
//! true and every other input false, a piece the move may take is one whose `next` is not definitely
//! true. In Breakthrough that is the piece on the square a move goes to: the frame rule keeps every
//! other piece where it is whatever the move. A playout then tells a capture by reading those pieces
//! in the state (see [`crate::game::Captures`]). A piece that every move of a batch may take is left
//! out: the rules remove it whatever is played, or the analysis cannot tell: the analysis reads no legality, so a straight move
//! onto an occupied square is listed, but never legal when the square holds a piece.

use super::ground::Grounded;
use super::wins::{eval, lit, Tri, BUDGET, FALSE, UNKNOWN};
use crate::game::Captures;

/// The captures of `n`'s moves, where `pieces[r]` holds role `r`'s pieces as proposition words; `None`
/// when the analysis would pass its budget, or no move takes anything.
pub(super) fn captures_of(n: &Grounded, pieces: &[Vec<u64>]) -> Option<Captures> {
    let roles = n.roles.len();
    let np = n.props.len();
    let held = |mask: &[u64], p: usize| mask.get(p / 64).is_some_and(|w| w >> (p % 64) & 1 == 1);
    let passes: usize = (0..roles).map(|r| n.legal[r].len().div_ceil(64)).sum();
    if passes.saturating_mul(n.inputs.len()) > BUDGET || pieces.len() != roles {
        return None;
    }
    let mut v = vec![UNKNOWN; n.num_nodes];
    let mut triples = Vec::new();
    for r in 0..roles {
        let victims: Vec<usize> = (0..np)
            .filter(|&p| (0..roles).any(|q| q != r && held(&pieces[q], p)))
            .collect();
        if victims.is_empty() {
            continue;
        }
        let outs = &n.legal[r];
        for c in 0..outs.len().div_ceil(64) {
            v.fill(UNKNOWN);
            v[0] = FALSE;
            v[1 + np..n.first_gate].fill(FALSE);
            for &p in &victims {
                v[1 + p] = Tri { t: !0, f: 0 };
            }
            let mut lanes = 0u64;
            for (k, o) in outs.iter().enumerate().skip(c * 64).take(64) {
                if let Some(x) = v.get_mut(o.does as usize) {
                    let bit = 1u64 << (k - c * 64);
                    x.t |= bit;
                    x.f &= !bit;
                    lanes |= bit;
                }
            }
            eval(n, &mut v, n.gates.len());
            for &p in &victims {
                let mut may = !lit(&v, n.next[p]).t & lanes;
                if may == lanes && lanes.count_ones() > 1 {
                    // Every move may take it: the rules remove it whatever is played (or the
                    // analysis cannot tell), which is no capture.
                    continue;
                }
                while may != 0 {
                    let k = c * 64 + may.trailing_zeros() as usize;
                    may &= may - 1;
                    triples.push((r, outs[k].mv, p as u32));
                }
            }
        }
    }
    let table = Captures::from_triples(roles, n.moves.len(), &triples);
    (!table.is_empty()).then_some(table)
}
