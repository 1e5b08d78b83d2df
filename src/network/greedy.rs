//! Greedy playouts on the network: decisive and anti-decisive moves, tried in the lanes of a word.
//!
//! Where one role has a choice of at most 64 moves, one pass plays each of them in a lane of its own
//! ([`NetGame::try_moves`]): a move that ends the game with goal 100 for it is played, and otherwise
//! moves are drawn at random until one leaves the next role to move without such a win. Trying a
//! move is a second call of the same kind on the state after it, whose lanes are then the next
//! step's: a move that passes costs nothing more, and only a move taken back costs a pass.

use rand::rngs::SmallRng;

use super::playout::{broadcast, Lanes};
use super::*;
use crate::game::{nth_set_bit, random_index};

impl NetGame {
    /// A greedy playout from `state` (see the module documentation); elsewhere (several roles with a
    /// choice, or more than 64 moves) a uniformly random joint move. Returns the last state and the
    /// number of joint moves played.
    pub(super) fn playout_greedy(
        &self,
        state: &BitState,
        rng: &mut SmallRng,
        max_steps: u32,
    ) -> (BitState, u32) {
        let n = &self.net;
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            self.start_pass(&mut s, state);
            let Scratch {
                vals, moves, saved, ..
            } = &mut *s;
            saved.resize(n.num_nodes, 0);
            let mut steps = 0;
            // The lanes of the role to move, when the last step already tried them, and the lane of
            // `saved` that step played (its state, as `vals` has moved on to the trial).
            let mut tried: Option<(Option<usize>, usize, u64)> = None;
            let mut played = 0;
            while steps < max_steps {
                let (mover, count, wins) = match tried.take() {
                    Some(t) => t,
                    None => {
                        if lit_val(vals, n.terminal) & 1 != 0 {
                            break;
                        }
                        match self.try_moves(vals) {
                            Ok(t) => t,
                            Err(Lanes::NoChoice) => {
                                if !self.random_step(vals, moves, rng) {
                                    break;
                                }
                                self.run_pass(Part::State, vals);
                                steps += 1;
                                continue;
                            }
                            Err(_) => break,
                        }
                    }
                };
                steps += 1;
                if wins != 0 || count == 1 {
                    // A win, or the one joint move when nobody has a choice (lane 0).
                    let lane = if wins != 0 { wins.trailing_zeros() } else { 0 };
                    broadcast(&mut vals[..n.num_nodes], lane);
                    continue;
                }
                // No win: draw moves until one leaves the next mover no win at once (the last one
                // left is played whatever it leaves).
                saved.copy_from_slice(&vals[..n.num_nodes]);
                let mut left = if count == 64 { !0 } else { (1u64 << count) - 1 };
                loop {
                    let lane = nth_set_bit(left, random_index(rng, left.count_ones() as usize));
                    left &= !(1 << lane);
                    broadcast(&mut vals[..n.num_nodes], lane);
                    if lit_val(vals, n.terminal) & 1 != 0 {
                        break;
                    }
                    match self.try_moves(vals) {
                        Ok((next, _, won)) if won != 0 && next != mover && left != 0 => {
                            vals[..n.num_nodes].copy_from_slice(saved);
                        }
                        Ok(t) => {
                            tried = Some(t);
                            played = lane;
                            break;
                        }
                        Err(_) => break,
                    }
                }
            }
            // Stopped by `max_steps` after a trial: the state is the one played, not a lane tried.
            let end = match tried {
                Some(_) => self.lane_state(saved, played),
                None => self.lane_state(vals, 0),
            };
            (end, steps)
        })
    }
}
