//! Idle arguments: an argument of a state-dependent relation that only carries a value of a static
//! domain along is dropped, and its readers check the domain instead.
//!
//! The entry point is [`drop_idle_arguments`], the last of [`prepare`](super::rewrite::prepare)'s
//! rewrites, so both engines read the smaller program. gdl-perf's `ruleDepthExponential` is the
//! case it is for: `prereq_k(b_k-1, ..., b_0)` holds, for every bit vector alike, when step `k` has
//! come or both `prereq_k+1(..., 0)` and `prereq_k+1(..., 1)` hold, so a bottom-up evaluation
//! derives 2^k facts per step where one would do: the network's load-time analysis derived two
//! million facts (4 s) for a network of 39 gates.
//!
//! Argument `i` of relation `p` is *idle* when, in every rule of `p`, the head's `i`-th argument is a
//! variable `X` found nowhere else in the head, and every condition that mentions `X` is either a
//! static one-argument relation `s(X)` or an idle argument of a relation read positively (`q(..., X,
//! ...)`, `X` the whole argument). Then, by induction over the rules' derivations, `p(..., a, ...)`
//! holds exactly when `p` without that argument holds and `a` lies in the intersection of the static
//! relations found along the way, `D(p, i)` — provided every rule of `p` finds the same set (else
//! the argument's value changes which rule applies, and it stays). So `p` loses the argument, its
//! rules lose `X` and its `s(X)` conditions, and every reading `p(..., t, ...)` with another term
//! `t` there gains the conditions `s(t)` for `s` in `D(p, i)` (static, so decided once).
//!
//! Left alone: the GDL keywords (their arguments are what the game shows), relations read under a
//! negation (`not p(..., t, ...)` would become a disjunction) and static relations (evaluated once at
//! load anyway). A relation keeps its name at its smaller arity: no other relation has that name
//! (lowering refuses a name at two arities, and later stages' relations get fresh names).

use std::collections::BTreeSet;

use crate::datalog::ir::{dynamic_relations, IrAtom, Lit, Pat, Program, RelId};

/// Drops every idle argument of `p` (see the module documentation).
pub fn drop_idle_arguments(p: &mut Program) {
    let Some(idle) = idle_arguments(p) else {
        return;
    };
    if idle.iter().all(Option::is_none) {
        return;
    }
    for rule in &mut p.rules {
        // The rule's own idle variables: what its head carries along in the places that go.
        let mut carried: Vec<u32> = Vec::new();
        if let Some(domains) = &idle[rule.head.rel.0 as usize] {
            for (arg, domain) in rule.head.args.iter().zip(domains) {
                if let (Pat::Var(x), Some(_)) = (arg, domain) {
                    carried.push(*x);
                }
            }
            rule.head.args = kept(&rule.head.args, domains);
        }
        let mut body: Vec<Lit> = Vec::with_capacity(rule.body.len());
        for lit in rule.body.drain(..) {
            match lit {
                Lit::Pos(a) => match &idle[a.rel.0 as usize] {
                    Some(domains) => {
                        for (arg, domain) in a.args.iter().zip(domains) {
                            let Some(domain) = domain else { continue };
                            if matches!(arg, Pat::Var(x) if carried.contains(x)) {
                                continue;
                            }
                            for &s in domain {
                                body.push(Lit::Pos(IrAtom {
                                    rel: s,
                                    args: vec![arg.clone()],
                                }));
                            }
                        }
                        body.push(Lit::Pos(IrAtom {
                            rel: a.rel,
                            args: kept(&a.args, domains),
                        }));
                    }
                    // A domain condition on a carried variable: the readers of the head check it now.
                    None if matches!(&a.args[..], [Pat::Var(x)] if carried.contains(x)) => {}
                    None => body.push(Lit::Pos(a)),
                },
                other => body.push(other),
            }
        }
        // `prereq2(b0, 0), prereq2(b0, 1)` both become `prereq2`: one is enough.
        let mut unique: Vec<Lit> = Vec::with_capacity(body.len());
        for l in body {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        rule.body = unique;
    }
    for (r, domains) in idle.iter().enumerate() {
        if let Some(domains) = domains {
            p.relations[r].arity -= domains.iter().flatten().count();
        }
    }
    // A later stage asking for a generated relation by its name and former arity gets a new one.
    p.generated.retain(|_, r| idle[r.0 as usize].is_none());
}

/// The arguments of `args` whose place is not idle.
fn kept(args: &[Pat], domains: &[Option<Vec<RelId>>]) -> Vec<Pat> {
    args.iter()
        .zip(domains)
        .filter(|(_, d)| d.is_none())
        .map(|(a, _)| a.clone())
        .collect()
}

/// Per argument of a relation, its domain `D(p, i)` when it is idle, `None` when it stays.
type Places = Vec<Option<Vec<RelId>>>;

/// Per relation, `None` when it keeps every argument, else its [`Places`]. `None` for the whole
/// program when it has operation rules.
fn idle_arguments(p: &Program) -> Option<Vec<Option<Places>>> {
    if !p.operations.is_empty() {
        return None;
    }
    let k = p.keywords;
    let inputs: Vec<RelId> = [k.true_, k.does].into_iter().flatten().collect();
    let n = p.relations.len();
    let dynamic = dynamic_relations(p, &inputs, &[]);
    let mut eligible = dynamic.clone();
    for kw in [
        k.role, k.init, k.true_, k.next, k.does, k.legal, k.legal1, k.goal, k.terminal, k.base,
        k.input,
    ]
    .into_iter()
    .flatten()
    {
        eligible[kw.0 as usize] = false;
    }
    let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, r) in p.rules.iter().enumerate() {
        rules_of[r.head.rel.0 as usize].push(i);
        for l in &r.body {
            if let Lit::Neg(a) = l {
                eligible[a.rel.0 as usize] = false;
            }
        }
    }
    let domain_relation =
        |rel: RelId| !dynamic[rel.0 as usize] && p.relations[rel.0 as usize].arity == 1;
    // Candidates: every rule's head has a variable there that it names once.
    let mut idle: Vec<Vec<bool>> = (0..n)
        .map(|r| {
            let arity = p.relations[r].arity;
            if !eligible[r] || rules_of[r].is_empty() {
                return vec![false; arity];
            }
            (0..arity)
                .map(|i| {
                    rules_of[r]
                        .iter()
                        .all(|&ri| head_variable(&p.rules[ri].head, i).is_some())
                })
                .collect()
        })
        .collect();
    loop {
        // Each mention of the variable a domain condition or an idle place.
        let mut changed = true;
        while changed {
            changed = false;
            for r in 0..n {
                for i in 0..idle[r].len() {
                    if idle[r][i]
                        && !rules_of[r].iter().all(|&ri| {
                            let rule = &p.rules[ri];
                            let x =
                                head_variable(&rule.head, i).expect("a candidate's head variable");
                            rule.body
                                .iter()
                                .all(|l| mentions_only_idly(l, x, &idle, domain_relation))
                        })
                    {
                        idle[r][i] = false;
                        changed = true;
                    }
                }
            }
        }
        // The domains, least fixpoint: what each rule finds, united over the rules.
        let mut domains: Vec<Vec<BTreeSet<RelId>>> = idle
            .iter()
            .map(|a| vec![BTreeSet::new(); a.len()])
            .collect();
        let mut growing = true;
        while growing {
            growing = false;
            for r in 0..n {
                for i in 0..idle[r].len() {
                    if !idle[r][i] {
                        continue;
                    }
                    for &ri in &rules_of[r] {
                        let x = head_variable(&p.rules[ri].head, i)
                            .expect("a candidate's head variable");
                        let set = found(p, &idle, &domains, ri, x);
                        if !set.is_subset(&domains[r][i]) {
                            domains[r][i].extend(set);
                            growing = true;
                        }
                    }
                }
            }
        }
        // Every rule must find the whole domain, and it must not be empty.
        let mut refuted: Vec<(usize, usize)> = Vec::new();
        for r in 0..n {
            for i in 0..idle[r].len() {
                if idle[r][i]
                    && (domains[r][i].is_empty()
                        || rules_of[r].iter().any(|&ri| {
                            let x = head_variable(&p.rules[ri].head, i)
                                .expect("a candidate's head variable");
                            found(p, &idle, &domains, ri, x) != domains[r][i]
                        }))
                {
                    refuted.push((r, i));
                }
            }
        }
        for &(r, i) in &refuted {
            idle[r][i] = false;
        }
        if refuted.is_empty() {
            return Some(
                idle.iter()
                    .zip(domains)
                    .map(|(places, domains)| {
                        places.iter().any(|&d| d).then(|| {
                            places
                                .iter()
                                .zip(domains)
                                .map(|(&d, set)| d.then(|| set.into_iter().collect()))
                                .collect()
                        })
                    })
                    .collect(),
            );
        }
    }
}

/// The domain relations rule `ri` finds for its variable `x`: the static conditions `s(X)`, and the
/// domains of the idle places where it reads `X`.
fn found(
    p: &Program,
    idle: &[Vec<bool>],
    domains: &[Vec<BTreeSet<RelId>>],
    ri: usize,
    x: u32,
) -> BTreeSet<RelId> {
    let mut set = BTreeSet::new();
    for l in &p.rules[ri].body {
        if let Lit::Pos(a) = l {
            for (j, arg) in a.args.iter().enumerate() {
                if *arg == Pat::Var(x) {
                    if idle[a.rel.0 as usize][j] {
                        set.extend(domains[a.rel.0 as usize][j].iter().copied());
                    } else {
                        set.insert(a.rel);
                    }
                }
            }
        }
    }
    set
}

/// The variable at place `i` of `head`, when it is a variable named nowhere else in the head.
fn head_variable(head: &IrAtom, i: usize) -> Option<u32> {
    let Pat::Var(x) = head.args[i] else {
        return None;
    };
    let mut count = 0;
    head.args
        .iter()
        .for_each(|a| a.each_var(&mut |v| count += usize::from(v == x)));
    (count == 1).then_some(x)
}

/// Whether condition `l` mentions variable `x` only as a domain condition (`s(X)`, `s` static of one
/// argument) or as a whole argument at an idle place of a relation read positively.
fn mentions_only_idly(
    l: &Lit,
    x: u32,
    idle: &[Vec<bool>],
    domain_relation: impl Fn(RelId) -> bool,
) -> bool {
    let mut mentions = false;
    l.each_var(&mut |v| mentions |= v == x);
    if !mentions {
        return true;
    }
    let Lit::Pos(a) = l else {
        return false;
    };
    a.args.iter().enumerate().all(|(j, arg)| match arg {
        Pat::Var(v) if *v == x => {
            (a.args.len() == 1 && domain_relation(a.rel)) || idle[a.rel.0 as usize][j]
        }
        other => {
            let mut inside = false;
            other.each_var(&mut |v| inside |= v == x);
            !inside
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    /// The rules of `src` after [`prepare`](crate::engine::rewrite::prepare) (which drops idle
    /// arguments last), without its facts.
    fn prepared(src: &str) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        crate::engine::rewrite::prepare(&mut p);
        p.to_string()
            .lines()
            .filter(|l| l.contains(":-"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A game around `rules`: one role, a state of `a` and `b`, and the keyword rules that read `p`.
    const GAME: &str = "(role r) (init a) (bit 0) (bit 1) (digit 0) (digit 1) (digit 2) \
        (<= (next b) (true a)) (<= terminal (true b)) (<= (goal r 100) (true b))";

    fn check(rules: &str, expected: &[&str]) {
        let all = prepared(&format!("{GAME} {rules}"));
        let keyword_rules = [
            "next(b) :- true(a).",
            "terminal :- true(b).",
            "goal(r, 100) :- true(b).",
        ];
        let got: Vec<&str> = all.lines().filter(|l| !keyword_rules.contains(l)).collect();
        assert_eq!(got, expected, "for {rules}");
    }

    #[test]
    fn arguments_that_only_carry_a_static_domain_along_are_dropped() {
        let cases: &[(&str, &[&str])] = &[
            // gdl-perf's ruleDepthExponential in three levels: every bit vector alike.
            (
                "(<= (legal r go) (p1 0)) \
                 (<= (p1 ?b0) (bit ?b0) (true a)) \
                 (<= (p1 ?b0) (bit ?b0) (not (true a)) (p2 ?b0 0) (p2 ?b0 1)) \
                 (<= (p2 ?b1 ?b0) (bit ?b1) (bit ?b0) (true b))",
                &[
                    "legal(r, go) :- bit(0), p1.",
                    "p1 :- true(a).",
                    "p1 :- ~true(a), bit(0), p2, bit(1).",
                    "p2 :- true(b).",
                ],
            ),
            // A reader's variable at the dropped place: bound by the domain instead.
            (
                "(<= (legal r (go ?y)) (digit ?y) (p ?y)) (<= (p ?x) (bit ?x) (true a))",
                &[
                    "legal(r, go(?y)) :- digit(?y), bit(?y), p.",
                    "p :- true(a).",
                ],
            ),
            // Recursion: the same domain through the relation itself.
            (
                "(<= (legal r go) (p 1)) (<= (p ?x) (bit ?x) (true a)) (<= (p ?x) (p ?x) (true b))",
                &[
                    "legal(r, go) :- bit(1), p.",
                    "p :- true(a).",
                    "p :- p, true(b).",
                ],
            ),
            // Two domains read together: both checked.
            (
                "(<= (legal r go) (p 1)) (<= (p ?x) (bit ?x) (digit ?x) (true a))",
                &["legal(r, go) :- bit(1), digit(1), p.", "p :- true(a)."],
            ),
            // Only the idle place goes.
            (
                "(<= (legal r (go ?c)) (p 1 ?c)) (<= (p ?x ?c) (bit ?x) (true (cell ?c)))",
                &[
                    "legal(r, go(?c)) :- bit(1), p(?c).",
                    "p(?c) :- true(cell(?c)).",
                ],
            ),
        ];
        for (rules, expected) in cases {
            check(rules, expected);
        }
    }

    #[test]
    fn arguments_that_matter_stay() {
        let cases: &[(&str, &[&str])] = &[
            // The rules disagree on the domain: the value chooses the rule.
            (
                "(<= (legal r go) (p 2)) (<= (p ?x) (bit ?x) (true a)) (<= (p ?x) (digit ?x) (true b))",
                &[
                    "legal(r, go) :- p(2).",
                    "p(?x) :- bit(?x), true(a).",
                    "p(?x) :- digit(?x), true(b).",
                ],
            ),
            // Read under a negation.
            (
                "(<= (legal r (go ?x)) (bit ?x) (not (p ?x))) (<= (p ?x) (bit ?x) (true a))",
                &["legal(r, go(?x)) :- bit(?x), ~p(?x).", "p(?x) :- bit(?x), true(a)."],
            ),
            // Compared, or read by a state relation.
            (
                "(<= (legal r go) (p 0)) (<= (p ?x) (bit ?x) (distinct ?x 1) (true a))",
                &["legal(r, go) :- p(0).", "p(?x) :- bit(?x), distinct(?x, 1), true(a)."],
            ),
            (
                "(<= (legal r go) (p 0)) (<= (p ?x) (bit ?x) (true (cell ?x)))",
                &["legal(r, go) :- p(0).", "p(?x) :- bit(?x), true(cell(?x))."],
            ),
            // A keyword's arguments are what the game shows.
            (
                "(<= (legal r (go ?x)) (bit ?x) (true a))",
                &["legal(r, go(?x)) :- bit(?x), true(a)."],
            ),
            // A static relation is evaluated once anyway.
            (
                "(<= (legal r go) (s 0) (true a)) (<= (s ?x) (bit ?x) (digit 2))",
                &["legal(r, go) :- s(0), true(a).", "s(?x) :- bit(?x), digit(2)."],
            ),
            // Named twice in the head.
            (
                "(<= (legal r go) (p 0 0)) (<= (p ?x ?x) (bit ?x) (true a))",
                &["legal(r, go) :- p(0, 0).", "p(?x, ?x) :- bit(?x), true(a)."],
            ),
        ];
        for (rules, expected) in cases {
            check(rules, expected);
        }
    }
}
