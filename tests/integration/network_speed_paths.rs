//! The network's fast playout paths against each other and against the Datalog evaluator.
//!
//! `NetGame::random_playout_with` promises the same playout for the same generator whichever way it
//! evaluates the network, so every method must end in the same state after the same number of moves;
//! and a playout on the Datalog evaluator that draws its moves the same way (role order, each role's
//! legal moves in move order) must end there too.

use ggp::engine::RuleGame;
use ggp::game::Game;
use ggp::network::{NetGame, PlayoutMethod};
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::common;
use common::{datalog_playout, ByNumber};

fn load(name: &str) -> (NetGame, ggp::syntax::ast::Program) {
    let dir = common::shared().join("games/kif");
    let src = std::fs::read_to_string(dir.join(format!("{name}.kif"))).expect("game exists");
    let program = parse_kif(&src).expect("parses");
    (
        NetGame::from_program(&program, name).expect("grounds"),
        program,
    )
}

/// A state a few random moves into the game (a playout start other than the initial state).
fn midgame(g: &NetGame, rng: &mut SmallRng, moves: u32) -> <NetGame as Game>::State {
    g.random_playout_with(PlayoutMethod::FullPass, &g.initial_state(), rng, moves)
        .0
}

/// Playouts from the initial state, from midgame states and, as a tree search starts them, from a
/// state one move past the last start (near the saved words of that start, far from where its
/// playout ended), alternating between two games on one thread so that the propagation scratch is
/// reloaded and reused: every method gives the same result.
fn methods_agree(name: &str, other: &NetGame, playouts: u64) {
    let (mut g, _) = load(name);
    let mut pick = SmallRng::seed_from_u64(11);
    let mut last = g.initial_state();
    for k in 0..playouts {
        let start = match k % 4 {
            0 => g.initial_state(),
            1 | 2 => {
                let moves = pick.gen_range(1..8);
                midgame(&g, &mut pick, moves)
            }
            _ => {
                g.random_playout_with(PlayoutMethod::FullPass, &last, &mut pick, 1)
                    .0
            }
        };
        last = start.clone();
        let mut results = Vec::new();
        // Propagation twice: the second starts from the saved words of the same start state.
        for method in [
            PlayoutMethod::FullPass,
            PlayoutMethod::Propagate,
            PlayoutMethod::Propagate,
        ] {
            let mut rng = SmallRng::seed_from_u64(k);
            results.push(g.random_playout_with(method, &start, &mut rng, 500));
        }
        // And with each step's joint move taken back the other way than the load chose.
        let chosen = g.step_undo();
        g.set_step_undo(!chosen);
        let mut rng = SmallRng::seed_from_u64(k);
        results.push(g.random_playout_with(PlayoutMethod::Propagate, &start, &mut rng, 500));
        g.set_step_undo(chosen);
        // And with turns played by their writes the other way than the load chose.
        let by_writes = g.turns_by_writes();
        g.set_turns_by_writes(!by_writes);
        let mut rng = SmallRng::seed_from_u64(k);
        results.push(g.random_playout_with(PlayoutMethod::Propagate, &start, &mut rng, 500));
        g.set_turns_by_writes(by_writes);
        assert_eq!(results[0], results[1], "{name}: playout {k}");
        assert_eq!(results[0], results[2], "{name}: playout {k} again");
        assert_eq!(
            results[0], results[3],
            "{name}: playout {k}, step moves undone: {}",
            !chosen
        );
        assert_eq!(
            results[0], results[4],
            "{name}: playout {k}, turns by their writes: {}",
            !by_writes
        );
        if k % 5 == 4 {
            let mut rng = SmallRng::seed_from_u64(k);
            other.random_playout_with(
                PlayoutMethod::Propagate,
                &other.initial_state(),
                &mut rng,
                500,
            );
        }
    }
}

#[test]
fn full_pass_and_propagation_give_the_same_playouts() {
    let (other, _) = load("ticTacToe");
    for (name, n) in [
        ("ticTacToe", 200),
        ("connectFour", 100),
        ("breakthrough", 10),
        ("3pConnectFour", 20),
        ("blocker", 50),
        ("pentago", 10),
        ("chineseCheckers4", 5),
        ("nineBoardTicTacToe", 20),
        // Played by propagation, most turns by their writes alone.
        ("speedChess", 2),
        ("hex", 3),
        // A move reaches many readers, one step's moves share much with the next's.
        ("reversi", 3),
        // Turns by their writes timed slower than the long way, and faster (one a step counter).
        ("chineseCheckers6", 3),
        ("sudokuGrade1", 3),
        // A guard of the legal gates that is itself a gate (the role's turn and the other side's
        // pits all empty), read by nothing but legal gates whose bits follow their other input.
        ("kalaha_2009", 5),
    ] {
        methods_agree(name, &other, n);
    }
}

#[test]
fn propagation_playouts_match_the_datalog_evaluator() {
    for (name, n) in [
        ("ticTacToe", 30),
        ("connectFour", 10),
        ("blocker", 10),
        ("breakthrough", 4),
        ("speedChess", 2),
    ] {
        let (net, program) = load(name);
        let rule = RuleGame::from_program(&program, name).expect("loads");
        for k in 0..n {
            let mut a = SmallRng::seed_from_u64(k);
            let mut b = SmallRng::seed_from_u64(k);
            let (s, steps) = net.random_playout_with(
                PlayoutMethod::Propagate,
                &net.initial_state(),
                &mut a,
                300,
            );
            let (facts, rsteps) = datalog_playout(&rule, &mut b, 300).expect("plays");
            assert_eq!(
                (net.state_facts(&s), steps),
                (facts, rsteps),
                "{name}: playout {k}"
            );
        }
    }
}

/// Whether the `next` of the proposition `prop` reads (through gates) the proposition `input`.
fn next_reads(g: &NetGame, prop: &str, input: &str) -> bool {
    let n = g.network();
    let index = |kif: &str| {
        n.props
            .iter()
            .position(|t| n.terms.kif(*t) == kif)
            .unwrap_or_else(|| panic!("no proposition {kif}"))
    };
    let target = 1 + index(input);
    let mut todo = vec![(n.next[index(prop)] >> 1) as usize];
    let mut seen = vec![false; n.num_nodes];
    while let Some(node) = todo.pop() {
        if node == target {
            return true;
        }
        if std::mem::replace(&mut seen[node], true) || node < n.first_gate {
            continue;
        }
        let gate = n.gates[node - n.first_gate];
        todo.extend(
            n.inputs[gate.start as usize..gate.end as usize]
                .iter()
                .map(|&l| (l >> 1) as usize),
        );
    }
    false
}

/// A mark takes the colour of the role whose turn it is: `(control ?p)` with any role's move.
const TURNS: &str = "(role a) (role b) (spot 1) (spot 2)
    (<= (legal a (go ?x)) (true (control a)) (spot ?x) (not (true (mark ?x a))) (not (true (mark ?x b))))
    (<= (legal b (go ?x)) (true (control b)) (spot ?x) (not (true (mark ?x a))) (not (true (mark ?x b))))
    (<= (legal a noop) (true (control b)))
    (<= (legal b noop) (true (control a)))
    (<= (next (mark ?x ?p)) (does ?r (go ?x)) (true (control ?p)))
    (<= (next (mark ?x ?p)) (true (mark ?x ?p)))
    (<= (next (control b)) (true (control a)))
    (<= (next (control a)) (true (control b)))
    (<= filled (true (mark 1 ?p)) (true (mark 2 ?q)))
    (<= terminal filled)
    (goal a 50) (goal b 50)";

/// A role moves only on its turn and at most one turn holds (proved from `init` and `next`), so a move
/// implies whose turn it is and the turn need not feed the marks' `next`; with two turns at once
/// (nothing proved), it must. Either way the network plays as the Datalog evaluator does.
#[test]
fn a_proved_turn_is_left_out_of_the_moves_effects() {
    for (init, reads) in [
        ("(init (control a))", false),
        ("(init (control a)) (init (control b))", true),
    ] {
        let src = format!("{TURNS} {init}");
        let program = parse_kif(&src).expect("parses");
        let net = NetGame::from_program(&program, "turns").expect("grounds");
        assert_eq!(
            next_reads(&net, "(mark 1 a)", "(control a)"),
            reads,
            "{init}"
        );
        let rule = RuleGame::from_program(&program, "turns").expect("loads");
        for k in 0..20 {
            let mut a = SmallRng::seed_from_u64(k);
            let mut b = SmallRng::seed_from_u64(k);
            let (s, steps) = net.random_playout(&net.initial_state(), &mut a, &mut Vec::new(), 50);
            assert_eq!(
                (net.state_facts(&s), steps),
                datalog_playout(&rule, &mut b, 50).expect("plays"),
                "{init}: playout {k}"
            );
        }
    }
}

/// Where a playout ended, and after how many steps.
type Played = (<NetGame as Game>::State, u32);

/// A [`ByNumber`] playout of at most `steps` from `start` on the network's own path, then by the
/// trait's move methods, each with the generator of seed `seed`.
fn guided_both_ways(
    g: &NetGame,
    start: &<NetGame as Game>::State,
    seed: u64,
    steps: u32,
) -> (Played, Played) {
    let (mut buf, mut numbers) = (Vec::new(), Vec::new());
    let mut rng = SmallRng::seed_from_u64(seed);
    let fast = g.guided_playout(
        start,
        &mut rng,
        &mut buf,
        &mut numbers,
        steps,
        &mut ByNumber,
    );
    let mut rng = SmallRng::seed_from_u64(seed);
    let slow = ggp::game::guided_playout_by_moves(
        g,
        start,
        &mut rng,
        &mut buf,
        &mut numbers,
        steps,
        &mut ByNumber,
    );
    (fast, slow)
}

/// A guided playout on the network's propagation path plays the moves the trait's move methods
/// play for the same guide, and the guide sees every legal move by its number.
#[test]
fn guided_playouts_on_the_fast_path_match_the_move_methods() {
    for (name, n) in [
        ("ticTacToe", 20),
        ("connectFour", 20),
        ("breakthrough", 5),
        ("3pConnectFour", 5),
        ("blocker", 10),
        ("nineBoardTicTacToe", 5),
        // Sixty words of legal bits a role: a role draws from the words its groups that hold cover.
        ("speedChess", 2),
    ] {
        let (g, _) = load(name);
        assert_eq!(g.move_count(), g.network().moves.len());
        let mut pick = SmallRng::seed_from_u64(3);
        for k in 0..n {
            let moves = pick.gen_range(0..6);
            let start = midgame(&g, &mut pick, moves);
            let (fast, slow) = guided_both_ways(&g, &start, k, 300);
            assert_eq!(fast, slow, "{name}: playout {k}");
        }
    }
}

/// A game whose one role has 2,000 moves (32 words of legal bits): a thousand `pick`s in its first
/// phase, then a thousand `take`s, those of a pair already taken left out. Each move's legal gate
/// reads its phase, so the moves fall in two groups by phase, and in the second the role draws from
/// the words of its `take`s alone, past its first word.
const TWO_PHASES: &str = "
    (role a)
    (init (phase 1))
    (d 0) (d 1) (d 2) (d 3) (d 4) (d 5) (d 6) (d 7) (d 8) (d 9)
    (<= (legal a (pick ?x ?y ?z)) (true (phase 1)) (d ?x) (d ?y) (d ?z) (not (true (picked ?x))))
    (<= (legal a (take ?x ?y ?z)) (true (phase 2)) (d ?x) (d ?y) (d ?z) (not (true (taken ?x ?y))))
    (<= (next (phase 2)) (true (phase 1)))
    (<= (next (phase 2)) (true (phase 2)))
    (<= (next (taken ?x ?y)) (does a (take ?x ?y ?z)))
    (<= (next (taken ?x ?y)) (true (taken ?x ?y)))
    (<= (next (picked ?z)) (does a (pick ?x ?y ?z)))
    (<= (next (picked ?z)) (true (picked ?z)))
    (<= (next (picked ?z)) (does a (take ?x ?y ?z)))
    (<= terminal (true (picked 9)))
    (<= (goal a 100) (true (taken 1 1)))
    (<= (goal a 0) (not (true (taken 1 1))))";

/// A guided playout whose role draws from a stretch of its legal words that starts past the first
/// plays the moves the trait's move methods play for the same guide: the guide is shown the moves of
/// the stretch, and the bit it picks is read from the stretch's first word on.
#[test]
fn guided_playouts_drawing_past_the_first_legal_word_match_the_move_methods() {
    let program = parse_kif(TWO_PHASES).expect("parses");
    let mut g = NetGame::from_program(&program, "two phases").expect("grounds");
    g.set_playout_method(PlayoutMethod::Propagate);
    assert!(
        g.network().legal[0].len() > 64 * 8,
        "the role's moves fill more than eight words"
    );
    let mut lengths = Vec::new();
    for k in 0..30 {
        let mut rng = SmallRng::seed_from_u64(k);
        let start = midgame(&g, &mut rng, (k % 3) as u32);
        let (fast, slow) = guided_both_ways(&g, &start, k, 500);
        assert_eq!(fast, slow, "playout {k}");
        lengths.push(fast.1);
    }
    // Playouts of the second phase, several steps each (the guide keeps away from `picked 9`).
    assert!(
        lengths.iter().filter(|&&n| n >= 3).count() >= 10,
        "lengths {lengths:?}"
    );
}

/// Every `Game` query on a game whose queries move the propagation's words (legal moves, mover,
/// terminal, goals, next state) against the same game answering from full passes, along random walks
/// that keep jumping: back to a state seen before (the words flip a few propositions or load afresh),
/// or past a playout (the words start where it ended).
#[test]
fn queries_answered_by_propagation_match_the_full_pass() {
    for (name, walks) in [
        ("ticTacToe", 20),
        ("connectFour", 10),
        ("connectFourSimultaneous", 10),
        ("breakthrough", 4),
        ("3pConnectFour", 6),
        ("reversi", 3),
        ("blocker", 10),
        ("pacman3p", 3),
        ("sheepAndWolf", 6),
        ("nim1", 10),
    ] {
        let (prop, _) = load(name);
        let (mut full, _) = load(name);
        full.set_playout_method(PlayoutMethod::FullPass);
        let mut prop = prop;
        prop.set_playout_method(PlayoutMethod::Propagate);
        let roles = prop.info().num_roles();
        let mut rng = SmallRng::seed_from_u64(5);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut seen = vec![prop.initial_state()];
        let mut queried = 0;
        for walk in 0..walks {
            let mut s = prop.initial_state();
            for step in 0..200 {
                let at = format!("{name}: walk {walk}, step {step}");
                match rng.gen_range(0..10) {
                    0 => s = seen[rng.gen_range(0..seen.len())].clone(),
                    1 => {
                        let mut r = SmallRng::seed_from_u64(step);
                        prop.random_playout_with(PlayoutMethod::Propagate, &s, &mut r, 400);
                    }
                    _ => {}
                }
                assert_eq!(prop.is_terminal(&s), full.is_terminal(&s), "{at}");
                assert_eq!(prop.mover(&s), full.mover(&s), "{at}");
                for r in 0..roles {
                    assert_eq!(prop.goal(&s, r), full.goal(&s, r), "{at}, goal of {r}");
                }
                queried += 1;
                if prop.is_terminal(&s) {
                    break;
                }
                let mut joint = Vec::new();
                for r in 0..roles {
                    prop.legal_moves(&s, r, &mut a);
                    full.legal_moves(&s, r, &mut b);
                    assert_eq!(a, b, "{at}, legal moves of {r}");
                    if a.is_empty() {
                        break;
                    }
                    joint.push(a[rng.gen_range(0..a.len())]);
                }
                if joint.len() < roles {
                    break;
                }
                let next = prop.next_state(&s, &joint);
                assert_eq!(next, full.next_state(&s, &joint), "{at}, after {joint:?}");
                seen.push(s);
                s = next;
            }
        }
        assert!(queried > walks, "{name}: {queried} states asked about");
    }
}
