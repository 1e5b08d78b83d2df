//! How a [`MctsPlayer`] is set up: each enhancement switched on or off on its own (`mcts+mast` on
//! the command line), its threads, limits and exploration, and which of them are in effect.

use std::sync::Arc;

use super::{MctsPlayer, Switch};
use crate::evaluators::Evaluator;
use crate::game::Game;
use crate::players::clock::Progress;

impl<G: Game> MctsPlayer<G> {
    /// Plays `n` playouts (at most 64) at each new leaf in one batch and backs up their mean: on the
    /// network the batch runs one playout per bit of a word.
    pub fn with_leaf_playouts(mut self, n: u32) -> Self {
        self.leaf_playouts = n.clamp(1, 64);
        self
    }

    /// Stops each search after `n` simulations (shared among the threads) even when time is left: for
    /// benchmarks and repeatable tests.
    pub fn with_simulation_limit(mut self, n: u64) -> Self {
        self.max_simulations = Some(n.max(1));
        self
    }

    /// Guides the playouts by every role's average reward for each move (MAST, see [`policy`](super::policy)), on
    /// games that number their moves ([`Game::move_number`]).
    pub fn with_mast(mut self, on: bool) -> Self {
        self.mast = on;
        self
    }

    /// Guides the playouts by MAST's move averages blended with the averages of move pairs, each move
    /// after the last real choice before it (NST, see [`policy`](super::policy)), on games that number their moves.
    pub fn with_nst(mut self, on: bool) -> Self {
        self.nst = on;
        self
    }

    /// Judges moves in the tree by their own average blended with their average over every simulation
    /// in which the role played them later ("all moves as first", RAVE: β = √(k / (3n + k)), k = 500),
    /// on games that number their moves.
    pub fn with_rave(mut self, on: bool) -> Self {
        self.rave = on;
        self
    }

    /// GRAVE: RAVE with the all-moves-as-first statistics of the deepest well-visited node of the
    /// walk (see the `grave` module).
    pub fn with_grave(mut self, on: bool) -> Self {
        self.grave = on;
        self
    }

    /// Playouts in which a role whose move makes one of its winning propositions true plays it
    /// ([`Game::winning_playout`]).
    pub fn with_winning_playouts(mut self, on: bool) -> Self {
        self.winning = on;
        self
    }

    /// Winning playouts ([`Game::winning_playout`]) that also block: a move after which another
    /// role makes one of its winning propositions true is replaced while others are left.
    pub fn with_blocking_playouts(mut self, on: bool) -> Self {
        self.blocking = on;
        self.winning |= on;
        self
    }

    /// Shares one node, and its statistics, among the equal states that different orders of moves
    /// reach (found by [`Game::state_key`], then compared): the tree becomes a graph, and a walk that
    /// comes back to a state of its own path plays out from there.
    pub fn with_transpositions(mut self, on: bool) -> Self {
        self.transpositions = on;
        self
    }

    /// Plays out with decisive moves ([`Game::decisive_playout`]: a role that can end the game with
    /// goal 100 in one move does so) instead of uniformly random ones; MAST's guided playouts, when
    /// on, are left as they are.
    pub fn with_decisive_playouts(mut self, on: bool) -> Self {
        self.decisive = on;
        self
    }

    /// Plays out greedily ([`Game::greedy_playout`]: decisive moves, and no move after which another
    /// role wins at once while another is left) instead of uniformly random ones; MAST's or NST's
    /// guided playouts, when switched on, are left as they are, but the moves probe no longer
    /// chooses NST.
    pub fn with_greedy_playouts(mut self, on: bool) -> Self {
        self.greedy = on;
        self
    }

    /// Checks each new node for a move that wins at once ([`Game::decisive_move`]) and, when its mover
    /// has one, adds that move's child, which solves the node before any playout from it: the
    /// solver sees wins one move earlier, and the role before avoids the moves that allow them.
    pub fn with_lookahead(mut self, on: bool) -> Self {
        self.lookahead = on;
        self
    }

    /// Selects moves by UCB-Tuned as Sancho does: an exploration term scaled by the variance of the
    /// rewards seen at the node, its constant (√2 · 0.4) matching UCB1's 0.4 where rewards vary most.
    pub fn with_tuned(mut self, on: bool) -> Self {
        self.tuned = on;
        self
    }

    /// Recomputes, every 100 visits of a node that has 500, its value from its moves' averages
    /// weighted as UCB1 would visit them (Sancho's node score normalisation, see the `normalize`
    /// module), in two-role zero-sum games; elsewhere it does nothing.
    pub fn with_normalization(mut self, on: bool) -> Self {
        self.normalize = on;
        self
    }

    /// Sends a walk whose selection would take a solved move that is not a win through the best
    /// unsolved move instead, where something is left to learn, and gives the nodes above the solved
    /// move's value as if the walk had taken it (Sancho's score overrides): a proven draw no longer
    /// draws every walk of a search into it.
    pub fn with_detour(mut self, on: bool) -> Self {
        self.detour = on;
        self
    }

    /// Checks each greedy playout from a new node that ends at its first or second move for a proof
    /// (`+endings`, see [`Switch::Endings`]); only greedy playouts prove anything.
    pub fn with_endings(mut self, on: bool) -> Self {
        self.endings = on;
        self
    }

    /// Solves a node where two roles move at once when its solved children show a pure saddle
    /// point (`+saddle`, see [`Switch::Saddle`]): a move whose every joint move is solved
    /// guarantees its least value; a guaranteed win, or guarantees of both roles that add up to
    /// the whole reward, are the node's value. Only in two-role games the analysis finds
    /// constant-sum, and only from children whose goals sum to 100.
    pub fn with_saddles(mut self, on: bool) -> Self {
        self.saddles = on;
        self
    }

    /// Runs simulations in batches of new leaves (`+leaves`, see [`Switch::Leaves`]) where the
    /// playouts are plain random ones judged one per leaf (no playout policy, captures, greedy or
    /// decisive playouts, cut-off, evaluator, detours or endings); the batch's playouts are uniformly
    /// random even where winning or blocking playouts are on. Elsewhere it does nothing.
    pub fn with_leaves(mut self, on: bool) -> Self {
        self.leaves = on;
        self
    }

    /// Cuts playouts short where the goals predict the end: a probe of random games (in the start
    /// clock, or a fifth of the first move's clock) finds the depth at which the goals correlate with
    /// the final goals, and playouts stop there and score the goals of the state they reached (see
    /// the `cutoff` module). Games whose goals say nothing before the end play out in full.
    pub fn with_cutoff(mut self, on: bool) -> Self {
        self.cutoff = on;
        self
    }

    /// Seeds each new node of a two-role game with the material balance, where a probe of random
    /// games finds base propositions whose counts tell who wins (see the `pieces` module).
    pub fn with_pieces(mut self, on: bool) -> Self {
        self.pieces = on;
        self
    }

    /// Playouts of a two-role game take a piece where a move can (with probability
    /// [`CAPTURE_RATE`](super::CAPTURE_RATE)), where the piece probe finds pieces and the game tells which moves take
    /// them ([`Game::captures`]).
    pub fn with_captures(mut self, on: bool) -> Self {
        self.captures = on;
        self
    }

    /// Searches on `threads` threads (one tree each).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.clamp(1, 256);
        self
    }

    /// UCB1's exploration constant (rewards are 0..=1); `+tuned` keeps its own.
    pub fn with_exploration(mut self, c: f64) -> Self {
        self.exploration = c;
        self
    }

    /// Reports progress about once a second to `progress`.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }

    /// The enhancements in effect, in the order the command line lists them (`Batch` for any batch
    /// of leaf playouts; `Wins` only when not implied by `Block`): what a player built as `mcts` or
    /// `uct+...` actually runs.
    pub fn switches(&self) -> Vec<Switch> {
        Switch::ALL
            .into_iter()
            .filter(|switch| match switch {
                Switch::Mast => self.mast,
                Switch::Nst => self.nst,
                Switch::Rave => self.rave,
                Switch::Grave => self.grave,
                Switch::Batch => self.leaf_playouts > 1,
                Switch::Trans => self.transpositions,
                Switch::Decisive => self.decisive,
                Switch::Greedy => self.greedy,
                Switch::Lookahead => self.lookahead,
                Switch::Tuned => self.tuned,
                Switch::Norm => self.normalize,
                Switch::Detour => self.detour,
                Switch::Endings => self.endings,
                Switch::Saddle => self.saddles,
                Switch::Leaves => self.leaves,
                Switch::Wins => self.winning && !self.blocking,
                Switch::Block => self.blocking,
                Switch::Cutoff => self.cutoff,
                Switch::Pieces => self.pieces,
                Switch::Captures => self.captures,
            })
            .collect()
    }

    /// Whether the player searches in the start clock and while another role decides (`mcts`).
    pub fn thinks_ahead(&self) -> bool {
        self.think_ahead
    }

    /// Judges each new leaf by `evaluator` (every role's expected goal) instead of a random playout, as
    /// AlphaZero-style searches do with a learned judgement.
    pub fn with_evaluator(mut self, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        self.evaluator = Some(evaluator);
        self
    }
}
