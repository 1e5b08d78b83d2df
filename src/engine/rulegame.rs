//! Stage 4: [`RuleGame`], a [`Game`] whose rules are a lowered program.
//!
//! The main entry point is [`RuleGame::from_program`]. At load it plans the program, evaluates the
//! relations that do not depend on the state once, and runs a *relaxed* fixpoint (`engine::analysis`:
//! negation ignored, `true` fed from `init` and `next`, `does` from `legal`) which over-approximates
//! everything reachable:
//! its `true` facts are the base propositions (one bit each of a [`BitState`]) and its `legal` facts are the
//! moves, interned as [`RuleMove`] ids numbered in the byte order of their KIF text, so a sorted id list
//! is a sorted move list. `base` declarations, when present, are added to the propositions. When that
//! fixpoint runs away (a counter of nested terms, which it grows past `terminal`), the game loads in
//! *open mode* instead (`engine::open`): propositions and moves are numbered as play finds them, move ids
//! are in order of discovery (the legal moves still come out sorted by text) and states are bitsets as
//! long as their highest bit needs.
//!
//! Evaluation borrows a scratch database from a small pool (so `&self` methods work from several threads)
//! which remembers the last state it evaluated: asking for every role's legal moves and then the next
//! state evaluates the state's relations once.
//!
//! Per-state work is kept small, each step exact:
//! - views with one rule that are computed per state are unfolded into their readers
//!   (`rewrite::unfold_views`), so a reader that fixes some arguments evaluates only those;
//! - frame rules (`next(f(X)) :- true(f(X))` with at most comparisons of `X`) become a mask of the
//!   propositions they carry over: the next state starts as the state within the mask;
//! - the strata that only `goal` reads are evaluated when a goal is asked, not in every state;
//! - rules written for a top-down prover (chess asks "is this square attacked, ignoring that cell?"
//!   for a few cells, bottom-up means every cell) run demand-driven (`engine::demand`, the magic-sets
//!   rewrite). [`Evaluation::Auto`] decides at load: the bottom-up rules stay unless, in the initial
//!   state and the one after its first joint move, they fail within a second or derive more than
//!   20,000 facts and four times what the demand-driven rules derive. When even the relations that
//!   do not depend on the state cannot be computed in full at load (within 2 s and a million facts:
//!   hex's `isList` of every list of up to 25 cells), every derived relation runs demand-driven.
//!
//! Rules chosen here (documented because GDL leaves them open):
//! - `mover`: the only role with more than one legal move; when every role has exactly one, the only role
//!   whose move is not named `noop`; otherwise `None`.
//! - `dynamics`: `TurnTaking` when a base proposition `f(r)` of arity one ranges exactly over the roles
//!   (a `control` fact), else `Simultaneous`.
//! - `zero_sum`: two roles and every possible goal value `v` of one role has `100 - v` among the other's.
//! - The `Game` trait cannot return errors: a state whose evaluation fails (a runaway) counts as terminal
//!   with no legal moves and goal 0; the `try_` methods report the error.

use std::path::Path;
use std::sync::Mutex;

use hashbrown::HashMap;

use super::analysis::{
    self, dynamic_relations, flatten, split_goal_strata, take_frame_rules, zero_sum, Analysis,
    Flat, Keywords, Numbered, NO_RULES,
};
use super::bitstate::BitState;
use super::eval::Db;
use super::facade::{Choice, MoveTexts};
use super::ir::{Program, RelId};
use super::open::{Discovered, Local};
use super::plan::{plan_sized, Phase, Plan};
use super::terms::{TermId, TermStore};
use super::{EngineError, Limits};
use crate::game::{Dynamics, Game, GameInfo, Goal, RoleIndex};
use crate::syntax::ast;

/// Why [`RuleGame::load`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read, parsed or checked; the diagnostics rendered for a person.
    #[error("{rendered}")]
    Diagnostics {
        /// Every error, rendered with file name, line and source excerpt.
        rendered: String,
    },
    /// The program is valid but the engine cannot load it.
    #[error("{file}: {error}")]
    Engine {
        /// The file.
        file: String,
        /// What went wrong.
        error: EngineError,
    },
}

fn render_all(diags: &[crate::diagnostics::Diagnostic], file: &str, src: &str) -> String {
    let mut out = String::new();
    for d in diags.iter().filter(|d| d.is_error()) {
        out.push_str(&crate::diagnostics::render(d, file, src));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The moves of `role` among the facts of `legal` (in either mode: what differs is how they are
/// numbered).
pub(crate) fn moves_of(db: &Db, legal: RelId, role: TermId) -> impl Iterator<Item = TermId> + '_ {
    let rel = db.rel(legal);
    (0..rel.len())
        .map(move |i| rel.row(i))
        .filter(move |row| row[0] == role)
        .map(|row| row[1])
}

/// A move: an interned id; ids are in the byte order of the moves' KIF text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleMove(pub u32);

struct Scratch {
    db: Db,
    /// The state `db` holds, when `valid`; kept as a buffer otherwise so that switching states does
    /// not allocate.
    state: BitState,
    valid: bool,
    /// Whether the strata only goals read have been evaluated for `state`.
    goals_done: bool,
    /// In open mode, which of `db`'s terms are which propositions and moves (empty otherwise).
    local: Local,
}

/// A game played by evaluating its rules (see the module documentation).
pub struct RuleGame {
    info: GameInfo,
    /// How `show_state` lays out a board (read from the rules).
    layout: crate::print::board::Layout,
    prog: Program,
    plan: Plan,
    base: Db,
    pool: Mutex<Vec<Scratch>>,
    true_: RelId,
    flat: Flat,
    does: RelId,
    next: RelId,
    legal: RelId,
    goal: Option<RelId>,
    terminal: Option<RelId>,
    roles: Vec<TermId>,
    /// The propositions and moves of the analysis, numbered, and the moves' texts.
    numbered: Numbered,
    move_texts: MoveTexts,
    initial: BitState,
    noop: Option<TermId>,
    /// The state strata to evaluate in every state (everything but what only `goal` reads), and those
    /// evaluated when a goal is asked.
    core_strata: Vec<bool>,
    goal_strata: Vec<bool>,
    /// The propositions that frame rules (`next(f(X)) :- true(f(X))`, with filters on `X` only) carry
    /// over: the next state has every proposition of the state within this mask, without evaluating
    /// those rules.
    frame_mask: BitState,
    /// Whether some rule derives into a relation the state fills (then filling checks duplicates).
    inputs_derived: bool,
    /// Whether the rules run in their demand-driven form.
    demand: bool,
    /// In open mode (the relaxed analysis could not bound the propositions), the propositions and
    /// moves found so far; `props`, `moves` and the maps beside them are then empty, `flat` splits
    /// nothing and `frame_mask` carries nothing over.
    open: Option<Discovered>,
}

/// How the evaluator runs the rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Evaluation {
    /// Bottom-up, unless the demand-driven form costs far less in the first states (the default).
    #[default]
    Auto,
    /// Every relation computed in full in each state.
    BottomUp,
    /// Relations computed only for the arguments their readers ask about (the magic-sets rewrite),
    /// when the rewrite changes anything.
    Demand,
}

/// How long each side of the load-time comparison of the two evaluations may run.
const DEMAND_TRIAL_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the bottom-up rules may take over the relations computed once at load before the fully
/// demand-driven form is tried instead (only when there is one).
const STATIC_TRIAL_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// ...and how many facts.
const STATIC_TRIAL_FACTS: usize = 1_000_000;

/// The demand-driven form is chosen when the bottom-up rules derive more than this many facts in the
/// trial states...
const DEMAND_MIN_FACTS: usize = 20_000;

/// ...and this many times what the demand-driven form derives.
const DEMAND_GAIN: usize = 4;

/// What the final rules compile to.
struct Compiled {
    prog: Program,
    plan: Plan,
    base: Db,
    core_strata: Vec<bool>,
    goal_strata: Vec<bool>,
    inputs_derived: bool,
}

/// What compiling a form of the rules needs besides the rules: the relations filled from outside and
/// the sizes that order joins.
struct Compiler {
    inputs: Vec<(RelId, Phase)>,
    sizes: Vec<Option<f64>>,
    terms: TermStore,
    goal: Option<RelId>,
    /// The relations a state fills (see [`Compiled::inputs_derived`]).
    prop_rel: Vec<RelId>,
    true_: RelId,
}

impl Compiler {
    /// For rules shaped over the analysis's propositions: the sizes are what the relaxed analysis
    /// derived (exact for static relations, an upper bound for the others), the propositions of each
    /// flattened `true`, one move per role.
    fn closed(prog: &Program, found: &Analysis, kw: &Keywords, flat: &Flat) -> Compiler {
        let mut inputs = vec![(kw.true_, Phase::State), (kw.does, Phase::Move)];
        inputs.extend(flat.prop_rel.iter().map(|r| (*r, Phase::State)));
        let mut sizes: Vec<Option<f64>> = vec![None; prog.relations.len()];
        for (sz, found) in sizes.iter_mut().zip(&found.sizes) {
            if found.is_some() {
                *sz = *found;
            }
        }
        for r in &flat.prop_rel {
            *sizes[r.0 as usize].get_or_insert(0.0) += 1.0;
        }
        sizes[kw.does.0 as usize] = Some(found.roles.len() as f64);
        sizes[kw.true_.0 as usize] = Some(found.numbered.props.len() as f64);
        Compiler {
            inputs,
            sizes,
            terms: found.terms.clone(),
            goal: kw.goal,
            prop_rel: flat.prop_rel.clone(),
            true_: kw.true_,
        }
    }

    /// For the open mode: only `true` and `does` are filled, and no size is known.
    fn open(prog: &Program, kw: &Keywords) -> Compiler {
        Compiler {
            inputs: vec![(kw.true_, Phase::State), (kw.does, Phase::Move)],
            sizes: vec![None; prog.relations.len()],
            terms: prog.terms.clone(),
            goal: kw.goal,
            prop_rel: Vec::new(),
            true_: kw.true_,
        }
    }

    /// Plans `prog` and computes its load-time relations.
    fn compile(&self, prog: Program, limits: Limits) -> Result<Compiled, EngineError> {
        let inputs_derived = prog
            .rules
            .iter()
            .any(|r| r.head.rel == self.true_ || self.prop_rel.contains(&r.head.rel));
        let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
        let mut sizes = self.sizes.clone();
        sizes.resize(prog.relations.len(), None);
        // Without this hint a demand relation, one fact binding twenty variables of a list pattern,
        // would be joined after the relations it restricts (hex's `le(?el1), .., le(?el20)`).
        for (i, sz) in sizes.iter_mut().enumerate() {
            if super::demand::is_demand_relation(&prog, RelId(i as u32)) {
                *sz = Some(1.0);
            }
        }
        let plan = plan_sized(&prog, &self.inputs, &sizes)?;
        let (core_strata, goal_strata) = split_goal_strata(&prog, &plan, self.goal);
        let mut base = Db::new(&plan, &arities, self.terms.clone(), limits);
        base.run(&plan, Phase::Static)?;
        Ok(Compiled {
            prog,
            plan,
            base,
            core_strata,
            goal_strata,
            inputs_derived,
        })
    }
}

/// The rules rewritten for play over the analysis's propositions (see [`RuleGame::shape`]).
struct Shaped {
    flat: Flat,
    /// The relations the rewrites keep (see [`Keywords::kept`]).
    keep: Vec<RelId>,
    frame_mask: BitState,
}

/// The compiled rules chosen at load, before the trial of [`RuleGame::choose_evaluation`].
struct Chosen {
    compiled: Compiled,
    /// The demand-driven form of the relations that depend on the state, when it differs.
    demanded: Option<Program>,
    /// Whether `compiled` is a demand-driven form already (asked for, or the only one that loads).
    demand: bool,
}

/// Everything a [`RuleGame`] holds besides its compiled rules (see [`RuleGame::assemble`]).
struct Parts {
    roles: Vec<TermId>,
    numbered: Numbered,
    move_texts: MoveTexts,
    flat: Flat,
    initial: BitState,
    frame_mask: BitState,
    dynamics: Dynamics,
    zero_sum: bool,
    open: Option<Discovered>,
}

impl RuleGame {
    /// Reads, parses and checks a rule file (`.kif` or `.gdl`), then loads it with [`RuleGame::from_program`].
    /// The game is named after the file's stem.
    pub fn load(path: &Path) -> Result<RuleGame, LoadError> {
        let file = path.display().to_string();
        let (prog, src) =
            crate::syntax::parse_file(path).map_err(|(diags, src)| LoadError::Diagnostics {
                rendered: render_all(&diags, &file, &src),
            })?;
        let report = crate::check::check(&prog);
        if !report.is_ok() {
            return Err(LoadError::Diagnostics {
                rendered: render_all(&report.errors, &file, &src),
            });
        }
        let name = path
            .file_stem()
            .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
        RuleGame::from_program(&prog, &name).map_err(|error| LoadError::Engine { file, error })
    }

    /// Loads a parsed program (see the module documentation), with the default [`Limits`].
    pub fn from_program(p: &ast::Program, name: &str) -> Result<RuleGame, EngineError> {
        RuleGame::with_limits(p, name, Limits::default())
    }

    /// Loads a parsed program with explicit limits.
    pub fn with_limits(
        p: &ast::Program,
        name: &str,
        limits: Limits,
    ) -> Result<RuleGame, EngineError> {
        RuleGame::build(p, name, limits, Evaluation::Auto)
    }

    /// Loads a game in four steps: lower the rules, analyse them ([`analysis::analyse`]), shape them
    /// over the propositions found ([`RuleGame::shape`]), and compile the form that runs best
    /// ([`RuleGame::choose_compiled`], then [`RuleGame::choose_evaluation`]); or, when the analysis
    /// cannot bound the propositions, [`RuleGame::build_open`].
    fn build(
        p: &ast::Program,
        name: &str,
        limits: Limits,
        evaluation: Evaluation,
    ) -> Result<RuleGame, EngineError> {
        let mut prog = super::rewrite::prepared(p)?;
        let kw = Keywords::add(&mut prog)?;
        let Some(found) = analysis::analyse(&prog, &kw, limits)? else {
            return RuleGame::build_open(p, name, prog, limits, &kw);
        };
        let move_texts = MoveTexts::of(&found.terms, &found.numbered.moves, prog.syntax);
        let shaped = RuleGame::shape(&mut prog, &found, &kw);
        let compiler = Compiler::closed(&prog, &found, &kw, &shaped.flat);
        let chosen = RuleGame::choose_compiled(prog, &shaped.keep, &compiler, limits, evaluation)?;
        let base = &chosen.compiled.base;
        let mut initial = BitState::with_words(shaped.frame_mask.words().len());
        for i in 0..base.rel(kw.init).len() {
            if let Some(&b) = found.numbered.prop_of.get(&base.rel(kw.init).row(i)[0]) {
                initial.set(b as usize);
            }
        }
        let parts = Parts {
            dynamics: super::facade::dynamics_of(&base.terms, &found.numbered.props, &found.roles),
            zero_sum: found.zero_sum,
            roles: found.roles,
            numbered: found.numbered,
            move_texts,
            flat: shaped.flat,
            initial,
            frame_mask: shaped.frame_mask,
            open: None,
        };
        let mut game = RuleGame::assemble(p, name, &kw, chosen.compiled, parts, chosen.demand);
        if let (Evaluation::Auto, Some(d), false) = (evaluation, chosen.demanded, chosen.demand) {
            game.choose_evaluation(d, limits, &compiler)?;
        }
        Ok(game)
    }

    /// Rewrites the rules for play over the analysis's propositions: `true` (and `next`) split by
    /// function symbol, views unfolded into their readers, frame rules made a mask.
    fn shape(prog: &mut Program, found: &Analysis, kw: &Keywords) -> Shaped {
        let flat = flatten(prog, &found.numbered.props, &found.terms, kw.true_, kw.next);
        let extra = flat.next_rels.iter().map(|(r, _)| *r);
        let keep = kw.kept(prog, extra.chain(flat.prop_rel.iter().copied()));
        let dynamic = dynamic_relations(prog, &keep[..2], &flat.prop_rel);
        super::rewrite::unfold_views(prog, &keep, &dynamic);
        let words = found.numbered.props.len().div_ceil(64).max(1);
        let (true_, next) = (kw.true_, kw.next);
        let mask = take_frame_rules(
            prog,
            &flat,
            &found.numbered.props,
            &found.terms,
            true_,
            next,
            words,
        );
        Shaped {
            flat,
            keep,
            frame_mask: BitState::from_words(mask),
        }
    }

    /// Compiles the bottom-up rules, or a demand-driven form (see `engine::demand`) when `evaluation`
    /// asks for it or when only that form can compute the load-time relations (hex's `isList` of
    /// every list of up to 25 cells, mummy maze's direction table of 6.5M entries).
    fn choose_compiled(
        prog: Program,
        keep: &[RelId],
        compiler: &Compiler,
        limits: Limits,
        evaluation: Evaluation,
    ) -> Result<Chosen, EngineError> {
        // `demanded` restricts the relations that depend on the state; `demand_with(&derived)` every
        // derived relation.
        let dynamic = dynamic_relations(&prog, &keep[..2], &compiler.prop_rel);
        let per_move = dynamic_relations(&prog, &keep[1..2], &[]);
        // Relations with a rule that has conditions (a table of facts has nothing to restrict).
        let mut derived = vec![false; prog.relations.len()];
        for r in prog.rules.iter().filter(|r| !r.body.is_empty()) {
            derived[r.head.rel.0 as usize] = true;
        }
        let demand_with = |eligible: &[bool]| {
            let mut d = prog.clone();
            let lean = &super::demand::Lean::Full;
            (super::demand::demand(&mut d, keep, eligible, &per_move, lean) > 0).then_some(d)
        };
        let by_demand = evaluation != Evaluation::BottomUp;
        let demanded = by_demand.then(|| demand_with(&dynamic)).flatten();
        let static_derived = by_demand && derived.iter().zip(&dynamic).any(|(&d, &dy)| d && !dy);
        let chosen = |compiled, demand| Chosen {
            compiled,
            demanded: demanded.clone(),
            demand,
        };
        if let (Some(d), Evaluation::Demand) = (&demanded, evaluation) {
            if let Ok(c) = compiler.compile(d.clone(), limits) {
                return Ok(chosen(c, true));
            }
        }
        if !static_derived {
            return Ok(chosen(compiler.compile(prog, limits)?, false));
        }
        // The load-time relations in full, within a time budget when a fully demand-driven form can
        // take over.
        let budget = Limits {
            deadline: Some(std::time::Instant::now() + STATIC_TRIAL_TIME),
            max_facts: limits.max_facts.min(STATIC_TRIAL_FACTS),
            ..limits
        };
        match compiler.compile(prog.clone(), budget) {
            Ok(mut c) => {
                c.base.set_limits(limits);
                Ok(chosen(c, false))
            }
            // Only size is a reason to switch: a rule the plain form rejects (unsafe, say) stays
            // rejected even where a restricted copy would bind its variables.
            Err(e) if !matches!(e, EngineError::Runaway(_)) => Err(e),
            Err(_) => match demand_with(&derived).and_then(|d| compiler.compile(d, limits).ok()) {
                Some(c) => Ok(chosen(c, true)),
                // Neither form loads: the bottom-up error, without the budget, says why.
                None => Ok(chosen(compiler.compile(prog, limits)?, false)),
            },
        }
    }

    /// The open mode (see `engine::open`): the rules compiled bottom-up without the relaxed analysis's
    /// propositions (so nothing is split by function symbol and no frame rule becomes a mask), the
    /// propositions and moves numbered as evaluations find them.
    fn build_open(
        p: &ast::Program,
        name: &str,
        mut prog: Program,
        limits: Limits,
        kw: &Keywords,
    ) -> Result<RuleGame, EngineError> {
        let static_goals = kw.goal.and_then(|g| analysis::head_goal_values(&prog, g));
        let keep = kw.kept(&prog, std::iter::empty());
        let dynamic = dynamic_relations(&prog, &keep[..2], &[]);
        super::rewrite::unfold_views(&mut prog, &keep, &dynamic);
        let c = Compiler::open(&prog, kw).compile(prog, limits)?;
        let role = c.base.rel(kw.role);
        let roles: Vec<TermId> = (0..role.len()).map(|i| role.row(i)[0]).collect();
        if roles.is_empty() {
            return Err(EngineError::Invalid(format!("{NO_RULES} roles")));
        }
        let open = Discovered::new(c.base.terms.clone(), c.prog.syntax);
        let init = c.base.rel(kw.init);
        let initial = BitState::from_ones(
            (0..init.len()).map(|i| open.prop_from(&c.base.terms, init.row(i)[0]) as usize),
        );
        let parts = Parts {
            // Without the analysis no proposition is known to range over the roles, nor any goal
            // value a rule computes.
            dynamics: if roles.len() == 1 {
                Dynamics::TurnTaking
            } else {
                Dynamics::Simultaneous
            },
            zero_sum: static_goals
                .is_some_and(|heads| zero_sum(&roles, |r| analysis::head_values(&heads, r))),
            roles,
            numbered: Numbered::default(),
            move_texts: MoveTexts::default(),
            flat: Flat {
                prop_rel: Vec::new(),
                prop_args: Vec::new(),
                next_rels: Vec::new(),
                generic_true: true,
            },
            initial,
            frame_mask: BitState::from_words(Vec::new()),
            open: Some(open),
        };
        Ok(RuleGame::assemble(p, name, kw, c, parts, false))
    }

    /// The game of compiled rules `c` and `parts`.
    fn assemble(
        p: &ast::Program,
        name: &str,
        kw: &Keywords,
        c: Compiled,
        parts: Parts,
        demand: bool,
    ) -> RuleGame {
        let terms = &c.base.terms;
        let noop = terms
            .symbols()
            .get("noop")
            .and_then(|s| terms.find_constant(s));
        RuleGame {
            layout: crate::print::board::layout_of(p),
            info: GameInfo {
                name: name.to_string(),
                roles: parts.roles.iter().map(|t| terms.kif(*t)).collect(),
                dynamics: parts.dynamics,
                zero_sum: parts.zero_sum,
            },
            noop,
            prog: c.prog,
            plan: c.plan,
            base: c.base,
            pool: Mutex::new(Vec::new()),
            true_: kw.true_,
            flat: parts.flat,
            does: kw.does,
            next: kw.next,
            legal: kw.legal,
            goal: kw.goal,
            terminal: kw.terminal,
            roles: parts.roles,
            numbered: parts.numbered,
            move_texts: parts.move_texts,
            initial: parts.initial,
            core_strata: c.core_strata,
            goal_strata: c.goal_strata,
            frame_mask: parts.frame_mask,
            inputs_derived: c.inputs_derived,
            demand,
            open: parts.open,
        }
    }

    /// Whether the propositions and moves are found in play (the open mode, see `engine::open`)
    /// because the load-time analysis could not bound them.
    pub fn finds_propositions_in_play(&self) -> bool {
        self.open.is_some()
    }

    /// Loads a parsed program with explicit limits and evaluation.
    pub fn with_options(
        p: &ast::Program,
        name: &str,
        limits: Limits,
        evaluation: Evaluation,
    ) -> Result<RuleGame, EngineError> {
        RuleGame::build(p, name, limits, evaluation)
    }

    /// Whether the rules run in their demand-driven form (see [`Evaluation`]).
    pub fn uses_demand(&self) -> bool {
        self.demand
    }

    /// Puts `c` in place of the compiled rules, returning the old ones.
    fn swap_compiled(&mut self, c: Compiled) -> Compiled {
        if let Ok(mut pool) = self.pool.lock() {
            pool.clear();
        }
        Compiled {
            prog: std::mem::replace(&mut self.prog, c.prog),
            plan: std::mem::replace(&mut self.plan, c.plan),
            base: std::mem::replace(&mut self.base, c.base),
            core_strata: std::mem::replace(&mut self.core_strata, c.core_strata),
            goal_strata: std::mem::replace(&mut self.goal_strata, c.goal_strata),
            inputs_derived: std::mem::replace(&mut self.inputs_derived, c.inputs_derived),
        }
    }

    /// Facts derived in the initial state and in the state after its first joint move: what the
    /// load-time comparison of the two evaluations weighs.
    fn trial_cost(&self) -> Result<usize, EngineError> {
        let s = self.initial.clone();
        let mut cost = self.with_state(&s, |db| Ok(db.derived()))?;
        let mut joint = Vec::with_capacity(self.roles.len());
        let mut moves = Vec::new();
        for r in 0..self.roles.len() {
            self.try_legal(&s, r, &mut moves)?;
            match moves.first() {
                Some(&m) => joint.push(m),
                None => return Ok(cost),
            }
        }
        if self.try_terminal(&s)? {
            return Ok(cost);
        }
        let next = self.try_next(&s, &joint)?;
        cost += self.with_state(&next, |db| Ok(db.derived()))?;
        Ok(cost)
    }

    /// Keeps the bottom-up rules unless they fail or derive far more than the demand-driven form
    /// `demanded` in the first states (chess's "attacked, ignoring this cell" relations).
    fn choose_evaluation(
        &mut self,
        demanded: Program,
        limits: Limits,
        compiler: &Compiler,
    ) -> Result<(), EngineError> {
        let trial = || Limits {
            deadline: Some(std::time::Instant::now() + DEMAND_TRIAL_TIME),
            ..limits
        };
        self.base.set_limits(trial());
        let plain_cost = self.trial_cost();
        self.base.set_limits(limits);
        let Ok(mut compiled) = compiler.compile(demanded, trial()) else {
            return Ok(());
        };
        compiled.base.set_limits(trial());
        let plain = self.swap_compiled(compiled);
        let demand_cost = self.trial_cost();
        let better = match (&plain_cost, &demand_cost) {
            (Err(_), Ok(_)) => true,
            (Ok(p), Ok(d)) => *p > DEMAND_MIN_FACTS && *p > DEMAND_GAIN * *d,
            _ => false,
        };
        if better {
            self.base.set_limits(limits);
            if let Ok(mut pool) = self.pool.lock() {
                pool.clear();
            }
            self.demand = true;
        } else {
            self.swap_compiled(plain);
        }
        Ok(())
    }

    /// The lowered program.
    pub fn program(&self) -> &Program {
        &self.prog
    }

    /// The evaluation plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What the load-time analysis found (roles, when each relation is computed, propositions,
    /// moves), printable: `ggp-run stage --stage analysed`.
    pub fn analysis(&self) -> super::analysis::AnalysisDisplay<'_> {
        super::analysis::AnalysisDisplay {
            info: &self.info,
            terms: &self.base.terms,
            prog: &self.prog,
            plan: &self.plan,
            props: &self.numbered.props,
            moves: &self.numbered.moves,
            open: self.open.is_some(),
            demand: self.demand,
        }
    }

    /// The number of base propositions (bits of a state).
    pub fn num_propositions(&self) -> usize {
        match &self.open {
            None => self.numbered.props.len(),
            Some(o) => o.counts().0,
        }
    }

    /// The number of distinct moves.
    pub fn num_moves(&self) -> usize {
        match &self.open {
            None => self.numbered.moves.len(),
            Some(o) => o.counts().1,
        }
    }

    /// Runs `f` on a scratch database holding the evaluation of `state`.
    fn with_state<R>(
        &self,
        state: &BitState,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_state_goals(state, false, f)
    }

    /// [`RuleGame::with_state`], with the strata only goals read evaluated too when `goals`.
    fn with_state_goals<R>(
        &self,
        state: &BitState,
        goals: bool,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_scratch(state, goals, |db, _| f(db))
    }

    /// [`RuleGame::with_state_goals`], with the scratch database's open-mode [`Local`] lent too.
    fn with_scratch<R>(
        &self,
        state: &BitState,
        goals: bool,
        f: impl FnOnce(&mut Db, &mut Local) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let popped = self.pool.lock().map(|mut p| p.pop()).unwrap_or(None);
        let mut s = popped.unwrap_or_else(|| Scratch {
            db: self.base.clone(),
            state: state.clone(),
            valid: false,
            goals_done: false,
            local: Local::default(),
        });
        let r = (|| {
            if !s.valid || s.state != *state {
                s.valid = false;
                s.db.clear_from(&self.plan, Phase::State);
                match &self.open {
                    Some(open) => open.fill(&mut s.local, &mut s.db, self.true_, state.ones())?,
                    None => self.fill(&mut s.db, state),
                }
                s.goals_done = false;
                s.db.run_only(&self.plan, Phase::State, &self.core_strata)?;
                s.state.clone_from(state);
                s.valid = true;
            }
            if goals && !s.goals_done {
                s.db.run_only(&self.plan, Phase::State, &self.goal_strata)?;
                s.goals_done = true;
            }
            f(&mut s.db, &mut s.local)
        })();
        // After an error, the term that broke the depth limit stays in the store, where the next
        // evaluation would find it instead of making (and checking) it, and half-derived facts stay
        // in the relations: the scratch is dropped and a fresh copy of `base` takes its place, so
        // that the same question fails the same way every time, in either mode.
        if r.is_ok() {
            if let Ok(mut p) = self.pool.lock() {
                p.push(s);
            }
        }
        r
    }

    /// Fills the state relations of `db` with `state`'s propositions (closed mode).
    #[inline]
    fn fill(&self, db: &mut Db, state: &BitState) {
        for b in state.ones() {
            if self.inputs_derived {
                db.insert(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert(self.true_, &[self.numbered.props[b]]);
                }
            } else {
                // Each proposition is one fact of one relation, and nothing else adds to them.
                db.insert_new(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert_new(self.true_, &[self.numbered.props[b]]);
                }
            }
        }
    }

    fn legal_ids(
        db: &Db,
        legal: RelId,
        role: TermId,
        map: &HashMap<TermId, u32>,
        out: &mut Vec<RuleMove>,
    ) {
        out.clear();
        out.extend(
            moves_of(db, legal, role)
                .filter_map(|t| map.get(&t))
                .map(|&m| RuleMove(m)),
        );
        out.sort_unstable();
    }

    /// The legal moves of `role`, sorted.
    pub fn try_legal(
        &self,
        state: &BitState,
        role: RoleIndex,
        out: &mut Vec<RuleMove>,
    ) -> Result<(), EngineError> {
        let r = *self
            .roles
            .get(role)
            .ok_or_else(|| EngineError::Rules(format!("no role {role}")))?;
        self.with_scratch(state, false, |db, local| {
            match &self.open {
                None => Self::legal_ids(db, self.legal, r, &self.numbered.move_of, out),
                Some(open) => open.legal_ids(local, db, self.legal, r, out),
            }
            Ok(())
        })
    }

    /// Whether the state is terminal.
    pub fn try_terminal(&self, state: &BitState) -> Result<bool, EngineError> {
        match self.terminal {
            None => Ok(false),
            Some(t) => self.with_state(state, |db| Ok(!db.rel(t).is_empty())),
        }
    }

    /// Every goal value the rules give `role` in `state`, sorted (normally exactly one).
    pub fn goal_values(&self, state: &BitState, role: RoleIndex) -> Result<Vec<Goal>, EngineError> {
        let (Some(g), Some(&r)) = (self.goal, self.roles.get(role)) else {
            return Ok(Vec::new());
        };
        self.with_state_goals(state, true, |db| {
            let rel = db.rel(g);
            let mut v: Vec<Goal> = (0..rel.len())
                .map(|i| rel.row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| db.terms.as_int(row[1]).and_then(|x| Goal::try_from(x).ok()))
                .collect();
            v.sort_unstable();
            v.dedup();
            Ok(v)
        })
    }

    /// The state reached by a joint move.
    pub fn try_next(&self, state: &BitState, joint: &[RuleMove]) -> Result<BitState, EngineError> {
        if joint.len() != self.roles.len() {
            return Err(EngineError::Rules(format!(
                "a joint move needs {} moves, got {}",
                self.roles.len(),
                joint.len()
            )));
        }
        if let Some(open) = &self.open {
            return self.with_scratch(state, false, |db, local| {
                Self::open_next(self, open, db, local, joint)
            });
        }
        self.with_state(state, |db| {
            db.clear_from(&self.plan, Phase::Move);
            for (r, m) in joint.iter().enumerate() {
                let mv = *self
                    .numbered
                    .moves
                    .get(m.0 as usize)
                    .ok_or_else(|| EngineError::Rules(format!("unknown move id {}", m.0)))?;
                db.insert(self.does, &[self.roles[r], mv]);
            }
            db.run(&self.plan, Phase::Move)?;
            let mut s = state.and(&self.frame_mask);
            let unforeseen = |db: &Db, fact: Option<TermId>| {
                EngineError::Rules(format!(
                    "the next state has {}, which the load-time analysis did not foresee \
                     (arithmetic beyond the integers the rules mention?)",
                    fact.map_or_else(|| "a fact".to_string(), |t| db.terms.kif(t))
                ))
            };
            let rel = db.rel(self.next);
            for i in 0..rel.len() {
                let fact = rel.row(i)[0];
                let b = self
                    .numbered
                    .prop_of
                    .get(&fact)
                    .ok_or_else(|| unforeseen(db, Some(fact)))?;
                s.set(*b as usize);
            }
            for &(r, f) in &self.flat.next_rels {
                let rel = db.rel(r);
                for i in 0..rel.len() {
                    let row = rel.row(i);
                    let t = if row.is_empty() {
                        db.terms.find_constant(f)
                    } else {
                        db.terms.find_func(f, row)
                    };
                    let b = t
                        .and_then(|t| self.numbered.prop_of.get(&t))
                        .ok_or_else(|| unforeseen(db, t))?;
                    s.set(*b as usize);
                }
            }
            Ok(s)
        })
    }

    /// [`RuleGame::try_next`] in open mode: every `next` fact numbered, found or new.
    fn open_next(
        &self,
        open: &Discovered,
        db: &mut Db,
        local: &mut Local,
        joint: &[RuleMove],
    ) -> Result<BitState, EngineError> {
        db.clear_from(&self.plan, Phase::Move);
        for (r, m) in joint.iter().enumerate() {
            let mv = open
                .local_move(local, &mut db.terms, *m)
                .ok_or_else(|| EngineError::Rules(format!("unknown move id {}", m.0)))?;
            db.insert(self.does, &[self.roles[r], mv]);
        }
        db.run(&self.plan, Phase::Move)?;
        let rel = db.rel(self.next);
        Ok(BitState::from_ones((0..rel.len()).map(|i| {
            open.prop_index(local, &db.terms, rel.row(i)[0]) as usize
        })))
    }

    /// Runs `f` on the store of the propositions' terms and the propositions, by index.
    fn with_props<R>(&self, f: impl FnOnce(&TermStore, &[TermId]) -> R) -> R {
        match &self.open {
            None => f(&self.base.terms, &self.numbered.props),
            Some(open) => open.with_props(f),
        }
    }

    /// The state's facts (the arguments of `true`) as KIF, sorted by bytes.
    pub fn state_facts(&self, state: &BitState) -> Vec<String> {
        let mut v: Vec<String> = self.with_props(|terms, props| {
            state
                .ones()
                .filter_map(|b| props.get(b).map(|t| terms.kif(*t)))
                .collect()
        });
        v.sort();
        v
    }

    /// A move as KIF.
    pub fn move_kif(&self, m: RuleMove) -> &str {
        match &self.open {
            None => self.move_texts.kif.get(m.0 as usize).map(|s| s.as_str()),
            Some(open) => open.move_kif(m),
        }
        .unwrap_or("?")
    }

    /// The move whose KIF text is `text` (exactly as printed), if the game has one (in open mode, if
    /// play has found it).
    pub fn move_from_kif(&self, text: &str) -> Option<RuleMove> {
        if let Some(open) = &self.open {
            return open.move_from_kif(text);
        }
        self.move_texts
            .kif
            .binary_search_by(|k| k.as_str().cmp(text))
            .ok()
            .map(|i| RuleMove(i as u32))
    }

    fn is_noop(&self, m: RuleMove) -> bool {
        let Some(noop) = self.noop else { return false };
        match &self.open {
            None => self.numbered.moves.get(m.0 as usize) == Some(&noop),
            Some(open) => open.move_is(m, noop),
        }
    }

    /// Whether the proposition with this KIF text is true in `state`.
    pub fn holds(&self, state: &BitState, kif: &str) -> bool {
        self.with_props(|terms, props| {
            props
                .iter()
                .position(|t| terms.kif(*t) == kif)
                .is_some_and(|b| state.get(b))
        })
    }
}

impl Game for RuleGame {
    type State = BitState;
    type Move = RuleMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> BitState {
        self.initial.clone()
    }

    fn is_terminal(&self, state: &BitState) -> bool {
        self.try_terminal(state).unwrap_or(true)
    }

    fn state_key(&self, state: &BitState) -> u64 {
        state.key()
    }

    fn legal_moves(&self, state: &BitState, role: RoleIndex, out: &mut Vec<RuleMove>) {
        if self.try_legal(state, role, out).is_err() {
            out.clear();
        }
    }

    fn next_state(&self, state: &BitState, joint: &[RuleMove]) -> BitState {
        self.try_next(state, joint)
            .unwrap_or_else(|_| state.clone())
    }

    fn goal(&self, state: &BitState, role: RoleIndex) -> Goal {
        self.goal_values(state, role)
            .ok()
            .and_then(|v| v.last().copied())
            .unwrap_or(0)
    }

    fn mover(&self, state: &BitState) -> Option<RoleIndex> {
        if self.is_terminal(state) {
            return None;
        }
        let mut buf = Vec::new();
        super::facade::mover_of(self.roles.len(), |r| {
            self.legal_moves(state, r, &mut buf);
            Choice::of(buf.len(), || self.is_noop(buf[0]))
        })
    }

    fn show_move(&self, mv: &RuleMove) -> String {
        match &self.open {
            None => self.move_texts.own.get(mv.0 as usize).map(|s| s.as_str()),
            Some(open) => open.move_text(*mv),
        }
        .map_or_else(|| format!("?{}", mv.0), str::to_string)
    }

    fn move_kif(&self, mv: &RuleMove) -> String {
        RuleGame::move_kif(self, *mv).to_string()
    }

    fn state_kif(&self, state: &BitState) -> Vec<String> {
        self.state_facts(state)
    }

    fn show_state(&self, state: &BitState) -> String {
        self.with_props(|terms, props| {
            let facts: Vec<TermId> = state.ones().filter_map(|b| props.get(b).copied()).collect();
            crate::print::board::draw_state(terms, &facts, props, self.prog.syntax, self.layout)
        })
    }
}
