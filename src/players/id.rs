//! `id`: iterative-deepening alpha-beta with a transposition table, for any game.
//!
//! The value of a state is the goal this player expects there, on GDL's 0..=100 scale (scaled to an
//! integer, [`GOAL`] per point). Every other role is assumed to play against it (the "paranoid"
//! reading of minimax, which is exact for two-player zero-sum games): a state is worth the best of this
//! player's moves, each worth the worst of the other roles' joint replies. One formula covers every kind
//! of game:
//!
//! - turn-taking: on its own turn the player maximises over its moves (the others' only move is their
//!   no-op); on another role's turn it has one move and minimises over the mover's;
//! - simultaneous moves: the player commits to a move and the others answer it, which is what a cautious
//!   player must assume when it cannot see their moves;
//! - one-player puzzles: there is nobody to minimise, and the search maximises the goal (Gamemaster's
//!   "maximizer").
//!
//! Depth counts joint moves. At the horizon a two-player zero-sum game is scored by the player's
//! [`Evaluator`] (a native game's heuristic, or the playout estimate of a rule file), anything else by
//! the goal value of the state. Terminal states score their goal, a quicker win and a slower loss a little better.
//! The deepening stops at the deadline (the deepest finished iteration's move is played), at the depth
//! limit, or as soon as an iteration never reached its horizon: then the value is exact.
//!
//! The transposition table is an array indexed by the low bits of [`Game::state_key`], kept between moves;
//! it gives each state's bound and best move, and the best move is searched first in the next iteration.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use smallvec::SmallVec;

use std::sync::Arc;

use crate::evaluators::{Estimate, Evaluator, GoalsOnly, Outcome};
use crate::game::{Game, GameError, Goal, RoleIndex};
use crate::players::clock::{Deadline, Progress, ProgressTimer, Ticker};
use crate::players::seeds::MAX_DEPTH;
use crate::players::{
    Ask, Candidate, Certainty, Choice, Explanation, Player, PlayerError, SearchStats,
};

/// The value of one goal point.
pub const GOAL: i32 = 1_000_000;
const INF: i32 = i32::MAX / 2;
/// Heuristic values stay strictly between the goals 10 and 90, so a proven win beats every guess.
const GUESS_RANGE: i32 = 40 * GOAL;
/// Entries of the transposition table (a power of two): 12 MB.
const TABLE_BITS: u32 = 19;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    value: i32,
    depth: u16,
    /// The index of the move searched first next time: this player's move at a node where it has a
    /// choice, the others' joint reply (mixed radix) where it has none.
    best: u32,
    bound: Bound,
    /// The subtree was searched to its end: the bound holds at any depth.
    solved: bool,
    used: bool,
}

const EMPTY: Entry = Entry {
    key: 0,
    value: 0,
    depth: 0,
    best: 0,
    bound: Bound::Exact,
    solved: false,
    used: false,
};

/// The `id` player (and Gamemaster's depth-limited `onestep`, `twostep` and `minimaxdepth`).
pub struct IdPlayer<G: Game> {
    name: &'static str,
    evaluator: Arc<dyn Evaluator<G>>,
    max_depth: u32,
    goals_only: bool,
    random_ties: bool,
    rng: SmallRng,
    table: Vec<Entry>,
    table_role: Option<RoleIndex>,
    progress: Option<Progress>,
}

impl<G: Game> IdPlayer<G> {
    /// An `id` player judging its horizon by `evaluator`; `seed` breaks ties between equal moves of the
    /// depth-limited variants.
    pub fn new(seed: u64, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        IdPlayer {
            name: "id",
            evaluator,
            max_depth: MAX_DEPTH,
            goals_only: false,
            random_ties: false,
            rng: SmallRng::seed_from_u64(seed),
            table: Vec::new(),
            table_role: None,
            progress: None,
        }
    }

    /// The same search limited to `depth` joint moves, under another name; equal moves are chosen among
    /// at random.
    pub fn limited(mut self, name: &'static str, depth: u32) -> Self {
        self.name = name;
        self.random_ties = true;
        self.with_max_depth(depth)
    }

    /// Deepens no further than `depth` joint moves.
    pub fn with_max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth.clamp(1, MAX_DEPTH);
        self
    }

    /// Scores the horizon by goal values only, never by playouts or a game's heuristic.
    pub fn goals_only(mut self) -> Self {
        self.goals_only = true;
        self.evaluator = Arc::new(GoalsOnly);
        self
    }

    /// Reports progress about once a second to `progress`.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }
}

/// The value of a terminal state reached after `ply` joint moves: its goal, a win above and a loss
/// below any state of the same goal that has not ended (a loss for sure is worse than a game still
/// open with the same goal value), the quicker win and the slower loss better.
fn terminal_value(goal: Goal, ply: u32) -> i32 {
    let g = goal.clamp(0, 100);
    let sooner = 1000 - ply.min(999) as i32;
    g * GOAL
        + match g.cmp(&50) {
            std::cmp::Ordering::Greater => sooner,
            std::cmp::Ordering::Less => -sooner,
            std::cmp::Ordering::Equal => 0,
        }
}

/// A value as an expected goal, 0..=100.
pub(crate) fn as_goal(value: i32) -> f64 {
    (f64::from(value) / f64::from(GOAL)).clamp(0.0, 100.0)
}

struct Search<'a, G: Game> {
    game: &'a G,
    evaluator: &'a dyn Evaluator<G>,
    me: RoleIndex,
    roles: usize,
    table: &'a mut [Entry],
    mask: usize,
    ticker: Ticker,
    /// The deadline the ticker keeps, for the estimates that read the clock themselves.
    deadline: std::time::Instant,
    nodes: u64,
    leaves: u64,
    horizon_hits: u64,
    use_estimate: bool,
    /// Candidates for equal best moves at the root, when ties are broken at random.
    root_ties: Option<Vec<u32>>,
    /// This iteration's value of each root move: (move, value, whether exact rather than an upper
    /// bound).
    root_values: Vec<(u32, i32, bool)>,
    /// Move lists, one per role, for each ply.
    levels: Vec<Vec<Vec<G::Move>>>,
}

impl<'a, G: Game> Search<'a, G> {
    /// A search for role `me` by `deadline`, remembering positions in `table` (a power of two
    /// long), judging its horizon by `evaluator` when `use_estimate`.
    fn new(
        game: &'a G,
        evaluator: &'a dyn Evaluator<G>,
        table: &'a mut [Entry],
        me: RoleIndex,
        deadline: Deadline,
        use_estimate: bool,
    ) -> Self {
        Search {
            game,
            evaluator,
            me,
            roles: game.info().num_roles(),
            mask: table.len() - 1,
            table,
            ticker: Ticker::new(deadline),
            deadline: deadline.instant(),
            nodes: 0,
            leaves: 0,
            horizon_hits: 0,
            use_estimate,
            root_ties: None,
            root_values: Vec::new(),
            levels: Vec::new(),
        }
    }

    fn horizon(&mut self, state: &G::State) -> Result<i32, GameError> {
        self.leaves += 1;
        if self.use_estimate {
            // The estimate reads the clock too: a leaf's playouts on a long game take longer than a
            // tick can foresee.
            let judged = self
                .evaluator
                .estimate_until(self.game, state, self.deadline);
            match judged {
                Err(GameError::OutOfTime) => {
                    self.ticker.stop();
                    return Err(GameError::OutOfTime);
                }
                Ok(e) => {
                    return Ok(match e {
                        Estimate::Definitely(Outcome::Winner(w)) if w == self.me => 100 * GOAL,
                        Estimate::Definitely(Outcome::Winner(_)) => 0,
                        Estimate::Definitely(Outcome::Draw) => 50 * GOAL,
                        Estimate::Guess(n) => {
                            // On the goal scale when the guess means goals (playouts), so that a
                            // guess of 70 reads as 70; a heuristic's own score only orders states.
                            let mine = match self.evaluator.expected_goal(n) {
                                Some(first) => {
                                    let mine = if self.me == 0 { first } else { 100.0 - first };
                                    ((mine - 50.0) * f64::from(GOAL)) as i32
                                }
                                None if self.me == 0 => n,
                                None => n.saturating_neg(),
                            };
                            50 * GOAL + mine.clamp(-GUESS_RANGE, GUESS_RANGE)
                        }
                    });
                }
                // An evaluator that cannot judge this state: its goal value instead.
                Err(_) => {}
            }
        }
        Ok(self.game.goal(state, self.me).clamp(0, 100) * GOAL)
    }

    fn value(
        &mut self,
        state: &G::State,
        depth: u32,
        ply: u32,
        alpha: i32,
        beta: i32,
    ) -> Result<i32, GameError> {
        if self.ticker.tick() {
            return Err(GameError::OutOfTime);
        }
        self.nodes += 1;
        if self.game.is_terminal(state) {
            return Ok(terminal_value(self.game.goal(state, self.me), ply));
        }
        if depth == 0 {
            self.horizon_hits += 1;
            return self.horizon(state);
        }
        let key = self.game.state_key(state);
        let slot = key as usize & self.mask;
        let e = self.table[slot];
        let mut first = None;
        if e.used && e.key == key {
            first = Some(e.best);
            if u32::from(e.depth) >= depth || e.solved {
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.value >= beta,
                    Bound::Upper => e.value <= alpha,
                };
                if cut {
                    if !e.solved {
                        self.horizon_hits += 1;
                    }
                    return Ok(e.value);
                }
            }
        }
        let hits = self.horizon_hits;
        let (value, best) = self.node(state, depth, ply, alpha, beta, first)?;
        let bound = if value <= alpha {
            Bound::Upper
        } else if value >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table[slot] = Entry {
            key,
            value,
            depth: depth.min(u32::from(u16::MAX)) as u16,
            best,
            bound,
            solved: self.horizon_hits == hits,
            used: true,
        };
        Ok(value)
    }

    /// The best of this player's moves, each worth the worst joint reply of the others; returns the value
    /// and the index of the move to try first next time.
    fn node(
        &mut self,
        state: &G::State,
        depth: u32,
        ply: u32,
        mut alpha: i32,
        beta: i32,
        first: Option<u32>,
    ) -> Result<(i32, u32), GameError> {
        let ply_index = ply as usize;
        while self.levels.len() <= ply_index {
            self.levels.push(vec![Vec::new(); self.roles]);
        }
        let mut level = std::mem::take(&mut self.levels[ply_index]);
        for (r, moves) in level.iter_mut().enumerate() {
            self.game.legal_moves(state, r, moves);
            if moves.is_empty() {
                return Err(GameError::Rules(format!(
                    "{} has no legal move in a state that is not terminal",
                    self.game.info().roles[r]
                )));
            }
        }
        let result = if level[self.me].len() == 1 {
            self.replies(state, &level, 0, depth, ply, alpha, beta, first)
        } else {
            let n = level[self.me].len() as u32;
            let mut best = (-INF, 0);
            let ties_here = ply == 0 && self.root_ties.is_some();
            let mut result = Ok(());
            for i in ordered(n, first) {
                // With random ties at the root, a move equal to the best must be told apart from a
                // worse one, so the window stays open one unit below the best.
                let a = if ties_here { alpha - 1 } else { alpha };
                let v = match self.replies(state, &level, i, depth, ply, a, beta, None) {
                    Ok((v, _)) => v,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                };
                if ply == 0 {
                    self.root_values.push((i, v, v > a));
                }
                if ties_here {
                    let ties = self.root_ties.get_or_insert_with(Vec::new);
                    if v > best.0 {
                        ties.clear();
                    }
                    if v >= best.0 {
                        ties.push(i);
                    }
                }
                if v > best.0 {
                    best = (v, i);
                }
                alpha = alpha.max(v);
                if alpha >= beta {
                    break;
                }
            }
            result.map(|()| best)
        };
        self.levels[ply_index] = level;
        result
    }

    /// The worst, for this player, of the other roles' joint replies to its move `mine`; returns the value
    /// and the index (mixed radix) of the worst reply.
    #[allow(clippy::too_many_arguments)]
    fn replies(
        &mut self,
        state: &G::State,
        level: &[Vec<G::Move>],
        mine: u32,
        depth: u32,
        ply: u32,
        alpha: i32,
        mut beta: i32,
        first: Option<u32>,
    ) -> Result<(i32, u32), GameError> {
        let combos: u64 = level
            .iter()
            .enumerate()
            .filter(|&(r, _)| r != self.me)
            .map(|(_, m)| m.len() as u64)
            .product();
        let combos = combos.min(u64::from(u32::MAX)) as u32;
        let mut worst = (INF, 0);
        let mut joint: SmallVec<[G::Move; 4]> = SmallVec::with_capacity(self.roles);
        for c in ordered(combos, first) {
            joint.clear();
            let mut rest = c;
            for (r, moves) in level.iter().enumerate() {
                if r == self.me {
                    joint.push(moves[mine as usize].clone());
                } else {
                    let n = moves.len() as u32;
                    joint.push(moves[(rest % n) as usize].clone());
                    rest /= n;
                }
            }
            let child = self.game.next_state(state, &joint);
            let v = self.value(&child, depth - 1, ply + 1, alpha, beta)?;
            if v < worst.0 {
                worst = (v, c);
            }
            beta = beta.min(v);
            if alpha >= beta {
                break;
            }
        }
        Ok(worst)
    }
}

impl<G: Game> Search<'_, G> {
    /// The line the table remembers from `state`: at each step this player's best move where it has
    /// a choice and the others' worst reply where it has none, as `role: move`, while the states are
    /// in the table and one role is in control.
    fn principal_line(&self, state: &G::State, first: u32, most: usize) -> Vec<String> {
        let roles = &self.game.info().roles;
        let mut line = Vec::new();
        let mut state = state.clone();
        let mut level: Vec<Vec<G::Move>> = vec![Vec::new(); self.roles];
        // Past the deadline the line stops after the chosen move: each move of it costs a step of
        // the game (most of a millisecond in chess on the network), and the answer is due.
        while line.len() < most
            && !self.game.is_terminal(&state)
            && (line.is_empty() || Instant::now() < self.deadline)
        {
            // The root is searched outside the table: its move is the one chosen.
            let best = if line.is_empty() {
                first
            } else {
                let key = self.game.state_key(&state);
                let e = self.table[key as usize & self.mask];
                if !(e.used && e.key == key) {
                    break;
                }
                e.best
            };
            for (r, moves) in level.iter_mut().enumerate() {
                self.game.legal_moves(&state, r, moves);
            }
            let choosers: Vec<usize> = (0..self.roles).filter(|&r| level[r].len() > 1).collect();
            let [mover] = choosers[..] else {
                break;
            };
            let index = if mover == self.me {
                best as usize
            } else if line.is_empty() {
                break;
            } else {
                // The reply is a mixed-radix index over the other roles, of which only `mover` has
                // more than one move.
                let mut rest = best as usize;
                let mut at = 0;
                for (r, moves) in level.iter().enumerate() {
                    if r == self.me {
                        continue;
                    }
                    if r == mover {
                        at = rest % moves.len();
                    }
                    rest /= moves.len();
                }
                at
            };
            let Some(mv) = level[mover].get(index) else {
                break;
            };
            line.push(format!("{}: {}", roles[mover], self.game.show_move(mv)));
            let joint: Vec<G::Move> = level
                .iter()
                .enumerate()
                .map(|(r, moves)| moves[if r == mover { index } else { 0 }].clone())
                .collect();
            state = self.game.next_state(&state, &joint);
        }
        line
    }
}

/// `0..n` with `first` (when it is in range) moved to the front.
fn ordered(n: u32, first: Option<u32>) -> impl Iterator<Item = u32> {
    let first = first.filter(|&f| f < n);
    first
        .into_iter()
        .chain((0..n).filter(move |&i| Some(i) != first))
}

impl<G: Game> Player<G> for IdPlayer<G> {
    fn name(&self) -> String {
        if self.max_depth >= MAX_DEPTH {
            self.name.to_string()
        } else {
            format!("{}(depth {})", self.name, self.max_depth)
        }
    }

    fn prepare(
        &mut self,
        _game: &G,
        _role: RoleIndex,
        _deadline: Deadline,
    ) -> Result<(), PlayerError> {
        // A new match: nothing in the table is known to hold for its game.
        self.table_role = None;
        Ok(())
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role, deadline) = (ask.game, ask.state, ask.role, ask.deadline);
        let started = Instant::now();
        if let Some(choice) = ask.forced() {
            return Ok(choice);
        }
        if self.table.is_empty() {
            self.table = vec![EMPTY; 1 << TABLE_BITS];
        }
        if self.table_role != Some(role) {
            self.table.fill(EMPTY);
            self.table_role = Some(role);
        }
        let info = game.info();
        let random_ties = self.random_ties;
        let use_estimate = !self.goals_only && info.num_roles() == 2 && info.zero_sum;
        let evaluator = self.evaluator.as_ref();
        let mut search = Search::new(
            game,
            evaluator,
            &mut self.table,
            role,
            deadline,
            use_estimate,
        );
        let mut progress = ProgressTimer::new(self.progress.clone());
        let mut moves = Vec::new();
        game.legal_moves(state, role, &mut moves);
        let mut best: Option<(u32, i32, u32)> = None;
        let mut root_values = Vec::new();
        let mut solved = false;
        for depth in 1..=self.max_depth {
            let hits = search.horizon_hits;
            search.root_ties = random_ties.then(Vec::new);
            search.root_values.clear();
            match search.node(state, depth, 0, -INF, INF, best.map(|b| b.0)) {
                Ok((value, mut mv)) => {
                    root_values = std::mem::take(&mut search.root_values);
                    solved = search.horizon_hits == hits;
                    if let Some(ties) = search.root_ties.as_ref().filter(|t| t.len() > 1) {
                        mv = ties[self.rng.gen_range(0..ties.len())];
                    }
                    best = Some((mv, value, depth));
                    let name = self.name;
                    progress.maybe(|| {
                        format!(
                            "{name}: depth {depth} done, best {} expecting {:.0}, {} nodes",
                            moves
                                .get(mv as usize)
                                .map_or_else(String::new, |m| game.show_move(m)),
                            as_goal(value),
                            search.nodes
                        )
                    });
                    if search.horizon_hits == hits {
                        break; // searched to the end: the value is exact
                    }
                }
                Err(GameError::OutOfTime) => break,
                Err(e) => return Err(e.into()),
            }
        }
        let (index, value, depth) = best.unwrap_or((0, 0, 0));
        let mv = moves
            .get(index as usize)
            .cloned()
            .ok_or_else(|| GameError::Rules(format!("{} has no legal move", info.roles[role])))?;
        let explanation = {
            let certainty = if solved {
                Certainty::Proven
            } else {
                Certainty::Searched
            };
            root_values.sort_by_key(|&(i, v, _)| (i != index, std::cmp::Reverse(v), i));
            let mut candidates: Vec<Candidate> = root_values
                .iter()
                .map(|&(i, v, exact)| Candidate {
                    mv: game.show_move(&moves[i as usize]),
                    visits: 0,
                    value: Some((
                        as_goal(v).clamp(0.0, 100.0),
                        if exact { certainty } else { Certainty::AtMost },
                    )),
                })
                .collect();
            for (i, m) in moves.iter().enumerate() {
                if !root_values.iter().any(|r| r.0 as usize == i) {
                    candidates.push(Candidate {
                        mv: game.show_move(m),
                        visits: 0,
                        value: None,
                    });
                }
            }
            Explanation {
                candidates,
                line: search.principal_line(state, index, 16),
            }
        };
        Ok(Choice {
            explanation: Some(explanation),
            mv,
            stats: SearchStats {
                nodes: search.nodes,
                leaves: search.leaves,
                elapsed: started.elapsed(),
                depth,
                expected: best.map(|_| as_goal(value).clamp(0.0, 100.0)),
                ..SearchStats::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::nim::Nim;
    use std::time::Duration;

    #[test]
    fn quick_wins_and_slow_losses_score_better() {
        assert!(terminal_value(100, 3) > terminal_value(100, 5));
        assert!(terminal_value(0, 5) > terminal_value(0, 3));
        assert!(terminal_value(99, 0) < terminal_value(100, 999));
        assert!(terminal_value(0, 999) < terminal_value(1, 0));
        // A state that has not ended, judged by its goal value alone, is worth more than a loss of
        // that value and less than a win.
        assert!(terminal_value(0, 1) < 0);
        assert!(terminal_value(30, 999) < 30 * GOAL);
        assert!(terminal_value(100, 999) > 100 * GOAL);
        assert_eq!(terminal_value(50, 7), 50 * GOAL);
    }

    #[test]
    fn ordered_puts_the_first_move_first_once() {
        assert_eq!(ordered(4, Some(2)).collect::<Vec<_>>(), vec![2, 0, 1, 3]);
        assert_eq!(ordered(3, Some(7)).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(ordered(2, None).collect::<Vec<_>>(), vec![0, 1]);
    }

    /// `player`'s answer in `state` of `game`, as the first role, with ten seconds to think.
    fn answer(
        player: &mut IdPlayer<Nim>,
        game: &Nim,
        state: &<Nim as Game>::State,
    ) -> Choice<<Nim as Game>::Move> {
        let ask = Ask::new(game, state, 0, Deadline::after(Duration::from_secs(10)));
        player.choose(&ask).unwrap()
    }

    #[test]
    fn id_solves_nim_and_takes_the_winning_move() {
        // Nim with 21 pieces, taking 1..=3: the first player wins by leaving a multiple of four.
        let g = Nim::new(21, false);
        let mut p = IdPlayer::new(1, Arc::new(crate::games::nim::Heuristic));
        let s = g.initial_state();
        let c = answer(&mut p, &g, &s);
        assert_eq!(g.show_move(&c.mv), "1", "21 - 1 = 20 is a multiple of four");
        assert_eq!(c.stats.expected.map(f64::round), Some(100.0));
    }

    /// The search `player` would run on `game` by `deadline`, its table as the last move left it.
    fn search_of<'a>(
        player: &'a mut IdPlayer<Nim>,
        game: &'a Nim,
        deadline: Deadline,
    ) -> Search<'a, Nim> {
        let evaluator = player.evaluator.as_ref();
        Search::new(game, evaluator, &mut player.table, 0, deadline, false)
    }

    #[test]
    fn past_its_deadline_the_line_stops_at_the_chosen_move() {
        let g = Nim::new(21, false);
        let mut p = IdPlayer::new(1, Arc::new(crate::games::nim::Heuristic));
        let s = g.initial_state();
        let c = answer(&mut p, &g, &s);
        let line = c.explanation.expect("id explains its move").line;
        assert!(line.len() > 1, "{line:?}");
        let mut moves = Vec::new();
        g.legal_moves(&s, 0, &mut moves);
        let first = moves.iter().position(|m| *m == c.mv).unwrap() as u32;
        let in_time = Deadline::after(Duration::from_secs(60));
        let again = search_of(&mut p, &g, in_time).principal_line(&s, first, 16);
        assert_eq!(
            again, line,
            "the table gives the same line while there is time"
        );
        let passed = Deadline::at(std::time::Instant::now());
        let late = search_of(&mut p, &g, passed).principal_line(&s, first, 16);
        assert_eq!(late, line[..1], "past the deadline only the chosen move");
    }
}
