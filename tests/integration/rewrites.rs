//! The rewrites both engines start from (`engine::rewrite::prepare`) change no game: each game here
//! is played with a rewrite and without it (a rule in a state that never comes blocks it), and at
//! every step of random matches both forms agree on the terminal flag, each role's legal moves, the
//! goals and the state; the network, which grounds the rewritten form, agrees with both.
//! - Dropping idle arguments (`engine::idle_arguments`): a rule reading every relation under a
//!   negation keeps their arguments.
//! - Reading fixed fluents from `init` (`engine::fixed_fluents`): a `next` rule whose head is a
//!   variable could make a fact of any kind, so no kind is fixed.

use std::collections::BTreeSet;

use ggp::datalog::ir::{Lit, Origin};
use ggp::engine::RuleGame;
use ggp::game::{Game, RoleIndex};
use ggp::network::NetGame;
use ggp::syntax::ast::Program;
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Small games whose relations carry idle arguments of each kind the rewrite handles.
const GAMES: &[(&str, &str)] = &[
    (
        // Recursion down levels, constants at the readers (ruleDepthExponential's shape), one of
        // them outside the domain (`jump` is never legal).
        "levels",
        "(role robot) (init (step 1)) (bit 0) (bit 1)
         (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
         (legal robot giveUp)
         (<= (legal robot continue) (level1 0))
         (<= (legal robot jump) (level1 5))
         (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
         (<= (next over) (does robot giveUp))
         (<= terminal (true over)) (<= terminal (true (step 5)))
         (<= (goal robot 100) (true (step 5))) (<= (goal robot 0) (not (true (step 5))))
         (<= (level1 ?a) (bit ?a) (true (step 1)))
         (<= (level1 ?a) (bit ?a) (not (true (step 1))) (level2 ?a 0) (level2 ?a 1))
         (<= (level2 ?a ?b) (bit ?a) (bit ?b) (true (step 2)))
         (<= (level2 ?a ?b) (bit ?a) (bit ?b) (not (true (step 2))) (level3 ?a ?b 1))
         (<= (level3 ?a ?b ?c) (bit ?a) (bit ?b) (bit ?c) (or (true (step 3)) (true (step 4))))",
    ),
    (
        // A variable at the dropped place (bound by the domain instead), a place kept beside one
        // dropped, a relation reading itself, and two domains at once.
        "cells",
        "(role white) (role black) (init (control white))
         (cell 1) (cell 2) (cell 3) (mark x) (mark o) (small 1) (small 2)
         (<= (legal ?r (put ?c)) (true (control ?r)) (cell ?c) (free ?c ?c) (not (true (at ?c x))) (not (true (at ?c o))))
         (<= (legal ?r noop) (role ?r) (not (true (control ?r))))
         (<= (next (at ?c x)) (does white (put ?c)))
         (<= (next (at ?c o)) (does black (put ?c)))
         (<= (next (at ?c ?m)) (true (at ?c ?m)))
         (<= (next (control black)) (true (control white)))
         (<= (next (control white)) (true (control black)))
         (<= (free ?c ?d) (cell ?d) (open ?c))
         (<= (open ?c) (cell ?c) (not (true (at ?c x))))
         (after 1 2) (after 2 3)
         (<= (run ?k ?c) (small ?k) (cell ?c) (true (at ?c x)))
         (<= (run ?k ?c) (after ?b ?c) (run ?k ?b) (true (at ?c x)))
         (<= (line x) (run 2 3))
         (<= (line o) (true (at 1 o)) (true (at 2 o)) (true (at 3 o)))
         (<= terminal (line ?m))
         (<= terminal (true (at 1 ?a)) (true (at 2 ?b)) (true (at 3 ?c)))
         (<= (goal white 100) (line x)) (<= (goal white 0) (line o))
         (<= (goal white 50) (not (line x)) (not (line o)))
         (<= (goal black 100) (line o)) (<= (goal black 0) (line x))
         (<= (goal black 50) (not (line x)) (not (line o)))",
    ),
];

/// `src` with a rule that reads each relation of more than no argument under a negation, in a
/// state that never comes: the same game, with no argument idle.
fn without_the_rewrite(src: &str, p: &Program) -> String {
    let lowered = ggp::engine::lower(p).expect("lowers");
    let mut blocks = String::new();
    for r in &lowered.relations {
        let name = lowered.terms.name(r.name);
        let keyword = [
            "true", "does", "next", "init", "legal", "goal", "role", "base", "input",
        ];
        if r.origin == Origin::User && r.arity > 0 && !keyword.contains(&name) {
            let args = vec!["never"; r.arity].join(" ");
            blocks.push_str(&format!(" (not ({name} {args}))"));
        }
    }
    format!("{src}\n(<= terminal (true never_comes){blocks})")
}

fn sorted_moves(g: &RuleGame, s: &ggp::engine::BitState, role: RoleIndex) -> Vec<String> {
    let mut moves = Vec::new();
    g.legal_moves(s, role, &mut moves);
    let set: BTreeSet<String> = moves.iter().map(|&m| g.move_kif(m).to_string()).collect();
    set.into_iter().collect()
}

fn net_moves(g: &NetGame, s: &<NetGame as Game>::State, role: RoleIndex) -> Vec<String> {
    let mut moves = Vec::new();
    g.legal_moves(s, role, &mut moves);
    let set: BTreeSet<String> = moves.iter().map(|&m| g.move_kif(m).to_string()).collect();
    set.into_iter().collect()
}

/// The `crafted` games and the corpus's `corpus_game`, each with its name and rules.
fn crafted_and_corpus(crafted: &[(&str, &str)], corpus_game: &str) -> Vec<(String, String)> {
    let file = crate::common::shared().join(format!("games/kif/{corpus_game}.kif"));
    let corpus = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("the corpus holds {corpus_game}: {e}"));
    crafted
        .iter()
        .map(|&(n, s)| (n.to_string(), s.to_string()))
        .chain([(corpus_game.to_string(), corpus)])
        .collect()
}

#[test]
fn dropping_idle_arguments_changes_no_game() {
    for (name, src) in crafted_and_corpus(GAMES, "ruleDepthExponential") {
        let p = parse_kif(&src).expect("parses");
        let plain_src = without_the_rewrite(&src, &p);
        let plain = parse_kif(&plain_src).expect("parses with the blocking rule");
        let rewritten = ggp::engine::rewrite::prepared(&p).expect("prepares");
        let kept = ggp::engine::rewrite::prepared(&plain).expect("prepares");
        // The test is about something only if the rewrite dropped arguments in one form and not the
        // other: the relations of the rewritten form have fewer arguments in all.
        let arguments = |p: &ggp::datalog::ir::Program| -> usize {
            let used: BTreeSet<u32> = p.rules.iter().map(|r| r.head.rel.0).collect();
            used.iter().map(|&r| p.relations[r as usize].arity).sum()
        };
        assert!(
            arguments(&rewritten) < arguments(&kept),
            "{name}: no argument dropped\n{rewritten}"
        );
        agree_along_random_matches(&name, &p, &plain, 100);
    }
}

/// Small games with facts no move changes, each read in another way.
const FIXED: &[(&str, &str)] = &[(
    // Walls read under a negation and positively, copied by a frame rule of their own; a constant
    // fact copied forward; the position changes.
    "maze",
    "(role runner) (init (at 1 1)) (init lit)
     (init (wall 1 1 east)) (init (wall 2 2 north)) (init (gate 3 3))
     (succ 1 2) (succ 2 3) (succ 3 4) (index 1) (index 2) (index 3)
     (<= (legal runner (east ?x2 ?y)) (true (at ?x ?y)) (succ ?x ?x2) (index ?x2) (not (true (wall ?x ?y east))))
     (<= (legal runner (north ?x ?y2)) (true (at ?x ?y)) (succ ?y ?y2) (index ?y2) (not (true (wall ?x ?y north))))
     (<= (legal runner wait) (true lit))
     (<= (next (at ?x ?y)) (does runner (east ?x ?y)))
     (<= (next (at ?x ?y)) (does runner (north ?x ?y)))
     (<= (next (at ?x ?y)) (does runner wait) (true (at ?x ?y)))
     (<= (next (wall ?x ?y ?d)) (true (wall ?x ?y ?d)))
     (<= (next (gate ?x ?y)) (true (gate ?x ?y)))
     (<= (next lit) (true lit)) (<= (next (gate 1 2)) (does runner wait))
     (<= (next (clock ?n)) (true (clock ?m)) (succ ?m ?n))
     (init (clock 1))
     (<= out (true (at ?x ?y)) (true (gate ?x ?y)))
     (<= terminal out) (<= terminal (true (clock 4)))
     (<= (goal runner 100) out) (<= (goal runner 0) (not out))",
)];

/// `src` with a `next` rule, in a state that never comes, whose head could be a fact of any kind: the
/// same game, with no fact fixed.
fn with_nothing_fixed(src: &str) -> String {
    format!("{src}\n(<= (next ?f) (true (never_comes ?f)))")
}

#[test]
fn reading_fixed_fluents_from_init_changes_no_game() {
    for (name, src) in crafted_and_corpus(FIXED, "mummymaze1p") {
        let p = parse_kif(&src).expect("parses");
        let plain = parse_kif(&with_nothing_fixed(&src)).expect("parses with the blocking rule");
        // The test is about something only if one form reads `init` where the other reads the state.
        let init_readings = |p: &ggp::datalog::ir::Program| -> usize {
            let init = p.keywords.init.expect("the game has an initial state");
            p.rules
                .iter()
                .flat_map(|r| &r.body)
                .filter(|l| matches!(l, Lit::Pos(a) | Lit::Neg(a) if a.rel == init))
                .count()
        };
        let rewritten = ggp::engine::rewrite::prepared(&p).expect("prepares");
        let kept = ggp::engine::rewrite::prepared(&plain).expect("prepares");
        assert_eq!(init_readings(&kept), 0, "{name}: read from init as written");
        assert!(
            init_readings(&rewritten) > 0,
            "{name}: nothing read from init\n{rewritten}"
        );
        agree_along_random_matches(&name, &p, &plain, 100);
    }
}

/// The longest match of the games here, with room to spare (mummy maze's runs 50 steps).
const MAX_STEPS: usize = 200;

/// Plays `playouts` random matches of `p` and `plain` (the same game, one rewritten and one not) and
/// of the network grounded from `p`, checking at every step that the three agree.
fn agree_along_random_matches(name: &str, p: &Program, plain: &Program, playouts: usize) {
    let a = RuleGame::from_program(p, name).expect("loads rewritten");
    let b = RuleGame::from_program(plain, name).expect("loads as written");
    let net = NetGame::from_program(p, name).expect("grounds");
    let roles = a.info().num_roles();
    let mut rng = SmallRng::seed_from_u64(0x1d1e);
    let mut states = 0;
    for playout in 0..playouts {
        let (mut sa, mut sb, mut sn) = (a.initial_state(), b.initial_state(), net.initial_state());
        for step in 0..=MAX_STEPS {
            let at = format!("{name}: playout {playout}, step {step}");
            let terminal = a.is_terminal(&sa);
            assert!(terminal || step < MAX_STEPS, "{at}: no end in sight");
            assert_eq!(terminal, b.is_terminal(&sb), "{at}: terminal");
            assert_eq!(
                terminal,
                net.is_terminal(&sn),
                "{at}: terminal on the network"
            );
            let facts: BTreeSet<String> = a.state_facts(&sa).into_iter().collect();
            let facts_b: BTreeSet<String> = b.state_facts(&sb).into_iter().collect();
            let facts_n: BTreeSet<String> = net.state_facts(&sn).into_iter().collect();
            assert_eq!(facts, facts_b, "{at}: state");
            assert_eq!(facts, facts_n, "{at}: state on the network");
            states += 1;
            if terminal {
                for r in 0..roles {
                    assert_eq!(a.goal(&sa, r), b.goal(&sb, r), "{at}: goal of role {r}");
                    assert_eq!(
                        a.goal(&sa, r),
                        net.goal(&sn, r),
                        "{at}: network goal of role {r}"
                    );
                }
                break;
            }
            let mut joint_a = Vec::new();
            let mut joint_b = Vec::new();
            let mut joint_n = Vec::new();
            for r in 0..roles {
                let moves = sorted_moves(&a, &sa, r);
                assert_eq!(
                    moves,
                    sorted_moves(&b, &sb, r),
                    "{at}: legal moves of role {r}"
                );
                assert_eq!(
                    moves,
                    net_moves(&net, &sn, r),
                    "{at}: network moves of role {r}"
                );
                let chosen = &moves[rng.gen_range(0..moves.len())];
                joint_a.push(a.move_from_kif(chosen).expect("a move of its own"));
                joint_b.push(b.move_from_kif(chosen).expect("the same move as written"));
                joint_n.push(
                    net.move_from_kif(chosen)
                        .expect("the same move on the network"),
                );
            }
            sa = a.next_state(&sa, &joint_a);
            sb = b.next_state(&sb, &joint_b);
            sn = net.next_state(&sn, &joint_n);
        }
    }
    assert!(states > 100, "{name}: only {states} states compared");
}
