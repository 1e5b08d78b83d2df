//! Depth-limited minimax (seed 1): every node to the given depth, leaves estimated.

use std::time::Instant;

use crate::game::{Estimate, Game, GameError, RoleIndex};
use crate::players::search::{buffers, close_trace, prepare, Ctx, SearchReport};
use crate::players::{deepening_choice, Choice, Deadline, Player, PlayerError};

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
        let label = self.tracing().then(|| self.label(role, state));
        if let Some(l) = &label {
            self.line(format!("Evaluating state {l}"));
        }
        let value = if depth == 0 || self.game.is_terminal(state) {
            self.estimate(state)?
        } else {
            self.mm_search(depth, state, role, bufs)?.1
        };
        if let Some(l) = &label {
            self.line(format!("Result of {l} is {value}"));
        }
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

/// Chooses a move in `state` by minimax search to `depth`.
pub fn minimax<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    trace: bool,
) -> Result<SearchReport, GameError> {
    minimax_until(game, state, depth, trace, None)
}

/// [`minimax`] that gives up with [`GameError::OutOfTime`] at `deadline`.
pub fn minimax_until<G: Game>(
    game: &G,
    state: &G::State,
    depth: u32,
    trace: bool,
    deadline: Option<Deadline>,
) -> Result<SearchReport, GameError> {
    let started = Instant::now();
    let role = prepare(game, state, depth, "minimax")?;
    let mut ctx = Ctx::new(game, trace, deadline);
    ctx.nodes += 1;
    let root = if ctx.tracing() {
        ctx.label(role, state)
    } else {
        String::new()
    };
    ctx.line(format!("Searching state {root}"));
    ctx.line(String::new());
    let mut bufs = buffers(depth);
    let (best, value) = ctx.mm_search(depth, state, role, &mut bufs)?;
    close_trace(&mut ctx, &root, value, best);
    Ok(ctx.report(best, value, started))
}

/// A player that searches with [`minimax`].
#[derive(Clone, Debug)]
pub struct MinimaxPlayer {
    depth: u32,
}

impl MinimaxPlayer {
    /// A player searching `depth` plies.
    pub fn new(depth: u32) -> Self {
        MinimaxPlayer { depth }
    }
}

impl<G: Game> Player<G> for MinimaxPlayer {
    fn name(&self) -> String {
        format!("minimax(depth {})", self.depth)
    }

    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError> {
        deepening_choice(game, state, role, self.depth, deadline, |g, s, d, t| {
            minimax_until(g, s, d, false, Some(t))
        })
    }
}
