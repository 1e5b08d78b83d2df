//! The Datalog core: rules over interned terms, planned and evaluated semi-naively over flat, indexed
//! relations. It knows nothing of games; [`crate::engine`] builds the GDL game on top of it, and the
//! grounder ([`crate::network::ground`]) reads its rules and relaxed fixpoints.
//!
//! Stages, each with one entry point and each printing itself as readable rules:
//!
//! 1. [`lower`] ([`ir`]): the parsed program becomes plain rules over interned ids ([`terms`]).
//! 2. [`plan()`] ([`plan`](mod@plan)): strata, the phase of each relation (load / state / move), join
//!    orders, indexes, handed over as a [`compiled::Plan`] ([`compiled`]), the one interface between
//!    planning and evaluation (strata come from [`scc`], the components every stage shares).
//! 3. [`eval::Db::run`] ([`eval`]): semi-naive evaluation of one phase over flat, indexed relations
//!    (`store`), each rule body run by the join interpreter (`join`).
//!
//! **Architecture invariant:** nothing in the evaluator handles strings; names appear only when printing.

pub mod compiled;
pub mod eval;
pub mod ir;
mod join;
pub mod plan;
pub mod scc;
mod store;
pub mod terms;

pub use ir::lower;
pub use plan::plan;

/// What can go wrong when loading or evaluating a rule program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The program is not valid GDL (arity clash, unsafe rule, unstratified negation, missing roles...).
    #[error("invalid game: {0}")]
    Invalid(String),
    /// The program derives too many facts or too deep terms (a runaway recursion).
    #[error("runaway evaluation: {0}")]
    Runaway(String),
    /// The program uses something this engine does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The rules misbehave in a state (no legal move for a role, a move that is not legal...).
    #[error("the rules misbehave: {0}")]
    Rules(String),
}

/// Bounds that stop a runaway program with an error instead of exhausting memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most facts one evaluation (the load-time analysis, or one state) may derive.
    pub max_facts: usize,
    /// The deepest nesting of a derived term.
    pub max_depth: u32,
    /// When set, an evaluation still running at this instant stops with [`EngineError::Runaway`]
    /// (checked every few thousand joined rows, so a caller with a time budget is not held hostage).
    pub deadline: Option<std::time::Instant>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_facts: 4_000_000,
            max_depth: 200,
            deadline: None,
        }
    }
}
