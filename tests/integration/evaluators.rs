//! Evaluators apart from games: a judgement written outside the library plugs into the searches that
//! stop before the end (`id`, the seeds' searches) and into `mcts`, which then judges its leaves by it
//! instead of random playouts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ggp::evaluators::{Estimate, Evaluator, LearnedScores, Playouts};
use ggp::game::{Game, GameError};
use ggp::games::tictactoe::TicTacToe;
use ggp::learn::{train, DEFAULT_RATE};
use ggp::players::{
    make_player, Ask, Deadline, IdPlayer, MctsPlayer, Player, PlayerConfig, PlayerKind,
};

type State = <TicTacToe as Game>::State;

/// Loves one cell for the first role: a state where x holds it is worth 100 to x, any other 0; it
/// counts the states it judges.
struct LovesCell {
    cell: &'static str,
    calls: AtomicU64,
}

impl LovesCell {
    fn new(cell: &'static str) -> Arc<LovesCell> {
        Arc::new(LovesCell {
            cell,
            calls: AtomicU64::new(0),
        })
    }

    fn x_holds(&self, game: &TicTacToe, state: &State) -> bool {
        // The drawn board names x's cells; the cell is written `mark(r,c)`.
        let (r, c) = self
            .cell
            .trim_start_matches("mark(")
            .trim_end_matches(')')
            .split_once(',')
            .unwrap();
        let row: usize = r.parse().unwrap();
        let col: usize = c.parse().unwrap();
        game.show_state(state)
            .lines()
            .nth(row)
            .and_then(|line| line.split_whitespace().nth(col + 1))
            == Some("x")
    }
}

impl Evaluator<TicTacToe> for LovesCell {
    fn name(&self) -> String {
        format!("loves {}", self.cell)
    }

    fn estimate(&self, game: &TicTacToe, state: &State) -> Result<Estimate, GameError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(Estimate::Guess(if self.x_holds(game, state) {
            40
        } else {
            -40
        }))
    }

    fn expected_goal(&self, guess: i32) -> Option<f64> {
        Some(if guess > 0 { 100.0 } else { 0.0 })
    }
}

fn first_move(player: &mut dyn Player<TicTacToe>, game: &TicTacToe) -> String {
    let start = game.initial_state();
    let deadline = Deadline::after(Duration::from_secs(30));
    let choice = player.choose(&Ask::new(game, &start, 0, deadline)).unwrap();
    game.show_move(&choice.mv)
}

#[test]
fn a_custom_evaluator_steers_id_and_the_seeds_searches() {
    let game = TicTacToe::new(3, 3).unwrap();
    for cell in ["mark(3,1)", "mark(1,3)"] {
        let loves = LovesCell::new(cell);
        let mut id = IdPlayer::new(1, loves.clone()).with_max_depth(1);
        assert_eq!(first_move(&mut id, &game), cell, "id");
        let config = PlayerConfig {
            depth: 1,
            ..PlayerConfig::default()
        };
        let mut ab = make_player(
            &PlayerKind::AlphaBeta.into(),
            0,
            &game,
            &config,
            loves.clone(),
        )
        .unwrap();
        assert_eq!(first_move(ab.as_mut(), &game), cell, "alphabeta");
        assert!(
            loves.calls.load(Ordering::Relaxed) >= 18,
            "both judged all nine moves"
        );
    }
}

#[test]
fn a_custom_evaluator_judges_the_leaves_of_mcts() {
    let game = TicTacToe::new(3, 3).unwrap();
    for cell in ["mark(3,1)", "mark(2,2)"] {
        let loves = LovesCell::new(cell);
        let mut mcts = MctsPlayer::new(1)
            .with_simulation_limit(500)
            .with_evaluator(loves.clone());
        assert_eq!(first_move(&mut mcts, &game), cell);
        assert!(
            loves.calls.load(Ordering::Relaxed) > 0,
            "its leaves were judged"
        );
    }
}

#[test]
fn the_librarys_evaluators_plug_in_the_same_way() {
    let game = TicTacToe::new(3, 3).unwrap();
    let model = Arc::new(
        train(&game, 20_000, DEFAULT_RATE, 1, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap(),
    );
    let evaluators: Vec<Arc<dyn Evaluator<TicTacToe>>> = vec![
        Arc::new(Playouts::new(16)),
        Arc::new(LearnedScores::new(model)),
    ];
    for evaluator in evaluators {
        let name = evaluator.name();
        let mut mcts = MctsPlayer::new(3)
            .with_simulation_limit(300)
            .with_evaluator(evaluator.clone());
        let mv = first_move(&mut mcts, &game);
        assert!(mv.starts_with("mark("), "{name}: {mv}");
        let mut id = IdPlayer::new(3, evaluator).with_max_depth(2);
        let mv = first_move(&mut id, &game);
        assert!(mv.starts_with("mark("), "{name}: {mv}");
    }
}
