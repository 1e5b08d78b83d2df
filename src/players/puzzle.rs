//! Puzzles: breadth-first search of a one-player game's states, for the line to the best goal.
//!
//! A one-player game is a search problem: its goal is a function of the state, and nothing the player
//! does not choose can change what follows. Monte Carlo search judges a move by the mean of random
//! lines, which says little when only one line in millions scores (a tower of Hanoi moved in exactly 31
//! moves, an 8-puzzle solved in exactly 30). [`PuzzleSolver`] searches the states themselves instead:
//! breadth first from the state it is given, **every state expanded once** (states are told apart by
//! [`Game::state_key`]), terminal states scored by their goal. It stops at the first terminal state worth
//! [`FULL_SCORE`], which, breadth first, is reached by a shortest line; when every reachable state has
//! been expanded, the best terminal state found is the best the game allows from there.
//!
//! The search runs in slices (`search` until a deadline, then again later from where it stopped), so a
//! player can give it the start clock and then part of each play clock. It keeps, per state, only its
//! parent and its move's index (eight bytes) and its 64-bit key (twice: in a list and in a set), and the states of the two levels being
//! expanded; it stops adding states at a cap ([`PuzzleSolver::with_max_states`]). A line is rebuilt by
//! replaying the moves' indices from the root with the game's own legal moves, so a line that is played
//! is always legal; two states whose keys collide (about as rare as two random 64-bit numbers being
//! equal) would only hide the second from the search.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};

use hashbrown::HashSet;

use crate::game::{Game, Goal};
use crate::players::clock::Deadline;

/// The goal that ends a search at once: no line can do better.
pub const FULL_SCORE: Goal = 100;

/// How many states a search keeps at most by default (about 26 bytes each, plus two levels of states).
pub const DEFAULT_MAX_STATES: usize = 6_000_000;

/// A line of play: each move with the state it is played in.
pub type Line<G> = Vec<(<G as Game>::State, <G as Game>::Move)>;

/// Where a search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PuzzleStatus {
    /// Still expanding states.
    Searching,
    /// A terminal state worth [`FULL_SCORE`] was found: its line is the best there is.
    Solved,
    /// Every state reachable from the root was expanded: the best line found is the best there is.
    Exhausted,
    /// The state cap was reached before either: the best line found is only the best seen.
    Full,
    /// Every state the search still held was expanded after its root moved down a move
    /// ([`PuzzleSolver::advance`]), which loses the states first found through the moves not taken:
    /// the best line found is only the best seen.
    Partial,
}

impl PuzzleStatus {
    /// Whether the best line found is the best there is (solved or exhausted).
    pub fn settles(self) -> bool {
        matches!(self, PuzzleStatus::Solved | PuzzleStatus::Exhausted)
    }
}

/// A breadth-first search of a one-player game's states from one root (see the module documentation).
pub struct PuzzleSolver<G: Game> {
    root: G::State,
    /// Per state found, its parent's number (`u32::MAX` for the root) and the index of the move that
    /// led to it among the parent's legal moves.
    parent: Vec<u32>,
    choice: Vec<u32>,
    /// Per state found, its key ([`Game::state_key`]).
    keys: Vec<u64>,
    seen: HashSet<u64, PassThrough>,
    /// Whether the root has moved down ([`PuzzleSolver::advance`]).
    advanced: bool,
    /// The level being expanded (state and its number), the next position in it, and the level after.
    level: Vec<(G::State, u32)>,
    at: usize,
    next_level: Vec<(G::State, u32)>,
    depth: u32,
    /// The best terminal state found: its goal and number.
    best: Option<(Goal, u32)>,
    status: PuzzleStatus,
    max_states: usize,
    expanded: u64,
    moves: Vec<G::Move>,
}

impl<G: Game> PuzzleSolver<G> {
    /// A search of the states that follow `root` (not started: see [`PuzzleSolver::search`]).
    pub fn new(game: &G, root: G::State) -> PuzzleSolver<G> {
        let mut seen = HashSet::with_hasher(PassThrough);
        let key = game.state_key(&root);
        seen.insert(key);
        let mut solver = PuzzleSolver {
            root: root.clone(),
            parent: vec![u32::MAX],
            choice: vec![0],
            keys: vec![key],
            seen,
            advanced: false,
            level: Vec::new(),
            at: 0,
            next_level: Vec::new(),
            depth: 0,
            best: None,
            status: PuzzleStatus::Searching,
            max_states: DEFAULT_MAX_STATES,
            expanded: 0,
            moves: Vec::new(),
        };
        if game.is_terminal(&root) {
            solver.score(game.goal(&root, 0), 0);
            if solver.status == PuzzleStatus::Searching {
                solver.status = PuzzleStatus::Exhausted;
            }
        } else {
            solver.level.push((root, 0));
        }
        solver
    }

    /// Keeps at most `n` states (at least one).
    pub fn with_max_states(mut self, n: usize) -> PuzzleSolver<G> {
        self.max_states = n.max(1);
        self
    }

    /// The state the search starts from.
    pub fn root(&self) -> &G::State {
        &self.root
    }

    /// Where the search stands.
    pub fn status(&self) -> PuzzleStatus {
        self.status
    }

    /// Whether the search has stopped for good (solved, exhausted or full).
    pub fn finished(&self) -> bool {
        self.status != PuzzleStatus::Searching
    }

    /// The states found so far, the root included.
    pub fn states(&self) -> usize {
        self.parent.len()
    }

    /// The states expanded so far.
    pub fn expanded(&self) -> u64 {
        self.expanded
    }

    /// The length of the lines being expanded.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The goal of the best terminal state found, if any.
    pub fn best_goal(&self) -> Option<Goal> {
        self.best.map(|(g, _)| g)
    }

    /// Expands states until `deadline` passes or the search finishes; returns its status. The
    /// deadline is read before the first state and every 64 states after it, so a slice overruns it
    /// by at most 63 state expansions.
    pub fn search(&mut self, game: &G, deadline: Deadline) -> PuzzleStatus {
        self.search_until(game, deadline, &AtomicBool::new(false))
    }

    /// [`PuzzleSolver::search`], stopping also once `stop` is set (read as often as the deadline).
    pub fn search_until(
        &mut self,
        game: &G,
        deadline: Deadline,
        stop: &AtomicBool,
    ) -> PuzzleStatus {
        self.run(game, deadline, stop, u64::MAX)
    }

    /// [`PuzzleSolver::search_until`], expanding at most `budget` states.
    pub(crate) fn run(
        &mut self,
        game: &G,
        deadline: Deadline,
        stop: &AtomicBool,
        budget: u64,
    ) -> PuzzleStatus {
        // The level being expanded is taken out of `self` while `expand` fills the next, so that
        // no state is copied to be expanded.
        let mut level = std::mem::take(&mut self.level);
        let mut count = 0u64;
        while self.status == PuzzleStatus::Searching && count < budget {
            count += 1;
            // Every expansion: one costs a step per move (on Datalog, a fraction of a millisecond
            // each), far more than reading the clock.
            if deadline.passed() || stop.load(Ordering::Relaxed) {
                break;
            }
            if self.at == level.len() {
                if self.next_level.is_empty() {
                    self.status = if self.advanced {
                        PuzzleStatus::Partial
                    } else {
                        PuzzleStatus::Exhausted
                    };
                    break;
                }
                level.clear();
                std::mem::swap(&mut level, &mut self.next_level);
                self.at = 0;
                self.depth += 1;
            }
            let (state, number) = &level[self.at];
            self.at += 1;
            self.expand(game, state, *number);
        }
        if self.status == PuzzleStatus::Searching {
            self.level = level;
        } else {
            // Only the parents are needed now, to rebuild the best line.
            self.next_level = Vec::new();
            self.seen = HashSet::with_hasher(PassThrough);
        }
        self.status
    }

    fn expand(&mut self, game: &G, state: &G::State, number: u32) {
        self.expanded += 1;
        let mut moves = std::mem::take(&mut self.moves);
        game.legal_moves(state, 0, &mut moves);
        for (i, mv) in moves.iter().enumerate() {
            let child = game.next_state(state, std::slice::from_ref(mv));
            let key = game.state_key(&child);
            if !self.seen.insert(key) {
                continue;
            }
            if self.parent.len() >= self.max_states {
                self.status = PuzzleStatus::Full;
                break;
            }
            let id = self.parent.len() as u32;
            self.parent.push(number);
            self.choice.push(i as u32);
            self.keys.push(key);
            if game.is_terminal(&child) {
                self.score(game.goal(&child, 0), id);
                if self.status == PuzzleStatus::Solved {
                    break;
                }
            } else {
                self.next_level.push((child, id));
            }
        }
        self.moves = moves;
    }

    fn score(&mut self, goal: Goal, id: u32) {
        if self.best.is_none_or(|(g, _)| goal > g) {
            self.best = Some((goal, id));
        }
        if goal >= FULL_SCORE {
            self.status = PuzzleStatus::Solved;
        }
    }

    /// Moves the root down to `state`, one of the root's children, keeping what the search found
    /// below it (its states, renumbered, and its part of the levels being expanded), so that a
    /// search that spans several moves does not start again at each. False, changing nothing, when
    /// the search has stopped or `state` is not a child it has found.
    ///
    /// The states first found through another of the root's moves are dropped, and those the kept
    /// part reaches only through them are lost: an exhausted search after this is
    /// [`PuzzleStatus::Partial`], not a proof.
    pub fn advance(&mut self, game: &G, state: &G::State) -> bool {
        if self.status != PuzzleStatus::Searching {
            return false;
        }
        let key = game.state_key(state);
        // The root's children were numbered first, right after it.
        let Some(new_root) = (1..self.parent.len())
            .take_while(|&i| self.parent[i] == 0)
            .find(|&i| self.keys[i] == key)
        else {
            return false;
        };
        let mut number = vec![u32::MAX; self.parent.len()];
        number[new_root] = 0;
        let (mut parent, mut choice, mut keys) = (vec![u32::MAX], vec![0], vec![key]);
        // A parent is numbered before its children, so one pass in order finds the part below.
        for id in new_root + 1..self.parent.len() {
            let above = self.parent[id];
            if above != u32::MAX && number[above as usize] != u32::MAX {
                number[id] = parent.len() as u32;
                parent.push(number[above as usize]);
                choice.push(self.choice[id]);
                keys.push(self.keys[id]);
            }
        }
        let renumber = |(_, id): &mut (G::State, u32)| {
            let n = number[*id as usize];
            *id = n;
            n != u32::MAX
        };
        self.level.drain(..self.at.min(self.level.len()));
        self.level.retain_mut(renumber);
        self.at = 0;
        self.next_level.retain_mut(renumber);
        self.seen = keys.iter().copied().collect();
        self.parent = parent;
        self.choice = choice;
        self.keys = keys;
        self.best = self
            .best
            .and_then(|(goal, id)| Some((goal, number[id as usize])).filter(|b| b.1 != u32::MAX));
        self.depth = self.depth.saturating_sub(1);
        self.root = state.clone();
        self.advanced = true;
        true
    }

    /// The line from the root to the best terminal state found, with the goal it reaches: each move
    /// with the state it is played in. `None` before any terminal state is found.
    pub fn best_line(&self, game: &G) -> Option<(Goal, Line<G>)> {
        let (goal, mut id) = self.best?;
        let mut indices = Vec::new();
        while self.parent[id as usize] != u32::MAX {
            indices.push(self.choice[id as usize]);
            id = self.parent[id as usize];
        }
        let mut state = self.root.clone();
        let mut line = Vec::with_capacity(indices.len());
        let mut moves = Vec::new();
        for &i in indices.iter().rev() {
            game.legal_moves(&state, 0, &mut moves);
            let mv = moves.get(i as usize)?.clone();
            let next = game.next_state(&state, std::slice::from_ref(&mv));
            line.push((state, mv));
            state = next;
        }
        Some((goal, line))
    }
}

/// The hasher of a set of 64-bit state keys, which are mixed already: the key is its own hash.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PassThrough;

impl BuildHasher for PassThrough {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

/// See [`PassThrough`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used (the keys are `u64`); anything else is folded in.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RuleGame;
    use std::time::Duration;

    /// A counter from 1 to `target` by `inc` (+1), `dbl` (×2) or `stay`, in at most four moves; a
    /// game stopped at 5 scores 50.
    fn counter(target: u32) -> RuleGame {
        let src = format!(
            "(role p) (init (pos 1)) (init (step 0))
             (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8)
             (dbl 1 2) (dbl 2 4) (dbl 3 6) (dbl 4 8)
             (<= (legal p inc) (true (pos ?x)) (succ ?x ?y))
             (<= (legal p dbl) (true (pos ?x)) (dbl ?x ?y))
             (legal p stay)
             (<= (next (pos ?y)) (does p inc) (true (pos ?x)) (succ ?x ?y))
             (<= (next (pos ?y)) (does p dbl) (true (pos ?x)) (dbl ?x ?y))
             (<= (next (pos ?x)) (does p stay) (true (pos ?x)))
             (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
             (<= terminal (true (step 4)))
             (<= terminal (true (pos {target})))
             (<= (goal p 100) (true (pos {target})))
             (<= (goal p 50) (true (pos 5)))
             (<= (goal p 0) (not (true (pos {target}))) (not (true (pos 5))))"
        );
        let program = crate::syntax::parse_kif(&src).expect("parses");
        RuleGame::from_program(&program, "counter").expect("loads")
    }

    fn far() -> Deadline {
        Deadline::after(Duration::from_secs(3600))
    }

    fn shown(
        game: &RuleGame,
        line: &[(<RuleGame as Game>::State, <RuleGame as Game>::Move)],
    ) -> String {
        let moves: Vec<String> = line.iter().map(|(_, m)| game.show_move(m)).collect();
        moves.join(" ")
    }

    #[test]
    fn a_full_score_is_found_by_a_shortest_line_that_replays() {
        let game = counter(6);
        let mut solver = PuzzleSolver::new(&game, game.initial_state());
        assert_eq!(solver.search(&game, far()), PuzzleStatus::Solved);
        let (goal, line) = solver.best_line(&game).expect("a line");
        assert_eq!(goal, 100);
        // 1 → 2 → 3 → 6; 1 → 2 → 4 → 5 → 6 is longer.
        assert_eq!(line.len(), 3, "{}", shown(&game, &line));
        assert_eq!(game.show_move(&line[2].1), "dbl");
        let mut s = game.initial_state();
        for (state, mv) in &line {
            assert_eq!(&s, state);
            s = game.next_state(&s, std::slice::from_ref(mv));
        }
        assert!(game.is_terminal(&s) && game.goal(&s, 0) == 100);
    }

    #[test]
    fn without_a_full_score_the_whole_space_gives_the_best_goal() {
        let game = counter(9);
        let mut solver = PuzzleSolver::new(&game, game.initial_state());
        assert_eq!(solver.search(&game, far()), PuzzleStatus::Exhausted);
        let (goal, line) = solver.best_line(&game).expect("a line");
        assert_eq!(goal, 50, "{}", shown(&game, &line));
        assert_eq!(line.len(), 4);
        assert!(solver.finished() && solver.best_goal() == Some(50));
    }

    #[test]
    fn a_search_moved_down_a_move_goes_on_below_it_and_its_line_starts_there() {
        let game = counter(8);
        let start = game.initial_state();
        let mut solver = PuzzleSolver::new(&game, start.clone());
        let never = AtomicBool::new(false);
        // The root and its first child expanded (inc and dbl both lead to 2, stay to 1).
        assert_eq!(solver.run(&game, far(), &never, 2), PuzzleStatus::Searching);
        let mut moves = Vec::new();
        game.legal_moves(&start, 0, &mut moves);
        let dbl = moves.iter().find(|m| game.show_move(m) == "dbl").unwrap();
        let after = game.next_state(&start, std::slice::from_ref(dbl));
        let states_before = solver.states();
        assert!(solver.advance(&game, &after));
        assert_eq!(solver.root(), &after);
        assert!(
            solver.states() < states_before,
            "the other moves' states are dropped"
        );
        // 2 → 4 → 8 in two moves; the search ran on from the moved root.
        assert_eq!(solver.search(&game, far()), PuzzleStatus::Solved);
        let (goal, line) = solver.best_line(&game).expect("a line");
        assert_eq!((goal, shown(&game, &line).as_str()), (100, "dbl dbl"));
        assert_eq!(line[0].0, after);
        // A state that is not a child of the root is refused, and a stopped search moves no more.
        let mut fresh = PuzzleSolver::new(&game, start.clone());
        fresh.run(&game, far(), &never, 1);
        assert!(!fresh.advance(&game, &line[1].0));
        assert!(!solver.advance(&game, &line[0].0));
    }

    #[test]
    fn a_moved_search_that_runs_out_of_states_is_partial_not_a_proof() {
        let game = counter(9);
        let start = game.initial_state();
        let mut solver = PuzzleSolver::new(&game, start.clone());
        solver.run(&game, far(), &AtomicBool::new(false), 1);
        let mut moves = Vec::new();
        game.legal_moves(&start, 0, &mut moves);
        let inc = moves.iter().find(|m| game.show_move(m) == "inc").unwrap();
        let after = game.next_state(&start, std::slice::from_ref(inc));
        assert!(solver.advance(&game, &after));
        assert_eq!(solver.search(&game, far()), PuzzleStatus::Partial);
        assert!(!PuzzleStatus::Partial.settles());
        assert_eq!(solver.best_goal(), Some(50));
    }

    #[test]
    fn a_search_stops_at_its_deadline_and_at_its_cap() {
        let game = counter(9);
        let mut solver = PuzzleSolver::new(&game, game.initial_state());
        assert_eq!(
            solver.search(&game, Deadline::after(Duration::ZERO)),
            PuzzleStatus::Searching
        );
        assert_eq!(solver.expanded(), 0);
        assert_eq!(solver.search(&game, far()), PuzzleStatus::Exhausted);
        let mut small = PuzzleSolver::new(&game, game.initial_state()).with_max_states(5);
        assert_eq!(small.search(&game, far()), PuzzleStatus::Full);
        assert_eq!(small.states(), 5);
    }
}
