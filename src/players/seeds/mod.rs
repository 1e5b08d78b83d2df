//! The seeds' two-player searches, exactly as specified: depth-limited minimax (seed 1), alpha-beta
//! and Jamboree (seed 3), with their traces; and [`SeedPlayer`], the one clocked player over all three.
//!
//! Each search judges its leaves by an [`Evaluator`] and, asked for one, records the seed's trace as
//! data ([`trace`]), which prints in the seeds' notation or readably.

pub mod alphabeta;
pub mod bounds;
pub mod jamboree;
pub mod minimax;
mod search;
pub mod trace;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::evaluators::Evaluator;
use crate::game::{Game, GameError, RoleIndex};
use crate::players::{no_effort, Ask, Choice, Deadline, Player, PlayerError, SearchStats};
use bounds::AlphaBeta;
use search::Ctx;
use trace::TraceEvent;

pub use jamboree::DEFAULT_FRACTION;
pub use search::{SearchReport, MAX_DEPTH};

/// Which of the seeds' searches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SeedSearch {
    /// Seed 1's minimax: every node to the depth.
    Minimax,
    /// Seed 3's alpha-beta.
    AlphaBeta,
    /// Seed 3's Jamboree: the first `fraction` of each node's children in sequence, the rest in
    /// parallel.
    Jamboree {
        /// The share searched in sequence, 0..=1.
        fraction: f64,
    },
}

impl SeedSearch {
    /// Searches `state` to exactly `depth`, judging leaves by `evaluator`, stopping with
    /// [`GameError::OutOfTime`] at `deadline`; `trace` records the seed's trace.
    pub fn run<G: Game>(
        self,
        game: &G,
        evaluator: &dyn Evaluator<G>,
        state: &G::State,
        depth: u32,
        trace: bool,
        deadline: Option<Deadline>,
    ) -> Result<SearchReport, GameError> {
        let started = Instant::now();
        let role = search::prepare(game, state, depth, self.searcher())?;
        let mut ctx = Ctx::new(game, evaluator, trace, deadline);
        let (best, value) = match self {
            SeedSearch::Minimax => {
                ctx.nodes += 1;
                if let Some(node) = ctx.node(role, state) {
                    ctx.record(TraceEvent::Searching { node, bounds: None });
                }
                ctx.mm_search(depth, state, role, &mut search::buffers(depth))?
            }
            SeedSearch::AlphaBeta => {
                ctx.searching(role, state);
                let none = AlphaBeta::NONE;
                let scan = ctx.ab_search(depth, none, state, role, &mut search::buffers(depth))?;
                alphabeta::best_of(scan, "alpha-beta")?
            }
            SeedSearch::Jamboree { fraction } => {
                jamboree::root(&mut ctx, state, role, depth, fraction, deadline)?
            }
        };
        let root = ctx.node(role, state);
        Ok(ctx.report(root, best, value, started))
    }

    /// The search's name in its refusals (`alpha-beta needs a two-player ... game`).
    fn searcher(self) -> &'static str {
        match self {
            SeedSearch::Minimax => "minimax",
            SeedSearch::AlphaBeta => "alpha-beta",
            SeedSearch::Jamboree { .. } => "jamboree",
        }
    }
}

impl fmt::Display for SeedSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeedSearch::Minimax => f.write_str("minimax"),
            SeedSearch::AlphaBeta => f.write_str("alphabeta"),
            SeedSearch::Jamboree { .. } => f.write_str("jamboree"),
        }
    }
}

/// One of the seeds' searches as a clocked player: it searches depth 1, 2, ... up to its depth and
/// plays the best move of the deepest search that finished before the deadline. A role that is not in
/// control plays its only legal move (the no-op) without searching.
pub struct SeedPlayer<G: Game> {
    search: SeedSearch,
    depth: u32,
    evaluator: Arc<dyn Evaluator<G>>,
    /// Jamboree's own threads. On rayon's shared pool a thread waiting for this search's
    /// subtrees could take another match's (or a grounding's) work and finish it first, at that
    /// work's deadline, not this one's.
    pool: Option<rayon::ThreadPool>,
}

impl<G: Game> SeedPlayer<G> {
    /// A player searching with `search` to at most `depth` plies, judging leaves by `evaluator`.
    pub fn new(search: SeedSearch, depth: u32, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        SeedPlayer {
            search,
            depth: depth.clamp(1, MAX_DEPTH),
            evaluator,
            pool: None,
        }
    }
}

impl<G: Game> Player<G> for SeedPlayer<G> {
    fn name(&self) -> String {
        match self.search {
            SeedSearch::Jamboree { fraction } => {
                format!("jamboree(depth {}, fraction {fraction})", self.depth)
            }
            other => format!("{other}(depth {})", self.depth),
        }
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role, deadline) = (ask.game, ask.state, ask.role, ask.deadline);
        let started = Instant::now();
        let mut moves = Vec::new();
        game.legal_moves(state, role, &mut moves);
        if game.mover(state) != Some(role) {
            return match moves.into_iter().next() {
                Some(mv) => Ok(Choice {
                    explanation: None,
                    mv,
                    stats: no_effort(started.elapsed()),
                }),
                None => Err(GameError::Rules("a waiting role has no no-op".to_string()).into()),
            };
        }
        if matches!(self.search, SeedSearch::Jamboree { .. }) && self.pool.is_none() {
            // Without a pool of its own (threads refused), it shares rayon's.
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(|i| format!("jamboree-{i}"))
                .build()
                .ok();
        }
        let mut best: Option<(u32, SearchReport)> = None;
        let (mut nodes, mut leaves) = (0, 0);
        for depth in 1..=self.depth {
            let (search, evaluator) = (self.search, self.evaluator.as_ref());
            let run = || search.run(game, evaluator, state, depth, false, Some(deadline));
            let searched = match &self.pool {
                Some(pool) => pool.install(run),
                None => run(),
            };
            match searched {
                Ok(report) => {
                    nodes += report.stats.nodes;
                    leaves += report.stats.leaves;
                    best = Some((depth, report));
                }
                Err(GameError::OutOfTime) => break,
                Err(e) => return Err(e.into()),
            }
        }
        let (depth, best, value) = match best {
            Some((depth, report)) => (depth, report.best, Some(report.value)),
            // Not even depth 1 finished: any legal move beats a late one.
            None => (0, 0, None),
        };
        let mv = moves.get(best).cloned().ok_or_else(|| {
            GameError::Rules(format!("the search chose move {best} of {}", moves.len()))
        })?;
        let expected = value.and_then(|v| expected_goal(self.evaluator.as_ref(), v, role));
        Ok(Choice {
            explanation: None,
            mv,
            stats: SearchStats {
                nodes,
                leaves,
                elapsed: started.elapsed(),
                depth,
                expected,
                ..SearchStats::default()
            },
        })
    }
}

/// The goal `role` expects from a search's value, when the evaluator's scale says one.
fn expected_goal<G: Game>(
    evaluator: &dyn Evaluator<G>,
    value: crate::evaluators::Estimate,
    role: RoleIndex,
) -> Option<f64> {
    use crate::evaluators::{Estimate, Outcome};
    let first = match value {
        Estimate::Definitely(Outcome::Winner(0)) => 100.0,
        Estimate::Definitely(Outcome::Winner(_)) => 0.0,
        Estimate::Definitely(Outcome::Draw) => 50.0,
        Estimate::Guess(n) => evaluator.expected_goal(n)?,
    };
    Some(if role == 0 { first } else { 100.0 - first })
}
