//! The load-time analysis of [`super::RuleGame`]: what can ever be true, and which moves can ever be
//! legal.
//!
//! The entry point is [`analyse`]. It runs a *relaxed* fixpoint of the rules ([`relax`]: negation of
//! anything that depends on the state dropped, `true` fed from `init` and `next`, `does` from `legal`,
//! arithmetic that feeds itself kept within the integers the program mentions by
//! [`clamp_recursive_arithmetic`]), which
//! over-approximates every reachable state: its `true` facts (and `base` declarations) are the base
//! propositions, its `legal` facts the moves, and the sizes of its relations order the joins of the real
//! plan. When it runs away (a counter of nested terms, which grows past `terminal` since the relaxation
//! ignores it) [`analyse`] says so with `None`, and the game loads in open mode (`engine::open`).
//!
//! The rest shapes the rules once the propositions are known: [`flatten`] splits `true` and `next` by
//! function symbol, [`take_frame_rules`] turns rules that only copy a fact forward into a mask,
//! [`split_goal_strata`] sets apart what only `goal` reads, and [`zero_sum`] reads a property of the
//! game for [`crate::game::GameInfo`] (whether it takes turns is [`super::facade::dynamics_of`]). The
//! network shares [`integer_range`] and [`clamp_arithmetic`] (in
//! `network::ground::analysis`).

use super::{EngineError, Limits};
use crate::datalog::eval::Db;
use crate::datalog::ir::{dynamic_relations, Cmp, Lit, Origin, Pat, Program, RelId, Rule};
use crate::datalog::plan::{plan, Phase, Plan};
use crate::datalog::scc::{component_of, tarjan};
use crate::datalog::terms::{TermId, TermStore};
use crate::datalog::Invalid;
use crate::game::Dynamics;
use crate::syntax::ast;
use hashbrown::HashMap;

/// The relations every game has: found or made before the analysis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keywords {
    pub(crate) role: RelId,
    pub(crate) true_: RelId,
    pub(crate) does: RelId,
    pub(crate) next: RelId,
    pub(crate) legal: RelId,
    pub(crate) init: RelId,
    pub(crate) goal: Option<RelId>,
    pub(crate) terminal: Option<RelId>,
    pub(crate) base: Option<RelId>,
}

impl Keywords {
    /// The keyword relations of `prog`, made when no rule mentions them; an error when there is no
    /// `role`.
    pub(crate) fn add(prog: &mut Program) -> Result<Keywords, EngineError> {
        let role = prog
            .keywords
            .role
            .ok_or(EngineError::Invalid(Invalid::NoRoleFacts))?;
        Ok(Keywords {
            role,
            true_: prog.add_relation("true", 1),
            does: prog.add_relation("does", 2),
            next: prog.add_relation("next", 1),
            legal: prog.add_relation("legal", 2),
            init: prog.add_relation("init", 1),
            goal: prog.keywords.goal,
            terminal: prog.keywords.terminal,
            base: prog.keywords.base,
        })
    }

    /// The relations the rewrites keep, readers or not: the keywords, then `extra`.
    pub(crate) fn kept(&self, prog: &Program, extra: impl Iterator<Item = RelId>) -> Vec<RelId> {
        let k = prog.keywords;
        let mut keep = vec![self.true_, self.does, self.next, self.legal, self.init];
        keep.extend(
            [k.role, k.goal, k.terminal, k.base, k.input, k.legal1]
                .into_iter()
                .flatten(),
        );
        keep.extend(extra);
        keep
    }
}

/// What the relaxed fixpoint found (see the module documentation).
#[derive(Debug)]
pub(crate) struct Analysis {
    /// The fixpoint's term store: the program's terms and those it made.
    pub(crate) terms: TermStore,
    /// The roles, in `role` order.
    pub(crate) roles: Vec<TermId>,
    /// The base propositions and the moves, numbered.
    pub(crate) numbered: Numbered,
    /// The number of facts of each relation the fixpoint computes (exact for those that do not
    /// depend on the state, an upper bound for the others); `None` for the rest.
    pub(crate) sizes: Vec<Option<f64>>,
    /// Whether the game has two roles whose possible goal values pair up as `v` and `100 - v`.
    pub(crate) zero_sum: bool,
}

/// Runs the relaxed fixpoint of `prog` (see the module documentation); `None` when it runs away
/// within the caller's time.
pub(crate) fn analyse(
    prog: &Program,
    kw: &Keywords,
    limits: Limits,
) -> Result<Option<Analysis>, EngineError> {
    let arities: Vec<usize> = prog.relations.iter().map(|r| r.arity).collect();
    let static_goals = kw.goal.and_then(|g| head_goal_values(prog, g));
    let relaxed = relax(
        prog,
        [kw.init, kw.true_, kw.next, kw.legal, kw.does],
        Relaxation::Propositions(kw.goal.filter(|_| static_goals.is_none())),
    );
    let rplan = plan(&relaxed, &[])?;
    let mut rdb = Db::new(&rplan, &arities, relaxed.terms.clone(), limits);
    match rdb.run_only_parallel(&rplan, Phase::Static, &[]) {
        Ok(()) => {}
        // Running out of the caller's time is no sign that the propositions are unbounded.
        Err(EngineError::Runaway(_))
            if limits
                .deadline
                .is_none_or(|d| std::time::Instant::now() < d) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    }
    let column = |r: RelId, c: usize| -> Vec<TermId> {
        (0..rdb.rel(r).len())
            .map(|i| rdb.rel(r).row(i)[c])
            .collect()
    };
    let roles = column(kw.role, 0);
    if roles.is_empty() {
        return Err(EngineError::Invalid(Invalid::NoRoles));
    }
    let mut props = column(kw.true_, 0);
    if let Some(b) = kw.base {
        props.extend(column(b, 0));
    }
    let numbered = Numbered::sorted(&rdb.terms, props, column(kw.legal, 1));
    let sizes = (0..relaxed.relations.len())
        .map(|i| {
            let computed = relaxed.rules.iter().any(|r| r.head.rel.0 as usize == i);
            computed.then(|| rdb.rel(RelId(i as u32)).len() as f64)
        })
        .collect();
    let zero_sum = kw.goal.is_some_and(|g| {
        zero_sum(&roles, |r| match &static_goals {
            Some(heads) => head_values(heads, r),
            None => (0..rdb.rel(g).len())
                .map(|i| rdb.rel(g).row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| rdb.terms.as_int(row[1]))
                .collect(),
        })
    });
    Ok(Some(Analysis {
        terms: rdb.terms,
        roles,
        numbered,
        sizes,
        zero_sum,
    }))
}

/// The base propositions and the moves of a game, numbered in the byte order of their KIF text: what
/// a state's bits and a move's id mean. **Both engines number what their relaxed fixpoint found with
/// [`Numbered::sorted`]**, so a game's moves have the same ids on either engine.
#[derive(Debug, Default)]
pub(crate) struct Numbered {
    pub(crate) props: Vec<TermId>,
    pub(crate) prop_of: HashMap<TermId, u32>,
    pub(crate) moves: Vec<TermId>,
    pub(crate) move_of: HashMap<TermId, u32>,
}

impl Numbered {
    /// `props` and `moves` (terms of `terms`) without repeats, sorted by their KIF text, numbered.
    pub(crate) fn sorted(
        terms: &TermStore,
        props: impl IntoIterator<Item = TermId>,
        moves: impl IntoIterator<Item = TermId>,
    ) -> Numbered {
        let sorted = |v: &mut Vec<TermId>| -> HashMap<TermId, u32> {
            v.sort_by_cached_key(|t| terms.kif(*t));
            v.dedup();
            v.iter().enumerate().map(|(i, t)| (*t, i as u32)).collect()
        };
        let mut props: Vec<TermId> = props.into_iter().collect();
        let mut moves: Vec<TermId> = moves.into_iter().collect();
        Numbered {
            prop_of: sorted(&mut props),
            move_of: sorted(&mut moves),
            props,
            moves,
        }
    }
}

/// Whether the game is zero-sum ([`super::facade::zero_sum`]), each role's possible goal values given by
/// `vals`.
pub(crate) fn zero_sum(roles: &[TermId], vals: impl Fn(TermId) -> Vec<i64>) -> bool {
    super::facade::zero_sum(&roles.iter().map(|&r| vals(r)).collect::<Vec<_>>())
}

/// The values that rule heads (see [`head_goal_values`]) give role `r`.
pub(crate) fn head_values(heads: &[(Option<TermId>, i64)], r: TermId) -> Vec<i64> {
    heads
        .iter()
        .filter(|(role, _)| role.is_none_or(|x| x == r))
        .map(|(_, v)| *v)
        .collect()
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

/// Keeps between `lo` and `hi` every arithmetic result of `r` that its head carries (directly, or
/// through `=`): without negation, arithmetic can count forever (a counter no
/// longer stops at a terminal state, a pile goes below zero), so a relaxed fixpoint keeps the finite
/// tables a classic translation of the game would list. A result the head does not carry (a
/// condition's intermediate, `minus(N, 1, D)` with `D` unused) makes no new value, so it is left
/// alone: clamped, it would drop the rule's instances where it leaves the range, a legal move among
/// them.
pub(crate) fn clamp_arithmetic(r: &mut Rule, lo: TermId, hi: TermId) {
    let mut carried = vec![false; r.var_names.len()];
    for a in &r.head.args {
        a.bind_vars(&mut carried);
    }
    let any = |p: &Pat, marked: &[bool]| {
        let mut hit = false;
        p.each_var(&mut |v| hit |= marked.get(v as usize).copied().unwrap_or(false));
        hit
    };
    let mut grew = true;
    while grew {
        grew = false;
        for l in &r.body {
            // Through `=` only: the operands of a result the head carries come from finite
            // relations, so clamping the result alone bounds the fixpoint.
            let Lit::Cmp(Cmp::Same, a, b) = l else {
                continue;
            };
            if any(a, &carried) || any(b, &carried) {
                for p in [a, b] {
                    p.each_var(&mut |v| {
                        if let Some(c) = carried.get_mut(v as usize) {
                            grew |= !std::mem::replace(c, true);
                        }
                    });
                }
            }
        }
    }
    let results: Vec<Pat> = r
        .body
        .iter()
        .filter_map(|l| match l {
            Lit::Arith(_, _, _, z) if any(z, &carried) => Some(z.clone()),
            _ => None,
        })
        .collect();
    for z in results {
        r.body.push(Lit::Cmp(Cmp::Leq, Pat::Term(lo), z.clone()));
        r.body.push(Lit::Cmp(Cmp::Leq, z, Pat::Term(hi)));
    }
}

/// How much of the rules [`relax`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Relaxation {
    /// What the base propositions and moves need, kept tight (the Datalog evaluator's analysis):
    /// negations of relations that depend on neither `true` nor `does` stay (they are exact, being
    /// evaluated first), conditions that only filter a dropped one go with it, and the program is
    /// pruned to `true`, `does`, `role`, `base` and, when given, this goal relation.
    Propositions(Option<RelId>),
    /// Every relation, every negation of a relation that depends on `true` or `does` dropped, nothing
    /// pruned: the bound of what grounding instantiates. Negations of static relations stay, as in
    /// `Propositions`: they are exact, and without them a static relation counting up to a limit the
    /// negation sets (urmAdd's `(not (maxLines ?n))`) runs on through every number the rules name.
    EveryRelation,
}

/// The relaxed program: `true(X) :- init(X)`, `true(X) :- next(X)` and `does(R, M) :- legal(R, M)`
/// added, negations dropped as `how` says, the arithmetic results of rules that feed themselves kept
/// within the integers the program mentions ([`clamp_recursive_arithmetic`]). Its least fixpoint holds
/// every fact true in some reachable state, and more: an over-approximation, never the game. The one
/// relaxation of both engines; they differ only in `how`.
pub(crate) fn relax(
    p: &Program,
    [init, true_, next, legal, does]: [RelId; 5],
    how: Relaxation,
) -> Program {
    let mut q = p.clone();
    let (lo, hi) = integer_range(&mut q);
    // Relations that read the state or the moves, directly or not; negation of any other relation is
    // exact (it is computed before anything dynamic) and stays, which keeps the over-approximation tight.
    let dynamic = dynamic_relations(&q, &[true_, does], &[]);
    for r in &mut q.rules {
        r.body
            .retain(|l| !matches!(l, Lit::Neg(a) if dynamic[a.rel.0 as usize]));
    }
    if let Relaxation::Propositions(_) = how {
        drop_dynamic_filters(&mut q, &dynamic);
    }
    let x = q.terms.intern_sym("X");
    let y = q.terms.intern_sym("Y");
    let copy = |head: RelId, body: RelId, n: usize| Rule {
        head: crate::datalog::ir::IrAtom {
            rel: head,
            args: (0..n as u32).map(Pat::Var).collect(),
        },
        body: vec![Lit::Pos(crate::datalog::ir::IrAtom {
            rel: body,
            args: (0..n as u32).map(Pat::Var).collect(),
        })],
        var_names: vec![x, y][..n].to_vec(),
    };
    q.rules.push(copy(true_, init, 1));
    q.rules.push(copy(true_, next, 1));
    q.rules.push(copy(does, legal, 2));
    clamp_recursive_arithmetic(&mut q, lo, hi);
    if let Relaxation::Propositions(with_goal) = how {
        // Only what the propositions and moves need: goals and terminal conditions of the union of
        // all states can be far larger than anything a real state derives.
        let mut roots = vec![true_, does];
        roots.extend(q.keywords.role);
        roots.extend(q.keywords.base);
        roots.extend(with_goal);
        crate::engine::rewrite::prune_to(&mut q, &roots);
    }
    q
}

/// [`Relaxation::Propositions`]' dynamic conditions that only filter dropped (`dynamic`: which
/// relations read the state or the moves).
fn drop_dynamic_filters(q: &mut Program, dynamic: &[bool]) {
    for r in &mut q.rules {
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
                                    | Lit::NotArith(..)
                                    | Lit::Cmp(
                                        Cmp::Distinct
                                        | Cmp::Less
                                        | Cmp::Leq
                                        | Cmp::NotLess
                                        | Cmp::NotLeq,
                                        ..,
                                    ) => filters.push(j),
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
    }
}

/// Keeps within `lo..=hi` (see [`integer_range`]) the arithmetic results of the rules of `q` that can
/// feed them back to themselves: those with a body relation in the head's component, as the counter
/// `next(count(M)) :- true(count(N)) & plus(N, 1, M)` is through `true(X) :- next(X)`. Without
/// negation such a rule no longer stops at a terminal state and would count forever; kept to the
/// range, the fixpoint holds the finite tables a classic translation would list. **A game whose
/// counter leaves the range in play is outside what the engines represent**: the Datalog evaluator's
/// `try_next` reports the state it cannot number, and the network has no proposition for the value
/// (a rule that names the extreme value, `limit(-10)`, widens the range). Any other rule computes
/// finitely many results from finitely many inputs and keeps them all: a board's geometry
/// (`minus(Y1, 2, Y2)` from row 1) may reach past the integers the rules name, and a move or a state
/// that holds such a value is as real as any other.
fn clamp_recursive_arithmetic(q: &mut Program, lo: TermId, hi: TermId) {
    let n = q.relations.len();
    let component = component_of(n, &tarjan(n, &reads_of(q)));
    for r in &mut q.rules {
        let head = component[r.head.rel.0 as usize];
        let feeds_itself = r
            .body
            .iter()
            .any(|l| matches!(l, Lit::Pos(a) | Lit::Neg(a) if component[a.rel.0 as usize] == head));
        if feeds_itself {
            clamp_arithmetic(r, lo, hi);
        }
    }
}

/// Per relation (by [`RelId`] index), the relations its rules read, positively or not, once per
/// literal.
fn reads_of(p: &Program) -> Vec<Vec<usize>> {
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); p.relations.len()];
    for r in &p.rules {
        for l in &r.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                reads[r.head.rel.0 as usize].push(a.rel.0 as usize);
            }
        }
    }
    reads
}

/// Splits the state strata of `plan` into those evaluated in every state and those only `goal` reads
/// (directly or not), evaluated when a goal is asked: a playout asks for goals once, at its end.
pub(crate) fn split_goal_strata(
    p: &Program,
    plan: &Plan,
    goal: Option<RelId>,
) -> (Vec<bool>, Vec<bool>) {
    let n = p.relations.len();
    let reads = reads_of(p);
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
pub(crate) fn take_frame_rules(
    prog: &mut Program,
    flat: &Flat,
    props: &[TermId],
    terms: &TermStore,
    true_: RelId,
    next: RelId,
    words: usize,
) -> Vec<u64> {
    let mut mask = vec![0; words];
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
                        Cmp::Less | Cmp::Leq | Cmp::NotLess | Cmp::NotLeq => {
                            c.orders(terms.as_int(x), terms.as_int(y))
                        }
                    }
                });
            if ok {
                mask[b / 64] |= 1 << (b % 64);
            }
        }
        false
    });
    prog.rules = rules;
    mask
}

/// The goal values each rule gives, read from the rule heads: `(role or every role, value)`, or `None`
/// when some head computes its role or value (then the relaxed fixpoint derives them).
pub(crate) fn head_goal_values(p: &Program, goal: RelId) -> Option<Vec<(Option<TermId>, i64)>> {
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

/// `true` and `next` split by the function symbol of their argument (see [`flatten`]).
pub(crate) struct Flat {
    /// For each base proposition, the flattened `true` relation it goes into and its arguments.
    pub(crate) prop_rel: Vec<RelId>,
    pub(crate) prop_args: Vec<Box<[TermId]>>,
    /// The flattened `next` relations, with their function symbols.
    pub(crate) next_rels: Vec<(RelId, ast::Sym)>,
    /// Whether some rule still reads `true(X)` with a variable argument (then `true` is filled too).
    pub(crate) generic_true: bool,
}

/// Splits `true(f(a,b))` into a relation `true$f(a,b)` (and `next` likewise) so that joins look the
/// arguments up through ordinary column indexes instead of matching nested terms: a lookup of
/// `true(cell(X,Y,red))` with `X`, `Y` bound becomes one hash probe on three columns instead of building
/// the term, probing the term store and then the index. A literal with a variable argument keeps reading
/// the generic relation, which is then filled as well.
pub(crate) fn flatten(
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
                        *a = crate::datalog::ir::IrAtom { rel, args };
                    }
                }
            }
        }
        if r.head.rel == next && !next_read {
            if let Some((rel, args, f)) = split(prog, "next", &r.head.args[0]) {
                r.head = crate::datalog::ir::IrAtom { rel, args };
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

/// What the load-time analysis found, as text (`ggp-run stage --stage analysed`): the roles, what
/// kind of game it is, when each relation is computed (the plan's phases), and the base propositions
/// and moves, or that play finds them (open mode).
pub struct AnalysisDisplay<'a> {
    pub(crate) info: &'a crate::game::GameInfo,
    pub(crate) terms: &'a TermStore,
    pub(crate) prog: &'a Program,
    pub(crate) plan: &'a Plan,
    pub(crate) props: &'a [TermId],
    pub(crate) moves: &'a [TermId],
    pub(crate) open: bool,
    pub(crate) demand: bool,
}

impl std::fmt::Display for AnalysisDisplay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kif = |t: TermId| self.terms.infix(t);
        writeln!(f, "roles: {}", self.info.roles.join(" "))?;
        let dynamics = match self.info.dynamics {
            Dynamics::TurnTaking => "turn-taking",
            Dynamics::Simultaneous => "simultaneous",
        };
        let zero_sum = if self.info.zero_sum { ", zero-sum" } else { "" };
        writeln!(f, "dynamics: {dynamics}{zero_sum}")?;
        let evaluation = if self.demand {
            "demand-driven"
        } else {
            "bottom-up"
        };
        writeln!(f, "evaluation: {evaluation}")?;
        for (phase, when) in [
            (Phase::Static, "at load"),
            (Phase::State, "per state"),
            (Phase::Move, "per joint move"),
        ] {
            let mut names: Vec<String> = (0..self.prog.relations.len())
                .filter(|&i| self.plan.phases.get(i) == Some(&phase))
                .map(|i| {
                    let r = &self.prog.relations[i];
                    format!("{}/{}", self.prog.terms.name(r.name), r.arity)
                })
                .collect();
            names.sort();
            writeln!(f, "computed {when}: {}", names.join(" "))?;
        }
        if self.open {
            writeln!(
                f,
                "propositions and moves: found in play (the relaxed analysis does not bound them)"
            )?;
            return Ok(());
        }
        writeln!(f, "propositions ({}):", self.props.len())?;
        for &p in self.props {
            writeln!(f, "  {}", kif(p))?;
        }
        writeln!(f, "moves ({}):", self.moves.len())?;
        for &m in self.moves {
            writeln!(f, "  {}", kif(m))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(rules: &str) -> (Program, Keywords) {
        let p = crate::syntax::parse_kif(rules).expect("parses");
        let mut prog = crate::engine::ops::to_classic(&crate::datalog::lower(&p).expect("lowers"))
            .expect("classic");
        crate::engine::rewrite::prepare(&mut prog);
        let kw = Keywords::add(&mut prog).expect("has roles");
        (prog, kw)
    }

    #[test]
    fn the_analysis_finds_every_reachable_proposition_and_move_sorted_by_text() {
        let (prog, kw) = prepared(
            "(role x) (role o) (init (cell b)) (init (control x)) \
             (<= (legal ?r (mark ?c)) (true (control ?r)) (true (cell ?c))) \
             (<= (legal ?r noop) (role ?r) (not (true (control ?r)))) \
             (<= (next (cell ?r)) (does ?r (mark ?c))) (<= (next (control o)) (true (control x))) \
             (<= (next (control x)) (true (control o))) (<= terminal (true (cell x))) \
             (goal x 100) (goal o 0)",
        );
        let found = analyse(&prog, &kw, Limits::default())
            .expect("runs")
            .expect("bounded");
        let kif = |v: &[TermId]| -> Vec<String> { v.iter().map(|t| found.terms.kif(*t)).collect() };
        assert_eq!(kif(&found.roles), ["x", "o"]);
        assert_eq!(
            kif(&found.numbered.props),
            [
                "(cell b)",
                "(cell o)",
                "(cell x)",
                "(control o)",
                "(control x)"
            ]
        );
        // `(cell x)` and `(cell o)` are reachable in the relaxation only: it over-approximates.
        assert_eq!(
            kif(&found.numbered.moves),
            ["(mark b)", "(mark o)", "(mark x)", "noop"]
        );
        assert!(found.zero_sum, "100 and 0");
        assert_eq!(
            crate::engine::facade::dynamics_of(&found.terms, &found.numbered.props, &found.roles),
            Dynamics::TurnTaking,
            "control ranges over the roles"
        );
    }

    #[test]
    fn a_counter_of_nested_terms_cannot_be_bounded() {
        let (prog, kw) = prepared(
            "(role a) (init (n 0)) (<= (legal a noop) (true (n ?x))) \
             (<= (next (n (s ?x))) (true (n ?x))) (<= terminal (true (n (s 0)))) (goal a 100)",
        );
        assert!(analyse(&prog, &kw, Limits::default())
            .expect("runs")
            .is_none());
        // ...but running out of the caller's time is an error, not a reason for the open mode.
        let late = Limits {
            deadline: Some(std::time::Instant::now()),
            ..Limits::default()
        };
        assert!(matches!(
            analyse(&prog, &kw, late),
            Err(EngineError::Runaway(_))
        ));
    }

    #[test]
    fn zero_sum_pairs_each_value_with_its_complement() {
        let roles = [TermId(0), TermId(1)];
        let vals = |a: Vec<i64>, b: Vec<i64>| {
            move |r: TermId| if r.0 == 0 { a.clone() } else { b.clone() }
        };
        assert!(zero_sum(&roles, vals(vec![0, 50, 100], vec![100, 50, 0])));
        assert!(!zero_sum(&roles, vals(vec![0, 100], vec![100])));
        assert!(!zero_sum(&roles, vals(vec![], vec![])));
        assert!(!zero_sum(&roles[..1], vals(vec![0], vec![100])));
    }
}
