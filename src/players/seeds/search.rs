//! What the seeds' searches share: the search context (the game and its evaluator, counters, the
//! optional trace, move buffers) and the report a search returns.

use std::time::Instant;

use super::trace::{NodeResult, TraceEvent, TraceNode};
use crate::evaluators::{Estimate, Evaluator};
use crate::game::{Game, GameError, RoleIndex};
use crate::players::clock::{Deadline, Ticker};
use crate::players::SearchStats;

/// The deepest search the players accept; deeper searches would only allocate move buffers.
pub const MAX_DEPTH: u32 = 1000;

/// The result of choosing a move by search from one state.
#[derive(Clone, Debug)]
pub struct SearchReport {
    /// Index of the chosen move in the mover's legal move list.
    pub best: usize,
    /// The value of the state as the search sees it (role 0's point of view).
    pub value: Estimate,
    /// Nodes, leaves and time.
    pub stats: SearchStats,
    /// The seeds' trace, when asked for (empty otherwise); [`super::trace`] prints it.
    pub trace: Vec<TraceEvent>,
}

/// Counters and trace of one (sequential part of a) search.
pub(crate) struct Ctx<'g, G: Game> {
    pub game: &'g G,
    pub evaluator: &'g dyn Evaluator<G>,
    pub trace: Option<Vec<TraceEvent>>,
    pub nodes: u64,
    pub leaves: u64,
    /// Stops the search at its deadline, if it has one.
    pub ticker: Option<Ticker>,
    /// That deadline, for the estimates that read the clock themselves.
    deadline: Option<std::time::Instant>,
}

impl<'g, G: Game> Ctx<'g, G> {
    pub fn new(
        game: &'g G,
        evaluator: &'g dyn Evaluator<G>,
        trace: bool,
        deadline: Option<Deadline>,
    ) -> Self {
        Ctx {
            game,
            evaluator,
            trace: trace.then(Vec::new),
            nodes: 0,
            leaves: 0,
            ticker: deadline.map(Ticker::new),
            deadline: deadline.map(Deadline::instant),
        }
    }

    /// Counts a node; [`GameError::OutOfTime`] once the deadline is near.
    #[inline]
    pub fn tick(&mut self) -> Result<(), GameError> {
        self.nodes += 1;
        match self.ticker.as_mut().map(Ticker::tick) {
            Some(true) => Err(GameError::OutOfTime),
            _ => Ok(()),
        }
    }

    /// The trace's name of `state` with `role` to move, only made when tracing.
    pub fn node(&self, role: RoleIndex, state: &G::State) -> Option<TraceNode> {
        self.tracing()
            .then(|| TraceNode::of(self.game, role, state))
    }

    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    pub fn record(&mut self, event: TraceEvent) {
        if let Some(t) = self.trace.as_mut() {
            t.push(event);
        }
    }

    /// Records a node's result, when tracing.
    pub fn result(&mut self, node: Option<TraceNode>, result: NodeResult) {
        if let Some(node) = node {
            self.record(TraceEvent::Result { node, result });
        }
    }

    /// Adds a finished sub-search (a parallel child) to this one, its trace after ours.
    pub fn absorb(&mut self, other: Ctx<'g, G>) {
        self.nodes += other.nodes;
        self.leaves += other.leaves;
        if let (Some(mine), Some(theirs)) = (self.trace.as_mut(), other.trace) {
            mine.extend(theirs);
        }
    }

    /// A leaf: estimates it, counting it.
    pub fn estimate(&mut self, state: &G::State) -> Result<Estimate, GameError> {
        self.leaves += 1;
        match self.deadline {
            // A leaf's playouts on a long game take longer than a tick can foresee.
            Some(d) => {
                let judged = self.evaluator.estimate_until(self.game, state, d);
                if let (Err(GameError::OutOfTime), Some(t)) = (&judged, self.ticker.as_mut()) {
                    t.stop();
                }
                judged
            }
            None => self.evaluator.estimate(self.game, state),
        }
    }

    pub fn no_moves(&self, state: &G::State, role: RoleIndex) -> GameError {
        let state = TraceNode::of(self.game, role, state);
        GameError::Rules(format!(
            "{} has no legal move in state {} although the state is not terminal",
            self.game.info().roles.get(role).map_or("?", |r| r.as_str()),
            state.name.unwrap_or_else(|| format!("{:012x}", state.hash)),
        ))
    }

    /// Closes the trace as seed 3's Figure 4 does, and reports.
    pub fn report(
        mut self,
        root: Option<TraceNode>,
        best: usize,
        value: Estimate,
        started: Instant,
    ) -> SearchReport {
        if let Some(root) = root {
            let leaves = self.leaves;
            self.record(TraceEvent::Conclusion { root, value, best });
            self.record(TraceEvent::Terminals(leaves));
        }
        SearchReport {
            best,
            value,
            stats: SearchStats {
                nodes: self.nodes,
                leaves: self.leaves,
                elapsed: started.elapsed(),
                ..SearchStats::default()
            },
            trace: self.trace.unwrap_or_default(),
        }
    }
}

/// Checks the common preconditions of a search from `state` and returns the role to move.
pub(crate) fn prepare<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    searcher: &str,
) -> Result<RoleIndex, GameError> {
    game.info().require_two_player_zero_sum(searcher)?;
    if depth == 0 || depth > MAX_DEPTH {
        return Err(GameError::Unsupported(format!(
            "{searcher} needs a depth between 1 and {MAX_DEPTH}, not {depth}"
        )));
    }
    if game.is_terminal(state) {
        return Err(GameError::Unsupported(format!(
            "{searcher} cannot choose a move: the game is over"
        )));
    }
    game.mover(state).ok_or_else(|| {
        GameError::Unsupported(format!(
            "{searcher} needs a state where one role is to move"
        ))
    })
}

/// One empty move buffer per level of the search.
pub(crate) fn buffers<M>(depth: u32) -> Vec<Vec<M>> {
    (0..depth).map(|_| Vec::new()).collect()
}
