//! Query-driven evaluation for a bottom-up engine: the magic-sets rewrite.
//!
//! The main entry point is [`demand`]. A top-down prover only ever computes the instances of a relation
//! that a query asks about; a bottom-up evaluator computes every instance. For most games that is the
//! cheaper way, but some rules are written for the prover: chess's `threatened_with_capture` asks
//! whether a square is attacked *ignoring one given cell*, and bottom-up that means every attack for
//! every ignored cell, hundreds of thousands of facts per state where a prover looks at a few dozen.
//!
//! The rewrite makes the evaluator ask first. For a relation `q` read as `q(a, ?y)` with `a` known from
//! the literals before it, the reading becomes `q#bf(a, ?y)`, a copy of `q` restricted to what is asked:
//!
//! ```text
//! demand#q#bf(a)      :- <the literals before the reading>.
//! q#bf(?x, ?y)        :- demand#q#bf(?x), <q's body, its own readings rewritten the same way>.
//! ```
//!
//! (`b` marks an argument known when the reading is evaluated, `f` a free one.) The demand rules read
//! only the positive literals before the reading, so they ask about a superset of what the rule needs:
//! answers stay exact. A copy can still close a cycle through negation that the plain rules did not
//! have (a demand read inside what it restricts, usually a copy read both positively and negatively);
//! the relations read negatively inside such a cycle (all of the cycle's when no copy is) are left
//! bottom-up and the rewrite is redone, so the result is always stratified.

use hashbrown::HashMap;

use crate::datalog::ir::{Cmp, IrAtom, Lit, Origin, Pat, Program, RelId, Rule};
use crate::datalog::scc::{component_of, tarjan};
use crate::engine::Limits;

/// How long the bottom-up rules may take over the relations computed once at load before a form that
/// restricts them by demand is tried instead...
const STATIC_TRIAL_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// ...and how many facts.
const STATIC_TRIAL_FACTS: usize = 1_000_000;

/// `limits` cut to the trial of the load-time relations in full, after which both engines restrict
/// them by demand instead (hex's `isList` of every list of up to 25 cells, mummy maze's direction
/// table of 6.7M entries): at most [`STATIC_TRIAL_TIME`] from now and [`STATIC_TRIAL_FACTS`] facts,
/// never past `limits`' own deadline.
pub(crate) fn static_trial(limits: Limits) -> Limits {
    let end = std::time::Instant::now() + STATIC_TRIAL_TIME;
    Limits {
        deadline: Some(limits.deadline.map_or(end, |d| d.min(end))),
        max_facts: limits.max_facts.min(STATIC_TRIAL_FACTS),
        ..limits
    }
}

/// Per relation of `p` (by [`RelId`] index), whether a rule with conditions defines it: what a demand
/// could restrict (a table of facts has nothing to restrict).
pub(crate) fn derived_relations(p: &Program) -> Vec<bool> {
    let mut derived = vec![false; p.relations.len()];
    for r in p.rules.iter().filter(|r| !r.body.is_empty()) {
        derived[r.head.rel.0 as usize] = true;
    }
    derived
}

/// How the name of a demand relation starts (a name only: a demand relation is known by its
/// [`Origin`]).
const DEMAND_PREFIX: &str = "demand#";

/// Whether `rel` is a demand relation of the rewrite: the arguments a reading asks about, a handful
/// per state, which the join order starts from.
pub(crate) fn is_demand_relation(p: &Program, rel: RelId) -> bool {
    p.origin(rel) == Origin::Demand
}

/// Rewrites the readings of the `eligible` relations (by [`RelId`] index) so that they are computed only
/// for the arguments asked (see the module documentation). `roots` are the relations whose every
/// instance is wanted; `per_move` marks the relations that depend on the moves (`does`). Returns the
/// number of demand-restricted copies made (0: nothing changed).
///
/// A copy asked for by a rule that depends on the moves is itself computed per move, so readings from
/// per-move rules get copies of their own: a per-state reader (`legal`) never waits for a move.
pub(crate) fn demand(
    p: &mut Program,
    roots: &[RelId],
    eligible: &[bool],
    per_move: &[bool],
    lean: &Lean,
) -> usize {
    let mut eligible = eligible.to_vec();
    // A copy can close a cycle through negation that the plain rules did not have (a demand that
    // reads the reading it restricts). The relations behind such a cycle stay bottom-up; a few rounds
    // settle it.
    for _ in 0..64 {
        let mut q = p.clone();
        let origin = rewrite(&mut q, roots, &eligible, per_move, lean);
        if origin.is_empty() {
            return 0;
        }
        let culprits = unstratified(&q, &origin);
        if culprits.is_empty() {
            *p = q;
            return origin.len() / 2;
        }
        for r in culprits {
            eligible[r.0 as usize] = false;
        }
    }
    0
}

/// The relations whose copies lie on a cycle through negation in `q` (`origin` maps each copy and
/// demand relation to the relation it restricts).
fn unstratified(q: &Program, origin: &HashMap<RelId, RelId>) -> Vec<RelId> {
    let n = q.relations.len();
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
    for r in &q.rules {
        for l in &r.body {
            if let Lit::Pos(a) | Lit::Neg(a) = l {
                deps[r.head.rel.0 as usize].push((a.rel.0 as usize, matches!(l, Lit::Neg(_))));
            }
        }
    }
    let sccs = tarjan(n, &deps);
    let comp = component_of(n, &sccs);
    let mut culprits = Vec::new();
    let add = |r: usize, culprits: &mut Vec<RelId>| {
        if let Some(&o) = origin.get(&RelId(r as u32)) {
            if !culprits.contains(&o) {
                culprits.push(o);
            }
        }
    };
    for c in &sccs {
        // The relations read negatively inside the cycle: computed in full, they leave it (a copy
        // shared by a positive and a negative reading is the usual case: mummy maze's `lessthan`).
        let before = culprits.len();
        let mut negative_inside = false;
        for &h in c {
            for &(b, neg) in &deps[h] {
                if neg && comp[b] == comp[h] {
                    negative_inside = true;
                    add(b, &mut culprits);
                }
            }
        }
        // When no copy is read negatively the cycle runs through plain relations: its copies go.
        if negative_inside && culprits.len() == before {
            for &r in c {
                add(r, &mut culprits);
            }
        }
    }
    culprits
}

/// One rewrite with the given eligible relations; returns the relation each copy and demand
/// relation restricts (empty: nothing changed).
fn rewrite(
    p: &mut Program,
    roots: &[RelId],
    eligible: &[bool],
    per_move: &[bool],
    lean: &Lean,
) -> HashMap<RelId, RelId> {
    let n = p.relations.len();
    let mut by_head: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, r) in p.rules.iter().enumerate() {
        by_head[r.head.rel.0 as usize].push(i);
    }
    let is_eligible =
        |r: RelId| eligible.get(r.0 as usize).copied().unwrap_or(false) && !roots.contains(&r);
    let original = std::mem::take(&mut p.rules);
    let mut rw = Rewriter {
        p,
        copies: HashMap::new(),
        work: Vec::new(),
        plain_wanted: vec![false; n],
        out: Vec::new(),
        lean: lean.clone(),
    };
    // Every relation that is not eligible keeps its rules, with their readings rewritten.
    for (i, r) in original.iter().enumerate() {
        if !is_eligible(r.head.rel) {
            let moves = per_move
                .get(r.head.rel.0 as usize)
                .copied()
                .unwrap_or(false);
            rw.rewrite_rule(&original[i], None, moves, &is_eligible);
        }
    }
    let mut done_plain = vec![false; n];
    loop {
        if let Some((rel, adorn, moves, copy, magic)) = rw.work.pop() {
            for &ri in &by_head[rel.0 as usize] {
                rw.rewrite_rule(
                    &original[ri],
                    Some((&adorn, copy, magic)),
                    moves,
                    &is_eligible,
                );
            }
            continue;
        }
        // An eligible relation also read with every argument free is computed in full.
        let Some(rel) = (0..n).find(|&r| rw.plain_wanted[r] && !done_plain[r]) else {
            break;
        };
        done_plain[rel] = true;
        let moves = per_move.get(rel).copied().unwrap_or(false);
        for &ri in &by_head[rel] {
            rw.rewrite_rule(&original[ri], None, moves, &is_eligible);
        }
    }
    let mut origin = HashMap::new();
    for ((rel, _, _), (copy, magic)) in &rw.copies {
        origin.insert(*copy, *rel);
        origin.insert(*magic, *rel);
    }
    p.rules = rw.out;
    if !origin.is_empty() {
        super::rewrite::prune_to(p, roots);
    }
    origin
}

/// A demand-restricted copy waiting for its rules: relation, adornment, asked per move, copy, demand
/// relation.
type Pending = (RelId, Vec<bool>, bool, RelId, RelId);

struct Rewriter<'a> {
    p: &'a mut Program,
    /// (relation, adornment, asked per move) → (restricted copy, its demand relation).
    copies: HashMap<(RelId, Vec<bool>, bool), (RelId, RelId)>,
    work: Vec<Pending>,
    plain_wanted: Vec<bool>,
    out: Vec<Rule>,
    lean: Lean,
}

/// What a demand rule reads of the literals before the reading it serves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Lean {
    /// All of them: the narrowest demand, what a per-state evaluation wants.
    Full,
    /// Only those that bind the asked arguments (and the filters they make ready): a wider demand,
    /// but never a join of literals unrelated to what is asked. The grounder's choice: its relaxed
    /// fixpoint takes every state at once, where chess's frame rule `cell ?x ?y ?p` next to a move
    /// would otherwise ask about every cell for every move.
    ///
    /// The body is also read cheapest literal first rather than tables first, by the number of facts
    /// of each relation that is not restricted (by [`RelId`] index, `None` when unknown): a table with
    /// free columns (chess's `different_cells ?cx ?cy ?u ?v`) would otherwise ask about every row.
    ///
    /// In a restricted copy's rule, a reading is asked only the arguments its rule's own demand
    /// reaches through shared variables; the others are read (see `Rewriter::reading`).
    Binding(Vec<Option<f64>>),
}

/// The arguments an adornment marks bound: a demand relation's columns.
fn bound_args(args: &[Pat], adorn: &[bool]) -> Vec<Pat> {
    args.iter()
        .zip(adorn)
        .filter(|(_, &b)| b)
        .map(|(a, _)| a.clone())
        .collect()
}

impl Rewriter<'_> {
    /// The copy of `rel` for adornment `adorn` (made and queued on first use).
    fn copy_of(&mut self, rel: RelId, adorn: &[bool], moves: bool) -> (RelId, RelId) {
        if let Some(&c) = self.copies.get(&(rel, adorn.to_vec(), moves)) {
            return c;
        }
        let name = self
            .p
            .terms
            .name(self.p.relations[rel.0 as usize].name)
            .to_string();
        let arity = adorn.len();
        let mut tag: String = adorn.iter().map(|&b| if b { 'b' } else { 'f' }).collect();
        if moves {
            tag.push_str("#move");
        }
        let copy = self
            .p
            .add_generated(Origin::DemandCopy, &format!("{name}#{tag}"), arity);
        let bound = adorn.iter().filter(|&&b| b).count();
        let magic = self.p.add_generated(
            Origin::Demand,
            &format!("{DEMAND_PREFIX}{name}#{tag}"),
            bound,
        );
        self.copies
            .insert((rel, adorn.to_vec(), moves), (copy, magic));
        self.work.push((rel, adorn.to_vec(), moves, copy, magic));
        (copy, magic)
    }

    /// Emits `rule` (plain when `head` is `None`, else as the rule of a restricted copy) with its
    /// readings of eligible relations rewritten, and the demand rules those readings need.
    fn rewrite_rule(
        &mut self,
        rule: &Rule,
        head: Option<(&[bool], RelId, RelId)>,
        moves: bool,
        is_eligible: &impl Fn(RelId) -> bool,
    ) {
        let nv = rule.var_names.len();
        let mut bound = vec![false; nv];
        // The guard: the demand for this copy, over the head's bound arguments.
        let mut guard: Vec<Lit> = Vec::new();
        let mut new_head = rule.head.clone();
        if let Some((adorn, copy, magic)) = head {
            let args = bound_args(&rule.head.args, adorn);
            args.iter().for_each(|a| a.bind_vars(&mut bound));
            guard.push(Lit::Pos(IrAtom { rel: magic, args }));
            new_head.rel = copy;
        }
        // Sideways information passing: literals of relations computed in full first (they only
        // narrow what is asked), then the eligible readings in written order; filters as soon as
        // their variables are known.
        let positive = |i: usize| matches!(&rule.body[i], Lit::Pos(_));
        let eligible_at =
            |i: usize| matches!(&rule.body[i], Lit::Pos(a) | Lit::Neg(a) if is_eligible(a.rel));
        let mut pending: Vec<usize> = (0..rule.body.len())
            .filter(|&i| positive(i) && !eligible_at(i))
            .chain((0..rule.body.len()).filter(|&i| positive(i) && eligible_at(i)))
            .collect();
        let mut filters: Vec<usize> = (0..rule.body.len()).filter(|&i| !positive(i)).collect();
        let mut body: Vec<Lit> = guard.clone();
        // The prefix every demand rule reads: the guard and the rewritten positive literals and
        // filters placed so far.
        let mut prefix: Vec<Lit> = guard;
        loop {
            // Filters whose variables are known (comparisons and arithmetic; negations wait for the
            // end, when every positive literal has bound what it can).
            let mut i = 0;
            while i < filters.len() {
                let l = &rule.body[filters[i]];
                if !matches!(l, Lit::Neg(_)) && l.filter_ready(&bound) {
                    let fi = filters.remove(i);
                    rule.body[fi].bind_vars(&mut bound);
                    body.push(rule.body[fi].clone());
                    prefix.push(rule.body[fi].clone());
                } else {
                    i += 1;
                }
            }
            if pending.is_empty() {
                break;
            }
            let li = match &self.lean {
                Lean::Full => pending.remove(0),
                // The literal with the most arguments known, a reading to restrict before a table
                // on a tie: a table read with free columns (chess's `different_cells ?cx ?cy ?u ?v`)
                // would otherwise ask about every row of it.
                Lean::Binding(sizes) => {
                    // Expected rows: a relation of `n` facts with `b` of `a` columns known gives
                    // n^((a-b)/a); an unknown restricted relation is taken as 1000 facts, an input
                    // (`true`, `does`) as 8, as it binds from the state what any reading would.
                    let cost = |i: usize| match &rule.body[i] {
                        Lit::Pos(a) if !a.args.is_empty() => {
                            let n = match sizes.get(a.rel.0 as usize).copied().flatten() {
                                Some(n) => n.max(1.0),
                                None if eligible_at(i) => 1000.0,
                                None => 8.0,
                            };
                            let b = a.args.iter().filter(|x| x.is_bound(&bound)).count();
                            n.powf((a.args.len() - b) as f64 / a.args.len() as f64)
                        }
                        _ => 1.0,
                    };
                    let mut best = 0;
                    for k in 1..pending.len() {
                        if cost(pending[k]) < cost(pending[best]) {
                            best = k;
                        }
                    }
                    pending.remove(best)
                }
            };
            let Lit::Pos(a) = &rule.body[li] else {
                unreachable!("pending holds positive literals")
            };
            let lit = Lit::Pos(self.reading(a, &bound, &prefix, rule, moves, is_eligible));
            a.args.iter().for_each(|x| x.bind_vars(&mut bound));
            body.push(lit.clone());
            prefix.push(lit);
        }
        // Negations last, asked with whatever the whole positive body binds.
        for fi in filters {
            match &rule.body[fi] {
                Lit::Neg(a) => {
                    let a = self.reading(a, &bound, &prefix, rule, moves, is_eligible);
                    body.push(Lit::Neg(a));
                }
                other => body.push(other.clone()),
            }
        }
        self.out.push(Rule {
            head: new_head,
            body,
            var_names: rule.var_names.clone(),
        });
    }

    /// The demand a rule of a restricted copy reads first (its guard), if `prefix` starts with one.
    fn guard_of<'p>(&self, prefix: &'p [Lit]) -> Option<&'p Lit> {
        match prefix.first() {
            Some(l @ Lit::Pos(a)) if self.p.origin(a.rel) == Origin::Demand => Some(l),
            _ => None,
        }
    }

    /// The atom a reading of `a` becomes, after `prefix` has bound `bound`; emits its demand rule.
    fn reading(
        &mut self,
        a: &IrAtom,
        bound: &[bool],
        prefix: &[Lit],
        rule: &Rule,
        moves: bool,
        is_eligible: &impl Fn(RelId) -> bool,
    ) -> IrAtom {
        if !is_eligible(a.rel) {
            return a.clone();
        }
        let mut adorn: Vec<bool> = a.args.iter().map(|x| x.is_bound(bound)).collect();
        if let (Lean::Binding(_), Some(guard)) = (&self.lean, self.guard_of(prefix)) {
            let nv = rule.var_names.len();
            let binding = binding_literals(prefix, &bound_args(&a.args, &adorn), nv);
            let asked = joined_with(guard, &binding, nv);
            // Arguments the asked arguments do not reach through a shared variable would make the
            // demand a product of unrelated sets (mummy maze's "where does this move lead", asked
            // for every move of the demand and every square the explorer may stand on: 832,320
            // rows for 13,005 moves): they are read, not asked.
            for (b, x) in adorn.iter_mut().zip(&a.args) {
                x.each_var(&mut |v| *b &= asked[v as usize]);
            }
        }
        if !adorn.iter().any(|&b| b) {
            self.plain_wanted[a.rel.0 as usize] = true;
            return a.clone();
        }
        let (copy, magic) = self.copy_of(a.rel, &adorn, moves);
        let args = bound_args(&a.args, &adorn);
        let body = match &self.lean {
            Lean::Full => prefix.to_vec(),
            Lean::Binding(_) => binding_literals(prefix, &args, rule.var_names.len()),
        };
        let demand_rule = Rule {
            head: IrAtom { rel: magic, args },
            body,
            var_names: rule.var_names.clone(),
        };
        // A reading that asks what its own rule was asked (the recursion of `clear(?u, ?v, ?y)`
        // once its step is read, not asked) adds nothing to the demand.
        let asks_itself = matches!(&demand_rule.body[..], [Lit::Pos(g)] if *g == demand_rule.head);
        if !asks_itself && !self.out.contains(&demand_rule) {
            self.out.push(demand_rule);
        }
        IrAtom {
            rel: copy,
            args: a.args.clone(),
        }
    }
}

/// The variables of `literals` (a demand rule's body) that `guard` reaches through shared
/// variables, its own among them.
fn joined_with(guard: &Lit, literals: &[Lit], nv: usize) -> Vec<bool> {
    let mut reached = vec![false; nv];
    guard.bind_vars(&mut reached);
    let mut left: Vec<Vec<u32>> = literals
        .iter()
        .map(|l| {
            let mut vars = Vec::new();
            l.each_var(&mut |v| vars.push(v));
            vars
        })
        .collect();
    // Each pass takes in the literals that share a variable with what is reached, until none does.
    loop {
        let before = left.len();
        left.retain(|vars| {
            if !vars.iter().any(|&v| reached[v as usize]) {
                return true;
            }
            vars.iter().for_each(|&v| reached[v as usize] = true);
            false
        });
        if left.len() == before {
            return reached;
        }
    }
}

/// The literals of `prefix` (in order) that bind the variables of `args`: a positive literal when it
/// binds one of them not bound yet, then every filter whose variables the chosen ones bind. A
/// comparison or arithmetic that binds a variable needs its inputs, so those are asked for too.
fn binding_literals(prefix: &[Lit], args: &[Pat], nv: usize) -> Vec<Lit> {
    let mut needed = vec![false; nv];
    args.iter().for_each(|a| a.bind_vars(&mut needed));
    let mut bound = vec![false; nv];
    let mut chosen = vec![false; prefix.len()];
    // Backwards first, for what filters bind, so that their inputs are needed before the literals
    // that bind them are met going forwards.
    for (i, l) in prefix.iter().enumerate().rev() {
        let mut binds = false;
        match l {
            Lit::Arith(_, _, _, z) => z.each_var(&mut |v| binds |= needed[v as usize]),
            Lit::Cmp(Cmp::Same, x, y) => {
                x.each_var(&mut |v| binds |= needed[v as usize]);
                y.each_var(&mut |v| binds |= needed[v as usize]);
            }
            _ => {}
        }
        if binds {
            chosen[i] = true;
            if let Lit::Arith(_, x, y, _) | Lit::Cmp(_, x, y) = l {
                x.bind_vars(&mut needed);
                y.bind_vars(&mut needed);
            }
        }
    }
    for (i, l) in prefix.iter().enumerate() {
        if let Lit::Pos(a) = l {
            let mut fresh = false;
            for x in &a.args {
                x.each_var(&mut |v| fresh |= needed[v as usize] && !bound[v as usize]);
            }
            if fresh {
                chosen[i] = true;
                a.args.iter().for_each(|x| x.bind_vars(&mut bound));
            }
        } else if chosen[i] {
            l.bind_vars(&mut bound);
        }
    }
    let body: Vec<Lit> = prefix
        .iter()
        .enumerate()
        .filter(|&(i, l)| chosen[i] || (!matches!(l, Lit::Pos(_)) && l.filter_ready(&bound)))
        .map(|(_, l)| l.clone())
        .collect();
    // Whatever the subset misses (a variable only a comparison binds from another one) is
    // asked with the whole prefix instead.
    let mut safe = vec![false; nv];
    body.iter().for_each(|l| l.bind_vars(&mut safe));
    let mut ok = true;
    args.iter()
        .for_each(|a| a.each_var(&mut |v| ok &= safe[v as usize]));
    if ok {
        body
    } else {
        prefix.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    /// The program after [`demand`], with every relation that reads `true` or `does` (directly or not)
    /// eligible and `roots` computed in full.
    fn demanded(src: &str, roots: &[&str]) -> String {
        demanded_with(src, roots, &Lean::Full)
    }

    fn demanded_with(src: &str, roots: &[&str], lean: &Lean) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let named = |p: &Program, n: &str| {
            p.relations
                .iter()
                .position(|r| p.terms.name(r.name) == n)
                .map(|i| RelId(i as u32))
        };
        let reads = |p: &Program, from: &[&str]| {
            let mut on = vec![false; p.relations.len()];
            for n in from {
                if let Some(r) = named(p, n) {
                    on[r.0 as usize] = true;
                }
            }
            for _ in 0..p.relations.len() {
                for r in &p.rules {
                    if r.body
                        .iter()
                        .any(|l| matches!(l, Lit::Pos(a) | Lit::Neg(a) if on[a.rel.0 as usize]))
                    {
                        on[r.head.rel.0 as usize] = true;
                    }
                }
            }
            on
        };
        let eligible = reads(&p, &["true", "does"]);
        let per_move = reads(&p, &["does"]);
        let roots: Vec<RelId> = roots.iter().filter_map(|n| named(&p, n)).collect();
        demand(&mut p, &roots, &eligible, &per_move, lean);
        p.to_string()
    }

    fn check(src: &str, roots: &[&str], expected: &str) {
        assert_eq!(demanded(src, roots).trim(), expected.trim(), "for\n{src}");
    }

    #[test]
    fn readings_with_known_arguments_get_restricted_copies() {
        // Chess's pattern: "is the path clear, ignoring cell ?i", asked for one ?i at a time. The
        // recursion passes the demand along; `legal` itself is computed in full.
        check(
            "(role r) (succ 1 2) (succ 2 3) \
             (<= (clear ?a ?b ?i) (succ ?a ?b) (true (cell ?i))) \
             (<= (clear ?a ?c ?i) (succ ?a ?b) (true (empty ?b)) (clear ?b ?c ?i)) \
             (<= (legal r (go ?i)) (true (cell ?i)) (clear 1 3 ?i))",
            &["legal", "true", "does", "role"],
            "role(r).\nsucc(1, 2).\nsucc(2, 3).\n\
             demand#clear#bbb(1, 3, ?i) :- true(cell(?i)).\n\
             legal(r, go(?i)) :- true(cell(?i)), clear#bbb(1, 3, ?i).\n\
             clear#bbb(?a, ?b, ?i) :- demand#clear#bbb(?a, ?b, ?i), succ(?a, ?b), true(cell(?i)).\n\
             demand#clear#bbb(?b, ?c, ?i) :- demand#clear#bbb(?a, ?c, ?i), succ(?a, ?b), \
             true(empty(?b)).\n\
             clear#bbb(?a, ?c, ?i) :- demand#clear#bbb(?a, ?c, ?i), succ(?a, ?b), true(empty(?b)), \
             clear#bbb(?b, ?c, ?i).",
        );
    }

    #[test]
    fn binding_demand_reads_only_what_binds_the_asked_arguments() {
        // Chess's frame rule in small: the negated reading's arguments all come from the move, so
        // its demand does not pair every move with every cell as the full prefix would.
        let src = "(role r) \
             (<= (special ?f ?t) (true (cell ?f)) (true (cell ?t))) \
             (<= (next (cell ?x)) (does r (move ?f ?t)) (true (cell ?x)) (not (special ?f ?t)))";
        let roots = ["next", "true", "does", "role"];
        let full = demanded(src, &roots);
        assert!(full
            .contains("demand#special#bb#move(?f, ?t) :- does(r, move(?f, ?t)), true(cell(?x))."));
        let lean = demanded_with(src, &roots, &Lean::Binding(Vec::new()));
        assert!(
            lean.contains("demand#special#bb#move(?f, ?t) :- does(r, move(?f, ?t)).\n"),
            "{lean}"
        );
    }

    #[test]
    fn binding_demand_asks_only_what_reaches_the_asked_arguments() {
        // Mummy maze's pattern: "where does move ?d from ?x lead", read with ?x from the state and
        // ?d, ?y from what is asked. Asking for all three would pair every asked move with every
        // square the state may hold; ?x, which nothing asked reaches, is read instead.
        let src = "(role r) \
             (<= (lands ?x ?d ?y) (true (open ?x ?d ?y))) \
             (<= (reached ?d ?y) (true (at ?x)) (lands ?x ?d ?y)) \
             (<= (legal r (go ?d)) (true (target ?y)) (true (dir ?d)) (reached ?d ?y))";
        let roots = ["legal", "true", "does", "role"];
        let lean = demanded_with(src, &roots, &Lean::Binding(Vec::new()));
        assert!(
            lean.contains("demand#lands#fbb(?d, ?y) :- demand#reached#bb(?d, ?y).\n")
                && lean.contains(
                    "reached#bb(?d, ?y) :- demand#reached#bb(?d, ?y), true(at(?x)), \
                     lands#fbb(?x, ?d, ?y).\n"
                )
                && !lean.contains("lands#bbb"),
            "{lean}"
        );
        // A reading with no demand of its own to start from (a rule computed in full) keeps
        // everything it knows: `legal` asks `reached` for every target and direction.
        assert!(
            lean.contains("demand#reached#bb(?d, ?y) :- true(target(?y)), true(dir(?d)).\n"),
            "{lean}"
        );
        // The full demand of a per-state evaluation asks for all three.
        assert!(demanded(src, &roots).contains("lands#bbb"));
    }

    #[test]
    fn a_recursive_reading_asked_only_what_its_rule_was_asked_adds_no_demand_rule() {
        // Chess's `clear_column` in small: the step `?w` is read from a table no asked argument
        // reaches, so the recursive reading is asked what the rule was, and no
        // `demand#clear#bfb(?u, ?y) :- demand#clear#bfb(?u, ?y)` is made.
        let src = "(role r) (succ 1 2) (succ 2 3) \
             (<= (clear ?u ?v ?y) (succ ?v ?y) (true (file ?u))) \
             (<= (clear ?u ?v ?y) (succ ?v ?w) (true (empty ?u ?w)) (clear ?u ?w ?y)) \
             (<= (legal r (go ?u ?v)) (true (piece ?u ?y)) (clear ?u ?v ?y))";
        let roots = ["legal", "true", "does", "role"];
        let lean = demanded_with(src, &roots, &Lean::Binding(Vec::new()));
        assert!(
            lean.contains(
                "clear#bfb(?u, ?v, ?y) :- demand#clear#bfb(?u, ?y), succ(?v, ?w), \
                 true(empty(?u, ?w)), clear#bfb(?u, ?w, ?y).\n"
            ) && !lean.contains("demand#clear#bfb(?u, ?y) :- demand#clear#bfb(?u, ?y)."),
            "{lean}"
        );
    }

    #[test]
    fn negated_and_free_readings() {
        // A negated reading is asked with what the positive body binds; a reading with every
        // argument free keeps the relation whole; a per-move reader gets its own copy.
        check(
            "(role r) \
             (<= (open ?x) (true (cell ?x blank))) \
             (<= (legal r (mark ?x)) (true (cell ?x ?v)) (not (open ?x))) \
             (<= (legal r any) (open ?y)) \
             (<= (next (cell ?x o)) (does r (mark ?x)) (open ?x))",
            &["legal", "next", "true", "does", "role"],
            "role(r).\n\
             demand#open#b(?x) :- true(cell(?x, ?v)).\n\
             legal(r, mark(?x)) :- true(cell(?x, ?v)), ~open#b(?x).\n\
             legal(r, any) :- open(?y).\n\
             demand#open#b#move(?x) :- does(r, mark(?x)).\n\
             next(cell(?x, o)) :- does(r, mark(?x)), open#b#move(?x).\n\
             open#b#move(?x) :- demand#open#b#move(?x), true(cell(?x, blank)).\n\
             open#b(?x) :- demand#open#b(?x), true(cell(?x, blank)).\n\
             open(?x) :- true(cell(?x, blank)).",
        );
    }

    #[test]
    fn a_copy_that_would_break_stratification_stays_bottom_up() {
        // `legal` asks `q` about what `p` answered, and `p` negates `q`: one copy of `q` would serve
        // both, its demand reading `p` and `p` negating it. The negated relation of that cycle, `q`,
        // stays whole, which breaks the cycle; `p` is still restricted (mummy maze's `lessthan`,
        // read both ways by its direction table, is the corpus case).
        check(
            "(role r) \
             (<= (q ?x) (true (cell ?x)) (true (mark ?x))) \
             (<= (p ?x) (true (cell ?x)) (not (q ?x))) \
             (<= (legal r (a ?x)) (true (cell ?x)) (p ?x) (q ?x))",
            &["legal", "true", "does", "role"],
            "role(r).\n\
             q(?x) :- true(cell(?x)), true(mark(?x)).\n\
             demand#p#b(?x) :- true(cell(?x)), q(?x).\n\
             legal(r, a(?x)) :- true(cell(?x)), q(?x), p#b(?x).\n\
             p#b(?x) :- demand#p#b(?x), true(cell(?x)), ~q(?x).",
        );
    }
}
