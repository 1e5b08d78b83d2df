//! Property test: on random small GDL programs, the grounded network and the Datalog evaluator compute the
//! same legal moves, next states, terminal flags and goals at every step of random playouts.
//!
//! The programs share a skeleton that makes them valid games (two roles taking turns, a step counter
//! that ends the game, a move that is always legal) and vary everything the engines could disagree on:
//! initial facts, stratified views built from state facts, constants, `distinct` and negation, legal
//! conditions on those views, `next` rules that read moves and views, and goal and terminal conditions.
//!
//! Each engine chooses its own path for a program (the Datalog evaluator bottom-up unless the
//! demand-driven form is far cheaper, the network the rules as written unless they exceed the budget),
//! which for programs this small is always the plain one. So every program is also run on the paths that
//! the choice would not take, each forced ([`Path`]): the Datalog evaluator on the magic-sets rewrite
//! (`Evaluation::Demand`), the network grounded from the rules decomposed and demand-driven
//! (`Strategy::Decomposed`), and the two forced paths against each other.
//! `the_forced_paths_are_taken` checks that the forcing changes what runs on most generated programs.

use std::time::Instant;

use ggp::engine::{Evaluation, Limits, RuleGame};
use ggp::game::Game;
use ggp::network::ground::ground_as;
use ggp::network::{Budget, NetGame, Strategy as Grounding};
use ggp::syntax::ast::Program;
use ggp::syntax::parse_kif;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Views `v0..v3`; a literal of view `i`'s rules may read only views below `i`, so negation is stratified.
const VIEWS: usize = 4;

/// One body literal over the rule's variable `?x`, by template number and polarity.
fn literal(template: u8, negated: bool, below: usize) -> String {
    let atoms = [
        "(true (p ?x))".to_string(),
        "(true (q ?x))".to_string(),
        "(true (p a))".to_string(),
        "(true (q b))".to_string(),
        "(distinct ?x a)".to_string(),
    ];
    let n = atoms.len() + 2 * below;
    let t = usize::from(template) % n;
    let atom = if t < atoms.len() {
        atoms[t].clone()
    } else {
        let v = (t - atoms.len()) / 2;
        if (t - atoms.len()).is_multiple_of(2) {
            format!("(v{v} ?x)")
        } else {
            format!("(v{v} c)")
        }
    };
    if negated {
        format!("(not {atom})")
    } else {
        atom
    }
}

/// A random program's varying parts.
#[derive(Debug, Clone)]
struct Spec {
    /// Which of `(p a) (p b) (p c) (q a) (q b) (q c)` hold initially.
    init: u8,
    /// For each view, its rules; each rule a list of (template, negated).
    views: Vec<Vec<Vec<(u8, bool)>>>,
    /// The extra condition on `(flip ?x)` being legal.
    legal: (u8, bool),
    /// The conditions of the rule that makes `(q ?x)` true next.
    next_q: Vec<(u8, bool)>,
    /// Whether `(q ?x)` also persists.
    q_persists: bool,
    /// The view (and constant) whose truth ends the game early, and the view that decides the winner.
    terminal_view: (u8, u8),
    goal_view: (u8, u8),
}

fn spec() -> impl Strategy<Value = Spec> {
    let lit = (any::<u8>(), any::<bool>());
    let rule = prop::collection::vec(lit, 1..=3);
    let view = prop::collection::vec(rule, 1..=2);
    (
        any::<u8>(),
        prop::collection::vec(view, VIEWS),
        lit,
        prop::collection::vec(lit, 1..=2),
        any::<bool>(),
        (any::<u8>(), any::<u8>()),
        (any::<u8>(), any::<u8>()),
    )
        .prop_map(
            |(init, views, legal, next_q, q_persists, terminal_view, goal_view)| Spec {
                init,
                views,
                legal,
                next_q,
                q_persists,
                terminal_view,
                goal_view,
            },
        )
}

fn program(s: &Spec) -> String {
    let consts = ["a", "b", "c"];
    let mut out = String::from(
        "(role white) (role black)\n\
         (dom a) (dom b) (dom c)\n\
         (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)\n\
         (init (control white)) (init (step 0))\n\
         (<= (next (control black)) (true (control white)))\n\
         (<= (next (control white)) (true (control black)))\n\
         (<= (next (step ?n)) (true (step ?m)) (succ ?m ?n))\n\
         (<= (legal ?r noop) (role ?r) (not (true (control ?r))))\n\
         (<= (legal ?r pass) (true (control ?r)))\n\
         (<= (flipped ?x) (does ?r (flip ?x)))\n\
         (<= (next (p ?x)) (does ?r (flip ?x)) (not (true (p ?x))))\n\
         (<= (next (p ?x)) (true (p ?x)) (not (flipped ?x)))\n",
    );
    for (i, rel) in ["p", "q"].iter().enumerate() {
        for (j, c) in consts.iter().enumerate() {
            if s.init >> (i * 3 + j) & 1 == 1 {
                out.push_str(&format!("(init ({rel} {c}))\n"));
            }
        }
    }
    for (i, rules) in s.views.iter().enumerate() {
        for body in rules {
            let lits: Vec<String> = body.iter().map(|&(t, n)| literal(t, n, i)).collect();
            out.push_str(&format!("(<= (v{i} ?x) (dom ?x) {})\n", lits.join(" ")));
        }
    }
    let any_view = |t: u8, n: bool| literal(t, n, VIEWS);
    out.push_str(&format!(
        "(<= (legal ?r (flip ?x)) (true (control ?r)) (dom ?x) {})\n",
        any_view(s.legal.0, s.legal.1)
    ));
    let next_q: Vec<String> = s.next_q.iter().map(|&(t, n)| any_view(t, n)).collect();
    out.push_str(&format!(
        "(<= (next (q ?x)) (dom ?x) (role ?r) (does ?r (flip ?x)) {})\n",
        next_q.join(" ")
    ));
    out.push_str(&format!(
        "(<= (next (q ?x)) (dom ?x) (true (control white)) {})\n",
        next_q.join(" ")
    ));
    if s.q_persists {
        out.push_str("(<= (next (q ?x)) (true (q ?x)))\n");
    }
    let view_at =
        |(v, c): (u8, u8)| format!("(v{} {})", v as usize % VIEWS, consts[c as usize % 3]);
    out.push_str(&format!(
        "(<= terminal (true (step 6)))\n(<= terminal {})\n",
        view_at(s.terminal_view)
    ));
    let g = view_at(s.goal_view);
    out.push_str(&format!(
        "(<= (goal white 100) {g})\n(<= (goal white 0) (not {g}))\n\
         (<= (goal black 0) {g})\n(<= (goal black 100) (not {g}))\n"
    ));
    out
}

/// Which path each engine takes through its rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Each engine as it chooses (what `ggp-run` does).
    Chosen,
    /// The Datalog evaluator forced onto the demand-driven rules, the network as it chooses.
    DatalogDemand,
    /// The network forced onto the decomposed, demand-driven rules, the Datalog evaluator as it chooses.
    NetworkDecomposed,
    /// Both forced.
    BothForced,
}

const PATHS: [Path; 4] = [
    Path::Chosen,
    Path::DatalogDemand,
    Path::NetworkDecomposed,
    Path::BothForced,
];

/// The Datalog evaluator, demand-driven when `demand`.
fn datalog(p: &Program, demand: bool) -> Result<RuleGame, String> {
    let evaluation = if demand {
        Evaluation::Demand
    } else {
        Evaluation::Auto
    };
    RuleGame::with_options(p, "random", Limits::default(), evaluation)
        .map_err(|e| format!("datalog ({evaluation:?}): {e}"))
}

/// The network, grounded from the decomposed and demand-driven rules when `decomposed`.
fn network(p: &Program, decomposed: bool) -> Result<NetGame, String> {
    let net = if decomposed {
        ground_as(p, Budget::default(), Instant::now(), Grounding::Decomposed)
            .and_then(|g| NetGame::from_grounded(g, "random"))
    } else {
        NetGame::from_program(p, "random")
    };
    net.map_err(|e| format!("network (decomposed: {decomposed}): {e}"))
}

/// Random playouts on both engines, each on the path `path` asks, with the same moves, compared at
/// every step.
fn agree(text: &str, seed: u64) -> Result<(), TestCaseError> {
    for path in PATHS {
        agree_on(text, seed, path)?;
    }
    Ok(())
}

fn agree_on(text: &str, seed: u64, path: Path) -> Result<(), TestCaseError> {
    let p = parse_kif(text).map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
    let forced_demand = matches!(path, Path::DatalogDemand | Path::BothForced);
    let forced_decomposed = matches!(path, Path::NetworkDecomposed | Path::BothForced);
    let fail = |e: String| TestCaseError::fail(format!("{path:?}: {e}\n{text}"));
    let rule = datalog(&p, forced_demand).map_err(fail)?;
    let net = network(&p, forced_decomposed).map_err(fail)?;
    let text = &format!("path {path:?}\n{text}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut nbuf, mut rbuf) = (Vec::new(), Vec::new());
    for playout in 0..4 {
        let (mut ns, mut rs) = (net.initial_state(), rule.initial_state());
        for step in 0..10 {
            let at = format!("playout {playout} step {step}\n{text}");
            prop_assert_eq!(net.state_facts(&ns), rule.state_facts(&rs), "state, {}", at);
            let terminal = rule.is_terminal(&rs);
            prop_assert_eq!(net.is_terminal(&ns), terminal, "terminal, {}", at);
            for r in 0..2 {
                prop_assert_eq!(net.goal(&ns, r), rule.goal(&rs, r), "goal, {}", at);
            }
            if terminal {
                break;
            }
            let (mut nj, mut rj) = (Vec::new(), Vec::new());
            for r in 0..2 {
                net.legal_moves(&ns, r, &mut nbuf);
                rule.legal_moves(&rs, r, &mut rbuf);
                let nt: Vec<String> = nbuf.iter().map(|m| net.show_move(m)).collect();
                let rt: Vec<String> = rbuf.iter().map(|m| rule.show_move(m)).collect();
                prop_assert_eq!(&nt, &rt, "legal moves of role {}, {}", r, at);
                prop_assert!(!nbuf.is_empty(), "a role without moves, {}", at);
                let i = rng.gen_range(0..nbuf.len());
                nj.push(nbuf[i]);
                rj.push(rbuf[i]);
            }
            ns = net.next_state(&ns, &nj);
            rs = rule.next_state(&rs, &rj);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn network_and_datalog_agree(s in spec(), seed in any::<u64>()) {
        agree(&program(&s), seed)?;
    }
}

#[test]
fn the_generated_programs_are_valid_games() {
    // A fixed program of the family, checked by the front end too, so that a generator bug cannot make the
    // property pass vacuously.
    let s = Spec {
        init: 0b101_011,
        views: vec![
            vec![vec![(0, false)]],
            vec![vec![(5, true), (1, false)]],
            vec![vec![(7, false)]],
            vec![vec![(4, false), (9, true)]],
        ],
        legal: (2, false),
        next_q: vec![(6, false)],
        q_persists: true,
        terminal_view: (3, 0),
        goal_view: (1, 1),
    };
    let text = program(&s);
    let p = parse_kif(&text).expect("parses");
    let report = ggp::check::check(&p);
    assert!(report.is_ok(), "{:?}\n{text}", report.errors);
    agree(&text, 1).unwrap();
    // The forced paths differ from the chosen ones on this program.
    let p = parse_kif(&text).unwrap();
    assert!(datalog(&p, true).unwrap().uses_demand());
    assert!(!datalog(&p, false).unwrap().uses_demand());
    let (plain, decomposed) = (network(&p, false).unwrap(), network(&p, true).unwrap());
    assert_eq!(
        decomposed.network().load.strategy,
        Grounding::Decomposed,
        "{text}"
    );
    assert_eq!(
        plain.network().load.strategy,
        Grounding::AsWritten,
        "{text}"
    );
}

/// Forcing a path must change what runs, or the forced runs test nothing new: on most generated
/// programs the forced Datalog evaluator runs demand-driven rules, and the network grounded from the
/// decomposed rules differs from the one grounded as written.
#[test]
fn the_forced_paths_are_taken() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    let (mut demand, mut differs, total) = (0, 0, 40);
    for _ in 0..total {
        let text = program(&spec().new_tree(&mut runner).unwrap().current());
        let p = parse_kif(&text).unwrap();
        if datalog(&p, true).unwrap().uses_demand() {
            demand += 1;
        }
        let (plain, decomposed) = (network(&p, false).unwrap(), network(&p, true).unwrap());
        let (a, b) = (plain.network(), decomposed.network());
        if (a.gates.len(), a.load.instances, &a.inputs)
            != (b.gates.len(), b.load.instances, &b.inputs)
        {
            differs += 1;
        }
    }
    println!("of {total} programs: {demand} demand-driven, {differs} with a different decomposed network");
    assert!(
        demand * 4 >= total * 3,
        "only {demand} of {total} programs run demand-driven"
    );
    assert!(
        differs * 2 >= total,
        "only {differs} of {total} programs decompose differently"
    );
}
