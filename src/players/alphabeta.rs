//! Alpha-beta pruning exactly as seed 3 specifies it: results `Value`/`Pruned`/`ParentPrune`, α and β
//! as values with `Pruned` meaning "no bound", horizontal propagation of the bounds across children,
//! and the incoming bound kept as a candidate for the node's value.

use std::time::Instant;

use crate::game::{Game, GameError, RoleIndex};
use crate::players::bounds::{AlphaBeta, SearchResult, Value};
use crate::players::search::{buffers, close_trace, prepare, Ctx, SearchReport};
use crate::players::{deepening_choice, Choice, Deadline, Player, PlayerError};

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
        let label = self.tracing().then(|| self.label(role, state));
        if let Some(l) = &label {
            self.line(format!("Evaluating state {l} with {ab}"));
        }
        let result = if depth == 0 || self.game.is_terminal(state) {
            let e = self.estimate(state)?;
            ab.check_bounds(maxie, incoming, e)
        } else {
            self.ab_search(depth, ab, state, role, bufs)?
                .label(ab, maxie, incoming)
        };
        if let Some(l) = &label {
            self.line(format!("Result of {l} is {result}"));
        }
        Ok(result)
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

/// Chooses a move in `state` by alpha-beta search to `depth`; `trace` collects the seed's trace lines.
pub fn alphabeta<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    trace: bool,
) -> Result<SearchReport, GameError> {
    alphabeta_until(game, state, depth, trace, None)
}

/// [`alphabeta`] that gives up with [`GameError::OutOfTime`] at `deadline`.
pub fn alphabeta_until<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    trace: bool,
    deadline: Option<Deadline>,
) -> Result<SearchReport, GameError> {
    let started = Instant::now();
    let role = prepare(game, state, depth, "alpha-beta")?;
    let mut ctx = Ctx::new(game, trace, deadline);
    ctx.nodes += 1;
    let root = if ctx.tracing() {
        ctx.label(role, state)
    } else {
        String::new()
    };
    ctx.line(format!("Searching state {root} with {}", AlphaBeta::NONE));
    ctx.line(String::new());
    let mut bufs = buffers(depth);
    let scan = ctx.ab_search(depth, AlphaBeta::NONE, state, role, &mut bufs)?;
    finish(ctx, scan, &root, started, "alpha-beta")
}

/// Turns the root's scan into a report.
pub(crate) fn finish<G: Game>(
    mut ctx: Ctx<'_, G>,
    scan: Scan,
    root: &str,
    started: Instant,
    searcher: &str,
) -> Result<SearchReport, GameError> {
    match scan {
        Scan::Candidate(Value::Best { mv, est }) => {
            close_trace(&mut ctx, root, est, mv);
            Ok(ctx.report(mv, est, started))
        }
        _ => Err(GameError::Rules(format!(
            "{searcher} found no move at the root (every child was pruned)"
        ))),
    }
}

/// A player that searches with [`alphabeta`].
#[derive(Clone, Debug)]
pub struct AlphaBetaPlayer {
    depth: u32,
}

impl AlphaBetaPlayer {
    /// A player searching `depth` plies.
    pub fn new(depth: u32) -> Self {
        AlphaBetaPlayer { depth }
    }
}

impl<G: Game> Player<G> for AlphaBetaPlayer {
    fn name(&self) -> String {
        format!("alphabeta(depth {})", self.depth)
    }

    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError> {
        deepening_choice(game, state, role, self.depth, deadline, |g, s, d, t| {
            alphabeta_until(g, s, d, false, Some(t))
        })
    }
}
