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
    Invalid(Invalid),
    /// The program derives too many facts or too deep terms (a runaway recursion).
    #[error("runaway evaluation: {0}")]
    Runaway(Runaway),
    /// The rules misbehave in a state (no legal move for a role, a move that is not legal...).
    #[error("the rules misbehave: {0}")]
    Rules(Misbehaviour),
}

impl EngineError {
    /// The relation (or action) the error is about, when it names one: where a report may place it.
    pub fn relation(&self) -> Option<&str> {
        let EngineError::Invalid(invalid) = self else {
            return None;
        };
        match invalid {
            Invalid::Arity {
                kind: "relation",
                name,
                ..
            }
            | Invalid::NotStratified(name)
            | Invalid::StateFactDefined(name)
            | Invalid::TooManyTerms { at: name, .. }
            | Invalid::TooLongRule { at: name, .. } => Some(name),
            // The rule as printed (`p(?x) :- q.`, `terminal.`): its head's relation comes first.
            Invalid::Unsafe { rule, .. } => {
                let head = rule.split(" :- ").next().unwrap_or(rule);
                Some(head.split('(').next().unwrap_or(head).trim_end_matches('.'))
            }
            _ => None,
        }
    }
}

/// How a program is not valid GDL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// Operation rules (`::`) beside classic `next`/`does` rules.
    #[error("the program mixes operations (`::`) with `next`/`does`")]
    MixedSemantics,
    /// A relation or a function used with two numbers of arguments.
    #[error("{kind} `{name}` is used with {first} and with {other} arguments")]
    Arity {
        /// `relation` or `function`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The arguments where it is first used.
        first: usize,
        /// The arguments of another use.
        other: usize,
    },
    /// A relation depends on its own negation.
    #[error("relation `{0}` depends on its own negation (the rules are not stratified)")]
    NotStratified(String),
    /// A rule whose variables cannot all be bound by its positive conditions.
    #[error("unsafe rule ({why}): {rule}")]
    Unsafe {
        /// Which condition cannot run.
        why: String,
        /// The rule, printed.
        rule: String,
    },
    /// A rule has a variable no condition binds (found while grounding).
    #[error("a rule has an unbound variable")]
    UnboundVariable,
    /// The game names no roles.
    #[error("the game has no roles")]
    NoRoles,
    /// The game has no `role` facts at all.
    #[error("the game has no `role` facts")]
    NoRoleFacts,
    /// A state fact of an operation game is defined by a rule.
    #[error("`{0}` is a state fact (it appears in `init`, `base` or an effect) and cannot be defined by a rule")]
    StateFactDefined(String),
    /// `legal(A)` in a game without `control`.
    #[error(
        "`legal(A)` names the action of the role in `control(R)`, but the game has no `control` \
         state fact (write `legal(R,A)` for games without one)"
    )]
    NoControl,
    /// A term could not be made (the term store is full).
    #[error("a term could not be made")]
    TermNotMade,
    /// The rules multiply out into more terms than the engines take (see
    /// [`MAX_EXPANDED_TERMS`](crate::syntax::ast::MAX_EXPANDED_TERMS)).
    #[error(
        "the rules multiply out into more than {limit} terms at the rule for `{at}` (each \
         alternative of an `or` becomes a rule of its own): give the `or`s relations of their own"
    )]
    TooManyTerms {
        /// The relation (or action) of the rule where the count passed the limit.
        at: String,
        /// The limit.
        limit: u64,
    },
    /// A rule with more conditions than the engines take (see
    /// [`MAX_RULE_CONDITIONS`](crate::syntax::ast::MAX_RULE_CONDITIONS)).
    #[error(
        "a rule for `{at}` has more than {limit} conditions in a row: give a group of them a \
         relation of its own"
    )]
    TooLongRule {
        /// The relation (or action) of the rule.
        at: String,
        /// The limit.
        limit: u64,
    },
}

/// How an evaluation ran away.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Runaway {
    /// More facts than the limit in one evaluation.
    #[error("more than {0} facts derived in one evaluation")]
    TooManyFacts(usize),
    /// A derived term nested deeper than the limit; the head of its text says which one grew.
    #[error("a derived term is nested more than {limit} deep: {head}")]
    TooDeep {
        /// The limit.
        limit: u32,
        /// The term's first characters (`...` when cut).
        head: String,
    },
    /// The evaluation's deadline passed.
    #[error("the evaluation ran past its time limit")]
    TimeLimit,
}

/// How the rules misbehave in a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Misbehaviour {
    /// A role index that is not a role.
    #[error("no role {0}")]
    NoRole(usize),
    /// A joint move with the wrong number of moves.
    #[error("a joint move needs {expected} moves, got {got}")]
    JointSize {
        /// The roles.
        expected: usize,
        /// The moves given.
        got: usize,
    },
    /// A move id the game never made.
    #[error("unknown move id {0}")]
    UnknownMove(u32),
    /// A proposition number the game never made.
    #[error("the state has unknown proposition {0}")]
    UnknownProposition(usize),
    /// A next state with a fact the load-time analysis did not find.
    #[error(
        "the next state has {0}, which the load-time analysis did not foresee (arithmetic beyond \
         the integers the rules mention?)"
    )]
    Unforeseen(String),
}

/// Bounds that stop a runaway program with an error instead of exhausting memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most facts one evaluation (the load-time analysis, or one state) may derive (a join that
    /// alone finds more distinct heads stops as it passes them).
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
