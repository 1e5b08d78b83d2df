//! Rule decomposition: variables that only some conditions share are projected away first.
//!
//! The main entry point is [`eliminate_variables`]. A rule's ground instances are the combinations of
//! all its variables' values, even of variables that only link two of its conditions. Chess's frame
//! rule keeps a cell unless the move starts or ends there:
//!
//! ```text
//! next(cell ?x ?y ?p) :- does(?r, (move ?pc ?x1 ?y1 ?x2 ?y2)), true(cell ?x ?y ?p),
//!                        different_cells(?x, ?y, ?x1, ?y1), different_cells(?x, ?y, ?x2, ?y2).
//! ```
//!
//! Grounded as written, that is one instance per cell content and per move, eleven million. Each group of
//! variables read by the same conditions (`?r ?pc`: only `does`; then `?x1 ?y1`: the move and the first
//! `different_cells`) becomes a relation of its own over the variables it shares with the rest, as a
//! variable is summed out of a product of factors:
//!
//! ```text
//! elim#1(?x1, ?y1, ?x2, ?y2) :- does(?r, (move ?pc ?x1 ?y1 ?x2 ?y2)).
//! elim#2(?x2, ?y2, ?x, ?y)   :- elim#1(?x1, ?y1, ?x2, ?y2), different_cells(?x, ?y, ?x1, ?y1).
//! ...
//! ```
//!
//! The facts are the same; the ground instances (and the network's gates) are a few hundred thousand.
//! A negation or a built-in goes into a projection only with every variable it reads bound there, and
//! identical projections from different rules are one relation.

use hashbrown::HashMap;

use super::ir::{IrAtom, Lit, Pat, Program, RelId, Rule};

/// How the name of a projection relation starts.
const PREFIX: &str = "elim#";

/// Projects, in the rules whose head relation is marked in `eligible` (by [`RelId`] index), every group
/// of variables that not all conditions read (see the module documentation). Returns the number of
/// relations made.
pub(crate) fn eliminate_variables(p: &mut Program, eligible: &[bool]) -> usize {
    eliminate_variables_as(p, eligible, PREFIX)
}

/// [`eliminate_variables`] naming the relations it makes `{prefix}{n}`.
pub(crate) fn eliminate_variables_as(p: &mut Program, eligible: &[bool], prefix: &str) -> usize {
    let mut made: HashMap<String, RelId> = HashMap::new();
    let mut rules = std::mem::take(&mut p.rules);
    let mut extra = Vec::new();
    for rule in &mut rules {
        if !eligible
            .get(rule.head.rel.0 as usize)
            .copied()
            .unwrap_or(false)
        {
            continue;
        }
        while let Some((group, args)) = best_group(rule) {
            let (aux_rule, key) = projection(rule, &group, &args);
            let rel = match made.get(&key) {
                Some(&r) => r,
                None => {
                    let name = format!("{prefix}{}", made.len() + 1);
                    let r = p.add_relation(&name, args.len());
                    made.insert(key, r);
                    let mut aux_rule = aux_rule;
                    aux_rule.head.rel = r;
                    extra.push(aux_rule);
                    r
                }
            };
            let reading = Lit::Pos(IrAtom {
                rel,
                args: args.iter().map(|&v| Pat::Var(v)).collect(),
            });
            let first = group[0];
            let mut body = Vec::with_capacity(rule.body.len() - group.len() + 1);
            for (i, l) in rule.body.iter().enumerate() {
                if i == first {
                    body.push(reading.clone());
                }
                if !group.contains(&i) {
                    body.push(l.clone());
                }
            }
            rule.body = body;
        }
    }
    rules.extend(extra);
    p.rules = rules;
    made.len()
}

/// The group of conditions to project next (indexes into the body) and the variables the projection
/// keeps (sorted), or `None` when no group is worth it: the one keeping the fewest variables.
fn best_group(rule: &Rule) -> Option<(Vec<usize>, Vec<u32>)> {
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
    let mut best: Option<(Vec<usize>, Vec<u32>)> = None;
    for v in 0..nv {
        let group = &readers[v];
        if in_head[v] || group.is_empty() || group.len() == rule.body.len() {
            continue;
        }
        // The projection must be a safe rule: every variable of a negation or a built-in in the
        // group is bound by a positive condition of the group, or by one that reads nothing else
        // (chess's `?cx != ?u` takes `coordinate(?cx)` along).
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
        let mut safe = any_positive;
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
                None => safe = false,
            }
        }
        group.sort_unstable();
        if !safe || group.len() == rule.body.len() {
            continue;
        }
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
        if best.as_ref().is_none_or(|(_, k)| keep.len() < k.len()) {
            best = Some((group, keep));
        }
    }
    best
}

/// The projection rule of `group` keeping `args` (variables renumbered from 0 in order of first
/// appearance, so that the same projection in two rules is the same rule), and that rule as a key.
fn projection(rule: &Rule, group: &[usize], args: &[u32]) -> (Rule, String) {
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
    let body: Vec<Lit> = group
        .iter()
        .map(|&i| renumber_lit(&rule.body[i], &mut |v| number(v, &mut names)))
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lower;
    use crate::syntax::parse_kif;

    /// The program after [`eliminate_variables`] on every rule.
    fn check(src: &str, expected: &str) {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let all = vec![true; p.relations.len()];
        eliminate_variables(&mut p, &all);
        assert_eq!(p.to_string().trim(), expected.trim(), "for\n{src}");
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
             next((cell ?x ?p)) :- elim#3(?x), true((cell ?x ?p)).\n\
             elim#1(?f, ?t) :- does(?r, (move ?pc ?f ?t)), ~castle(?pc, ?f, ?t).\n\
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
