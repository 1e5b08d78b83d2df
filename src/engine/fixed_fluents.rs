//! Fixed fluents: a kind of state fact that no move changes is read from `init` instead of the state.
//!
//! The entry point is [`read_fixed_fluents_from_init`], one of [`prepare`](super::rewrite::prepare)'s
//! rewrites, so both engines read the result. Mummy maze is the case it is for: its walls are state
//! facts (`(init (wall 8 8 east))`) that only a frame rule carries from state to state, and a move
//! reads `(not (true (wall ?x ?y east)))`. Read from the state, the wall is a proposition every rule
//! must consult in every state, and the network's relaxed analysis (which drops the negations of state
//! relations) lets the mummy walk through every wall to every number `succ` names; read from `init`,
//! it is a constant, and the analysis keeps the negation.
//!
//! A kind of fact (a function symbol and its arity, or a constant) is *fixed* when some `next` rule
//! copies every fact of that kind unchanged (`(<= (next (wall ?x ?y ?d)) (true (wall ?x ?y ?d)))`, its
//! arguments distinct variables, or `(<= (next ?x) (true ?x))`) and no other `next` rule can make one
//! (a rule with any other body, or a variable head, that could). Then, by induction over the moves,
//! every reachable state holds exactly the facts of that kind the initial state holds, so `(true t)`
//! and `(init t)` agree for every `t` of the kind. Readings with a variable for the whole fact
//! (`(true ?x)`) stay, and so do the copying rules themselves: the state keeps the facts (a state reads
//! the same as before), only the rules stop asking it for them.

use hashbrown::HashSet;

use crate::datalog::ir::{Lit, Pat, Program, RelId, Rule};
use crate::datalog::terms::TermStore;
use crate::syntax::ast::Sym;

/// A kind of state fact: its function symbol (the constant itself for a constant) and arity.
type Kind = (Sym, usize);

/// Reads every fixed fluent of `p` from `init` (see the module documentation).
pub fn read_fixed_fluents_from_init(p: &mut Program) {
    let (Some(next), Some(true_), Some(init)) =
        (p.keywords.next, p.keywords.true_, p.keywords.init)
    else {
        return;
    };
    let fixed = fixed_kinds(p);
    if fixed.is_empty() {
        return;
    }
    let is_fixed =
        |terms: &TermStore, t: &Pat| kind_of(terms, t).is_some_and(|k| fixed.contains(&k));
    for rule in &mut p.rules {
        if rule.head.rel == next && copied_kind(rule, true_, &p.terms).is_some() {
            continue;
        }
        for lit in &mut rule.body {
            if let Lit::Pos(a) | Lit::Neg(a) = lit {
                if a.rel == true_ && is_fixed(&p.terms, &a.args[0]) {
                    a.rel = init;
                }
            }
        }
    }
}

/// The fixed kinds of `p`'s state facts.
fn fixed_kinds(p: &Program) -> HashSet<Kind> {
    let (Some(next), Some(true_)) = (p.keywords.next, p.keywords.true_) else {
        return HashSet::new();
    };
    let mut copies_everything = false;
    let mut copied: HashSet<Kind> = HashSet::new();
    let mut made: HashSet<Kind> = HashSet::new();
    for rule in p.rules.iter().filter(|r| r.head.rel == next) {
        let head = &rule.head.args[0];
        if let Some(copy) = copied_kind(rule, true_, &p.terms) {
            match copy {
                Copied::Everything => copies_everything = true,
                Copied::Kind(k) => {
                    copied.insert(k);
                }
                // A copy of some facts of a kind makes none that was not there.
                Copied::Some => {}
            }
            continue;
        }
        match kind_of(&p.terms, head) {
            Some(k) => {
                made.insert(k);
            }
            // A rule whose head is a variable could make a fact of any kind.
            None => return HashSet::new(),
        }
    }
    if copies_everything {
        // Every kind the rules mention in a state reading, less those a rule makes.
        let mut read: HashSet<Kind> = HashSet::new();
        for rule in &p.rules {
            for lit in &rule.body {
                if let Lit::Pos(a) | Lit::Neg(a) = lit {
                    if a.rel == true_ {
                        read.extend(kind_of(&p.terms, &a.args[0]));
                    }
                }
            }
        }
        copied.extend(read);
    }
    copied.retain(|k| !made.contains(k));
    copied
}

/// What a `next` rule that only copies a fact forward copies.
enum Copied {
    /// Every fact: `(<= (next ?x) (true ?x))`.
    Everything,
    /// Every fact of one kind: its arguments are distinct variables.
    Kind(Kind),
    /// Some facts of one kind.
    Some,
}

/// What `rule` (a `next` rule) copies, when its one condition is `true` of its head's term.
fn copied_kind(rule: &Rule, true_: RelId, terms: &TermStore) -> Option<Copied> {
    let head = &rule.head.args[0];
    match &rule.body[..] {
        [Lit::Pos(a)] if a.rel == true_ && a.args[0] == *head => {}
        _ => return None,
    }
    Some(match head {
        Pat::Var(_) => Copied::Everything,
        Pat::Func(s, args) => {
            let mut seen: Vec<u32> = Vec::new();
            let distinct_vars = args.iter().all(|x| match x {
                Pat::Var(v) if !seen.contains(v) => {
                    seen.push(*v);
                    true
                }
                _ => false,
            });
            if distinct_vars {
                Copied::Kind((*s, args.len()))
            } else {
                Copied::Some
            }
        }
        // A constant fact is every fact of its kind.
        Pat::Term(t) if terms.is_const(*t) => Copied::Kind((terms.sym(*t), 0)),
        Pat::Term(_) => Copied::Some,
    })
}

/// The kind of the facts pattern `t` matches; `None` for a variable (any kind).
fn kind_of(terms: &TermStore, t: &Pat) -> Option<Kind> {
    match t {
        Pat::Var(_) => None,
        Pat::Func(s, args) => Some((*s, args.len())),
        Pat::Term(t) => Some((terms.sym(*t), terms.args(*t).len())),
    }
}

#[cfg(test)]
mod tests {
    use crate::datalog::lower;
    use crate::syntax::parse_kif;

    /// The rules of `src` after [`read_fixed_fluents_from_init`](super::read_fixed_fluents_from_init),
    /// as text.
    fn rewritten(src: &str) -> String {
        let mut p = lower(&parse_kif(src).expect("parses")).expect("lowers");
        super::read_fixed_fluents_from_init(&mut p);
        p.to_string()
    }

    /// Checks that the rules of `src` read `true` of exactly the facts `state` names afterwards, and
    /// `init` of those `fixed` names, in the rule whose text contains `rule`.
    fn check(src: &str, rule: &str, expected: &str) {
        let text = rewritten(src);
        let line = text
            .lines()
            .find(|l| l.starts_with(rule))
            .unwrap_or_else(|| panic!("no rule starting {rule} in\n{text}"));
        assert_eq!(line.trim(), expected, "in\n{text}");
    }

    const MAZE: &str = "(role r) (init (at 1)) (init (wall 1 east)) (init (wall 2 west))
        (succ 1 2) (succ 2 3)
        (<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y) (not (true (wall ?x east))))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= (next (wall ?x ?d)) (true (wall ?x ?d)))
        (<= terminal (true (at 3))) (<= (goal r 100) (true (at 3)))";

    #[test]
    fn a_fact_only_a_frame_rule_carries_is_read_from_init() {
        check(
            MAZE,
            "legal(",
            "legal(r, go(?y)) :- true(at(?x)), succ(?x, ?y), ~init(wall(?x, east)).",
        );
        // The copying rule itself still reads the state: the state keeps the walls.
        check(
            MAZE,
            "next(wall",
            "next(wall(?x, ?d)) :- true(wall(?x, ?d)).",
        );
        // `at` changes with the moves.
        check(MAZE, "terminal", "terminal :- true(at(3)).");
    }

    #[test]
    fn a_fact_is_not_fixed_when_a_rule_can_make_or_drop_one() {
        let kept = |extra: &str, frame: &str| {
            let src = MAZE.replace(
                "(<= (next (wall ?x ?d)) (true (wall ?x ?d)))",
                &format!("{frame} {extra}"),
            );
            check(
                &src,
                "legal(",
                "legal(r, go(?y)) :- true(at(?x)), succ(?x, ?y), ~true(wall(?x, east)).",
            );
        };
        let frame = "(<= (next (wall ?x ?d)) (true (wall ?x ?d)))";
        // A rule that builds a wall.
        kept("(<= (next (wall ?x east)) (does r (go ?x)))", frame);
        // A rule whose head could be anything.
        kept("(<= (next ?w) (true (at ?w)))", frame);
        // A frame rule with a condition: walls can go.
        kept(
            "",
            "(<= (next (wall ?x ?d)) (true (wall ?x ?d)) (true (at 1)))",
        );
        // A copy of only some walls.
        kept("", "(<= (next (wall ?x east)) (true (wall ?x east)))");
        kept("", "(<= (next (wall ?x ?x)) (true (wall ?x ?x)))");
        // No copy at all: the walls vanish after the first move.
        kept("", "");
    }

    #[test]
    fn a_copy_of_every_fact_fixes_the_kinds_no_rule_makes() {
        let src = MAZE.replace(
            "(<= (next (wall ?x ?d)) (true (wall ?x ?d)))",
            "(<= (next ?f) (true ?f))",
        );
        check(
            &src,
            "legal(",
            "legal(r, go(?y)) :- true(at(?x)), succ(?x, ?y), ~init(wall(?x, east)).",
        );
        // `at` is made by a move's rule as well as copied.
        check(&src, "terminal", "terminal :- true(at(3)).");
    }

    #[test]
    fn a_constant_fact_copied_forward_is_fixed() {
        let src = "(role r) (init started) (init (at 1))
            (<= (next started) (true started))
            (<= (next (at 2)) (true started) (true (at 1)))
            (<= (legal r go) (true started))
            (<= terminal (true (at 2))) (<= (goal r 100) (true (at 2)))";
        check(src, "legal(", "legal(r, go) :- init(started).");
        check(src, "next(at", "next(at(2)) :- init(started), true(at(1)).");
    }
}
