//! Alpha-beta pruning exactly as seed 3 specifies it: results `Value`/`Pruned`/`ParentPrune`, α and β
//! as values with `Pruned` meaning "no bound", horizontal propagation of the bounds across children,
//! and the incoming bound kept as a candidate for the node's value.

use super::bounds::{AlphaBeta, SearchResult, Value};
use super::search::Ctx;
use super::trace::{NodeResult, TraceEvent, TraceNode};
use crate::evaluators::Estimate;
use crate::game::{Game, GameError, RoleIndex};

/// A node of an alpha-beta search as its parent reaches it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// The plies left below it.
    pub(crate) depth: u32,
    /// The bounds it is searched with.
    pub(crate) ab: AlphaBeta,
    /// The index of the move that reached it.
    pub(crate) incoming: usize,
    /// The role that moved into it.
    pub(crate) parent_role: RoleIndex,
}

impl Node {
    /// The child reached from a node of `depth` by its move `incoming`, `role` having moved, searched
    /// with bounds `ab`.
    pub(crate) fn child(depth: u32, ab: AlphaBeta, incoming: usize, role: RoleIndex) -> Node {
        Node {
            depth: depth - 1,
            ab,
            incoming,
            parent_role: role,
        }
    }
}

/// How a node's scan over its children ended.
pub(crate) enum Scan {
    /// A child said `ParentPrune`: this node is `Pruned`.
    ParentPruned,
    /// The final α (maxie) or β (minnie), the candidate value of the node.
    Candidate(Value),
}

impl Scan {
    pub(crate) fn label(self, ab: AlphaBeta, maxie: bool, incoming: usize) -> SearchResult {
        match self {
            Scan::ParentPruned => SearchResult::Value(Value::Pruned),
            Scan::Candidate(v) => ab.check_candidate(maxie, incoming, v),
        }
    }
}

impl<G: Game> Ctx<'_, G> {
    /// Seed 3's `evaluate`: the result of the node `state`, reached as `node` says.
    fn ab_evaluate(
        &mut self,
        node: Node,
        state: &G::State,
        bufs: &mut [Vec<G::Move>],
    ) -> Result<SearchResult, GameError> {
        self.ab_node(node, state, |ctx, role| {
            ctx.ab_search(node.depth, node.ab, state, role, bufs)
        })
    }

    /// Seed 3's `evaluate` of the node `state` (alpha-beta's and Jamboree's alike): a leaf at the
    /// horizon or the end is estimated and labelled by the bounds, any other node labelled by the
    /// candidate value its children's scan (`search`) gives.
    pub(crate) fn ab_node(
        &mut self,
        node: Node,
        state: &G::State,
        search: impl FnOnce(&mut Self, RoleIndex) -> Result<Scan, GameError>,
    ) -> Result<SearchResult, GameError> {
        self.tick()?;
        let role = self.game.mover(state).unwrap_or(1 - node.parent_role);
        let maxie = role == 0;
        let traced = self.entering(role, state, node.ab);
        let result = if node.depth == 0 || self.game.is_terminal(state) {
            let e = self.estimate(state)?;
            node.ab.check_bounds(maxie, node.incoming, e)
        } else {
            search(self, role)?.label(node.ab, maxie, node.incoming)
        };
        self.result(traced, NodeResult::Bounded(result));
        Ok(result)
    }

    /// Records that the node of `state` is entered with bounds `ab`, when tracing; returns its name.
    pub(crate) fn entering(
        &mut self,
        role: RoleIndex,
        state: &G::State,
        ab: AlphaBeta,
    ) -> Option<TraceNode> {
        let node = self.node(role, state)?;
        self.record(TraceEvent::Evaluating {
            node: node.clone(),
            bounds: Some(ab),
        });
        Some(node)
    }

    /// Seed 3's `search`: scans the children left to right, updating α or β.
    pub(crate) fn ab_search(
        &mut self,
        depth: u32,
        ab: AlphaBeta,
        state: &G::State,
        role: RoleIndex,
        bufs: &mut [Vec<G::Move>],
    ) -> Result<Scan, GameError> {
        let maxie = role == 0;
        let Some((moves, below)) = bufs.split_last_mut() else {
            return Err(GameError::Rules("search buffers exhausted".to_string()));
        };
        self.game.legal_moves(state, role, moves);
        if moves.is_empty() {
            return Err(self.no_moves(state, role));
        }
        let mut cur = ab;
        for (i, mv) in moves.iter().enumerate() {
            let child = self.game.play(state, role, mv);
            match self.ab_evaluate(Node::child(depth, cur, i, role), &child, below)? {
                SearchResult::ParentPrune => return Ok(Scan::ParentPruned),
                SearchResult::Value(v) => cur = cur.update(maxie, v),
            }
        }
        Ok(Scan::Candidate(cur.value_for(maxie)))
    }
}

impl<G: Game> Ctx<'_, G> {
    /// Counts the root and records that the search starts there with no bounds, when tracing.
    pub(crate) fn searching(&mut self, role: RoleIndex, state: &G::State) {
        self.nodes += 1;
        if let Some(node) = self.node(role, state) {
            self.record(TraceEvent::Searching {
                node,
                bounds: Some(AlphaBeta::NONE),
            });
        }
    }
}

/// The root's best move and value from its scan.
pub(crate) fn best_of(scan: Scan, searcher: &str) -> Result<(usize, Estimate), GameError> {
    match scan {
        Scan::Candidate(Value::Best { mv, est }) => Ok((mv, est)),
        _ => Err(GameError::Rules(format!(
            "{searcher} found no move at the root (every child was pruned)"
        ))),
    }
}
