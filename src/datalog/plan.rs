//! Stage 2, planning: strata, phases, join orders and indexes.
//!
//! The main entry point is [`plan`]. Strata are the strongly connected components of the dependency graph
//! (head depends on body), in an order where every stratum comes after those it reads; negation inside a
//! component is an error naming the relation. Each relation gets a [`Phase`]: `Static` when it does not
//! depend on `true` or `does` (computed once at load), `State` when it depends on `true` only (computed once
//! per state), `Move` when it depends on `does` (computed per joint move). Each rule's body is ordered
//! greedily: the literal with the most arguments already bound goes next (among equals a demand
//! relation's, then the one with the fewest new variables), and filters (negation,
//! comparisons, arithmetic) run as soon as their variables are bound. Each scan looks its relation up by
//! what is bound at that point: whole columns, and the bound parts of a column's function term
//! (`legal2(?p, (move ?piece ?u ?v ?x ?y))` with the squares known is looked up by the squares); those
//! key [`Slot`] lists are the relation's indexes.
//!
//! What it produces is the [`Plan`] of `compiled`, which the evaluator reads; the components come
//! from `scc` (`tarjan`), dependencies first.

use crate::datalog::Invalid;
use std::fmt;

use super::compiled::{compile, CompiledRule, DeltaPlan, Step, Stratum};
/// The planner's output types, where `rulegame` and the grounder have always imported them from.
pub use super::compiled::{Phase, Plan, Slot};
use super::ir::{Cmp, IrAtom, Lit, Origin, Pat, Program, RelId};
use super::scc::component_of;
/// Where `demand`, `rewrite` and the grounder have always imported the components from.
pub(crate) use super::scc::tarjan;
use super::EngineError;

/// The key slots of a scan of `a` given what is bound: every bound column, and in a column whose
/// function term is only partly bound, each bound part (a function term's arguments, in order).
pub(crate) fn key_slots(a: &IrAtom, bound: &[bool]) -> Vec<Slot> {
    fn parts(p: &Pat, bound: &[bool], slot: &mut Slot, out: &mut Vec<Slot>) {
        if p.is_bound(bound) {
            out.push(slot.clone());
        } else if let Pat::Func(_, args) = p {
            for (i, q) in args.iter().enumerate().take(usize::from(u8::MAX)) {
                slot.path.push(i as u8);
                parts(q, bound, slot, out);
                slot.path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for (c, p) in a.args.iter().enumerate() {
        parts(p, bound, &mut Slot::column(c), &mut out);
    }
    if out.is_empty() {
        // Nothing bound: the function symbols of its columns' terms still narrow a scan.
        for (c, p) in a.args.iter().enumerate() {
            if matches!(p, Pat::Func(..)) {
                out.push(Slot::functor(c));
            }
        }
    }
    out
}

/// The step index from which no step binds a variable of `head` (see [`CompiledRule::exists_from`]).
fn exists_from(steps: &[Step], head: &IrAtom, num_vars: usize) -> usize {
    let mut first = vec![usize::MAX; num_vars];
    for (k, st) in steps.iter().enumerate() {
        let mut note = |v: u32| {
            let f = &mut first[v as usize];
            if *f == usize::MAX {
                *f = k;
            }
        };
        match st {
            Step::Scan { atom, .. } | Step::Absent { atom, .. } => {
                atom.args.iter().for_each(|a| a.each_var(&mut note))
            }
            Step::Cmp(_, x, y) => {
                x.each_var(&mut note);
                y.each_var(&mut note);
            }
            Step::Arith(_, x, y, z) | Step::NotArith(_, x, y, z) => {
                x.each_var(&mut note);
                y.each_var(&mut note);
                z.each_var(&mut note);
            }
        }
    }
    let mut from = 0;
    for a in &head.args {
        a.each_var(&mut |v| {
            let f = first[v as usize];
            from = from.max(if f == usize::MAX { steps.len() } else { f + 1 });
        });
    }
    from
}

/// The leading steps of a per-state rule that read only load-time relations, and the variables they
/// bind (see [`CompiledRule::static_prefix`]). Steps from [`exists_from`] on stop at their first
/// solution, so a prefix reaches past that point only when it is 0 (any one solution will do).
fn static_prefix(
    steps: &[Step],
    phases: &[Phase],
    phase: Phase,
    num_vars: usize,
    head: &IrAtom,
) -> (usize, Vec<u32>) {
    if phase == Phase::Static {
        return (0, Vec::new());
    }
    let mut n = steps
        .iter()
        .take_while(|st| match st {
            Step::Scan { atom, .. } | Step::Absent { atom, .. } => {
                phases[atom.rel.0 as usize] == Phase::Static
            }
            Step::Cmp(..) | Step::Arith(..) | Step::NotArith(..) => true,
        })
        .count();
    let ef = exists_from(steps, head, num_vars);
    if ef > 0 {
        n = n.min(ef);
    }
    if n < 2 || n == steps.len() {
        return (0, Vec::new());
    }
    let mut vars = Vec::new();
    for st in &steps[..n] {
        let mut note = |v: u32| {
            if !vars.contains(&v) {
                vars.push(v);
            }
        };
        match st {
            Step::Scan { atom, .. } => atom.args.iter().for_each(|a| a.each_var(&mut note)),
            Step::Absent { .. } | Step::NotArith(..) => {}
            Step::Cmp(Cmp::Same, x, y) => {
                x.each_var(&mut note);
                y.each_var(&mut note);
            }
            Step::Cmp(..) => {}
            Step::Arith(_, _, _, z) => z.each_var(&mut note),
        }
    }
    (n, vars)
}

/// Plans `p` (see the module documentation). `inputs` are relations filled from outside, with their phase
/// (for a game: `true` in `State`, `does` in `Move`).
pub fn plan(p: &Program, inputs: &[(RelId, Phase)]) -> Result<Plan, EngineError> {
    plan_sized(p, inputs, &[])
}

/// Per relation of `p` (indexed by [`RelId`]), its number of facts where it is a table the program
/// lists (every rule of it a fact), `None` where a rule derives it or nothing defines it: sizes known
/// before anything is evaluated, for [`plan_sized`] to order a first evaluation by. A derived
/// relation is then taken to be large, so that a join binds through the listed table
/// (`succ(?x, ?x1)`, 400 rows) before a derived one (`lt(?y, ?x)`, 80,000).
pub fn fact_table_sizes(p: &Program) -> Vec<Option<f64>> {
    let mut sizes = vec![None; p.relations.len()];
    let mut derived = vec![false; p.relations.len()];
    for r in &p.rules {
        let h = r.head.rel.0 as usize;
        if r.body.is_empty() {
            *sizes[h].get_or_insert(0.0) += 1.0;
        } else {
            derived[h] = true;
        }
    }
    for (size, derived) in sizes.iter_mut().zip(derived) {
        if derived {
            *size = None;
        }
    }
    sizes
}

/// [`plan`] with an estimate of each relation's number of facts (indexed by [`RelId`]; missing or
/// `None` when unknown): a scan of `n` facts with `b` of its `a` columns bound is taken to produce
/// `n^((a-b)/a)` rows. Load-time strata take the scan expected to produce the fewest rows first;
/// per-state ones first take a scan expected to produce at most two (a role's one `does` fact, a
/// lookup that pins its row), and otherwise the most bound one.
pub fn plan_sized(
    p: &Program,
    inputs: &[(RelId, Phase)],
    sizes: &[Option<f64>],
) -> Result<Plan, EngineError> {
    plan_with(p, inputs, sizes, SizeUse::Order)
}

/// [`plan`]'s order, except that where a recursive rule of a relation `heads` marks (indexed by
/// [`RelId`]) reads a round's new rows, of the scans the order finds equal (as many bound arguments,
/// a demand relation's or not, as many new variables) a table the program lists (`sizes`, see
/// [`fact_table_sizes`]) goes before a derived relation: the new rows of gt_two_thirds_4p's
/// `absDiff(?x, ?ym1, ?zm1)` bind through `succ(?ym1, ?y)` (400 rows) before `lt(?x, ?y)` (80,000),
/// where the rule's text lists `lt` first. Meant for a program that [`plan_sized`] would order by its
/// guesses at derived relations in every stratum (the relaxed fixpoint's, all of whose relations are
/// derived): here only those ties change.
pub fn plan_tie_broken(
    p: &Program,
    inputs: &[(RelId, Phase)],
    sizes: &[Option<f64>],
    heads: &[bool],
) -> Result<Plan, EngineError> {
    plan_with(p, inputs, sizes, SizeUse::TieBreak(heads))
}

/// How a plan uses its relations' estimated sizes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SizeUse<'a> {
    /// Load-time strata by the estimate first, per-state ones tiny scans first ([`plan_sized`]).
    Order,
    /// Only between scans otherwise equal, where a marked relation's recursive rule reads a
    /// round's new rows ([`plan_tie_broken`]).
    TieBreak(&'a [bool]),
}

fn plan_with(
    p: &Program,
    inputs: &[(RelId, Phase)],
    sizes: &[Option<f64>],
    size_use: SizeUse,
) -> Result<Plan, EngineError> {
    let n = p.relations.len();
    // deps[h] = (body relation, negated) for every rule with head h.
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for r in &p.rules {
        let h = r.head.rel.0 as usize;
        for l in &r.body {
            match l {
                Lit::Pos(a) => deps[h].push((a.rel.0 as usize, false)),
                Lit::Neg(a) => deps[h].push((a.rel.0 as usize, true)),
                _ => {}
            }
        }
    }
    // Components come dependencies first (see `scc`), the order strata are evaluated in.
    let sccs = tarjan(n, &deps);
    let comp = component_of(n, &sccs);
    let mut phases = vec![Phase::Static; n];
    for &(r, ph) in inputs {
        phases[r.0 as usize] = ph;
    }
    let mut indexes: Vec<Vec<Vec<Slot>>> = vec![Vec::new(); n];
    let mut strata = Vec::with_capacity(sccs.len());
    for (ci, c) in sccs.iter().enumerate() {
        let mut phase = Phase::Static;
        let mut recursive = false;
        for &r in c {
            phase = phase.max(phases[r]);
            for &(b, neg) in &deps[r] {
                if comp[b] == ci {
                    if neg {
                        return Err(EngineError::Invalid(Invalid::NotStratified(
                            p.terms.name(p.relations[r].name).to_string(),
                        )));
                    }
                    recursive = true;
                } else {
                    phase = phase.max(phases[b]);
                }
            }
        }
        for &r in c {
            phases[r] = phase;
        }
        let rels: Vec<RelId> = c.iter().map(|&r| RelId(r as u32)).collect();
        let mut rules = Vec::new();
        for (ri, rule) in p.rules.iter().enumerate() {
            if comp[rule.head.rel.0 as usize] == ci {
                let steps = compile_rule(p, ri, None, (sizes, size_use), phase, &mut indexes)?;
                let mut deltas = Vec::new();
                for (li, l) in rule.body.iter().enumerate() {
                    if let Lit::Pos(a) = l {
                        if comp[a.rel.0 as usize] == ci {
                            let steps = compile_rule(
                                p,
                                ri,
                                Some(li),
                                (sizes, size_use),
                                phase,
                                &mut indexes,
                            )?;
                            let exists_from = exists_from(&steps, &rule.head, rule.var_names.len());
                            deltas.push(DeltaPlan {
                                rel: a.rel,
                                slot: c.iter().position(|&r| r == a.rel.0 as usize).unwrap_or(0),
                                code: compile(&steps, rule.var_names.len()),
                                steps,
                                exists_from,
                            });
                        }
                    }
                }
                let (static_prefix, prefix_vars) =
                    static_prefix(&steps, &phases, phase, rule.var_names.len(), &rule.head);
                rules.push(CompiledRule {
                    static_prefix,
                    prefix_vars,
                    source: ri,
                    code: compile(&steps, rule.var_names.len()),
                    head: rule.head.clone(),
                    exists_from: exists_from(&steps, &rule.head, rule.var_names.len()),
                    steps,
                    num_vars: rule.var_names.len(),
                    deltas,
                });
            }
        }
        strata.push(Stratum {
            rels,
            rules,
            recursive,
            phase,
        });
    }
    Ok(Plan {
        strata,
        phases,
        indexes,
    })
}

fn index_for(indexes: &mut [Vec<Vec<Slot>>], rel: RelId, key: &[Slot]) -> Option<usize> {
    if key.is_empty() {
        return None;
    }
    let list = &mut indexes[rel.0 as usize];
    Some(match list.iter().position(|k| k == key) {
        Some(i) => i,
        None => {
            list.push(key.to_vec());
            list.len() - 1
        }
    })
}

/// Orders the body of rule `ri` (with body literal `first`, a positive one, placed first when given).
fn compile_rule(
    p: &Program,
    ri: usize,
    first: Option<usize>,
    (sizes, size_use): (&[Option<f64>], SizeUse),
    phase: Phase,
    indexes: &mut [Vec<Vec<Slot>>],
) -> Result<Vec<Step>, EngineError> {
    let rule = &p.rules[ri];
    let nv = rule.var_names.len();
    let mut bound = vec![false; nv];
    let mut left: Vec<&Lit> = rule.body.iter().collect();
    let mut steps = Vec::new();
    if let Some(li) = first {
        if let Lit::Pos(a) = left.remove(li) {
            let key = key_slots(a, &bound);
            let index = index_for(indexes, a.rel, &key);
            a.args.iter().for_each(|x| x.bind_vars(&mut bound));
            steps.push(Step::Scan {
                atom: a.clone(),
                key,
                index,
            });
        }
    }
    let unsafe_rule = |why: &str| {
        let mut s = String::new();
        let _ = fmt::write(&mut s, format_args!("{}", RuleFmt(p, ri)));
        EngineError::Invalid(Invalid::Unsafe {
            why: why.to_string(),
            rule: s,
        })
    };
    while !left.is_empty() {
        // Filters first, as soon as they can run.
        let mut placed = false;
        let mut i = 0;
        while i < left.len() {
            if left[i].filter_ready(&bound) {
                let l = left.remove(i);
                steps.push(filter_step(l, &mut bound, indexes));
                placed = true;
            } else {
                i += 1;
            }
        }
        if placed {
            continue;
        }
        // A positive literal expected to produce at most two rows (when sizes are known: a check, or
        // a tiny relation such as a role's one `does` fact), else the one with the most bound
        // arguments, a demand relation's first among equals, then the fewest new variables (then,
        // for `plan_tie_broken`, a listed table before a derived relation).
        let best = left
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match l {
                Lit::Pos(a) => {
                    let b = a.args.iter().filter(|x| x.is_bound(&bound)).count();
                    let mut fresh = 0;
                    for x in &a.args {
                        x.each_var(&mut |v| fresh += usize::from(!bound[v as usize]));
                    }
                    let rows = match sizes.get(a.rel.0 as usize).copied().flatten() {
                        _ if sizes.is_empty() => 0.0,
                        _ if b == a.args.len() => 1.0,
                        Some(n) => n
                            .max(1.0)
                            .powf((a.args.len() - b) as f64 / a.args.len() as f64),
                        None => 1000f64.powf((a.args.len() - b) as f64 / a.args.len() as f64),
                    };
                    // Among literals with as many bound arguments, a demand relation's goes first:
                    // it holds what the rule is asked, and one of its rows binds many variables at
                    // once, which "fewest new variables" would put last (laikLee_hex's
                    // `isList#b(list(?el1, list(?el2, ...)))` after 25 scans of `le(?el)`, a cross
                    // product that never ends).
                    let asked = p.relations[a.rel.0 as usize].origin == Origin::Demand;
                    let score = (b, asked, -(fresh as isize));
                    // Load-time strata order by the estimate alone (their inputs' sizes are exact);
                    // per-state ones only put tiny scans first, as states are far smaller than the
                    // union of all states the sizes describe.
                    let by_rows = -((rows * 16.0) as i64);
                    let (key, tie) = match size_use {
                        SizeUse::TieBreak(heads) => {
                            // A listed table before a derived relation, nothing more: the sizes
                            // of two tables, or the guesses at two derived relations, decide
                            // nothing here.
                            let marked = first.is_some()
                                && heads.get(rule.head.rel.0 as usize) == Some(&true);
                            let listed = sizes.get(a.rel.0 as usize).copied().flatten().is_some();
                            (0, i64::from(marked && listed))
                        }
                        SizeUse::Order if phase == Phase::Static => (by_rows, 0),
                        SizeUse::Order => (i64::from(!sizes.is_empty() && rows <= 2.0), 0),
                    };
                    Some((i, key, (score, tie)))
                }
                _ => None,
            })
            .max_by_key(|&(i, key, score)| (key, score, -(i as isize)))
            .map(|(i, _, _)| i);
        match best {
            Some(i) => {
                let Lit::Pos(a) = left.remove(i) else {
                    unreachable!("best is a positive literal")
                };
                let key = key_slots(a, &bound);
                let index = index_for(indexes, a.rel, &key);
                a.args.iter().for_each(|x| x.bind_vars(&mut bound));
                steps.push(Step::Scan {
                    atom: a.clone(),
                    key,
                    index,
                });
            }
            None => {
                // Only filters whose variables no positive literal binds remain: negations with free
                // variables mean "no matching fact"; anything else is unsafe.
                let l = left.remove(0);
                match l {
                    Lit::Neg(_) => steps.push(filter_step(l, &mut bound, indexes)),
                    _ => return Err(unsafe_rule("a built-in's variable is never bound")),
                }
            }
        }
    }
    if !rule.head.args.iter().all(|x| x.is_bound(&bound)) {
        return Err(unsafe_rule("a head variable is not bound by the body"));
    }
    Ok(steps)
}

fn filter_step(l: &Lit, bound: &mut [bool], indexes: &mut [Vec<Vec<Slot>>]) -> Step {
    l.bind_vars(bound);
    match l {
        Lit::Neg(a) => {
            let key = key_slots(a, bound);
            let index = index_for(indexes, a.rel, &key);
            Step::Absent {
                atom: a.clone(),
                key,
                index,
            }
        }
        Lit::Cmp(c, x, y) => Step::Cmp(*c, x.clone(), y.clone()),
        Lit::Arith(op, x, y, z) => Step::Arith(*op, x.clone(), y.clone(), z.clone()),
        Lit::NotArith(op, x, y, z) => Step::NotArith(*op, x.clone(), y.clone(), z.clone()),
        Lit::Pos(_) => unreachable!("positive literals are scans"),
    }
}

pub(crate) struct RuleFmt<'a>(pub(crate) &'a Program, pub(crate) usize);

impl fmt::Display for RuleFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_rule(f, &self.0.rules[self.1])
    }
}

/// A plan printed as rules in evaluation order, stratum by stratum, with each scan's key columns.
pub struct PlanDisplay<'a> {
    /// The program.
    pub program: &'a Program,
    /// Its plan.
    pub plan: &'a Plan,
}

impl fmt::Display for PlanDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.program;
        for (i, s) in self.plan.strata.iter().enumerate() {
            if s.rules.is_empty() {
                continue;
            }
            let names: Vec<&str> = s
                .rels
                .iter()
                .map(|r| p.terms.name(p.relations[r.0 as usize].name))
                .collect();
            writeln!(
                f,
                "stratum {i} {:?}{}: {}",
                s.phase,
                if s.recursive { " recursive" } else { "" },
                names.join(" ")
            )?;
            for r in &s.rules {
                let names = &p.rules[r.source].var_names;
                f.write_str("  ")?;
                let head_rule = super::ir::Rule {
                    head: r.head.clone(),
                    body: Vec::new(),
                    var_names: names.clone(),
                };
                let mut h = String::new();
                let _ = fmt::write(&mut h, format_args!("{}", OneRule(p, &head_rule)));
                f.write_str(h.trim_end_matches('.'))?;
                for (k, st) in r.steps.iter().enumerate() {
                    f.write_str(if k == 0 { " :- " } else { ", " })?;
                    let lit = match st {
                        Step::Scan { atom, .. } => Lit::Pos(atom.clone()),
                        Step::Absent { atom, .. } => Lit::Neg(atom.clone()),
                        Step::Cmp(c, x, y) => Lit::Cmp(*c, x.clone(), y.clone()),
                        Step::Arith(o, x, y, z) => Lit::Arith(*o, x.clone(), y.clone(), z.clone()),
                        Step::NotArith(o, x, y, z) => {
                            Lit::NotArith(*o, x.clone(), y.clone(), z.clone())
                        }
                    };
                    p.fmt_lit(f, &lit, names)?;
                    if let Step::Scan { key, .. } | Step::Absent { key, .. } = st {
                        if !key.is_empty() {
                            write!(f, "@{key:?}")?;
                        }
                    }
                }
                writeln!(f, ".")?;
            }
        }
        Ok(())
    }
}

struct OneRule<'a>(&'a Program, &'a super::ir::Rule);

impl fmt::Display for OneRule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_rule(f, self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lower;
    use crate::syntax::parse_kif;

    const TABLES: &str = "(role r) (succ 1 2) (succ 2 3) (succ 3 4) (num 1) (num 2) (num 3) (num 4)
        (<= (lt ?x ?y) (succ ?x ?y)) (<= (lt ?x ?z) (lt ?x ?y) (succ ?y ?z))
        (<= (before ?y ?x1) (lt ?y ?x) (succ ?x ?x1))
        (mixed 1) (<= (mixed ?x) (num ?x))";

    fn program() -> Program {
        lower(&parse_kif(TABLES).expect("parses")).expect("lowers")
    }

    fn size_of(p: &Program, sizes: &[Option<f64>], name: &str) -> Option<f64> {
        let r = p
            .relations
            .iter()
            .position(|x| p.terms.name(x.name) == name)
            .expect("relation");
        sizes[r]
    }

    #[test]
    fn a_listed_table_has_its_number_of_facts_and_a_derived_relation_none() {
        let p = program();
        let sizes = fact_table_sizes(&p);
        assert_eq!(size_of(&p, &sizes, "succ"), Some(3.0));
        assert_eq!(size_of(&p, &sizes, "num"), Some(4.0));
        assert_eq!(size_of(&p, &sizes, "lt"), None);
        assert_eq!(size_of(&p, &sizes, "mixed"), None, "a fact and a rule");
    }

    #[test]
    fn the_listed_tables_sizes_put_a_table_before_a_derived_relation() {
        let p = program();
        let shown = |pl: &Plan| {
            PlanDisplay {
                program: &p,
                plan: pl,
            }
            .to_string()
        };
        let by_text = shown(&plan(&p, &[]).expect("plans"));
        assert!(
            by_text.contains("before(?y, ?x1) :- lt(?y, ?x), succ(?x, ?x1)@[0]."),
            "{by_text}"
        );
        let sized = shown(&plan_sized(&p, &[], &fact_table_sizes(&p)).expect("plans"));
        assert!(
            sized.contains("before(?y, ?x1) :- succ(?x, ?x1), lt(?y, ?x)@[1]."),
            "{sized}"
        );
    }

    #[test]
    fn sizes_that_only_break_ties_change_a_marked_recursion_s_new_rows_alone() {
        // `far`'s new rows bind `?x` and `?ym1`; `lt(?x, ?y)` and `succ(?ym1, ?y)` then bind one
        // argument each and make one new variable: equal but for `succ` being a listed table.
        let src = format!(
            "{TABLES} (<= (far ?x ?x) (num ?x)) (<= (far ?x ?y) (lt ?x ?y) (succ ?ym1 ?y) (far ?x ?ym1))"
        );
        let p = lower(&parse_kif(&src).expect("parses")).expect("lowers");
        let name = |a: &IrAtom| p.terms.name(p.relations[a.rel.0 as usize].name).to_string();
        // The relations the steps after the new rows read, and those of the rule as planned.
        let orders = |pl: &Plan| {
            let rule = pl
                .strata
                .iter()
                .flat_map(|s| &s.rules)
                .find(|r| name(&r.head) == "far" && !r.deltas.is_empty())
                .expect("far's recursive rule");
            let scans = |steps: &[Step]| {
                steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Scan { atom, .. } => Some(name(atom)),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
            };
            (scans(&rule.deltas[0].steps), scans(&rule.steps))
        };
        let sizes = fact_table_sizes(&p);
        let far_only: Vec<bool> = p
            .relations
            .iter()
            .map(|r| p.terms.name(r.name) == "far")
            .collect();
        let (delta, whole) = orders(&plan_tie_broken(&p, &[], &sizes, &far_only).expect("plans"));
        assert_eq!(delta, ["far", "succ", "lt"]);
        let (plain_delta, plain_whole) = orders(&plan(&p, &[]).expect("plans"));
        assert_eq!(plain_delta, ["far", "lt", "succ"], "the text's order");
        assert_eq!(whole, plain_whole, "only the new rows' variant changes");
        // Unmarked, nothing changes.
        let none = vec![false; p.relations.len()];
        let (delta, _) = orders(&plan_tie_broken(&p, &[], &sizes, &none).expect("plans"));
        assert_eq!(delta, plain_delta);
    }

    #[test]
    fn a_demand_relation_goes_first_among_scans_with_as_many_bound_arguments() {
        let src = "(role r) (le a) (le b) (k 1 a) (ask (pair a b)) (ask2 b a)
            (<= (isl (pair ?x ?y)) (le ?x) (le ?y) (ask (pair ?x ?y)))
            (<= (got ?x ?y) (ask2 ?x ?y) (k 1 ?y))";
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        for r in &mut p.relations {
            if ["ask", "ask2"].contains(&p.terms.name(r.name)) {
                r.origin = Origin::Demand;
            }
        }
        let shown = PlanDisplay {
            program: &p,
            plan: &plan(&p, &[]).expect("plans"),
        }
        .to_string();
        // One row of the demand binds both variables; `le` first would join every pair of them.
        assert!(
            shown.contains("isl(pair(?x, ?y)) :- ask(pair(?x, ?y))@[0.f], le(?x)@[0], le(?y)@[0]."),
            "{shown}"
        );
        // A bound argument still counts first: `k(1, ?y)` before the demand.
        assert!(
            shown.contains("got(?x, ?y) :- k(1, ?y)@[0], ask2(?x, ?y)@[1]."),
            "{shown}"
        );
    }
}
