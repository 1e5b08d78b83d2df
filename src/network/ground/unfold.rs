//! Static tables unfolded into their readers before grounding, so that `decompose` can project their
//! columns apart (chess's `different_cells`).

use crate::datalog::ir::{Cmp, Lit, Pat, Program, Rule};
use crate::engine::rewrite::{instantiate, simplify};
use crate::syntax::ast::MAX_RULE_CONDITIONS;

/// Unfolds, into the rules whose head is marked in `readers`, every positive reading of a static
/// relation defined by at most [`MAX_TABLE_RULES`] non-recursive rules over static relations and
/// built-ins, one of them a `distinct` (chess's `different_cells`: `?x1 != ?x2` or `?y1 != ?y2`, over
/// coordinates). Read as a table its columns are tied together; unfolded, each alternative constrains
/// the columns separately, which lets [`super::decompose`] project them apart. For the
/// grounder only; returns the number of readings unfolded.
pub(crate) fn unfold_tables(p: &mut Program, readers: &[bool], is_static: &[bool]) -> usize {
    let n = p.relations.len();
    let mut by_head: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, r) in p.rules.iter().enumerate() {
        by_head[r.head.rel.0 as usize].push(i);
    }
    let table = |rel: usize| -> bool {
        let rules = &by_head[rel];
        !rules.is_empty()
            && rules.len() <= MAX_TABLE_RULES
            && is_static.get(rel).copied().unwrap_or(false)
            && rules.iter().any(|&i| {
                p.rules[i]
                    .body
                    .iter()
                    .any(|l| matches!(l, Lit::Cmp(Cmp::Distinct, _, _)))
            })
            && rules.iter().all(|&i| {
                let r = &p.rules[i];
                let mut seen: Vec<u32> = Vec::new();
                let distinct_vars = r.head.args.iter().all(|a| match a {
                    Pat::Var(x) if !seen.contains(x) => {
                        seen.push(*x);
                        true
                    }
                    _ => false,
                });
                distinct_vars
                    && r.body.iter().all(|l| match l {
                        Lit::Pos(a) => a.rel.0 as usize != rel && is_static[a.rel.0 as usize],
                        Lit::Neg(_) => false,
                        Lit::Cmp(..) | Lit::Arith(..) | Lit::NotArith(..) => true,
                    })
            })
    };
    let candidates: Vec<bool> = (0..n).map(table).collect();
    // A table that reads another is not unfolded: unfolding puts no table reading back, so the
    // work below ends (two tables reading each other once unfolded into each other for ever).
    let tables: Vec<bool> = (0..n)
        .map(|rel| {
            candidates[rel]
                && by_head[rel].iter().all(|&i| {
                    p.rules[i]
                        .body
                        .iter()
                        .all(|l| !matches!(l, Lit::Pos(a) if candidates[a.rel.0 as usize]))
                })
        })
        .collect();
    let defs: Vec<Rule> = p.rules.clone();
    let rules = std::mem::take(&mut p.rules);
    let limit = rules.len() * 4 + 64;
    let mut out = Vec::with_capacity(rules.len());
    let mut unfolded = 0;
    for r in rules {
        if !readers.get(r.head.rel.0 as usize).copied().unwrap_or(false) {
            out.push(r);
            continue;
        }
        let mut work = vec![r];
        while let Some(r) = work.pop() {
            let found = r
                .body
                .iter()
                .position(|l| matches!(l, Lit::Pos(a) if tables[a.rel.0 as usize]));
            let (Some(j), true) = (found, out.len() + work.len() < limit) else {
                out.extend(simplify(r));
                continue;
            };
            let Lit::Pos(a) = &r.body[j] else {
                unreachable!("found a positive reading")
            };
            // Nor may a reader grow past the conditions a rule may have (each is a level of the
            // join); it then reads the table as it is.
            let longest = by_head[a.rel.0 as usize]
                .iter()
                .map(|&d| defs[d].body.len())
                .max()
                .unwrap_or(0);
            if r.body.len() - 1 + longest > MAX_RULE_CONDITIONS as usize {
                out.extend(simplify(r));
                continue;
            }
            unfolded += 1;
            for &d in by_head[a.rel.0 as usize].iter().rev() {
                let mut copy = r.clone();
                let lits = instantiate(&defs[d], &a.args, &mut copy.var_names, &mut p.terms);
                copy.body.splice(j..=j, lits);
                work.push(copy);
            }
        }
    }
    p.rules = out;
    unfolded
}

/// The most rules a relation unfolded by [`unfold_tables`] may have.
const MAX_TABLE_RULES: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    #[test]
    fn tables_with_distinct_unfold_into_state_dependent_readers() {
        // Chess's `different_cells`: each alternative constrains one column, so the reader gets one
        // copy per alternative; a table without `distinct` (`c`) and the static reader stay.
        let src = "(c 1) (c 2) \
             (<= (differ ?x1 ?y1 ?x2 ?y2) (c ?x1) (c ?x2) (distinct ?x1 ?x2) (c ?y1) (c ?y2)) \
             (<= (differ ?x1 ?y1 ?x2 ?y2) (c ?x1) (c ?x2) (distinct ?y1 ?y2) (c ?y1) (c ?y2)) \
             (<= (near ?x ?y) (differ ?x ?y 1 1)) \
             (<= (next (cell ?x ?y)) (true (cell ?x ?y)) (does r (at ?u ?v)) (differ ?x ?y ?u ?v))";
        let (n, p) = unfolded(src);
        assert_eq!(n, 1);
        let out = p.to_string();
        assert!(
            out.contains("near(?x, ?y) :- differ(?x, ?y, 1, 1)."),
            "{out}"
        );
        assert!(
            out.contains(
                "next(cell(?x, ?y)) :- true(cell(?x, ?y)), does(r, at(?u, ?v)), c(?x), c(?u), \
                 distinct(?x, ?u), c(?y), c(?v)."
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "next(cell(?x, ?y)) :- true(cell(?x, ?y)), does(r, at(?u, ?v)), c(?x), c(?u), \
                 distinct(?y, ?v), c(?y), c(?v)."
            ),
            "{out}"
        );
    }

    /// `src` lowered, with `next` its only reader, unfolded: the number of readings unfolded and the
    /// program that comes out.
    fn unfolded(src: &str) -> (usize, Program) {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        let next = p.keywords.next.expect("has next").0 as usize;
        let mut readers = vec![false; p.relations.len()];
        readers[next] = true;
        let is_static: Vec<bool> = (0..p.relations.len())
            .map(|r| !["true", "does", "next"].contains(&p.terms.name(p.relations[r].name)))
            .collect();
        let n = unfold_tables(&mut p, &readers, &is_static);
        (n, p)
    }

    #[test]
    fn tables_that_read_each_other_are_not_unfolded() {
        // Each unfolding of one brought back a reading of the other: this never ended.
        let src = "(v 0) (v 1) \
             (<= (t1 ?a ?b) (t2 ?a ?b) (distinct ?a ?b)) \
             (<= (t2 ?a ?b) (t1 ?a ?b) (distinct ?a ?b)) \
             (<= (next (q ?x)) (true (q ?x)) (t1 ?x 1))";
        assert_eq!(unfolded(src).0, 0);
    }

    #[test]
    fn a_reader_is_not_unfolded_past_the_conditions_a_rule_may_have() {
        // Three readings of a table of 101 conditions: two fit in one rule, the third stays read.
        let conditions: String = (0..100).map(|i| format!(" (n{i} ?a ?b)")).collect();
        let src = format!(
            "(<= (t ?a ?b) (distinct ?a ?b){conditions}) \
             (<= (next (w ?x)) (true (q ?x)) (t ?x 1) (t ?x 2) (t ?x 3))"
        );
        let (n, p) = unfolded(&src);
        let longest = p.rules.iter().map(|r| r.body.len()).max().unwrap_or(0);
        assert_eq!(n, 2);
        assert!(longest <= MAX_RULE_CONDITIONS as usize, "{longest}");
    }
}
