//! The compiled network as data: gates over literals, the outputs, and how it was built.

use std::time::Duration;

use crate::datalog::terms::{TermId, TermStore};
use crate::syntax::ast::Syntax;

/// A literal of the compiled network: `node << 1 | negated`. Node 0 is the constant false, so literal 0
/// is false and literal 1 is true.
pub type NetLit = u32;
/// The constant false.
pub const FALSE: NetLit = 0;
/// The constant true.
pub const TRUE: NetLit = 1;

/// One gate: the AND of `inputs[start..end]`, its output negated when `negate` is all ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    /// First input (index into [`Grounded::inputs`]).
    pub start: u32,
    /// One past the last input.
    pub end: u32,
    /// `0` or `!0`: XORed into the result.
    pub negate: u64,
}

/// A legal move output: the move (global id), the literal that says it is legal, and the `does` input
/// node to set when it is played (`u32::MAX` when nothing reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegalOut {
    /// Global move id.
    pub mv: u32,
    /// Legality.
    pub lit: NetLit,
    /// The `does` node, or `u32::MAX`.
    pub does: u32,
}

/// A grounded and compiled game (see the module documentation).
#[derive(Clone, Debug)]
pub struct Grounded {
    /// The term store that names roles, propositions and moves.
    pub terms: TermStore,
    /// The syntax of the source file (moves print in it).
    pub syntax: Syntax,
    /// The roles, in order.
    pub roles: Vec<TermId>,
    /// Base propositions, sorted by their KIF text; proposition `i` is node `1 + i`.
    pub props: Vec<TermId>,
    /// Moves (all roles), sorted by their KIF text.
    pub moves: Vec<TermId>,
    /// The propositions true initially.
    pub initial: Vec<u32>,
    /// Number of nodes (constant, propositions, `does` inputs, gates).
    pub num_nodes: usize,
    /// The node of the first gate; gates are numbered consecutively from here.
    pub first_gate: usize,
    /// All gates, in evaluation order.
    pub gates: Vec<Gate>,
    /// How many of `gates` form the state part (they come first).
    pub state_gates: usize,
    /// Gate inputs.
    pub inputs: Vec<NetLit>,
    /// Per role, its legal moves' outputs, sorted by move id.
    pub legal: Vec<Vec<LegalOut>>,
    /// Per role, `(value, literal)` for each possible goal value, ascending.
    pub goals: Vec<Vec<(i32, NetLit)>>,
    /// The terminal output.
    pub terminal: NetLit,
    /// Per proposition, the literal of `next(p)`.
    pub next: Vec<NetLit>,
    /// How the rules were prepared, and where the load time went.
    pub load: LoadReport,
}

/// Which strategy built a network, how long each stage took (the time of a strategy that gave up
/// first is in `total` only) and how many facts and instances the first two made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadReport {
    /// The strategy that succeeded.
    pub strategy: Strategy,
    /// Rewriting the rules and the relaxed fixpoint that bounds what can be true.
    pub analysis: Duration,
    /// The facts the relaxed fixpoint derived (what the budget's analysis facts limit counts).
    pub facts: usize,
    /// Instantiating the rules.
    pub grounding: Duration,
    /// The rule instances kept (the budget's instances limit counts them as they are found).
    pub instances: usize,
    /// Building, sharing and ordering the gates.
    pub compiling: Duration,
    /// From the start of the first attempt to the end.
    pub total: Duration,
}

impl std::fmt::Display for LoadReport {
    /// `rules as written: analysis 12 ms (3120 facts), grounding 30 ms (8870 instances), compiling
    /// 8 ms`: each stage's time, and what the budget limits of the first two.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{}: analysis {:.0} ms ({} facts), grounding {:.0} ms ({} instances), compiling {:.0} ms",
            match self.strategy {
                Strategy::AsWritten => "rules as written",
                Strategy::Decomposed => "rules decomposed",
            },
            ms(self.analysis),
            self.facts,
            ms(self.grounding),
            self.instances,
            ms(self.compiling)
        )?;
        let lost = self
            .total
            .saturating_sub(self.analysis + self.grounding + self.compiling);
        if lost.as_secs_f64() * 1e3 >= 1.0 {
            write!(f, " (after {:.0} ms on the rules as written)", ms(lost))?;
        }
        Ok(())
    }
}

/// How the rules are prepared for grounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// As written: the whole relaxed fixpoint, every instance of every rule over it. The smallest
    /// networks when it fits, as no relation is added.
    AsWritten,
    /// Variables that only some conditions of a rule share projected into relations of their own
    /// (`network::ground::decompose`), then every state-dependent relation restricted to the
    /// instances its readers can ask for (the magic-sets rewrite of `engine::demand`, reading only what binds the
    /// asked arguments): chess's frame rule. (Checkers' and skirmish's move rules shrink too, but
    /// as written they fit the budget and play faster, so they load that way.)
    Decomposed,
}
