//! Nim (seed 1): players alternately take 1, 2 or 3 pieces from one pile.
//!
//! By default whoever takes the last piece wins; in the misère convention (the lecture's rule) whoever
//! takes the last piece loses.

use crate::evaluators::{Estimate, Evaluator, Outcome};
use crate::game::{Dynamics, Game, GameError, GameInfo, Goal, RoleIndex};

/// A Nim state: the pile and the role to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NimState {
    /// Pieces left.
    pub pile: u32,
    /// Role to move (0 = maxie, 1 = minnie).
    pub to_move: u8,
}

/// A Nim move: take this many pieces; 0 is the waiting role's no-op.
pub type NimMove = u8;

/// The game of Nim.
#[derive(Clone, Debug)]
pub struct Nim {
    info: GameInfo,
    pile: u32,
    misere: bool,
}

impl Nim {
    /// Nim starting from `pile` pieces; `misere` makes taking the last piece a loss.
    pub fn new(pile: u32, misere: bool) -> Self {
        Nim {
            info: GameInfo {
                name: if misere { "nim-misere" } else { "nim" }.to_string(),
                roles: vec!["maxie".to_string(), "minnie".to_string()],
                dynamics: Dynamics::TurnTaking,
                zero_sum: true,
            },
            pile,
            misere,
        }
    }

    /// The winner of a finished game. The role to move at an empty pile did not take the last piece.
    fn winner(&self, state: &NimState) -> RoleIndex {
        let took_last = 1 - usize::from(state.to_move);
        if self.misere {
            1 - took_last
        } else {
            took_last
        }
    }

    /// Nim has a perfect estimator (seed 1): the player to move loses exactly when the pile is a losing
    /// position, `pile % 4 == 0` normally and `pile % 4 == 1` in misère.
    pub fn perfect_estimate(&self, state: &NimState) -> Estimate {
        if self.is_terminal(state) {
            return Estimate::Definitely(Outcome::Winner(self.winner(state)));
        }
        let mover_loses = if self.misere {
            state.pile % 4 == 1
        } else {
            state.pile.is_multiple_of(4)
        };
        let mover = usize::from(state.to_move);
        let winner = if mover_loses { 1 - mover } else { mover };
        Estimate::Guess(if winner == 0 { 1 } else { -1 })
    }
}

impl Game for Nim {
    type State = NimState;
    type Move = NimMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> NimState {
        NimState {
            pile: self.pile,
            to_move: 0,
        }
    }

    fn is_terminal(&self, state: &NimState) -> bool {
        state.pile == 0
    }

    fn legal_moves(&self, state: &NimState, role: RoleIndex, out: &mut Vec<NimMove>) {
        out.clear();
        if role != usize::from(state.to_move) {
            out.push(0);
            return;
        }
        out.extend((1..=3u8).filter(|&n| u32::from(n) <= state.pile));
    }

    fn next_state(&self, state: &NimState, joint: &[NimMove]) -> NimState {
        let mover = usize::from(state.to_move);
        let take = joint.get(mover).copied().unwrap_or(0);
        self.play(state, mover, &take)
    }

    fn play(&self, state: &NimState, _role: RoleIndex, mv: &NimMove) -> NimState {
        NimState {
            pile: state.pile.saturating_sub(u32::from(*mv)),
            to_move: 1 - state.to_move,
        }
    }

    fn goal(&self, state: &NimState, role: RoleIndex) -> Goal {
        if !self.is_terminal(state) {
            return 0;
        }
        if self.winner(state) == role {
            100
        } else {
            0
        }
    }

    fn mover(&self, state: &NimState) -> Option<RoleIndex> {
        (!self.is_terminal(state)).then_some(usize::from(state.to_move))
    }

    fn show_move(&self, mv: &NimMove) -> String {
        if *mv == 0 {
            "noop".to_string()
        } else {
            mv.to_string()
        }
    }

    fn show_state(&self, state: &NimState) -> String {
        format!(
            "{} left, {} to move",
            crate::diagnostics::count(state.pile as usize, "piece"),
            self.info.roles[usize::from(state.to_move)]
        )
    }

    fn state_name(&self, state: &NimState) -> Option<String> {
        Some(state.pile.to_string())
    }
}

/// Nim's perfect judgement ([`Nim::perfect_estimate`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

impl Evaluator<Nim> for Heuristic {
    fn name(&self) -> String {
        "nim's losing piles".to_string()
    }

    fn estimate(&self, game: &Nim, state: &NimState) -> Result<Estimate, GameError> {
        Ok(game.perfect_estimate(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_are_bounded_by_the_pile() {
        let g = Nim::new(2, false);
        let mut out = Vec::new();
        g.legal_moves(&g.initial_state(), 0, &mut out);
        assert_eq!(out, vec![1, 2]);
        g.legal_moves(&g.initial_state(), 1, &mut out);
        assert_eq!(out, vec![0]);
    }

    #[test]
    fn taking_the_last_piece_wins_or_loses() {
        for (misere, goal0) in [(false, 100), (true, 0)] {
            let g = Nim::new(1, misere);
            let end = g.play(&g.initial_state(), 0, &1);
            assert!(g.is_terminal(&end));
            assert_eq!(g.goal(&end, 0), goal0);
            assert_eq!(g.goal(&end, 1), 100 - goal0);
        }
    }
}
