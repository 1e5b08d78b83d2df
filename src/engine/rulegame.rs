//! Stage 4: [`RuleGame`], a [`Game`] whose rules are a lowered program.
//!
//! The main entry point is [`RuleGame::from_program`]. At load it plans the program, evaluates the
//! relations that do not depend on the state once, and runs a *relaxed* fixpoint (negation ignored,
//! `true` fed from `init` and `next`, `does` from `legal`) which over-approximates everything reachable:
//! its `true` facts are the base propositions (one bit each of a [`RuleState`]) and its `legal` facts are the
//! moves, interned as [`RuleMove`] ids numbered in the byte order of their KIF text, so a sorted id list
//! is a sorted move list. `base` declarations, when present, are added to the propositions. When that
//! fixpoint runs away (a counter of nested terms, which it grows past `terminal`), the game loads in
//! *open mode* instead ([`super::open`]): propositions and moves are numbered as play finds them, move ids
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

use super::eval::Db;
use super::ir::{Cmp, Lit, Origin, Pat, Program, RelId, Rule};
use super::open::{Discovered, Local};
use super::ops::to_classic;
use super::plan::{plan, plan_sized, Phase, Plan};
use super::terms::{TermId, TermStore};
use super::{lower, EngineError, Limits};
use crate::game::{Dynamics, Estimate, Game, GameInfo, Goal, RoleIndex};
use crate::syntax::ast::{self, Syntax};

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

/// A state: one bit per base proposition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuleState(Box<[u64]>);

impl RuleState {
    /// Bits beyond the words are false (an open-mode state is as long as its highest bit needs).
    #[inline]
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    /// The state of `words` without its trailing zero words, so that equal sets of propositions found
    /// at different times are equal states with one key.
    fn trimmed(mut words: Vec<u64>) -> RuleState {
        while words.last() == Some(&0) {
            words.pop();
        }
        RuleState(words.into_boxed_slice())
    }
    /// Sets bit `i` of `words`, lengthening them as needed.
    fn set_growing(words: &mut Vec<u64>, i: usize) {
        if words.len() <= i / 64 {
            words.resize(i / 64 + 1, 0);
        }
        words[i / 64] |= 1 << (i % 64);
    }
    #[inline]
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                Some(w * 64 + i)
            })
        })
    }
}

/// A move: an interned id; ids are in the byte order of the moves' KIF text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleMove(pub u32);

struct Scratch {
    db: Db,
    /// The state `db` holds, when `valid`; kept as a buffer otherwise so that switching states does
    /// not allocate.
    state: RuleState,
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
    props: Vec<TermId>,
    prop_of: HashMap<TermId, u32>,
    moves: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
    move_kif: Vec<String>,
    move_text: Vec<String>,
    initial: RuleState,
    noop: Option<TermId>,
    /// The state strata to evaluate in every state (everything but what only `goal` reads), and those
    /// evaluated when a goal is asked.
    core_strata: Vec<bool>,
    goal_strata: Vec<bool>,
    /// The propositions that frame rules (`next(f(X)) :- true(f(X))`, with filters on `X` only) carry
    /// over: the next state has every proposition of the state within this mask, without evaluating
    /// those rules.
    frame_mask: RuleState,
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

/// Plans `prog` and computes its load-time relations.
#[allow(clippy::too_many_arguments)]
fn compile_program(
    prog: Program,
    inputs: &[(RelId, Phase)],
    sizes: &[Option<f64>],
    terms: &TermStore,
    limits: Limits,
    goal: Option<RelId>,
    prop_rel: &[RelId],
    true_: RelId,
) -> Result<Compiled, EngineError> {
    let inputs_derived = prog
        .rules
        .iter()
        .any(|r| r.head.rel == true_ || prop_rel.contains(&r.head.rel));
    let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
    let mut sizes = sizes.to_vec();
    sizes.resize(prog.relations.len(), None);
    // Without this hint a demand relation, one fact binding twenty variables of a list pattern, would
    // be joined after the relations it restricts (hex's `le(?el1), .., le(?el20)`).
    for (i, sz) in sizes.iter_mut().enumerate() {
        if super::demand::is_demand_relation(&prog, RelId(i as u32)) {
            *sz = Some(1.0);
        }
    }
    let plan = plan_sized(&prog, inputs, &sizes)?;
    let (core_strata, goal_strata) = split_goal_strata(&prog, &plan, goal);
    let mut base = Db::new(&plan, &arities, terms.clone(), limits);
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

const NO_RULES: &str = "the game has no";

/// The relations every game has, made by [`RuleGame::build`] before the analysis.
struct Keywords {
    role: RelId,
    true_: RelId,
    does: RelId,
    next: RelId,
    legal: RelId,
    init: RelId,
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

    fn build(
        p: &ast::Program,
        name: &str,
        limits: Limits,
        evaluation: Evaluation,
    ) -> Result<RuleGame, EngineError> {
        let mut prog = to_classic(&lower(p)?)?;
        super::rewrite::prepare(&mut prog);
        let role = prog
            .keywords
            .role
            .ok_or_else(|| EngineError::Invalid(format!("{NO_RULES} `role` facts")))?;
        let true_ = prog.add_relation("true", 1);
        let does = prog.add_relation("does", 2);
        let next = prog.add_relation("next", 1);
        let legal = prog.add_relation("legal", 2);
        let init = prog.add_relation("init", 1);
        let goal = prog.keywords.goal;
        let terminal = prog.keywords.terminal;
        let base_rel = prog.keywords.base;
        let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();

        // The relaxed fixpoint: what can ever be true, and which moves can ever be legal.
        let static_goals = goal.and_then(|g| head_goal_values(&prog, g));
        let relaxed = relax(
            &prog,
            init,
            true_,
            next,
            legal,
            does,
            goal.filter(|_| static_goals.is_none()),
        );
        let rplan = plan(&relaxed, &[])?;
        let mut rdb = Db::new(&rplan, &arities, relaxed.terms.clone(), limits);
        match rdb.run_only_parallel(&rplan, Phase::Static, &[]) {
            Ok(()) => {}
            // The analysis could not bound the propositions (a counter of nested terms, which it
            // grows past `terminal`): play finds them instead. Running out of the caller's time is
            // not such a reason.
            Err(EngineError::Runaway(_))
                if limits
                    .deadline
                    .is_none_or(|d| std::time::Instant::now() < d) =>
            {
                let kw = Keywords {
                    role,
                    true_,
                    does,
                    next,
                    legal,
                    init,
                };
                return RuleGame::build_open(p, name, prog, limits, kw);
            }
            Err(e) => return Err(e),
        }
        let terms = rdb.terms.clone();

        let roles: Vec<TermId> = (0..rdb.rel(role).len())
            .map(|i| rdb.rel(role).row(i)[0])
            .collect();
        if roles.is_empty() {
            return Err(EngineError::Invalid(format!("{NO_RULES} roles")));
        }
        let mut props: Vec<TermId> = (0..rdb.rel(true_).len())
            .map(|i| rdb.rel(true_).row(i)[0])
            .collect();
        if let Some(b) = base_rel {
            for i in 0..rdb.rel(b).len() {
                props.push(rdb.rel(b).row(i)[0]);
            }
        }
        props.sort_by_cached_key(|t| terms.kif(*t));
        props.dedup();
        let prop_of: HashMap<TermId, u32> = props
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, i as u32))
            .collect();
        let mut moves: Vec<TermId> = (0..rdb.rel(legal).len())
            .map(|i| rdb.rel(legal).row(i)[1])
            .collect();
        moves.sort_by_cached_key(|t| terms.kif(*t));
        moves.dedup();
        let move_of: HashMap<TermId, u32> = moves
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, i as u32))
            .collect();
        let move_kif: Vec<String> = moves.iter().map(|t| terms.kif(*t)).collect();
        let move_text: Vec<String> = match prog.syntax {
            Syntax::Kif => move_kif.clone(),
            Syntax::Infix => moves.iter().map(|t| terms.infix(*t)).collect(),
        };

        // The real plan: `true` is read per state, `does` per move.
        let flat = flatten(&mut prog, &props, &terms, true_, next);
        let keep = {
            let k = prog.keywords;
            let mut keep = vec![true_, does, next, legal, init];
            keep.extend(
                [k.role, k.goal, k.terminal, k.base, k.input, k.legal1]
                    .into_iter()
                    .flatten(),
            );
            keep.extend(flat.next_rels.iter().map(|(r, _)| *r));
            keep.extend(flat.prop_rel.iter().copied());
            let dynamic = dynamic_relations(&prog, &keep[..2], &flat.prop_rel);
            super::rewrite::unfold_views(&mut prog, &keep, &dynamic);
            keep
        };
        let words = props.len().div_ceil(64).max(1);
        let frame_mask = take_frame_rules(&mut prog, &flat, &props, &terms, true_, next, words);
        // The demand-driven forms of the rules (see `engine::demand`), tried below when they differ:
        // `demanded` restricts the relations that depend on the state; `demand_with(&derived)` every
        // derived relation, made only for games whose load-time relations turn out too large to
        // compute in full (hex's `isList` of every list of up to 25 cells, mummy maze's direction
        // table of 6.5M entries).
        let dynamic = dynamic_relations(&prog, &keep[..2], &flat.prop_rel);
        let per_move = dynamic_relations(&prog, &keep[1..2], &[]);
        // Relations with a rule that has conditions (a table of facts has nothing to restrict).
        let mut derived = vec![false; prog.relations.len()];
        for r in prog.rules.iter().filter(|r| !r.body.is_empty()) {
            derived[r.head.rel.0 as usize] = true;
        }
        let demand_with = |eligible: &[bool]| {
            let mut d = prog.clone();
            (super::demand::demand(
                &mut d,
                &keep,
                eligible,
                &per_move,
                &super::demand::Lean::Full,
            ) > 0)
                .then_some(d)
        };
        let by_demand = evaluation != Evaluation::BottomUp;
        let demanded = by_demand.then(|| demand_with(&dynamic)).flatten();
        let static_derived = by_demand && derived.iter().zip(&dynamic).any(|(&d, &dy)| d && !dy);
        let mut inputs = vec![(true_, Phase::State), (does, Phase::Move)];
        inputs.extend(flat.prop_rel.iter().map(|r| (*r, Phase::State)));
        // Sizes for join ordering: what the relaxed analysis derived (exact for static relations, an
        // upper bound for the others), the propositions of each flattened `true`, one move per role.
        let mut sizes: Vec<Option<f64>> = vec![None; prog.relations.len()];
        for (i, sz) in sizes.iter_mut().enumerate().take(relaxed.relations.len()) {
            let computed = relaxed.rules.iter().any(|r| r.head.rel.0 as usize == i);
            if computed {
                *sz = Some(rdb.rel(RelId(i as u32)).len() as f64);
            }
        }
        for r in &flat.prop_rel {
            *sizes[r.0 as usize].get_or_insert(0.0) += 1.0;
        }
        sizes[does.0 as usize] = Some(roles.len() as f64);
        sizes[true_.0 as usize] = Some(props.len() as f64);
        let prop_rel = flat.prop_rel.clone();
        let compile = move |prog: Program, limits: Limits| {
            compile_program(
                prog, &inputs, &sizes, &terms, limits, goal, &prop_rel, true_,
            )
        };
        let forced = match (&demanded, evaluation) {
            (Some(d), Evaluation::Demand) => compile(d.clone(), limits).ok(),
            _ => None,
        };
        let mut demand_forced = forced.is_some();
        let compiled = match forced {
            Some(c) => c,
            None if static_derived => {
                // The load-time relations in full, within a time budget when a fully demand-driven
                // form can take over.
                let budget = Limits {
                    deadline: Some(std::time::Instant::now() + STATIC_TRIAL_TIME),
                    max_facts: limits.max_facts.min(STATIC_TRIAL_FACTS),
                    ..limits
                };
                match compile(prog.clone(), budget) {
                    Ok(mut c) => {
                        c.base.set_limits(limits);
                        c
                    }
                    // Only size is a reason to switch: a rule the plain form rejects (unsafe, say)
                    // stays rejected even where a restricted copy would bind its variables.
                    Err(e) if !matches!(e, EngineError::Runaway(_)) => return Err(e),
                    Err(_) => match demand_with(&derived).and_then(|d| compile(d, limits).ok()) {
                        Some(c) => {
                            demand_forced = true;
                            c
                        }
                        // Neither form loads: the bottom-up error, without the budget, says why.
                        None => compile(prog, limits)?,
                    },
                }
            }
            None => compile(prog, limits)?,
        };
        let Compiled {
            prog,
            plan: gplan,
            base,
            core_strata,
            goal_strata,
            inputs_derived,
        } = compiled;
        let mut initial = RuleState(vec![0; words].into_boxed_slice());
        for i in 0..base.rel(init).len() {
            let t = base.rel(init).row(i)[0];
            if let Some(&b) = prop_of.get(&t) {
                initial.set(b as usize);
            }
        }

        let role_names: Vec<String> = roles.iter().map(|t| base.terms.kif(*t)).collect();
        let dynamics = detect_dynamics(&props, &roles, &base);
        let zero_sum = roles.len() == 2
            && goal.is_some_and(|g| {
                let vals = |r: TermId| -> Vec<i64> {
                    match &static_goals {
                        Some(heads) => heads
                            .iter()
                            .filter(|(role, _)| role.is_none_or(|x| x == r))
                            .map(|(_, v)| *v)
                            .collect(),
                        None => (0..rdb.rel(g).len())
                            .map(|i| rdb.rel(g).row(i))
                            .filter(|row| row[0] == r)
                            .filter_map(|row| rdb.terms.as_int(row[1]))
                            .collect(),
                    }
                };
                let (a, b) = (vals(roles[0]), vals(roles[1]));
                !a.is_empty()
                    && a.iter().all(|v| b.contains(&(100 - v)))
                    && b.iter().all(|v| a.contains(&(100 - v)))
            });
        let noop = base
            .terms
            .symbols()
            .get("noop")
            .and_then(|s| base.terms.find_constant(s));
        let mut game = RuleGame {
            layout: crate::print::board::layout_of(p),
            info: GameInfo {
                name: name.to_string(),
                roles: role_names,
                dynamics,
                zero_sum,
            },
            prog,
            plan: gplan,
            base,
            pool: Mutex::new(Vec::new()),
            true_,
            flat,
            does,
            next,
            legal,
            goal,
            terminal,
            roles,
            props,
            prop_of,
            moves,
            move_of,
            move_kif,
            move_text,
            initial,
            noop,
            core_strata,
            goal_strata,
            frame_mask,
            inputs_derived,
            demand: demand_forced,
            open: None,
        };
        if let (Evaluation::Auto, Some(d), false) = (evaluation, demanded, demand_forced) {
            game.choose_evaluation(d, limits, compile)?;
        }
        Ok(game)
    }

    /// The open mode (see [`super::open`]): the rules compiled bottom-up without the relaxed analysis's
    /// propositions (so nothing is split by function symbol and no frame rule becomes a mask), the
    /// propositions and moves numbered as evaluations find them.
    fn build_open(
        p: &ast::Program,
        name: &str,
        mut prog: Program,
        limits: Limits,
        kw: Keywords,
    ) -> Result<RuleGame, EngineError> {
        let Keywords {
            role,
            true_,
            does,
            next,
            legal,
            init,
        } = kw;
        let (goal, terminal) = (prog.keywords.goal, prog.keywords.terminal);
        let static_goals = goal.and_then(|g| head_goal_values(&prog, g));
        let flat = Flat {
            prop_rel: Vec::new(),
            prop_args: Vec::new(),
            next_rels: Vec::new(),
            generic_true: true,
        };
        let keep = {
            let k = prog.keywords;
            let mut keep = vec![true_, does, next, legal, init];
            keep.extend(
                [k.role, k.goal, k.terminal, k.base, k.input, k.legal1]
                    .into_iter()
                    .flatten(),
            );
            keep
        };
        let dynamic = dynamic_relations(&prog, &keep[..2], &[]);
        super::rewrite::unfold_views(&mut prog, &keep, &dynamic);
        let inputs = [(true_, Phase::State), (does, Phase::Move)];
        let sizes = vec![None; prog.relations.len()];
        let terms = prog.terms.clone();
        let c = compile_program(prog, &inputs, &sizes, &terms, limits, goal, &[], true_)?;
        let roles: Vec<TermId> = (0..c.base.rel(role).len())
            .map(|i| c.base.rel(role).row(i)[0])
            .collect();
        if roles.is_empty() {
            return Err(EngineError::Invalid(format!("{NO_RULES} roles")));
        }
        let open = Discovered::new(c.base.terms.clone(), c.prog.syntax);
        let mut initial = Vec::new();
        for i in 0..c.base.rel(init).len() {
            let b = open.prop_from(&c.base.terms, c.base.rel(init).row(i)[0]);
            RuleState::set_growing(&mut initial, b as usize);
        }
        // Without the analysis no proposition is known to range over the roles, nor any goal value a
        // rule computes.
        let dynamics = if roles.len() == 1 {
            Dynamics::TurnTaking
        } else {
            Dynamics::Simultaneous
        };
        let zero_sum = roles.len() == 2
            && static_goals.is_some_and(|heads| {
                let vals = |r: TermId| -> Vec<i64> {
                    heads
                        .iter()
                        .filter(|(role, _)| role.is_none_or(|x| x == r))
                        .map(|(_, v)| *v)
                        .collect()
                };
                let (a, b) = (vals(roles[0]), vals(roles[1]));
                !a.is_empty()
                    && a.iter().all(|v| b.contains(&(100 - v)))
                    && b.iter().all(|v| a.contains(&(100 - v)))
            });
        let noop = c
            .base
            .terms
            .symbols()
            .get("noop")
            .and_then(|s| c.base.terms.find_constant(s));
        Ok(RuleGame {
            layout: crate::print::board::layout_of(p),
            info: GameInfo {
                name: name.to_string(),
                roles: roles.iter().map(|t| c.base.terms.kif(*t)).collect(),
                dynamics,
                zero_sum,
            },
            prog: c.prog,
            plan: c.plan,
            base: c.base,
            pool: Mutex::new(Vec::new()),
            true_,
            flat,
            does,
            next,
            legal,
            goal,
            terminal,
            roles,
            props: Vec::new(),
            prop_of: HashMap::new(),
            moves: Vec::new(),
            move_of: HashMap::new(),
            move_kif: Vec::new(),
            move_text: Vec::new(),
            initial: RuleState::trimmed(initial),
            noop,
            core_strata: c.core_strata,
            goal_strata: c.goal_strata,
            frame_mask: RuleState(Box::new([])),
            inputs_derived: c.inputs_derived,
            demand: false,
            open: Some(open),
        })
    }

    /// Whether the propositions and moves are found in play (the open mode, see [`super::open`])
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
        compile: impl Fn(Program, Limits) -> Result<Compiled, EngineError>,
    ) -> Result<(), EngineError> {
        let trial = || Limits {
            deadline: Some(std::time::Instant::now() + DEMAND_TRIAL_TIME),
            ..limits
        };
        self.base.set_limits(trial());
        let plain_cost = self.trial_cost();
        self.base.set_limits(limits);
        let Ok(mut compiled) = compile(demanded, trial()) else {
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

    /// The number of base propositions (bits of a state).
    pub fn num_propositions(&self) -> usize {
        match &self.open {
            None => self.props.len(),
            Some(o) => o.counts().0,
        }
    }

    /// The number of distinct moves.
    pub fn num_moves(&self) -> usize {
        match &self.open {
            None => self.moves.len(),
            Some(o) => o.counts().1,
        }
    }

    /// Runs `f` on a scratch database holding the evaluation of `state`.
    fn with_state<R>(
        &self,
        state: &RuleState,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_state_goals(state, false, f)
    }

    /// [`RuleGame::with_state`], with the strata only goals read evaluated too when `goals`.
    fn with_state_goals<R>(
        &self,
        state: &RuleState,
        goals: bool,
        f: impl FnOnce(&mut Db) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.with_scratch(state, goals, |db, _| f(db))
    }

    /// [`RuleGame::with_state_goals`], with the scratch database's open-mode [`Local`] lent too.
    fn with_scratch<R>(
        &self,
        state: &RuleState,
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
                s.state.0.clone_from(&state.0);
                s.valid = true;
            }
            if goals && !s.goals_done {
                s.db.run_only(&self.plan, Phase::State, &self.goal_strata)?;
                s.goals_done = true;
            }
            f(&mut s.db, &mut s.local)
        })();
        if r.is_err() {
            s.valid = false;
            // The term that broke the depth limit stays in the store, where the next evaluation
            // would find it instead of making (and checking) it: in open mode, where such terms
            // would then become propositions, a fresh copy of `base` takes this one's place.
            if self.open.is_some() {
                return r;
            }
        }
        if let Ok(mut p) = self.pool.lock() {
            p.push(s);
        }
        r
    }

    /// Fills the state relations of `db` with `state`'s propositions (closed mode).
    #[inline]
    fn fill(&self, db: &mut Db, state: &RuleState) {
        for b in state.ones() {
            if self.inputs_derived {
                db.insert(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert(self.true_, &[self.props[b]]);
                }
            } else {
                // Each proposition is one fact of one relation, and nothing else adds to them.
                db.insert_new(self.flat.prop_rel[b], &self.flat.prop_args[b]);
                if self.flat.generic_true {
                    db.insert_new(self.true_, &[self.props[b]]);
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
        let rel = db.rel(legal);
        for i in 0..rel.len() {
            let row = rel.row(i);
            if row[0] == role {
                if let Some(&m) = map.get(&row[1]) {
                    out.push(RuleMove(m));
                }
            }
        }
        out.sort_unstable();
    }

    /// The legal moves of `role`, sorted.
    pub fn try_legal(
        &self,
        state: &RuleState,
        role: RoleIndex,
        out: &mut Vec<RuleMove>,
    ) -> Result<(), EngineError> {
        let r = *self
            .roles
            .get(role)
            .ok_or_else(|| EngineError::Rules(format!("no role {role}")))?;
        self.with_scratch(state, false, |db, local| {
            match &self.open {
                None => Self::legal_ids(db, self.legal, r, &self.move_of, out),
                Some(open) => open.legal_ids(local, db, self.legal, r, out),
            }
            Ok(())
        })
    }

    /// Whether the state is terminal.
    pub fn try_terminal(&self, state: &RuleState) -> Result<bool, EngineError> {
        match self.terminal {
            None => Ok(false),
            Some(t) => self.with_state(state, |db| Ok(!db.rel(t).is_empty())),
        }
    }

    /// Every goal value the rules give `role` in `state`, sorted (normally exactly one).
    pub fn goal_values(
        &self,
        state: &RuleState,
        role: RoleIndex,
    ) -> Result<Vec<Goal>, EngineError> {
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
    pub fn try_next(
        &self,
        state: &RuleState,
        joint: &[RuleMove],
    ) -> Result<RuleState, EngineError> {
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
                    .moves
                    .get(m.0 as usize)
                    .ok_or_else(|| EngineError::Rules(format!("unknown move id {}", m.0)))?;
                db.insert(self.does, &[self.roles[r], mv]);
            }
            db.run(&self.plan, Phase::Move)?;
            let mut s = RuleState(
                state
                    .0
                    .iter()
                    .zip(self.frame_mask.0.iter())
                    .map(|(a, m)| a & m)
                    .collect(),
            );
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
                        .and_then(|t| self.prop_of.get(&t))
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
    ) -> Result<RuleState, EngineError> {
        db.clear_from(&self.plan, Phase::Move);
        for (r, m) in joint.iter().enumerate() {
            let mv = open
                .local_move(local, &mut db.terms, *m)
                .ok_or_else(|| EngineError::Rules(format!("unknown move id {}", m.0)))?;
            db.insert(self.does, &[self.roles[r], mv]);
        }
        db.run(&self.plan, Phase::Move)?;
        let mut words = Vec::new();
        let rel = db.rel(self.next);
        for i in 0..rel.len() {
            let b = open.prop_index(local, &db.terms, rel.row(i)[0]);
            RuleState::set_growing(&mut words, b as usize);
        }
        Ok(RuleState::trimmed(words))
    }

    /// Runs `f` on the store of the propositions' terms and the propositions, by index.
    fn with_props<R>(&self, f: impl FnOnce(&TermStore, &[TermId]) -> R) -> R {
        match &self.open {
            None => f(&self.base.terms, &self.props),
            Some(open) => open.with_props(f),
        }
    }

    /// The state's facts (the arguments of `true`) as KIF, sorted by bytes.
    pub fn state_facts(&self, state: &RuleState) -> Vec<String> {
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
            None => self.move_kif.get(m.0 as usize).map(|s| s.as_str()),
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
        self.move_kif
            .binary_search_by(|k| k.as_str().cmp(text))
            .ok()
            .map(|i| RuleMove(i as u32))
    }

    fn is_noop(&self, m: RuleMove) -> bool {
        let Some(noop) = self.noop else { return false };
        match &self.open {
            None => self.moves.get(m.0 as usize) == Some(&noop),
            Some(open) => open.move_is(m, noop),
        }
    }

    /// Whether the proposition with this KIF text is true in `state`.
    pub fn holds(&self, state: &RuleState, kif: &str) -> bool {
        self.with_props(|terms, props| {
            props
                .iter()
                .position(|t| terms.kif(*t) == kif)
                .is_some_and(|b| state.get(b))
        })
    }
}

/// The smallest and the largest integer the program mentions, widened to hold 0: the range a relaxed
/// fixpoint keeps arithmetic results in (see [`clamp_arithmetic`]).
pub(crate) fn integer_range(q: &mut Program) -> (TermId, TermId) {
    let ints: Vec<i64> = (0..q.terms.len() as u32)
        .filter_map(|i| q.terms.as_int(TermId(i)))
        .collect();
    let lo = q.terms.int(ints.iter().copied().min().unwrap_or(0).min(0));
    let hi = q.terms.int(ints.iter().copied().max().unwrap_or(0).max(0));
    (lo, hi)
}

/// Keeps every arithmetic result of `r` between `lo` and `hi`: without negation, arithmetic can count
/// forever (a counter no longer stops at a terminal state, a pile goes below zero), so a relaxed
/// fixpoint keeps the finite tables a classic translation of the game would list.
pub(crate) fn clamp_arithmetic(r: &mut Rule, lo: TermId, hi: TermId) {
    let results: Vec<Pat> = r
        .body
        .iter()
        .filter_map(|l| match l {
            Lit::Arith(_, _, _, z) => Some(z.clone()),
            _ => None,
        })
        .collect();
    for z in results {
        r.body.push(Lit::Cmp(Cmp::Leq, Pat::Term(lo), z.clone()));
        r.body.push(Lit::Cmp(Cmp::Leq, z, Pat::Term(hi)));
    }
}

/// Adds `true :- init`, `true :- next`, `does :- legal` and drops negations: the relaxed program.
fn relax(
    p: &Program,
    init: RelId,
    true_: RelId,
    next: RelId,
    legal: RelId,
    does: RelId,
    with_goal: Option<RelId>,
) -> Program {
    let mut q = p.clone();
    // Relations that read the state or the moves, directly or not; negation of any other relation is
    // exact (it is computed before anything dynamic) and stays, which keeps the over-approximation tight.
    let n = q.relations.len();
    let mut dynamic = vec![false; n];
    dynamic[true_.0 as usize] = true;
    dynamic[does.0 as usize] = true;
    loop {
        let mut changed = false;
        for r in &q.rules {
            let h = r.head.rel.0 as usize;
            if dynamic[h] {
                continue;
            }
            let reads = r.body.iter().any(|l| match l {
                Lit::Pos(a) | Lit::Neg(a) => dynamic[a.rel.0 as usize],
                _ => false,
            });
            if reads {
                dynamic[h] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Without negation, arithmetic can count forever (a counter `count(N) & plus(N,1,M)` no longer
    // stops at a terminal state), so the relaxation keeps only results between the smallest and the
    // largest integer the program mentions (and 0), the finite tables a classic translation would list.
    // A game that leaves that range in play gets an error from `try_next`, not a wrong state.
    let (lo, hi) = integer_range(&mut q);
    for r in &mut q.rules {
        r.body
            .retain(|l| !matches!(l, Lit::Neg(a) if dynamic[a.rel.0 as usize]));
        // A dynamic condition whose variables are each bound by another positive condition or used
        // nowhere else only filters; dropping it keeps the result an over-approximation, and spares
        // the analysis relations (counts, paths) whose relaxed extension is huge and joins with every
        // move (the frame rule `next(cell(X,Y,P)) :- does(R, move(..)) & true(cell(X,Y,P)) & ..`).
        let mut i = r.body.len();
        while i > 0 {
            i -= 1;
            let Lit::Pos(a) = &r.body[i] else { continue };
            if !dynamic[a.rel.0 as usize] {
                continue;
            }
            // Filters (negations, `distinct`, `less`, `leq`) over a variable only this literal binds
            // go with it: dropping conditions keeps an over-approximation as long as the rule stays
            // safe (the frame rule of chess reads `~is_castle_move(?piece, ..)` of the move's piece).
            let mut covered = true;
            let mut with: Vec<usize> = Vec::new();
            for x in &a.args {
                x.each_var(&mut |v| {
                    let (mut in_pos, mut in_head, mut binds) = (false, false, false);
                    let mut filters = Vec::new();
                    for (j, l) in r.body.iter().enumerate().filter(|(j, _)| *j != i) {
                        l.each_var(&mut |w| {
                            if w == v {
                                match l {
                                    Lit::Pos(_) => in_pos = true,
                                    Lit::Neg(_)
                                    | Lit::Cmp(Cmp::Distinct | Cmp::Less | Cmp::Leq, ..) => {
                                        filters.push(j)
                                    }
                                    Lit::Cmp(Cmp::Same, ..) | Lit::Arith(..) => binds = true,
                                }
                            }
                        });
                    }
                    r.head
                        .args
                        .iter()
                        .for_each(|y| y.each_var(&mut |w| in_head |= w == v));
                    if in_pos {
                        return;
                    }
                    if in_head || binds {
                        covered = false;
                    } else {
                        with.extend(filters);
                    }
                });
            }
            if covered {
                with.push(i);
                with.sort_unstable();
                with.dedup();
                for &j in with.iter().rev() {
                    r.body.remove(j);
                }
                i = i.min(r.body.len());
            }
        }
        clamp_arithmetic(r, lo, hi);
    }
    let x = q.terms.intern_sym("X");
    let y = q.terms.intern_sym("Y");
    let copy = |head: RelId, body: RelId, n: usize| Rule {
        head: super::ir::IrAtom {
            rel: head,
            args: (0..n as u32).map(Pat::Var).collect(),
        },
        body: vec![Lit::Pos(super::ir::IrAtom {
            rel: body,
            args: (0..n as u32).map(Pat::Var).collect(),
        })],
        var_names: vec![x, y][..n].to_vec(),
    };
    q.rules.push(copy(true_, init, 1));
    q.rules.push(copy(true_, next, 1));
    q.rules.push(copy(does, legal, 2));
    // Only what the propositions and moves need: goals and terminal conditions of the union of all
    // states can be far larger than anything a real state derives.
    let mut roots = vec![true_, does];
    roots.extend(q.keywords.role);
    roots.extend(q.keywords.base);
    roots.extend(with_goal);
    super::rewrite::prune_to(&mut q, &roots);
    q
}

/// Splits the state strata of `plan` into those evaluated in every state and those only `goal` reads
/// (directly or not), evaluated when a goal is asked: a playout asks for goals once, at its end.
fn split_goal_strata(p: &Program, plan: &Plan, goal: Option<RelId>) -> (Vec<bool>, Vec<bool>) {
    let n = p.relations.len();
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
    for r in &p.rules {
        for l in &r.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                reads[r.head.rel.0 as usize].push(a.rel.0 as usize);
            }
        }
    }
    let mut core = vec![false; n];
    let mut work: Vec<usize> = (0..n).filter(|&r| Some(RelId(r as u32)) != goal).collect();
    // Everything but `goal` is a root: what any of them reads is core.
    while let Some(r) = work.pop() {
        if std::mem::replace(&mut core[r], true) {
            continue;
        }
        work.extend(reads[r].iter().copied().filter(|&b| !core[b]));
    }
    let core_strata: Vec<bool> = plan
        .strata
        .iter()
        .map(|s| s.rels.iter().any(|r| core[r.0 as usize]))
        .collect();
    let goal_strata = core_strata.iter().map(|c| !c).collect();
    (core_strata, goal_strata)
}

/// Removes the frame rules (a `next` fact copied from the same `true` fact, with only comparisons of
/// its variables as further conditions, into a `next` relation no rule reads) and returns the mask of
/// the propositions they carry over (see [`RuleGame`]'s `frame_mask`).
fn take_frame_rules(
    prog: &mut Program,
    flat: &Flat,
    props: &[TermId],
    terms: &TermStore,
    true_: RelId,
    next: RelId,
    words: usize,
) -> RuleState {
    let mut mask = RuleState(vec![0; words].into_boxed_slice());
    let read: Vec<RelId> = prog
        .rules
        .iter()
        .flat_map(|r| r.body.iter())
        .filter_map(|l| match l {
            Lit::Pos(a) | Lit::Neg(a) => Some(a.rel),
            _ => None,
        })
        .collect();
    let mut rules = std::mem::take(&mut prog.rules);
    rules.retain(|r| {
        let h = r.head.rel;
        let is_next = h == next || flat.next_rels.iter().any(|(x, _)| *x == h);
        if !is_next || read.contains(&h) {
            return true;
        }
        let Some((Lit::Pos(a), filters)) = r.body.split_first() else {
            return true;
        };
        // The copied relation: `true` for `next`, `true$f` for `next$f`.
        let same_fact = if h == next {
            a.rel == true_
        } else {
            flat.next_rels
                .iter()
                .find(|(x, _)| *x == h)
                .is_some_and(|(_, f)| {
                    let mut found = false;
                    for (b, rel) in flat.prop_rel.iter().enumerate() {
                        if *rel == a.rel {
                            found = terms.sym(props[b]) == *f;
                            break;
                        }
                    }
                    found
                })
        };
        let simple = |x: &Pat| matches!(x, Pat::Var(_) | Pat::Term(_));
        let filters_ok = filters.iter().all(|l| match l {
            Lit::Cmp(_, x, y) => simple(x) && simple(y),
            _ => false,
        });
        if !same_fact || a.args != r.head.args || !filters_ok || !a.args.iter().all(simple) {
            return true;
        }
        for (b, prop) in props.iter().enumerate() {
            let args: &[TermId] = if h == next {
                if flat.prop_rel[b] != true_ && !flat.generic_true {
                    continue;
                }
                std::slice::from_ref(prop)
            } else if flat.prop_rel[b] == a.rel {
                &flat.prop_args[b]
            } else {
                continue;
            };
            let mut binds: Vec<Option<TermId>> = vec![None; r.var_names.len()];
            let mut ok = args.len() == a.args.len();
            for (x, &t) in a.args.iter().zip(args) {
                ok &= match x {
                    Pat::Var(v) => *binds[*v as usize].get_or_insert(t) == t,
                    Pat::Term(c) => *c == t,
                    Pat::Func(..) => false,
                };
            }
            let val = |x: &Pat| match x {
                Pat::Var(v) => binds[*v as usize],
                Pat::Term(t) => Some(*t),
                Pat::Func(..) => None,
            };
            ok = ok
                && filters.iter().all(|l| {
                    let Lit::Cmp(c, x, y) = l else { return false };
                    let (Some(x), Some(y)) = (val(x), val(y)) else {
                        return false;
                    };
                    match c {
                        Cmp::Distinct => x != y,
                        Cmp::Same => x == y,
                        Cmp::Less | Cmp::Leq => match (terms.as_int(x), terms.as_int(y)) {
                            (Some(x), Some(y)) => {
                                if *c == Cmp::Less {
                                    x < y
                                } else {
                                    x <= y
                                }
                            }
                            _ => false,
                        },
                    }
                });
            if ok {
                mask.set(b);
            }
        }
        false
    });
    prog.rules = rules;
    mask
}

/// Which relations depend, directly or not, on the state or the moves: `inputs` and `props`.
pub(crate) fn dynamic_relations(p: &Program, inputs: &[RelId], props: &[RelId]) -> Vec<bool> {
    let mut dynamic = vec![false; p.relations.len()];
    for r in inputs.iter().chain(props) {
        dynamic[r.0 as usize] = true;
    }
    loop {
        let mut changed = false;
        for r in &p.rules {
            let h = r.head.rel.0 as usize;
            if !dynamic[h]
                && r.body.iter().any(|l| match l {
                    Lit::Pos(a) | Lit::Neg(a) => dynamic[a.rel.0 as usize],
                    _ => false,
                })
            {
                dynamic[h] = true;
                changed = true;
            }
        }
        if !changed {
            return dynamic;
        }
    }
}

/// The goal values each rule gives, read from the rule heads: `(role or every role, value)`, or `None`
/// when some head computes its role or value (then the relaxed fixpoint derives them).
fn head_goal_values(p: &Program, goal: RelId) -> Option<Vec<(Option<TermId>, i64)>> {
    p.rules
        .iter()
        .filter(|r| r.head.rel == goal)
        .map(|r| {
            let role = match &r.head.args[0] {
                Pat::Var(_) => None,
                Pat::Term(t) => Some(*t),
                Pat::Func(..) => return None,
            };
            match &r.head.args[1] {
                Pat::Term(t) => p.terms.as_int(*t).map(|v| (role, v)),
                _ => None,
            }
        })
        .collect()
}

fn detect_dynamics(props: &[TermId], roles: &[TermId], db: &Db) -> Dynamics {
    let mut by_sym: HashMap<ast::Sym, Vec<TermId>> = HashMap::new();
    for &t in props {
        let args = db.terms.args(t);
        if args.len() == 1 {
            by_sym.entry(db.terms.sym(t)).or_default().push(args[0]);
        }
    }
    let turn = roles.len() > 1
        && by_sym.values().any(|vals| {
            vals.iter().all(|v| roles.contains(v)) && roles.iter().all(|r| vals.contains(r))
        });
    if turn || roles.len() == 1 {
        Dynamics::TurnTaking
    } else {
        Dynamics::Simultaneous
    }
}

impl Game for RuleGame {
    type State = RuleState;
    type Move = RuleMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> RuleState {
        self.initial.clone()
    }

    fn is_terminal(&self, state: &RuleState) -> bool {
        self.try_terminal(state).unwrap_or(true)
    }

    fn state_key(&self, state: &RuleState) -> u64 {
        crate::game::bitset_key(&state.0)
    }

    fn legal_moves(&self, state: &RuleState, role: RoleIndex, out: &mut Vec<RuleMove>) {
        if self.try_legal(state, role, out).is_err() {
            out.clear();
        }
    }

    fn next_state(&self, state: &RuleState, joint: &[RuleMove]) -> RuleState {
        self.try_next(state, joint)
            .unwrap_or_else(|_| state.clone())
    }

    fn goal(&self, state: &RuleState, role: RoleIndex) -> Goal {
        self.goal_values(state, role)
            .ok()
            .and_then(|v| v.last().copied())
            .unwrap_or(0)
    }

    fn mover(&self, state: &RuleState) -> Option<RoleIndex> {
        if self.is_terminal(state) {
            return None;
        }
        let mut buf = Vec::new();
        let mut many = Vec::new();
        let mut not_noop = Vec::new();
        for r in 0..self.roles.len() {
            self.legal_moves(state, r, &mut buf);
            if buf.len() > 1 {
                many.push(r);
            } else if buf.len() == 1 && !self.is_noop(buf[0]) {
                not_noop.push(r);
            }
        }
        match (many.len(), not_noop.len()) {
            (1, _) => Some(many[0]),
            (0, 1) => Some(not_noop[0]),
            _ => None,
        }
    }

    fn estimate(&self, state: &RuleState) -> Estimate {
        if self.info.num_roles() != 2 {
            return Estimate::Guess(0);
        }
        let (g0, g1) = (self.goal(state, 0), self.goal(state, 1));
        if self.is_terminal(state) {
            return Estimate::from_goals(g0, g1);
        }
        // Goal values of the current state (often partial credit) plus a small mobility term.
        let mut buf = Vec::new();
        self.legal_moves(state, 0, &mut buf);
        let m0 = buf.len() as i32;
        self.legal_moves(state, 1, &mut buf);
        let m1 = buf.len() as i32;
        Estimate::Guess((g0 - g1) * 10 + (m0 - m1))
    }

    fn show_move(&self, mv: &RuleMove) -> String {
        match &self.open {
            None => self.move_text.get(mv.0 as usize).map(|s| s.as_str()),
            Some(open) => open.move_text(*mv),
        }
        .map_or_else(|| format!("?{}", mv.0), str::to_string)
    }

    fn show_state(&self, state: &RuleState) -> String {
        self.with_props(|terms, props| {
            let facts: Vec<TermId> = state.ones().filter_map(|b| props.get(b).copied()).collect();
            crate::print::board::draw_state(terms, &facts, props, self.prog.syntax, self.layout)
        })
    }
}

/// `true` and `next` split by the function symbol of their argument (see [`flatten`]).
struct Flat {
    /// For each base proposition, the flattened `true` relation it goes into and its arguments.
    prop_rel: Vec<RelId>,
    prop_args: Vec<Box<[TermId]>>,
    /// The flattened `next` relations, with their function symbols.
    next_rels: Vec<(RelId, ast::Sym)>,
    /// Whether some rule still reads `true(X)` with a variable argument (then `true` is filled too).
    generic_true: bool,
}

/// Splits `true(f(a,b))` into a relation `true$f(a,b)` (and `next` likewise) so that joins look the
/// arguments up through ordinary column indexes instead of matching nested terms: a lookup of
/// `true(cell(X,Y,red))` with `X`, `Y` bound becomes one hash probe on three columns instead of building
/// the term, probing the term store and then the index. A literal with a variable argument keeps reading
/// the generic relation, which is then filled as well.
fn flatten(
    prog: &mut Program,
    props: &[TermId],
    terms: &TermStore,
    true_: RelId,
    next: RelId,
) -> Flat {
    let mut generic_true = false;
    let mut next_read = false;
    for r in &prog.rules {
        for l in &r.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                if a.rel == true_ && matches!(a.args[0], Pat::Var(_)) {
                    generic_true = true;
                }
                next_read |= a.rel == next;
            }
        }
        if r.head.rel == next && matches!(r.head.args[0], Pat::Var(_)) {
            next_read = true;
        }
    }
    let split = |prog: &mut Program, base: &str, t: &Pat| -> Option<(RelId, Vec<Pat>, ast::Sym)> {
        let (f, args) = match t {
            Pat::Var(_) => return None,
            Pat::Term(t) => (
                terms.sym(*t),
                terms.args(*t).iter().map(|a| Pat::Term(*a)).collect(),
            ),
            Pat::Func(f, args) => (*f, args.clone()),
        };
        let name = format!("{base}${}", terms.name(f));
        Some((
            prog.add_generated(Origin::StateSplit, &name, args.len()),
            args,
            f,
        ))
    };
    let mut next_rels = Vec::new();
    let mut rules = std::mem::take(&mut prog.rules);
    for r in &mut rules {
        for l in &mut r.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                if a.rel == true_ {
                    if let Some((rel, args, _)) = split(prog, "true", &a.args[0]) {
                        *a = super::ir::IrAtom { rel, args };
                    }
                }
            }
        }
        if r.head.rel == next && !next_read {
            if let Some((rel, args, f)) = split(prog, "next", &r.head.args[0]) {
                r.head = super::ir::IrAtom { rel, args };
                if !next_rels.contains(&(rel, f)) {
                    next_rels.push((rel, f));
                }
            }
        }
    }
    prog.rules = rules;
    let mut prop_rel = Vec::with_capacity(props.len());
    let mut prop_args = Vec::with_capacity(props.len());
    for &p in props {
        let (rel, _, _) =
            split(prog, "true", &Pat::Term(p)).unwrap_or((true_, Vec::new(), ast::Sym(0)));
        prop_rel.push(rel);
        prop_args.push(terms.args(p).to_vec().into_boxed_slice());
    }
    Flat {
        prop_rel,
        prop_args,
        next_rels,
        generic_true,
    }
}
