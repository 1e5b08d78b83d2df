//! Depth-limited minimax (seed 1): every node to the given depth, leaves estimated.

use super::search::Ctx;
use super::trace::{NodeResult, TraceEvent};
use crate::evaluators::Estimate;
use crate::game::{Game, GameError, RoleIndex};

impl<G: Game> Ctx<'_, G> {
    fn mm_evaluate(
        &mut self,
        depth: u32,
        state: &G::State,
        parent_role: RoleIndex,
        bufs: &mut [Vec<G::Move>],
    ) -> Result<Estimate, GameError> {
        self.tick()?;
        let role = self.game.mover(state).unwrap_or(1 - parent_role);
        let node = self.node(role, state);
        if let Some(node) = &node {
            self.record(TraceEvent::Evaluating {
                node: node.clone(),
                bounds: None,
            });
        }
        let value = if depth == 0 || self.game.is_terminal(state) {
            self.estimate(state)?
        } else {
            self.mm_search(depth, state, role, bufs)?.1
        };
        self.result(node, NodeResult::Estimate(value));
        Ok(value)
    }

    /// The best child (first on ties) and its value.
    pub(super) fn mm_search(
        &mut self,
        depth: u32,
        state: &G::State,
        role: RoleIndex,
        bufs: &mut [Vec<G::Move>],
    ) -> Result<(usize, Estimate), GameError> {
        let Some((moves, below)) = bufs.split_last_mut() else {
            return Err(GameError::Rules("search buffers exhausted".to_string()));
        };
        self.game.legal_moves(state, role, moves);
        if moves.is_empty() {
            return Err(self.no_moves(state, role));
        }
        let mut best: Option<(usize, Estimate)> = None;
        for (i, mv) in moves.iter().enumerate() {
            let child = self.game.play(state, role, mv);
            let v = self.mm_evaluate(depth - 1, &child, role, below)?;
            let better = match best {
                None => true,
                Some((_, b)) if role == 0 => v.score() > b.score(),
                Some((_, b)) => v.score() < b.score(),
            };
            if better {
                best = Some((i, v));
            }
        }
        best.ok_or_else(|| self.no_moves(state, role))
    }
}
