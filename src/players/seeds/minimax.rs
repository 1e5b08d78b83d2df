//! Depth-limited minimax (seed 1): every node to the given depth, leaves estimated.

use super::search::{buffers, Ctx};
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
    fn mm_search(
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

/// Seed 1's minimax from the root `state`, `role` to move: the best move's index and the value.
pub(super) fn root<G: Game>(
    ctx: &mut Ctx<'_, G>,
    state: &G::State,
    role: RoleIndex,
    depth: u32,
) -> Result<(usize, Estimate), GameError> {
    ctx.nodes += 1;
    if let Some(node) = ctx.node(role, state) {
        ctx.record(TraceEvent::Searching { node, bounds: None });
    }
    ctx.mm_search(depth, state, role, &mut buffers(depth))
}
