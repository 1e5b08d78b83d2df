//! `mcts` on one-player games: the puzzle search beside the trees, and the plan it settles on (see
//! [`PuzzleSolver`] and the parent module's documentation).

use std::time::{Duration, Instant};

use super::tree::{Tree, NONE};
use crate::game::{Game, Goal};
use crate::players::puzzle::{Line, PuzzleSolver, PuzzleStatus};
use crate::players::{Candidate, Certainty, Choice, Explanation, SearchStats};

/// What moving the puzzle search's root down costs a state it has found, roughly: it renumbers
/// every one.
const ADVANCE_NANOS_PER_STATE: u64 = 40;

/// Searches of fewer states than this are freed where they are dropped.
const KEEP_TO_DROP: usize = 50_000;

/// A rough bound on how long [`PuzzleSolver::advance`] takes on a search of `states` states.
fn advance_time(states: usize) -> Duration {
    Duration::from_nanos(states as u64 * ADVANCE_NANOS_PER_STATE)
}

/// A line of a one-player game found by [`PuzzleSolver`]: each move with the state it is played in.
pub(super) struct Plan<G: Game> {
    pub(super) goal: Goal,
    pub(super) line: Line<G>,
    /// Whether no line from its first state does better (a full score, or every state searched), so
    /// that it is played without searching again.
    pub(super) settled: bool,
}

impl<G: Game> Plan<G> {
    /// The plan's move in `state`.
    pub(super) fn move_in(&self, state: &G::State) -> Option<&G::Move> {
        self.line.iter().find(|(s, _)| s == state).map(|(_, m)| m)
    }
}

/// What `mcts` keeps of a one-player game between moves: the puzzle search and the plan it settled on.
pub(super) struct PuzzlePlay<G: Game> {
    pub(super) solver: Option<PuzzleSolver<G>>,
    /// The search's states expanded before the move being chosen, so a move reports its own.
    pub(super) expanded_before: u64,
    pub(super) plan: Option<Plan<G>>,
}

impl<G: Game> Default for PuzzlePlay<G> {
    fn default() -> Self {
        PuzzlePlay {
            solver: None,
            expanded_before: 0,
            plan: None,
        }
    }
}

impl<G: Game> PuzzlePlay<G> {
    /// Notes where the search stands as a move begins (see [`PuzzlePlay::plan_choice`]).
    pub(super) fn begin_move(&mut self) {
        self.expanded_before = self.solver.as_ref().map_or(0, |s| s.expanded());
    }

    /// The move in `state` of a settled puzzle plan (see [`Plan::settled`]), with the plan's goal.
    pub(super) fn settled_move(&self, state: &G::State) -> Option<(G::Move, Goal)> {
        let plan = self.plan.as_ref().filter(|p| p.settled)?;
        plan.move_in(state).map(|m| (m.clone(), plan.goal))
    }

    /// The goal of the plan through `state`, if there is one.
    fn plan_goal(&self, state: &G::State) -> Option<Goal> {
        let plan = self.plan.as_ref()?;
        plan.move_in(state).map(|_| plan.goal)
    }

    /// Roots the puzzle search at `state`, unless it is rooted there already or at the state before
    /// (it goes on from where it stopped) and moving its root down fits in `afford`. Returns a big
    /// search it replaces, for the caller to drop when no clock runs (freeing millions of states
    /// slows every thread down).
    #[must_use = "a big old search is the caller's to drop when no clock runs"]
    pub(super) fn solver_at(
        &mut self,
        game: &G,
        state: &G::State,
        afford: Duration,
    ) -> Option<PuzzleSolver<G>> {
        if let Some(solver) = self.solver.as_mut() {
            // One move on: the search goes on below the move played instead of starting again,
            // which a search needing more than one play clock (an 8-puzzle at 1 s) would never end.
            if solver.root() == state
                || (advance_time(solver.states()) <= afford && solver.advance(game, state))
            {
                return None;
            }
        }
        self.expanded_before = 0;
        self.solver
            .replace(PuzzleSolver::new(game, state.clone()))
            .filter(|old| old.states() >= KEEP_TO_DROP)
    }

    /// After a slice of the puzzle search: a finished search's best line becomes the plan (when it
    /// does at least as well as the plan through `state`); the move of a settled plan in `state`.
    pub(super) fn settle(&mut self, game: &G, state: &G::State) -> Option<(G::Move, Goal)> {
        let solver = self.solver.as_ref()?;
        let status = solver.status();
        if status != PuzzleStatus::Searching && solver.root() == state {
            if let Some((goal, line)) = solver.best_line(game) {
                let kept = self.plan_goal(state);
                if kept.is_none_or(|g| goal >= g) {
                    self.plan = Some(Plan {
                        goal,
                        line,
                        settled: status.settles(),
                    });
                }
            }
        }
        self.settled_move(state)
    }

    /// In a one-player game, the move of the best line found by a puzzle search that did not settle
    /// (a capped search, or one still going), with its goal, when it beats `tree_goal`, the best the
    /// trees have reached; it becomes the plan, followed while nothing better is found.
    pub(super) fn unsettled_plan_move(
        &mut self,
        game: &G,
        state: &G::State,
        tree_goal: f64,
    ) -> Option<(G::Move, Goal)> {
        let from_solver = self
            .solver
            .as_ref()
            .filter(|s| s.root() == state)
            .and_then(|s| s.best_line(game))
            .map(|(goal, line)| Plan {
                goal,
                line,
                settled: false,
            });
        let kept = self.plan_goal(state);
        if let Some(p) = from_solver {
            if kept.is_none_or(|g| p.goal > g) {
                self.plan = Some(p);
            }
        }
        let plan = self.plan.as_ref()?;
        let mv = plan.move_in(state)?;
        (f64::from(plan.goal) > tree_goal).then(|| (mv.clone(), plan.goal))
    }

    /// The choice of `mv`, the move in `state` of the puzzle search's plan, expecting `goal`; the
    /// explanation's line is the plan from there. `searched`: the trees' simulations when this move
    /// searched (its effort is reported), `None` when it followed the plan at once.
    pub(super) fn plan_choice(
        &self,
        game: &G,
        state: &G::State,
        mv: G::Move,
        goal: Goal,
        started: Instant,
        searched: Option<u64>,
    ) -> Choice<G::Move> {
        let solver = self.solver.as_ref();
        let role = &game.info().roles[0];
        let line = self
            .plan
            .iter()
            .flat_map(|p| p.line.iter())
            .skip_while(|(s, _)| s != state)
            .take(16)
            .map(|(_, m)| format!("{role}: {}", game.show_move(m)))
            .collect();
        let certainty = if self.plan.as_ref().is_some_and(|p| p.settled) {
            Certainty::Proven
        } else {
            Certainty::Searched
        };
        Choice {
            explanation: Some(Explanation {
                candidates: vec![Candidate {
                    mv: game.show_move(&mv),
                    visits: 0,
                    value: Some((f64::from(goal), certainty)),
                }],
                line,
            }),
            mv,
            stats: SearchStats {
                elapsed: started.elapsed(),
                nodes: solver
                    .filter(|_| searched.is_some())
                    .map_or(0, |s| s.expanded().saturating_sub(self.expanded_before)),
                depth: solver
                    .filter(|_| searched.is_some())
                    .map_or(0, |s| s.depth()),
                simulations: searched.unwrap_or(0),
                expected: Some(f64::from(goal)),
                ..SearchStats::default()
            },
        }
    }
}

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// After a simulation of a one-player game (with move numbers): keeps its moves as the best line
    /// when its reward beats the best so far. A walk that ended at a solved node (`proven_end`: no
    /// playout) is followed on through the solved moves of that value, so that a line ending in a
    /// win the lookahead found, or in a node solved earlier, reaches the end of the game.
    pub(super) fn keep_best_line<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        proven_end: bool,
    ) {
        let Some(p) = &self.policy else { return };
        if self.roles != 1 || self.rewards[0] <= self.best_reward {
            return;
        }
        self.best_reward = self.rewards[0];
        self.best_line.clone_from(&p.played);
        let Some(&(mut node, _)) = self.path.last().filter(|_| proven_end) else {
            return;
        };
        // A graph may hold cycles of equal values: no line is longer than the graph.
        for _ in 0..self.nodes.len() {
            let n = &self.nodes[node as usize];
            if n.exact == NONE {
                break;
            }
            let value = self.exact[n.exact as usize];
            let next = (0..self.count(n, 0)).find_map(|i| {
                let child = self.child(n, i);
                let c = self.nodes.get(child as usize)?;
                (c.exact != NONE && self.exact[c.exact as usize] == value).then(|| {
                    (
                        child,
                        game.move_number(&self.moves[self.stat_index(n, 0, i)]),
                    )
                })
            });
            match next {
                Some((child, Some(number))) => {
                    self.best_line.push(number);
                    node = child;
                }
                _ => break,
            }
        }
    }
}
