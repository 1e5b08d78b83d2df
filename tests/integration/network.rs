//! The grounded network against the Datalog evaluator (the reference traces are replayed on both
//! engines in `conformance.rs`). The differential test plays random playouts on both engines and
//! compares legal sets, states, terminal flags and goals at every step.

use ggp::engine::{BitState, RuleGame};
use ggp::game::{draw_move, Game};
use ggp::network::{NetGame, NetMove};
use ggp::syntax::parse_kif;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::common;
use common::shared;

fn load(name: &str) -> (ggp::syntax::ast::Program, String) {
    let src = std::fs::read_to_string(shared().join("games/kif").join(format!("{name}.kif")))
        .expect("game exists");
    (parse_kif(&src).expect("parses"), src)
}

/// Plays `playouts` random playouts on both engines with the same moves and compares every step.
fn differential(name: &str, playouts: usize) {
    let (program, _) = load(name);
    let net = NetGame::from_program(&program, name).expect("grounds");
    let rule = RuleGame::from_program(&program, name).expect("loads");
    assert_eq!(net.info().roles, rule.info().roles, "{name}: roles");
    assert_eq!(
        net.info().dynamics,
        rule.info().dynamics,
        "{name}: dynamics"
    );
    let mut rng = SmallRng::seed_from_u64(7);
    let roles = net.info().num_roles();
    let (mut nbuf, mut rbuf) = (Vec::new(), Vec::new());
    for k in 0..playouts {
        let mut ns = net.initial_state();
        let mut rs = rule.initial_state();
        for step in 0..500 {
            let at = format!("{name} playout {k} step {step}");
            assert_eq!(net.state_facts(&ns), rule.state_facts(&rs), "{at}: state");
            let term = net.is_terminal(&ns);
            assert_eq!(term, rule.is_terminal(&rs), "{at}: terminal");
            for r in 0..roles {
                assert_eq!(
                    net.goal_values(&ns, r),
                    rule.goal_values(&rs, r).unwrap(),
                    "{at}: goals of role {r}"
                );
            }
            assert_eq!(net.mover(&ns), rule.mover(&rs), "{at}: mover");
            if term {
                break;
            }
            let (mut nj, mut rj) = (Vec::new(), Vec::new());
            for r in 0..roles {
                net.legal_moves(&ns, r, &mut nbuf);
                rule.legal_moves(&rs, r, &mut rbuf);
                let nt: Vec<String> = nbuf.iter().map(|m| net.show_move(m)).collect();
                let rt: Vec<String> = rbuf.iter().map(|m| rule.show_move(m)).collect();
                assert_eq!(nt, rt, "{at}: legal moves of role {r}");
                if nbuf.is_empty() {
                    break;
                }
                let i = rng.gen_range(0..nbuf.len());
                nj.push(nbuf[i]);
                rj.push(rbuf[i]);
            }
            if nj.len() < roles {
                break;
            }
            ns = net.next_state(&ns, &nj);
            rs = rule.next_state(&rs, &rj);
        }
    }
}

#[test]
fn network_and_datalog_agree_on_random_playouts() {
    for (name, n) in [
        ("ticTacToe", 100),
        ("connectFour", 20),
        ("breakthrough", 5),
        ("3pConnectFour", 5),
        ("blocker", 20),
        ("pentago", 5),
    ] {
        differential(name, n);
    }
}

/// Chess checks every move against the squares the opponent attacks, through relations the demand
/// rewrite copies once per way they are asked (from a square, to a square); the network grounds one
/// copy where two have the same facts. Its random playouts check kings often enough to read them.
#[test]
fn network_and_datalog_agree_on_random_chess_playouts() {
    differential("chess", 3);
}

/// Arithmetic that leaves the integers the rules name: from square 1 the hop down computes
/// `minus(1, 2, Y)`, -1. The load-time analysis keeps such results where the rule does not feed
/// itself (only a counter's arithmetic is kept to the named range), so both engines see the move, its
/// state and its goal, and count the same games.
#[test]
fn both_engines_play_a_move_computed_past_the_integers_the_rules_name() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/arithmetic/hop_off_the_board.gdl");
    let (program, _) = ggp::syntax::parse_file(&path).expect("parses");
    let net = NetGame::from_program(&program, "hop").expect("grounds");
    let rule = RuleGame::from_program(&program, "hop").expect("loads");
    // jump(1); then jump(-1), which ends the game, or jump(2); then jump(0), which ends it, or
    // jump(3); then jump(1).
    assert_eq!(
        ggp::game::perft(&net, &net.initial_state(), 4),
        3,
        "network"
    );
    assert_eq!(
        ggp::game::perft(&rule, &rule.initial_state(), 4),
        3,
        "datalog"
    );
    let (mut nbuf, mut rbuf) = (Vec::new(), Vec::new());
    net.legal_moves(&net.initial_state(), 0, &mut nbuf);
    rule.legal_moves(&rule.initial_state(), 0, &mut rbuf);
    let (ns, rs) = (
        net.play(&net.initial_state(), 0, &nbuf[0]),
        rule.play(&rule.initial_state(), 0, &rbuf[0]),
    );
    net.legal_moves(&ns, 0, &mut nbuf);
    rule.legal_moves(&rs, 0, &mut rbuf);
    let shown = |moves: Vec<String>| {
        let mut moves = moves;
        moves.sort();
        moves
    };
    let nt = shown(nbuf.iter().map(|m| net.show_move(m)).collect());
    let rt = shown(rbuf.iter().map(|m| rule.show_move(m)).collect());
    assert_eq!(nt, rt);
    assert!(nt.iter().any(|m| m.contains("-1")), "{nt:?}");
    let down = nbuf
        .iter()
        .find(|m| net.show_move(m).contains("-1"))
        .expect("the hop down");
    let off = net.play(&ns, 0, down);
    assert!(net.is_terminal(&off));
    assert_eq!(net.goal_values(&off, 0), vec![100]);
}

#[test]
fn batch_playouts_end_in_terminal_states() {
    let (program, _) = load("ticTacToe");
    let net = NetGame::from_program(&program, "ticTacToe").unwrap();
    let mut rng = SmallRng::seed_from_u64(1);
    let (lanes, steps) = net.batch_playouts(&mut rng, 64, 1000);
    assert_eq!(lanes, 64);
    // Every tic-tac-toe playout lasts 5 to 9 moves.
    assert!((64 * 5..=64 * 9).contains(&steps), "{steps}");
}

/// The 64-lane playouts draw each lane's moves uniformly, as the one-at-a-time playouts do: over
/// thousands of playouts from the same states, every role's mean goal and the mean length agree.
#[test]
fn batch_playouts_score_as_one_playout_at_a_time_does() {
    for (name, moves, tolerance) in [
        ("ticTacToe", 0, 2.0),
        ("connectFour", 0, 2.5),
        ("connectFour", 6, 2.5),
        ("breakthrough", 10, 3.0),
        ("3pConnectFour", 0, 2.5),
    ] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).unwrap();
        let roles = net.info().num_roles();
        let mut rng = SmallRng::seed_from_u64(5);
        let mut buf = Vec::new();
        let start = net
            .random_playout(&net.initial_state(), &mut rng, &mut buf, moves)
            .0;
        let rounds = 100;
        let mut batch = vec![0i64; roles];
        let mut batch_steps = 0;
        for _ in 0..rounds {
            batch_steps += net
                .batch_playouts_from(&start, &mut rng, 64, 1000, &mut batch)
                .1;
        }
        let mut single = vec![0i64; roles];
        let mut single_steps = 0;
        for _ in 0..rounds * 64 {
            let (end, steps) = net.random_playout(&start, &mut rng, &mut buf, 1000);
            single_steps += u64::from(steps);
            for (r, total) in single.iter_mut().enumerate() {
                *total += i64::from(net.goal(&end, r));
            }
        }
        let n = f64::from(rounds * 64);
        for r in 0..roles {
            let (b, s) = (batch[r] as f64 / n, single[r] as f64 / n);
            assert!(
                (b - s).abs() < tolerance,
                "{name} after {moves}: role {r}: batch {b:.1}, one at a time {s:.1}"
            );
        }
        let (b, s) = (batch_steps as f64 / n, single_steps as f64 / n);
        assert!(
            (b - s).abs() < 0.05 * s,
            "{name}: lengths {b:.2} and {s:.2}"
        );
    }
}

/// Playouts from different states in the lanes of one batch (`playout_goals_each`, what `+leaves`
/// plays) score each lane as its own state: a lane that starts terminal keeps its state's goals,
/// and lanes from two other states score, over many batches, what 64-lane playouts from each of
/// them alone score.
#[test]
fn batch_playouts_from_different_states_score_each_lane_as_its_own_state() {
    for (name, depth_a, depth_b) in [
        ("connectFour", 8, 13),
        ("ticTacToe", 2, 5),
        ("connectFourSimultaneous", 6, 11),
        ("3pConnectFour", 6, 12),
    ] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).unwrap();
        let roles = net.info().num_roles();
        let mut rng = SmallRng::seed_from_u64(7);
        let mut buf = Vec::new();
        let initial = net.initial_state();
        // The first playouts of each depth that end where the test needs them (not on the draws
        // of one seed).
        let mut play_until = |depth: u32, terminal: bool| {
            (0..100)
                .map(|_| net.random_playout(&initial, &mut rng, &mut buf, depth).0)
                .find(|s| net.is_terminal(s) == terminal)
                .unwrap_or_else(|| panic!("{name}: no playout of {depth} moves ends so"))
        };
        let a = play_until(depth_a, false);
        let b = play_until(depth_b, false);
        let ended = play_until(1000, true);
        // Lane 0 starts terminal; then a and b alternate.
        let state_of = |k: usize| match k {
            0 => &ended,
            k if k % 2 == 1 => &a,
            _ => &b,
        };
        let rounds = 100;
        let mut goals = vec![0i64; 64 * roles];
        let (mut sum_a, mut sum_b) = (vec![0i64; roles], vec![0i64; roles]);
        for _ in 0..rounds {
            let later = std::time::Instant::now() + std::time::Duration::from_secs(3600);
            net.playout_goals_each(64, &state_of, &mut rng, &mut buf, &mut goals, later)
                .expect("no deadline within the hour");
            for (r, &goal) in goals[..roles].iter().enumerate() {
                assert_eq!(goal, i64::from(net.goal(&ended, r)), "{name}: lane 0");
            }
            for (k, lane) in goals.chunks(roles).enumerate().skip(1) {
                let sum = if k % 2 == 1 { &mut sum_a } else { &mut sum_b };
                for (total, &goal) in sum.iter_mut().zip(lane) {
                    *total += goal;
                }
            }
        }
        // A deadline already passed stops the batch before its first step: no goals to read.
        let passed = std::time::Instant::now();
        assert_eq!(
            net.playout_goals_each(64, &state_of, &mut rng, &mut buf, &mut goals, passed),
            None,
            "{name}"
        );
        for (state, sum, lanes) in [(&a, &sum_a, 32), (&b, &sum_b, 31)] {
            let mut alone = vec![0i64; roles];
            for _ in 0..rounds {
                net.batch_playouts_from(state, &mut rng, lanes, 1000, &mut alone);
            }
            let n = f64::from(rounds * lanes);
            for r in 0..roles {
                let (each, one) = (sum[r] as f64 / n, alone[r] as f64 / n);
                assert!(
                    (each - one).abs() < 5.0,
                    "{name}: role {r}: lanes of different states {each:.1}, one state {one:.1}"
                );
            }
        }
    }
}

#[test]
fn random_playout_reaches_a_terminal_state() {
    let (program, _) = load("connectFour");
    let net = NetGame::from_program(&program, "connectFour").unwrap();
    let mut rng = SmallRng::seed_from_u64(3);
    let mut buf = Vec::new();
    for _ in 0..50 {
        let (s, steps) = net.random_playout(&net.initial_state(), &mut rng, &mut buf, 1000);
        assert!(net.is_terminal(&s));
        assert!((7..=48).contains(&steps), "{steps}");
    }
}

#[test]
fn the_network_does_not_depend_on_how_many_threads_ground_it() {
    // Grounding workers take rules as they come, so which worker grounds which rule varies; the
    // instances are added in rule order, so the network must not.
    let ground_on = |threads: usize, program: &ggp::syntax::ast::Program| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
            .install(|| ggp::network::ground(program))
            .expect("grounds")
    };
    // As written (checkers) and decomposed (merrills).
    for name in ["ticTacToe", "checkers", "merrills"] {
        let (program, _) = load(name);
        let one = ground_on(1, &program);
        let three = ground_on(3, &program);
        assert_eq!(one.load.strategy, three.load.strategy, "{name}");
        assert_eq!(one.props, three.props, "{name}: propositions");
        assert_eq!(one.gates, three.gates, "{name}: gates");
        assert_eq!(one.inputs, three.inputs, "{name}: gate inputs");
        assert_eq!(one.legal, three.legal, "{name}: legal outputs");
        assert_eq!(one.goals, three.goals, "{name}: goal outputs");
        assert_eq!(one.next, three.next, "{name}: next outputs");
        assert_eq!(one.terminal, three.terminal, "{name}: terminal");
    }
}

/// A decisive playout of at most `steps` joint moves from the initial state, or a greedy one
/// (decisive and anti-decisive).
fn lane_playout<G: Game>(
    g: &G,
    greedy: bool,
    (seed, steps): (u64, u32),
    buf: &mut Vec<G::Move>,
) -> (G::State, u32) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let start = g.initial_state();
    match greedy {
        true => g.greedy_playout(&start, &mut rng, buf, steps),
        false => g.decisive_playout(&start, &mut rng, buf, steps),
    }
}

/// Decisive and greedy playouts on the network (each move of the role in control tried in a lane of
/// its own) play the same moves as the trait's defaults on the Datalog evaluator (each move tried in
/// turn) from the same generator, on turn-taking games whose roles have at most 64 moves, to the
/// end and cut after a few moves.
#[test]
fn decisive_and_greedy_playouts_on_the_network_play_as_the_defaults_do_on_the_datalog_evaluator() {
    for greedy in [false, true] {
        for (name, playouts) in [("ticTacToe", 40), ("connectFour", 10), ("breakthrough", 2)] {
            let (program, _) = load(name);
            let net = NetGame::from_program(&program, name).expect("grounds");
            let rule = RuleGame::from_program(&program, name).expect("loads");
            let (mut nbuf, mut rbuf) = (Vec::new(), Vec::new());
            for seed in 0..playouts {
                for steps in [1000, 3, 7] {
                    let (nend, nsteps) = lane_playout(&net, greedy, (seed, steps), &mut nbuf);
                    let (rend, rsteps) = lane_playout(&rule, greedy, (seed, steps), &mut rbuf);
                    let what = format!("{name} seed {seed} (greedy: {greedy}, {steps} steps)");
                    assert_eq!(nsteps, rsteps, "{what}: length");
                    assert_eq!(net.state_facts(&nend), rule.state_facts(&rend), "{what}");
                    assert!(steps < 1000 || net.is_terminal(&nend), "{what}: not over");
                }
            }
        }
    }
}

/// Where some moves of the role in control let the other role win at once and some do not, a greedy
/// playout's first step plays one that does not; a random one's often does.
#[test]
fn a_greedy_playout_does_not_hand_the_other_role_a_win_in_one() {
    for name in ["ticTacToe", "connectFour"] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).expect("grounds");
        let mut rng = SmallRng::seed_from_u64(5);
        let (mut buf, mut replies) = (Vec::new(), Vec::new());
        let gives_a_win = |s: &BitState, replies: &mut Vec<NetMove>| {
            !net.is_terminal(s)
                && net
                    .mover(s)
                    .is_some_and(|r| net.decisive_move(s, r, replies).is_some())
        };
        let (mut positions, mut random_gave) = (0, 0);
        for _ in 0..400 {
            let moves = rng.gen_range(0..30);
            let (s, _) = net.random_playout(&net.initial_state(), &mut rng, &mut buf, moves);
            let Some(mover) = net.mover(&s) else {
                continue;
            };
            if net.is_terminal(&s) || net.decisive_move(&s, mover, &mut buf).is_some() {
                continue;
            }
            let moves = buf.clone();
            let unsafe_moves = moves
                .iter()
                .filter(|m| gives_a_win(&net.play(&s, mover, m), &mut replies))
                .count();
            if unsafe_moves == 0 || unsafe_moves == moves.len() {
                continue;
            }
            positions += 1;
            let (after, _) = net.greedy_playout(&s, &mut rng, &mut buf, 1);
            assert!(
                !gives_a_win(&after, &mut replies),
                "{name}: a move handing over a win was played from {:?}",
                net.state_facts(&s)
            );
            let (after, _) = net.random_playout(&s, &mut rng, &mut buf, 1);
            if gives_a_win(&after, &mut replies) {
                random_gave += 1;
            }
        }
        assert!(
            positions >= 10,
            "{name}: only {positions} positions with a threat"
        );
        assert!(
            random_gave > 0,
            "{name}: random playouts never handed over a win"
        );
    }
}

/// Wherever the role in control can win in one move, a decisive playout's first step wins (and so
/// does the default's, which plays the same moves: see above); a random one's often does not.
#[test]
fn a_decisive_playout_takes_a_win_in_one() {
    for name in ["ticTacToe", "connectFour"] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).expect("grounds");
        let mut rng = SmallRng::seed_from_u64(11);
        let mut buf = Vec::new();
        let (mut positions, mut random_missed) = (0, 0);
        for _ in 0..300 {
            let moves = rng.gen_range(0..30);
            let (s, _) = net.random_playout(&net.initial_state(), &mut rng, &mut buf, moves);
            let Some(mover) = net.mover(&s) else {
                continue;
            };
            net.legal_moves(&s, mover, &mut buf);
            let wins = buf.iter().any(|m| {
                let after = net.play(&s, mover, m);
                net.is_terminal(&after) && net.goal(&after, mover) == 100
            });
            if !wins {
                continue;
            }
            positions += 1;
            let (won, _) = net.decisive_playout(&s, &mut rng, &mut buf, 1);
            assert!(
                net.is_terminal(&won) && net.goal(&won, mover) == 100,
                "{name}: the win was not taken from {:?}",
                net.state_facts(&s)
            );
            let (after, _) = net.random_playout(&s, &mut rng, &mut buf, 1);
            if net.goal(&after, mover) != 100 {
                random_missed += 1;
            }
        }
        assert!(
            positions >= 10,
            "{name}: only {positions} positions with a win in one"
        );
        assert!(
            random_missed > 0,
            "{name}: random playouts took every win too"
        );
    }
}

#[test]
fn breakthrough_is_won_by_a_pawn_on_the_last_row() {
    let (program, _) = load("breakthrough");
    let net = NetGame::from_program(&program, "breakthrough").expect("grounds");
    let expect = |row: u32, colour: &str| -> Vec<String> {
        (1..=8)
            .map(|x| format!("(cellHolds {x} {row} {colour})"))
            .collect()
    };
    assert_eq!(net.winning_propositions(0), expect(8, "white"));
    assert_eq!(net.winning_propositions(1), expect(1, "black"));
    // Four in a row takes four facts: Connect Four has no winning proposition.
    let (program, _) = load("connectFour");
    let net = NetGame::from_program(&program, "connectFour").expect("grounds");
    assert!(net.winning_propositions(0).is_empty());
}

/// A winning playout as the trait's move methods play it: every role draws its move, then the first
/// role with a legal move whose next state holds one of its winning propositions plays the first
/// such move instead.
fn winning_playout_by_moves(
    net: &NetGame,
    start: &<NetGame as Game>::State,
    rng: &mut SmallRng,
    max_steps: u32,
) -> (Vec<String>, u32) {
    let roles = net.info().num_roles();
    let winning: Vec<Vec<String>> = (0..roles).map(|r| net.winning_propositions(r)).collect();
    let mut s = start.clone();
    let mut buf = Vec::new();
    let mut steps = 0;
    'play: while steps < max_steps && !net.is_terminal(&s) {
        let mut legal = Vec::new();
        let mut joint = Vec::new();
        for r in 0..roles {
            net.legal_moves(&s, r, &mut buf);
            if buf.is_empty() {
                break 'play;
            }
            joint.push(buf[draw_move(rng, buf.len())]);
            legal.push(buf.clone());
        }
        'roles: for r in 0..roles {
            for &m in &legal[r] {
                let mut trial = joint.clone();
                trial[r] = m;
                let facts = net.state_facts(&net.next_state(&s, &trial));
                if facts.iter().any(|f| winning[r].contains(f)) {
                    joint = trial;
                    break 'roles;
                }
            }
        }
        s = net.next_state(&s, &joint);
        steps += 1;
    }
    (net.state_facts(&s), steps)
}

#[test]
fn winning_playouts_take_the_first_move_that_makes_a_winning_proposition_true() {
    for (name, playouts) in [
        ("breakthrough", 30),
        ("knightThrough", 20),
        ("connectFour", 20),
    ] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).expect("grounds");
        let mut pick = SmallRng::seed_from_u64(3);
        let mut buf = Vec::new();
        let mut won = 0;
        for k in 0..playouts {
            let start = net
                .random_playout(&net.initial_state(), &mut pick, &mut buf, k % 12)
                .0;
            let mut a = SmallRng::seed_from_u64(k as u64);
            let mut b = SmallRng::seed_from_u64(k as u64);
            let (end, steps) = net.winning_playout(&start, &mut a, 500, false);
            let expected = winning_playout_by_moves(&net, &start, &mut b, 500);
            assert_eq!(
                (net.state_facts(&end), steps),
                expected,
                "{name}: playout {k}"
            );
            let facts = net.state_facts(&end);
            won += (0..net.info().num_roles())
                .filter(|&r| {
                    net.winning_propositions(r)
                        .iter()
                        .any(|f| facts.contains(f))
                })
                .count();
        }
        // On the race games most playouts end with a pawn or knight on the last row.
        if name != "connectFour" {
            assert!(won > playouts as usize / 2, "{name}: {won} of {playouts}");
        }
    }
}

/// Whether `role` has a move in `state` whose next state holds one of its winning propositions,
/// found through the trait's move methods (every other role plays its first legal move).
fn wins_in_one(
    net: &NetGame,
    state: &<NetGame as Game>::State,
    role: usize,
    winning: &[String],
) -> bool {
    let roles = net.info().num_roles();
    let mut buf = Vec::new();
    let mut joint = Vec::new();
    for r in 0..roles {
        net.legal_moves(state, r, &mut buf);
        let Some(&first) = buf.first() else {
            return false;
        };
        joint.push(first);
    }
    net.legal_moves(state, role, &mut buf);
    buf.iter().any(|&m| {
        joint[role] = m;
        let facts = net.state_facts(&net.next_state(state, &joint));
        facts.iter().any(|f| winning.contains(f))
    })
}

#[test]
fn blocking_playouts_let_the_opponent_win_in_one_only_when_no_move_stops_it() {
    for name in ["breakthrough", "knightThrough"] {
        let (program, _) = load(name);
        let net = NetGame::from_program(&program, name).expect("grounds");
        let winning: Vec<Vec<String>> = (0..2).map(|r| net.winning_propositions(r)).collect();
        let mut pick = SmallRng::seed_from_u64(5);
        let mut buf = Vec::new();
        // Positions where the role to move can stop the other's win in one, and where it cannot.
        let (mut stoppable, mut unstoppable, mut missed) = (0, 0, 0);
        for k in 0..400u64 {
            let start = net
                .random_playout(
                    &net.initial_state(),
                    &mut pick,
                    &mut buf,
                    10 + (k % 40) as u32,
                )
                .0;
            if net.is_terminal(&start) {
                continue;
            }
            let Some((mover, other)) = [(0, 1), (1, 0)].into_iter().find(|&(r, _)| {
                net.legal_moves(&start, r, &mut buf);
                buf.len() > 1
            }) else {
                continue;
            };
            if wins_in_one(&net, &start, mover, &winning[mover]) {
                continue;
            }
            // The other role wins in one after every move of the mover, or after some.
            net.legal_moves(&start, mover, &mut buf);
            let moves = buf.clone();
            let mut joint = vec![moves[0]; 2];
            net.legal_moves(&start, other, &mut buf);
            joint[other] = buf[0];
            let loses = |m| {
                let mut joint = joint.clone();
                joint[mover] = m;
                let next = net.next_state(&start, &joint);
                !net.is_terminal(&next) && wins_in_one(&net, &next, other, &winning[other])
            };
            let threatened = moves.iter().filter(|&&m| loses(m)).count();
            if threatened == 0 {
                continue;
            }
            let can_stop = threatened < moves.len();
            if can_stop {
                stoppable += 1;
            } else {
                unstoppable += 1;
            }
            for (block, seed) in [(true, k), (false, k)] {
                let mut rng = SmallRng::seed_from_u64(seed);
                let (end, _) = net.winning_playout(&start, &mut rng, 2, block);
                let facts = net.state_facts(&end);
                let lost = facts.iter().any(|f| winning[other].contains(f));
                if block {
                    assert!(
                        !(lost && can_stop),
                        "{name}: position {k}: a move stops the win"
                    );
                    if !can_stop {
                        assert!(lost, "{name}: position {k}: no move stops the win");
                    }
                } else if lost && can_stop {
                    missed += 1;
                }
            }
        }
        assert!(
            stoppable >= 10 && unstoppable >= 5,
            "{name}: {stoppable} stoppable, {unstoppable} not"
        );
        // Without blocking, random play walks into wins it could have stopped.
        assert!(missed > stoppable / 2, "{name}: {missed} of {stoppable}");
    }
}

/// Uniformly random moves, as a playout guide.
struct Uniform;

impl ggp::game::PlayoutGuide for Uniform {
    fn pick(&mut self, _: usize, moves: &[u32], rng: &mut SmallRng) -> usize {
        rng.gen_range(0..moves.len())
    }
}

/// The state-word mask of the base propositions whose KIF text starts with `prefix` and ends with
/// `suffix`.
fn mask_of(net: &NetGame, prefix: &str, suffix: &str) -> Vec<u64> {
    mask_where(net, |text| {
        text.starts_with(prefix) && text.ends_with(suffix)
    })
}

/// The state-word mask of the base propositions whose KIF text `holds`.
fn mask_where(net: &NetGame, holds: impl Fn(&str) -> bool) -> Vec<u64> {
    let props = net.base_propositions();
    let mut mask = vec![0u64; props.len().div_ceil(64)];
    for (p, text) in props.iter().enumerate() {
        if holds(text) {
            mask[p / 64] |= 1 << (p % 64);
        }
    }
    mask
}

fn count(mask: &[u64], words: &[u64]) -> u32 {
    mask.iter()
        .zip(words)
        .map(|(m, w)| (m & w).count_ones())
        .sum()
}

/// How many of the pieces `victims` masks are left after one step of a capturing playout at rate 1
/// from `s` (its generator of seed `seed`).
fn after_a_forced_capture(
    net: &NetGame,
    s: &BitState,
    table: &ggp::game::Captures,
    victims: &[u64],
    seed: usize,
) -> u32 {
    let mut seeded = SmallRng::seed_from_u64(seed as u64);
    let (after, steps) = net.capturing_playout(
        s,
        &mut seeded,
        &mut Vec::new(),
        &mut Vec::new(),
        1,
        table,
        1.0,
        &mut Uniform,
    );
    assert_eq!(steps, 1);
    count(victims, net.state_words(&after))
}

/// The capture table that the network's analysis gives breakthrough's pieces says, for every legal
/// move of the mover along random games, exactly whether the move takes a piece (the other side's
/// count drops), and a capturing playout at rate 1 takes one whenever it can.
#[test]
fn capture_tables_tell_exactly_which_moves_take_a_piece() {
    for (name, board) in [("breakthrough", "(cellHolds "), ("knightThrough", "(cell ")] {
        let (program, _) = load(name);
        let mut net = NetGame::from_program(&program, name).expect("grounds");
        // Captures are told on propagating playouts only; the load's timing picks that method for
        // both games, but a busy machine need not decide this test.
        net.set_playout_method(ggp::network::PlayoutMethod::Propagate);
        let masks = [
            mask_of(&net, board, " white)"),
            mask_of(&net, board, " black)"),
        ];
        assert!(masks.iter().all(|m| count(m, &[!0; 8]) >= 16), "{name}");
        let table = net
            .captures(&masks)
            .expect("breakthrough's moves take pieces");
        let mut rng = SmallRng::seed_from_u64(11);
        let mut buf = Vec::new();
        let (mut checked, mut captures, mut forced) = (0, 0, 0);
        for game in 0..20 {
            let mut s = net.initial_state();
            while !net.is_terminal(&s) {
                let r = net.mover(&s).expect("turns");
                net.legal_moves(&s, r, &mut buf);
                let before = count(&masks[1 - r], net.state_words(&s));
                let mut any = false;
                for mv in &buf {
                    let after = net.play(&s, r, mv);
                    let took = count(&masks[1 - r], net.state_words(&after)) < before;
                    let number = net.move_number(mv).expect("numbered");
                    let told = table.captures(r, number, net.state_words(&s));
                    let at = net.show_move(mv);
                    assert_eq!(
                        told,
                        took,
                        "{name} game {game}: {at} in {:?}",
                        net.state_facts(&s)
                    );
                    any |= took;
                    checked += 1;
                    captures += usize::from(took);
                }
                if any {
                    let left = after_a_forced_capture(&net, &s, &table, &masks[1 - r], checked);
                    assert_eq!(left + 1, before, "{name} game {game}: no piece taken");
                    forced += 1;
                }
                let i = rng.gen_range(0..buf.len());
                s = net.play(&s, r, &buf[i]);
            }
        }
        assert!(
            captures > 100 && forced > 50,
            "{name}: {captures} captures, {forced} forced"
        );
        assert!(
            checked > 3 * captures,
            "{name}: {checked} moves, {captures} captures"
        );
    }
}

/// speedChess's roles hold about sixty words of legal bits each (breakthrough's and knightThrough's
/// hold at most eight), so a playout draws a role's move through the stretch of words its groups that
/// hold cover: a capturing playout at rate 1 still plays a move that takes a piece wherever the table
/// tells one. (A stretch that starts past the first word is tested on guided playouts, in
/// `network_speed_paths`: speedChess's mover draws from all its words.)
#[test]
fn capturing_playouts_of_a_role_with_many_words_of_legal_bits_take_a_piece() {
    let (program, _) = load("speedChess");
    let mut net = NetGame::from_program(&program, "speedChess").expect("grounds");
    net.set_playout_method(ggp::network::PlayoutMethod::Propagate);
    let masks = [" white ", " black "]
        .map(|colour| mask_where(&net, |t| t.starts_with("(cell ") && t.contains(colour)));
    let table = net.captures(&masks).expect("chess moves take pieces");
    let words = |r: usize| net.network().legal[r].len().div_ceil(64);
    assert!(
        words(0) > 8 && words(1) > 8,
        "{} and {} words",
        words(0),
        words(1)
    );
    let mut rng = SmallRng::seed_from_u64(17);
    let mut buf = Vec::new();
    let mut forced = 0;
    for game in 0..8 {
        let mut s = net.initial_state();
        for _ in 0..60 {
            if net.is_terminal(&s) {
                break;
            }
            let r = net.mover(&s).expect("turns");
            net.legal_moves(&s, r, &mut buf);
            let takes = buf.iter().any(|mv| {
                let number = net.move_number(mv).expect("numbered");
                table.captures(r, number, net.state_words(&s))
            });
            if takes && buf.len() >= 2 {
                let before = count(&masks[1 - r], net.state_words(&s));
                let left = after_a_forced_capture(&net, &s, &table, &masks[1 - r], forced);
                assert_eq!(
                    left + 1,
                    before,
                    "game {game}: no piece taken in {:?}",
                    net.state_facts(&s)
                );
                forced += 1;
            }
            let i = rng.gen_range(0..buf.len());
            s = net.play(&s, r, &buf[i]);
        }
    }
    assert!(forced >= 20, "{forced} forced captures");
}

/// connectFourSimultaneous: the roles that can end the game with a line of theirs in one move at
/// `s`, each role trying its moves with the other playing its first (the two drop on different
/// boards, so the other's move cannot block; goal 50 counts, as the other's first move may be a
/// win of its own).
fn simultaneous_winners(net: &NetGame, s: &BitState) -> Vec<usize> {
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    (0..2)
        .filter(|&r| {
            net.legal_moves(s, r, &mut mine);
            net.legal_moves(s, 1 - r, &mut theirs);
            mine.iter().any(|m| {
                let mut joint = vec![*m, theirs[0]];
                if r == 1 {
                    joint.swap(0, 1);
                }
                let after = net.next_state(s, &joint);
                net.is_terminal(&after) && net.goal(&after, r) >= 50
            })
        })
        .collect()
}

/// With simultaneous moves the network's greedy playout tries every role's moves: a role that
/// alone can win at once does, and a joint move after which a role could win at once is drawn
/// again while the other role has moves left, so greedy steps hand over far fewer wins than random
/// ones (at most half; about 0.3 over eight seeds of 2,000 positions when written).
///
/// Where both roles can win at once, a win is checked against a second draw of the other's move
/// (see the matching-pennies test below), and that draw may be the other's own win, which makes the
/// game a draw at 50: the move then does not count as a win, and both wins can be missed in the same
/// step. Such positions end the game in most steps (96% when written), not in all.
#[test]
fn a_greedy_playout_with_simultaneous_moves_takes_wins_and_seldom_hands_them_over() {
    let name = "connectFourSimultaneous";
    let (program, _) = load(name);
    let net = NetGame::from_program(&program, name).expect("grounds");
    let mut rng = SmallRng::seed_from_u64(13);
    let mut buf = Vec::new();
    let (mut wins, mut quiet, mut greedy_gave, mut random_gave) = (0, 0, 0, 0);
    let (mut both, mut both_ended) = (0, 0);
    for _ in 0..2000 {
        let moves = rng.gen_range(0..40);
        let (s, _) = net.random_playout(&net.initial_state(), &mut rng, &mut buf, moves);
        if net.is_terminal(&s) {
            continue;
        }
        let winners = simultaneous_winners(&net, &s);
        let (after, steps) = net.greedy_playout(&s, &mut rng, &mut buf, 1);
        assert_eq!(steps, 1, "{:?}", net.state_facts(&s));
        match winners.len() {
            2 => {
                both += 1;
                both_ended += usize::from(net.is_terminal(&after));
                continue;
            }
            1 => {
                wins += 1;
                assert!(
                    net.is_terminal(&after) && net.goal(&after, winners[0]) >= 50,
                    "a win in one was not taken from {:?}",
                    net.state_facts(&s)
                );
                continue;
            }
            _ => quiet += 1,
        }
        if !net.is_terminal(&after) && !simultaneous_winners(&net, &after).is_empty() {
            greedy_gave += 1;
        }
        let (after, _) = net.random_playout(&s, &mut rng, &mut buf, 1);
        if !net.is_terminal(&after) && !simultaneous_winners(&net, &after).is_empty() {
            random_gave += 1;
        }
    }
    assert!(
        wins >= 50,
        "only {wins} positions with one role's win in one"
    );
    assert!(
        both >= 20 && both_ended * 5 >= both * 4,
        "of {both} positions where both roles win in one, {both_ended} ended"
    );
    assert!(
        random_gave >= 50 && greedy_gave * 2 <= random_gave,
        "of {quiet} positions, greedy steps handed over a win {greedy_gave} times, random ones \
         {random_gave}"
    );
}

/// Matching pennies: both roles pick at once and `a` wins when the picks match. A greedy step tries
/// `a`'s moves against a draw of `b`'s, so it would always match if a move that wins against one draw
/// counted as a win; it must win against a second draw too, and so `a` wins about half the time.
#[test]
fn a_greedy_playout_with_simultaneous_moves_does_not_see_the_other_roles_move() {
    let kif = include_str!("../data/matching_pennies.kif");
    let net = NetGame::from_program(&parse_kif(kif).expect("parses"), "pennies").expect("grounds");
    let (start, mut rng, mut buf) = (net.initial_state(), SmallRng::seed_from_u64(3), Vec::new());
    let mut won = 0;
    for _ in 0..1000 {
        let (end, steps) = net.greedy_playout(&start, &mut rng, &mut buf, 1);
        assert_eq!(steps, 1);
        won += usize::from(net.goal(&end, 0) == 100);
    }
    assert!((400..=600).contains(&won), "`a` won {won} of 1000");
}

/// Rules whose comparisons read compound terms no relaxed fact holds: `terminal`'s rules are
/// grounded from their own instances, so `(f ?x)` is never built, and the network must compare such
/// terms part by part as the Datalog evaluator does (it once called every pair of them equal).
#[test]
fn both_engines_compare_compound_terms_that_were_never_built() {
    const GAME: &str = "(role r) (init (c 1)) (n 1) (n 2)
        (<= (legal r (add ?x)) (n ?x))
        (<= (next (c ?x)) (does r (add ?x)))
        (<= (next (c ?x)) (true (c ?x)))
        (<= (next (d ?x)) (true (c ?x)))
        (goal r 100)";
    let check = |end: &str, expected: u64| {
        let src = format!("{GAME}\n{end}");
        let program = parse_kif(&src).expect("parses");
        let net = NetGame::from_program(&program, "compare").expect("grounds");
        let rule = RuleGame::from_program(&program, "compare").expect("loads");
        let counts = (
            ggp::game::perft(&net, &net.initial_state(), 3),
            ggp::game::perft(&rule, &rule.initial_state(), 3),
        );
        assert_eq!(counts, (expected, expected), "network, datalog: {end}");
    };
    // Two cells marked: over after the first move that adds a number other than 1.
    check(
        "(<= terminal (true (c ?x)) (true (c ?y)) (distinct (f ?x) (f ?y)))",
        4,
    );
    check(
        "(<= terminal (true (c ?x)) (true (d ?y)) (distinct (f ?x) (g ?y)))",
        2,
    );
    // `d` follows `c` a move later: equal while the last two moves were alike.
    check(
        "(<= terminal (true (c ?x)) (true (d ?y)) (not (distinct (f ?x 1) (f ?y 1))))",
        2,
    );
    check(
        "(<= terminal (true (c 2)) (true (d ?y)) (not (distinct (f 2) (f ?y))))",
        6,
    );
    // `?z` would hold `(f ?x)`, which no `e` fact holds: no instance, and no reason to refuse.
    check(
        "(init (e 1)) (<= terminal (true (c ?x)) (not (distinct ?z (f ?x))) (true (e ?z)))",
        8,
    );
}
