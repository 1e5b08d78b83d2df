//! # ggp: a General Game Playing engine
//!
//! Games are written as logic programs, in classic KIF GDL (`.kif`) or Stanford's Epilog infix form
//! (`.gdl`), or hand-written in Rust. All of them implement one [`game::Game`] trait, and one set of
//! [`players`] plays them all.
//!
//! The stages, each with one entry point:
//! syntax ([`syntax`]) → checked program → plan → grounded network → game.
//!
//! ```ignore
//! use ggp::game::{perft, Game};
//! use ggp::games::tictactoe::TicTacToe;
//!
//! let game = TicTacToe::new(3, 3).unwrap();
//! assert_eq!(perft(&game, &game.initial_state(), 2), 72);
//! ```
#![warn(missing_docs)]

pub mod bench;
pub mod check;
pub mod diagnostics;
pub mod engine;
pub mod game;
pub mod games;
pub mod network;
pub mod players;
pub mod print;
pub mod syntax;
