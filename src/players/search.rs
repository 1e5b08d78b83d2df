//! What the search players share: the search context (counters, optional trace, move buffers) and the
//! report a search returns.

use std::time::{Duration, Instant};

use crate::game::{Estimate, Game, GameError, RoleIndex};
use crate::players::bounds::role_label;
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
    /// The seeds' trace lines, when asked for (empty otherwise).
    pub trace: Vec<String>,
}

/// Counters and trace of one (sequential part of a) search.
pub(crate) struct Ctx<'g, G: Game> {
    pub game: &'g G,
    pub trace: Option<Vec<String>>,
    pub nodes: u64,
    pub leaves: u64,
    /// Stops the search at its deadline, if it has one.
    pub ticker: Option<Ticker>,
}

impl<'g, G: Game> Ctx<'g, G> {
    pub fn new(game: &'g G, trace: bool, deadline: Option<Deadline>) -> Self {
        Ctx {
            game,
            trace: trace.then(Vec::new),
            nodes: 0,
            leaves: 0,
            ticker: deadline.map(Ticker::new),
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

    /// `(Maxie,name)`, only built when tracing.
    pub fn label(&self, role: RoleIndex, state: &G::State) -> String {
        format!("({},{})", role_label(role), self.game.state_name(state))
    }

    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    pub fn line(&mut self, line: String) {
        if let Some(t) = self.trace.as_mut() {
            t.push(line);
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
        self.game.try_estimate(state)
    }

    pub fn no_moves(&self, state: &G::State, role: RoleIndex) -> GameError {
        GameError::Rules(format!(
            "{} has no legal move in state {} although the state is not terminal",
            self.game.info().roles.get(role).map_or("?", |r| r.as_str()),
            self.game.state_name(state),
        ))
    }

    pub fn report(self, best: usize, value: Estimate, started: Instant) -> SearchReport {
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

/// The closing lines of a trace, as in seed 3's Figure 4.
pub(crate) fn close_trace<G: Game>(
    ctx: &mut Ctx<'_, G>,
    root_label: &str,
    value: Estimate,
    best: usize,
) {
    if ctx.tracing() {
        let leaves = ctx.leaves;
        ctx.line(String::new());
        ctx.line(format!(
            "Therefore value of {root_label} is {value}, and best move is {best}."
        ));
        ctx.line(String::new());
        ctx.line(format!("Terminals visited: {leaves}"));
    }
}

/// Zero duration, for players that do not search.
pub(crate) fn no_effort(elapsed: Duration) -> SearchStats {
    SearchStats {
        elapsed,
        ..SearchStats::default()
    }
}
