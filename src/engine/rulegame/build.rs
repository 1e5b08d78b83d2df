//! Building a [`RuleGame`]: the rules lowered, analysed, shaped over the propositions found and
//! compiled in the form that runs best (bottom-up or demand-driven), or numbered as play finds them when
//! the analysis cannot bound them.

use super::*;
use crate::engine::demand::{derived_relations, static_trial};

/// How long each side of the load-time comparison of the two evaluations may run.
const DEMAND_TRIAL_TIME: std::time::Duration = std::time::Duration::from_secs(1);

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
            if crate::engine::demand::is_demand_relation(&prog, RelId(i as u32)) {
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
        let mut prog = crate::engine::rewrite::prepared(p)?;
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
            dynamics: crate::engine::facade::dynamics_of(
                &base.terms,
                &found.numbered.props,
                &found.roles,
            ),
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
        crate::engine::rewrite::unfold_views(prog, &keep, &dynamic);
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
            frame_mask: BitState::from_words(&mask),
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
        let derived = derived_relations(&prog);
        let demand_with = |eligible: &[bool]| {
            let mut d = prog.clone();
            let lean = &crate::engine::demand::Lean::Full;
            (crate::engine::demand::demand(&mut d, keep, eligible, &per_move, lean) > 0)
                .then_some(d)
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
        match compiler.compile(prog.clone(), static_trial(limits)) {
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
        crate::engine::rewrite::unfold_views(&mut prog, &keep, &dynamic);
        let c = Compiler::open(&prog, kw).compile(prog, limits)?;
        let role = c.base.rel(kw.role);
        let roles: Vec<TermId> = (0..role.len()).map(|i| role.row(i)[0]).collect();
        if roles.is_empty() {
            return Err(EngineError::Invalid(crate::datalog::Invalid::NoRoles));
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
            frame_mask: BitState::from_words(&[]),
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
        let noop = crate::engine::facade::noop(terms);
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
}
