//! Seed 3's values, results and bounds, shared by alpha-beta and Jamboree.
//!
//! A [`Value`] is either the best edge found (the move from the node and its estimate) or `Pruned`,
//! which means both "this subtree was pruned" and, as a bound, "no bound": it is the bottom of the order
//! for α and the top for β. A [`SearchResult`] adds `ParentPrune`, the instruction to prune the parent.

use std::fmt;

use crate::evaluators::Estimate;

/// A node's value, or a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// No information / no bound.
    Pruned,
    /// The best edge: the index of the move leaving the node and the estimate it leads to.
    Best {
        /// Index of the move in the node's legal move list.
        mv: usize,
        /// The (backed-up) estimate.
        est: Estimate,
    },
}

/// What evaluating a node yields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchResult {
    /// A value (possibly `Pruned`).
    Value(Value),
    /// The parent of this node is of no use to its grandparent.
    ParentPrune,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Pruned => write!(f, "Pruned"),
            Value::Best { est, .. } => write!(f, "{est}"),
        }
    }
}

impl fmt::Display for SearchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchResult::Value(v) => write!(f, "{v}"),
            SearchResult::ParentPrune => write!(f, "ParentPrune"),
        }
    }
}

/// `alpha < e`, `Pruned` being below everything.
pub fn alpha_is_less_than(alpha: Value, e: Estimate) -> bool {
    match alpha {
        Value::Pruned => true,
        Value::Best { est, .. } => est.score() < e.score(),
    }
}

/// `e < beta`, `Pruned` being above everything.
pub fn beta_is_greater_than(e: Estimate, beta: Value) -> bool {
    match beta {
        Value::Pruned => true,
        Value::Best { est, .. } => e.score() < est.score(),
    }
}

/// The larger of two α values; on a tie the first (earlier) one stays, so the first best move wins.
pub fn max_alpha(a: Value, b: Value) -> Value {
    match (a, b) {
        (_, Value::Pruned) => a,
        (Value::Pruned, _) => b,
        (Value::Best { est: ea, .. }, Value::Best { est: eb, .. }) => {
            if eb.score() > ea.score() {
                b
            } else {
                a
            }
        }
    }
}

/// The smaller of two β values; on a tie the first one stays.
pub fn min_beta(a: Value, b: Value) -> Value {
    match (a, b) {
        (_, Value::Pruned) => a,
        (Value::Pruned, _) => b,
        (Value::Best { est: ea, .. }, Value::Best { est: eb, .. }) => {
            if eb.score() < ea.score() {
                b
            } else {
                a
            }
        }
    }
}

/// α and β.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlphaBeta {
    /// What maxie can already get.
    pub alpha: Value,
    /// What minnie can already get.
    pub beta: Value,
}

impl AlphaBeta {
    /// No bounds at all.
    pub const NONE: AlphaBeta = AlphaBeta {
        alpha: Value::Pruned,
        beta: Value::Pruned,
    };

    /// Seed 3's `updateAB`: folds a child's value into α (maxie's node) or β (minnie's).
    pub fn update(self, maxie: bool, v: Value) -> AlphaBeta {
        if maxie {
            AlphaBeta {
                alpha: max_alpha(self.alpha, v),
                ..self
            }
        } else {
            AlphaBeta {
                beta: min_beta(self.beta, v),
                ..self
            }
        }
    }

    /// Seed 3's `value_for`: the bound of the player to move.
    pub fn value_for(self, maxie: bool) -> Value {
        if maxie {
            self.alpha
        } else {
            self.beta
        }
    }

    /// Seed 3's `check_bounds`: labels a candidate value `e` of a node reached by move `incoming`
    /// according to the spec for αβ-pruning.
    pub fn check_bounds(self, maxie: bool, incoming: usize, e: Estimate) -> SearchResult {
        if !alpha_is_less_than(self.alpha, e) {
            if maxie {
                SearchResult::ParentPrune
            } else {
                SearchResult::Value(Value::Pruned)
            }
        } else if !beta_is_greater_than(e, self.beta) {
            if maxie {
                SearchResult::Value(Value::Pruned)
            } else {
                SearchResult::ParentPrune
            }
        } else {
            SearchResult::Value(Value::Best {
                mv: incoming,
                est: e,
            })
        }
    }

    /// Labels a node from its candidate value (the final α or β of its children's scan).
    pub fn check_candidate(self, maxie: bool, incoming: usize, candidate: Value) -> SearchResult {
        match candidate {
            Value::Pruned => SearchResult::Value(Value::Pruned),
            Value::Best { est, .. } => self.check_bounds(maxie, incoming, est),
        }
    }
}

impl fmt::Display for AlphaBeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ab=({},{})", self.alpha, self.beta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(n: i32) -> Value {
        Value::Best {
            mv: 0,
            est: Estimate::Guess(n),
        }
    }

    fn check(ab: AlphaBeta, maxie: bool, e: i32, expected: &str) {
        assert_eq!(
            ab.check_bounds(maxie, 0, Estimate::Guess(e)).to_string(),
            expected,
            "{ab} maxie={maxie} e={e}"
        );
    }

    #[test]
    fn check_bounds_follows_the_spec() {
        let ab = AlphaBeta {
            alpha: best(2),
            beta: best(5),
        };
        check(ab, true, 3, "Guess:3");
        check(ab, true, 2, "ParentPrune");
        check(ab, false, 2, "Pruned");
        check(ab, true, 5, "Pruned");
        check(ab, false, 7, "ParentPrune");
        check(AlphaBeta::NONE, true, -9, "Guess:~9");
    }

    #[test]
    fn pruned_is_no_bound() {
        assert_eq!(max_alpha(Value::Pruned, best(3)), best(3));
        assert_eq!(min_beta(best(3), Value::Pruned), best(3));
        assert_eq!(AlphaBeta::NONE.update(false, best(3)).beta, best(3));
    }
}
