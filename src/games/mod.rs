//! Hand-written native games: the seeds' Nim, N×N tic-tac-toe and Connect Four, and explicit game trees
//! read from `.tree` files for testing searchers.

#[cfg(test)]
pub(crate) mod batching;
pub mod connect4;
pub mod nim;
pub mod tictactoe;
pub mod tree;
