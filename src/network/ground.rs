//! Grounding and compilation: a classic GDL program becomes a levelised AND/NOT network.
//!
//! The main entry point is [`ground`]. It
//! 1. runs the *relaxed* fixpoint (negation dropped, `true` fed from `init`/`next`, `does` from `legal`) on
//!    the engine's evaluator: an over-approximation of every fact that can ever hold;
//! 2. evaluates the relations that do not depend on `true`/`does` exactly, once (they become constants);
//! 3. instantiates every rule of a state-dependent relation by joining its body against those fact sets,
//!    keeping only instances whose positive conditions can hold; static conditions are decided on the spot.
//!    The rules are shared among rayon's threads, and their instances added in rule order, so the
//!    network is the same on any number of threads. Relations that `true` and `does` do not depend on
//!    are left out of step 1 and found here, grounded in dependency order (`late_relations`);
//! 4. compiles the ground atoms reachable from the outputs (`legal`, `goal`, `terminal`, `next`) into gates,
//!    depth first, so that creation order is a topological order; constants fold away, identical gates are
//!    shared, a NOT costs nothing (it is a flag on a gate input).
//!
//! Every gate is an AND of possibly negated inputs with a possibly negated output (an OR is the negated
//! AND of negated inputs), so one loop evaluates the whole network. Gates that do not read `does` come
//! first (the *state* part: legal, goal, terminal), then the *move* part (`next`).
//!
//! A ground recursion through state-dependent relations (a cycle in the network) is not supported and
//! returns [`NetworkError::Cyclic`]; so do budgets exceeded, so that a caller can fall back to the
//! Datalog evaluator with the reason.

use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hashbrown::{HashMap, HashTable};
use rayon::prelude::*;
use smallvec::SmallVec;

use crate::engine::decompose::{
    eliminate_variables, eliminate_variables_as, is_domain_relation, merge_alternatives,
    merge_twins,
};
use crate::engine::demand::{demand, is_demand_relation, Lean};
use crate::engine::eval::{Db, RelStore};
use crate::engine::ir::{Arith, Cmp, IrAtom, Lit, Origin, Pat, Program, RelId, Rule};
use crate::engine::ops::to_classic;
use crate::engine::plan::tarjan;
use crate::engine::plan::{key_slots, plan, Phase, Plan, Slot};
use crate::engine::rewrite::unfold_tables;
use crate::engine::rulegame::{clamp_arithmetic, dynamic_relations, integer_range};
use crate::engine::terms::{hash_ids, Filed, TermId, TermStore};
use crate::engine::{lower, EngineError, Limits};
use crate::syntax::ast::{self, Sym, Syntax};

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
    fn over(limit: Limit, why: String) -> NetworkError {
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
    /// The most facts the load-time analysis may derive (chess's decomposed rules need between 2 and 3
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
    /// instances and 2M gates per 10 s; the default is what chess's network needs, about 10M
    /// instances, with some room).
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
    /// Ground rule instances that were made.
    pub instances: usize,
    /// How the rules were prepared, and where the load time went.
    pub load: LoadReport,
}

/// Which strategy built a network and how long each stage took (the time of a strategy that gave up
/// first is in `total` only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadReport {
    /// The strategy that succeeded.
    pub strategy: Strategy,
    /// Rewriting the rules and the relaxed fixpoint that bounds what can be true.
    pub analysis: Duration,
    /// Instantiating the rules.
    pub grounding: Duration,
    /// Building, sharing and ordering the gates.
    pub compiling: Duration,
    /// From the start of the first attempt to the end.
    pub total: Duration,
}

impl std::fmt::Display for LoadReport {
    /// `rules as written: analysis 12 ms, grounding 30 ms, compiling 8 ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{}: analysis {:.0} ms, grounding {:.0} ms, compiling {:.0} ms",
            match self.strategy {
                Strategy::AsWritten => "rules as written",
                Strategy::Decomposed => "rules decomposed",
            },
            ms(self.analysis),
            ms(self.grounding),
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

/// Grounds and compiles `p` with the default [`Budget`].
pub fn ground(p: &ast::Program) -> Result<Grounded, NetworkError> {
    ground_with(p, Budget::default())
}

/// Where each relation's facts come from while grounding.
#[derive(Clone, Copy)]
struct Sources<'a> {
    relaxed: &'a Db,
    exact: &'a Db,
    dynamic: &'a [bool],
    /// The demand relations of the rewrite: what is asked, read from the relaxed fixpoint as
    /// constant filters (an instance nobody can ask for is never needed).
    demand: &'a [bool],
    /// The relations left out of the relaxed fixpoint (see [`late_relations`]): the heads of their
    /// rules' instances are recorded as the values of the head's variables.
    late: &'a [bool],
    /// The relations read only for their values (see [`is_domain_relation`]): looked up like the
    /// others, left out of the instances.
    domain: &'a [bool],
    /// Per relation, the demand relation whose rows its rows are, in the same order (see
    /// [`demand_shaped`]): an instance's head is then the row of its demand.
    copy_of: &'a [Option<RelId>],
    /// Per load-time relation of one column, its facts as a bitset by term number: the commonest
    /// check (`coordinate(?x)` with `?x` known) without hashing.
    unary: &'a [Option<Vec<u64>>],
}

impl<'a> Sources<'a> {
    fn db(&self, r: RelId) -> &'a Db {
        if self.dynamic[r.0 as usize] || self.demand[r.0 as usize] {
            self.relaxed
        } else {
            self.exact
        }
    }
}

/// The rows of a relation by the values of some of its columns.
type RowIndex = HashMap<SmallVec<[TermId; 4]>, Rc<[u32]>>;

/// One way of looking a relation's rows up.
struct Lookup {
    slots: Vec<Slot>,
    rows: Option<RowIndex>,
}

/// The rule instances of one rule as a grounding worker records them, one after the other in a flat
/// buffer (no allocation per instance): the head's atom, the number of body literals, then the
/// literals (`atom << 1 | negated`). An atom is a row of the relaxed fixpoint, numbered across
/// relations (see [`Grounder::row_id`]).
type Instances = Vec<u32>;

/// The length of an instance that [`drop_implied_turns`] removed.
const DROPPED: u32 = u32::MAX;

/// One grounding worker: instantiates rules over the relaxed fixpoint and the load-time facts. Workers
/// share nothing mutable but the instance count, so several ground rules side by side.
struct Grounder<'a> {
    src: Sources<'a>,
    terms: TermStore,
    /// Which lookup serves (relation, key slots): a number into `lookups`.
    index_of: HashMap<(u32, Vec<Slot>), u32>,
    /// The lookups, each built when first used.
    lookups: Vec<Lookup>,
    /// For each step of the rule being grounded, its lookup (`u32::MAX` not known yet): what is bound
    /// at a step does not change from one instance to the next.
    step_lookup: Vec<u32>,
    /// For each step of the rule being grounded, whether its literal is ground when reached (the
    /// join order fixes what each step has bound).
    step_ground: Vec<bool>,
    /// Per relation, the number of its first relaxed row among all relations' rows.
    row_base: &'a [u32],
    /// The instances of the rule being grounded, in the order found.
    out: Instances,
    /// The variables of the head of the rule being grounded, in order of first occurrence.
    head_vars: Vec<u32>,
    /// The step (into the join order) reading the demand whose row is the head's, when the head's
    /// relation copies a demand's rows (`usize::MAX` otherwise), and the row it is at.
    head_step: usize,
    head_row: u32,
    /// Instances found by this worker since it last added them to `shared_instances`.
    instances: usize,
    /// Instances found by all workers (added in batches).
    shared_instances: &'a AtomicUsize,
    /// Candidate rows tried, for budget checks between instances.
    visits: u64,
    budget: Budget,
    started: Instant,
}

/// How the relaxed rows of the state-dependent relations are numbered as atoms: relation `r`'s are
/// `base[r]..base[r] + len[r]`, relations numbered one after the other (the late ones when complete).
struct Numbering {
    base: Vec<u32>,
    len: Vec<u32>,
    total: u64,
}

impl Numbering {
    /// Numbers relation `r`'s `len` rows next.
    fn number(&mut self, r: usize, len: usize) -> Result<(), NetworkError> {
        self.total += len as u64;
        if self.total >= 1 << 31 {
            return Err(NetworkError::over(
                Limit::Size,
                "more than 2^31 facts can hold in some state".into(),
            ));
        }
        self.base[r] = (self.total - len as u64) as u32;
        self.len[r] = len as u32;
        Ok(())
    }
}

/// The ground atoms with their alternatives, ready to compile. An atom is a row of the relaxed
/// fixpoint of a state-dependent relation, numbered across relations (see [`Grounder::row_id`]), so
/// that finding an atom costs no hashing of its own and numbering them costs nothing.
struct Ground<'a> {
    relaxed: &'a Db,
    /// Per relation, whether it depends on the state.
    dynamic: &'a [bool],
    terms: TermStore,
    /// The alternatives of atom `a` are `alts[first[a]..first[a + 1]]`, in rule order, each the
    /// (start, length) of its body in `lits`; an atom's bodies are side by side there, so that
    /// compiling an atom reads one stretch of memory. A length of [`DROPPED`]: no alternative.
    first: Vec<u32>,
    alts: Vec<(u32, u32)>,
    lits: Vec<u32>,
    /// Atoms with an instance of no state-dependent condition: always true.
    always: Vec<bool>,
    /// Atoms that some instance mentions.
    used: Vec<bool>,
    /// Per relation, its first atom and its number of atoms.
    row_base: Vec<u32>,
    row_len: Vec<u32>,
    /// (first atom, relation) of every relation with atoms, by first atom.
    by_base: Vec<(u32, u32)>,
    instances: usize,
    started: Instant,
    true_: RelId,
    does: RelId,
    rel_names: Vec<String>,
}

impl<'a> Ground<'a> {
    /// Indexes the instances by head atom, in rule order, and notes which atoms are used.
    fn new(
        relaxed: &'a Db,
        dynamic: &'a [bool],
        found: Vec<Instances>,
        Numbering {
            base: row_base,
            len: row_len,
            ..
        }: Numbering,
        started: Instant,
        (true_, does): (RelId, RelId),
        rel_names: Vec<String>,
    ) -> Self {
        let terms = relaxed.terms.clone();
        let atoms = row_len.iter().map(|&n| n as usize).sum();
        let mut by_base: Vec<(u32, u32)> = (0..row_base.len())
            .filter(|&r| row_len[r] > 0)
            .map(|r| (row_base[r], r as u32))
            .collect();
        by_base.sort_unstable();
        let mut first = vec![0u32; atoms + 1];
        let mut lit_first = vec![0u32; atoms + 1];
        let mut used = vec![false; atoms];
        let mut always = vec![false; atoms];
        let mut instances = 0;
        for buf in &found {
            let mut at = 0;
            while at < buf.len() {
                let (head, n) = (buf[at] as usize, buf[at + 1] as usize);
                used[head] = true;
                for &l in &buf[at + 2..at + 2 + n] {
                    used[(l >> 1) as usize] = true;
                }
                always[head] |= n == 0;
                first[head + 1] += 1;
                lit_first[head + 1] += n as u32;
                instances += 1;
                at += 2 + n;
            }
        }
        for a in 0..atoms {
            first[a + 1] += first[a];
            lit_first[a + 1] += lit_first[a];
        }
        let mut fill: Vec<u32> = first[..atoms].to_vec();
        let mut alts = vec![(0, 0); instances];
        let mut lits = vec![0; lit_first[atoms] as usize];
        for buf in found {
            let mut at = 0;
            while at < buf.len() {
                let (head, n) = (buf[at] as usize, buf[at + 1] as usize);
                let start = lit_first[head];
                lits[start as usize..start as usize + n].copy_from_slice(&buf[at + 2..at + 2 + n]);
                lit_first[head] += n as u32;
                alts[fill[head] as usize] = (start, n as u32);
                fill[head] += 1;
                at += 2 + n;
            }
        }
        Ground {
            relaxed,
            dynamic,
            terms,
            first,
            alts,
            lits,
            always,
            used,
            row_base,
            row_len,
            by_base,
            instances,
            started,
            true_,
            does,
            rel_names,
        }
    }

    /// The atom of `rel(args)`, if the relaxed fixpoint has it.
    fn find_atom(&self, rel: RelId, args: &[TermId]) -> Option<u32> {
        let i = self.relaxed.rel(rel).position(args)?;
        Some(self.row_base[rel.0 as usize] + i as u32)
    }

    /// The relation of atom `a`: the last whose first atom is at most `a`.
    fn rel_of(&self, a: u32) -> RelId {
        RelId(self.by_base[self.by_base.partition_point(|&(b, _)| b <= a) - 1].1)
    }

    /// Whether atom `a` is a fact of `rel`.
    fn is(&self, a: u32, rel: RelId) -> bool {
        a.wrapping_sub(self.row_base[rel.0 as usize]) < self.row_len[rel.0 as usize]
    }

    /// The atoms of `rel`.
    fn atoms_of(&self, rel: RelId) -> std::ops::Range<u32> {
        let b = self.row_base[rel.0 as usize];
        b..b + self.row_len[rel.0 as usize]
    }

    /// The arguments of atom `a`.
    fn args(&self, a: u32) -> &[TermId] {
        let rel = self.rel_of(a);
        self.relaxed
            .rel(rel)
            .row((a - self.row_base[rel.0 as usize]) as usize)
    }

    /// The atoms of `rel` that some instance mentions.
    fn used_atoms(&self, rel: RelId) -> impl Iterator<Item = u32> + '_ {
        self.atoms_of(rel).filter(|&a| self.used[a as usize])
    }

    /// The body of alternative `(start, length)`, `None` when it was dropped.
    fn body(&self, (start, n): (u32, u32)) -> Option<&[u32]> {
        (n != DROPPED).then(|| &self.lits[start as usize..(start + n) as usize])
    }

    /// The alternatives of atom `a`, as positions for [`Ground::body`].
    fn alts_of(&self, a: u32) -> &[(u32, u32)] {
        &self.alts[self.first[a as usize] as usize..self.first[a as usize + 1] as usize]
    }

    /// The bodies of atom `a`'s alternatives.
    fn bodies(&self, a: u32) -> impl Iterator<Item = &[u32]> + '_ {
        self.alts_of(a).iter().filter_map(|&p| self.body(p))
    }

    /// The literal of atom `a`'s bodies at position (body `bi`, literal `li`), moving the position on:
    /// a depth-first walk keeps its place in each atom on its stack. `None` after the last.
    fn next_lit(&self, a: u32, bi: &mut usize, li: &mut usize) -> Option<u32> {
        let alts = self.alts_of(a);
        while *bi < alts.len() {
            match self.body(alts[*bi]) {
                Some(body) if *li < body.len() => {
                    *li += 1;
                    return Some(body[*li - 1]);
                }
                _ => {
                    *bi += 1;
                    *li = 0;
                }
            }
        }
        None
    }
}

/// Grounds and compiles `p` within `budget` (see the module documentation): the rules as written
/// first, within [`PLAIN_SHARE`] of the default budget (and of `budget`); when that exceeds it, the
/// rules decomposed and demand-driven (see [`Strategy::Decomposed`]) in the time left. A larger
/// budget goes to the second strategy: the rules as written do not get smaller with time.
pub fn ground_with(p: &ast::Program, budget: Budget) -> Result<Grounded, NetworkError> {
    let started = Instant::now();
    let default = Budget::default();
    let plain = Budget {
        max_time: budget.max_time.min(default.max_time).mul_f64(PLAIN_SHARE),
        max_instances: budget.max_instances.min(PLAIN_SIZE.0),
        max_gates: budget.max_gates.min(default.max_gates),
        max_analysis_facts: budget.max_analysis_facts.min(PLAIN_SIZE.1),
    };
    match ground_as(p, plain, started, Strategy::AsWritten) {
        Err(NetworkError::Budget(first)) => {
            match ground_as(p, budget, started, Strategy::Decomposed) {
                Err(NetworkError::Budget(second)) => Err(NetworkError::over(
                    if first.limit == Limit::Time {
                        Limit::Time
                    } else {
                        second.limit
                    },
                    format!("{first}; with the rules decomposed and demand-driven, {second}"),
                )),
                other => other,
            }
        }
        other => other,
    }
}

/// The part of the time budget the rules as written get before the decomposed form is tried.
pub const PLAIN_SHARE: f64 = 0.3;

/// The most instances and analysis facts the rules as written get, whatever the budget: a game that
/// needs more is one whose decomposed form is far smaller (chess's relaxed fixpoint as written passes
/// 300,000 facts in 70 ms; kalaha's as written needs about 400,000 for 432,915 gates, decomposed 96,836
/// gates that play twice as fast). `battle`, the largest as written, needs about 110,000.
pub const PLAIN_SIZE: (usize, usize) = (3_000_000, 300_000);

/// How the rules are prepared for grounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// As written: the whole relaxed fixpoint, every instance of every rule over it. The smallest
    /// networks when it fits, as no relation is added.
    AsWritten,
    /// Variables that only some conditions of a rule share projected into relations of their own
    /// (`engine::decompose`), then every state-dependent relation restricted to the instances its
    /// readers can ask for (the magic-sets rewrite of `engine::demand`, reading only what binds the
    /// asked arguments): chess's frame rule, checkers' and skirmish's move rules.
    Decomposed,
}

/// [`ground_with`] with one [`Strategy`], the budget's time counted from `started`.
pub fn ground_as(
    p: &ast::Program,
    budget: Budget,
    started: Instant,
    strategy: Strategy,
) -> Result<Grounded, NetworkError> {
    ground_compiling(p, budget, started, strategy, SIDE_BY_SIDE)
}

/// [`ground_as`], the relations of at least `side_by_side` atoms compiled side by side, that many
/// atoms a task (see [`Compiler::compile_side_by_side`]).
fn ground_compiling(
    p: &ast::Program,
    budget: Budget,
    started: Instant,
    strategy: Strategy,
    side_by_side: usize,
) -> Result<Grounded, NetworkError> {
    let attempt = Instant::now();
    // Operation rules become classic `next` rules first, exactly as the Datalog engine reads them.
    let mut prog = to_classic(&lower(p)?)?;
    // The same rewrites as the Datalog engine's, so that both engines accept the same games.
    crate::engine::rewrite::prepare(&mut prog);
    let role = prog
        .keywords
        .role
        .ok_or_else(|| EngineError::Invalid("the game has no `role` facts".into()))?;
    let true_ = prog.add_relation("true", 1);
    let does = prog.add_relation("does", 2);
    let next = prog.add_relation("next", 1);
    let legal = prog.add_relation("legal", 2);
    let init = prog.add_relation("init", 1);
    let goal = prog.add_relation("goal", 2);
    let terminal = prog.add_relation("terminal", 0);
    // The load-time analysis shares the grounding budget: a relaxed fixpoint that runs away (unbounded
    // arithmetic, a huge cross product) means there is no network to build, and the caller falls back.
    let limits = Limits {
        max_facts: budget.max_analysis_facts,
        deadline: Some(started + budget.max_time),
        ..Limits::default()
    };
    // A runaway analysis names the relation that grew most, the likely culprit (a counter, a path).
    let grown = |db: &Db, p: &Program| -> String {
        db.rels
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
            .unwrap_or_default()
    };
    // The evaluator stops at its deadline with the same error as for size: the clock tells which.
    let over_budget_in = |db: &Db, p: &Program| {
        let culprit = grown(db, p);
        move |e: EngineError| match e {
            EngineError::Runaway(why) => NetworkError::over(
                match limits.deadline {
                    Some(d) if Instant::now() >= d => Limit::Time,
                    _ => Limit::Size,
                },
                format!("the load-time analysis: {why}{culprit}"),
            ),
            e => e.into(),
        }
    };
    if strategy == Strategy::Decomposed {
        let dynamic = dynamic_relations(&prog, &[true_, does], &[]);
        let fixed: Vec<bool> = dynamic.iter().map(|d| !d).collect();
        unfold_tables(&mut prog, &dynamic, &fixed);
        // Rules alike but for one condition (an `or`) become one first, so that what they share is
        // projected, asked about and grounded once.
        merge_alternatives(&mut prog, &dynamic);
        let dynamic = dynamic_relations(&prog, &[true_, does], &[]);
        eliminate_variables(&mut prog, &dynamic);
        let mut roots = vec![true_, does, next, legal, init, goal, terminal, role];
        let k = prog.keywords;
        roots.extend([k.base, k.input].into_iter().flatten());
        let dynamic = dynamic_relations(&prog, &[true_, does], &[]);
        let per_move = vec![false; prog.relations.len()];
        // The tables' sizes guide which literals bind what is asked.
        let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
        let splan = plan(&prog, &[(true_, Phase::State), (does, Phase::Move)])?;
        let mut sdb = Db::new(&splan, &arities, prog.terms.clone(), limits);
        if let Err(e) = sdb.run(&splan, Phase::Static) {
            return Err(over_budget_in(&sdb, &prog)(e));
        }
        let sizes: Vec<Option<f64>> = (0..prog.relations.len())
            .map(|r| {
                (splan.phases[r] == Phase::Static).then(|| sdb.rel(RelId(r as u32)).len() as f64)
            })
            .collect();
        demand(
            &mut prog,
            &roots,
            &dynamic,
            &per_move,
            &Lean::Binding(sizes),
        );
        // The demand rules read the conditions before the asked relation, with variables the demand
        // does not keep: project those away too (they only make the relaxed fixpoint slower).
        let asking: Vec<bool> = (0..prog.relations.len())
            .map(|r| is_demand_relation(&prog, RelId(r as u32)))
            .collect();
        eliminate_variables_as(&mut prog, &asking, "demand#proj#", Origin::Demand, false);
        // With the demands made, the rules no demand restricts get one more: variables a negation reads
        // along with the rule's own (chess's `legal` and the king's square) are projected too, the
        // projection reading a copy of what binds the rest (a projection out of a restricted rule
        // would leave its demand behind).
        let guarded = unrestricted(&prog, dynamic_relations(&prog, &[true_, does], &[]));
        eliminate_variables_as(&mut prog, &guarded, "guard#", Origin::Eliminated, true);
        let asking: Vec<bool> = (0..prog.relations.len())
            .map(|r| is_demand_relation(&prog, RelId(r as u32)))
            .collect();
        merge_twins(&mut prog, &asking);
    }
    let demand_rel: Vec<bool> = (0..prog.relations.len())
        .map(|r| is_demand_relation(&prog, RelId(r as u32)))
        .collect();
    let domain_rel: Vec<bool> = (0..prog.relations.len())
        .map(|r| is_domain_relation(&prog, RelId(r as u32)))
        .collect();
    let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();

    let mut relaxed = relax(&prog, init, true_, next, legal, does);
    let gplan = plan(&prog, &[(true_, Phase::State), (does, Phase::Move)])?;
    let dynamic: Vec<bool> = gplan
        .phases
        .iter()
        .zip(&demand_rel)
        .map(|(p, &d)| *p != Phase::Static && !d)
        .collect();
    let mut late = late_relations(&relaxed, &plan(&relaxed, &[])?, &dynamic, &[true_, does]);
    // Without its negations, a rule of the relaxed program often has variables only one condition
    // reads (chess's `legal` keeps the king's square for `not threatened`): projected away, the
    // fixpoint derives each fact far fewer times. The projections are the relaxed program's own, of
    // state-dependent relations no demand restricts.
    let eligible = (0..relaxed.relations.len())
        .map(|r| dynamic.get(r).copied().unwrap_or(false) && !late[r])
        .collect();
    let eligible = unrestricted(&relaxed, eligible);
    eliminate_variables_as(
        &mut relaxed,
        &eligible,
        "relaxed#elim#",
        Origin::Eliminated,
        false,
    );
    late.resize(relaxed.relations.len(), false);
    let mut rplan = plan(&relaxed, &[])?;
    // The late relations' rows are added by the grounder, which looks them up its own way.
    for (ix, _) in rplan.indexes.iter_mut().zip(&late).filter(|(_, l)| **l) {
        ix.clear();
    }
    let early: Vec<bool> = rplan
        .strata
        .iter()
        .map(|s| !s.rels.iter().all(|r| late[r.0 as usize]))
        .collect();
    let relaxed_arities: Vec<usize> = relaxed.relations.iter().map(|r| r.arity).collect();
    let mut rdb = Db::new(&rplan, &relaxed_arities, relaxed.terms.clone(), limits);
    if let Err(e) = rdb.run_only_parallel(&rplan, Phase::Static, &early) {
        return Err(over_budget_in(&rdb, &relaxed)(e));
    }
    // A late relation whose every rule reads its own demand with the head's arguments (an all-bound
    // demand copy: chess's `threatened_with_capture#bbbbbbb`) has no fact the demand lacks: its atoms
    // are the demand's rows, known now. Numbered with the others, its readers need not wait for its
    // instances and its heads are found as any other's, by the grounding workers.
    let mut copy_of: Vec<Option<RelId>> = vec![None; prog.relations.len()];
    for (r, d) in demand_shaped(&prog, &late, &demand_rel) {
        rdb.rels[r.0 as usize] = rdb.rel(d).copy_rows();
        late[r.0 as usize] = false;
        copy_of[r.0 as usize] = Some(d);
    }
    let mut sdb = Db::new(&gplan, &arities, rdb.terms.clone(), limits);
    if let Err(e) = sdb.run(&gplan, Phase::Static) {
        return Err(over_budget_in(&sdb, &prog)(e));
    }
    let unary: Vec<Option<Vec<u64>>> = (0..prog.relations.len())
        .map(|r| {
            let rel = sdb.rel(RelId(r as u32));
            if dynamic[r] || demand_rel[r] || arities[r] != 1 {
                return None;
            }
            let mut bits = vec![0u64; sdb.terms.len().div_ceil(64)];
            for i in 0..rel.len() {
                let t = rel.row(i)[0].0 as usize;
                bits[t / 64] |= 1 << (t % 64);
            }
            Some(bits)
        })
        .collect();
    // One term store from here on: the exact evaluation's extends the relaxed one's.
    rdb.terms = sdb.terms.clone();

    let rows = |db: &Db, r: RelId| -> Vec<Vec<TermId>> {
        (0..db.rel(r).len())
            .map(|i| db.rel(r).row(i).to_vec())
            .collect()
    };
    let roles: Vec<TermId> = rows(&sdb, role).into_iter().map(|r| r[0]).collect();
    if roles.is_empty() {
        return Err(EngineError::Invalid("the game has no roles".into()).into());
    }
    let mut props: Vec<TermId> = rows(&rdb, true_).into_iter().map(|r| r[0]).collect();
    props.sort_by_cached_key(|t| rdb.terms.kif(*t));
    props.dedup();
    let prop_of: HashMap<TermId, u32> = props
        .iter()
        .enumerate()
        .map(|(i, t)| (*t, i as u32))
        .collect();
    let legal_rows = rows(&rdb, legal);
    let mut moves: Vec<TermId> = legal_rows.iter().map(|r| r[1]).collect();
    moves.sort_by_cached_key(|t| rdb.terms.kif(*t));
    moves.dedup();
    let move_of: HashMap<TermId, u32> = moves
        .iter()
        .enumerate()
        .map(|(i, t)| (*t, i as u32))
        .collect();
    let initial: Vec<u32> = rows(&sdb, init)
        .iter()
        .filter_map(|r| prop_of.get(&r[0]).copied())
        .collect();

    let analysed = Instant::now();
    // Every relaxed row of a state-dependent relation may become an atom: number them across relations,
    // the late ones as they are completed.
    let nrel = prog.relations.len();
    let mut atoms = Numbering {
        base: vec![0; nrel],
        len: vec![0; nrel],
        total: 0,
    };
    for r in (0..nrel).filter(|&r| dynamic[r] && !late[r]) {
        atoms.number(r, rdb.rel(RelId(r as u32)).len())?;
    }
    let to_ground: Vec<usize> = (0..prog.rules.len())
        .filter(|&i| {
            let h = prog.rules[i].head.rel;
            dynamic[h.0 as usize] && h != true_ && h != does
        })
        .collect();
    let (phase_of, level) = grounding_phases(&prog, &to_ground, &late)?;
    let mut found: Vec<Instances> = vec![Vec::new(); to_ground.len()];
    for phase in 0..=phase_of.iter().copied().max().unwrap_or(0) {
        let which: Vec<usize> = (0..to_ground.len())
            .filter(|&k| phase_of[k] == phase)
            .collect();
        let src = Sources {
            relaxed: &rdb,
            exact: &sdb,
            dynamic: &dynamic,
            demand: &demand_rel,
            late: &late,
            domain: &domain_rel,
            copy_of: &copy_of,
            unary: &unary,
        };
        let rules: Vec<usize> = which.iter().map(|&k| to_ground[k]).collect();
        let out = ground_rules(&prog, &rules, src, &rdb.terms, &atoms.base, budget, started)?;
        for (k, buf) in which.into_iter().zip(out) {
            found[k] = buf;
        }
        // The late relations complete now: their rows, then their instances' heads as atoms (row
        // numbers first, numbered across relations once every relation's rows are known).
        let completed: Vec<usize> = (0..nrel)
            .filter(|&r| late[r] && level[r] == phase)
            .collect();
        complete_late(&prog, &to_ground, &completed, &mut found, &mut rdb);
        for &r in &completed {
            let base = atoms.total as u32;
            for (k, buf) in found.iter_mut().enumerate() {
                if prog.rules[to_ground[k]].head.rel.0 as usize == r {
                    let mut at = 0;
                    while at < buf.len() {
                        buf[at] += base;
                        at += 2 + buf[at + 1] as usize;
                    }
                }
            }
            atoms.number(r, rdb.rel(RelId(r as u32)).len())?;
        }
    }
    let rel_names = prog
        .relations
        .iter()
        .map(|r| prog.terms.name(r.name).to_string())
        .collect();
    let mut g = Ground::new(
        &rdb,
        &dynamic,
        found,
        atoms,
        started,
        (true_, does),
        rel_names,
    );
    // The outputs, as atom literals (or constants).
    let out_lit = |g: &Ground, r: RelId, args: &[TermId]| -> Out {
        if !dynamic[r.0 as usize] {
            return Out::Const(sdb.rel(r).contains(args));
        }
        match g.find_atom(r, args) {
            Some(a) => Out::Atom(a),
            None => Out::Const(false),
        }
    };
    let mut legal_out: Vec<Vec<(u32, TermId, Out)>> = vec![Vec::new(); roles.len()];
    for row in &legal_rows {
        if let Some(ri) = roles.iter().position(|r| *r == row[0]) {
            legal_out[ri].push((move_of[&row[1]], row[1], out_lit(&g, legal, row)));
        }
    }
    for l in &mut legal_out {
        l.sort_by_key(|x| x.0);
        l.dedup_by_key(|x| x.0);
    }
    let mut goal_out: Vec<Vec<(i32, Out)>> = vec![Vec::new(); roles.len()];
    for row in rows(&rdb, goal) {
        let (Some(ri), Some(v)) = (
            roles.iter().position(|r| *r == row[0]),
            g.terms.as_int(row[1]).and_then(|v| i32::try_from(v).ok()),
        ) else {
            continue;
        };
        goal_out[ri].push((v, out_lit(&g, goal, &row)));
    }
    for v in &mut goal_out {
        v.sort_by_key(|x| x.0);
    }
    let terminal_out = out_lit(&g, terminal, &[]);
    let next_out: Vec<Out> = props.iter().map(|p| out_lit(&g, next, &[*p])).collect();

    // Compile.
    let grounded = Instant::now();
    let turns = one_mover(&g, &roles, legal, next, &initial, &prop_of);
    drop_implied_turns(&mut g, &roles, &turns);
    let mut c = Compiler::new(&g, props.len(), &prop_of, &roles, &move_of, budget);
    c.logic.one_mover = turns.iter().map(|t| t.is_some()).collect();
    // Atoms compile bottom-up, relation by relation and each relation's atoms in order, so that an
    // atom's bodies are read in memory order and its children are (nearly always) compiled already;
    // the depth-first walk of `atom_lit` only takes over inside recursive relations.
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); prog.relations.len()];
    for &ri in &to_ground {
        let rule = &prog.rules[ri];
        for l in &rule.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                deps[rule.head.rel.0 as usize].push((a.rel.0 as usize, false));
            }
        }
    }
    for scc in tarjan(prog.relations.len(), &deps) {
        // A relation outside any recursion, with many atoms, compiles side by side.
        if let [r] = scc[..] {
            let atoms: Vec<u32> = g.used_atoms(RelId(r as u32)).collect();
            let inputs = r == true_.0 as usize || r == does.0 as usize;
            if !inputs && atoms.len() >= side_by_side && !deps[r].iter().any(|d| d.0 == r) {
                c.compile_side_by_side(&g, &atoms, side_by_side)?;
                continue;
            }
        }
        for r in scc {
            for a in g.used_atoms(RelId(r as u32)) {
                c.atom_lit(&g, a)?;
            }
        }
    }
    let lit = |c: &mut Compiler, o: &Out| -> Result<NetLit, NetworkError> {
        match o {
            Out::Const(b) => Ok(*b as NetLit),
            Out::Atom(a) => c.atom_lit(&g, *a),
        }
    };
    let mut legal_lits = Vec::new();
    for l in &legal_out {
        let mut v = Vec::new();
        for (m, _, o) in l {
            v.push((*m, lit(&mut c, o)?));
        }
        legal_lits.push(v);
    }
    let mut goal_lits = Vec::new();
    for l in &goal_out {
        let mut v = Vec::new();
        for (val, o) in l {
            v.push((*val, lit(&mut c, o)?));
        }
        goal_lits.push(v);
    }
    let terminal_lit = lit(&mut c, &terminal_out)?;
    let mut next_lits = Vec::new();
    for o in &next_out {
        next_lits.push(lit(&mut c, o)?);
    }
    let state_lits: Vec<NetLit> = legal_lits
        .iter()
        .flatten()
        .map(|x| x.1)
        .chain(goal_lits.iter().flatten().map(|x| x.1))
        .chain([terminal_lit])
        .collect();
    if state_lits.iter().any(|l| c.move_dep(*l)) {
        return Err(NetworkError::Unsupported(
            "`legal`, `goal` or `terminal` depends on `does`".into(),
        ));
    }
    let first_gate = 1 + props.len() + c.logic.num_does;
    // Gates of atoms no output reads (the compiler walks every atom an instance mentions) go.
    let live = c.live_gates(state_lits.iter().chain(&next_lits).copied());
    let remap = c.finish_order(first_gate, &live);
    let map = |l: NetLit| -> NetLit {
        let n = l >> 1;
        if n < GATE0 {
            l
        } else {
            (remap[(n - GATE0) as usize] << 1) | (l & 1)
        }
    };
    let mut gates = Vec::with_capacity(c.table.gates.len());
    let mut inputs = Vec::with_capacity(c.table.inputs.len());
    let mut order: Vec<usize> = (0..c.table.gates.len()).filter(|&i| live[i]).collect();
    order.sort_by_key(|&i| remap[i]);
    debug_assert!(order.iter().all(|&i| (remap[i] as usize) < GATE0 as usize));
    let mut state_gates = 0;
    for &i in &order {
        let (s, e, neg, mv) = c.table.gates[i];
        if !mv {
            state_gates += 1;
        }
        let start = inputs.len() as u32;
        inputs.extend_from_slice(&c.table.inputs[s as usize..e as usize]);
        gates.push(Gate {
            start,
            end: inputs.len() as u32,
            negate: if neg { !0 } else { 0 },
        });
    }
    let legal = legal_lits
        .iter()
        .enumerate()
        .map(|(ri, v)| {
            v.iter()
                .map(|&(m, l)| LegalOut {
                    mv: m,
                    lit: map(l),
                    does: c
                        .does_node
                        .get(&(ri as u32, m))
                        .copied()
                        .unwrap_or(u32::MAX),
                })
                .collect()
        })
        .collect();
    let goals = goal_lits
        .iter()
        .map(|v| v.iter().map(|&(val, l)| (val, map(l))).collect())
        .collect();
    Ok(Grounded {
        terms: g.terms.clone(),
        syntax: prog.syntax,
        roles,
        props,
        moves,
        initial,
        num_nodes: first_gate + gates.len(),
        first_gate,
        gates,
        state_gates,
        inputs,
        legal,
        goals,
        terminal: map(terminal_lit),
        next: next_lits.iter().map(|&l| map(l)).collect(),
        instances: g.instances,
        load: LoadReport {
            strategy,
            analysis: analysed - attempt,
            grounding: grounded - analysed,
            compiling: grounded.elapsed(),
            total: started.elapsed(),
        },
    })
}

/// Grounds rules `which` of `p` on as many workers as rayon has threads, each taking the next rule not
/// yet taken (the rules differ in cost by orders of magnitude, so a fixed split would leave a worker
/// idle). Returns each rule's instances, in the order of `which`.
fn ground_rules(
    p: &Program,
    which: &[usize],
    src: Sources,
    terms: &TermStore,
    row_base: &[u32],
    budget: Budget,
    started: Instant,
) -> Result<Vec<Instances>, NetworkError> {
    let next = AtomicUsize::new(0);
    let shared_instances = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, which.len().max(1));
    // Per worker, the rules it grounded (by position in `which`) with their instances.
    type Done = Vec<(usize, Instances)>;
    let found: Vec<Result<Done, NetworkError>> = (0..workers)
        .into_par_iter()
        .map(|_| {
            let mut w = Grounder {
                src,
                terms: terms.clone(),
                index_of: HashMap::new(),
                lookups: Vec::new(),
                step_lookup: Vec::new(),
                step_ground: Vec::new(),
                row_base,
                out: Vec::new(),
                head_vars: Vec::new(),
                head_step: usize::MAX,
                head_row: 0,
                instances: 0,
                shared_instances: &shared_instances,
                visits: 0,
                budget,
                started,
            };
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&ri) = which.get(k) else {
                    return Ok(done);
                };
                if let Err(e) = w.ground_rule(&p.rules[ri]) {
                    // The others stop at their next rule.
                    next.store(which.len(), Ordering::Relaxed);
                    return Err(e);
                }
                done.push((k, std::mem::take(&mut w.out)));
            }
        })
        .collect();
    let mut by_rule: Vec<Instances> = vec![Vec::new(); which.len()];
    for f in found {
        for (k, instances) in f? {
            by_rule[k] = instances;
        }
    }
    Ok(by_rule)
}

/// `eligible` (by [`RelId`] index) without the relations a demand restricts, or that are demands: a
/// projection out of such a rule would leave the demand behind and hold for every value, asked or not.
fn unrestricted(p: &Program, mut eligible: Vec<bool>) -> Vec<bool> {
    for r in &p.rules {
        let restricted = r.body.iter().any(|l| match l {
            Lit::Pos(a) => is_demand_relation(p, a.rel),
            _ => false,
        });
        if restricted || is_demand_relation(p, r.head.rel) {
            if let Some(e) = eligible.get_mut(r.head.rel.0 as usize) {
                *e = false;
            }
        }
    }
    eligible
}

/// The late relations (by [`RelId`] index) whose every rule reads one demand relation with exactly the
/// head's arguments, with that demand relation: their facts are among the demand's rows.
fn demand_shaped(p: &Program, late: &[bool], demand: &[bool]) -> Vec<(RelId, RelId)> {
    let mut of: Vec<Option<Option<RelId>>> = vec![None; p.relations.len()];
    for rule in &p.rules {
        let h = rule.head.rel.0 as usize;
        if !late.get(h).copied().unwrap_or(false) {
            continue;
        }
        let asked = rule.body.iter().find_map(|l| match l {
            Lit::Pos(a) if demand[a.rel.0 as usize] && a.args == rule.head.args => Some(a.rel),
            _ => None,
        });
        of[h] = match of[h] {
            None => Some(asked),
            Some(d) if d == asked => Some(d),
            Some(_) => Some(None),
        };
    }
    of.iter()
        .enumerate()
        .filter_map(|(r, d)| Some((RelId(r as u32), (*d)??)))
        .collect()
}

/// Adds the heads of the instances of the `completed` late relations' rules (`found`, by position in
/// `to_ground`) to the relations' rows, and turns each instance's head into its row number. Relations
/// whose heads hold no compound term (no term to make) are completed side by side, one per worker.
fn complete_late(
    p: &Program,
    to_ground: &[usize],
    completed: &[usize],
    found: &mut [Instances],
    db: &mut Db,
) {
    let flat = |r: usize| {
        to_ground.iter().all(|&ri| {
            let h = &p.rules[ri].head;
            h.rel.0 as usize != r || h.args.iter().all(|a| !matches!(a, Pat::Func(..)))
        })
    };
    // One job per relation: its store and its rules' instance buffers.
    let mut job_of: HashMap<usize, usize> = HashMap::new();
    let mut jobs: Vec<(&mut RelStore, Vec<(&Rule, &mut Instances)>)> = Vec::new();
    let Db { rels, terms, .. } = db;
    for (r, store) in rels.iter_mut().enumerate() {
        if completed.contains(&r) && flat(r) {
            job_of.insert(r, jobs.len());
            jobs.push((store, Vec::new()));
        }
    }
    let mut rest: Vec<(usize, &Rule, &mut Instances)> = Vec::new();
    for (k, buf) in found.iter_mut().enumerate() {
        let rule = &p.rules[to_ground[k]];
        let r = rule.head.rel.0 as usize;
        match job_of.get(&r) {
            Some(&j) => jobs[j].1.push((rule, buf)),
            None if completed.contains(&r) => rest.push((r, rule, buf)),
            None => {}
        }
    }
    let shared: &TermStore = terms;
    jobs.par_iter_mut().for_each(|(store, bufs)| {
        for (rule, buf) in bufs.iter_mut() {
            // A flat head makes no term: every variable was recorded.
            **buf = atoms_of_heads(rule, buf, |b| {
                let fact = instantiate_atom(&rule.head, b, &mut |_, _| None)?;
                Some(store.find_or_insert(&fact, shared) as u32)
            });
        }
    });
    // Heads with compound terms may make new terms: one relation after the other.
    for (r, rule, buf) in rest {
        *buf = atoms_of_heads(rule, buf, |b| {
            let fact = instantiate_atom(&rule.head, b, &mut |s, ids| Some(terms.func(s, ids)))?;
            Some(rels[r].find_or_insert(&fact, terms) as u32)
        });
    }
}

/// A ground atom as KIF, for messages.
fn atom_name(g: &Ground, a: u32) -> String {
    let mut s = format!("({}", g.rel_names[g.rel_of(a).0 as usize]);
    for t in g.args(a) {
        s.push(' ');
        s.push_str(&g.terms.kif(*t));
    }
    s.push(')');
    s
}

#[derive(Clone, Copy)]
enum Out {
    Const(bool),
    Atom(u32),
}

/// Whether a pattern's variables are all bound.
fn bound(p: &Pat, b: &[Option<TermId>]) -> bool {
    let mut ok = true;
    p.each_var(&mut |v| ok &= b[v as usize].is_some());
    ok
}

impl Grounder<'_> {
    fn check_budget(&self) -> Result<(), NetworkError> {
        if self.shared_instances.load(Ordering::Relaxed) > self.budget.max_instances {
            return Err(NetworkError::over(
                Limit::Size,
                format!(
                    "more than {} ground rule instances",
                    self.budget.max_instances
                ),
            ));
        }
        if self.started.elapsed() > self.budget.max_time {
            return Err(NetworkError::over(
                Limit::Time,
                format!(
                    "grounding took longer than {} s",
                    self.budget.max_time.as_secs_f64()
                ),
            ));
        }
        Ok(())
    }

    /// The body in a join order: filters as soon as their variables are bound, then the positive atom
    /// with the most bound arguments.
    fn order(&self, rule: &Rule) -> Result<Vec<usize>, NetworkError> {
        let nv = rule.var_names.len();
        let mut b: Vec<Option<TermId>> = vec![None; nv];
        let dummy = TermId(0);
        let mut left: Vec<usize> = (0..rule.body.len()).collect();
        let mut out = Vec::new();
        while !left.is_empty() {
            let mut pick = None;
            for (k, &i) in left.iter().enumerate() {
                let ready = match &rule.body[i] {
                    Lit::Neg(a) => a.args.iter().all(|p| bound(p, &b)),
                    Lit::Cmp(Cmp::Same, x, y) => bound(x, &b) || bound(y, &b),
                    Lit::Cmp(_, x, y) => bound(x, &b) && bound(y, &b),
                    Lit::Arith(_, x, y, _) => bound(x, &b) && bound(y, &b),
                    Lit::Pos(_) => false,
                };
                if ready {
                    pick = Some(k);
                    break;
                }
            }
            if pick.is_none() {
                // The demand for the head first: the instances asked for are the ones to make.
                pick = left.iter().position(
                    |&i| matches!(&rule.body[i], Lit::Pos(a) if self.src.demand[a.rel.0 as usize]),
                );
            }
            if pick.is_none() {
                let mut best: Option<(usize, usize, usize)> = None;
                for (k, &i) in left.iter().enumerate() {
                    if let Lit::Pos(a) = &rule.body[i] {
                        let nb = a.args.iter().filter(|p| bound(p, &b)).count();
                        let size = self.src.db(a.rel).rel(a.rel).len();
                        let key = (nb, usize::MAX - size);
                        if best.is_none_or(|(_, x, y)| key > (x, y)) {
                            best = Some((k, key.0, key.1));
                        }
                    }
                }
                pick = best.map(|x| x.0);
            }
            let Some(k) = pick else {
                return Err(EngineError::Invalid("a rule has an unbound variable".into()).into());
            };
            let i = left.remove(k);
            let mut mark = |p: &Pat| p.each_var(&mut |v| b[v as usize] = Some(dummy));
            match &rule.body[i] {
                Lit::Pos(a) => a.args.iter().for_each(&mut mark),
                Lit::Cmp(_, x, y) => {
                    mark(x);
                    mark(y)
                }
                Lit::Arith(_, _, _, z) => mark(z),
                Lit::Neg(_) => {}
            }
            out.push(i);
        }
        Ok(out)
    }

    fn ground_rule(&mut self, rule: &Rule) -> Result<(), NetworkError> {
        let order = self.order(rule)?;
        self.head_vars = head_vars(rule);
        let demand = self.src.copy_of[rule.head.rel.0 as usize];
        self.head_step = order
            .iter()
            .position(|&i| match &rule.body[i] {
                Lit::Pos(a) => Some(a.rel) == demand && a.args == rule.head.args,
                _ => false,
            })
            .unwrap_or(usize::MAX);
        self.step_lookup.clear();
        self.step_lookup.resize(order.len(), u32::MAX);
        let mut bound_here = vec![false; rule.var_names.len()];
        self.step_ground.clear();
        for &i in &order {
            let l = &rule.body[i];
            let ground = match l {
                Lit::Pos(a) | Lit::Neg(a) => a.args.iter().all(|p| p.is_bound(&bound_here)),
                _ => false,
            };
            self.step_ground.push(ground);
            l.bind_vars(&mut bound_here);
        }
        let mut b: Vec<Option<TermId>> = vec![None; rule.var_names.len()];
        let mut body: SmallVec<[u32; 4]> = SmallVec::new();
        self.step(rule, &order, 0, &mut b, &mut body)
    }

    fn step(
        &mut self,
        rule: &Rule,
        order: &[usize],
        k: usize,
        b: &mut Vec<Option<TermId>>,
        body: &mut SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        if k == order.len() {
            return self.emit(rule, b, body);
        }
        match &rule.body[order[k]] {
            Lit::Pos(a) => {
                let dynamic = self.src.dynamic[a.rel.0 as usize];
                let recorded = dynamic && !self.src.domain[a.rel.0 as usize];
                let db = self.src.db(a.rel);
                // A ground atom: one lookup, nothing to bind.
                if self.step_ground[k] {
                    // A one-column load-time relation (`coordinate(?x)`): one bit.
                    if let (Some(bits), [p]) = (&self.src.unary[a.rel.0 as usize], &a.args[..]) {
                        if k != self.head_step {
                            let held = self.make(p, b).is_some_and(|t| {
                                let i = t.0 as usize;
                                bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
                            });
                            return match held {
                                true => self.step(rule, order, k + 1, b, body),
                                false => Ok(()),
                            };
                        }
                    }
                    let Some(fact) = self.make_all(a, b) else {
                        return Ok(());
                    };
                    if dynamic {
                        let Some(at) = self.atom(a.rel, &fact) else {
                            return Ok(());
                        };
                        if !recorded {
                            return self.step(rule, order, k + 1, b, body);
                        }
                        body.push(at << 1);
                        self.step(rule, order, k + 1, b, body)?;
                        body.pop();
                        return Ok(());
                    }
                    if k == self.head_step {
                        let Some(i) = db.rel(a.rel).position(&fact) else {
                            return Ok(());
                        };
                        self.head_row = i as u32;
                    } else if !self.holds(a.rel, &fact) {
                        return Ok(());
                    }
                    return self.step(rule, order, k + 1, b, body);
                }
                // Otherwise look the rows up by every bound value, a whole column or a part of a
                // column's term (`legal2(?p, (move ?piece ?u ?v ?x ?y))` with the squares known).
                let known = self.step_lookup[k];
                let lookup = if known != u32::MAX {
                    known
                } else {
                    let bound: Vec<bool> = b.iter().map(Option::is_some).collect();
                    let slots = key_slots(a, &bound);
                    let next = self.lookups.len() as u32;
                    let id = *self
                        .index_of
                        .entry((a.rel.0, slots.clone()))
                        .or_insert(next);
                    if id == next {
                        self.lookups.push(Lookup { slots, rows: None });
                    }
                    self.step_lookup[k] = id;
                    id
                };
                let mut key: SmallVec<[TermId; 4]> = SmallVec::new();
                for s in &self.lookups[lookup as usize].slots {
                    let t = match s.key_pattern(&a.args) {
                        Ok(p) => self.make(p, b),
                        Err(functor) => Some(functor),
                    };
                    // A bound part that was never built is in no row.
                    let Some(t) = t else {
                        return Ok(());
                    };
                    key.push(t);
                }
                let rows: Option<Rc<[u32]>> = if key.is_empty() {
                    None
                } else {
                    let terms = &self.terms;
                    let Lookup { slots, rows } = &mut self.lookups[lookup as usize];
                    let ix = rows.get_or_insert_with(|| {
                        let rel = db.rel(a.rel);
                        let mut m: HashMap<SmallVec<[TermId; 4]>, Vec<u32>> = HashMap::new();
                        'rows: for i in 0..rel.len() {
                            let row = rel.row(i);
                            let mut k: SmallVec<[TermId; 4]> = SmallVec::new();
                            for s in slots.iter() {
                                match s.value(terms, row) {
                                    Some(t) => k.push(t),
                                    None => continue 'rows,
                                }
                            }
                            m.entry(k).or_default().push(i as u32);
                        }
                        m.into_iter().map(|(k, v)| (k, Rc::from(v))).collect()
                    });
                    match ix.get(&key) {
                        Some(r) => Some(r.clone()),
                        None => return Ok(()),
                    }
                };
                let n = rows.as_ref().map_or(db.rel(a.rel).len(), |r| r.len());
                let saved: SmallVec<[Option<TermId>; 16]> = SmallVec::from_slice(b);
                for j in 0..n {
                    let i = rows.as_ref().map_or(j, |r| r[j] as usize);
                    self.visits += 1;
                    if self.visits.is_multiple_of(65536) {
                        self.check_budget()?;
                    }
                    let row = db.rel(a.rel).row(i);
                    if a.args
                        .iter()
                        .zip(row.iter())
                        .all(|(p, t)| self.matches(p, *t, b))
                    {
                        if recorded {
                            let at = self.row_id(a.rel, i);
                            body.push(at << 1);
                            self.step(rule, order, k + 1, b, body)?;
                            body.pop();
                        } else {
                            if k == self.head_step {
                                self.head_row = i as u32;
                            }
                            self.step(rule, order, k + 1, b, body)?;
                        }
                    }
                    b.copy_from_slice(&saved);
                }
                Ok(())
            }
            Lit::Neg(a) => {
                let Some(fact) = self.make_all(a, b) else {
                    // A term that was never built is in no relation: the negation holds.
                    return self.step(rule, order, k + 1, b, body);
                };
                if self.src.dynamic[a.rel.0 as usize] {
                    let Some(at) = self.atom(a.rel, &fact) else {
                        return self.step(rule, order, k + 1, b, body);
                    };
                    body.push(at << 1 | 1);
                    self.step(rule, order, k + 1, b, body)?;
                    body.pop();
                    Ok(())
                } else if self.holds(a.rel, &fact) {
                    Ok(())
                } else {
                    self.step(rule, order, k + 1, b, body)
                }
            }
            Lit::Cmp(c, x, y) => {
                let ok = match c {
                    Cmp::Same => {
                        let saved = b.clone();
                        let (x, y) = if bound(x, b) { (x, y) } else { (y, x) };
                        let ok = match self.make(x, b) {
                            Some(t) => self.matches(y, t, b),
                            None => false,
                        };
                        if ok {
                            self.step(rule, order, k + 1, b, body)?;
                        }
                        *b = saved;
                        return Ok(());
                    }
                    Cmp::Distinct => match (self.make(x, b), self.make(y, b)) {
                        (Some(a), Some(c)) => a != c,
                        // A term never built differs from every built one, and two patterns that
                        // cannot be built are compared structurally by the engine; be conservative.
                        (Some(_), None) | (None, Some(_)) => true,
                        (None, None) => false,
                    },
                    Cmp::Less | Cmp::Leq => {
                        match (
                            self.make(x, b).and_then(|t| self.terms.as_int(t)),
                            self.make(y, b).and_then(|t| self.terms.as_int(t)),
                        ) {
                            (Some(p), Some(q)) => {
                                if *c == Cmp::Less {
                                    p < q
                                } else {
                                    p <= q
                                }
                            }
                            _ => false,
                        }
                    }
                };
                if ok {
                    self.step(rule, order, k + 1, b, body)?;
                }
                Ok(())
            }
            Lit::Arith(op, x, y, z) => {
                let (Some(p), Some(q)) = (
                    self.make(x, b).and_then(|t| self.terms.as_int(t)),
                    self.make(y, b).and_then(|t| self.terms.as_int(t)),
                ) else {
                    return Ok(());
                };
                let v = match op {
                    Arith::Plus => p.checked_add(q),
                    Arith::Minus => p.checked_sub(q),
                    Arith::Times => p.checked_mul(q),
                };
                let Some(v) = v else { return Ok(()) };
                let t = self.terms.int(v);
                let saved = b.clone();
                if self.matches(z, t, b) {
                    self.step(rule, order, k + 1, b, body)?;
                }
                *b = saved;
                Ok(())
            }
        }
    }

    fn emit(
        &mut self,
        rule: &Rule,
        b: &[Option<TermId>],
        body: &SmallVec<[u32; 4]>,
    ) -> Result<(), NetworkError> {
        if self.src.late[rule.head.rel.0 as usize] {
            // The head's atom is known once its relation is complete (see `atoms_of_heads`).
            for &v in &self.head_vars {
                let Some(t) = b[v as usize] else {
                    return Ok(());
                };
                self.out.push(t.0);
            }
        } else if self.head_step != usize::MAX {
            self.out
                .push(self.row_id(rule.head.rel, self.head_row as usize));
        } else {
            let Some(fact) = self.make_all(&rule.head, b) else {
                return Ok(());
            };
            let Some(head) = self.atom(rule.head.rel, &fact) else {
                return Ok(());
            };
            self.out.push(head);
        }
        self.instances += 1;
        if self.instances == 4096 {
            self.shared_instances.fetch_add(4096, Ordering::Relaxed);
            self.instances = 0;
            self.check_budget()?;
        }
        self.out.push(body.len() as u32);
        self.out.extend_from_slice(body);
        Ok(())
    }

    /// The number of row `i` of the relaxed fixpoint's relation `rel` among all relations' rows.
    fn row_id(&self, rel: RelId, i: usize) -> u32 {
        self.row_base[rel.0 as usize] + i as u32
    }

    /// The row number of `rel(args)` (see [`Grounder::row_id`]); `None` when the relaxed fixpoint
    /// does not have it (it is never true).
    fn atom(&self, rel: RelId, args: &[TermId]) -> Option<u32> {
        let i = self.src.relaxed.rel(rel).position(args)?;
        Some(self.row_id(rel, i))
    }

    fn matches(&self, p: &Pat, t: TermId, b: &mut [Option<TermId>]) -> bool {
        match p {
            Pat::Var(v) => match b[*v as usize] {
                Some(x) => x == t,
                None => {
                    b[*v as usize] = Some(t);
                    true
                }
            },
            Pat::Term(x) => *x == t,
            Pat::Func(s, args) => {
                if self.terms.is_const(t) || self.terms.sym(t) != *s {
                    return false;
                }
                let targs = self.terms.args(t);
                targs.len() == args.len()
                    && args.iter().zip(targs).all(|(p, t)| self.matches(p, *t, b))
            }
        }
    }

    /// The ground term of a bound pattern, when it exists in the store (a term never built is in no
    /// relation).
    fn make(&self, p: &Pat, b: &[Option<TermId>]) -> Option<TermId> {
        instantiate(p, b, &mut |s, ids| self.terms.find_func(s, ids))
    }

    /// Whether `rel(fact)` holds, for a relation that does not depend on the state.
    fn holds(&self, rel: RelId, fact: &[TermId]) -> bool {
        match (&self.src.unary[rel.0 as usize], fact) {
            (Some(bits), [t]) => {
                let i = t.0 as usize;
                bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
            }
            _ => self.src.db(rel).rel(rel).contains(fact),
        }
    }

    fn make_all(&self, a: &IrAtom, b: &[Option<TermId>]) -> Option<SmallVec<[TermId; 8]>> {
        instantiate_atom(a, b, &mut |s, ids| self.terms.find_func(s, ids))
    }
}

/// The AND gates made so far, findable by their inputs: a gate asked for again is shared.
#[derive(Default)]
struct GateTable {
    /// Gates as created: (input start, input end, negated output, reads `does`).
    gates: Vec<(u32, u32, bool, bool)>,
    inputs: Vec<NetLit>,
    /// The gates by their inputs (hashed with [`hash_lits`]).
    dedup: HashTable<Filed>,
}

impl GateTable {
    /// The gate whose inputs are `key`, hashed to `half` (see [`Filed`]).
    fn find(&self, key: &[NetLit], half: u32) -> Option<u32> {
        self.dedup
            .find(Filed::spread(half), |f| {
                f.hash == half && self.key(f.row) == key
            })
            .map(|f| f.row)
    }

    /// Adds a gate (known to be new) over `key`; returns its index.
    fn push(&mut self, key: &[NetLit], half: u32, mv: bool) -> u32 {
        let start = self.inputs.len() as u32;
        self.inputs.extend_from_slice(key);
        let i = self.gates.len() as u32;
        self.gates
            .push((start, self.inputs.len() as u32, false, mv));
        let f = Filed { row: i, hash: half };
        self.dedup
            .insert_unique(Filed::spread(half), f, |f| Filed::spread(f.hash));
        i
    }

    /// Whether literal `l` (of an input, or of one of these gates) depends on a `does` input.
    fn move_dep(&self, l: NetLit, num_props: usize) -> bool {
        let n = l >> 1;
        if n >= GATE0 {
            self.gates[(n - GATE0) as usize].3
        } else {
            n as usize > num_props
        }
    }

    /// Gate `i`'s inputs.
    fn key(&self, i: u32) -> &[NetLit] {
        let (s, e, _, _) = self.gates[i as usize];
        &self.inputs[s as usize..e as usize]
    }
}

/// Where the gates a compile asks for are found or made.
trait GateStore {
    /// The AND gate of `key` (sorted, at least two literals).
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError>;
    /// Whether literal `l` depends on a `does` input.
    fn move_dep(&self, l: NetLit) -> bool;
}

/// The compiler's own gates, with the budget's limits.
struct Global<'c> {
    table: &'c mut GateTable,
    num_props: usize,
    budget: Budget,
    started: Instant,
}

impl GateStore for Global<'_> {
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError> {
        let half = Filed::half(hash_lits(key));
        if let Some(i) = self.table.find(key, half) {
            return Ok((GATE0 + i) << 1);
        }
        let made = self.table.gates.len();
        check_gate_budget(made, made, self.budget, self.started)?;
        let mv = key.iter().any(|&l| self.move_dep(l));
        Ok((GATE0 + self.table.push(key, half, mv)) << 1)
    }

    fn move_dep(&self, l: NetLit) -> bool {
        self.table.move_dep(l, self.num_props)
    }
}

/// Whether one more gate fits the budget, `made` gates made by this store and `total` in all (the
/// clock is read every 4,096 gates).
fn check_gate_budget(
    made: usize,
    total: usize,
    budget: Budget,
    started: Instant,
) -> Result<(), NetworkError> {
    if made.is_multiple_of(4096) && started.elapsed() > budget.max_time {
        return Err(NetworkError::over(
            Limit::Time,
            format!(
                "compiling took longer than {} s",
                budget.max_time.as_secs_f64()
            ),
        ));
    }
    if total >= budget.max_gates {
        return Err(NetworkError::over(
            Limit::Size,
            format!("more than {} gates", budget.max_gates),
        ));
    }
    Ok(())
}

/// Provisional nodes of the gates one worker of a parallel compile makes: above every compiler gate.
const LOCAL0: u32 = 1 << 29;

/// One worker's gates in a parallel compile (see [`Compiler::compile_side_by_side`]): the compiler's
/// gates are read, never changed; a gate they lack is made here, numbered from [`LOCAL0`], and
/// merged into them afterwards.
struct Local<'c> {
    global: &'c GateTable,
    local: GateTable,
    num_props: usize,
    budget: Budget,
    started: Instant,
}

impl GateStore for Local<'_> {
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError> {
        let half = Filed::half(hash_lits(key));
        // Keys are sorted: one reading a gate of this worker (the largest nodes) is not the
        // compiler's.
        if key.last().is_some_and(|&l| l >> 1 < LOCAL0) {
            if let Some(i) = self.global.find(key, half) {
                return Ok((GATE0 + i) << 1);
            }
        }
        if let Some(j) = self.local.find(key, half) {
            return Ok((LOCAL0 + j) << 1);
        }
        let made = self.local.gates.len();
        let total = made + self.global.gates.len();
        check_gate_budget(made, total, self.budget, self.started)?;
        let mv = key.iter().any(|&l| self.move_dep(l));
        Ok((LOCAL0 + self.local.push(key, half, mv)) << 1)
    }

    fn move_dep(&self, l: NetLit) -> bool {
        let n = l >> 1;
        if n >= LOCAL0 {
            self.local.gates[(n - LOCAL0) as usize].3
        } else {
            self.global.move_dep(l, self.num_props)
        }
    }
}

/// How ANDs and ORs of literals become gates: constants folded, shared literals factored, and the
/// ORs of many `does` inputs of a role rewritten (see [`Logic::or`]).
struct Logic {
    num_props: usize,
    num_does: usize,
    /// Per role, the (positive) literals of its `does` inputs, sorted.
    does_by_role: Vec<Vec<NetLit>>,
    /// Per role, whether it belongs to a set of roles of which at most one plays a `does` input in any
    /// reachable joint move (see [`one_mover`]).
    one_mover: Vec<bool>,
}

impl Logic {
    /// The literal defining atom `a` from its bodies, every literal they read having one in
    /// `lit_of`.
    fn define<G: GateStore>(
        &self,
        gs: &mut G,
        g: &Ground,
        a: u32,
        lit_of: &[NetLit],
    ) -> Result<NetLit, NetworkError> {
        let lit = |x: u32| lit_of[(x >> 1) as usize] ^ (x & 1);
        if g.always[a as usize] {
            Ok(TRUE)
        } else if g.bodies(a).nth(1).is_none() {
            // At most one alternative (a projection, a single rule instance): its AND.
            match g.bodies(a).next() {
                Some(body) => {
                    let t: Lits = body.iter().map(|&x| lit(x)).collect();
                    self.and(gs, &t)
                }
                None => Ok(FALSE),
            }
        } else if g.bodies(a).all(|b| b.len() == 1) {
            // Alternatives of one literal each: their OR, nothing to factor.
            let t: Lits = g.bodies(a).map(|b| lit(b[0])).collect();
            self.or(gs, &t)
        } else {
            let terms: Vec<Lits> = g
                .bodies(a)
                .map(|body| body.iter().map(|&x| lit(x)).collect())
                .collect();
            self.sum_of_products(gs, terms)
        }
    }

    /// The AND of literals, folded and shared.
    fn and<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        let mut key: SmallVec<[NetLit; 16]> = SmallVec::new();
        for &l in lits {
            match l {
                FALSE => return Ok(FALSE),
                TRUE => {}
                _ => key.push(l),
            }
        }
        key.sort_unstable();
        key.dedup();
        if key.windows(2).any(|w| w[0] ^ 1 == w[1]) {
            return Ok(FALSE);
        }
        match key.len() {
            0 => Ok(TRUE),
            1 => Ok(key[0]),
            _ => gs.gate(&key),
        }
    }

    /// The OR of the ANDs of `terms`, with literals shared by several terms factored out
    /// (`a&b | a&c | d` becomes `a&(b|c) | d`): fewer gates and inputs, and a frame rule such as
    /// `next(p) :- true(p) & does(m)` over many moves `m` becomes `true(p) & (OR of the moves)`, which
    /// [`Logic::or`] can then shrink further. Literals every term holds go into one AND with the
    /// OR of the rest (chess's `legal` of a move: the turn, the piece on its square, and the OR over
    /// the king's squares).
    fn sum_of_products<G: GateStore>(
        &self,
        gs: &mut G,
        mut terms: Vec<Lits>,
    ) -> Result<NetLit, NetworkError> {
        // Fold constants: a term with false goes, true literals go, an empty term makes the OR true.
        terms.retain_mut(|t| {
            t.retain(|l| *l != TRUE);
            t.sort_unstable();
            t.dedup();
            !t.contains(&FALSE) && !t.windows(2).any(|w| w[0] ^ 1 == w[1])
        });
        if terms.iter().any(|t| t.is_empty()) {
            return Ok(TRUE);
        }
        match terms.len() {
            0 => return Ok(FALSE),
            1 => return self.and(gs, &terms[0]),
            _ => {}
        }
        let mut common: Lits = terms[0]
            .iter()
            .copied()
            .filter(|l| terms[1..].iter().all(|t| t.binary_search(l).is_ok()))
            .collect();
        if !common.is_empty() {
            for t in &mut terms {
                t.retain(|l| common.binary_search(l).is_err());
            }
            let rest = if terms.iter().any(|t| t.is_empty()) {
                TRUE
            } else {
                self.sum_of_products(gs, terms)?
            };
            common.push(rest);
            return self.and(gs, &common);
        }
        // Greedy, in one sweep: literals by how many terms hold them (most first, then the smallest
        // literal, so the result does not depend on hashing); each takes the terms still unclaimed.
        let mut holders: Vec<(NetLit, u32)> = Vec::new();
        for (i, t) in terms.iter().enumerate() {
            holders.extend(t.iter().map(|&l| (l, i as u32)));
        }
        holders.sort_unstable();
        let mut shared: Vec<(usize, NetLit, usize)> = Vec::new();
        let mut start = 0;
        while start < holders.len() {
            let l = holders[start].0;
            let end = start + holders[start..].iter().take_while(|h| h.0 == l).count();
            if end - start >= 2 {
                shared.push((end - start, l, start));
            }
            start = end;
        }
        shared.sort_unstable_by_key(|&(n, l, _)| (std::cmp::Reverse(n), l));
        let mut claimed = vec![false; terms.len()];
        let mut alts: Lits = SmallVec::new();
        for (n, l, start) in shared {
            let with: SmallVec<[u32; 16]> = holders[start..start + n]
                .iter()
                .map(|h| h.1)
                .filter(|&i| !claimed[i as usize])
                .collect();
            if with.len() < 2 {
                continue;
            }
            let rest: Vec<Lits> = with
                .iter()
                .map(|&i| {
                    claimed[i as usize] = true;
                    terms[i as usize]
                        .iter()
                        .copied()
                        .filter(|x| *x != l)
                        .collect()
                })
                .collect();
            let inner = self.sum_of_products(gs, rest)?;
            alts.push(self.and(gs, &[l, inner])?);
        }
        for (t, _) in terms.iter().zip(&claimed).filter(|(_, c)| !**c) {
            alts.push(self.and(gs, t)?);
        }
        self.or(gs, &alts)
    }

    /// The OR of literals: the negated AND of the negations.
    ///
    /// Exactly one `does` input per role is true at a time (at most one while nothing is played), so
    /// the OR of most of a role's `does` inputs is cheaper as "the role moved, and not one of the few
    /// others": `OR(S) = OR(D) & !OR(D \ S)` for the role's inputs `D`. The `OR(D)` gate is shared.
    fn or<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        let does_nodes = (1 + self.num_props) as u32..(1 + self.num_props + self.num_does) as u32;
        if !lits.iter().any(|l| does_nodes.contains(&(l >> 1))) {
            return self.or_plain(gs, lits);
        }
        let mut lits: SmallVec<[NetLit; 8]> = SmallVec::from_slice(lits);
        // Per rewritten role: all its inputs, and those not in the OR.
        let mut parts: SmallVec<[(usize, Lits, Lits); 2]> = SmallVec::new();
        for r in 0..self.does_by_role.len() {
            let all = &self.does_by_role[r];
            if all.len() < 8 {
                continue;
            }
            let is_mine = |l: &NetLit| all.binary_search(l).is_ok();
            let mine = lits.iter().filter(|l| is_mine(l)).count();
            // Unique literals only count once: `and` dedups them anyway.
            if mine * 4 < all.len() * 3 {
                continue;
            }
            let mut picked: SmallVec<[NetLit; 8]> = lits.iter().copied().filter(is_mine).collect();
            picked.sort_unstable();
            picked.dedup();
            let others: SmallVec<[NetLit; 8]> = all
                .iter()
                .copied()
                .filter(|l| picked.binary_search(l).is_err())
                .collect();
            let all: SmallVec<[NetLit; 8]> = SmallVec::from_slice(all);
            lits.retain(|l| all.binary_search(l).is_err());
            parts.push((r, all, others));
        }
        if parts.len() >= 2 && parts.iter().all(|p| self.one_mover[p.0]) {
            // At most one of these roles plays any of their inputs, so "some role played an input in
            // the OR" is "some role played one of their inputs, and it is not one of the others": the
            // `any` gate then holds at every step of a turn-taking game and flips never, instead of
            // each role's flipping at every turn.
            let mut all: SmallVec<[NetLit; 8]> = SmallVec::new();
            let mut others: SmallVec<[NetLit; 8]> = SmallVec::new();
            for (_, a, o) in &parts {
                all.extend_from_slice(a);
                others.extend_from_slice(o);
            }
            all.sort_unstable();
            others.sort_unstable();
            let any = self.or_plain(gs, &all)?;
            let none_of_others = self.or_plain(gs, &others)? ^ 1;
            let l = self.and(gs, &[any, none_of_others])?;
            lits.push(l);
        } else {
            for (_, all, others) in parts {
                let any = self.or_plain(gs, &all)?;
                let none_of_others = self.or_plain(gs, &others)? ^ 1;
                let l = self.and(gs, &[any, none_of_others])?;
                lits.push(l);
            }
        }
        self.or_plain(gs, &lits)
    }

    fn or_plain<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        let neg: SmallVec<[NetLit; 8]> = lits.iter().map(|l| l ^ 1).collect();
        Ok(self.and(gs, &neg)? ^ 1)
    }
}

/// Turns atom definitions into gates.
struct Compiler<'a> {
    /// Per atom: `u32::MAX` unvisited, `u32::MAX - 1` in progress, else its literal.
    lit_of: Vec<NetLit>,
    table: GateTable,
    logic: Logic,
    does_node: HashMap<(u32, u32), u32>,
    prop_of: &'a HashMap<TermId, u32>,
    roles: &'a [TermId],
    move_of: &'a HashMap<TermId, u32>,
    budget: Budget,
    started: Instant,
}

/// A short list of literals.
type Lits = SmallVec<[NetLit; 8]>;

fn hash_lits(lits: &[NetLit]) -> u64 {
    hash_ids(lits.iter().map(|&l| TermId(l)))
}

const UNSEEN: NetLit = u32::MAX;
const BUSY: NetLit = u32::MAX - 1;
/// Provisional gate nodes live above every input node.
const GATE0: u32 = 1 << 28;
/// The fewest atoms of a relation worth compiling side by side, and how many one worker takes at a
/// time (see [`Compiler::compile_side_by_side`]).
const SIDE_BY_SIDE: usize = 1024;

impl<'a> Compiler<'a> {
    fn new(
        g: &Ground,
        num_props: usize,
        prop_of: &'a HashMap<TermId, u32>,
        roles: &'a [TermId],
        move_of: &'a HashMap<TermId, u32>,
        budget: Budget,
    ) -> Compiler<'a> {
        // `does` inputs get nodes in the order of their atoms.
        let mut does_node = HashMap::new();
        let mut num_does = 0;
        for a in g.used_atoms(g.does) {
            let args = g.args(a);
            let (Some(r), Some(&m)) = (
                roles.iter().position(|r| *r == args[0]),
                move_of.get(&args[1]),
            ) else {
                continue;
            };
            does_node.insert((r as u32, m), (1 + num_props + num_does) as u32);
            num_does += 1;
        }
        let mut does_by_role = vec![Vec::new(); roles.len()];
        for (&(r, _), &node) in &does_node {
            does_by_role[r as usize].push(node << 1);
        }
        for d in &mut does_by_role {
            d.sort_unstable();
        }
        Compiler {
            logic: Logic {
                num_props,
                num_does,
                one_mover: vec![false; does_by_role.len()],
                does_by_role,
            },
            lit_of: vec![UNSEEN; g.used.len()],
            table: GateTable::default(),
            does_node,
            prop_of,
            roles,
            move_of,
            budget,
            started: g.started,
        }
    }

    /// The compiler's gates as a [`GateStore`], with the budget's limits.
    fn global(&mut self) -> Global<'_> {
        Global {
            table: &mut self.table,
            num_props: self.logic.num_props,
            budget: self.budget,
            started: self.started,
        }
    }

    fn move_dep(&self, l: NetLit) -> bool {
        self.table.move_dep(l, self.logic.num_props)
    }

    /// The literal of an input atom (`true`/`does`), or `None` for a defined atom.
    fn input_lit(&self, g: &Ground, a: u32) -> Option<NetLit> {
        if g.is(a, g.true_) {
            return Some(match self.prop_of.get(&g.args(a)[0]) {
                Some(&p) => (1 + p) << 1,
                None => FALSE,
            });
        }
        if g.is(a, g.does) {
            let args = g.args(a);
            let r = self.roles.iter().position(|r| *r == args[0]);
            let m = self.move_of.get(&args[1]);
            return Some(match (r, m) {
                (Some(r), Some(&m)) => self.does_node[&(r as u32, m)] << 1,
                _ => FALSE,
            });
        }
        None
    }

    /// The literal computing atom `root`, compiling what it needs first (iterative depth-first search).
    fn atom_lit(&mut self, g: &Ground, root: u32) -> Result<NetLit, NetworkError> {
        if self.lit_of[root as usize] < BUSY {
            return Ok(self.lit_of[root as usize]);
        }
        // (atom, body index, literal index within the body)
        let mut stack: Vec<(u32, usize, usize)> = vec![(root, 0, 0)];
        self.lit_of[root as usize] = BUSY;
        while let Some(&mut (a, ref mut bi, ref mut li)) = stack.last_mut() {
            if let Some(l) = self.input_lit(g, a) {
                self.lit_of[a as usize] = l;
                stack.pop();
                continue;
            }
            // Find the next child not yet compiled.
            let mut child = None;
            let always = g.always[a as usize];
            while let Some(x) = g.next_lit(a, bi, li).filter(|_| !always) {
                let c = x >> 1;
                match self.lit_of[c as usize] {
                    UNSEEN => {
                        child = Some(c);
                        break;
                    }
                    BUSY => return Err(NetworkError::Cyclic(atom_name(g, c))),
                    _ => {}
                }
            }
            if let Some(c) = child {
                self.lit_of[c as usize] = BUSY;
                stack.push((c, 0, 0));
                continue;
            }
            let mut gs = Global {
                table: &mut self.table,
                num_props: self.logic.num_props,
                budget: self.budget,
                started: self.started,
            };
            let l = self.logic.define(&mut gs, g, a, &self.lit_of)?;
            self.lit_of[a as usize] = l;
            stack.pop();
        }
        Ok(self.lit_of[root as usize])
    }

    /// Compiles atoms `atoms` (of one relation outside any recursion, so that each reads only atoms
    /// compiled before) on rayon's threads, `per_task` atoms a task: each task finds the gates
    /// it needs among the compiler's, makes those missing in its own table, and the tasks' gates
    /// then join the compiler's in task order, each a new gate only when no earlier one has its
    /// inputs. The gates, their numbering and every atom's literal are those [`Compiler::atom_lit`]
    /// gives atom after atom: a gate a task makes is new to the compiler's gates as they were, so
    /// its inputs (renumbered) never meet a literal it shares a gate with, and the renumbering needs
    /// no folding again; and the tasks are merged in the atoms' order.
    fn compile_side_by_side(
        &mut self,
        g: &Ground,
        atoms: &[u32],
        per_task: usize,
    ) -> Result<(), NetworkError> {
        let ready = |lit_of: &[NetLit], a: u32| {
            !g.always[a as usize]
                && lit_of[a as usize] == UNSEEN
                && g.bodies(a)
                    .flatten()
                    .all(|&x| lit_of[(x >> 1) as usize] < BUSY)
        };
        let (lit_of, logic, table) = (&self.lit_of, &self.logic, &self.table);
        let (budget, started) = (self.budget, self.started);
        type Made = (Vec<(u32, NetLit)>, GateTable);
        let made: Vec<Result<Made, NetworkError>> = atoms
            .par_chunks(per_task)
            .map(|chunk| {
                let mut gs = Local {
                    global: table,
                    local: GateTable::default(),
                    num_props: logic.num_props,
                    budget,
                    started,
                };
                let mut lits = Vec::with_capacity(chunk.len());
                for &a in chunk {
                    // The rest (already compiled, or reading an atom that is not) go one by one.
                    let l = if ready(lit_of, a) {
                        logic.define(&mut gs, g, a, lit_of)?
                    } else {
                        UNSEEN
                    };
                    lits.push((a, l));
                }
                Ok((lits, gs.local))
            })
            .collect();
        let mut node_of: Vec<NetLit> = Vec::new();
        for m in made {
            let (lits, local) = m?;
            node_of.clear();
            let renumber = |l: NetLit, node_of: &[NetLit]| {
                if l >> 1 >= LOCAL0 {
                    node_of[((l >> 1) - LOCAL0) as usize] ^ (l & 1)
                } else {
                    l
                }
            };
            for j in 0..local.gates.len() as u32 {
                let mut key: SmallVec<[NetLit; 16]> = local
                    .key(j)
                    .iter()
                    .map(|&l| renumber(l, &node_of))
                    .collect();
                key.sort_unstable();
                let l = self.global().gate(&key)?;
                node_of.push(l);
            }
            for (a, l) in lits {
                if l == UNSEEN {
                    self.atom_lit(g, a)?;
                } else {
                    self.lit_of[a as usize] = renumber(l, &node_of);
                }
            }
        }
        Ok(())
    }

    /// Final gate numbering of the `live` gates: state gates first, then move gates, each in creation
    /// order; also rewrites provisional gate nodes in their inputs. Returns, per gate, its final node
    /// (`u32::MAX` for a gate no output reads).
    fn finish_order(&mut self, first_gate: usize, live: &[bool]) -> Vec<u32> {
        let GateTable { gates, inputs, .. } = &mut self.table;
        let n_state = gates.iter().zip(live).filter(|(g, l)| **l && !g.3).count();
        let (mut s, mut m) = (0u32, n_state as u32);
        let remap: Vec<u32> = gates
            .iter()
            .zip(live)
            .map(|(g, &l)| {
                if !l {
                    return u32::MAX;
                }
                let k = if g.3 { &mut m } else { &mut s };
                *k += 1;
                first_gate as u32 + *k - 1
            })
            .collect();
        for (g, _) in gates.iter().zip(live).filter(|(_, l)| **l) {
            for l in &mut inputs[g.0 as usize..g.1 as usize] {
                let n = *l >> 1;
                if n >= GATE0 {
                    *l = (remap[(n - GATE0) as usize] << 1) | (*l & 1);
                }
            }
        }
        remap
    }

    /// Which gates an output reads, directly or through other gates. A gate reads only gates made
    /// before it, so one sweep from the last gate back settles it.
    fn live_gates(&self, outputs: impl Iterator<Item = NetLit>) -> Vec<bool> {
        let mut live = vec![false; self.table.gates.len()];
        let mark = |l: NetLit, live: &mut [bool]| {
            if l >> 1 >= GATE0 {
                live[((l >> 1) - GATE0) as usize] = true;
            }
        };
        for l in outputs {
            mark(l, &mut live);
        }
        for i in (0..self.table.gates.len()).rev() {
            if live[i] {
                for &l in self.table.key(i as u32) {
                    mark(l, &mut live);
                }
            }
        }
        live
    }
}

/// Per role, its turn (the atom of `true(turn)`) when at most one of the roles with a turn can play a
/// `does` input in any reachable joint move (all `None` when that cannot be shown).
///
/// The proof is the turn of turn-taking games: each marked role's legal moves that have an input all
/// need one base proposition, its *turn* (`true(control white)` in every instance of its `legal`), and
/// at most one turn holds in every reachable state: at most one initially, and no two `next(turn)`
/// instances can hold together in a state where at most one turn holds (every pair of their
/// conditions holds two different turns, or a condition and its negation).
fn one_mover(
    g: &Ground,
    roles: &[TermId],
    legal: RelId,
    next: RelId,
    initial: &[u32],
    prop_of: &HashMap<TermId, u32>,
) -> Vec<Option<u32>> {
    let none = vec![None; roles.len()];
    let atom = |r: RelId, args: &[TermId]| g.find_atom(r, args);
    // The turn of each role that has inputs, as the atom of `true(turn)`.
    let mut turn: Vec<Option<u32>> = vec![None; roles.len()];
    for (ri, &role) in roles.iter().enumerate() {
        let mut common: Option<Vec<u32>> = None;
        let mut any = false;
        for d in g.used_atoms(g.does).filter(|&a| g.args(a)[0] == role) {
            any = true;
            let Some(l) = atom(legal, &[role, g.args(d)[1]]) else {
                if g.dynamic[legal.0 as usize] {
                    continue; // never legal
                }
                return none;
            };
            if g.always[l as usize] {
                return none;
            }
            for body in g.bodies(l) {
                let trues: Vec<u32> = body
                    .iter()
                    .filter(|&&x| x & 1 == 0 && g.is(x >> 1, g.true_))
                    .map(|&x| x >> 1)
                    .collect();
                common = Some(match common {
                    None => trues,
                    Some(c) => c.into_iter().filter(|a| trues.contains(a)).collect(),
                });
            }
        }
        if !any {
            continue;
        }
        match common.and_then(|c| c.into_iter().min()) {
            Some(t) => turn[ri] = Some(t),
            None => return none,
        }
    }
    let turns: Vec<u32> = turn.iter().flatten().copied().collect();
    if turns.len() < 2 {
        return none;
    }
    let prop = |t: u32| prop_of.get(&g.args(t)[0]).copied();
    let initially = turns
        .iter()
        .filter(|&&t| prop(t).is_some_and(|p| initial.contains(&p)))
        .count();
    if initially > 1 {
        return none;
    }
    if !g.dynamic[next.0 as usize] {
        return none;
    }
    let next_of: Vec<Option<u32>> = turns.iter().map(|&t| atom(next, &[g.args(t)[0]])).collect();
    let turn_role: Vec<(usize, u32)> = turn
        .iter()
        .enumerate()
        .filter_map(|(r, t)| t.map(|t| (r, t)))
        .collect();
    if !turns_stay_exclusive(g, roles, &turn_role, &next_of) {
        return none;
    }
    turn
}

/// Whether no two turns' `next` atoms (`None`: never true) can hold together in a state where at
/// most one turn holds and only the role whose turn it is plays a `does` input, shown by evaluating
/// them on every such assignment of the inputs they depend on. False when they depend on more than a
/// few other propositions (or many atoms): that is not a proof.
fn turns_stay_exclusive(
    g: &Ground,
    roles: &[TermId],
    turn_role: &[(usize, u32)],
    next_of: &[Option<u32>],
) -> bool {
    const MAX_CONE: usize = 20_000;
    const MAX_FREE: usize = 12;
    const MAX_WORK: usize = 20_000_000;
    // The atoms the `next` atoms depend on, each after those it reads (post-order).
    let mut index: HashMap<u32, usize> = HashMap::new();
    let mut order: Vec<u32> = Vec::new();
    let mut stack: Vec<(u32, usize, usize)> = Vec::new();
    let mut seen: HashMap<u32, ()> = HashMap::new();
    for &root in next_of.iter().flatten() {
        if seen.insert(root, ()).is_some() {
            continue;
        }
        stack.push((root, 0, 0));
        while let Some(&mut (a, ref mut bi, ref mut li)) = stack.last_mut() {
            let leaf = g.is(a, g.true_) || g.is(a, g.does) || g.always[a as usize];
            let mut child = None;
            while let Some(x) = g.next_lit(a, bi, li).filter(|_| !leaf) {
                if seen.insert(x >> 1, ()).is_none() {
                    child = Some(x >> 1);
                    break;
                }
            }
            match child {
                Some(c) => stack.push((c, 0, 0)),
                None => {
                    stack.pop();
                    index.insert(a, order.len());
                    order.push(a);
                    if order.len() > MAX_CONE {
                        return false;
                    }
                }
            }
        }
    }
    let turn_of = |a: u32| turn_role.iter().find(|x| x.1 == a).map(|x| x.0);
    let role_of = |a: u32| roles.iter().position(|r| *r == g.args(a)[0]);
    let free: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&a| g.is(a, g.true_) && turn_of(a).is_none())
        .collect();
    if free.len() > MAX_FREE {
        return false;
    }
    let moves: Vec<u32> = order.iter().copied().filter(|&a| g.is(a, g.does)).collect();
    // Bound the work: assignments times atoms evaluated.
    let assignments: usize = turn_role
        .iter()
        .map(|&(r, _)| 1 + moves.iter().filter(|&&m| role_of(m) == Some(r)).count())
        .sum::<usize>()
        + 1;
    if (assignments << free.len()).saturating_mul(order.len()) > MAX_WORK {
        return false;
    }
    let mut val = vec![false; order.len()];
    // Who holds the turn (none, or a role), which of its inputs it plays (none, or one).
    let holders = std::iter::once(None).chain(turn_role.iter().map(|x| Some(x.0)));
    for holder in holders {
        let played = std::iter::once(None).chain(
            moves
                .iter()
                .filter(|&&m| holder.is_some() && role_of(m) == holder)
                .map(|&m| Some(m)),
        );
        for mv in played {
            for bits in 0..1u32 << free.len() {
                for (k, &a) in order.iter().enumerate() {
                    val[k] = if g.is(a, g.true_) {
                        match turn_of(a) {
                            Some(r) => holder == Some(r),
                            None => free
                                .iter()
                                .position(|&f| f == a)
                                .is_some_and(|i| bits >> i & 1 == 1),
                        }
                    } else if g.is(a, g.does) {
                        mv == Some(a)
                    } else {
                        g.always[a as usize]
                            || g.bodies(a).any(|body| {
                                body.iter().all(|&x| {
                                    index
                                        .get(&(x >> 1))
                                        .is_some_and(|&i| val[i] != (x & 1 == 1))
                                })
                            })
                    };
                }
                let holding = next_of
                    .iter()
                    .flatten()
                    .filter(|&&a| index.get(&a).is_some_and(|&i| val[i]))
                    .count();
                if holding > 1 {
                    return false;
                }
            }
        }
    }
    true
}

/// Simplifies rule instances that read a role's move together with a turn (see [`one_mover`]): a
/// role plays only on its turn, and at most one turn holds, so `does(r, m)` implies `true(turn_r)` and
/// the negation of every other turn. The turn conditions go, and an instance that needs another role's
/// turn (or the negation of its own) goes: the turn then no longer feeds the `next` of every cell
/// (`next(cell(C,R,P)) :- does(P2, drop(C)) & true(control(P)) & ..` keeps only `P2 = P`).
fn drop_implied_turns(g: &mut Ground, roles: &[TermId], turns: &[Option<u32>]) {
    if turns.iter().all(|t| t.is_none()) {
        return;
    }
    let mut alts = std::mem::take(&mut g.alts);
    let mut lits = std::mem::take(&mut g.lits);
    let mover_of = |x: u32| -> Option<usize> {
        if !g.is(x, g.does) {
            return None;
        }
        let r = roles.iter().position(|r| *r == g.args(x)[0])?;
        turns[r].map(|_| r)
    };
    let turn_role = |atom: u32| turns.iter().position(|t| *t == Some(atom));
    for (start, len) in alts.iter_mut().filter(|(_, len)| *len != DROPPED) {
        let body = &mut lits[*start as usize..(*start + *len) as usize];
        let movers: SmallVec<[usize; 2]> = body
            .iter()
            .filter(|&&x| x & 1 == 0)
            .filter_map(|&x| mover_of(x >> 1))
            .collect();
        let Some(&r) = movers.first() else {
            continue;
        };
        // Two roles moving at once, or a turn that cannot hold: the instance goes.
        let mut possible = movers.iter().all(|&m| m == r);
        let mut kept = 0;
        for i in 0..body.len() {
            let x = body[i];
            match turn_role(x >> 1) {
                None => {
                    body[kept] = x;
                    kept += 1;
                }
                // Holds exactly when it is `r`'s turn; that is implied.
                Some(t) => possible &= (t == r) == (x & 1 == 0),
            }
        }
        *len = if possible { kept as u32 } else { DROPPED };
    }
    g.alts = alts;
    g.lits = lits;
}

/// The state-dependent relations the relaxed fixpoint can leave out: those that neither the inputs
/// (`roots`) nor a load-time or demand relation depend on, outside recursive strata. Grounding their
/// rules in dependency order (see [`grounding_phases`]) finds their facts as it goes; the relaxed
/// fixpoint would only have derived them by the same joins, once more (chess's
/// `threatened_with_capture`, `goal`, `terminal`).
fn late_relations(relaxed: &Program, rplan: &Plan, dynamic: &[bool], roots: &[RelId]) -> Vec<bool> {
    let n = relaxed.relations.len();
    // The relaxed program has no negation: every dependency is positive.
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
    for r in &relaxed.rules {
        for l in &r.body {
            if let Lit::Pos(a) = l {
                deps[r.head.rel.0 as usize].push(a.rel.0 as usize);
            }
        }
    }
    let mut needed = vec![false; n];
    let mut stack: Vec<usize> = roots.iter().map(|r| r.0 as usize).collect();
    stack.extend((0..n).filter(|&r| !dynamic[r]));
    for s in rplan.strata.iter().filter(|s| s.recursive) {
        stack.extend(s.rels.iter().map(|r| r.0 as usize));
    }
    while !stack.is_empty() {
        while let Some(r) = stack.pop() {
            if !needed[r] {
                needed[r] = true;
                stack.extend_from_slice(&deps[r]);
            }
        }
        // A stratum is evaluated whole.
        for s in &rplan.strata {
            let any = s.rels.iter().any(|r| needed[r.0 as usize]);
            if any {
                stack.extend(s.rels.iter().map(|r| r.0 as usize).filter(|&r| !needed[r]));
            }
        }
    }
    (0..n).map(|r| dynamic[r] && !needed[r]).collect()
}

/// When each rule of `which` (rule numbers) is grounded: phase 0 for those that read no late
/// relation, else the phase after every late relation they read (positively or not) is complete.
/// Returns each rule's phase and, per relation, the phase after which a late one is complete.
fn grounding_phases(
    p: &Program,
    which: &[usize],
    late: &[bool],
) -> Result<(Vec<usize>, Vec<usize>), NetworkError> {
    let mut level = vec![0usize; p.relations.len()];
    let mut phase = vec![0usize; which.len()];
    // Late relations are outside recursive strata, so this settles within one round per relation.
    for _ in 0..=p.relations.len() {
        let mut changed = false;
        for (k, &ri) in which.iter().enumerate() {
            let rule = &p.rules[ri];
            let after = rule
                .body
                .iter()
                .filter_map(|l| match l {
                    Lit::Pos(a) | Lit::Neg(a) if late[a.rel.0 as usize] => {
                        Some(level[a.rel.0 as usize] + 1)
                    }
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            let h = rule.head.rel.0 as usize;
            if after != phase[k] || (late[h] && level[h] < after) {
                changed = true;
                phase[k] = after;
                if late[h] {
                    level[h] = level[h].max(after);
                }
            }
        }
        if !changed {
            return Ok((phase, level));
        }
    }
    Err(NetworkError::Unsupported(
        "the rules' dependencies have no order to ground them in".into(),
    ))
}

/// Rewrites the instances of `rule` (of a late relation, see [`late_relations`]) with their heads as
/// the row numbers `row_of` gives for the values of the head's variables (it makes the head and adds it
/// to the relation); an instance whose head cannot be made goes.
fn atoms_of_heads(
    rule: &Rule,
    found: &[u32],
    mut row_of: impl FnMut(&[Option<TermId>]) -> Option<u32>,
) -> Instances {
    let vars = head_vars(rule);
    let mut b: Vec<Option<TermId>> = vec![None; rule.var_names.len()];
    let mut out = Vec::with_capacity(found.len());
    let mut at = 0;
    while at < found.len() {
        for (i, &v) in vars.iter().enumerate() {
            b[v as usize] = Some(TermId(found[at + i]));
        }
        at += vars.len();
        let n = found[at] as usize;
        if let Some(row) = row_of(&b) {
            out.push(row);
            out.extend_from_slice(&found[at..at + 1 + n]);
        }
        at += 1 + n;
    }
    out
}

/// The fact atom `a` makes with the values `b`, `func` making (or finding) its compound terms; `None`
/// when a term cannot be made.
fn instantiate_atom(
    a: &IrAtom,
    b: &[Option<TermId>],
    func: &mut impl FnMut(Sym, &[TermId]) -> Option<TermId>,
) -> Option<SmallVec<[TermId; 8]>> {
    let mut fact = SmallVec::new();
    for p in &a.args {
        fact.push(instantiate(p, b, func)?);
    }
    Some(fact)
}

/// The ground term of pattern `p` under bindings `b`, its function terms given by `func` (which finds
/// or makes them); `None` when a variable is unbound or `func` has no term.
fn instantiate(
    p: &Pat,
    b: &[Option<TermId>],
    func: &mut impl FnMut(Sym, &[TermId]) -> Option<TermId>,
) -> Option<TermId> {
    match p {
        Pat::Var(v) => b[*v as usize],
        Pat::Term(t) => Some(*t),
        Pat::Func(s, args) => {
            let ids: SmallVec<[TermId; 4]> = args
                .iter()
                .map(|a| instantiate(a, b, func))
                .collect::<Option<_>>()?;
            func(*s, &ids)
        }
    }
}

/// The variables of a rule's head, in order of first occurrence.
fn head_vars(rule: &Rule) -> Vec<u32> {
    let mut vars = Vec::new();
    for p in &rule.head.args {
        p.each_var(&mut |v| {
            if !vars.contains(&v) {
                vars.push(v);
            }
        });
    }
    vars
}

/// Adds `true :- init`, `true :- next`, `does :- legal` and drops negations: the relaxed program.
fn relax(
    p: &Program,
    init: RelId,
    true_: RelId,
    next: RelId,
    legal: RelId,
    does: RelId,
) -> Program {
    let mut q = p.clone();
    // Arithmetic results stay within the integers the program mentions, as in the Datalog engine's
    // relaxation (nim's `minus` would otherwise count below zero until the budget runs out).
    let (lo, hi) = integer_range(&mut q);
    for r in &mut q.rules {
        r.body.retain(|l| !matches!(l, Lit::Neg(_)));
        clamp_arithmetic(r, lo, hi);
    }
    let x = q.terms.intern_sym("X");
    let y = q.terms.intern_sym("Y");
    let copy = |head: RelId, body: RelId, n: usize| Rule {
        head: IrAtom {
            rel: head,
            args: (0..n as u32).map(Pat::Var).collect(),
        },
        body: vec![Lit::Pos(IrAtom {
            rel: body,
            args: (0..n as u32).map(Pat::Var).collect(),
        })],
        var_names: vec![x, y][..n].to_vec(),
    };
    q.rules.push(copy(true_, init, 1));
    q.rules.push(copy(true_, next, 1));
    q.rules.push(copy(does, legal, 2));
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The network, without the load report (timings).
    fn network(path: &str, strategy: Strategy, side_by_side: usize) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let (p, _) = crate::syntax::parse_file(&file).expect("parses");
        let g = ground_compiling(
            &p,
            Budget::default(),
            Instant::now(),
            strategy,
            side_by_side,
        )
        .expect("grounds");
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            g.gates, g.inputs, g.legal, g.goals, g.terminal, g.next, g.initial
        )
    }

    #[test]
    fn compiling_side_by_side_makes_the_same_network_as_atom_after_atom() {
        for game in [
            "games/connect4.gdl",
            "games/breakthrough.gdl",
            "games/tictactoe.gdl",
        ] {
            for strategy in [Strategy::AsWritten, Strategy::Decomposed] {
                let one_by_one = network(game, strategy, usize::MAX);
                // Two atoms a task: every relation of two atoms or more is split among tasks.
                let side_by_side = network(game, strategy, 2);
                assert!(one_by_one == side_by_side, "{game} ({strategy:?}) differs");
            }
        }
    }
}
