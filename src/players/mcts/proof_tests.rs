//! Unit tests of the solver's proofs: every proof of a grown graph checked against the rules, a
//! proven win kept for the next move, and walks that detour around a solved move.

use super::tests::{far, play_moves};
use super::tree::{goal_reward, SIMULTANEOUS};
use super::*;
use crate::games::connect4::Connect4;
use crate::games::tictactoe::TicTacToe;
use std::time::Duration;

#[test]
fn a_proven_win_keeps_its_tree_for_the_next_move() {
    let g = TicTacToe::new(3, 3).unwrap();
    // x: (1,1) (3,3); o: (2,2) (1,3), threatening (3,1). x blocks there and forks: a win.
    let s = play_moves(
        &g,
        &[
            (0, "mark(1,1)"),
            (1, "mark(2,2)"),
            (0, "mark(3,3)"),
            (1, "mark(1,3)"),
        ],
    );
    let mut p = MctsPlayer::new(1).with_simulation_limit(50_000);
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert!(c.mv == g.parse_move(&s, 0, "mark(3,1)").unwrap());
    assert!(
        p.trees[0].exact_of(&p.trees[0].nodes[0]).is_some(),
        "the root is solved"
    );
    // o blocks one threat; the next search starts from the proof, not from nothing.
    let forked = g.play(&s, 0, &c.mv);
    let after = g.play(&forked, 1, &g.parse_move(&forked, 1, "mark(2,1)").unwrap());
    p.root_at(&g, &after, Duration::MAX);
    let tree = &p.trees[0];
    assert!(tree.nodes[0].state == after);
    assert!(tree.nodes.len() > 1, "the solved root's subtree was kept");
    assert_eq!(tree.exact_of(&tree.nodes[0]).map(|v| v[0]), Some(1.0));
}

/// Every link and every exact value of `tree` checked against the rules: a child's state follows
/// its parent's by the joint move of its slot, a terminal node's values are its goals, and an inner
/// node's exact values follow from its children's as the solver derives them.
fn check_proofs<G: Game>(game: &G, tree: &Tree<G::State, G::Move>) -> Result<(), String> {
    let roles = tree.roles;
    for (x, n) in tree.nodes.iter().enumerate() {
        let terminal = game.is_terminal(&n.state);
        let counts: Vec<u32> = (0..roles).map(|r| tree.count(n, r)).collect();
        if !terminal {
            for (r, &count) in counts.iter().enumerate() {
                let mut legal = Vec::new();
                game.legal_moves(&n.state, r, &mut legal);
                let at = tree.stat_index(n, r, 0);
                let stored = &tree.moves[at..at + count as usize];
                if legal.len() != stored.len()
                    || legal.iter().any(|m| !stored.iter().any(|s| s == m))
                {
                    return Err(format!(
                        "node {x}: role {r} has {} legal moves, the node {}",
                        legal.len(),
                        stored.len()
                    ));
                }
            }
        }
        let mut children = Vec::new();
        for joint in 0..n.joints {
            let c = if terminal { NONE } else { tree.child(n, joint) };
            if c == NONE {
                children.push(None);
                continue;
            }
            let (mut rest, mut moves) = (joint, Vec::new());
            for (r, &k) in counts.iter().enumerate() {
                moves.push(tree.moves[tree.stat_index(n, r, rest % k)].clone());
                rest /= k;
            }
            let next = game.next_state(&n.state, &moves);
            if tree.nodes[c as usize].state != next {
                return Err(format!(
                    "node {x}: joint {joint} links node {c}, not its state"
                ));
            }
            children.push(tree.exact_of(&tree.nodes[c as usize]).map(<[f64]>::to_vec));
        }
        let Some(values) = tree.exact_of(n) else {
            continue;
        };
        if terminal {
            let goals: Vec<f64> = (0..roles).map(|r| goal_reward(game, &n.state, r)).collect();
            if goals != values {
                return Err(format!(
                    "terminal node {x}: exact {values:?}, goals {goals:?}"
                ));
            }
            continue;
        }
        let derived = if n.mover == SIMULTANEOUS {
            let first = children.first().cloned().flatten();
            let same = children
                .iter()
                .all(|c| c.is_some() && *c == first)
                .then_some(first)
                .flatten();
            if same.is_none() && tree.saddles && guaranteed(&children, &counts, values) {
                Some(values.to_vec())
            } else {
                same
            }
        } else {
            let m = n.mover as usize;
            if let Some(win) = children.iter().flatten().find(|v| v[m] >= 1.0) {
                Some(win.clone())
            } else if children.iter().all(Option::is_some) {
                children
                    .iter()
                    .flatten()
                    .max_by(|a, b| a[m].total_cmp(&b[m]))
                    .cloned()
            } else {
                None
            }
        };
        match derived {
            Some(d) if d[..] == values[..] => {}
            Some(d)
                if n.mover != SIMULTANEOUS && d[n.mover as usize] == values[n.mover as usize] => {}
            _ => {
                return Err(format!(
                    "node {x} (mover {}): exact {values:?}, children {children:?}",
                    n.mover
                ))
            }
        }
    }
    Ok(())
}

/// Whether `values` (two roles, summing to 1) is what each role can make sure of at a simultaneous
/// node with these children (joint moves numbered role 0's move first): a role owed more than
/// nothing has a move whose every joint move has a solved child worth at least that to it.
fn guaranteed(children: &[Option<Vec<f64>>], counts: &[u32], values: &[f64]) -> bool {
    if counts.len() != 2 || (values[0] + values[1] - 1.0).abs() > 1e-9 {
        return false;
    }
    (0..2).all(|role| {
        let (mine, theirs) = (counts[role], counts[1 - role]);
        values[role] <= 0.0
            || (0..mine).any(|i| {
                (0..theirs).all(|k| {
                    let joint = if role == 0 {
                        i + k * mine
                    } else {
                        k + i * theirs
                    };
                    children[joint as usize]
                        .as_ref()
                        .is_some_and(|v| v[role] >= values[role] - 1e-9)
                })
            })
    })
}

#[test]
fn every_proof_of_a_graph_grown_over_a_game_follows_from_the_rules() {
    let g = Connect4::new(6, 7).unwrap();
    // The lookahead solves each new node whose mover wins at once; without it, short greedy
    // playouts (`+endings`) solve nodes the same way and also nodes whose every move loses at once.
    for (detour, lookahead, endings) in [
        (false, true, false),
        (true, true, true),
        (false, false, true),
    ] {
        let mut p = MctsPlayer::new(3)
            .with_transpositions(true)
            .with_greedy_playouts(true)
            .with_lookahead(lookahead)
            .with_endings(endings)
            .with_detour(detour)
            .with_simulation_limit(20_000);
        let mut s = g.initial_state();
        let (mut solved, mut plies) = (0, 0);
        while !g.is_terminal(&s) {
            let mover = g.mover(&s).expect("Connect Four takes turns");
            let c = p.choose(&Ask::new(&g, &s, mover, far())).unwrap();
            let tree = &p.trees[0];
            if let Err(e) = check_proofs(&g, tree) {
                panic!("detour {detour}, lookahead {lookahead}, endings {endings}, after {plies} plies: {e}");
            }
            solved += tree.nodes.iter().filter(|n| n.exact != NONE).count();
            s = g.play(&s, mover, &c.mv);
            plies += 1;
        }
        assert!(
            solved > 1_000,
            "detour {detour}, lookahead {lookahead}, endings {endings}: {solved} solved nodes checked"
        );
    }
}

#[test]
fn a_detour_goes_around_a_solved_draw_and_gives_the_nodes_above_its_value() {
    let g = TicTacToe::new(3, 3).unwrap();
    let s = g.initial_state();
    for detour in [true, false] {
        let mut tree = Tree::new(2, 1);
        tree.detour = detour;
        tree.add(&g, s);
        let deadline = Instant::now() + Duration::from_secs(60);
        while tree.nodes.len() < 10 {
            tree.simulate(&g, None, DEFAULT_EXPLORATION, false, deadline);
        }
        // x's first move is proven a draw; the other eight look worse than a draw with many walks.
        let root = tree.nodes[0].clone();
        let draw = tree.child(&root, 0);
        tree.set_exact(draw, [0.5, 0.5]);
        for i in 1..9 {
            let at = tree.stat_index(&root, 0, i);
            tree.stats[at].visits = 100;
            tree.stats[at].total = 30.0;
        }
        tree.nodes[0].visits = 900;
        let (simulations, solved_walks) = (tree.simulations, tree.solved_walks);
        tree.simulate(&g, None, DEFAULT_EXPLORATION, false, deadline);
        let visits: Vec<u32> = (0..9)
            .map(|i| tree.stats[tree.stat_index(&root, 0, i)].visits)
            .collect();
        if detour {
            // The walk learned something below another move; what the root's parent would be given
            // is the draw.
            assert_eq!(tree.simulations, simulations + 1);
            assert_eq!(
                visits.iter().filter(|&&v| v == 101).count(),
                1,
                "{visits:?}"
            );
            assert_eq!(tree.rewards, [0.5, 0.5]);
        } else {
            // Without it, the walk ends in the solved move and learns nothing.
            assert_eq!(tree.solved_walks, solved_walks + 1);
            assert!(visits[1..].iter().all(|&v| v == 100), "{visits:?}");
        }
    }
}

#[test]
fn a_short_greedy_playout_solves_its_node_where_the_rules_confirm_it() {
    let g = TicTacToe::new(3, 3).unwrap();
    // o holds (1,1) (1,2) (2,1), threatening (1,3) and (3,1); x, to move, has no win of its own.
    let lost = play_moves(
        &g,
        &[
            (0, "mark(2,2)"),
            (1, "mark(1,1)"),
            (0, "mark(3,2)"),
            (1, "mark(1,2)"),
            (0, "mark(2,3)"),
            (1, "mark(2,1)"),
        ],
    );
    // x holds (1,1) (1,2) and wins at (1,3).
    let won = play_moves(
        &g,
        &[
            (0, "mark(1,1)"),
            (1, "mark(2,2)"),
            (0, "mark(1,2)"),
            (1, "mark(3,3)"),
        ],
    );
    // o threatens (3,1), where x blocks and forks: no move of x loses at once.
    let holds = play_moves(
        &g,
        &[
            (0, "mark(1,1)"),
            (1, "mark(2,2)"),
            (0, "mark(3,3)"),
            (1, "mark(1,3)"),
        ],
    );
    // (position, the playout's length and rewards, what the node is proven worth with `+endings`).
    type Case<'a, S> = (&'a S, u32, [f64; 2], Option<[f64; 2]>);
    let cases: [Case<'_, _>; 5] = [
        (&lost, 2, [0.0, 1.0], Some([0.0, 1.0])),
        (&won, 1, [1.0, 0.0], Some([1.0, 0.0])),
        // A playout that drew its moves at random can end so where a move holds: nothing is proven.
        (&holds, 2, [0.0, 1.0], None),
        // Longer playouts, or a win for the other role at the first move, prove nothing.
        (&lost, 3, [0.0, 1.0], None),
        (&won, 2, [1.0, 0.0], None),
    ];
    for (state, steps, rewards, proven) in cases {
        for endings in [true, false] {
            let mut tree = Tree::new(2, 1);
            tree.endings = endings;
            tree.playouts.greedy = true;
            tree.add(&g, *state);
            tree.rewards.copy_from_slice(&rewards);
            tree.prove_ending(&g, 0, steps);
            let exact = tree.exact_of(&tree.nodes[0]).map(|v| [v[0], v[1]]);
            let expected = if endings { proven } else { None };
            assert_eq!(
                exact, expected,
                "{steps} steps, rewards {rewards:?}, endings {endings}"
            );
            if let Some(v) = expected {
                assert_eq!(tree.rewards, v, "the proven values are the walk's rewards");
            }
            if let Err(e) = check_proofs(&g, &tree) {
                panic!("{steps} steps, rewards {rewards:?}: {e}");
            }
        }
    }
}

/// The two-board simultaneous tic-tac-toe of `tests/data`, on the network.
fn simultaneous_tictactoe() -> crate::network::NetGame {
    let kif = include_str!("../../../tests/data/simultaneous_tictactoe.kif");
    let program = crate::syntax::parse_kif(kif).unwrap();
    crate::network::NetGame::from_program(&program, "simultaneous_tictactoe").unwrap()
}

/// Plays `steps` of the two-board game, each step's two moves as red's and black's.
fn play_steps<G: Game>(g: &G, steps: &[(&str, &str)]) -> G::State {
    let mut s = g.initial_state();
    for (red, black) in steps {
        let moves = [
            g.parse_move(&s, 0, red).unwrap(),
            g.parse_move(&s, 1, black).unwrap(),
        ];
        s = g.next_state(&s, &moves);
    }
    s
}

#[test]
fn simultaneous_nodes_are_solved_at_saddle_points_and_the_guaranteeing_move_played() {
    let g = simultaneous_tictactoe();
    // Red holds (1,1) and (1,2) of board 1, whose cell (1,3) it marks at this step; black holds
    // (1,1) and (2,2) of board 2, where red holds (3,3): black makes no line now.
    let red_wins = [
        ("(mark 1 1 1)", "(mark 1 1 2)"),
        ("(mark 3 3 2)", "(mark 3 1 1)"),
        ("(mark 1 2 1)", "(mark 2 2 2)"),
        ("(mark 1 3 2)", "(mark 2 1 1)"),
    ];
    // The same, but (3,3) of board 2 is free: black completes its diagonal as red completes its
    // column, both lines at one step draw, and a role that does not take its line loses.
    let both_win = [
        ("(mark 1 1 1)", "(mark 1 1 2)"),
        ("(mark 3 1 2)", "(mark 3 1 1)"),
        ("(mark 1 2 1)", "(mark 2 2 2)"),
        ("(mark 1 3 2)", "(mark 2 1 1)"),
    ];
    let (win, draw) = (Some(vec![1.0, 0.0]), Some(vec![0.5, 0.5]));
    for (why, steps, role, saddles, line, root) in [
        (
            "red wins whatever black plays",
            &red_wins,
            0,
            true,
            "(mark 1 3 1)",
            win,
        ),
        // Red's other moves leave the game open: not every joint move is solved alike.
        (
            "the same unsolved without +saddle",
            &red_wins,
            0,
            false,
            "(mark 1 3 1)",
            None,
        ),
        (
            "red's line guarantees a draw",
            &both_win,
            0,
            true,
            "(mark 1 3 1)",
            draw.clone(),
        ),
        ("black's line too", &both_win, 1, true, "(mark 3 3 2)", draw),
    ] {
        let s = play_steps(&g, steps);
        let mut p = MctsPlayer::new(2)
            .with_saddles(saddles)
            .with_simulation_limit(20_000);
        let c = p.choose(&Ask::new(&g, &s, role, far())).unwrap();
        assert_eq!(g.show_move(&c.mv), line, "{why}");
        let tree = &p.trees[0];
        assert_eq!(
            tree.exact_of(&tree.nodes[0]).map(<[f64]>::to_vec),
            root,
            "{why}"
        );
        check_proofs(&g, tree).unwrap();
    }
}

#[test]
fn every_proof_at_simultaneous_moves_follows_from_the_rules() {
    let g = simultaneous_tictactoe();
    // Saddles on and off in `uct` (whose simulations run one at a time, as those counts were
    // measured), then in `mcts`, whose probe plays them in batches of leaves here.
    let mut solved = [0usize; 3];
    for (k, (saddles, baseline)) in [(true, true), (false, true), (true, false)]
        .into_iter()
        .enumerate()
    {
        for seed in 1..=3 {
            let mut players: Vec<MctsPlayer<crate::network::NetGame>> = (0..2)
                .map(|r| {
                    let p = match baseline {
                        true => MctsPlayer::baseline(seed * 2 + r),
                        false => MctsPlayer::new(seed * 2 + r),
                    };
                    p.with_saddles(saddles).with_simulation_limit(4_000)
                })
                .collect();
            let mut s = g.initial_state();
            while !g.is_terminal(&s) {
                let mut moves = Vec::new();
                for (r, p) in players.iter_mut().enumerate() {
                    moves.push(p.choose(&Ask::new(&g, &s, r, far())).unwrap().mv);
                    if let Err(e) = check_proofs(&g, &p.trees[0]) {
                        panic!("saddles {saddles}, seed {seed}, role {r}: {e}");
                    }
                    let tree = &p.trees[0];
                    solved[k] += tree
                        .nodes
                        .iter()
                        .filter(|n| n.exact != NONE && n.mover == SIMULTANEOUS)
                        .filter(|n| !g.is_terminal(&n.state))
                        .count();
                }
                s = g.next_state(&s, &moves);
            }
        }
    }
    // The saddle points solve inner simultaneous nodes that waiting for every child does not
    // (2,685 against 1,829 in these searches, a node counted again at every move that keeps it).
    assert!(
        solved[0] > 100 && 4 * solved[0] > 5 * solved[1] && solved[2] > 100,
        "{solved:?}"
    );
}
