//! The search tree of [`super::MctsPlayer`]: nodes, per-role move statistics and child slots in arenas,
//! one simulation (selection, expansion, a playout or an evaluator's judgement, backpropagation), the
//! solver, and keeping the subtree of the state reached.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::super::mcs::Playouts;
use super::grave::{self, Reference};
use super::pieces::Prior;
use super::policy::Policy;
use crate::evaluators::Evaluator;
use crate::game::{random_index, Captures, Game, PlayoutGuide, RoleIndex};
use crate::players::puzzle::PassThrough;

/// UCB-Tuned's constant (`+tuned`): the same exploration as UCB1's 0.4 (`mcts`'s) where rewards
/// vary most (its term is `bias · √½ · √(ln N / n)` there). Sancho's, 0.9 on Connect Four (it derives
/// one per game from the lengths of random games), lost 1-3-12 against `mcts` at 1 s.
pub const TUNED_BIAS: f64 = 0.4 * std::f64::consts::SQRT_2;

/// UCB-Tuned's exploration term as Sancho computes it: `bias · √(min(¼, σ² + √(2 ln N / n)) · 2 ln N
/// / n)` for a move tried `n` times of `N = e^log_n`, `σ²` the variance of the rewards the role
/// has seen at the node (over all its moves, so that a node whose outcome is settled explores
/// less). Where rewards vary most (σ² ≥ ¼) it is UCB1 with the constant `bias · √½`.
pub(super) fn tuned_exploration(bias: f64, variance: f64, log_n: f64, n: f64) -> f64 {
    let ucb = 2.0 * log_n.max(0.0) / n;
    bias * ((variance + ucb.sqrt()).min(0.25) * ucb).sqrt()
}

/// Joint moves of a node indexed directly (an array of child slots); nodes with more joint moves keep
/// the children they have in a short list.
pub(super) const DIRECT_CHILDREN: u32 = 256;

pub(super) const NONE: u32 = u32::MAX;

/// What sliding a tree's subtree down costs a node of the whole tree, roughly: the slide reads every
/// node. Three million nodes of a one-player game took 120 ms on the 2-core development machine,
/// where `mcts` overran a 0.1 s play clock by 70 ms sliding them.
const SLIDE_NANOS_PER_NODE: u64 = 40;

/// A rough bound on how long [`Tree::reroot`] takes to keep a subtree of a tree of `nodes` nodes.
pub(super) fn slide_time(nodes: usize) -> Duration {
    Duration::from_nanos(nodes as u64 * SLIDE_NANOS_PER_NODE)
}
/// The key a walk's path gives a joint move numbered past what a child's key holds: its picks are
/// counted, but it links no child.
pub(super) const UNKEYED: u32 = NONE - 1;
pub(super) const SIMULTANEOUS: u8 = u8::MAX;

/// Where a walk down the tree ended ([`Tree::descend`]).
pub(super) enum Descent<S> {
    /// In a node solved before the walk: its values are the walk's rewards.
    Solved,
    /// In a node it added (the last of the path), still to be judged unless solved as it was added.
    Added(u32),
    /// At a state beyond the tree, played out without a node.
    Beyond(S),
}

/// A walk of a batch of leaves (`+leaves`, see [`super::leaves`]) waiting for its playout: its
/// stretch of the batch's paths and picks, and its leaf.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    pub(super) path: (u32, u32),
    pub(super) picks: (u32, u32),
    pub(super) leaf: u32,
}

/// The scratch of a batch of leaves, kept to allocate nothing.
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) waiting: Vec<Waiting>,
    pub(super) paths: Vec<(u32, u32)>,
    pub(super) picks: Vec<u32>,
    pub(super) goals: Vec<i64>,
}

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stat {
    pub(super) visits: u32,
    pub(super) total: f64,
    /// The sum of the squared rewards, for UCB-Tuned's variance (`+tuned`).
    pub(super) squares: f32,
    /// RAVE's count of the simulations through the node in which this role played this move there
    /// or later ("all moves as first"), and their reward.
    pub(super) amaf_visits: u32,
    pub(super) amaf_total: f32,
}

/// RAVE's equivalence parameter: at `RAVE_EQUIVALENCE` visits a move's own average and its AMAF
/// average weigh about the same (β = √(k / (3n + k)), CadiaPlayer's schedule with its k = 500).
pub(super) const RAVE_EQUIVALENCE: f64 = 500.0;

#[derive(Clone, Copy, Debug)]
pub(super) enum Children {
    /// Slots `start .. start + joint moves` of `Tree::slots`.
    Direct(u32),
    /// `Tree::sparse[i]`: (joint move, child) pairs.
    Sparse(u32),
}

#[derive(Clone, Debug)]
pub(super) struct Node<S> {
    pub(super) state: S,
    pub(super) visits: u32,
    /// This node's moves and statistics are `first .. first + counts` of `Tree::moves`/`Tree::stats`;
    /// role `r`'s start at `first + Tree::starts[starts + r]`.
    pub(super) first: u32,
    pub(super) starts: u32,
    pub(super) joints: u32,
    pub(super) children: Children,
    /// The role in control, or [`SIMULTANEOUS`].
    pub(super) mover: u8,
    /// Exact goal values (0..=1 per role) at `Tree::exact[exact * roles ..]`, or [`NONE`].
    pub(super) exact: u32,
}

pub(super) struct Tree<S, M> {
    pub(super) roles: usize,
    pub(super) nodes: Vec<Node<S>>,
    pub(super) stats: Vec<Stat>,
    pub(super) moves: Vec<M>,
    pub(super) starts: Vec<u32>,
    pub(super) slots: Vec<u32>,
    pub(super) sparse: Vec<Vec<(u32, u32)>>,
    pub(super) exact: Vec<f64>,
    pub(super) rng: SmallRng,
    pub(super) playouts: Playouts,
    /// Playouts per leaf (1: one playout, cautious where playouts are slow; more: one batch through
    /// [`Game::playout_goals`], averaged).
    pub(super) leaf_playouts: u32,
    pub(super) goal_totals: Vec<i64>,
    /// The moves of a simulation by number, and MAST's averages, when MAST or RAVE is on.
    pub(super) policy: Option<Policy>,
    /// Whether selection blends in the AMAF statistics (RAVE; needs `policy`).
    pub(super) rave: bool,
    /// GRAVE's reference node, when selection takes the AMAF statistics from it (with `rave`, which
    /// gathers them; see [`super::grave`]).
    pub(super) reference: Option<Reference>,
    /// Transpositions: every node by its state's key ([`Game::state_key`]), when equal states
    /// reached by different moves share one node (and its statistics). The tree is then a graph.
    pub(super) table: Option<HashMap<u64, u32, PassThrough>>,
    /// Piece counts that seed each new node's value for the role that moved into it (`+pieces`).
    pub(super) prior: Option<Prior>,
    /// Captures that playouts take with the probability beside them (`+captures`).
    pub(super) captures: Option<(Arc<Captures>, f64)>,
    /// Whether each new node's mover is checked for a move that wins at once, which is added and
    /// solves the node before any playout from it.
    pub(super) lookahead: bool,
    /// Selection by UCB-Tuned (`+tuned`, see [`tuned_exploration`]) instead of UCB1.
    pub(super) tuned: bool,
    /// Node score normalisation (`+norm`, see [`super::normalize`]).
    pub(super) normalize: bool,
    /// Walks detour around a solved move that selection would take (`+detour`): they go on through
    /// the best unsolved move instead, which is where something is left to learn, and the nodes
    /// above are given the solved move's value, as if the walk had taken it (Sancho's score
    /// overrides).
    pub(super) detour: bool,
    /// Whether a greedy playout from a new node that ends at once is checked for a proof
    /// (`+endings`, see [`super::endings`]).
    pub(super) endings: bool,
    /// Whether simultaneous nodes of a two-role constant-sum game are solved at a pure saddle
    /// point of their solved children (`+saddle`, see [`super::saddle`]).
    pub(super) saddles: bool,
    /// One-player games (with `policy`): the best reward a simulation has reached from the root, and
    /// the moves (by number) that reached it, which a deterministic game lets the player repeat.
    pub(super) best_line: Vec<u32>,
    pub(super) best_reward: f64,
    /// Simulations of the current search that learned something: a playout, a judgement, or a node
    /// found terminal.
    pub(super) simulations: u64,
    /// Walks of the current search that ended in a node already solved, learning nothing new.
    pub(super) solved_walks: u64,
    // Scratch of one simulation, kept to allocate nothing.
    pub(super) path: Vec<(u32, u32)>,
    pub(super) picks: Vec<u32>,
    pub(super) rewards: Vec<f64>,
    pub(super) joint: Vec<M>,
    pub(super) buf: Vec<M>,
    pub(super) numbers: Vec<u32>,
    /// Per node of the path that picked moves, where its moves start in the policy's record.
    pub(super) marks: Vec<u32>,
    /// The detours of the walk: the index in `path` of a node whose walk went around a solved
    /// child, and that child.
    pub(super) detours: Vec<(u32, u32)>,
    /// The solved child the last selection went around, or [`NONE`].
    pub(super) detoured: u32,
    /// Whether simulations run in batches of leaves (`+leaves`, see [`super::leaves`]).
    pub(super) leaves: bool,
    /// The scratch of a batch of leaves.
    pub(super) batch: Batch,
}

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    pub(super) fn new(roles: usize, seed: u64) -> Self {
        Tree {
            roles,
            nodes: Vec::new(),
            stats: Vec::new(),
            moves: Vec::new(),
            starts: Vec::new(),
            slots: Vec::new(),
            sparse: Vec::new(),
            exact: Vec::new(),
            rng: SmallRng::seed_from_u64(seed),
            playouts: Playouts::new(),
            leaf_playouts: 1,
            goal_totals: vec![0; roles],
            policy: None,
            captures: None,
            rave: false,
            reference: None,
            table: None,
            prior: None,
            lookahead: false,
            tuned: false,
            normalize: false,
            detour: false,
            endings: false,
            saddles: false,
            best_line: Vec::new(),
            best_reward: 0.0,
            simulations: 0,
            solved_walks: 0,
            path: Vec::new(),
            picks: Vec::new(),
            rewards: vec![0.0; roles],
            joint: Vec::new(),
            buf: Vec::new(),
            numbers: Vec::new(),
            marks: Vec::new(),
            detours: Vec::new(),
            detoured: NONE,
            leaves: false,
            batch: Batch::default(),
        }
    }

    pub(super) fn count(&self, node: &Node<S>, role: usize) -> u32 {
        let s = node.starts as usize;
        self.starts[s + role + 1] - self.starts[s + role]
    }

    pub(super) fn stat_index(&self, node: &Node<S>, role: usize, i: u32) -> usize {
        (node.first + self.starts[node.starts as usize + role] + i) as usize
    }

    pub(super) fn child(&self, node: &Node<S>, joint: u32) -> u32 {
        match node.children {
            Children::Direct(start) => self.slots[(start + joint) as usize],
            Children::Sparse(i) => self.sparse[i as usize]
                .iter()
                .find(|&&(j, _)| j == joint)
                .map_or(NONE, |&(_, c)| c),
        }
    }

    pub(super) fn set_child(&mut self, node: u32, joint: u32, child: u32) {
        match self.nodes[node as usize].children {
            Children::Direct(start) => self.slots[(start + joint) as usize] = child,
            Children::Sparse(i) => self.sparse[i as usize].push((joint, child)),
        }
    }

    pub(super) fn exact_of(&self, node: &Node<S>) -> Option<&[f64]> {
        (node.exact != NONE).then(|| {
            let at = node.exact as usize * self.roles;
            &self.exact[at..at + self.roles]
        })
    }

    /// Makes room for `total` nodes in every arena, their moves, statistics and child slots in the
    /// proportions the tree has so far.
    pub(super) fn reserve_nodes(&mut self, total: usize) {
        let n = self.nodes.len().max(1);
        if total <= self.nodes.capacity() {
            return;
        }
        let more = total - n;
        let per_node = |len: usize| len.div_ceil(n) + 1;
        self.nodes.reserve(more);
        self.stats.reserve(more * per_node(self.stats.len()));
        self.moves.reserve(more * per_node(self.moves.len()));
        self.starts.reserve(more * (self.roles + 1));
        self.slots.reserve(more * per_node(self.slots.len()));
    }

    /// Copies `node`'s exact values into the rewards, if it has them.
    pub(super) fn load_exact(&mut self, node: u32) -> bool {
        let e = self.nodes[node as usize].exact;
        if e == NONE {
            return false;
        }
        let at = e as usize * self.roles;
        self.rewards
            .copy_from_slice(&self.exact[at..at + self.roles]);
        true
    }

    pub(super) fn set_exact(&mut self, node: u32, values: impl IntoIterator<Item = f64>) {
        let index = (self.exact.len() / self.roles) as u32;
        self.exact.extend(values);
        self.nodes[node as usize].exact = index;
    }

    /// Solves `node` with the exact values of the solved node `from`.
    pub(super) fn solve_as(&mut self, node: u32, from: u32) {
        let at = self.nodes[from as usize].exact as usize * self.roles;
        let index = (self.exact.len() / self.roles) as u32;
        self.exact.extend_from_within(at..at + self.roles);
        self.nodes[node as usize].exact = index;
    }

    /// Adds a node for `state`; its index.
    pub(super) fn add<G: Game<State = S, Move = M>>(&mut self, game: &G, state: S) -> u32 {
        let index = self.nodes.len() as u32;
        let first = self.moves.len() as u32;
        let starts = self.starts.len() as u32;
        self.starts.push(0);
        let mut joints: u64 = 1;
        let terminal = game.is_terminal(&state);
        let mut stuck = false;
        if !terminal {
            for r in 0..self.roles {
                game.legal_moves(&state, r, &mut self.buf);
                stuck |= self.buf.is_empty();
                joints = joints.saturating_mul(self.buf.len() as u64);
                self.moves.append(&mut self.buf);
                self.starts.push(self.moves.len() as u32 - first);
            }
        } else {
            self.starts.extend(std::iter::repeat_n(0, self.roles));
        }
        self.stats.resize(self.moves.len(), Stat::default());
        let joints = joints.min(u64::from(NONE - 1)) as u32;
        let children = if terminal || stuck {
            Children::Direct(0)
        } else if joints <= DIRECT_CHILDREN {
            let start = self.slots.len() as u32;
            self.slots
                .extend(std::iter::repeat_n(NONE, joints as usize));
            Children::Direct(start)
        } else {
            self.sparse.push(Vec::new());
            Children::Sparse(self.sparse.len() as u32 - 1)
        };
        let mover = if terminal || stuck {
            SIMULTANEOUS
        } else {
            game.mover(&state)
                .map_or(SIMULTANEOUS, |r| r.min(254) as u8)
        };
        if let Some(table) = &mut self.table {
            table.insert(game.state_key(&state), index);
        }
        self.nodes.push(Node {
            state,
            visits: 0,
            first,
            starts,
            joints,
            children,
            mover,
            exact: NONE,
        });
        if terminal || stuck {
            // A role without a legal move in a state that is not terminal: the rules misbehave, and the
            // goals of the state are the best anyone can say.
            let goals: Vec<f64> = (0..self.roles)
                .map(|r| goal_reward(game, &self.nodes[index as usize].state, r))
                .collect();
            self.set_exact(index, goals);
        }
        index
    }

    /// UCB1 for `role` at `node`: the index of its move to play.
    pub(super) fn select<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        node: u32,
        role: usize,
        exploration: f64,
    ) -> u32 {
        let n = &self.nodes[node as usize];
        let count = self.count(n, role);
        if count == 1 {
            return 0;
        }
        let first = self.stat_index(n, role, 0);
        let solver = n.mover as usize == role;
        let log_n = f64::from(n.visits.max(1)).ln();
        let variance = if self.tuned {
            let (mut v, mut t, mut q) = (0u32, 0.0, 0.0f64);
            for st in &self.stats[first..first + count as usize] {
                v += st.visits;
                t += st.total;
                q += f64::from(st.squares);
            }
            let v = f64::from(v.max(1));
            (q / v - (t / v) * (t / v)).max(0.0)
        } else {
            0.0
        };
        let offset = random_index(&mut self.rng, count as usize) as u32;
        let mut best = (f64::NEG_INFINITY, 0);
        // A solved move (not a win) set aside by a detour: its value and index.
        let detour = solver && self.detour;
        let mut best_around = (f64::NEG_INFINITY, 0);
        // In a puzzle searched for its best line, a solved move is known and walking into it again
        // learns nothing: the walks go to the others (the best line keeps what the solved ones
        // reached), and to the best solved move only when every move is solved.
        let puzzle = self.roles == 1 && self.policy.is_some();
        let mut best_solved = (f64::NEG_INFINITY, 0);
        for k in 0..count {
            let i = (k + offset) % count;
            let st = self.stats[first + i as usize];
            let exact = if solver {
                let child = self.child(n, i);
                if child == NONE {
                    None
                } else {
                    self.exact_of(&self.nodes[child as usize]).map(|v| v[role])
                }
            } else {
                None
            };
            let score = match exact {
                Some(v) if v >= 1.0 => return i,
                Some(v) if puzzle => {
                    if v > best_solved.0 {
                        best_solved = (v, i);
                    }
                    continue;
                }
                Some(v) if detour => {
                    if v > best_around.0 {
                        best_around = (v, i);
                    }
                    continue;
                }
                Some(v) => v,
                None if self.reference.is_some() => {
                    match self.grave_value(game, role, first + i as usize) {
                        Some(v) => v,
                        None => return i,
                    }
                }
                None if st.visits == 0 && (!self.rave || st.amaf_visits == 0) => return i,
                None if self.rave => {
                    // A move not yet tried here is judged by its AMAF average alone, with the
                    // exploration of a move tried once.
                    let v = f64::from(st.visits);
                    let beta = (RAVE_EQUIVALENCE / (3.0 * v + RAVE_EQUIVALENCE)).sqrt();
                    let amaf = f64::from(st.amaf_total) / f64::from(st.amaf_visits.max(1));
                    let own = if st.visits == 0 { amaf } else { st.total / v };
                    let beta = if st.amaf_visits == 0 { 0.0 } else { beta };
                    (1.0 - beta) * own + beta * amaf + exploration * (log_n / v.max(1.0)).sqrt()
                }
                None if self.tuned => {
                    let v = f64::from(st.visits);
                    st.total / v + tuned_exploration(exploration, variance, log_n, v)
                }
                None => {
                    let v = f64::from(st.visits);
                    st.total / v + exploration * (log_n / v).sqrt()
                }
            };
            if score > best.0 {
                best = (score, i);
            }
        }
        if best_around.0 > best.0 {
            if best.0 == f64::NEG_INFINITY {
                // Every move is solved: the node is, once the walk reaches the best child.
                return best_around.1;
            }
            self.detoured = self.child(&self.nodes[node as usize], best_around.1);
        }
        if best.0 == f64::NEG_INFINITY {
            best_solved.1
        } else {
            best.1
        }
    }

    /// GRAVE: makes `node` the walk's reference when it takes over (see [`grave`]), entering its
    /// moves' statistics by move number.
    pub(super) fn refer<G: Game<State = S, Move = M>>(&mut self, game: &G, node: u32) {
        let Some(mut reference) = self.reference.take() else {
            return;
        };
        let n = &self.nodes[node as usize];
        if reference.takes_over(node, n.visits) {
            reference.begin(node);
            for r in 0..self.roles {
                for i in 0..self.count(n, r) {
                    let at = self.stat_index(n, r, i);
                    if let Some(number) = game.move_number(&self.moves[at]) {
                        reference.enter(r, number, at);
                    }
                }
            }
        }
        self.reference = Some(reference);
    }

    /// GRAVE's value of `role`'s move at statistics index `at`, with the reference's all-moves-as-first
    /// statistics of the same move; `None` when neither has tried it.
    pub(super) fn grave_value<G: Game<State = S, Move = M>>(
        &self,
        game: &G,
        role: usize,
        at: usize,
    ) -> Option<f64> {
        let st = self.stats[at];
        let amaf = game
            .move_number(&self.moves[at])
            .and_then(|number| self.reference.as_ref()?.get(role, number))
            .map_or((0.0, 0), |j| {
                let s = self.stats[j];
                (f64::from(s.amaf_total), s.amaf_visits)
            });
        grave::value(st.visits, st.total, amaf)
    }

    /// When `node`'s mover (in a turn-taking state) has a move that wins at once
    /// ([`Game::decisive_move`]), adds that move's child, which solves `node` as the mover's win.
    pub(super) fn take_decisive_move<G: Game<State = S, Move = M>>(&mut self, game: &G, node: u32) {
        let n = &self.nodes[node as usize];
        if n.exact != NONE || n.mover == SIMULTANEOUS {
            return;
        }
        let mover = n.mover as usize;
        if (0..self.roles).any(|r| r != mover && self.count(n, r) != 1) {
            return;
        }
        let Some(i) = game.decisive_move(&n.state, mover, &mut self.buf) else {
            return;
        };
        // Every other role has one move: the joint move's number is the mover's move's.
        if (i as u32) < self.count(n, mover) {
            self.turn_child(game, node, i as u32);
            self.try_solve(node);
        }
    }

    /// The child of `node` by its mover's move `joint` (every other role has one move), linked
    /// first where the graph lacks it: the node of its state when there is one, else a new node.
    pub(super) fn turn_child<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        node: u32,
        joint: u32,
    ) -> u32 {
        let n = &self.nodes[node as usize];
        let child = self.child(n, joint);
        if child != NONE {
            return child;
        }
        let mover = n.mover as usize;
        self.joint.clear();
        for r in 0..self.roles {
            let at = self.stat_index(n, r, if r == mover { joint } else { 0 });
            self.joint.push(self.moves[at].clone());
        }
        let after = game.next_state(&n.state, &self.joint);
        let child = match self.transposition(game, &after) {
            NONE => self.add(game, after),
            known => known,
        };
        self.set_child(node, joint, child);
        child
    }

    /// The node of `state` already in the graph (transpositions on), or [`NONE`].
    pub(super) fn transposition<G: Game<State = S, Move = M>>(&self, game: &G, state: &S) -> u32 {
        let Some(table) = &self.table else {
            return NONE;
        };
        match table.get(&game.state_key(state)) {
            Some(&n) if self.nodes[n as usize].state == *state => n,
            _ => NONE,
        }
    }

    /// Whether the current walk passed `node` (only a graph can lead back to it).
    pub(super) fn on_path(&self, node: u32) -> bool {
        self.table.is_some() && self.path.iter().any(|&(n, _)| n == node)
    }

    /// Turns transpositions on or off: on, every node is filed by its state's key.
    pub(super) fn share_transpositions<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        on: bool,
    ) {
        if !on {
            self.table = None;
        } else if self.table.is_none() {
            let mut table = HashMap::with_capacity_and_hasher(self.nodes.len(), PassThrough);
            for (i, n) in self.nodes.iter().enumerate() {
                table.insert(game.state_key(&n.state), i as u32);
            }
            self.table = Some(table);
        }
    }

    /// One simulation from the root; when the tree is `full` it adds no node (the playout still counts).
    /// A playout cut by the deadline is not counted.
    pub(super) fn simulate<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        evaluator: Option<&dyn Evaluator<G>>,
        exploration: f64,
        full: bool,
        deadline: Instant,
    ) {
        let mut solved_before = false;
        // Whether the walk ended at a node solved as it was added (no playout either way).
        let mut proven_leaf = false;
        match self.descend(game, exploration, full) {
            Descent::Solved => solved_before = true,
            Descent::Beyond(next) => {
                if !self.play_out(game, &next, deadline) {
                    return;
                }
            }
            Descent::Added(child) => {
                proven_leaf = self.load_exact(child);
                if !proven_leaf {
                    // The fields apart, so the new node's state is played out where it lies.
                    let Tree {
                        nodes,
                        rng,
                        buf,
                        rewards,
                        playouts,
                        leaf_playouts,
                        goal_totals,
                        numbers,
                        policy,
                        captures,
                        ..
                    } = self;
                    let from = &nodes[child as usize].state;
                    if let Some(evaluator) = evaluator {
                        if evaluator.values(game, from, rewards).is_err() {
                            return;
                        }
                        for reward in rewards.iter_mut() {
                            *reward = (*reward / 100.0).clamp(0.0, 1.0);
                        }
                    } else if *leaf_playouts > 1 {
                        goal_totals.fill(0);
                        let n = game.playout_goals(
                            from,
                            rng,
                            buf,
                            *leaf_playouts,
                            goal_totals,
                            Some(deadline),
                        );
                        if n == 0 {
                            // The deadline came first: nothing to back up.
                            return;
                        }
                        for (reward, total) in rewards.iter_mut().zip(goal_totals.iter()) {
                            *reward =
                                (*total as f64 / (100.0 * f64::from(n.max(1)))).clamp(0.0, 1.0);
                        }
                    } else if !playout(
                        game,
                        from,
                        (rng, buf, numbers),
                        policy.as_mut(),
                        captures.as_ref().map(|(t, rate)| (&**t, *rate)),
                        rewards,
                        playouts,
                        deadline,
                    ) {
                        return;
                    } else {
                        let steps = playouts.steps;
                        self.prove_ending(game, child, steps);
                    }
                }
            }
        }
        self.finish(game, solved_before, proven_leaf);
    }

    /// A playout from `from` (a state no node holds) into `rewards`; false when the deadline cut it.
    pub(super) fn play_out<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        from: &S,
        deadline: Instant,
    ) -> bool {
        let Tree {
            rng,
            buf,
            numbers,
            rewards,
            playouts,
            policy,
            captures,
            ..
        } = self;
        let (guide, c) = (policy.as_mut(), captures.as_ref());
        let c = c.map(|(t, rate)| (&**t, *rate));
        playout(
            game,
            from,
            (rng, buf, numbers),
            guide,
            c,
            rewards,
            playouts,
            deadline,
        )
    }

    /// Ends a walk whose `rewards` are known: what the walk learnt is backed up along `path`, and
    /// counted as a simulation, or as a walk into a node solved before it (`solved_before`).
    pub(super) fn finish<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        solved_before: bool,
        proven_leaf: bool,
    ) {
        if self.rave {
            self.update_amaf(game);
        }
        self.keep_best_line(game, solved_before || proven_leaf);
        if let Some(p) = &mut self.policy {
            p.learn(&self.rewards);
        }
        self.backpropagate();
        if solved_before {
            self.solved_walks += 1;
        } else {
            self.simulations += 1;
        }
    }

    /// The best line (see `best_line`) as seen from `state`: the same line when `state` is the root,
    /// its rest when `state` follows the root by its first move, else nothing.
    fn line_after<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        state: &S,
        mut line: Vec<u32>,
    ) -> Vec<u32> {
        let Some(root) = self.nodes.first() else {
            return Vec::new();
        };
        if root.state == *state || line.is_empty() {
            return line;
        }
        game.legal_moves(&root.state, 0, &mut self.buf);
        let first = self
            .buf
            .iter()
            .find(|m| game.move_number(m) == Some(line[0]));
        if first.is_some_and(|m| game.play(&root.state, 0, m) == *state) {
            line.remove(0);
            line
        } else {
            Vec::new()
        }
    }

    /// Walks down the tree in the current search, solved or not: what limits and paces it.
    pub(super) fn walks(&self) -> u64 {
        self.simulations + self.solved_walks
    }

    pub(super) fn backpropagate(&mut self) {
        let roles = self.roles;
        let mut picks = self.picks.len();
        let mut newly_exact = false;
        for k in (0..self.path.len()).rev() {
            let (node, joint) = self.path[k];
            self.nodes[node as usize].visits += 1;
            if joint == NONE {
                newly_exact = self.nodes[node as usize].exact != NONE;
                continue;
            }
            picks -= roles;
            for r in 0..roles {
                let at = self.stat_index(&self.nodes[node as usize], r, self.picks[picks + r]);
                let st = &mut self.stats[at];
                st.visits += 1;
                st.total += self.rewards[r];
                st.squares += (self.rewards[r] * self.rewards[r]) as f32;
            }
            if self.normalize {
                self.normalise_at(k);
            }
            if newly_exact {
                newly_exact = self.try_solve(node);
            }
            // Above a detour, the walk is worth what the solved move it went around is worth.
            if let Some(&(at, solved)) = self.detours.last() {
                if at as usize == k {
                    self.detours.pop();
                    self.load_exact(solved);
                }
            }
        }
    }

    /// Makes `node` exact if its children allow it (see the module documentation); whether it is exact.
    pub(super) fn try_solve(&mut self, node: u32) -> bool {
        let n = &self.nodes[node as usize];
        if n.exact != NONE {
            return true;
        }
        if n.mover == SIMULTANEOUS && self.saddles {
            let Some(meet) = self.saddle_point(node) else {
                return false;
            };
            self.solve_as(node, meet);
            return true;
        }
        let mut best: Option<u32> = None;
        let mut all = true;
        let mover = n.mover;
        for joint in 0..n.joints {
            let child = self.child(n, joint);
            let Some(v) = (child != NONE)
                .then(|| self.exact_of(&self.nodes[child as usize]))
                .flatten()
            else {
                all = false;
                if mover == SIMULTANEOUS {
                    return false;
                }
                continue;
            };
            match mover {
                SIMULTANEOUS => {
                    if let Some(b) = best {
                        if self.exact_of(&self.nodes[b as usize]) != Some(v) {
                            return false;
                        }
                    }
                    best = Some(child);
                }
                m => {
                    let m = m as usize;
                    if v[m] >= 1.0 {
                        best = Some(child);
                        all = true;
                        break;
                    }
                    let better = best.is_none_or(|b| {
                        self.exact_of(&self.nodes[b as usize])
                            .is_none_or(|bv| v[m] > bv[m])
                    });
                    if better {
                        best = Some(child);
                    }
                }
            }
        }
        match best {
            Some(b) if all => {
                self.solve_as(node, b);
                true
            }
            _ => false,
        }
    }

    /// Node 0's state is `state`, keeping what the tree knows of it when the state is the root or one of
    /// its children or grandchildren, and when sliding that part down fits in `afford`; else the tree
    /// starts again from `state`, and a big old tree is returned for the caller to drop when no
    /// clock runs (see [`Tree::let_go`]).
    #[must_use = "a big old tree is the caller's to drop when no clock runs"]
    pub(super) fn reroot<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        state: &S,
        seed: u64,
        afford: Duration,
    ) -> Option<Tree<S, M>>
    where
        S: Send + 'static,
    {
        let slides = slide_time(self.nodes.len()) <= afford;
        let found = self.nodes.first().and_then(|root| {
            if root.state == *state {
                return Some(0);
            }
            let children = self.children_of(0);
            children
                .iter()
                .copied()
                .find(|&c| self.nodes[c as usize].state == *state)
                .or_else(|| {
                    children.iter().find_map(|&c| {
                        self.children_of(c)
                            .into_iter()
                            .find(|&g| self.nodes[g as usize].state == *state)
                    })
                })
                .filter(|_| slides)
        });
        // What outlives the tree's nodes: MAST's averages and a puzzle's best line (`rave` is set
        // again by the player after every reroot).
        let policy = self.policy.take();
        let (line, reward) = (std::mem::take(&mut self.best_line), self.best_reward);
        let line = self.line_after(game, state, line);
        let mut old = None;
        match found {
            Some(0) => {}
            Some(node) => {
                // `node` was found in this tree, so the slide has it.
                if let Some(kept) = self.slide_subtree(node, seed) {
                    *self = kept;
                }
            }
            None => {
                old = self.let_go(seed);
                self.add(game, state.clone());
            }
        }
        self.policy = policy;
        self.best_reward = if line.is_empty() { 0.0 } else { reward };
        self.best_line = line;
        self.simulations = 0;
        self.solved_walks = 0;
        old
    }

    /// The children `node` links, solved or not (a solved node keeps its children: the next move's
    /// search starts from them, and a win proven deep in a big tree is not proven again from
    /// nothing).
    pub(super) fn children_of(&self, node: u32) -> Vec<u32> {
        let n = &self.nodes[node as usize];
        match n.children {
            Children::Direct(_) if self.no_slots(node) => Vec::new(),
            Children::Direct(start) => self.slots[start as usize..(start + n.joints) as usize]
                .iter()
                .copied()
                .filter(|&c| c != NONE)
                .collect(),
            Children::Sparse(i) => self.sparse[i as usize].iter().map(|&(_, c)| c).collect(),
        }
    }
}

/// A random playout from `from` (guided by `policy`, taking pieces as `captures` says); every role's
/// goal at its end, scaled to 0..=1, into `rewards`. False when the deadline cut it.
#[allow(clippy::too_many_arguments)]
pub(super) fn playout<G: Game>(
    game: &G,
    from: &G::State,
    (rng, buf, numbers): (&mut SmallRng, &mut Vec<G::Move>, &mut Vec<u32>),
    policy: Option<&mut Policy>,
    captures: Option<(&Captures, f64)>,
    rewards: &mut [f64],
    playouts: &mut Playouts,
    deadline: Instant,
) -> bool {
    let end = match (captures, policy) {
        (Some(c), policy) => {
            let guide = policy.map(|p| p as &mut dyn PlayoutGuide);
            playouts.run_capturing(game, from, rng, buf, numbers, c, guide, deadline)
        }
        (None, Some(policy)) => {
            playouts.run_guided(game, from, rng, buf, numbers, policy, deadline)
        }
        (None, None) => playouts.run(game, from, rng, buf, deadline),
    };
    let Some(end) = end else {
        return false;
    };
    for (r, reward) in rewards.iter_mut().enumerate() {
        *reward = goal_reward(game, &end, r);
    }
    true
}

pub(super) fn goal_reward<G: Game>(game: &G, state: &G::State, role: RoleIndex) -> f64 {
    goal_reward_of(i64::from(game.goal(state, role)))
}

/// A goal value (0..=100) as a reward (0..=1).
pub(super) fn goal_reward_of(goal: i64) -> f64 {
    goal.clamp(0, 100) as f64 / 100.0
}
