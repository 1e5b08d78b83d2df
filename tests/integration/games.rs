//! The native games through the `Game` trait: perft counts, move text, playouts.

use ggp::game::{perft, Game};
use ggp::games::connect4::Connect4;
use ggp::games::nim::Nim;
use ggp::games::tictactoe::TicTacToe;
use rand::rngs::SmallRng;
use rand::SeedableRng;

fn check_perft<G: Game>(game: &G, expected: &[u64]) {
    for (d, want) in expected.iter().enumerate() {
        let depth = d as u32 + 1;
        assert_eq!(
            perft(game, &game.initial_state(), depth),
            *want,
            "{} depth {depth}",
            game.info().name
        );
    }
}

#[test]
fn tictactoe_perft_totals_255168() {
    let g = TicTacToe::new(3, 3).unwrap();
    // No game ends before move 5, so the first counts are falling factorials.
    check_perft(&g, &[9, 72, 504, 3024, 15120]);
    // 1440 games end at move 5 and count once at depth 6; the rest go on with 4 moves each.
    assert_eq!(perft(&g, &g.initial_state(), 6), (15120 - 1440) * 4 + 1440);
    assert_eq!(perft(&g, &g.initial_state(), 9), 255168);
}

#[test]
fn connect4_perft_1_to_7() {
    let g = Connect4::new(6, 7).unwrap();
    check_perft(&g, &[7, 49, 343, 2401, 16807, 117649, 823536]);
}

#[test]
fn nim_perft_counts_compositions() {
    // Ways to take a pile of 4 in steps of 1..3 within the horizon; 7 compositions in all.
    check_perft(&Nim::new(4, false), &[3, 6, 7, 7]);
}

#[test]
fn native_games_follow_the_turn_taking_contract() {
    fn check<G: Game>(g: &G, seed: u64) {
        let info = g.info();
        assert_eq!(info.dynamics, ggp::game::Dynamics::TurnTaking);
        assert!(info.zero_sum);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut buf = Vec::new();
        for _ in 0..50 {
            let (end, steps) = g.random_playout(&g.initial_state(), &mut rng, &mut buf, 1000);
            assert!(g.is_terminal(&end) && steps > 0);
            assert_eq!(g.goal(&end, 0) + g.goal(&end, 1), 100);
            assert_eq!(g.mover(&end), None);
        }
        let s = g.initial_state();
        let mover = g.mover(&s).unwrap();
        g.legal_moves(&s, 1 - mover, &mut buf);
        assert_eq!(buf.len(), 1);
        assert_eq!(g.show_move(&buf[0]), "noop");
        // Every legal move's text parses back to the move.
        g.legal_moves(&s, mover, &mut buf);
        for m in &buf {
            assert_eq!(&g.parse_move(&s, mover, &g.show_move(m)).unwrap(), m);
        }
    }
    check(&Nim::new(21, false), 1);
    check(&Nim::new(21, true), 2);
    check(&TicTacToe::new(3, 3).unwrap(), 3);
    check(&TicTacToe::new(5, 4).unwrap(), 4);
    check(&Connect4::new(6, 7).unwrap(), 5);
    check(&Connect4::new(4, 5).unwrap(), 6);
}

#[test]
fn connect4_moves_are_written_with_one_based_columns() {
    let g = Connect4::new(6, 7).unwrap();
    let s = g.initial_state();
    let mut moves = Vec::new();
    g.legal_moves(&s, 0, &mut moves);
    let shown: Vec<String> = moves.iter().map(|m| g.show_move(m)).collect();
    assert_eq!(
        shown,
        ["drop(1)", "drop(2)", "drop(3)", "drop(4)", "drop(5)", "drop(6)", "drop(7)"]
    );
    assert_eq!(g.parse_move(&s, 0, "( DROP 4 )").unwrap(), 3);
}
