//! The rewrite and the load-time analysis: which program is grounded, and which of its facts can hold.
//!
//! Two stages, each one call: [`rewrite`] makes the program to ground (a [`Prepared`]), [`analyse`]
//! evaluates what bounds its instances (an [`Analysis`]).
//!
//! [`rewrite`] lowers the game and makes its operation rules classic, exactly as the Datalog engine
//! reads them, with the same rewrites (`engine::rewrite::prepare`), so that **both engines accept the
//! same games**. For [`Strategy::Decomposed`] it then projects the variables only some conditions of a
//! rule share into relations of their own (`engine::decompose`) and restricts every state-dependent
//! relation to the instances its readers can ask for (the magic-sets rewrite of `engine::demand`,
//! reading only what binds the asked arguments). Its program is what
//! [`grounded_program`](super::grounded_program) prints.
//!
//! [`analyse`] runs the *relaxation* (the engine's one `relax`, in its `EveryRelation` mode: every
//! negation of a state-dependent relation dropped) to its fixpoint on the engine's evaluator: **every fact true in a reachable state is a row of
//! the relaxed fixpoint**, so grounding never needs an atom outside it, and atoms are named by their row. The relations that
//! depend on neither `true` nor `does` are evaluated exactly, once: they are constants. Two economies
//! shape the fixpoint:
//! - the state-dependent relations that neither the inputs nor a load-time or demand relation depend
//!   on are left out ([`late_relations`]): grounding their rules in dependency order finds their facts
//!   by the one join that grounds them instead of twice;
//! - a late relation whose every rule reads its own demand with the head's arguments has exactly the
//!   demand's rows ([`demand_shaped`]): its store is a copy of the demand's, **same row numbers**.
//!
//! Both stages share the grounding [`Budget`](super::budget::Budget) through the evaluator's limits: a
//! fixpoint that runs away means there is no network to build.

use hashbrown::HashMap;
use rayon::prelude::*;

use super::budget::{analysis_over_budget, NetworkError};
use super::net::Strategy;
use super::unfold::unfold_tables;
use crate::datalog::eval::Db;
use crate::datalog::ir::{dynamic_relations, Lit, Origin, Program, RelId};
use crate::datalog::plan::{fact_table_sizes, plan, plan_sized, plan_tie_broken, Phase, Plan};
use crate::datalog::terms::TermId;
use crate::engine::analysis::{relax, Keywords, Numbered, Relaxation};
use crate::engine::demand::{demand, derived_relations, is_demand_relation, static_trial, Lean};
use crate::engine::{EngineError, Limits};
use crate::network::ground::decompose::{
    eliminate_variables, eliminate_variables_as, is_domain_relation, merge_alternatives,
    merge_twins,
};
use crate::syntax::ast;

/// The relations the grounder reads by their role in the game: the engine's [`Keywords`], `goal` and
/// `terminal` made when no rule mentions them (the network has an output for each either way).
#[derive(Clone, Copy, Debug)]
pub(super) struct GameRelations {
    pub(super) role: RelId,
    pub(super) true_: RelId,
    pub(super) does: RelId,
    pub(super) next: RelId,
    pub(super) legal: RelId,
    pub(super) init: RelId,
    pub(super) goal: RelId,
    pub(super) terminal: RelId,
}

impl GameRelations {
    /// The game relations of `prog`, made when no rule mentions them; an error when there is no
    /// `role`.
    fn add(prog: &mut Program) -> Result<GameRelations, EngineError> {
        let Keywords {
            role,
            true_,
            does,
            next,
            legal,
            init,
            ..
        } = Keywords::add(prog)?;
        Ok(GameRelations {
            role,
            true_,
            does,
            next,
            legal,
            init,
            goal: prog.add_relation("goal", 2),
            terminal: prog.add_relation("terminal", 0),
        })
    }
}

/// The program to ground, rewritten for a strategy (the result of [`rewrite`]).
pub(super) struct Prepared {
    /// The rewritten classic program.
    pub(super) prog: Program,
    pub(super) rels: GameRelations,
}

/// What the load-time analysis knows of a [`Prepared`] program (the result of [`analyse`]).
pub(super) struct Analysis {
    pub(super) prog: Program,
    pub(super) rels: GameRelations,
    /// The relaxed fixpoint (late relations empty until grounding completes them); its term store
    /// is the one term store from here on.
    pub(super) relaxed: Db,
    /// The exact facts of the relations that depend on neither `true` nor `does`.
    pub(super) exact: Db,
    /// Per relation, whether it depends on the state (a demand relation does not: it is read from the
    /// relaxed fixpoint as a constant filter).
    pub(super) dynamic: Vec<bool>,
    /// Per relation, whether the relaxed fixpoint left it out (see [`late_relations`]).
    pub(super) late: Vec<bool>,
    /// Per relation, whether it is a demand relation of the rewrite.
    pub(super) demand: Vec<bool>,
    /// Per relation, whether it is read only for its values (see [`is_domain_relation`]).
    pub(super) domain: Vec<bool>,
    /// Per relation, the demand relation whose rows it copies (see [`demand_shaped`]).
    pub(super) copy_of: Vec<Option<RelId>>,
    /// Per relation, another restricted copy of the same relation with the same rows, whose atoms
    /// stand for its own (see [`equal_copies`]): its rules are not grounded.
    pub(super) same_as: Vec<Option<RelId>>,
    /// Per load-time relation of one column, its facts as a bitset by term number.
    pub(super) unary: Vec<Option<Vec<u64>>>,
    /// The roles, in order.
    pub(super) roles: Vec<TermId>,
    /// The base propositions that can hold and the moves that can be legal, numbered as the Datalog
    /// evaluator numbers its own.
    pub(super) numbered: Numbered,
    /// The rows of `legal` in the relaxed fixpoint.
    pub(super) legal_rows: Vec<Vec<TermId>>,
    /// The propositions true initially.
    pub(super) initial: Vec<u32>,
}

/// The program that `strategy` grounds: `p` lowered, made classic and prepared as for the Datalog
/// engine, then decomposed and demand-driven for [`Strategy::Decomposed`].
pub(super) fn rewrite(
    p: &ast::Program,
    strategy: Strategy,
    limits: Limits,
) -> Result<Prepared, NetworkError> {
    // The Datalog evaluator's own start (operation rules made classic, the same rewrites) and
    // keywords, so that both engines accept the same games.
    let mut prog = crate::engine::rewrite::prepared(p)?;
    let rels = GameRelations::add(&mut prog)?;
    if strategy == Strategy::Decomposed {
        decompose_and_demand(&mut prog, rels, limits)?;
    }
    Ok(Prepared { prog, rels })
}

/// [`Strategy::Decomposed`]'s rewrites of `prog`: tables unfolded, alternatives merged, variables
/// projected, every state-dependent relation restricted to what its readers ask, and the projections
/// that demand leaves possible made.
fn decompose_and_demand(
    prog: &mut Program,
    rels: GameRelations,
    limits: Limits,
) -> Result<(), NetworkError> {
    let GameRelations {
        role,
        true_,
        does,
        next,
        legal,
        init,
        goal,
        terminal,
    } = rels;
    let dynamic = dynamic_relations(prog, &[true_, does], &[]);
    let fixed: Vec<bool> = dynamic.iter().map(|d| !d).collect();
    unfold_tables(prog, &dynamic, &fixed);
    // Rules alike but for one condition (an `or`) become one first, so that what they share is
    // projected, asked about and grounded once.
    merge_alternatives(prog, &dynamic);
    let dynamic = dynamic_relations(prog, &[true_, does], &[]);
    eliminate_variables(prog, &dynamic);
    let mut roots = vec![true_, does, next, legal, init, goal, terminal, role];
    let k = prog.keywords;
    roots.extend([k.base, k.input].into_iter().flatten());
    let dynamic = dynamic_relations(prog, &[true_, does], &[]);
    let per_move = vec![false; prog.relations.len()];
    // The tables' sizes guide which literals bind what is asked. They are found with the listed
    // tables' sizes guiding the joins: ordered by the rules' text alone, the recursion of
    // gt_two_thirds_4p's `absDiff` looked up to 400 `lt` facts for each new row before the one
    // `succ` fact that pins them, and took 1.8 s instead of 0.1 s.
    let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
    let splan = plan_sized(
        prog,
        &[(true_, Phase::State), (does, Phase::Move)],
        &fact_table_sizes(prog),
    )?;
    // The load-time relations in full, within a trial budget: when they run away, the readings of
    // the derived ones are restricted by demand too (mummy maze's `direction-from` of every four
    // numbers its `succ` names, of which the rules ask about the board's), as the Datalog engine
    // does.
    let trial = static_trial(limits);
    let mut sdb = Db::new(&splan, &arities, prog.terms.clone(), trial);
    let (eligible, sizes) = match sdb.run(&splan, Phase::Static) {
        Ok(()) => {
            let sizes = (0..prog.relations.len())
                .map(|r| {
                    (splan.phases[r] == Phase::Static)
                        .then(|| sdb.rel(RelId(r as u32)).len() as f64)
                })
                .collect();
            (dynamic, sizes)
        }
        // Were the restricted form no smaller, the analysis says so with the whole budget.
        Err(EngineError::Runaway(_)) => {
            let derived = derived_relations(prog);
            let eligible = dynamic
                .iter()
                .zip(&derived)
                .map(|(&d, &r)| d || r)
                .collect();
            (eligible, fact_table_sizes(prog))
        }
        Err(e) => return Err(analysis_over_budget(e, &sdb, prog, &trial)),
    };
    demand(prog, &roots, &eligible, &per_move, &Lean::Binding(sizes));
    // The demand rules read the conditions before the asked relation, with variables the demand
    // does not keep: project those away too (they only make the relaxed fixpoint slower).
    let asking = flags(prog, is_demand_relation);
    eliminate_variables_as(prog, &asking, "demand#proj#", Origin::Demand, false);
    // With the demands made, the rules no demand restricts get one more: variables a negation reads
    // along with the rule's own (chess's `legal` and the king's square) are projected too, the
    // projection reading a copy of what binds the rest (a projection out of a restricted rule
    // would leave its demand behind).
    let guarded = unrestricted(prog, dynamic_relations(prog, &[true_, does], &[]));
    eliminate_variables_as(prog, &guarded, "guard#", Origin::Eliminated, true);
    let asking = flags(prog, is_demand_relation);
    merge_twins(prog, &asking);
    Ok(())
}

/// Per relation of `p`, whether `is` says so of it.
fn flags(p: &Program, is: fn(&Program, RelId) -> bool) -> Vec<bool> {
    (0..p.relations.len())
        .map(|r| is(p, RelId(r as u32)))
        .collect()
}

/// The rows of relation `r` of `db`.
pub(super) fn rows(db: &Db, r: RelId) -> Vec<Vec<TermId>> {
    (0..db.rel(r).len())
        .map(|i| db.rel(r).row(i).to_vec())
        .collect()
}

/// The load-time analysis of `prepared`: the relaxed fixpoint, the exact static facts, and the
/// roles, propositions and moves they name.
pub(super) fn analyse(
    Prepared { prog, rels }: Prepared,
    limits: Limits,
) -> Result<Analysis, NetworkError> {
    let demand_rel = flags(&prog, is_demand_relation);
    let domain_rel = flags(&prog, is_domain_relation);
    let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
    let relaxed = relaxation(&prog, &rels);
    let gplan = plan(
        &prog,
        &[(rels.true_, Phase::State), (rels.does, Phase::Move)],
    )?;
    let dynamic: Vec<bool> = gplan
        .phases
        .iter()
        .zip(&demand_rel)
        .map(|(p, &d)| *p != Phase::Static && !d)
        .collect();
    let tables: Vec<bool> = gplan.phases.iter().map(|p| *p == Phase::Static).collect();
    let (mut rdb, mut late) = relaxed_fixpoint(relaxed, (&dynamic, &tables), rels, limits)?;
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
    let same_as = equal_copies(&prog, &rdb, |r| {
        dynamic[r] && !late[r] && copy_of[r].is_none()
    });
    let mut sdb = Db::new(&gplan, &arities, rdb.terms.clone(), limits);
    if let Err(e) = sdb.run(&gplan, Phase::Static) {
        return Err(analysis_over_budget(e, &sdb, &prog, &limits));
    }
    let unary = unary_bitsets(&sdb, &dynamic, &demand_rel, &arities);
    // One term store from here on: the exact evaluation's extends the relaxed one's.
    rdb.terms = sdb.terms.clone();
    // Goal values are integers from 0 to 100, and `goal` is grounded late, from its instances: made
    // here, a value computed past the integers the rules name (`goal(r, G) :- ... times(N, 4, G)`),
    // which the relaxation's arithmetic clamp never made, is one the grounding can find.
    for v in 0..=100 {
        rdb.terms.int(v);
    }

    let roles: Vec<TermId> = rows(&sdb, rels.role).into_iter().map(|r| r[0]).collect();
    if roles.is_empty() {
        return Err(EngineError::Invalid(crate::datalog::Invalid::NoRoles).into());
    }
    let legal_rows = rows(&rdb, rels.legal);
    let numbered = Numbered::sorted(
        &rdb.terms,
        rows(&rdb, rels.true_).into_iter().map(|r| r[0]),
        legal_rows.iter().map(|r| r[1]),
    );
    let initial: Vec<u32> = rows(&sdb, rels.init)
        .iter()
        .filter_map(|r| numbered.prop_of.get(&r[0]).copied())
        .collect();
    Ok(Analysis {
        prog,
        rels,
        relaxed: rdb,
        exact: sdb,
        dynamic,
        late,
        demand: demand_rel,
        domain: domain_rel,
        copy_of,
        same_as,
        unary,
        roles,
        numbered,
        legal_rows,
        initial,
    })
}

/// The fixpoint of the `relaxed` program, the late relations left out (empty), and
/// which relations are late (by [`RelId`] index, over the relaxed program's relations).
fn relaxed_fixpoint(
    mut relaxed: Program,
    (dynamic, tables): (&[bool], &[bool]),
    rels: GameRelations,
    limits: Limits,
) -> Result<(Db, Vec<bool>), NetworkError> {
    let mut late = late_relations(
        &relaxed,
        &plan(&relaxed, &[])?,
        dynamic,
        &[rels.true_, rels.does],
    );
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
    // The late relations' rules never run here: planned, their lookups would keep indexes of the
    // relations they read up to date for nothing.
    relaxed.rules.retain(|r| !late[r.head.rel.0 as usize]);
    // Where a load-time table's recursion (`tables`: the relations of the load-time phase; those
    // added since, the projections above, are not) reads a round's new rows, a listed table goes
    // before a derived relation the plan finds no worse: by the rules' text alone, gt_two_thirds_4p's
    // `absDiff` recursion looked up to 400 `lt` facts for each new row before the one `succ` fact
    // that pins them (0.7 s of a doomed first attempt). Nothing more: ordered by the sizes alone,
    // with every derived relation guessed alike, laikLee_hex's refusal took 10 s instead of 3; and
    // wider, the order of a table's rows changed the order of checkers' atoms, which then played 6%
    // slower.
    let mut rplan = plan_tie_broken(&relaxed, &[], &fact_table_sizes(&relaxed), tables)?;
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
        return Err(analysis_over_budget(e, &rdb, &relaxed, &limits));
    }
    Ok((rdb, late))
}

/// Per load-time relation of one column, its facts as a bitset by term number: the commonest check
/// (`coordinate(?x)` with `?x` known) without hashing.
fn unary_bitsets(
    sdb: &Db,
    dynamic: &[bool],
    demand: &[bool],
    arities: &[usize],
) -> Vec<Option<Vec<u64>>> {
    (0..arities.len())
        .map(|r| {
            let rel = sdb.rel(RelId(r as u32));
            if dynamic[r] || demand[r] || arities[r] != 1 {
                return None;
            }
            let mut bits = vec![0u64; sdb.terms.len().div_ceil(64)];
            for i in 0..rel.len() {
                let t = rel.row(i)[0].0 as usize;
                bits[t / 64] |= 1 << (t % 64);
            }
            Some(bits)
        })
        .collect()
}

/// `eligible` (by [`RelId`] index) without the relations a demand restricts, or that are demands: a
/// projection out of such a rule would leave the demand behind and hold for every value, asked or not.
pub(super) fn unrestricted(p: &Program, mut eligible: Vec<bool>) -> Vec<bool> {
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

/// Per relation, an earlier demand-restricted copy of the same relation (the demand rewrite's
/// `q#bf`, `q#fb`, ...) whose rows in the relaxed fixpoint `rdb` are the same, among the relations
/// `eligible` (by [`RelId`] index) says may be compared. Two copies differ only in what their readers
/// ask, and each holds, in every state, exactly the facts of the relation they copy among its rows;
/// with the same rows, their atoms are the same propositions, so one copy's atoms can stand for the
/// other's and the other's rules need no grounding (chess asks for its pieces' moves from a square
/// and to a square: `queen_move_ig#bbffbb` and `queen_move_ig#ffbbbb`, 93,184 rows each).
fn equal_copies(p: &Program, rdb: &Db, eligible: impl Fn(usize) -> bool) -> Vec<Option<RelId>> {
    let n = p.relations.len();
    let mut same_as: Vec<Option<RelId>> = vec![None; n];
    // Per copied relation (its name, arity and whether it is asked per move), the copies with rows
    // unlike every earlier one's.
    let mut kept: HashMap<(&str, usize, bool), Vec<RelId>> = HashMap::new();
    for r in (0..n).filter(|&r| eligible(r)) {
        let rel = RelId(r as u32);
        let arity = p.relations[r].arity;
        if p.origin(rel) != Origin::DemandCopy {
            continue;
        }
        let Some((copied, per_move)) = copied_relation(p.terms.name(p.relations[r].name), arity)
        else {
            continue;
        };
        let rows = rdb.rel(rel);
        let same = |other: &RelId| {
            let theirs = rdb.rel(*other);
            theirs.len() == rows.len()
                && theirs.is_hashed()
                && (0..rows.len())
                    .into_par_iter()
                    .all(|i| theirs.contains(rows.row(i)))
        };
        let copies = kept.entry((copied, arity, per_move)).or_default();
        match copies.iter().find(|c| same(c)) {
            Some(&c) => same_as[r] = Some(c),
            None => copies.push(rel),
        }
    }
    same_as
}

/// The relation a demand-restricted copy named `name` copies, and whether it is asked per move: the
/// name without its adornment (`q#bf`, `q#bf#move`: one `b` or `f` per argument). `None` for a name
/// not of that form (a copy renamed to stay unique).
fn copied_relation(name: &str, arity: usize) -> Option<(&str, bool)> {
    let (name, per_move) = match name.strip_suffix("#move") {
        Some(n) => (n, true),
        None => (name, false),
    };
    let (copied, tag) = name.rsplit_once('#')?;
    let adornment = tag.len() == arity && tag.chars().all(|c| c == 'b' || c == 'f');
    adornment.then_some((copied, per_move))
}

/// The state-dependent relations the relaxed fixpoint can leave out: those that neither the inputs
/// (`roots`) nor a load-time or demand relation depend on, outside recursive strata. Grounding their
/// rules in dependency order (see [`grounding_phases`](super::instantiate::grounding_phases)) finds
/// their facts as it goes; the relaxed fixpoint would only have derived them by the same joins, once
/// more (chess's `threatened_with_capture`, `goal`, `terminal`).
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

/// The engine's [`relax`] in its [`Relaxation::EveryRelation`] mode: the bound of what grounding
/// instantiates.
fn relaxation(prog: &Program, rels: &GameRelations) -> Program {
    relax(
        prog,
        [rels.init, rels.true_, rels.next, rels.legal, rels.does],
        Relaxation::EveryRelation,
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{analysed, instantiated, kif, TURNS};
    use super::*;

    #[test]
    fn the_relaxation_keeps_the_negations_of_static_relations() {
        // `line` counts up to `max` as written; with its negation dropped, it would run on through
        // every `succ` (urmAdd's line and register numbers, under its `succ` of 64 numbers, made
        // millions of instructions and never loaded).
        let a = analysed(
            &kif(
                "(role r) (init go) (succ 1 2) (succ 2 3) (succ 3 4) (max 2) (line 1) \
                  (<= (line ?m) (line ?n) (succ ?n ?m) (not (max ?n))) \
                  (<= (legal r (write ?n)) (line ?n) (true go)) \
                  (<= (next go) (true go)) (<= terminal (true stop)) (goal r 100)",
            ),
            Strategy::AsWritten,
        );
        let moves: Vec<String> = a
            .legal_rows
            .iter()
            .map(|r| a.relaxed.terms.kif(r[1]))
            .collect();
        assert_eq!(moves, ["(write 1)", "(write 2)"]);
    }

    #[test]
    fn the_relaxation_drops_the_negations_of_state_relations_and_feeds_the_inputs() {
        let limits = Limits::default();
        let Prepared { prog, rels } = rewrite(&kif(TURNS), Strategy::AsWritten, limits).unwrap();
        assert!(prog
            .rules
            .iter()
            .any(|r| r.body.iter().any(|l| matches!(l, Lit::Neg(_)))));
        let relaxed = relaxation(&prog, &rels);
        // Every negation of TURNS reads the state.
        assert!(relaxed
            .rules
            .iter()
            .all(|r| r.body.iter().all(|l| !matches!(l, Lit::Neg(_)))));
        let feeds = |head: RelId, body: RelId| {
            relaxed.rules.iter().any(|r| {
                r.head.rel == head && matches!(&r.body[..], [Lit::Pos(a)] if a.rel == body)
            })
        };
        assert!(feeds(rels.true_, rels.init) && feeds(rels.true_, rels.next));
        assert!(feeds(rels.does, rels.legal));
        assert_eq!(relaxed.rules.len(), prog.rules.len() + 3);
    }

    #[test]
    fn the_analysis_bounds_the_propositions_and_leaves_the_outputs_late() {
        let a = analysed(&kif(TURNS), Strategy::AsWritten);
        let text =
            |ts: &[TermId]| -> Vec<String> { ts.iter().map(|t| a.relaxed.terms.kif(*t)).collect() };
        // Every proposition that can hold, sorted by its text; nothing else.
        assert_eq!(
            text(&a.numbered.props),
            [
                "(control black)",
                "(control white)",
                "(marked 1)",
                "(marked 2)"
            ]
        );
        assert_eq!(text(&a.roles), ["white", "black"]);
        assert_eq!(a.initial, [1]);
        // Nothing reads `terminal`: its facts are found by grounding its rules. `goal` reads no state.
        assert!(a.late[a.rels.terminal.0 as usize]);
        assert!(!a.dynamic[a.rels.goal.0 as usize] && !a.late[a.rels.goal.0 as usize]);
        assert!(!a.late[a.rels.legal.0 as usize] && !a.late[a.rels.next.0 as usize]);
        // `cell` depends on no state: a constant, as a bitset.
        let cell = a
            .prog
            .relations
            .iter()
            .position(|r| a.prog.terms.name(r.name) == "cell");
        let cell = cell.expect("a cell relation");
        assert!(!a.dynamic[cell] && a.unary[cell].is_some());
    }

    /// A token on a cycle of three cells: `link` is asked from the token's cell (`legal`) and to the
    /// cell moved to (`next`), two demand-restricted copies with the same three facts.
    const CYCLE: &str = "
        (role r)
        (init (at 1))
        (succ 1 2) (succ 2 3) (succ 3 1)
        (<= (link ?x ?y) (true (at ?x)) (succ ?x ?y))
        (<= (legal r (go ?y)) (true (at ?x)) (link ?x ?y))
        (<= (next (at ?y)) (does r (go ?y)) (link ?x ?y))
        (<= terminal (true (at 3)))
        (<= (goal r 100) (true (at 3)))";

    #[test]
    fn a_copy_with_the_rows_of_another_reads_its_atoms_and_is_not_grounded() {
        let mut a = analysed(&kif(CYCLE), Strategy::Decomposed);
        let rel = |a: &Analysis, name: &str| {
            let r = a
                .prog
                .relations
                .iter()
                .position(|r| a.prog.terms.name(r.name) == name);
            RelId(r.unwrap_or_else(|| panic!("no relation {name}")) as u32)
        };
        let (from, to, elim) = (rel(&a, "link#bf"), rel(&a, "link#fb"), rel(&a, "elim#1#b"));
        assert_eq!(a.relaxed.rel(from).len(), 3);
        assert_eq!(a.relaxed.rel(to).len(), 3);
        assert_eq!(a.same_as[to.0 as usize], Some(from));
        assert_eq!(a.same_as[from.0 as usize], None);
        let inst = instantiated(&mut a);
        let atoms = |r: RelId| {
            let base = inst.atoms.base[r.0 as usize];
            base..base + inst.atoms.len[r.0 as usize]
        };
        let mut read = Vec::new();
        for (k, &ri) in inst.to_ground.iter().enumerate() {
            let head = a.prog.rules[ri].head.rel;
            assert_ne!(head, to, "the copy standing in is not grounded");
            if head != elim {
                continue;
            }
            let buf = &inst.found[k];
            let mut at = 0;
            while at < buf.len() {
                let n = buf[at + 1] as usize;
                read.extend(buf[at + 2..at + 2 + n].iter().map(|l| l >> 1));
                at += 2 + n;
            }
        }
        // `elim#1#b(?y) :- demand#elim#1#b(?y), link#fb(?x, ?y)`: one instance per cell moved to,
        // each reading `link#bf`'s atom of the same fact.
        assert_eq!(read.len(), 3, "{read:?}");
        assert!(read.iter().all(|x| atoms(from).contains(x)), "{read:?}");
    }

    #[test]
    fn a_copys_name_says_what_it_copies() {
        for (name, arity, copied) in [
            ("link#bf", 2, Some(("link", false))),
            ("link#bf#move", 2, Some(("link", true))),
            ("either#6#ffbbbb", 6, Some(("either#6", false))),
            ("link#bf'", 2, None),
            ("link#bf", 3, None),
            ("link", 0, None),
        ] {
            assert_eq!(copied_relation(name, arity), copied, "{name}");
        }
    }
}
