//! Alpha-beta pruning exactly as seed 3 specifies it: results `Value`/`Pruned`/`ParentPrune`, α and β
//! as values with `Pruned` meaning "no bound", horizontal propagation of the bounds across children,
//! and the incoming bound kept as a candidate for the node's value.

use std::time::Instant;

use super::bounds::{AlphaBeta, SearchResult, Value};
use super::search::{buffers, prepare, Ctx, SearchReport};
use super::trace::{NodeResult, TraceEvent, TraceNode};
use crate::evaluators::Evaluator;
use crate::game::{Game, GameError, RoleIndex};
use crate::players::Deadline;

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
    /// Seed 3's `evaluate`: the result of the node `state`, reached by move `incoming`.
    fn ab_evaluate(
        &mut self,
        depth: u32,
        ab: AlphaBeta,
        state: &G::State,
        incoming: usize,
        parent_role: RoleIndex,
        bufs: &mut [Vec<G::Move>],
    ) -> Result<SearchResult, GameError> {
        self.tick()?;
        let role = self.game.mover(state).unwrap_or(1 - parent_role);
        let maxie = role == 0;
        let node = self.entering(role, state, ab);
        let result = if depth == 0 || self.game.is_terminal(state) {
            let e = self.estimate(state)?;
            ab.check_bounds(maxie, incoming, e)
        } else {
            self.ab_search(depth, ab, state, role, bufs)?
                .label(ab, maxie, incoming)
        };
        self.result(node, NodeResult::Bounded(result));
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
            match self.ab_evaluate(depth - 1, cur, &child, i, role, below)? {
                SearchResult::ParentPrune => return Ok(Scan::ParentPruned),
                SearchResult::Value(v) => cur = cur.update(maxie, v),
            }
        }
        Ok(Scan::Candidate(cur.value_for(maxie)))
    }
}

/// Chooses a move in `state` by alpha-beta search to `depth`, judging leaves by `evaluator`; `trace`
/// records the seed's trace.
pub fn alphabeta<G: Game>(
    game: &G,
    evaluator: &dyn Evaluator<G>,
    state: &G::State,
    depth: u32,
    trace: bool,
) -> Result<SearchReport, GameError> {
    alphabeta_until(game, evaluator, state, depth, trace, None)
}

/// [`alphabeta`] that gives up with [`GameError::OutOfTime`] at `deadline`.
pub fn alphabeta_until<G: Game>(
    game: &G,
    evaluator: &dyn Evaluator<G>,
    state: &G::State,
    depth: u32,
    trace: bool,
    deadline: Option<Deadline>,
) -> Result<SearchReport, GameError> {
    let started = Instant::now();
    let role = prepare(game, state, depth, "alpha-beta")?;
    let mut ctx = Ctx::new(game, evaluator, trace, deadline);
    let root = ctx.searching(role, state);
    let mut bufs = buffers(depth);
    let scan = ctx.ab_search(depth, AlphaBeta::NONE, state, role, &mut bufs)?;
    finish(ctx, scan, root, started, "alpha-beta")
}

impl<G: Game> Ctx<'_, G> {
    /// Counts the root and records that the search starts there with no bounds, when tracing.
    pub(crate) fn searching(&mut self, role: RoleIndex, state: &G::State) -> Option<TraceNode> {
        self.nodes += 1;
        let root = self.node(role, state)?;
        self.record(TraceEvent::Searching {
            node: root.clone(),
            bounds: Some(AlphaBeta::NONE),
        });
        Some(root)
    }
}

/// Turns the root's scan into a report.
pub(crate) fn finish<G: Game>(
    ctx: Ctx<'_, G>,
    scan: Scan,
    root: Option<TraceNode>,
    started: Instant,
    searcher: &str,
) -> Result<SearchReport, GameError> {
    match scan {
        Scan::Candidate(Value::Best { mv, est }) => Ok(ctx.report(root, mv, est, started)),
        _ => Err(GameError::Rules(format!(
            "{searcher} found no move at the root (every child was pruned)"
        ))),
    }
}
