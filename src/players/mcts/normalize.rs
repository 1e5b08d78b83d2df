//! Node score normalisation (`+norm`, Sancho's): a node's value, as its parent's statistics hold it,
//! is now and then recomputed from its moves' averages, each weighted by the visits UCB1 would give
//! it if the averages stayed as they are now.
//!
//! A plain average remembers every early playout: a move that looked good for a thousand visits and
//! was then refuted keeps pulling its parent's mean up long after the search stopped choosing it.
//! Weighted as UCB1's equilibrium would weigh them (the best move keeps its visits, a move `d` below
//! it gets about `b² ln N / d²`), the refuted move counts for what it is worth now, so values move
//! towards the best move's faster, as minimax would, while still averaging over the moves that are
//! close. Sancho 1.61c normalises a node every 100 visits once it has 500, and logs "Using periodic
//! node score normalization" on Connect Four.
//!
//! Statistics here are kept per move at the parent, one table per role; a node's value for the role
//! that moved into it is the parent's statistic of that move. The node's own statistics hold only its
//! mover's rewards, so the value for the parent's mover is read as `1 -` it: normalisation is for
//! two-role constant-sum games taking turns, which is where the player switches it on.

use super::tree::{Tree, NONE, SIMULTANEOUS};

/// Visits before a node is first normalised, and between two normalisations.
pub(super) const WARM_UP: u32 = 500;
pub(super) const PERIOD: u32 = 100;
/// Moves with fewer visits keep their own visits as their weight (their averages are too noisy to
/// place on UCB1's curve).
const MIN_VISITS: u32 = 20;
/// The exploration constant of the equilibrium the weights come from (Sancho's).
const BIAS: f64 = 0.5;

/// The value of a node for its mover, its moves' averages weighted by the visits UCB1 would give
/// them: each move is `(visits, average)`; `None` when no move has [`MIN_VISITS`].
pub(super) fn normalised(moves: impl Iterator<Item = (u32, f64)> + Clone) -> Option<f64> {
    let (pivot_visits, pivot) = moves
        .clone()
        .filter(|&(n, _)| n >= MIN_VISITS)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let total: u32 = moves.clone().map(|(n, _)| n).sum();
    let log_n = f64::from(total.max(2)).ln();
    let ceiling = pivot + BIAS * (log_n / f64::from(pivot_visits)).sqrt();
    let (mut weights, mut sum) = (0.0, 0.0);
    for (n, mean) in moves {
        let w = if n >= MIN_VISITS {
            BIAS * BIAS * log_n / (ceiling - mean).powi(2)
        } else {
            f64::from(n)
        };
        weights += w;
        sum += w * mean;
    }
    (weights > 0.0).then(|| sum / weights)
}

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// When the `k`th node of the walk's path is due (see [`WARM_UP`], [`PERIOD`]), sets its parent's
    /// statistic of the move into it to its normalised value, keeping the visits.
    pub(super) fn normalise_at(&mut self, k: usize) {
        if k == 0 || self.roles != 2 {
            return;
        }
        let (node, _) = self.path[k];
        let (parent, joint) = self.path[k - 1];
        let n = &self.nodes[node as usize];
        if n.visits < WARM_UP || !n.visits.is_multiple_of(PERIOD) || n.exact != NONE {
            return;
        }
        let (mover, parent_mover) = (n.mover, self.nodes[parent as usize].mover);
        if mover == SIMULTANEOUS || parent_mover == SIMULTANEOUS {
            return;
        }
        let mover = mover as usize;
        let first = self.stat_index(n, mover, 0);
        let count = self.count(n, mover) as usize;
        let moves = (0..count).map(|i| {
            let st = &self.stats[first + i];
            let child = self.child(n, i as u32);
            let exact = (child != NONE)
                .then(|| self.exact_of(&self.nodes[child as usize]))
                .flatten()
                .map(|v| v[mover]);
            let mean = st.total / f64::from(st.visits.max(1));
            (st.visits, exact.unwrap_or(mean))
        });
        let Some(value) = normalised(moves) else {
            return;
        };
        let value = if parent_mover as usize == mover {
            value
        } else {
            1.0 - value
        };
        let p = &self.nodes[parent as usize];
        // The parent's mover's move is the joint move's own digit only when it is the first role;
        // with two roles taking turns the other has one move, so the joint move is that move.
        let i = if parent_mover == 0 {
            joint % self.count(p, 0).max(1)
        } else {
            joint / self.count(p, 0).max(1)
        };
        let at = self.stat_index(p, parent_mover as usize, i);
        let st = &mut self.stats[at];
        st.total = value * f64::from(st.visits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refuted_move_counts_for_what_it_is_worth_now() {
        // A move averaged 0.6 over 1,000 visits but has been refuted and now sits at 0.3 (most of its
        // visits early), the best at 0.5 over 2,000: the plain mean is 0.433, the normalised value
        // close to the best move's.
        let moves = [(1_000u32, 0.3), (2_000, 0.5)];
        let plain = (1_000.0 * 0.3 + 2_000.0 * 0.5) / 3_000.0;
        let v = normalised(moves.iter().copied()).unwrap();
        assert!(v > plain && v < 0.5, "{v} against {plain}");
        assert!(v > 0.49, "{v}");
        // Two moves alike keep their average; moves too little visited keep their own weight.
        let v = normalised([(500u32, 0.5), (500, 0.5), (3, 0.0)].into_iter()).unwrap();
        assert!((v - 1_000.0 * 0.5 / 1_003.0).abs() < 0.01, "{v}");
        assert_eq!(normalised([(5u32, 0.5), (19, 1.0)].into_iter()), None);
    }
}
