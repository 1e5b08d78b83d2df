//! Captures: the pieces of the other roles that each move may take, found once by evaluating the
//! network in three values (see `wins`), 64 moves at a time, one per bit of a word.
//!
//! With every piece of the other roles true, every other proposition unknown, the move's `does` input
//! true and every other input false, a piece the move may take is one whose `next` is not definitely
//! true. In Breakthrough that is the piece on the square a move goes to: the frame rule keeps every
//! other piece where it is whatever the move.
//!
//! A playout tells a capture by reading those pieces in the state (see [`crate::game::Captures`]).
//! The analysis reads no legality, so a straight move onto an occupied square is listed, but it is
//! never legal while the square holds a piece. A piece that every move of a role may take is left
//! out: the rules remove it whatever is played, or the analysis cannot tell.
//!
//! The abstraction is a heuristic, not a proof: every other role's inputs are false (their no-ops
//! included) and all their pieces present at once, which no real state need be. On breakthrough and
//! knightThrough the table is exact (`tests/integration/network.rs` checks every move of random games).

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
    let mut takers = vec![0u32; np];
    for r in 0..roles {
        let victims: Vec<usize> = (0..np)
            .filter(|&p| (0..roles).any(|q| q != r && held(&pieces[q], p)))
            .collect();
        if victims.is_empty() {
            continue;
        }
        let outs = &n.legal[r];
        let (first, mut moves) = (triples.len(), 0u32);
        takers.fill(0);
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
            moves += lanes.count_ones();
            eval(n, &mut v, n.gates.len());
            for &p in &victims {
                let mut may = !lit(&v, n.next[p]).t & lanes;
                takers[p] += may.count_ones();
                while may != 0 {
                    let k = c * 64 + may.trailing_zeros() as usize;
                    may &= may - 1;
                    triples.push((r, outs[k].mv, p as u32));
                }
            }
        }
        // A piece that every move of the role may take is removed whatever is played (or the
        // analysis cannot tell): no capture.
        let mut kept = first;
        for i in first..triples.len() {
            let p = triples[i].2 as usize;
            if moves < 2 || takers[p] < moves {
                triples[kept] = triples[i];
                kept += 1;
            }
        }
        triples.truncate(kept);
    }
    let table = Captures::from_triples(roles, n.moves.len(), &triples);
    (!table.is_empty()).then_some(table)
}
