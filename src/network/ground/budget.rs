//! The grounding budget: how much a network may cost before grounding gives up, and why it did.
//!
//! A game whose network would be too large (or too slow to build) is not an error of the game: the
//! caller falls back to the Datalog evaluator, and says why. So every stage checks the one [`Budget`]
//! it was given, and a refusal is a [`NetworkError::Budget`] that names the [`Limit`] it ran into.
//! **A refusal for [`Limit::Size`] does not depend on the machine; one for [`Limit::Time`] does** (a
//! faster machine may build the network), which is what lets tests tell a regression from a slow
//! machine.
//!
//! The checks live here so that the stages share one wording and one rule for which limit a refusal
//! names: [`analysis_limits`] hands the budget to the engine's evaluator (the load-time analysis shares
//! the grounding's clock), [`analysis_over_budget`] turns the evaluator's runaway into a refusal naming
//! the relation that grew most, [`check_grounding`] bounds the instances, [`check_gate_budget`] the
//! gates. The evaluator stops at its deadline with the same error as for size: **the clock, read when
//! the error arrives, tells which limit it was.**

use std::time::{Duration, Instant};

use crate::datalog::eval::Db;
use crate::datalog::ir::Program;
use crate::engine::{EngineError, Limits};

/// Why a program has no network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// The engine rejected the program (invalid, runaway or unsupported).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Grounding would exceed the size or time budget.
    #[error("grounding exceeds the budget: {0}")]
    Budget(OverBudget),
    /// The ground rules recurse through state-dependent relations.
    #[error("the ground rules are recursive through `{0}`, which depends on the state")]
    Cyclic(String),
    /// Something the network does not support (operation semantics, ...).
    #[error("unsupported by the network: {0}")]
    Unsupported(String),
}

/// Which limit of a [`Budget`] a refusal ran into: a refusal for [`Limit::Time`] depends on the
/// machine (a faster one may build the network), one for [`Limit::Size`] does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Instances, gates, analysis facts, term depth, the number of atoms.
    Size,
    /// Wall-clock time (the load-time analysis's deadline included).
    Time,
}

/// A refusal for the budget: the limit it ran into and what exceeded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverBudget {
    /// The limit (for two strategies refused, [`Limit::Time`] when either ran out of time).
    pub limit: Limit,
    /// What exceeded it, for people.
    pub why: String,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

impl NetworkError {
    /// A refusal for `limit`, saying `why`.
    pub(super) fn over(limit: Limit, why: String) -> NetworkError {
        NetworkError::Budget(OverBudget { limit, why })
    }
}

/// Limits on grounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The most ground rule instances.
    pub max_instances: usize,
    /// The most gates.
    pub max_gates: usize,
    /// Wall-clock time for grounding and compiling.
    pub max_time: Duration,
    /// The most facts the load-time analysis may derive (chess's decomposed rules need about 1.9
    /// million, `battle` as written about 110,000; unbounded arithmetic such as `games/nim.gdl`'s pile
    /// needs infinitely many).
    pub max_analysis_facts: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_instances: 12_000_000,
            max_gates: 2_000_000,
            max_time: Duration::from_secs(10),
            max_analysis_facts: 3_000_000,
        }
    }
}

impl Budget {
    /// A budget of `seconds`, its size limits scaled from the default's (3M analysis facts, 12M
    /// instances and 2M gates per 10 s; the default is what chess's network needs, 1.9M facts and
    /// 6.4M instances, with room).
    pub fn for_seconds(seconds: f64) -> Budget {
        let d = Budget::default();
        let scale = (seconds / d.max_time.as_secs_f64()).max(0.0);
        let size = |n: usize| ((n as f64 * scale) as usize).max(1);
        Budget {
            max_instances: size(d.max_instances),
            max_gates: size(d.max_gates),
            max_time: Duration::from_secs_f64(seconds.max(0.0)),
            max_analysis_facts: size(d.max_analysis_facts),
        }
    }
}

/// Whether one more gate fits the budget, `made` gates made by this store and `total` in all (the
/// clock is read every 4,096 gates).
pub(super) fn check_gate_budget(
    made: usize,
    total: usize,
    budget: Budget,
    started: Instant,
) -> Result<(), NetworkError> {
    if made.is_multiple_of(4096) {
        check_compile_time(budget, started)?;
    }
    if total >= budget.max_gates {
        return Err(NetworkError::over(
            Limit::Size,
            format!("more than {} gates", budget.max_gates),
        ));
    }
    Ok(())
}

/// Whether compiling is within the budget's time, `started` being when its clock started.
pub(super) fn check_compile_time(budget: Budget, started: Instant) -> Result<(), NetworkError> {
    if started.elapsed() > budget.max_time {
        return Err(NetworkError::over(
            Limit::Time,
            format!(
                "compiling took longer than {} s",
                budget.max_time.as_secs_f64()
            ),
        ));
    }
    Ok(())
}

/// The evaluator's limits for the load-time analysis: it shares the grounding budget, so a relaxed
/// fixpoint that runs away (unbounded arithmetic, a huge cross product) means there is no network to
/// build, and the caller falls back.
pub(super) fn analysis_limits(budget: Budget, started: Instant) -> Limits {
    Limits {
        max_facts: budget.max_analysis_facts,
        deadline: Some(started + budget.max_time),
        ..Limits::default()
    }
}

/// The refusal for an evaluation of `p` into `db` that stopped with `e` under `limits`: a runaway
/// names the relation that grew most, the likely culprit (a counter, a path); other errors pass.
pub(super) fn analysis_over_budget(
    e: EngineError,
    db: &Db,
    p: &Program,
    limits: &Limits,
) -> NetworkError {
    let culprit = db
        .rels
        .iter()
        .enumerate()
        .max_by_key(|(_, r)| r.len())
        .filter(|(_, r)| !r.is_empty())
        .map(|(i, r)| {
            let rel = &p.relations[i];
            format!(
                " (`{}/{}` grew most: {} facts)",
                p.terms.name(rel.name),
                rel.arity,
                r.len()
            )
        })
        .unwrap_or_default();
    match e {
        EngineError::Runaway(why) => NetworkError::over(
            match limits.deadline {
                Some(d) if Instant::now() >= d => Limit::Time,
                _ => Limit::Size,
            },
            format!("the load-time analysis: {why}{culprit}"),
        ),
        e => e.into(),
    }
}

/// The literals (and two words of head and length) an instance may hold on average within the
/// instance budget: the instances' memory grows with their bodies, which run up to
/// [`MAX_RULE_CONDITIONS`](crate::syntax::ast::MAX_RULE_CONDITIONS) literals, so the count alone
/// let a program of long rules take gigabytes. Chess's 6.4 M instances hold about 7 words each.
pub(super) const WORDS_PER_INSTANCE: usize = 16;

/// Whether grounding may go on with `instances` rule instances made so far, `started` being when the
/// budget's clock started.
pub(super) fn check_grounding(
    (instances, words): (usize, usize),
    budget: Budget,
    started: Instant,
) -> Result<(), NetworkError> {
    if instances > budget.max_instances {
        return Err(NetworkError::over(
            Limit::Size,
            format!("more than {} ground rule instances", budget.max_instances),
        ));
    }
    let max_words = budget.max_instances.saturating_mul(WORDS_PER_INSTANCE);
    if words > max_words {
        return Err(NetworkError::over(
            Limit::Size,
            format!(
                "ground rule instances of more than {max_words} literals in all (their bodies \
                 are long)"
            ),
        ));
    }
    if started.elapsed() > budget.max_time {
        return Err(NetworkError::over(
            Limit::Time,
            format!(
                "grounding took longer than {} s",
                budget.max_time.as_secs_f64()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::ground_with;
    use super::super::testing::game;
    use super::*;

    #[test]
    fn a_budget_exceeded_names_its_limit() {
        let p = game("tictactoe.gdl");
        let refusal = |budget: Budget| match ground_with(&p, budget) {
            Err(NetworkError::Budget(over)) => over,
            other => panic!("not refused for the budget: {other:?}"),
        };
        let few_gates = refusal(Budget {
            max_gates: 3,
            ..Budget::default()
        });
        assert_eq!(few_gates.limit, Limit::Size);
        assert!(
            few_gates.why.contains("more than 3 gates"),
            "{}",
            few_gates.why
        );
        // No time at all: the clock is read before the first gate at the latest.
        let no_time = refusal(Budget {
            max_time: Duration::ZERO,
            ..Budget::default()
        });
        assert_eq!(no_time.limit, Limit::Time);
        assert!(ground_with(&p, Budget::default()).is_ok());
    }

    #[test]
    fn instances_of_long_bodies_are_refused_for_their_literals() {
        // 40 instances of 41 literals each, and 40 of one: within 100 instances, but past
        // 100 * 16 words of instances.
        let values: String = (0..40).map(|i| format!("(v {i}) ")).collect();
        let marks: String = (0..40).map(|i| format!("(true (s {i})) ")).collect();
        let inits: String = (0..40).map(|i| format!("(init (s {i})) ")).collect();
        let p = super::super::testing::kif(&format!(
            "(role r) (init (q 0)) {inits} {values}
             (<= (legal r (set ?x)) (v ?x))
             (<= (next (q ?x)) (does r (set ?x)))
             (<= (next (w ?x)) (true (q ?x)) {marks})
             (<= terminal (true (w 1)))
             (goal r 100)"
        ));
        let budget = Budget {
            max_instances: 100,
            ..Budget::default()
        };
        match ground_with(&p, budget) {
            Err(NetworkError::Budget(over)) => {
                assert_eq!(over.limit, Limit::Size);
                assert!(over.why.contains("literals in all"), "{}", over.why);
            }
            other => panic!("not refused for its literals: {other:?}"),
        }
        assert!(ground_with(&p, Budget::default()).is_ok());
    }

    #[test]
    fn the_instance_check_refuses_for_size_before_time() {
        let budget = Budget {
            max_instances: 10,
            ..Budget::default()
        };
        let now = Instant::now();
        assert!(check_grounding((10, 0), budget, now).is_ok());
        let Err(NetworkError::Budget(over)) = check_grounding((11, 0), budget, now) else {
            panic!("11 instances fit a budget of 10");
        };
        assert_eq!(over.limit, Limit::Size);
        // An instant 11 s back (a machine up for less cannot tell).
        let Some(late) = now.checked_sub(Duration::from_secs(11)) else {
            return;
        };
        let Err(NetworkError::Budget(over)) = check_grounding((1, 0), budget, late) else {
            panic!("11 s fit a budget of 10 s");
        };
        assert_eq!(over.limit, Limit::Time);
    }

    #[test]
    fn a_budget_for_seconds_scales_its_sizes() {
        let half = Budget::for_seconds(5.0);
        let d = Budget::default();
        assert_eq!(half.max_time, Duration::from_secs(5));
        assert_eq!(half.max_gates, d.max_gates / 2);
        assert_eq!(half.max_instances, d.max_instances / 2);
        assert_eq!(Budget::for_seconds(-1.0).max_gates, 1);
    }
}
