//! # ggp: a General Game Playing engine
//!
//! Games are written as logic programs, in classic KIF GDL (`.kif`) or Stanford's Epilog infix form
//! (`.gdl`), or hand-written in Rust. All of them implement one [`game::Game`] trait, and one set of
//! [`players`] plays them all.
//!
//! The stages, each with one entry point:
//! syntax ([`syntax`]) → checked program → plan → grounded network → game.
//!
//! A native game and a rule file go through the same trait; a rule file runs on the Datalog evaluator
//! ([`engine::RuleGame`]) or, grounded, on the propositional network ([`network::NetGame`]):
//!
//! ```
//! use ggp::engine::RuleGame;
//! use ggp::game::{perft, Game};
//! use ggp::games::tictactoe::TicTacToe;
//! use ggp::network::NetGame;
//! use ggp::syntax::parse_infix;
//!
//! let native = TicTacToe::new(3, 3).unwrap();
//! assert_eq!(perft(&native, &native.initial_state(), 2), 72);
//!
//! // Two steps to the goal, written as classic GDL in infix syntax.
//! let rules = parse_infix(
//!     "role(robot)
//!      init(step(0))
//!      succ(0, 1)  succ(1, 2)
//!      legal(robot, go)
//!      next(step(N)) :- true(step(M)) & succ(M, N)
//!      terminal :- true(step(2))
//!      goal(robot, 100) :- true(step(2))
//!      goal(robot, 0) :- ~true(step(2))",
//! )
//! .unwrap();
//! let datalog = RuleGame::from_program(&rules, "steps").unwrap();
//! let network = NetGame::from_program(&rules, "steps").unwrap();
//! assert_eq!(perft(&datalog, &datalog.initial_state(), 5), 1);
//! let (mut state, mut moves) = (network.initial_state(), Vec::new());
//! while !network.is_terminal(&state) {
//!     network.legal_moves(&state, 0, &mut moves);
//!     assert_eq!(network.show_move(&moves[0]), "go");
//!     state = network.next_state(&state, &moves[..1]);
//! }
//! assert_eq!(network.goal(&state, 0), 100);
//! ```
#![warn(missing_docs)]

pub mod bench;
pub mod check;
pub mod datalog;
pub mod diagnostics;
pub mod drawing;
pub mod engine;
pub mod evaluators;
pub mod files;
pub mod game;
pub mod games;
pub mod learn;
pub mod load;
pub mod network;
pub mod pipeline;
pub mod players;
pub mod print;
pub mod protocol;
pub mod referee;
pub mod server;
pub mod syntax;
pub mod tournament;
pub mod web;
