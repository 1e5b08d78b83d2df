//! Jamboree (seed 3): at each node the first `floor(fraction · n)` children are searched one after the
//! other as in alpha-beta, updating α/β; the rest are searched in parallel (rayon) with the updated
//! bounds, and their values are combined with the bound. Fraction 1.0 is alpha-beta, 0.0 is minimax.
//!
//! When one parallel child says `ParentPrune`, the node is cut whatever its siblings say, so the siblings
//! still running are told to stop (a shared flag, checked at every node below them): the result is the
//! same, only the effort differs and depends on scheduling. With a trace requested nothing is cancelled,
//! so the trace lists exactly the leaves of the specification. Near the leaves (where a task would cost
//! more than it saves) the same children are searched one by one with the same fixed bounds, which gives
//! identical results. Each parallel child collects its own trace, and the traces are joined in child
//! order.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::alphabeta::{best_of, Node, Scan};
use super::bounds::{AlphaBeta, SearchResult};
use super::search::{buffers, Ctx};
use crate::evaluators::Estimate;
use crate::game::{Game, GameError, RoleIndex};
use crate::players::Deadline;

/// The default share of children searched sequentially.
pub const DEFAULT_FRACTION: f64 = 0.5;

/// Children with less remaining depth than this are searched on the current thread.
const PARALLEL_MIN_DEPTH: u32 = 3;

struct Jamboree {
    fraction: f64,
    deadline: Option<Deadline>,
}

/// Whether the subtree being searched is no longer needed: set on a group of parallel siblings when one of
/// them cuts their parent, and inherited by everything below them.
struct Cancel<'a> {
    flag: AtomicBool,
    parent: Option<&'a Cancel<'a>>,
}

impl Cancel<'_> {
    /// The root's: never set.
    fn none() -> Cancel<'static> {
        Cancel {
            flag: AtomicBool::new(false),
            parent: None,
        }
    }

    fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed) || self.parent.is_some_and(Cancel::is_set)
    }
}

impl Jamboree {
    /// Seed 3's `evaluate` (alpha-beta's, [`Ctx::ab_node`]) with Jamboree's scan of the children.
    fn evaluate<G: Game>(
        &self,
        ctx: &mut Ctx<'_, G>,
        node: Node,
        state: &G::State,
        bufs: &mut [Vec<G::Move>],
        cancel: &Cancel<'_>,
    ) -> Result<SearchResult, GameError> {
        if cancel.is_set() {
            // An ancestor's parallel sibling already cut it: nothing computed here would be used.
            return Ok(SearchResult::ParentPrune);
        }
        ctx.ab_node(node, state, |ctx, role| {
            self.search(ctx, node.depth, node.ab, state, role, bufs, cancel)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn search<G: Game>(
        &self,
        ctx: &mut Ctx<'_, G>,
        depth: u32,
        ab: AlphaBeta,
        state: &G::State,
        role: RoleIndex,
        bufs: &mut [Vec<G::Move>],
        cancel: &Cancel<'_>,
    ) -> Result<Scan, GameError> {
        let maxie = role == 0;
        let Some((moves, below)) = bufs.split_last_mut() else {
            return Err(GameError::Rules("search buffers exhausted".to_string()));
        };
        let game = ctx.game;
        game.legal_moves(state, role, moves);
        let n = moves.len();
        if n == 0 {
            return Err(ctx.no_moves(state, role));
        }
        // floor(fraction · n), computed so that 1.0 gives exactly n.
        let k = ((self.fraction * n as f64).floor() as usize).min(n);
        let mut cur = ab;
        for (i, mv) in moves[..k].iter().enumerate() {
            let child = game.play(state, role, mv);
            match self.evaluate(ctx, Node::child(depth, cur, i, role), &child, below, cancel)? {
                SearchResult::ParentPrune => return Ok(Scan::ParentPruned),
                SearchResult::Value(v) => cur = cur.update(maxie, v),
            }
        }
        let fixed = cur;
        let mut parent_pruned = false;
        if depth > PARALLEL_MIN_DEPTH && n - k > 1 {
            let (tracing, evaluator) = (ctx.tracing(), ctx.evaluator);
            let siblings = Cancel {
                flag: AtomicBool::new(false),
                parent: Some(cancel),
            };
            let results: Vec<Result<(SearchResult, Ctx<'_, G>), GameError>> = moves[k..]
                .par_iter()
                .enumerate()
                .map(|(j, mv)| {
                    let mut sub = Ctx::new(game, evaluator, tracing, self.deadline);
                    let mut sub_bufs = buffers(depth - 1);
                    let child = game.play(state, role, mv);
                    let node = Node::child(depth, fixed, k + j, role);
                    let r = self.evaluate(&mut sub, node, &child, &mut sub_bufs, &siblings)?;
                    if r == SearchResult::ParentPrune && !tracing {
                        siblings.flag.store(true, Ordering::Relaxed);
                    }
                    Ok((r, sub))
                })
                .collect();
            for r in results {
                let (result, sub) = r?;
                ctx.absorb(sub);
                match result {
                    SearchResult::ParentPrune => parent_pruned = true,
                    SearchResult::Value(v) => cur = cur.update(maxie, v),
                }
            }
        } else {
            for (j, mv) in moves[k..].iter().enumerate() {
                let child = game.play(state, role, mv);
                let node = Node::child(depth, fixed, k + j, role);
                match self.evaluate(ctx, node, &child, below, cancel)? {
                    SearchResult::ParentPrune => parent_pruned = true,
                    SearchResult::Value(v) => cur = cur.update(maxie, v),
                }
            }
        }
        if parent_pruned {
            Ok(Scan::ParentPruned)
        } else {
            Ok(Scan::Candidate(cur.value_for(maxie)))
        }
    }
}

/// Seed 3's Jamboree from the root `state`, `role` to move, with the sequential `fraction` (0..=1):
/// the best move's index and the value. Parallel children stop at `deadline` too.
pub(super) fn root<G: Game>(
    ctx: &mut Ctx<'_, G>,
    state: &G::State,
    role: RoleIndex,
    depth: u32,
    fraction: f64,
    deadline: Option<Deadline>,
) -> Result<(usize, Estimate), GameError> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(GameError::Unsupported(format!(
            "jamboree's fraction must be between 0 and 1, not {fraction}"
        )));
    }
    let jb = Jamboree { fraction, deadline };
    ctx.searching(role, state);
    let mut bufs = buffers(depth);
    let none = Cancel::none();
    let scan = jb.search(ctx, depth, AlphaBeta::NONE, state, role, &mut bufs, &none)?;
    best_of(scan, "jamboree")
}
