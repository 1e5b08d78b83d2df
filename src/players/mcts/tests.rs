//! Unit tests of `mcts`: the solver, thinking ahead, the switches and puzzles.

use super::*;
use crate::games::connect4::Connect4;
use crate::games::tictactoe::TicTacToe;
use std::time::Duration;

pub(super) fn play_moves<G: Game>(g: &G, moves: &[(usize, &str)]) -> G::State {
    let mut s = g.initial_state();
    for &(role, text) in moves {
        let mv = g.parse_move(&s, role, text).unwrap();
        s = g.play(&s, role, &mv);
    }
    s
}

/// A root move of `visits` visits and `total` reward, proven worth `exact` when given.
fn root_move(visits: u64, total: f64, exact: Option<f64>) -> RootMove {
    RootMove {
        visits,
        total,
        exact,
    }
}

#[test]
fn final_choice_prefers_proven_values_over_losing_averages() {
    let win = root_move(1, 0.0, Some(1.0));
    let busy = root_move(900, 800.0, None);
    let draw = root_move(5, 2.5, Some(0.5));
    let loss = root_move(50, 0.0, Some(0.0));
    let poor = root_move(100, 20.0, None);
    let good = root_move(100, 70.0, None);
    let quick_loss = root_move(3, 0.0, Some(0.0));
    let slow_loss = root_move(400, 0.0, Some(0.0));
    for (moves, expected, why) in [
        (vec![busy, win], 1, "a proven win is played at once"),
        (vec![poor, draw, loss], 1, "the draw beats a 20% average"),
        (vec![good, draw, loss], 0, "a 70% average beats the draw"),
        (
            vec![quick_loss, slow_loss, quick_loss],
            1,
            "when every move loses, the loss that took the most walks to prove",
        ),
    ] {
        assert_eq!(final_choice(&moves), expected, "{why}");
    }
}

#[test]
fn mcts_takes_an_immediate_win_and_blocks_an_immediate_loss() {
    let g = TicTacToe::new(3, 3).unwrap();
    // x: (1,1) (1,2); o: (2,1) (2,2); x to move wins at (1,3).
    let s = play_moves(
        &g,
        &[
            (0, "mark(1,1)"),
            (1, "mark(2,1)"),
            (0, "mark(1,2)"),
            (1, "mark(2,2)"),
        ],
    );
    let mut p = MctsPlayer::new(3);
    let c = p
        .choose(&Ask::new(
            &g,
            &s,
            0,
            Deadline::after(Duration::from_millis(300)),
        ))
        .unwrap();
    assert_eq!(g.show_move(&c.mv), "mark(1,3)");
    // o to move must block x's row at (1,3).
    let s = play_moves(&g, &[(0, "mark(1,1)"), (1, "mark(3,3)"), (0, "mark(1,2)")]);
    let mut p = MctsPlayer::new(5);
    let c = p
        .choose(&Ask::new(
            &g,
            &s,
            1,
            Deadline::after(Duration::from_millis(300)),
        ))
        .unwrap();
    assert_eq!(g.show_move(&c.mv), "mark(1,3)");
}

#[test]
fn the_tree_is_kept_for_the_state_actually_reached() {
    let g = Connect4::new(6, 7).unwrap();
    // A simulation limit, not a clock: a busy machine may leave a short clock no walk at all.
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    let s = g.initial_state();
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    let after = g.play(&s, 0, &c.mv);
    let known = p.trees[0]
        .children_of(0)
        .into_iter()
        .find(|&n| p.trees[0].nodes[n as usize].state == after)
        .map(|n| p.trees[0].nodes[n as usize].visits)
        .expect("the chosen move's child is in the tree");
    let _ = p.choose(&Ask::new(
        &g,
        &after,
        1,
        Deadline::after(Duration::from_millis(1)),
    ));
    assert!(
        p.trees[0].nodes[0].visits >= known,
        "the subtree's visits were kept"
    );
    assert!(p.trees[0].nodes[0].state == after);
}

/// Thinking ahead is bounded by a simulation limit here, so the tests repeat whatever the clock.
pub(super) fn far() -> Deadline {
    Deadline::after(Duration::from_secs(60))
}

#[test]
fn the_start_clock_grows_the_first_states_tree_which_the_first_move_keeps() {
    let g = Connect4::new(6, 7).unwrap();
    let s = g.initial_state();
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    p.prepare(&g, 0, far()).unwrap();
    let grown = p.trees[0].nodes[0].visits;
    assert!(grown >= 1_000, "{grown}");
    p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert!(p.trees[0].nodes[0].visits >= grown + 1_000);
    // The baseline prepares nothing.
    let mut uct = MctsPlayer::<Connect4>::baseline(1).with_simulation_limit(2_000);
    uct.prepare(&g, 0, far()).unwrap();
    assert!(uct.trees.is_empty());
    // Beside seats that are all ready, there is nothing to wait for: no thinking.
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    let ready = AtomicUsize::new(1);
    p.prepare_beside(&g, 0, far(), Duration::from_secs(1), &ready)
        .unwrap();
    assert_eq!(p.trees[0].nodes[0].visits, 0);
}

#[test]
fn a_forced_move_grows_the_next_states_tree_until_the_others_have_answered() {
    let g = Connect4::new(6, 7).unwrap();
    let s = play_moves(&g, &[(0, "drop(4)")]);
    // Black is to move: red's only move is its no-op.
    let ask = Ask::new(&g, &s, 0, far());
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    let c = p.choose(&ask).unwrap();
    // Every walk counts towards the limit; those that end in a node already solved (one reached
    // again through a transposition, now that Connect Four's greedy playouts come with them) are
    // not simulations.
    assert_eq!(p.trees[0].walks(), 2_000);
    assert!(c.stats.simulations > 1_000 && c.stats.simulations <= 2_000);
    assert!(p.trees[0].nodes[0].state == s);
    // Black moves; red's next search starts from what it grew meanwhile.
    let after = play_moves(&g, &[(0, "drop(4)"), (1, "drop(3)")]);
    let known = p.trees[0]
        .children_of(0)
        .into_iter()
        .find(|&n| p.trees[0].nodes[n as usize].state == after)
        .map(|n| p.trees[0].nodes[n as usize].visits)
        .expect("black's reply is in the tree");
    assert!(known > 0);
    // When the other seats have answered, the step waits for nobody: the no-op comes at once.
    let answered = Unanswered::new(1);
    let mut ask = Ask::new(&g, &s, 0, far());
    ask.unanswered = Some(&answered);
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    assert_eq!(p.choose(&ask).unwrap().stats.simulations, 0);
    // Nor does it wait for a third seat that only thinks ahead too: two waiting seats once each
    // waited for the other until the clock ran out.
    let two_waiting = Unanswered::new(2);
    let _other = two_waiting.thinking_ahead();
    ask.unanswered = Some(&two_waiting);
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    assert_eq!(p.choose(&ask).unwrap().stats.simulations, 0);
    // A seat still deciding is waited for.
    let deciding = Unanswered::new(2);
    ask.unanswered = Some(&deciding);
    let mut p = MctsPlayer::new(1).with_simulation_limit(2_000);
    assert!(p.choose(&ask).unwrap().stats.simulations > 0);
    // The baseline answers at once too.
    let mut uct = MctsPlayer::baseline(1).with_simulation_limit(2_000);
    assert_eq!(
        uct.choose(&Ask::new(&g, &s, 0, far()))
            .unwrap()
            .stats
            .simulations,
        0
    );
}
/// Red's three in a row on the bottom row, red to move: `drop(4)` wins.
fn red_has_three_in_a_row(g: &Connect4) -> <Connect4 as Game>::State {
    play_moves(
        g,
        &[
            (0, "drop(1)"),
            (1, "drop(1)"),
            (0, "drop(2)"),
            (1, "drop(2)"),
            (0, "drop(3)"),
            (1, "drop(3)"),
        ],
    )
}

/// `p`, named `name`, after 3,000 simulations from Connect Four's start, with a check that it still
/// plays red's winning drop once red has three in a row: what every switch's test starts from.
fn searched_from_start_and_finds_the_win(
    p: MctsPlayer<Connect4>,
    name: &str,
) -> MctsPlayer<Connect4> {
    let g = Connect4::new(6, 7).unwrap();
    let mut p = p.with_simulation_limit(3_000);
    assert_eq!(Player::<Connect4>::name(&p), name);
    let s = red_has_three_in_a_row(&g);
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert_eq!(g.show_move(&c.mv), "drop(4)");
    p.choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    p
}

#[test]
fn mast_learns_every_roles_moves_and_still_finds_the_win() {
    let g = Connect4::new(6, 7).unwrap();
    let p =
        searched_from_start_and_finds_the_win(MctsPlayer::baseline(1).with_mast(true), "uct+mast");
    let mast = p.trees[0]
        .policy
        .as_ref()
        .expect("a table for a game with move numbers");
    // Every column was tried by both colours and has an average below a sure win.
    for role in 0..2 {
        for column in 0..7 {
            let mean = mast.mean(role, column);
            assert!(
                mean > 0.0 && mean < 1.0,
                "role {role} column {column}: {mean}"
            );
        }
    }
    // Without the switch there is no table.
    let mut plain = MctsPlayer::baseline(1).with_simulation_limit(100);
    plain
        .choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    assert!(plain.trees[0].policy.is_none());
}

#[test]
fn batches_of_leaves_take_back_every_virtual_loss_and_still_find_the_win() {
    fn check<S: Clone + PartialEq, M: Clone>(tree: &tree::Tree<S, M>, what: &str) {
        let root = &tree.nodes[0];
        // Every walk passed the root once, and picked one move of each role there: a virtual
        // loss left behind would show as a visit more than the walks.
        assert_eq!(u64::from(root.visits), tree.walks(), "{what}");
        for role in 0..2 {
            let picked: u64 = (0..tree.count(root, role))
                .map(|i| u64::from(tree.stats[tree.stat_index(root, role, i)].visits))
                .sum();
            assert_eq!(picked, tree.walks(), "{what}: role {role}");
        }
    }
    let p = searched_from_start_and_finds_the_win(
        MctsPlayer::baseline(1).with_leaves(true),
        "uct+leaves",
    );
    assert!(p.trees[0].leaves);
    check(&p.trees[0], "native Connect Four");
    // On the network the leaves are played out in the lanes of one word.
    let g = repo_game("connect4.gdl");
    let mut p = MctsPlayer::baseline(2)
        .with_leaves(true)
        .with_simulation_limit(2_000);
    p.choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    assert!(p.trees[0].leaves);
    assert!(p.trees[0].walks() >= 2_000);
    check(&p.trees[0], "connect4.gdl");
    // Where playouts are guided the switch does nothing.
    let mut guided = MctsPlayer::baseline(1)
        .with_leaves(true)
        .with_mast(true)
        .with_simulation_limit(100);
    guided
        .choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    assert!(!guided.trees[0].leaves);
}

#[test]
fn rave_gathers_all_moves_as_first_statistics_and_still_finds_the_win() {
    let p =
        searched_from_start_and_finds_the_win(MctsPlayer::baseline(1).with_rave(true), "uct+rave");
    let tree = &p.trees[0];
    let root = &tree.nodes[0];
    // Every simulation passes the root: each of red's columns was played there or later in
    // most of them, far more often than it was tried first.
    for i in 0..tree.count(root, 0) {
        let st = tree.stats[tree.stat_index(root, 0, i)];
        assert!(st.amaf_visits > st.visits, "column {i}: {st:?}");
        assert!(st.amaf_visits <= root.visits);
        let mean = f64::from(st.amaf_total) / f64::from(st.amaf_visits);
        assert!(mean > 0.0 && mean < 1.0, "column {i}: {mean}");
    }
    // The waiting role's no-op learns nothing.
    let noop = tree.stats[tree.stat_index(root, 1, 0)];
    assert_eq!(noop.amaf_visits, 0);
}

#[test]
fn grave_judges_a_thinly_visited_node_by_its_reference_and_still_finds_the_win() {
    let g = Connect4::new(6, 7).unwrap();
    let mut p = MctsPlayer::baseline(1)
        .with_grave(true)
        .with_simulation_limit(3_000);
    assert_eq!(Player::<Connect4>::name(&p), "uct+grave");
    p.choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    let tree = &mut p.trees[0];
    // A node red moves from, visited too few times to be a reference.
    let thin = (1..tree.nodes.len() as u32)
        .find(|&n| {
            let node = &tree.nodes[n as usize];
            node.mover == 0 && node.visits > 0 && node.visits < grave::GRAVE_REF
        })
        .expect("a thinly visited node");
    tree.refer(&g, 0);
    tree.refer(&g, thin);
    let (root, node) = (tree.nodes[0].clone(), tree.nodes[thin as usize].clone());
    let mut judged = 0;
    for i in 0..tree.count(&node, 0) {
        let at = tree.stat_index(&node, 0, i);
        let number = g.move_number(&tree.moves[at]);
        // The same column at the root, whose all-moves-as-first statistics stand in.
        let same = (0..tree.count(&root, 0))
            .map(|j| tree.stat_index(&root, 0, j))
            .find(|&j| g.move_number(&tree.moves[j]) == number)
            .expect("every column is open at the root");
        let (own, amaf) = (tree.stats[at], tree.stats[same]);
        assert!(amaf.amaf_visits > 0, "column {i}");
        let (n, a) = (f64::from(own.visits), f64::from(amaf.amaf_visits));
        let mean = if own.visits == 0 { 0.0 } else { own.total / n };
        let beta = a / (a + n + 1e-5 * a * n);
        let expected = (1.0 - beta) * mean + beta * f64::from(amaf.amaf_total) / a;
        let got = tree.grave_value(&g, 0, at).expect("the reference tried it");
        assert!(
            (got - expected).abs() < 1e-9,
            "column {i}: {got} against {expected}"
        );
        judged += 1;
    }
    assert!(judged > 1);
    let s = red_has_three_in_a_row(&g);
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert_eq!(g.show_move(&c.mv), "drop(4)");
}

/// Per node of `tree`, how many child slots lead to it.
fn parents<S: Clone + PartialEq, M: Clone>(tree: &tree::Tree<S, M>) -> Vec<u32> {
    let mut count = vec![0u32; tree.nodes.len()];
    for n in 0..tree.nodes.len() as u32 {
        for c in tree.children_of(n) {
            count[c as usize] += 1;
        }
    }
    count
}

#[test]
fn transpositions_share_one_node_per_state_and_still_find_the_win() {
    let g = Connect4::new(6, 7).unwrap();
    let mut p = MctsPlayer::baseline(1)
        .with_transpositions(true)
        .with_simulation_limit(3_000);
    assert_eq!(Player::<Connect4>::name(&p), "uct+trans");
    let s = g.initial_state();
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    let distinct_states = |tree: &tree::Tree<_, _>| {
        let mut keys: Vec<u64> = tree.nodes.iter().map(|n| g.state_key(&n.state)).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len()
    };
    let tree = &p.trees[0];
    // Orders of drops that meet again (1 then 2 against 2 then 1) share a node: some node has two
    // parents, and no state has two nodes.
    assert!(parents(tree).iter().any(|&n| n >= 2), "no shared node");
    assert_eq!(distinct_states(tree), tree.nodes.len());
    // The graph kept for the state reached is copied once per node, still one node per state.
    let after = g.play(&s, 0, &c.mv);
    p.choose(&Ask::new(&g, &after, 1, far())).unwrap();
    let tree = &p.trees[0];
    assert!(tree.nodes[0].state == after);
    assert_eq!(distinct_states(tree), tree.nodes.len());
    assert!(tree
        .table
        .as_ref()
        .is_some_and(|t| t.len() == tree.nodes.len()));
    let s = red_has_three_in_a_row(&g);
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert_eq!(g.show_move(&c.mv), "drop(4)");
    // Without the switch the tree holds a state once per order of moves that reached it.
    let mut plain = MctsPlayer::baseline(1).with_simulation_limit(3_000);
    plain
        .choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    let tree = &plain.trees[0];
    assert!(tree.table.is_none() && parents(tree).iter().all(|&n| n <= 1));
    assert!(distinct_states(tree) < tree.nodes.len());
}

/// Two rooms and a door: toggling moves between them for ever, finishing scores 100 in room b.
const ROOMS: &str = "(role p) (init (at a))
    (legal p toggle) (legal p finish)
    (<= (next (at b)) (true (at a)) (does p toggle))
    (<= (next (at a)) (true (at b)) (does p toggle))
    (<= (next (at ?x)) (true (at ?x)) (does p finish))
    (<= (next done) (does p finish))
    (<= terminal (true done))
    (<= (goal p 100) (true done) (true (at b)))
    (<= (goal p 0) (true done) (true (at a)))";

#[test]
fn a_walk_that_comes_back_to_its_own_path_plays_out_from_there_without_a_second_node() {
    let program = crate::syntax::parse_kif(ROOMS).unwrap();
    let g = crate::network::NetGame::from_program(&program, "rooms").unwrap();
    let mut p = MctsPlayer::baseline(1)
        .with_transpositions(true)
        .with_simulation_limit(2_000);
    let c = p
        .choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    assert_eq!(g.show_move(&c.mv), "toggle");
    // Four states (each room, each finished), one node each: room b's toggle, back to the root,
    // adds no node for room a again.
    let tree = &p.trees[0];
    assert_eq!(tree.nodes.len(), 4);
    let mut keys: Vec<u64> = tree.nodes.iter().map(|n| g.state_key(&n.state)).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), 4);
}

#[test]
fn lookahead_solves_a_new_node_whose_mover_wins_in_one() {
    let g = Connect4::new(6, 7).unwrap();
    // Red has three in a row on the bottom; black to move must block at column 4.
    let s = play_moves(
        &g,
        &[
            (0, "drop(1)"),
            (1, "drop(1)"),
            (0, "drop(2)"),
            (1, "drop(2)"),
            (0, "drop(3)"),
        ],
    );
    let solved_losses = |lookahead: bool| {
        let mut p = MctsPlayer::baseline(1)
            .with_lookahead(lookahead)
            .with_simulation_limit(30);
        let c = p.choose(&Ask::new(&g, &s, 1, far())).unwrap();
        let tree = &p.trees[0];
        let losses = tree
            .children_of(0)
            .into_iter()
            .filter(|&n| {
                tree.exact_of(&tree.nodes[n as usize])
                    .is_some_and(|v| v[1] == 0.0)
            })
            .count();
        (g.show_move(&c.mv), losses)
    };
    let (with, solved) = solved_losses(true);
    assert_eq!(
        Player::<Connect4>::name(&MctsPlayer::<Connect4>::baseline(1).with_lookahead(true)),
        "uct+lookahead"
    );
    // Every column but the block lets red win at once: each of those six children is solved as
    // black's loss the first time it is added, and black blocks.
    assert_eq!((with.as_str(), solved), ("drop(4)", 6));
    // Without the lookahead, 30 simulations solve fewer of them.
    let (_, unaided) = solved_losses(false);
    assert!(unaided < 6, "{unaided}");
}

/// A lock of eight buttons pressed in a secret order; each right press is worth an eighth.
const LOCK: &str = "(role p) (button 1) (button 2) (button 3) (button 4)
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
    (secret 0 3) (secret 1 1) (secret 2 4) (secret 3 2) (secret 4 2) (secret 5 1) (secret 6 3)
    (secret 7 4)
    (worth 0 0) (worth 1 12) (worth 2 25) (worth 3 37) (worth 4 50) (worth 5 62) (worth 6 75)
    (worth 7 87) (worth 8 100)
    (init (step 0)) (init (hits 0))
    (<= (legal p (press ?b)) (button ?b))
    (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
    (<= (next (hits ?m)) (true (hits ?k)) (true (step ?n)) (does p (press ?b)) (secret ?n ?b)
        (succ ?k ?m))
    (<= (next (hits ?k)) (true (hits ?k)) (true (step ?n)) (does p (press ?b))
        (not (secret ?n ?b)))
    (<= terminal (true (step 8)))
    (<= (goal p ?g) (true (hits ?k)) (worth ?k ?g))";

#[test]
fn a_puzzles_best_line_is_kept_and_followed() {
    check_best_line(false);
}

#[test]
fn a_puzzles_best_line_reaches_the_win_the_lookahead_found() {
    check_best_line(true);
}

fn check_best_line(lookahead: bool) {
    let program = crate::syntax::parse_kif(LOCK).unwrap();
    let g = crate::network::NetGame::from_program(&program, "lock").unwrap();
    // No per-game probe: it turns the lookahead on by timing, which a busy machine changes.
    let mut p = MctsPlayer {
        per_game: false,
        ..MctsPlayer::new(4)
            .with_simulation_limit(3_000)
            .with_lookahead(lookahead)
    };
    let mut s = g.initial_state();
    let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    let (line, reward) = (p.trees[0].best_line.clone(), p.trees[0].best_reward);
    assert_eq!(line.len(), 8, "{line:?}");
    // The line replays to its reward, and its first move is the one played.
    let mut end = s.clone();
    for &n in &line {
        let mut moves = Vec::new();
        g.legal_moves(&end, 0, &mut moves);
        let m = moves.iter().find(|m| g.move_number(m) == Some(n)).unwrap();
        end = g.play(&end, 0, m);
    }
    assert!(g.is_terminal(&end));
    assert_eq!(f64::from(g.goal(&end, 0)), (reward * 100.0).round());
    assert_eq!(g.move_number(&c.mv), Some(line[0]));
    // With one simulation a move, the player follows the line to its reward or finds better.
    p.max_simulations = Some(1);
    s = g.play(&s, 0, &c.mv);
    let (mut followed, mut kept) = (1, 0);
    while !g.is_terminal(&s) {
        let c = p.choose(&Ask::new(&g, &s, 0, far())).unwrap();
        if p.trees[0].best_reward == reward {
            assert_eq!(p.trees[0].best_line, line[followed..], "move {followed}");
            assert_eq!(g.move_number(&c.mv), Some(line[followed]));
            kept += 1;
        }
        s = g.play(&s, 0, &c.mv);
        followed += 1;
    }
    assert!(kept >= 4, "the line was followed for {kept} moves");
    assert!(f64::from(g.goal(&s, 0)) >= (reward * 100.0).round());
    if lookahead {
        return;
    }
    // The baseline keeps no line.
    let mut uct = MctsPlayer::baseline(4).with_simulation_limit(500);
    uct.choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    assert!(uct.trees[0].best_line.is_empty());
}

/// A token's random walk on 0..=20 for 40 steps from 10, the goal five times its place: at every
/// step (`goals_throughout`) or only at the end.
fn walk(goals_throughout: bool) -> crate::network::NetGame {
    let mut kif = String::from(
        "(role w) (init (at 10)) (init (step 0))
         (<= (legal w left) (true (at ?p)) (place ?q ?p))
         (<= (legal w right) (true (at ?p)) (place ?p ?q))
         (<= (next (at ?q)) (true (at ?p)) (does w left) (place ?q ?p))
         (<= (next (at ?q)) (true (at ?p)) (does w right) (place ?p ?q))
         (<= (next (step ?n)) (true (step ?m)) (count ?m ?n))
         (<= terminal (true (step 40)))",
    );
    for p in 0..20 {
        kif.push_str(&format!(" (place {p} {})", p + 1));
    }
    for n in 0..40 {
        kif.push_str(&format!(" (count {n} {})", n + 1));
    }
    for p in 0..=20 {
        kif.push_str(&format!(" (value {p} {})", p * 5));
    }
    if goals_throughout {
        kif.push_str(" (<= (goal w ?v) (true (at ?p)) (value ?p ?v))");
    } else {
        kif.push_str(
            " (<= (goal w ?v) (true (step 40)) (true (at ?p)) (value ?p ?v))
              (<= (goal w 0) (not (true (step 40))))",
        );
    }
    let program = crate::syntax::parse_kif(&kif).unwrap();
    crate::network::NetGame::from_program(&program, "walk").unwrap()
}

#[test]
fn the_cutoff_probe_cuts_playouts_only_where_goals_before_the_end_predict_the_end() {
    use rand::SeedableRng;
    let later = Instant::now() + Duration::from_secs(600);
    for (goals_throughout, expected) in [(true, Some(12)), (false, None)] {
        let g = walk(goals_throughout);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let probe = cutoff::probe(&g, &g.initial_state(), &mut rng, later);
        assert_eq!(probe.games, 400, "the probe plays its games to the end");
        assert_eq!(probe.mean_length, 40.0);
        // A random walk's place after 12 of 40 steps correlates with its last by about √(12/40),
        // 0.55, after 8 steps by 0.45, below the threshold.
        assert_eq!(
            probe.cutoff.map(|(depth, _)| depth),
            expected,
            "goals throughout: {goals_throughout}, {probe:?}"
        );
    }
    // The search with the switch stops its playouts where its own probe says (its games are drawn
    // otherwise, so the depth may be the next candidate).
    let g = walk(true);
    let mut p = MctsPlayer::baseline(1)
        .with_cutoff(true)
        .with_simulation_limit(500);
    let c = p
        .choose(&Ask::new(&g, &g.initial_state(), 0, far()))
        .unwrap();
    let (depth, _) = p.probe.and_then(|probe| probe.cutoff).expect("a cut-off");
    assert!((12..=20).contains(&depth), "cut after {depth} of 40 steps");
    assert_eq!(p.trees[0].playouts.max_steps, depth);
    assert!(c.stats.simulations >= 500);
}

#[test]
fn pondering_grows_the_tree_after_the_answer_until_the_next_request() {
    let g = Connect4::new(6, 7).unwrap();
    let s = g.initial_state();
    let mut p = MctsPlayer::new(1);
    p.choose(&Ask::new(
        &g,
        &s,
        0,
        Deadline::after(Duration::from_millis(20)),
    ))
    .unwrap();
    let before = p.trees[0].nodes[0].visits;
    // Nobody asks: thinking runs to its own limit.
    let wanted = AtomicUsize::new(2);
    let added = p.ponder(&g, 0, Deadline::after(Duration::from_secs(1)), &wanted);
    assert!(added > 0);
    assert!(p.trees[0].nodes[0].visits > before);
    assert!(
        p.trees[0].nodes[0].state == s,
        "the root stays where the answer was chosen"
    );
    // A request already waiting: at most the walks up to the next check.
    assert!(p.ponder(&g, 0, far(), &AtomicUsize::new(1)) < 64);
    // The baseline, and a search held to a number of simulations, answer and wait.
    let wanted = AtomicUsize::new(2);
    let mut uct = MctsPlayer::baseline(1);
    uct.choose(&Ask::new(
        &g,
        &s,
        0,
        Deadline::after(Duration::from_millis(20)),
    ))
    .unwrap();
    assert_eq!(uct.ponder(&g, 0, far(), &wanted), 0);
    let mut limited = MctsPlayer::new(1).with_simulation_limit(500);
    limited.choose(&Ask::new(&g, &s, 0, far())).unwrap();
    assert_eq!(limited.ponder(&g, 0, far(), &wanted), 0);
}

/// A rule file of the repository's `games/` on the network.
fn repo_game(name: &str) -> crate::network::NetGame {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("games")
        .join(name);
    let (program, _) = crate::syntax::parse_file(&file).expect("parses");
    crate::network::NetGame::from_program(&program, name).expect("builds")
}

#[test]
fn the_piece_probe_finds_each_sides_pieces_where_captures_decide() {
    use rand::SeedableRng;
    let later = Instant::now() + Duration::from_secs(600);
    let found = |g: &crate::network::NetGame| {
        let candidates = pieces::candidates(&g.base_propositions());
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let probe = pieces::probe(g, &g.initial_state(), &candidates, &mut rng, later);
        assert!(probe.games >= pieces::MIN_GAMES, "{probe:?}");
        (candidates.len(), probe)
    };
    // Breakthrough: each colour's squares, the side with more pieces left winning more often.
    let bt = repo_game("breakthrough.gdl");
    let (candidates, probe) = found(&bt);
    assert_eq!(candidates, 2, "{probe:?}");
    let material = probe.material.clone().expect("pieces on both sides");
    let counts = material.counts(bt.state_words(&bt.initial_state()));
    assert_eq!(counts, [12.0, 12.0], "two rows of six each: {probe:?}");
    let text = probe.describe(&bt.info().roles);
    assert!(text.contains("white") && text.contains("black"), "{text}");
    // Connect Four: each side's discs change on every one of its turns, so they are nobody's pieces.
    let c4 = repo_game("connect4.gdl");
    let (_, probe) = found(&c4);
    assert_eq!(probe.material, None, "{probe:?}");
}

#[test]
fn piece_counts_seed_each_new_nodes_move_with_visits() {
    use rand::SeedableRng;
    let bt = repo_game("breakthrough.gdl");
    // The probe's games take no part here (a busy machine may leave it no time): its finding
    // stands in for it.
    let candidates = pieces::candidates(&bt.base_propositions());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let later = Instant::now() + Duration::from_secs(600);
    let probe = pieces::probe(&bt, &bt.initial_state(), &candidates, &mut rng, later);
    let mut p = MctsPlayer::baseline(5)
        .with_pieces(true)
        .with_simulation_limit(300);
    p.material = Some(probe.material.map(Arc::new));
    let c = p
        .choose(&Ask::new(&bt, &bt.initial_state(), 0, far()))
        .unwrap();
    assert!(p.material.as_ref().is_some_and(Option::is_some));
    let tree = &p.trees[0];
    let prior = tree.prior.as_ref().expect("a prior");
    assert_eq!(prior.weight, 6);
    // Every root move the walks tried was seeded once with six visits: its visits are six more than
    // the walks through it.
    let root = &tree.nodes[0];
    let walks: u32 = (0..tree.count(root, 0))
        .map(|i| tree.stats[tree.stat_index(root, 0, i)].visits)
        .sum();
    let tried = (0..tree.count(root, 0))
        .filter(|&i| tree.child(root, i) != NONE)
        .count() as u32;
    assert!(tried > 10);
    assert_eq!(walks, root.visits + 6 * tried);
    assert!(c.stats.simulations >= 300);
}

#[test]
fn the_capture_switch_plays_out_with_the_games_captures_and_seeds_nothing() {
    use rand::SeedableRng;
    let mut bt = repo_game("breakthrough.gdl");
    bt.set_playout_method(crate::network::PlayoutMethod::Propagate);
    let candidates = pieces::candidates(&bt.base_propositions());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let later = Instant::now() + Duration::from_secs(600);
    let probe = pieces::probe(&bt, &bt.initial_state(), &candidates, &mut rng, later);
    let material = probe.material.expect("pieces on both sides");
    let table = bt
        .captures(material.masks())
        .expect("breakthrough's moves take pieces");
    // A move may take the enemy piece on the square it goes to (the table reads no legality).
    assert!(table.len(0) > 20 && table.len(1) > 20, "{table:?}");
    let mut p = MctsPlayer::baseline(5)
        .with_captures(true)
        .with_simulation_limit(300);
    p.material = Some(Some(Arc::new(material)));
    p.capture_table = Some(Arc::new(table));
    p.choose(&Ask::new(&bt, &bt.initial_state(), 0, far()))
        .unwrap();
    let tree = &p.trees[0];
    assert!(tree
        .captures
        .as_ref()
        .is_some_and(|(_, rate)| *rate == CAPTURE_RATE));
    assert!(tree.prior.is_none(), "+captures alone seeds no node");
    assert_eq!(p.switches(), vec![Switch::Captures]);
}

#[test]
fn ucb_tuned_explores_as_ucb1_where_rewards_vary_most_and_less_where_they_are_settled() {
    let (bias, log_n, n) = (0.9, 1000f64.ln(), 100.0);
    let ucb1 = bias * (0.5f64).sqrt() * (log_n / n).sqrt();
    for variance in [0.25, 0.3] {
        let t = tree::tuned_exploration(bias, variance, log_n, n);
        assert!(
            (t - ucb1).abs() < 1e-12,
            "variance {variance}: {t} against {ucb1}"
        );
    }
    // A settled node (no variance) among many visits explores less, and more again as its
    // rewards spread.
    let (log_n, n) = (1e6f64.ln(), 1e5);
    let settled = tree::tuned_exploration(bias, 0.0, log_n, n);
    let spread = tree::tuned_exploration(bias, 0.1, log_n, n);
    let most = tree::tuned_exploration(bias, 0.25, log_n, n);
    assert!(
        settled < spread && spread < most,
        "{settled} {spread} {most}"
    );
    // A node never visited explores nothing it could divide by.
    assert_eq!(tree::tuned_exploration(bias, 0.0, 0.0, 1.0), 0.0);
    // `+tuned`'s constant explores as UCB1's default where rewards vary most.
    let at_most = tree::tuned_exploration(tree::TUNED_BIAS, 0.25, log_n, n);
    assert!((at_most - DEFAULT_EXPLORATION * (log_n / n).sqrt()).abs() < 1e-12);
}

#[test]
fn the_tuned_switch_keeps_squared_rewards_and_still_finds_the_win() {
    let p = searched_from_start_and_finds_the_win(
        MctsPlayer::baseline(1).with_tuned(true),
        "uct+tuned",
    );
    let tree = &p.trees[0];
    let root = &tree.nodes[0];
    // Rewards are 0, ½ or 1: a move's squares lie between its wins and its total.
    for i in 0..tree.count(root, 0) {
        let st = tree.stats[tree.stat_index(root, 0, i)];
        let squares = f64::from(st.squares);
        assert!(st.visits > 0, "column {i} tried");
        assert!(
            squares <= st.total + 1e-3 && squares >= st.total / 2.0 - 1e-3,
            "column {i}: {st:?}"
        );
    }
}

/// Whether node `a` of tree `x` and node `b` of tree `y` hold the same state, visits, statistics,
/// solved values and children, all the way down.
fn same_subtree<S: Clone + PartialEq, M: Clone + PartialEq>(
    x: &tree::Tree<S, M>,
    a: u32,
    y: &tree::Tree<S, M>,
    b: u32,
) -> bool {
    let (na, nb) = (&x.nodes[a as usize], &y.nodes[b as usize]);
    if na.state != nb.state || na.visits != nb.visits || na.joints != nb.joints {
        return false;
    }
    if x.exact_of(na) != y.exact_of(nb) {
        return false;
    }
    for r in 0..x.roles {
        if x.count(na, r) != y.count(nb, r) {
            return false;
        }
        for i in 0..x.count(na, r) {
            let (sa, sb) = (x.stat_index(na, r, i), y.stat_index(nb, r, i));
            let (p, q) = (x.stats[sa], y.stats[sb]);
            if x.moves[sa] != y.moves[sb] || p.visits != q.visits || p.total != q.total {
                return false;
            }
        }
    }
    let solved_leaf = na.exact != tree::NONE && x.count(na, 0) + x.count(na, x.roles - 1) == 0;
    if solved_leaf {
        return true;
    }
    (0..na.joints).all(|j| match (x.child(na, j), y.child(nb, j)) {
        (tree::NONE, tree::NONE) => true,
        (tree::NONE, _) | (_, tree::NONE) => false,
        (c, d) => same_subtree(x, c, y, d),
    })
}

#[test]
fn a_kept_subtree_slides_down_in_place_the_same_as_a_copy() {
    for graph in [false, true] {
        check_slide(graph);
    }
}

/// Slides children and grandchildren of the root of a grown Connect Four tree (a graph when
/// `graph`) and checks each against the same node kept by copying.
fn check_slide(graph: bool) {
    let g = Connect4::new(6, 7).unwrap();
    let grown = || {
        let mut p = MctsPlayer::baseline(7)
            .with_transpositions(graph)
            .with_simulation_limit(20_000);
        p.choose(&Ask::new(&g, &g.initial_state(), 0, far()))
            .unwrap();
        p.trees.remove(0)
    };
    let copied = grown();
    let nodes: Vec<u32> = copied
        .children_of(0)
        .into_iter()
        .flat_map(|c| std::iter::once(c).chain(copied.children_of(c)))
        .take(12)
        .collect();
    assert_eq!(nodes.len(), 12);
    // In a graph some kept node was added before the root that reaches it (a transposition met
    // through an older sibling): the case where the root trades numbers.
    let reaches_older = |root: u32| {
        let (mut seen, mut stack) = (vec![false; copied.nodes.len()], vec![root]);
        let mut older = false;
        while let Some(x) = stack.pop() {
            older |= x < root;
            for c in copied.children_of(x) {
                if !std::mem::replace(&mut seen[c as usize], true) {
                    stack.push(c);
                }
            }
        }
        older
    };
    assert_eq!(nodes.iter().any(|&n| reaches_older(n)), graph);
    for node in nodes {
        let copy = copied.subtree(&g, node, 1);
        let mut again = grown();
        assert!(same_subtree(&again, node, &copied, node), "same growth");
        let slide = again.slide_subtree(node, 1).expect("a node of the tree");
        assert!(slide.nodes.len() == copy.nodes.len() && slide.nodes.len() > 1);
        assert!(same_subtree(&slide, 0, &copy, 0), "node {node}");
        // A graph's table files every kept state under its new number, and nothing else.
        match &slide.table {
            Some(table) => {
                assert!(graph && table.len() == slide.nodes.len());
                for (i, n) in slide.nodes.iter().enumerate() {
                    assert_eq!(table.get(&g.state_key(&n.state)), Some(&(i as u32)));
                }
            }
            None => assert!(!graph),
        }
    }
}

#[test]
fn normalisation_sets_the_parents_statistic_to_the_childs_weighted_value_and_still_finds_the_win() {
    let mut p = searched_from_start_and_finds_the_win(
        MctsPlayer::baseline(1).with_normalization(true),
        "uct+norm",
    );
    let tree = &mut p.trees[0];
    assert!(tree.normalize, "Connect Four is zero-sum");
    // Red's most visited drop at the root, and black's moves below it.
    let root = tree.nodes[0].clone();
    let i = (0..tree.count(&root, 0))
        .max_by_key(|&i| tree.stats[tree.stat_index(&root, 0, i)].visits)
        .unwrap();
    let child = tree.child(&root, i);
    let c = tree.nodes[child as usize].clone();
    let black: Vec<(u32, f64)> = (0..tree.count(&c, 1))
        .map(|j| {
            let st = tree.stats[tree.stat_index(&c, 1, j)];
            (st.visits, st.total / f64::from(st.visits.max(1)))
        })
        .collect();
    let expected = 1.0 - normalize::normalised(black.iter().copied()).unwrap();
    // Due at its next visit: the root's statistic of the drop becomes red's value of it, visits kept.
    tree.nodes[child as usize].visits = 1_000;
    tree.path.clear();
    tree.path.extend([(0, i), (child, NONE)]);
    let at = tree.stat_index(&root, 0, i);
    let visits = tree.stats[at].visits;
    tree.normalise_at(1);
    let st = tree.stats[at];
    assert_eq!(st.visits, visits);
    assert!(
        (st.total / f64::from(visits) - expected).abs() < 1e-9,
        "{st:?} against {expected}"
    );
    // Not due (visits not a multiple of the period): nothing changes.
    tree.stats[at].total = 0.0;
    tree.nodes[child as usize].visits = 1_001;
    tree.normalise_at(1);
    assert_eq!(tree.stats[at].total, 0.0);
}

#[test]
fn the_trees_share_transpositions_where_the_probe_chose_greedy_playouts() {
    let g = Connect4::new(6, 7).unwrap();
    let s = g.initial_state();
    let mut p = MctsPlayer::new(1);
    p.root_at(&g, &s, Duration::MAX);
    assert!(p.trees[0].table.is_none() && !p.trees[0].playouts.greedy);
    p.moves_probe = Some(moves_probe::Chosen {
        nst: false,
        lookahead: false,
        greedy: true,
        leaves: false,
    });
    p.root_at(&g, &s, Duration::MAX);
    assert!(p.trees[0].table.is_some() && p.trees[0].playouts.greedy);
    // A probe that chose NST instead (breakthrough, reversi) leaves the tree a tree.
    p.moves_probe = Some(moves_probe::Chosen {
        nst: true,
        lookahead: false,
        greedy: false,
        leaves: false,
    });
    p.root_at(&g, &s, Duration::MAX);
    assert!(p.trees[0].table.is_none() && !p.trees[0].playouts.greedy);
}
