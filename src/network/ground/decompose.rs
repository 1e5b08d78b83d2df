//! Rule decomposition: variables that only some conditions share are projected away first.
//!
//! The main entry point is [`eliminate_variables`]. A rule's ground instances are the combinations of
//! all its variables' values, even of variables that only link two of its conditions. Chess's frame
//! rule keeps a cell unless the move starts or ends there:
//!
//! ```text
//! nextcell(?x, ?y, ?p) :- does(?r, move(?pc, ?x1, ?y1, ?x2, ?y2)), truecell(?x, ?y, ?p),
//!                        different_cells(?x, ?y, ?x1, ?y1), different_cells(?x, ?y, ?x2, ?y2).
//! ```
//!
//! Grounded as written, that is one instance per cell content and per move, eleven million. Each group of
//! variables read by the same conditions (`?r ?pc`: only `does`; then `?x1 ?y1`: the move and the first
//! `different_cells`) becomes a relation of its own over the variables it shares with the rest, as a
//! variable is summed out of a product of factors:
//!
//! ```text
//! elim#1(?x1, ?y1, ?x2, ?y2) :- does(?r, move(?pc, ?x1, ?y1, ?x2, ?y2)).
//! elim#2(?x2, ?y2, ?x, ?y)   :- elim#1(?x1, ?y1, ?x2, ?y2), different_cells(?x, ?y, ?x1, ?y1).
//! ...
//! ```
//!
//! The facts are the same; the ground instances (and the network's gates) are a few hundred thousand.
//! A negation or a built-in goes into a projection only with every variable it reads bound there, and
//! identical projections from different rules are one relation.
//!
//! A negation that reads the rule's own variables as well stops that: chess's `legal` reads the king's
//! square `?kx ?ky` only in `piece_owner_type`/`cell` and in `not threatened(?player, ?kx, ?ky, ?u, ?v)`,
//! which also needs the move's source. The network's grounding runs a second, copying pass
//! ([`eliminate_variables_as`] with `copying`): the projection reads a copy of the condition binding
//! `?u ?v` (itself projected onto what the group reads, a "domain" relation, see
//! [`is_domain_relation`]), so each legal move no longer has one instance per square of the king.
//! Before any projection, [`merge_alternatives`] undoes what an `or` became, two rules alike but for
//! one condition, so that what they share is projected (and asked about, and grounded) once; rules
//! with nothing else to share are left as they are.

use hashbrown::HashMap;

use crate::datalog::ir::{IrAtom, Lit, Origin, Pat, Program, RelId, Rule};

/// How the name of a projection relation starts.
const PREFIX: &str = "elim#";

/// How the name of a copy's relation starts (see [`Group::copies`]).
const DOMAIN_PREFIX: &str = "domain#";

/// Whether `rel` is the relation of a copied condition: read only by projections, and only to bind
/// their variables. Every rule reading such a projection (directly or through further projections of
/// the same body) reads the copied condition itself, so a network may leave the copy out of the
/// projection's instances: the rule's result is the same. Known by its [`Origin`], never its name.
pub(crate) fn is_domain_relation(p: &Program, rel: RelId) -> bool {
    p.origin(rel) == Origin::Domain
}

/// Projects, in the rules whose head relation is marked in `eligible` (by [`RelId`] index), every group
/// of variables that not all conditions read (see the module documentation). Returns the number of
/// relations made.
pub(crate) fn eliminate_variables(p: &mut Program, eligible: &[bool]) -> usize {
    eliminate_variables_as(p, eligible, PREFIX, Origin::Eliminated, false)
}

/// [`eliminate_variables`] naming the relations it makes `{prefix}{n}` (of `origin`: a projection of
/// demand rules is a demand relation itself); with `copying`, a group whose
/// negation reads variables bound only outside it reads copies of the conditions binding them (see
/// [`Group::copies`]).
pub(crate) fn eliminate_variables_as(
    p: &mut Program,
    eligible: &[bool],
    prefix: &str,
    origin: Origin,
    copying: bool,
) -> usize {
    let mut made: HashMap<String, RelId> = HashMap::new();
    let mut rules = std::mem::take(&mut p.rules);
    let mut extra = Vec::new();
    // The relation a projection rule defines: an identical one made before, or a new one. A copy's
    // is named (and keyed) apart: it is read for its domain only (see `is_domain_relation`).
    let mut relation_of =
        |(mut aux, key): (Rule, String), copy: bool, p: &mut Program, extra: &mut Vec<Rule>| {
            let n = made.len() + 1;
            let (prefix, key, origin) = match copy {
                true => (
                    DOMAIN_PREFIX,
                    format!("{DOMAIN_PREFIX}{key}"),
                    Origin::Domain,
                ),
                false => (prefix, key, origin),
            };
            *made.entry(key).or_insert_with(|| {
                let r = p.add_fresh(origin, &format!("{prefix}{n}"), aux.head.args.len());
                aux.head.rel = r;
                extra.push(aux);
                r
            })
        };
    for rule in &mut rules {
        if !eligible
            .get(rule.head.rel.0 as usize)
            .copied()
            .unwrap_or(false)
        {
            continue;
        }
        // The copying pass starts only where a negation stopped the plain one.
        let mut plain = !copying;
        while let Some(Group {
            conds,
            copies,
            keep,
        }) = best_group(rule, copying, plain)
        {
            plain = true;
            let mut body: Vec<Lit> = conds.iter().map(|&i| rule.body[i].clone()).collect();
            for (j, args) in &copies {
                let copy = projection(rule, &rule.body[*j..=*j], args);
                let rel = relation_of(copy, true, p, &mut extra);
                body.push(Lit::Pos(var_atom(rel, args)));
            }
            let rel = relation_of(projection(rule, &body, &keep), false, p, &mut extra);
            // The reading takes the place of the group's first condition, or comes after the
            // conditions it copies: a demand for what they bind must not wait for the projection's
            // negations.
            let at = copies
                .iter()
                .map(|c| c.0)
                .max()
                .map_or(conds[0], |c| c.max(conds[0]));
            let mut body = Vec::with_capacity(rule.body.len() - conds.len() + 1);
            for (i, l) in rule.body.iter().enumerate() {
                if !conds.contains(&i) {
                    body.push(l.clone());
                }
                if i == at {
                    body.push(Lit::Pos(var_atom(rel, &keep)));
                }
            }
            rule.body = body;
        }
    }
    rules.extend(extra);
    p.rules = rules;
    made.len()
}

/// The atom of `rel` over the variables `args`: how a projection is read.
fn var_atom(rel: RelId, args: &[u32]) -> IrAtom {
    IrAtom {
        rel,
        args: args.iter().map(|&v| Pat::Var(v)).collect(),
    }
}

/// How the name of a relation made by [`merge_alternatives`] starts.
const EITHER_PREFIX: &str = "either#";

/// Merges rules of an `eligible` head that are the same but for one positive condition reading the
/// same variables (what an `or` in one rule becomes: chess's `legal` blocking a check by a rook or by a
/// queen) into one rule reading a relation with one rule per alternative condition. The conditions
/// they share are then grounded and compiled once, not once per alternative. Returns the number of
/// relations made.
pub(crate) fn merge_alternatives(p: &mut Program, eligible: &[bool]) -> usize {
    let vars_of = |l: &Lit| {
        let mut v = Vec::new();
        l.each_var(&mut |x| {
            if !v.contains(&x) {
                v.push(x);
            }
        });
        v.sort_unstable();
        v
    };
    // The one condition two rules differ in, when it is positive in both and reads the same variables.
    let differ = |a: &Rule, b: &Rule| -> Option<usize> {
        // Rules of one condition share nothing to merge: the relation would only be a copy of
        // the head's (chess's `queen_move_ig`, a bishop's or a rook's move, once as itself and once
        // as `either#6`, each of its 93,184 rows derived, grounded and compiled twice).
        if a.head != b.head
            || a.body.len() != b.body.len()
            || a.body.len() < 2
            || a.var_names != b.var_names
        {
            return None;
        }
        let mut at = None;
        for (i, (x, y)) in a.body.iter().zip(&b.body).enumerate() {
            if x != y {
                if at.is_some() || !matches!((x, y), (Lit::Pos(_), Lit::Pos(_))) {
                    return None;
                }
                at = Some(i);
            }
        }
        at.filter(|&i| vars_of(&a.body[i]) == vars_of(&b.body[i]))
    };
    let mut rules = std::mem::take(&mut p.rules);
    let mut merged = vec![false; rules.len()];
    let mut extra = Vec::new();
    let mut made: HashMap<Vec<String>, RelId> = HashMap::new();
    for i in 0..rules.len() {
        let head = rules[i].head.rel.0 as usize;
        if merged[i] || !eligible.get(head).copied().unwrap_or(false) {
            continue;
        }
        let Some(at) = (i + 1..rules.len())
            .filter(|&j| !merged[j])
            .find_map(|j| differ(&rules[i], &rules[j]))
        else {
            continue;
        };
        let alike: Vec<usize> = (i + 1..rules.len())
            .filter(|&j| !merged[j] && differ(&rules[i], &rules[j]) == Some(at))
            .collect();
        let args = vars_of(&rules[i].body[at]);
        // The alternatives with their variables numbered as the relation's columns: the same
        // alternatives in another rule make the same relation.
        let mut key: Vec<String> = std::iter::once(&i)
            .chain(&alike)
            .map(|&k| {
                let column = |v: u32| args.iter().position(|&a| a == v).unwrap_or(0) as u32;
                format!("{:?}", renumber_lit(&rules[k].body[at], &mut { column }))
            })
            .collect();
        key.sort_unstable();
        let rel = match made.get(&key) {
            Some(&r) => r,
            None => {
                let r = p.add_fresh(
                    Origin::Either,
                    &format!("{EITHER_PREFIX}{}", made.len() + 1),
                    args.len(),
                );
                let head = var_atom(r, &args);
                for &k in std::iter::once(&i).chain(&alike) {
                    extra.push(Rule {
                        head: head.clone(),
                        body: vec![rules[k].body[at].clone()],
                        var_names: rules[k].var_names.clone(),
                    });
                }
                made.insert(key, r);
                r
            }
        };
        for &k in &alike {
            merged[k] = true;
        }
        rules[i].body[at] = Lit::Pos(var_atom(rel, &args));
    }
    let mut kept: Vec<Rule> = rules
        .into_iter()
        .zip(merged)
        .filter(|(_, m)| !m)
        .map(|(r, _)| r)
        .collect();
    kept.extend(extra);
    p.rules = kept;
    made.len()
}

/// Makes every `eligible` relation (by [`RelId`] index) whose rules are those of another eligible
/// relation, but for the head's name and the variables' names, that relation: its readers read the
/// other, and its own rules go. The demand rewrite makes such twins (chess's `threatened_with_capture`
/// asks three of its projections about the same squares). Returns the number of relations merged.
pub(crate) fn merge_twins(p: &mut Program, eligible: &[bool]) -> usize {
    let mut merged = 0;
    loop {
        // Each relation's rules, written with its head's name left out and the variables numbered in
        // order of appearance.
        let mut text: Vec<Vec<String>> = vec![Vec::new(); p.relations.len()];
        for rule in &p.rules {
            let h = rule.head.rel.0 as usize;
            if !eligible.get(h).copied().unwrap_or(false) {
                continue;
            }
            let mut map: Vec<Option<u32>> = vec![None; rule.var_names.len()];
            let mut next = 0u32;
            let mut number = |v: u32| {
                *map[v as usize].get_or_insert_with(|| {
                    next += 1;
                    next - 1
                })
            };
            let head: Vec<Pat> = rule
                .head
                .args
                .iter()
                .map(|a| renumber(a, &mut number))
                .collect();
            let body: Vec<Lit> = rule
                .body
                .iter()
                .map(|l| renumber_lit(l, &mut number))
                .collect();
            text[h].push(format!("{head:?}{body:?}"));
        }
        let mut first_of: HashMap<Vec<String>, usize> = HashMap::new();
        let mut twin_of: Vec<Option<RelId>> = vec![None; p.relations.len()];
        for (r, t) in text.iter_mut().enumerate() {
            if t.is_empty() {
                continue;
            }
            t.sort_unstable();
            t.push(p.relations[r].arity.to_string());
            match first_of.get(t) {
                Some(&k) => twin_of[r] = Some(RelId(k as u32)),
                None => {
                    first_of.insert(t.clone(), r);
                }
            }
        }
        let round = twin_of.iter().filter(|t| t.is_some()).count();
        if round == 0 {
            return merged;
        }
        merged += round;
        p.rules
            .retain(|rule| twin_of[rule.head.rel.0 as usize].is_none());
        for rule in &mut p.rules {
            for l in &mut rule.body {
                if let Lit::Pos(a) | Lit::Neg(a) = l {
                    if let Some(t) = twin_of[a.rel.0 as usize] {
                        a.rel = t;
                    }
                }
            }
        }
    }
}

/// Conditions of a rule to project together.
struct Group {
    /// The conditions that move into the projection (indexes into the body, ascending).
    conds: Vec<usize>,
    /// Positive conditions that stay in the rule and are also read by the projection, each through
    /// its own projection onto the variables listed: they bind what a negation or a built-in of the
    /// group reads and nothing of the group binds (chess's `legal` asks `not threatened(?player, ?kx,
    /// ?ky, ?u, ?v)` for the king's square, and `?u ?v` come from the move).
    copies: Vec<(usize, Vec<u32>)>,
    /// The variables the projection keeps (sorted).
    keep: Vec<u32>,
}

/// The group of conditions to project next, or `None` when no group is worth it: the one keeping
/// the fewest variables.
fn best_group(rule: &Rule, copying: bool, plain: bool) -> Option<Group> {
    let nv = rule.var_names.len();
    let mut in_head = vec![false; nv];
    rule.head
        .args
        .iter()
        .for_each(|a| a.each_var(&mut |v| in_head[v as usize] = true));
    // Which conditions read each variable.
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nv];
    for (i, l) in rule.body.iter().enumerate() {
        l.each_var(&mut |v| {
            let r = &mut readers[v as usize];
            if r.last() != Some(&i) {
                r.push(i);
            }
        });
    }
    let mut best: Option<Group> = None;
    // The conditions reading one variable; with `copying`, also those linked to them through
    // variables the head does not read (chess's `legal` blocking a check reads the threat's square
    // and the king's with the same conditions: projected together, one relation keeps the move only).
    let mut candidates: Vec<Vec<usize>> = Vec::new();
    for v in (0..nv).filter(|&v| !in_head[v] && !readers[v].is_empty()) {
        candidates.push(readers[v].clone());
        if copying {
            let mut linked = readers[v].clone();
            let mut k = 0;
            while k < linked.len() {
                rule.body[linked[k]].each_var(&mut |w| {
                    if !in_head[w as usize] {
                        for &j in &readers[w as usize] {
                            if !linked.contains(&j) {
                                linked.push(j);
                            }
                        }
                    }
                });
                k += 1;
            }
            linked.sort_unstable();
            if !candidates.contains(&linked) {
                candidates.push(linked);
            }
        }
    }
    for group in &candidates {
        if group.len() == rule.body.len() {
            continue;
        }
        // The projection must be a safe rule: every variable of a negation or a built-in in the
        // group is bound by a positive condition of the group, or by one that reads nothing else
        // (chess's `?cx != ?u` takes `coordinate(?cx)` along), or by a copy of a positive condition
        // outside the group.
        let mut group = group.clone();
        let mut bound = vec![false; nv];
        let mut any_positive = false;
        for &i in &group {
            if let Lit::Pos(a) = &rule.body[i] {
                any_positive = true;
                a.args.iter().for_each(|x| x.bind_vars(&mut bound));
            }
        }
        let mut missing = Vec::new();
        for &i in &group {
            if !matches!(&rule.body[i], Lit::Pos(_)) {
                rule.body[i].each_var(&mut |w| {
                    if !bound[w as usize] && !missing.contains(&w) {
                        missing.push(w);
                    }
                });
            }
        }
        let mut unbound = Vec::new();
        for w in missing {
            let binder = rule.body.iter().enumerate().position(|(i, l)| {
                let (mut only_w, mut reads_w) =
                    (matches!(l, Lit::Pos(_)) && !group.contains(&i), false);
                l.each_var(&mut |x| {
                    only_w &= x == w;
                    reads_w |= x == w;
                });
                only_w && reads_w
            });
            match binder {
                Some(i) => group.push(i),
                None => unbound.push(w),
            }
        }
        group.sort_unstable();
        if !any_positive || group.len() == rule.body.len() {
            continue;
        }
        let copies = match copies_binding(rule, &group, &unbound) {
            // Groups needing copies belong to the copying pass, the others to the plain one (and to
            // the copying pass once it has changed the rule).
            Some(c) if if c.is_empty() { plain } else { copying } => c,
            _ => continue,
        };
        // What the projection keeps: the group's variables that something outside it reads.
        let mut keep: Vec<u32> = Vec::new();
        for &i in &group {
            rule.body[i].each_var(&mut |w| {
                let outside =
                    in_head[w as usize] || readers[w as usize].iter().any(|j| !group.contains(j));
                if outside && !keep.contains(&w) {
                    keep.push(w);
                }
            });
        }
        keep.sort_unstable();
        if best.as_ref().is_none_or(|b| keep.len() < b.keep.len()) {
            best = Some(Group {
                conds: group,
                copies,
                keep,
            });
        }
    }
    best
}

/// Positive conditions outside `group` that together read every variable of `unbound`, each with the
/// variables its copy keeps (those the group reads, or unbound ones), the ones reading the most
/// unbound variables first; `None` when no such conditions exist.
fn copies_binding(rule: &Rule, group: &[usize], unbound: &[u32]) -> Option<Vec<(usize, Vec<u32>)>> {
    let mut wanted = vec![false; rule.var_names.len()];
    for &i in group {
        rule.body[i].each_var(&mut |w| wanted[w as usize] = true);
    }
    let mut left: Vec<u32> = unbound.to_vec();
    let mut copies = Vec::new();
    while !left.is_empty() {
        let (j, _) = rule
            .body
            .iter()
            .enumerate()
            .filter(|(j, l)| matches!(l, Lit::Pos(_)) && !group.contains(j))
            .map(|(j, l)| {
                let (mut covers, mut others) = (0usize, 0usize);
                l.each_var(&mut |x| {
                    if left.contains(&x) {
                        covers += 1;
                    } else {
                        others += 1;
                    }
                });
                (j, (covers, std::cmp::Reverse(others)))
            })
            .filter(|(_, (covers, _))| *covers > 0)
            .max_by_key(|(_, score)| *score)?;
        let mut args = Vec::new();
        rule.body[j].each_var(&mut |x| {
            if (wanted[x as usize] || left.contains(&x)) && !args.contains(&x) {
                args.push(x);
            }
        });
        left.retain(|x| !args.contains(x));
        args.sort_unstable();
        copies.push((j, args));
    }
    Some(copies)
}

/// The projection rule of the conditions `body` of `rule` keeping `args` (variables renumbered from 0
/// in order of first appearance, so that the same projection in two rules is the same rule), and that
/// rule as a key.
fn projection(rule: &Rule, body: &[Lit], args: &[u32]) -> (Rule, String) {
    let mut map: Vec<Option<u32>> = vec![None; rule.var_names.len()];
    let mut names = Vec::new();
    let mut next = 0u32;
    let mut number = |v: u32, names: &mut Vec<_>| -> u32 {
        *map[v as usize].get_or_insert_with(|| {
            names.push(rule.var_names[v as usize]);
            next += 1;
            next - 1
        })
    };
    let body: Vec<Lit> = body
        .iter()
        .map(|l| renumber_lit(l, &mut |v| number(v, &mut names)))
        .collect();
    let head_args: Vec<Pat> = args
        .iter()
        .map(|&v| Pat::Var(number(v, &mut names)))
        .collect();
    let key = format!("{body:?}{head_args:?}");
    (
        Rule {
            head: IrAtom {
                rel: rule.head.rel,
                args: head_args,
            },
            body,
            var_names: names,
        },
        key,
    )
}

fn renumber(p: &Pat, f: &mut impl FnMut(u32) -> u32) -> Pat {
    match p {
        Pat::Var(v) => Pat::Var(f(*v)),
        Pat::Term(t) => Pat::Term(*t),
        Pat::Func(s, args) => Pat::Func(*s, args.iter().map(|a| renumber(a, f)).collect()),
    }
}

fn renumber_atom(a: &IrAtom, f: &mut impl FnMut(u32) -> u32) -> IrAtom {
    IrAtom {
        rel: a.rel,
        args: a.args.iter().map(|x| renumber(x, f)).collect(),
    }
}

fn renumber_lit(l: &Lit, f: &mut impl FnMut(u32) -> u32) -> Lit {
    match l {
        Lit::Pos(a) => Lit::Pos(renumber_atom(a, f)),
        Lit::Neg(a) => Lit::Neg(renumber_atom(a, f)),
        Lit::Cmp(c, x, y) => Lit::Cmp(*c, renumber(x, f), renumber(y, f)),
        Lit::Arith(o, x, y, z) => Lit::Arith(*o, renumber(x, f), renumber(y, f), renumber(z, f)),
        Lit::NotArith(o, x, y, z) => {
            Lit::NotArith(*o, renumber(x, f), renumber(y, f), renumber(z, f))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    /// The program after [`eliminate_variables`] on every rule.
    fn check(src: &str, expected: &str) {
        check_with(
            src,
            |p, all| {
                eliminate_variables(p, all);
            },
            expected,
        );
    }

    /// The program after `rewrite` with every relation eligible.
    fn check_with(src: &str, rewrite: impl Fn(&mut Program, &[bool]), expected: &str) {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let all = vec![true; p.relations.len()];
        rewrite(&mut p, &all);
        assert_eq!(p.to_string().trim(), expected.trim(), "for\n{src}");
    }

    /// The program after the copying pass (see [`Group::copies`]).
    fn check_copying(src: &str, expected: &str) {
        check_with(
            src,
            |p, all| {
                eliminate_variables_as(p, all, "guard#", Origin::Eliminated, true);
            },
            expected,
        );
    }

    #[test]
    fn a_negation_with_the_rules_own_variables_reads_a_copy_of_what_binds_them() {
        // Chess's `legal` in small: the king's square `?k` only matters to the king and the negation,
        // but the negation also reads the move's source `?u`, which the move binds. The projection
        // keeps `?p ?u` and reads the move projected onto them (a domain relation).
        let src = "(<= (legal ?p ?pc ?u ?x) (control ?p) (mv ?p ?pc ?u ?x) (king ?p ?k) \
                   (not (threatened ?p ?k ?u)))";
        // Without copies nothing can move: every group with `?k` holds the negation, which needs `?u`.
        check(
            src,
            "legal(?p, ?pc, ?u, ?x) :- control(?p), mv(?p, ?pc, ?u, ?x), king(?p, ?k), \
             ~threatened(?p, ?k, ?u).",
        );
        check_copying(
            src,
            "legal(?p, ?pc, ?u, ?x) :- control(?p), mv(?p, ?pc, ?u, ?x), guard#2(?p, ?u).\n\
             domain#1(?p, ?u) :- mv(?p, ?pc, ?u, ?x).\n\
             guard#2(?p, ?u) :- king(?p, ?k), ~threatened(?p, ?k, ?u), domain#1(?p, ?u).",
        );
    }

    #[test]
    fn variables_linked_through_conditions_are_projected_together_when_copying() {
        // Blocking a check: the threat's square `?t` and the king's `?k` are read by the same
        // conditions; projected together, one relation keeps the move only.
        check_copying(
            "(<= (legal ?p ?u ?x) (mv ?p ?u ?x) (check ?p ?t) (line ?x ?t ?k) (king ?p ?k) \
                 (not (threat ?p ?t ?k ?u)))",
            "legal(?p, ?u, ?x) :- mv(?p, ?u, ?x), guard#2(?p, ?u, ?x).\n\
             domain#1(?p, ?u, ?x) :- mv(?p, ?u, ?x).\n\
             guard#2(?p, ?u, ?x) :- check(?p, ?t), line(?x, ?t, ?k), king(?p, ?k), ~threat(?p, ?t, ?k, ?u), domain#1(?p, ?u, ?x).",
        );
    }

    #[test]
    fn twin_relations_become_one() {
        // `a` and `b` are the same relation under two names (and other variable names); `c` differs in
        // one argument and stays. Readers of `b` read `a`.
        check_with(
            "(<= (a ?x ?y) (q ?x ?z ?y)) (<= (b ?u ?v) (q ?u ?w ?v)) (<= (c ?u ?v) (q ?v ?w ?u)) \
             (<= (r ?x) (a ?x ?x) (b ?x ?y) (not (c ?y ?y)))",
            |p, all| {
                assert_eq!(merge_twins(p, all), 1);
            },
            "a(?x, ?y) :- q(?x, ?z, ?y).\n\
             c(?u, ?v) :- q(?v, ?w, ?u).\n\
             r(?x) :- a(?x, ?x), a(?x, ?y), ~c(?y, ?y).",
        );
    }

    #[test]
    fn rules_that_differ_in_one_condition_become_one() {
        // An `or` of two conditions over the same variables is two rules after lowering; merged,
        // what they share is read once, and the same `or` elsewhere reads the same relation. Rules
        // that differ in more, or in a negation, stay apart, and so do rules with nothing else to
        // share (`m`).
        check_with(
            "(<= (l ?p ?x) (c ?p) (or (a ?p ?t) (b ?p ?t)) (d ?t ?x)) \
             (<= (k ?s) (or (b ?s ?u) (a ?s ?u)) (d ?u ?u)) \
             (<= (m ?x) (or (a ?x ?y) (b ?y ?x))) \
             (<= (n ?x) (c ?x) (or (a ?x ?x) (not (b ?x ?x))))",
            |p, all| {
                merge_alternatives(p, all);
            },
            "l(?p, ?x) :- c(?p), either#1(?p, ?t), d(?t, ?x).\n\
             k(?s) :- either#1(?s, ?u), d(?u, ?u).\n\
             m(?x) :- a(?x, ?y).\n\
             m(?x) :- b(?y, ?x).\n\
             n(?x) :- c(?x), a(?x, ?x).\n\
             n(?x) :- c(?x), ~b(?x, ?x).\n\
             either#1(?p, ?t) :- a(?p, ?t).\n\
             either#1(?p, ?t) :- b(?p, ?t).",
        );
    }

    #[test]
    fn variables_some_conditions_share_become_relations() {
        // Chess's frame rule in small: the mover only matters to `does`, the piece to `does` and the
        // negation (which goes with the variables it reads), the move's source to that projection and
        // the first `differ`.
        check(
            "(differ a b) (differ b a) \
             (<= (next (cell ?x ?p)) (does ?r (move ?pc ?f ?t)) (true (cell ?x ?p)) \
                 (not (castle ?pc ?f ?t)) (differ ?x ?f) (differ ?x ?t))",
            "differ(a, b).\ndiffer(b, a).\n\
             next(cell(?x, ?p)) :- elim#3(?x), true(cell(?x, ?p)).\n\
             elim#1(?f, ?t) :- does(?r, move(?pc, ?f, ?t)), ~castle(?pc, ?f, ?t).\n\
             elim#2(?x, ?t) :- elim#1(?f, ?t), differ(?x, ?f).\n\
             elim#3(?x) :- elim#2(?x, ?t), differ(?x, ?t).",
        );
    }

    #[test]
    fn a_comparison_takes_the_condition_that_binds_its_other_variable_along() {
        // Chess's unfolded `different_cells`: `?cx != ?u` can go into the projection of `?u` only
        // with `c(?cx)`, the condition that binds `?cx` and reads nothing else.
        check(
            "(<= (t ?o ?cx ?cy ?k) (th ?o ?u ?k) (distinct ?cx ?u) (c ?cx) (c ?u) (c ?cy))",
            "t(?o, ?cx, ?cy, ?k) :- elim#1(?o, ?cx, ?k), c(?cy).\n\
             elim#1(?o, ?cx, ?k) :- th(?o, ?u, ?k), distinct(?cx, ?u), c(?cx), c(?u).",
        );
    }

    #[test]
    fn shared_projections_are_one_relation_and_whole_bodies_stay() {
        // The same projection in two rules is made once; a variable every condition reads, or one
        // a negation reads with a variable bound elsewhere, is left where it is.
        check(
            "(<= (p ?x) (q ?x ?y) (r ?y ?z)) \
             (<= (s ?w) (q ?w ?v) (r ?v ?u)) \
             (<= (t ?x) (q ?x ?y) (r ?y ?x)) \
             (<= (u ?x) (q ?x ?y) (not (r ?y ?x)))",
            "p(?x) :- q(?x, ?y), elim#1(?y).\n\
             s(?w) :- q(?w, ?v), elim#1(?v).\n\
             t(?x) :- q(?x, ?y), r(?y, ?x).\n\
             u(?x) :- q(?x, ?y), ~r(?y, ?x).\n\
             elim#1(?y) :- r(?y, ?z).",
        );
    }
}
