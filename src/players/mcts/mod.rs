//! `mcts`: Monte Carlo tree search (UCT) for any game: any number of roles, turns or simultaneous moves.
//!
//! Each simulation walks down the tree from the current state, at every node letting *each role* pick
//! its own move by UCB1 over its own statistics ("decoupled" UCT: one table of visits and rewards per
//! role and move at a node, so simultaneous moves need nothing special, and in a turn-taking state the
//! waiting roles simply have one move). The joint move picked leads to a child; the first child not yet
//! in the tree is added, a random playout runs from it to the end, and every role's goal (scaled to
//! 0..=1) is added to the statistics of the move it picked at each node of the path.
//!
//! **Solver.** A terminal node's value is exact. In a turn-taking node whose mover has a child worth 100
//! to it, or whose children are all exact, the node's value is exact too (the mover picks its best), and
//! exact values travel up the tree as they appear (MCTS-Solver). A simulation that reaches an exact node
//! backs its exact value up instead of playing out. The final choice never prefers a move whose exact
//! value is below one already proven (a proven loss when a draw is proven), plays a proven win at
//! once, and when every move is proven lost plays the one the search took the most walks to prove
//! (an opponent that is not perfect may miss it). Simultaneous-move nodes are exact only when every
//! joint move leads to the same exact outcome.
//!
//! **Every clock used** (`mcts`; the kind `uct` is the same search without it, as a baseline): the
//! start clock grows the tree of the first state, which the first move keeps; a forced move (the
//! waiting role's no-op) is answered at the deadline with the tree of the state that follows grown
//! meanwhile, as GGP asks every role at once and gives each the whole play clock. In a local match both
//! stop as soon as every other seat is ready, or has answered or only thinks ahead too
//! (`Ask::unanswered`, `Player::prepare_beside`), since the match waits for nobody else; a served player cannot know, and
//! thinks to the deadline. Served, it also goes on searching after each answer until the next request
//! comes (`Player::ponder`: the manager is gathering the other players' moves), on the tree of the state
//! it answered in, whose child or grandchild the next move keeps.
//!
//! **Puzzles** (`mcts`, not `uct`): in a one-player game a breadth-first search of the states
//! ([`PuzzleSolver`](crate::players::puzzle::PuzzleSolver)) runs on a thread of its own beside the trees, from the start clock on. A line it
//! settles on (a full score, or the best once every state is searched) is played move by move without
//! searching again; a line from a search that stopped at its state cap is played while it beats the
//! best line the trees' simulations have reached, which they keep and play otherwise.
//!
//! **Cut-off** (`mcts`; `uct+cutoff`): a probe of random games in the start clock measures how well
//! the goals of a state partway through predict the goals at the end; where they do (checkers counts
//! pieces), playouts stop at that depth and score the goals they reached (see [`cutoff`]).
//!
//! **Playouts guided where moves tell who wins** (`mcts`; `uct+nst` forces it): a second probe of
//! random games measures how much of the final rewards the moves chosen explain, and how well they
//! predict the rewards of games they were not learnt from; where they explain 1% or more beyond chance
//! (breakthrough, Chinese checkers) or predict at a correlation of 0.25 or more (reversi), playouts
//! are guided by NST's move and move-pair averages, elsewhere they stay uniformly random (see
//! `moves_probe`).
//!
//! **A one-move lookahead where it is cheap** (`mcts`; `+lookahead` forces it): the same probe times
//! a check for a move that wins at once against a random game; where the check costs 13% or less
//! (pentago, checkers, hex), each new node is checked and a win found solves it before any playout.
//!
//! **Greedy playouts in duels where they are cheap** (`mcts`; `+greedy` forces them, and keeps the
//! probe from choosing NST, whose guided playouts are not greedy): the same probe
//! times greedy playouts ([`Game::greedy_playout`]: a win in one is taken, a move handing the next
//! role one is avoided); in a game of two roles moving in turn whose rewards always sum the same, at
//! 3,000 or more a second of the thread's CPU time, and where NST stays off, the trees play them
//! (Connect Four, pentago).
//! There the trees also share one node among equal states (`+trans`): the search goes deep enough
//! to meet the same position by different orders of moves, and on Connect Four at a 5 s clock
//! `mcts+trans` beat `mcts` 12–1–3 (even at 1 s).
//!
//! **Piece counts** (`+pieces`, off by default: 28–20 of 48 against `mcts` on breakthrough at 1 s,
//! within noise of even, and 0 of 5 against Sancho there): a third probe finds
//! base propositions whose counts tell who wins (each side's squares in breakthrough, its men and
//! kings in checkers) and each new node of a duel starts with up to six visits' worth of the material
//! balance gained since the root, as Sancho's piece heuristic does (see [`pieces`]).
//!
//! **Capturing playouts** (`mcts`; `+captures` for `uct`: 16 of 16 against the `mcts` before them on
//! breakthrough at 1 s, 9–2–5 on checkers, 8 of 10 against Sancho 1.61c on breakthrough at 30/5): the
//! same probe's pieces, and the game's analysis of which moves may take which of them
//! ([`Game::captures`]), make every playout of a duel take a piece whenever a move can
//! ([`Game::capturing_playout`]; NST, MAST or uniform moves otherwise, the policy not told of the
//! captures). They replace the greedy, decisive and blocking playouts where both apply (a capture
//! goes before a move that wins at once), and `+batch`'s leaf playouts do not capture; a game
//! without pieces plays as before.
//!
//! **Simulations** count the walks that learned something (a playout, a judgement, a node found
//! terminal); walks that end in an already solved node are counted apart and not reported.
//!
//! **Final move**: the most visited; **threads**: root parallelism, one tree per thread (no locks), the
//! root statistics summed at the end; **reuse**: the subtree of the state actually reached is kept for
//! the next move (found among the old root's children and grandchildren by state equality and slid
//! down in place, the rest dropped on a thread of its own: see `compact`).
//!
//! Hot loop: a simulation allocates only the node it adds (its state, move list and statistics go into
//! arenas) and indexes its children by the joint move's mixed-radix number, hashing nothing.

mod amaf;
mod compact;
mod cutoff;
mod endings;
mod grave;
mod leaves;
mod moves_probe;
mod normalize;
mod pieces;
mod policy;
mod prior;
mod probes;
mod puzzles;
mod saddle;
mod settings;
mod stats;
mod switches;
mod tree;
mod walk;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::evaluators::Evaluator;
use crate::game::{Captures, Game, GameError, RoleIndex};
use crate::players::clock::{role_seed, Deadline, Progress, ProgressTimer, Ticker};
use crate::players::{forced_choice, thousands, Ask, Choice, Player, PlayerError, SearchStats};
use puzzles::PuzzlePlay;
pub use switches::Switch;
use tree::{Tree, NONE};

use crate::players::{Candidate, Certainty, Explanation, Unanswered};

/// UCB1's exploration constant for rewards in 0..=1 (CadiaPlayer's 40 on the 0..100 scale).
pub const DEFAULT_EXPLORATION: f64 = 0.4;

/// Nodes all trees together may hold; past it, simulations still run but add no node.
const MAX_NODES: usize = 3_000_000;

/// How often a playout with `+captures` takes a piece when a move can.
pub const CAPTURE_RATE: f64 = 1.0;

/// The Monte Carlo tree search player (see the module documentation).
pub struct MctsPlayer<G: Game> {
    seed: u64,
    threads: usize,
    exploration: f64,
    progress: Option<Progress>,
    /// Judges new leaves instead of a random playout, when set.
    evaluator: Option<Arc<dyn Evaluator<G>>>,
    trees: Vec<Tree<G::State, G::Move>>,
    moves_chosen: u64,
    max_simulations: Option<u64>,
    leaf_playouts: u32,
    /// Searches in the start clock and while another role decides (`mcts`); `uct` does neither.
    think_ahead: bool,
    /// Guides playouts by move averages (MAST, see [`policy`]).
    mast: bool,
    /// Guides playouts by the averages of moves and of move pairs (NST, see [`policy`]).
    nst: bool,
    /// Blends all-moves-as-first statistics into selection (RAVE, see [`policy`]).
    rave: bool,
    grave: bool,
    winning: bool,
    blocking: bool,
    /// Shares one node among equal states (transpositions: the tree becomes a graph).
    transpositions: bool,
    /// Plays decisive playouts ([`Game::decisive_playout`]).
    decisive: bool,
    /// Plays greedy playouts ([`Game::greedy_playout`]).
    greedy: bool,
    /// Solves each new node whose mover wins in one move ([`Game::decisive_move`]).
    lookahead: bool,
    /// Selects by UCB-Tuned with [`tree::TUNED_BIAS`] instead of UCB1 ([`MctsPlayer::with_tuned`]).
    tuned: bool,
    /// Normalises node values now and then in two-role zero-sum games ([`normalize`]).
    normalize: bool,
    /// Walks go around a solved move to the best unsolved one ([`MctsPlayer::with_detour`]).
    detour: bool,
    /// Short greedy playouts are checked for proofs ([`MctsPlayer::with_endings`]).
    endings: bool,
    /// Simultaneous nodes are solved at pure saddle points ([`MctsPlayer::with_saddles`]).
    saddles: bool,
    /// Simulations run in batches of leaves ([`MctsPlayer::with_leaves`]).
    leaves: bool,
    /// Probes the game for goals that predict the end and, where they do, cuts playouts short
    /// ([`cutoff`]).
    cutoff: bool,
    /// This match's probe, once run.
    probe: Option<cutoff::Probe>,
    /// Decides NST, the one-move lookahead and greedy playouts per game ([`moves_probe`]): NST where
    /// the moves played tell who wins, the lookahead where its check is cheap beside a playout, greedy
    /// playouts in duels of turns where they are cheap.
    per_game: bool,
    /// What this match's moves probe switched on, once run.
    moves_probe: Option<moves_probe::Chosen>,
    /// Seeds new nodes of a duel with piece counts learnt in the start clock ([`pieces`]).
    pieces: bool,
    /// This match's piece probe, once run: the roles' pieces when it found them.
    material: Option<Option<Arc<pieces::Material>>>,
    /// Playouts take pieces (`+captures`): the piece probe's pieces, as captures of each move.
    captures: bool,
    capture_table: Option<Arc<Captures>>,
    /// Probes run this match, by kind: one that finds no time is tried again once, not on every
    /// move (a chess match at a quarter-second clock spent a fifth of every move on probes that
    /// never finished), and then decides what its switches alone say.
    probe_tries: Tries,
    /// A one-player game's breadth-first search (`mcts` only), and the line it settled on.
    puzzle: PuzzlePlay<G>,
    /// The last trees and puzzle search too big to keep for the next move (see
    /// [`MctsPlayer::retire`]), freed later: freeing millions of nodes on a play clock slows every
    /// thread down (see [`Tree::let_go`]).
    retired: Vec<Box<dyn Send>>,
}

/// Probes run this match, by kind (`probes.rs` decides how many a probe gets).
#[derive(Clone, Copy, Debug, Default)]
struct Tries {
    cutoff: u8,
    moves: u8,
    pieces: u8,
}

impl<G: Game> MctsPlayer<G> {
    /// A player whose simulations are seeded by `seed`, on one thread, with blocking playouts
    /// ([`MctsPlayer::with_blocking_playouts`]), playouts cut where the goals predict the end
    /// ([`MctsPlayer::with_cutoff`]) and thinking ahead.
    pub fn new(seed: u64) -> Self {
        MctsPlayer {
            seed,
            threads: 1,
            exploration: DEFAULT_EXPLORATION,
            progress: None,
            evaluator: None,
            trees: Vec::new(),
            moves_chosen: 0,
            max_simulations: None,
            leaf_playouts: 1,
            think_ahead: true,
            mast: false,
            nst: false,
            rave: false,
            grave: false,
            winning: true,
            blocking: true,
            transpositions: false,
            decisive: false,
            greedy: false,
            lookahead: false,
            tuned: false,
            normalize: false,
            detour: false,
            endings: false,
            saddles: false,
            leaves: false,
            cutoff: true,
            probe: None,
            per_game: true,
            moves_probe: None,
            pieces: false,
            material: None,
            captures: false,
            capture_table: None,
            probe_tries: Tries::default(),
            puzzle: PuzzlePlay::default(),
            retired: Vec::new(),
        }
    }

    /// The baseline player kind `uct`: this search as it was before it used every clock, answering a
    /// forced move at once and searching nothing in the start clock.
    pub fn baseline(seed: u64) -> Self {
        MctsPlayer {
            think_ahead: false,
            winning: false,
            blocking: false,
            cutoff: false,
            per_game: false,
            ..MctsPlayer::new(seed)
        }
    }
}

/// What the trees together know of one of this player's moves at the root.
#[derive(Clone, Copy, Debug, Default)]
struct RootMove {
    visits: u64,
    total: f64,
    /// The exact goal for this player, 0..=1, when a tree has proven it.
    exact: Option<f64>,
}

impl RootMove {
    fn mean(&self) -> f64 {
        self.exact.unwrap_or(self.total / self.visits.max(1) as f64)
    }
}

/// The move to play: a proven win at once; otherwise the most visited move, unless a proven value is
/// better than its average (never a proven loss when something better is proven). Among moves proven
/// equal, the most visited: when every move loses, the loss the search took longest to prove, which
/// an opponent that is not perfect is likeliest to miss.
fn final_choice(moves: &[RootMove]) -> usize {
    let proven = (0..moves.len())
        .filter(|&i| moves[i].exact.is_some())
        .max_by(|&a, &b| {
            let by_visits = moves[a].visits.cmp(&moves[b].visits);
            moves[a].mean().total_cmp(&moves[b].mean()).then(by_visits)
        });
    if let Some(p) = proven {
        if moves[p].mean() >= 1.0 {
            return p;
        }
    }
    let visited = (0..moves.len())
        .filter(|&i| moves[i].exact.is_none())
        .max_by_key(|&i| (moves[i].visits, std::cmp::Reverse(i)));
    match (visited, proven) {
        (Some(v), Some(p)) if moves[p].mean() > moves[v].mean() => p,
        (Some(v), _) => v,
        (None, Some(p)) => p,
        (None, None) => 0,
    }
}

impl<G: Game> MctsPlayer<G> {
    /// Keeps `old`, a big tree or puzzle search replaced, out of the clock's way. At most one move's
    /// worth is kept (a tree a thread and the puzzle search): older ones are freed on a thread of
    /// their own, so that a long match holds no more than that beside what it searches.
    fn retire(&mut self, old: Box<dyn Send>) {
        self.retired.push(old);
        let keep = self.threads + 1;
        if self.retired.len() > keep {
            let older: Vec<_> = self.retired.drain(..self.retired.len() - keep).collect();
            // Should no thread be had, they are freed here.
            let _ = std::thread::Builder::new()
                .name("mcts-drop".into())
                .spawn(move || drop(older));
        }
    }

    /// Trees (one a thread) rooted at `state`, keeping what they know of it when that fits in
    /// `afford` (see [`Tree::reroot`]).
    fn root_at(&mut self, game: &G, state: &G::State, afford: Duration) {
        self.moves_chosen += 1;
        let roles = game.info().num_roles();
        if self.trees.len() != self.threads || self.trees.first().is_some_and(|t| t.roles != roles)
        {
            self.trees = (0..self.threads)
                .map(|t| Tree::new(roles, role_seed(self.seed, t)))
                .collect();
        }
        let mut replaced = Vec::new();
        for (t, tree) in self.trees.iter_mut().enumerate() {
            let seed = role_seed(self.seed ^ self.moves_chosen.rotate_left(32), t);
            let old = tree.reroot(game, state, seed, afford / self.threads.max(1) as u32);
            replaced.extend(old);
            tree.leaf_playouts = self.leaf_playouts;
            let moves = game.move_count();
            // A puzzle's best line is kept by `mcts` (not the baseline): it needs the moves by number.
            let puzzle = roles == 1 && self.think_ahead;
            let guide = if self.nst || self.moves_probe.is_some_and(|c| c.nst) {
                policy::Guide::Nst
            } else if self.mast {
                policy::Guide::Mast
            } else {
                policy::Guide::Random
            };
            if !(guide != policy::Guide::Random || self.rave || self.grave || puzzle) || moves == 0
            {
                tree.policy = None;
            } else if !tree
                .policy
                .as_ref()
                .is_some_and(|p| p.fits(roles, moves, guide))
            {
                tree.policy = Some(policy::Policy::new(roles, moves, guide));
            }
            tree.rave = (self.rave || self.grave) && tree.policy.is_some();
            if !(self.grave && tree.policy.is_some()) {
                tree.reference = None;
            } else if !tree
                .reference
                .as_ref()
                .is_some_and(|r| r.fits(roles, moves))
            {
                tree.reference = Some(grave::Reference::new(roles, moves));
            }
            // Where the probe chooses greedy playouts (Connect Four, pentago) the search goes deep
            // enough at a 5 s clock for equal states to meet: on Connect Four `mcts+trans` beat
            // `mcts` 12-1-3 there (even at 1 s), so the tree becomes a graph.
            let probed_greedy = self.moves_probe.is_some_and(|c| c.greedy);
            tree.share_transpositions(game, self.transpositions || probed_greedy);
            tree.playouts.decisive = self.decisive;
            tree.playouts.greedy = self.greedy || probed_greedy;
            tree.playouts.winning = self.winning || self.blocking;
            tree.playouts.blocking = self.blocking;
            tree.lookahead = self.lookahead || self.moves_probe.is_some_and(|c| c.lookahead);
            tree.tuned = self.tuned;
            tree.normalize = self.normalize && game.info().zero_sum;
            tree.detour = self.detour;
            tree.endings = self.endings;
            tree.saddles = self.saddles && roles == 2 && game.info().zero_sum;
            tree.captures = self.capture_table.clone().map(|t| (t, CAPTURE_RATE));
            tree.prior = self
                .material
                .clone()
                .flatten()
                .filter(|_| self.pieces)
                .map(|material| {
                    let root = material.counts(game.state_words(state));
                    pieces::Prior {
                        material,
                        root,
                        weight: pieces::seed_weight(root),
                    }
                });
            tree.playouts.max_steps = self
                .probe
                .and_then(|p| p.cutoff)
                .map_or(crate::players::mcs::MAX_PLAYOUT_STEPS, |(depth, _)| depth);
            tree.leaves = (self.leaves || self.moves_probe.is_some_and(|c| c.leaves))
                && self.evaluator.is_none()
                && tree.batches_leaves();
        }
        for old in replaced {
            self.retire(Box::new(old));
        }
    }

    /// Grows the trees on every thread until `deadline` (or the simulation limit, or a solved root,
    /// or, when `others_done` is given, until it says nobody waits for this search), reporting
    /// progress as `role`'s search.
    fn grow(
        &mut self,
        game: &G,
        role: RoleIndex,
        deadline: Deadline,
        others_done: Option<&(dyn Fn() -> bool + Sync)>,
        node_cap: usize,
        with_solver: bool,
    ) {
        // A puzzle's search runs on a thread of its own beside the trees (nobody else plays), and the
        // trees stop once it settles the game.
        // Left in place when not searched now: it goes on at the next move.
        let mut solver = if with_solver {
            self.puzzle.solver.take()
        } else {
            None
        };
        let (settled, trees_done) = (AtomicBool::new(false), AtomicBool::new(false));
        let limit = self
            .max_simulations
            .map_or(u64::MAX, |n| n.div_ceil(self.threads as u64));
        let progress = self.progress.clone();
        let name = self.name();
        let moves_text = |tree: &Tree<G::State, G::Move>, i: usize| {
            let at = tree.stat_index(&tree.nodes[0], role, i as u32);
            game.show_move(&tree.moves[at])
        };
        let run = Run {
            game,
            evaluator: self.evaluator.as_deref(),
            deadline,
            exploration: if self.tuned {
                tree::TUNED_BIAS
            } else {
                self.exploration
            },
            node_cap,
            limit,
            others_done,
            settled: solver.is_some().then_some(&settled),
        };
        let run = &run;
        std::thread::scope(|scope| {
            if let Some(solver) = solver.as_mut() {
                let (settled, trees_done) = (&settled, &trees_done);
                scope.spawn(move || {
                    if solver.search_until(game, deadline, trees_done).settles() {
                        settled.store(true, Ordering::Relaxed);
                    }
                });
            }
            let (first, rest) = self.trees.split_first_mut().expect("one tree a thread");
            for tree in rest {
                scope.spawn(move || search(tree, run, None));
            }
            let report = |tree: &Tree<G::State, G::Move>| {
                let moves = root_moves(tree, role);
                let b = final_choice(&moves);
                format!(
                    "{name}: {} simulations, {} nodes, best {} expecting {:.0}",
                    thousands(tree.simulations),
                    thousands(tree.nodes.len() as u64),
                    moves_text(tree, b),
                    moves[b].mean() * 100.0
                )
            };
            let mut timer = ProgressTimer::new(progress);
            search(first, run, Some(&mut |tree| timer.maybe(|| report(tree))));
            // The trees stopped (at the deadline, their limit, or a solved root): so does the
            // puzzle search, which never outlives a move.
            trees_done.store(true, Ordering::Relaxed);
        });
        if solver.is_some() {
            self.puzzle.solver = solver;
        }
    }

    /// Forgets an earlier match; `mcts` grows the tree of the first state until `deadline` (or until
    /// the other seats are ready, when `unprepared` counts them), which the first move keeps. In a
    /// one-player game the puzzle search comes first and may use the whole start clock, `start_clock`
    /// (nobody else waits for it); the tree gets what it leaves.
    fn start_thinking(
        &mut self,
        game: &G,
        role: RoleIndex,
        start_clock: Deadline,
        deadline: Deadline,
        unprepared: Option<&AtomicUsize>,
    ) {
        // Freed before anything else: the start clock is long beside the play clocks.
        self.retired.clear();
        self.trees.clear();
        self.puzzle = PuzzlePlay::default();
        self.probe = None;
        self.moves_probe = None;
        self.material = None;
        self.capture_table = None;
        self.probe_tries = Tries::default();
        let initial = game.initial_state();
        // A quarter of the time to think, at most a second: the probes' games are cheap beside what
        // they decide.
        let probe_time = (deadline.remaining() / 4).min(Duration::from_secs(1));
        self.probe_game(game, &initial, Instant::now() + probe_time);
        if self.think_ahead && !game.is_terminal(&initial) {
            self.root_at(game, &initial, Duration::MAX);
            if game.info().num_roles() == 1 && self.max_simulations.is_none() {
                // Nobody waits for a puzzle's start clock: the search and the tree both use it all.
                // A new match's search replaces nothing.
                let replaced = self.puzzle.solver_at(game, &initial, Duration::MAX);
                debug_assert!(replaced.is_none());
                self.grow(
                    game,
                    role,
                    start_clock,
                    None,
                    MAX_NODES / self.threads,
                    true,
                );
                self.puzzle.settle(game, &initial);
                return;
            }
            let cap = MAX_NODES / self.threads;
            // Until the other seats are ready: the match starts when the last one is.
            let others_ready = unprepared.map(|n| move || n.load(Ordering::Relaxed) <= 1);
            let others_ready = others_ready
                .as_ref()
                .map(|f| f as &(dyn Fn() -> bool + Sync));
            self.grow(game, role, deadline, others_ready, cap, false);
        }
    }

    /// In a one-player game, the root move that starts the best line any tree has played, unless a
    /// proven win is known (each tree moves its line on when it is rerooted).
    fn best_line(&self, game: &G, role: RoleIndex, moves: &[RootMove]) -> Option<usize> {
        if game.info().num_roles() != 1 || moves.iter().any(|m| m.exact == Some(1.0)) {
            return None;
        }
        let t = (0..self.trees.len())
            .filter(|&t| !self.trees[t].best_line.is_empty())
            .max_by(|&a, &b| {
                self.trees[a]
                    .best_reward
                    .total_cmp(&self.trees[b].best_reward)
            })?;
        let tree = &self.trees[t];
        let first = tree.best_line[0];
        let root = &tree.nodes[0];
        let i = (0..tree.count(root, role)).find(|&i| {
            game.move_number(&tree.moves[tree.stat_index(root, role, i)]) == Some(first)
        })?;
        Some(i as usize)
    }

    fn simulations(&self) -> u64 {
        self.trees.iter().map(|t| t.simulations).sum()
    }
}

impl<G: Game> Player<G> for MctsPlayer<G> {
    fn name(&self) -> String {
        // `mcts` blocks, probes for a cut-off and captures by default; the name lists the switches
        // beyond those.
        let defaults: &[Switch] = if self.think_ahead {
            &[Switch::Block, Switch::Cutoff, Switch::Captures]
        } else {
            &[]
        };
        let mut kind = if self.think_ahead { "mcts" } else { "uct" }.to_string();
        for switch in self.switches() {
            if !defaults.contains(&switch) {
                kind.push('+');
                kind.push_str(switch.as_str());
                if switch == Switch::Batch && self.leaf_playouts != 64 {
                    kind.push_str(&self.leaf_playouts.to_string());
                }
            }
        }
        if self.threads > 1 {
            format!("{kind}({} threads)", self.threads)
        } else {
            kind
        }
    }

    fn prepare(
        &mut self,
        game: &G,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<(), PlayerError> {
        self.start_thinking(game, role, deadline, deadline, None);
        Ok(())
    }

    fn prepare_beside(
        &mut self,
        game: &G,
        role: RoleIndex,
        deadline: Deadline,
        play: Duration,
        unprepared: &AtomicUsize,
    ) -> Result<(), PlayerError> {
        // Two play clocks of thinking at most: a local match's seats prepare side by side on the
        // same cores, and a long start clock would add its whole length to every match.
        let tree_deadline = deadline.no_later_than(Instant::now() + play * 2);
        self.start_thinking(game, role, deadline, tree_deadline, Some(unprepared));
        Ok(())
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role, deadline) = (ask.game, ask.state, ask.role, ask.deadline);
        let started = Instant::now();
        // Keeping what the last move's search found below this state takes time in proportion to
        // all it found: more than a quarter of the move's time, and it starts again (a one-player
        // game's start clock can grow millions of states for a 0.1 s play clock). A search held to
        // a number of simulations stays repeatable: it keeps what it found, whatever the clock.
        let afford = if self.max_simulations.is_some() {
            Duration::MAX
        } else {
            deadline.remaining() / 4
        };
        // The puzzle search runs by the clock: a search held to a number of simulations (for
        // repeatable runs) goes without it.
        let puzzle =
            self.think_ahead && game.info().num_roles() == 1 && self.max_simulations.is_none();
        if puzzle {
            self.puzzle.begin_move();
            if let Some((mv, goal)) = self.puzzle.settled_move(state) {
                let choice = self
                    .puzzle
                    .plan_choice(game, state, mv, goal, started, None);
                return Ok(choice);
            }
            if let Some(old) = self.puzzle.solver_at(game, state, afford) {
                self.retire(Box::new(old));
            }
        }
        if (self.cutoff && self.probe.is_none())
            || self.moves_probe_due(game)
            || ((self.pieces || self.captures) && self.material.is_none())
        {
            // Not probed in a start clock (a player that does not think ahead): a fifth of this move.
            let probe_time = (deadline.remaining() / 5).min(Duration::from_secs(1));
            self.probe_game(game, state, started + probe_time);
        }
        self.root_at(game, state, afford);
        if let Some(mut choice) = forced_choice(game, state, role, started) {
            if self.think_ahead {
                // Nothing to decide here, but the state that follows will be ours to decide: grow
                // its tree while the others think (until they have answered, since the step waits
                // for nobody else).
                let _ahead = ask.unanswered.map(Unanswered::thinking_ahead);
                // A puzzle has nobody else to wait for: the search takes the move's time.
                let others_done = ask
                    .unanswered
                    .filter(|_| !puzzle)
                    .map(|u| move || u.only_thinking_ahead());
                self.grow(
                    game,
                    role,
                    deadline,
                    others_done
                        .as_ref()
                        .map(|f| f as &(dyn Fn() -> bool + Sync)),
                    MAX_NODES / self.threads,
                    // A puzzle's search goes on through the forced move: nobody else plays.
                    puzzle,
                );
                choice.stats.simulations = self.simulations();
                choice.stats.elapsed = started.elapsed();
            }
            return Ok(choice);
        }
        if self.trees[0].exact_of(&self.trees[0].nodes[0]).is_some()
            && self.trees[0].count(&self.trees[0].nodes[0], role) == 0
        {
            return Err(GameError::Rules(format!(
                "{} has no legal move in a state that is not terminal",
                game.info().roles[role]
            ))
            .into());
        }
        self.grow(game, role, deadline, None, MAX_NODES / self.threads, puzzle);
        if puzzle {
            if let Some((mv, goal)) = self.puzzle.settle(game, state) {
                let sims = self.simulations();
                let choice = self
                    .puzzle
                    .plan_choice(game, state, mv, goal, started, Some(sims));
                return Ok(choice);
            }
        }
        let mut moves = root_moves(&self.trees[0], role);
        for tree in &self.trees[1..] {
            for (m, other) in moves.iter_mut().zip(root_moves(tree, role)) {
                m.visits += other.visits;
                m.total += other.total;
                m.exact = m.exact.or(other.exact);
            }
        }
        let mut best = final_choice(&moves);
        // A simultaneous root solved at a saddle point (a guaranteed win among them) in any tree:
        // the move that guarantees its value, whatever the averages of moves not yet solved say
        // (the search stopped when the root was solved).
        let guaranteed = self.trees.iter().find_map(|t| {
            let root = &t.nodes[0];
            (t.saddles && root.mover == tree::SIMULTANEOUS && root.exact != NONE)
                .then(|| t.best_guarantee(root, role))
                .flatten()
        });
        if let Some((_, i, _)) = guaranteed {
            best = i as usize;
        }
        if let Some(line) = self.best_line(game, role, &moves) {
            best = line;
        }
        if puzzle {
            let tree_goal = self
                .trees
                .iter()
                .filter(|t| !t.best_line.is_empty())
                .map(|t| t.best_reward * 100.0)
                .fold(moves[best].mean() * 100.0, f64::max);
            if let Some((mv, goal)) = self.puzzle.unsettled_plan_move(game, state, tree_goal) {
                let sims = self.simulations();
                let choice = self
                    .puzzle
                    .plan_choice(game, state, mv, goal, started, Some(sims));
                return Ok(choice);
            }
        }
        let at = self.trees[0].stat_index(&self.trees[0].nodes[0], role, best as u32);
        let explanation = explain(game, &self.trees[0], role, &moves, best);
        Ok(Choice {
            explanation: Some(explanation),
            mv: self.trees[0].moves[at].clone(),
            stats: SearchStats {
                elapsed: started.elapsed(),
                simulations: self.simulations(),
                solved_walks: self.trees.iter().map(|t| t.solved_walks).sum(),
                tree: self.trees.iter().map(|t| t.nodes.len() as u64).sum(),
                expected: Some(moves[best].mean() * 100.0),
                ..SearchStats::default()
            },
        })
    }

    fn ponder(&mut self, game: &G, role: RoleIndex, until: Deadline, wanted: &AtomicUsize) -> u64 {
        // `uct`, the baseline, waits as it always has; a search held to a number of simulations
        // stays repeatable; a puzzle has nobody to wait for (and may be playing a settled line).
        if !self.think_ahead
            || self.max_simulations.is_some()
            || self.trees.is_empty()
            || game.info().num_roles() == 1
        {
            return 0;
        }
        // The trees are still rooted where the last answer was chosen: the state the manager
        // reaches next is a child or grandchild of it, which the next move keeps.
        let before = self.simulations();
        let others_done = move || wanted.load(Ordering::Relaxed) <= 1;
        self.grow(
            game,
            role,
            until,
            Some(&others_done),
            MAX_NODES / self.threads,
            false,
        );
        self.simulations().saturating_sub(before)
    }
}

/// A hook that sees the tree now and then during a search.
type Reporter<'a, G> = dyn FnMut(&Tree<<G as Game>::State, <G as Game>::Move>) + 'a;

/// What every thread's search shares.
struct Run<'a, G: Game> {
    game: &'a G,
    evaluator: Option<&'a dyn Evaluator<G>>,
    deadline: Deadline,
    exploration: f64,
    node_cap: usize,
    limit: u64,
    /// Whether nobody waits for this search any more, when it stops then.
    others_done: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// Set when a puzzle search beside the trees has settled the game: they stop.
    settled: Option<&'a AtomicBool>,
}

/// Runs simulations on `tree` until the deadline, `limit` walks, its root is exact, or the other
/// roles have answered (when `others_done` says so).
fn search<G: Game>(
    tree: &mut Tree<G::State, G::Move>,
    run: &Run<'_, G>,
    mut report: Option<&mut Reporter<'_, G>>,
) {
    let Run {
        game,
        evaluator,
        deadline,
        exploration,
        node_cap,
        limit,
        others_done,
        settled,
    } = *run;
    let mut ticker = Ticker::new(deadline);
    let started = Instant::now();
    let mut next_reserve = 256;
    // The walks at the last report (a batch of leaves adds up to 64 walks at once).
    let mut reported: u64 = 0;
    while tree.walks() < limit && !ticker.tick() && tree.nodes[0].exact == NONE {
        let walks = tree.walks();
        if walks >= next_reserve {
            // Growing an arena of a million nodes copies it, which takes longer than the clock's
            // margin near the end of a move: make room now for the nodes the rest of the search will add.
            next_reserve *= 4;
            let rate = walks as f64 / started.elapsed().as_secs_f64().max(1e-6);
            let more = rate * deadline.remaining().as_secs_f64() * 1.25;
            let total = (tree.nodes.len() as f64 + more).min(node_cap as f64) as usize;
            tree.reserve_nodes(total);
        }
        // Read every walk: on a slow game 64 walks can take longer than the next move's clock,
        // and a search thinking ahead holds the seat until it stops.
        if others_done.is_some_and(|done| done())
            || settled.is_some_and(|s| s.load(Ordering::Relaxed))
        {
            break;
        }
        let full = tree.nodes.len() >= node_cap;
        if tree.leaves {
            tree.simulate_leaves(game, exploration, full, deadline.instant());
        } else {
            tree.simulate(game, evaluator, exploration, full, deadline.instant());
        }
        if let Some(r) = report.as_mut() {
            if tree.walks() >= reported + 256 {
                reported = tree.walks();
                r(tree);
            }
        }
    }
}

/// This player's moves at the root of `tree`, with what the tree knows of each.
/// The root moves best first (the chosen one, then by visits), and the line of most-visited moves
/// of the first tree while one role is in control.
fn explain<G: Game>(
    game: &G,
    tree: &Tree<G::State, G::Move>,
    role: RoleIndex,
    moves: &[RootMove],
    best: usize,
) -> Explanation {
    let root = &tree.nodes[0];
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by_key(|&i| (i != best, std::cmp::Reverse(moves[i].visits), i));
    let candidates = order
        .into_iter()
        .map(|i| {
            let m = &moves[i];
            let value = match m.exact {
                Some(v) => Some((v * 100.0, Certainty::Proven)),
                None if m.visits > 0 => Some((m.mean() * 100.0, Certainty::Mean)),
                None => None,
            };
            Candidate {
                mv: game.show_move(&tree.moves[tree.stat_index(root, role, i as u32)]),
                visits: m.visits,
                value,
            }
        })
        .collect();
    let roles = &game.info().roles;
    let mut line = Vec::new();
    let mut at = 0u32;
    while line.len() < 16 {
        let node = &tree.nodes[at as usize];
        if node.mover == tree::SIMULTANEOUS {
            break;
        }
        let mover = node.mover as usize;
        let count = tree.count(node, mover);
        let chosen = if at == 0 {
            Some(best as u32)
        } else {
            (0..count)
                .filter(|&i| tree.stats[tree.stat_index(node, mover, i)].visits > 0)
                .max_by_key(|&i| tree.stats[tree.stat_index(node, mover, i)].visits)
        };
        let Some(i) = chosen.filter(|&i| i < count) else {
            break;
        };
        let mv = &tree.moves[tree.stat_index(node, mover, i)];
        line.push(format!("{}: {}", roles[mover], game.show_move(mv)));
        let child = tree.child(node, i);
        if child == NONE {
            break;
        }
        at = child;
    }
    Explanation { candidates, line }
}

fn root_moves<S: Clone + PartialEq, M: Clone>(tree: &Tree<S, M>, role: RoleIndex) -> Vec<RootMove> {
    let root = &tree.nodes[0];
    let count = tree.count(root, role);
    (0..count)
        .map(|i| {
            let st = tree.stats[tree.stat_index(root, role, i)];
            let exact = (root.mover as usize == role)
                .then(|| tree.child(root, i))
                .filter(|&c| c != NONE)
                .and_then(|c| tree.exact_of(&tree.nodes[c as usize]))
                .map(|v| v[role]);
            RootMove {
                visits: u64::from(st.visits),
                total: st.total,
                exact,
            }
        })
        .collect()
}

#[cfg(test)]
mod clock_tests;
#[cfg(test)]
mod proof_tests;
#[cfg(test)]
mod tests;
