//! The seeds' searchers against seed 3's figures, each other, and perfect play.

use ggp::evaluators::{Estimate, Evaluator, Outcome};
use ggp::game::Game;
use ggp::games::connect4::{self, Connect4};
use ggp::games::nim::{self, Nim};
use ggp::games::tictactoe::{self, TicTacToe};
use ggp::games::tree::{TreeGame, TreeValues};
use ggp::players::seeds::trace::seeds_text;
use ggp::players::{SearchReport, SeedSearch};

const TREE2: &str = "(a (b c:3 d:6 e:-2) (f g:6 h:4 i:10) (j k:1 l:5 m:8))";

/// Seed 3's Figure 3, reconstructed from the trace of Figure 4. Node `o` has the single child `p`:
/// the trace shows `o` returning `ParentPrune` straight after `p`, which alpha-beta only does when `p`
/// is its last child. `u` and `y` are the subtrees a search that forgets the incoming bound would visit.
const FIGURE3: &str = "(a (b (c (d e:3 f:5) (g h:2 i:7)) (j (k l:10 m:4) (u v:1 x:1))) \
                       (n (o (p q:2 r:9)) (y (z z1:1 z2:1))))";

const FIGURE4: &str = "Searching state (Maxie,a) with ab=(Pruned,Pruned)

Evaluating state (Minnie,b) with ab=(Pruned,Pruned)
Evaluating state (Maxie,c) with ab=(Pruned,Pruned)
Evaluating state (Minnie,d) with ab=(Pruned,Pruned)
Evaluating state (Maxie,e) with ab=(Pruned,Pruned)
Result of (Maxie,e) is Guess:3
Evaluating state (Maxie,f) with ab=(Pruned,Guess:3)
Result of (Maxie,f) is Pruned
Result of (Minnie,d) is Guess:3
Evaluating state (Minnie,g) with ab=(Guess:3,Pruned)
Evaluating state (Maxie,h) with ab=(Guess:3,Pruned)
Result of (Maxie,h) is ParentPrune
Result of (Minnie,g) is Pruned
Result of (Maxie,c) is Guess:3
Evaluating state (Maxie,j) with ab=(Pruned,Guess:3)
Evaluating state (Minnie,k) with ab=(Pruned,Guess:3)
Evaluating state (Maxie,l) with ab=(Pruned,Guess:3)
Result of (Maxie,l) is Pruned
Evaluating state (Maxie,m) with ab=(Pruned,Guess:3)
Result of (Maxie,m) is Pruned
Result of (Minnie,k) is ParentPrune
Result of (Maxie,j) is Pruned
Result of (Minnie,b) is Guess:3
Evaluating state (Minnie,n) with ab=(Guess:3,Pruned)
Evaluating state (Maxie,o) with ab=(Guess:3,Pruned)
Evaluating state (Minnie,p) with ab=(Guess:3,Pruned)
Evaluating state (Maxie,q) with ab=(Guess:3,Pruned)
Result of (Maxie,q) is ParentPrune
Result of (Minnie,p) is Pruned
Result of (Maxie,o) is ParentPrune
Result of (Minnie,n) is Pruned

Therefore value of (Maxie,a) is Guess:3, and best move is 0.

Terminals visited: 6";

/// Seed 3's Figure 5, Jamboree 0.5 on Tree 2 (its trace lines between the root's).
const FIGURE5_JAMBOREE: &str = "Evaluating state (Minnie,b) with ab=(Pruned,Pruned)
Evaluating state (Maxie,c) with ab=(Pruned,Pruned)
Result of (Maxie,c) is Guess:3
Evaluating state (Maxie,d) with ab=(Pruned,Guess:3)
Result of (Maxie,d) is Pruned
Evaluating state (Maxie,e) with ab=(Pruned,Guess:3)
Result of (Maxie,e) is Guess:~2
Result of (Minnie,b) is Guess:~2
Evaluating state (Minnie,f) with ab=(Guess:~2,Pruned)
Evaluating state (Maxie,g) with ab=(Guess:~2,Pruned)
Result of (Maxie,g) is Guess:6
Evaluating state (Maxie,h) with ab=(Guess:~2,Guess:6)
Result of (Maxie,h) is Guess:4
Evaluating state (Maxie,i) with ab=(Guess:~2,Guess:6)
Result of (Maxie,i) is Pruned
Result of (Minnie,f) is Guess:4
Evaluating state (Minnie,j) with ab=(Guess:~2,Pruned)
Evaluating state (Maxie,k) with ab=(Guess:~2,Pruned)
Result of (Maxie,k) is Guess:1
Evaluating state (Maxie,l) with ab=(Guess:~2,Guess:1)
Result of (Maxie,l) is Pruned
Evaluating state (Maxie,m) with ab=(Guess:~2,Guess:1)
Result of (Maxie,m) is Pruned
Result of (Minnie,j) is Guess:1
Terminals visited: 9";

/// Seed 3's Figure 5, alpha-beta on Tree 2.
const FIGURE5_ALPHABETA: &str = "Evaluating state (Minnie,b) with ab=(Pruned,Pruned)
Evaluating state (Maxie,c) with ab=(Pruned,Pruned)
Result of (Maxie,c) is Guess:3
Evaluating state (Maxie,d) with ab=(Pruned,Guess:3)
Result of (Maxie,d) is Pruned
Evaluating state (Maxie,e) with ab=(Pruned,Guess:3)
Result of (Maxie,e) is Guess:~2
Result of (Minnie,b) is Guess:~2
Evaluating state (Minnie,f) with ab=(Guess:~2,Pruned)
Evaluating state (Maxie,g) with ab=(Guess:~2,Pruned)
Result of (Maxie,g) is Guess:6
Evaluating state (Maxie,h) with ab=(Guess:~2,Guess:6)
Result of (Maxie,h) is Guess:4
Evaluating state (Maxie,i) with ab=(Guess:~2,Guess:4)
Result of (Maxie,i) is Pruned
Result of (Minnie,f) is Guess:4
Evaluating state (Minnie,j) with ab=(Guess:4,Pruned)
Evaluating state (Maxie,k) with ab=(Guess:4,Pruned)
Result of (Maxie,k) is ParentPrune
Result of (Minnie,j) is Pruned
Terminals visited: 7";

#[derive(Clone, Copy, Debug)]
enum Algo {
    Minimax,
    AlphaBeta,
    Jamboree(f64),
}

fn search<G: Game>(
    g: &G,
    e: &dyn Evaluator<G>,
    s: &G::State,
    algo: Algo,
    depth: u32,
    trace: bool,
) -> SearchReport {
    let search = match algo {
        Algo::Minimax => SeedSearch::Minimax,
        Algo::AlphaBeta => SeedSearch::AlphaBeta,
        Algo::Jamboree(fraction) => SeedSearch::Jamboree { fraction },
    };
    search
        .run(g, e, s, depth, trace, None)
        .unwrap_or_else(|e| panic!("{algo:?} failed: {e}"))
}

/// A search's trace in the seeds' notation.
fn text(r: &SearchReport) -> Vec<String> {
    seeds_text(&r.trace)
}

/// The searched lines of a trace: without the root's opening and closing lines and blank lines.
fn body(r: &SearchReport) -> Vec<String> {
    text(r)
        .iter()
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Searching state") && !l.starts_with("Therefore")
        })
        .cloned()
        .collect()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

fn assert_lines(actual: &[String], expected: &[String]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a, e, "line {} differs", i + 1);
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "trace length; got:\n{}",
        actual.join("\n")
    );
}

/// Checks one search on a tree: leaves estimated (in order unless parallel), chosen move, value.
fn check_tree(text: &str, algo: Algo, depth: u32, leaves: &str, best: usize, value: i32) {
    let t = TreeGame::parse(text).unwrap();
    let v = TreeValues::new();
    let r = search(&t, &v, &0, algo, depth, false);
    let mut got = v.take_estimated_leaves();
    let mut want: Vec<String> = leaves.split_whitespace().map(str::to_string).collect();
    if matches!(algo, Algo::Jamboree(_)) {
        got.sort();
        want.sort();
    }
    assert_eq!(got, want, "{algo:?} on {text}");
    assert_eq!(r.stats.leaves as usize, want.len());
    assert_eq!(r.best, best, "{algo:?} on {text}");
    assert_eq!(r.value, Estimate::Guess(value), "{algo:?} on {text}");
}

#[test]
fn tree2_counts_and_choices_match_seed_3() {
    check_tree(TREE2, Algo::AlphaBeta, 2, "c d e g h i k", 1, 4);
    check_tree(TREE2, Algo::Jamboree(0.5), 2, "c d e g h i k l m", 1, 4);
    check_tree(TREE2, Algo::Minimax, 2, "c d e g h i k l m", 1, 4);
    check_tree(TREE2, Algo::Jamboree(1.0), 2, "c d e g h i k", 1, 4);
    check_tree(TREE2, Algo::Jamboree(0.0), 2, "c d e g h i k l m", 1, 4);
}

#[test]
fn figure_3_estimates_the_leaves_of_seed_3() {
    check_tree(FIGURE3, Algo::AlphaBeta, 4, "e f h l m q", 0, 3);
    assert_eq!(
        TreeGame::parse(FIGURE3).map(|t| {
            let v = TreeValues::new();
            SeedSearch::AlphaBeta
                .run(&t, &v, &0, 4, false, None)
                .unwrap();
            v.take_estimate_log()
        }),
        Ok(lines(
            "Estimating state e[3]\nEstimating state f[5]\nEstimating state h[2]\n\
             Estimating state l[10]\nEstimating state m[4]\nEstimating state q[2]"
        ))
    );
}

#[test]
fn figure_4_trace_is_reproduced_line_by_line() {
    let t = TreeGame::parse(FIGURE3).unwrap();
    let v = TreeValues::new();
    let r = search(&t, &v, &0, Algo::AlphaBeta, 4, true);
    assert_lines(&text(&r), &lines(FIGURE4));
    // Jamboree 0.5 explores this binary tree exactly as alpha-beta does (seed 3).
    let j = search(&t, &v, &0, Algo::Jamboree(0.5), 4, true);
    assert_lines(&text(&j), &lines(FIGURE4));
}

#[test]
fn figure_5_traces_are_reproduced() {
    let t = TreeGame::parse(TREE2).unwrap();
    let v = TreeValues::new();
    let ab = search(&t, &v, &0, Algo::AlphaBeta, 2, true);
    assert_lines(&body(&ab), &lines(FIGURE5_ALPHABETA));
    let jb = search(&t, &v, &0, Algo::Jamboree(0.5), 2, true);
    assert_lines(&body(&jb), &lines(FIGURE5_JAMBOREE));
}

const TREES: [&str; 4] = [
    TREE2,
    FIGURE3,
    "(r (a (b x:1 y:-4 z:7) (c w:2 v:9) (d u:0)) (e (f t:5 s:5 q:3) (g p:-1 o:8 n:6)) \
     (h (i m:3) (j l:4 k:-2 kk:10 kkk:1)))",
    "(r (a b:1 c:2 d:3 e:4 f:5) (g h:5 i:4 j:3 k:2 l:1) (m n:0 o:9 p:-9 q:6 s:2))",
];

fn depth_of(text: &str) -> u32 {
    match text {
        TREE2 => 2,
        t if t == FIGURE3 => 4,
        t if t.starts_with("(r (a (b") => 3,
        _ => 2,
    }
}

#[test]
fn jamboree_one_is_alphabeta_and_zero_is_minimax_on_trees() {
    for text in TREES {
        let t = TreeGame::parse(text).unwrap();
        let v = TreeValues::new();
        let d = depth_of(text);
        let run = |algo| {
            let r = search(&t, &v, &0, algo, d, false);
            let mut leaves = v.take_estimated_leaves();
            leaves.sort();
            (leaves, r.best, r.value)
        };
        assert_eq!(run(Algo::Jamboree(1.0)), run(Algo::AlphaBeta), "{text}");
        assert_eq!(run(Algo::Jamboree(0.0)), run(Algo::Minimax), "{text}");
        // Every algorithm agrees on the value.
        let v = run(Algo::Minimax).2;
        assert_eq!(run(Algo::Jamboree(0.5)).2, v, "{text}");
    }
}

/// Positions reached by a few fixed moves, where several searches must agree.
fn tictactoe_positions() -> Vec<(TicTacToe, <TicTacToe as Game>::State)> {
    let mut out = Vec::new();
    for (size, k, moves) in [
        (3, 3, vec![]),
        (3, 3, vec![4, 0]),
        (3, 3, vec![0, 4, 8]),
        (4, 3, vec![5, 6]),
        (4, 4, vec![0, 5, 10]),
    ] {
        let g = TicTacToe::new(size, k).unwrap();
        let mut s = g.initial_state();
        for (i, m) in moves.iter().enumerate() {
            s = g.play(&s, i % 2, m);
        }
        out.push((g, s));
    }
    out
}

#[test]
fn jamboree_extremes_match_on_tictactoe() {
    for (g, s) in tictactoe_positions() {
        for depth in [2, 4] {
            let ab = search(&g, &tictactoe::Heuristic, &s, Algo::AlphaBeta, depth, false);
            let j1 = search(
                &g,
                &tictactoe::Heuristic,
                &s,
                Algo::Jamboree(1.0),
                depth,
                false,
            );
            assert_eq!(
                (j1.stats.leaves, j1.best, j1.value),
                (ab.stats.leaves, ab.best, ab.value)
            );
            let mm = search(&g, &tictactoe::Heuristic, &s, Algo::Minimax, depth, false);
            let j0 = search(
                &g,
                &tictactoe::Heuristic,
                &s,
                Algo::Jamboree(0.0),
                depth,
                false,
            );
            assert_eq!(
                (j0.stats.leaves, j0.best, j0.value),
                (mm.stats.leaves, mm.best, mm.value)
            );
            assert_eq!(ab.value, mm.value);
            assert!(ab.stats.leaves <= mm.stats.leaves);
        }
    }
}

#[test]
fn jamboree_traces_are_deterministic() {
    let g = Connect4::new(6, 7).unwrap();
    let s = g.initial_state();
    let a = search(&g, &connect4::Heuristic, &s, Algo::Jamboree(0.5), 5, true);
    let b = search(&g, &connect4::Heuristic, &s, Algo::Jamboree(0.5), 5, true);
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.stats.leaves, b.stats.leaves);
    // Two lines per node below the root, plus "Terminals visited".
    assert_eq!(body(&a).len() as u64, 2 * (a.stats.nodes - 1) + 1);
}

#[test]
fn full_depth_search_draws_tictactoe() {
    let g = TicTacToe::new(3, 3).unwrap();
    let s = g.initial_state();
    for algo in [Algo::AlphaBeta, Algo::Jamboree(0.5), Algo::Minimax] {
        let r = search(&g, &tictactoe::Heuristic, &s, algo, 9, false);
        assert_eq!(r.value, Estimate::Definitely(Outcome::Draw), "{algo:?}");
    }
}

#[test]
fn nim_from_21_is_a_first_player_win() {
    let g = Nim::new(21, false);
    let r = search(
        &g,
        &nim::Heuristic,
        &g.initial_state(),
        Algo::AlphaBeta,
        21,
        false,
    );
    assert_eq!(r.value, Estimate::Definitely(Outcome::Winner(0)));
    // The winning move leaves a multiple of four: take 1.
    assert_eq!(r.best, 0);
}

#[test]
fn nim_results_follow_the_mod_4_rule() {
    for misere in [false, true] {
        for pile in 1..=30u32 {
            let g = Nim::new(pile, misere);
            let r = search(
                &g,
                &nim::Heuristic,
                &g.initial_state(),
                Algo::AlphaBeta,
                pile,
                false,
            );
            let first_loses = if misere { pile % 4 == 1 } else { pile % 4 == 0 };
            let expected = Outcome::Winner(usize::from(first_loses));
            assert_eq!(
                r.value,
                Estimate::Definitely(expected),
                "pile {pile} misere {misere}"
            );
        }
    }
}

/// A tree searches at any depth: an inner node at the horizon is worth its subtree's minimax value, and
/// a leaf above the horizon ends the search there (a leaf is terminal).
#[test]
fn trees_search_at_every_depth() {
    for (depth, leaves) in [
        (1, "b f j"),
        (2, "c d e g h i k l m"),
        (3, "c d e g h i k l m"),
    ] {
        check_tree(TREE2, Algo::Minimax, depth, leaves, 1, 4);
    }
    check_tree(TREE2, Algo::AlphaBeta, 1, "b f j", 1, 4);
    check_tree(TREE2, Algo::AlphaBeta, 3, "c d e g h i k", 1, 4);
    // An unbalanced tree: the leaf `b` ends its branch at depth 1 whatever the search depth.
    let lopsided = "(a b:-1 (c (d e:5 f:2) g:3))";
    check_tree(lopsided, Algo::Minimax, 1, "b c", 1, 3);
    check_tree(lopsided, Algo::Minimax, 2, "b d g", 1, 3);
    check_tree(lopsided, Algo::Minimax, 3, "b e f g", 1, 3);
}

#[test]
fn searches_refuse_bad_requests() {
    let t = TreeGame::parse(TREE2).unwrap();
    let v = TreeValues::new();
    let jamboree = SeedSearch::Jamboree { fraction: 1.5 };
    assert!(jamboree.run(&t, &v, &0, 2, false, None).is_err());
    assert!(SeedSearch::AlphaBeta
        .run(&t, &v, &0, 0, false, None)
        .is_err());
    let g = Nim::new(0, false);
    let h = nim::Heuristic;
    assert!(SeedSearch::AlphaBeta
        .run(&g, &h, &g.initial_state(), 3, false, None)
        .is_err());
}

#[test]
fn cancelling_parallel_siblings_changes_effort_not_results() {
    // A traced Jamboree never cancels, an untraced one does: both must choose the same move with the same
    // value, from positions deep enough that the parallel part runs.
    let g = Connect4::new(6, 7).unwrap();
    let mut s = g.initial_state();
    for (ply, col) in [3u8, 3, 2, 4, 4, 2, 1, 5].into_iter().enumerate() {
        let jamboree = SeedSearch::Jamboree { fraction: 0.5 };
        let traced = jamboree
            .run(&g, &connect4::Heuristic, &s, 6, true, None)
            .unwrap();
        let fast = jamboree
            .run(&g, &connect4::Heuristic, &s, 6, false, None)
            .unwrap();
        assert_eq!(
            (fast.best, fast.value),
            (traced.best, traced.value),
            "after {ply} plies"
        );
        assert!(fast.stats.nodes <= traced.stats.nodes, "after {ply} plies");
        s = g.play(&s, ply % 2, &col);
    }
}
