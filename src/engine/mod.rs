//! The game on top of the Datalog core: a GDL program made ready for evaluation, and [`RuleGame`], a
//! [`crate::game::Game`] that plays it on the evaluator ([`crate::datalog`]).
//!
//! Stages, each with one entry point and each printing itself as readable rules:
//!
//! 1. [`ops::to_classic`] ([`ops`]): operation rules become classic `next` rules.
//! 2. [`rewrite::prepared`] ([`rewrite`]): the rules both engines start from (pruned, role variables
//!    bound, negations split per instance, idle arguments dropped); [`demand`] restricts per-state relations to what their
//!    readers ask.
//! 3. [`analysis::analyse`] ([`analysis`]): roles, the phase of each relation, the propositions and
//!    moves a relaxed fixpoint finds, numbered once ([`analysis::Numbered`]).
//! 4. [`RuleGame`] ([`rulegame`]): states as bitsets over base propositions ([`BitState`]), interned
//!    moves; [`open`] numbers them as play finds them when the relaxed fixpoint runs away.
//! 5. [`conformance::replay`]: checks a game against a reference trace.
//!
//! What GDL leaves open is chosen once, in [`facade`], for both this engine and the network.

pub mod analysis;
mod bitstate;
pub mod conformance;
pub(crate) mod demand;
pub mod facade;
mod fixed_fluents;
mod idle_arguments;
mod moves;
pub(crate) mod open;
pub mod ops;
pub mod rewrite;
pub mod rulegame;

pub use crate::datalog::ir::lower;
pub use crate::datalog::plan::plan;
pub use crate::datalog::{EngineError, Limits};
pub(crate) use bitstate::ones;
pub use bitstate::BitState;
pub use rulegame::{Evaluation, RuleGame, RuleMove};

#[cfg(test)]
mod tests;
