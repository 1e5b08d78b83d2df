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
//! value is below one already proven (a proven loss when a draw is proven), and plays a proven win at
//! once. Simultaneous-move nodes are exact only when every joint move leads to the same exact outcome.
//!
//! **Final move**: the most visited; **threads**: root parallelism, one tree per thread (no locks), the
//! root statistics summed at the end; **reuse**: the subtree of the state actually reached is kept for
//! the next move (found among the old root's children and grandchildren by state equality and copied
//! out, which also frees the rest).
//!
//! Hot loop: a simulation allocates only the node it adds (its state, move list and statistics go into
//! arenas) and indexes its children by the joint move's mixed-radix number, hashing nothing.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use std::sync::Arc;

use crate::evaluators::Evaluator;
use crate::game::{random_index, Game, GameError, RoleIndex};
use crate::players::clock::{role_seed, Deadline, Progress, ProgressTimer, Ticker};
use crate::players::mcs::Playouts;
use crate::players::{forced_choice, thousands, Choice, Player, PlayerError, SearchStats};

/// UCB1's exploration constant for rewards in 0..=1 (CadiaPlayer's 40 on the 0..100 scale).
pub const DEFAULT_EXPLORATION: f64 = 0.4;

/// Nodes all trees together may hold; past it, simulations still run but add no node.
const MAX_NODES: usize = 3_000_000;

/// Joint moves of a node indexed directly (an array of child slots); nodes with more joint moves keep
/// the children they have in a short list.
const DIRECT_CHILDREN: u32 = 4096;

const NONE: u32 = u32::MAX;
const SIMULTANEOUS: u8 = u8::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct Stat {
    visits: u32,
    total: f64,
}

#[derive(Clone, Copy, Debug)]
enum Children {
    /// Slots `start .. start + joint moves` of `Tree::slots`.
    Direct(u32),
    /// `Tree::sparse[i]`: (joint move, child) pairs.
    Sparse(u32),
}

#[derive(Clone, Debug)]
struct Node<S> {
    state: S,
    visits: u32,
    /// This node's moves and statistics are `first .. first + counts` of `Tree::moves`/`Tree::stats`;
    /// role `r`'s start at `first + Tree::starts[starts + r]`.
    first: u32,
    starts: u32,
    joints: u32,
    children: Children,
    /// The role in control, or [`SIMULTANEOUS`].
    mover: u8,
    /// Exact goal values (0..=1 per role) at `Tree::exact[exact * roles ..]`, or [`NONE`].
    exact: u32,
}

struct Tree<S, M> {
    roles: usize,
    nodes: Vec<Node<S>>,
    stats: Vec<Stat>,
    moves: Vec<M>,
    starts: Vec<u32>,
    slots: Vec<u32>,
    sparse: Vec<Vec<(u32, u32)>>,
    exact: Vec<f64>,
    rng: SmallRng,
    playouts: Playouts,
    /// Playouts per leaf (1: one playout, cautious where playouts are slow; more: one batch through
    /// [`Game::playout_goals`], averaged).
    leaf_playouts: u32,
    goal_totals: Vec<i64>,
    /// Simulations run in the current search.
    simulations: u64,
    // Scratch of one simulation, kept to allocate nothing.
    path: Vec<(u32, u32)>,
    picks: Vec<u32>,
    rewards: Vec<f64>,
    joint: Vec<M>,
    buf: Vec<M>,
}

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    fn new(roles: usize, seed: u64) -> Self {
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
            simulations: 0,
            path: Vec::new(),
            picks: Vec::new(),
            rewards: vec![0.0; roles],
            joint: Vec::new(),
            buf: Vec::new(),
        }
    }

    fn count(&self, node: &Node<S>, role: usize) -> u32 {
        let s = node.starts as usize;
        self.starts[s + role + 1] - self.starts[s + role]
    }

    fn stat_index(&self, node: &Node<S>, role: usize, i: u32) -> usize {
        (node.first + self.starts[node.starts as usize + role] + i) as usize
    }

    fn child(&self, node: &Node<S>, joint: u32) -> u32 {
        match node.children {
            Children::Direct(start) => self.slots[(start + joint) as usize],
            Children::Sparse(i) => self.sparse[i as usize]
                .iter()
                .find(|&&(j, _)| j == joint)
                .map_or(NONE, |&(_, c)| c),
        }
    }

    fn set_child(&mut self, node: u32, joint: u32, child: u32) {
        match self.nodes[node as usize].children {
            Children::Direct(start) => self.slots[(start + joint) as usize] = child,
            Children::Sparse(i) => self.sparse[i as usize].push((joint, child)),
        }
    }

    fn exact_of(&self, node: &Node<S>) -> Option<&[f64]> {
        (node.exact != NONE).then(|| {
            let at = node.exact as usize * self.roles;
            &self.exact[at..at + self.roles]
        })
    }

    /// Makes room for `total` nodes in every arena, their moves, statistics and child slots in the
    /// proportions the tree has so far.
    fn reserve_nodes(&mut self, total: usize) {
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
    fn load_exact(&mut self, node: u32) -> bool {
        let e = self.nodes[node as usize].exact;
        if e == NONE {
            return false;
        }
        let at = e as usize * self.roles;
        self.rewards
            .copy_from_slice(&self.exact[at..at + self.roles]);
        true
    }

    fn set_exact(&mut self, node: u32, values: impl IntoIterator<Item = f64>) {
        let index = (self.exact.len() / self.roles) as u32;
        self.exact.extend(values);
        self.nodes[node as usize].exact = index;
    }

    /// Adds a node for `state`; its index.
    fn add<G: Game<State = S, Move = M>>(&mut self, game: &G, state: S) -> u32 {
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
    fn select(&mut self, node: u32, role: usize, exploration: f64) -> u32 {
        let n = &self.nodes[node as usize];
        let count = self.count(n, role);
        if count == 1 {
            return 0;
        }
        let first = self.stat_index(n, role, 0);
        let solver = n.mover as usize == role;
        let log_n = f64::from(n.visits.max(1)).ln();
        let offset = random_index(&mut self.rng, count as usize) as u32;
        let mut best = (f64::NEG_INFINITY, 0);
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
                Some(v) => v,
                None if st.visits == 0 => return i,
                None => {
                    let v = f64::from(st.visits);
                    st.total / v + exploration * (log_n / v).sqrt()
                }
            };
            if score > best.0 {
                best = (score, i);
            }
        }
        best.1
    }

    /// One simulation from the root; when the tree is `full` it adds no node (the playout still counts).
    /// A playout cut by the deadline is not counted.
    fn simulate<G: Game<State = S, Move = M>>(
        &mut self,
        game: &G,
        evaluator: Option<&dyn Evaluator<G>>,
        exploration: f64,
        full: bool,
        deadline: Instant,
    ) {
        self.path.clear();
        self.picks.clear();
        let roles = self.roles;
        let mut node = 0u32;
        loop {
            if self.load_exact(node) {
                self.path.push((node, NONE));
                break;
            }
            let mut joint = 0u32;
            let mut radix = 1u32;
            for r in 0..roles {
                let i = self.select(node, r, exploration);
                self.picks.push(i);
                joint += i * radix;
                radix = radix.saturating_mul(self.count(&self.nodes[node as usize], r));
            }
            self.path.push((node, joint));
            let child = self.child(&self.nodes[node as usize], joint);
            if child != NONE {
                node = child;
                continue;
            }
            let picks = &self.picks[self.picks.len() - roles..];
            self.joint.clear();
            for (r, &i) in picks.iter().enumerate() {
                let at = self.stat_index(&self.nodes[node as usize], r, i);
                self.joint.push(self.moves[at].clone());
            }
            let next = game.next_state(&self.nodes[node as usize].state, &self.joint);
            if full {
                let Tree {
                    rng,
                    buf,
                    rewards,
                    playouts,
                    ..
                } = self;
                if !playout(game, &next, rng, buf, rewards, playouts, deadline) {
                    return;
                }
                break;
            }
            let child = self.add(game, next);
            self.set_child(node, joint, child);
            self.path.push((child, NONE));
            if !self.load_exact(child) {
                // The fields apart, so the new node's state is played out where it lies.
                let Tree {
                    nodes,
                    rng,
                    buf,
                    rewards,
                    playouts,
                    leaf_playouts,
                    goal_totals,
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
                    let n = game.playout_goals(from, rng, buf, *leaf_playouts, goal_totals);
                    for (reward, total) in rewards.iter_mut().zip(goal_totals.iter()) {
                        *reward = (*total as f64 / (100.0 * f64::from(n.max(1)))).clamp(0.0, 1.0);
                    }
                } else if !playout(game, from, rng, buf, rewards, playouts, deadline) {
                    return;
                }
            }
            break;
        }
        self.backpropagate();
        self.simulations += 1;
    }

    fn backpropagate(&mut self) {
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
            }
            if newly_exact {
                newly_exact = self.try_solve(node);
            }
        }
    }

    /// Makes `node` exact if its children allow it (see the module documentation); whether it is exact.
    fn try_solve(&mut self, node: u32) -> bool {
        let n = &self.nodes[node as usize];
        if n.exact != NONE {
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
                let at = self.nodes[b as usize].exact as usize * self.roles;
                let values: Vec<f64> = self.exact[at..at + self.roles].to_vec();
                self.set_exact(node, values);
                true
            }
            _ => false,
        }
    }

    /// The tree below `node` as a tree of its own (node 0), for the next search.
    fn subtree(&self, node: u32, seed: u64) -> Tree<S, M> {
        let mut out = Tree::new(self.roles, seed);
        let mut stack = vec![(node, NONE, 0u32)];
        while let Some((from, parent, joint)) = stack.pop() {
            let n = &self.nodes[from as usize];
            let index = out.nodes.len() as u32;
            let total = self.starts[n.starts as usize + self.roles];
            let first = out.moves.len() as u32;
            let range = n.first as usize..(n.first + total) as usize;
            out.moves.extend_from_slice(&self.moves[range.clone()]);
            out.stats.extend_from_slice(&self.stats[range]);
            let starts = out.starts.len() as u32;
            out.starts.extend_from_slice(
                &self.starts[n.starts as usize..n.starts as usize + self.roles + 1],
            );
            let children = match n.children {
                Children::Direct(_) if n.exact != NONE && total == 0 => Children::Direct(0),
                Children::Direct(start) => {
                    let own = out.slots.len() as u32;
                    out.slots
                        .extend(std::iter::repeat_n(NONE, n.joints as usize));
                    for j in 0..n.joints {
                        let c = self.slots[(start + j) as usize];
                        if c != NONE {
                            stack.push((c, index, j));
                        }
                    }
                    Children::Direct(own)
                }
                Children::Sparse(i) => {
                    out.sparse.push(Vec::new());
                    for &(j, c) in &self.sparse[i as usize] {
                        stack.push((c, index, j));
                    }
                    Children::Sparse(out.sparse.len() as u32 - 1)
                }
            };
            out.nodes.push(Node {
                state: n.state.clone(),
                visits: n.visits,
                first,
                starts,
                joints: n.joints,
                children,
                mover: n.mover,
                exact: NONE,
            });
            if let Some(v) = self.exact_of(n) {
                let v = v.to_vec();
                out.set_exact(index, v);
            }
            if parent != NONE {
                out.set_child(parent, joint, index);
            }
        }
        out
    }

    /// Node 0's state is `state`, keeping what the tree knows of it when the state is the root or one of
    /// its children or grandchildren.
    fn reroot<G: Game<State = S, Move = M>>(&mut self, game: &G, state: &S, seed: u64) {
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
        });
        match found {
            Some(0) => {}
            Some(node) => *self = self.subtree(node, seed),
            None => {
                let roles = self.roles;
                *self = Tree::new(roles, seed);
                self.add(game, state.clone());
            }
        }
        self.simulations = 0;
    }

    fn children_of(&self, node: u32) -> Vec<u32> {
        let n = &self.nodes[node as usize];
        match n.children {
            Children::Direct(_) if n.exact != NONE => Vec::new(),
            Children::Direct(start) => self.slots[start as usize..(start + n.joints) as usize]
                .iter()
                .copied()
                .filter(|&c| c != NONE)
                .collect(),
            Children::Sparse(i) => self.sparse[i as usize].iter().map(|&(_, c)| c).collect(),
        }
    }
}

/// A random playout from `from`; every role's goal at its end, scaled to 0..=1, into `rewards`. False
/// when the deadline cut it.
fn playout<G: Game>(
    game: &G,
    from: &G::State,
    rng: &mut SmallRng,
    buf: &mut Vec<G::Move>,
    rewards: &mut [f64],
    playouts: &mut Playouts,
    deadline: Instant,
) -> bool {
    let Some(end) = playouts.run(game, from, rng, buf, deadline) else {
        return false;
    };
    for (r, reward) in rewards.iter_mut().enumerate() {
        *reward = goal_reward(game, &end, r);
    }
    true
}

fn goal_reward<G: Game>(game: &G, state: &G::State, role: RoleIndex) -> f64 {
    f64::from(game.goal(state, role).clamp(0, 100)) / 100.0
}

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
}

impl<G: Game> MctsPlayer<G> {
    /// A player whose simulations are seeded by `seed`, on one thread.
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
        }
    }

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

    /// Searches on `threads` threads (one tree each).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.clamp(1, 256);
        self
    }

    /// UCB1's exploration constant (rewards are 0..=1).
    pub fn with_exploration(mut self, c: f64) -> Self {
        self.exploration = c;
        self
    }

    /// Reports progress about once a second to `progress`.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }

    /// Judges each new leaf by `evaluator` (every role's expected goal) instead of a random playout, as
    /// AlphaZero-style searches do with a learned judgement.
    pub fn with_evaluator(mut self, evaluator: Arc<dyn Evaluator<G>>) -> Self {
        self.evaluator = Some(evaluator);
        self
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
/// better than its average (never a proven loss when something better is proven).
fn final_choice(moves: &[RootMove]) -> usize {
    let proven = (0..moves.len())
        .filter(|&i| moves[i].exact.is_some())
        .max_by(|&a, &b| moves[a].mean().total_cmp(&moves[b].mean()));
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

impl<G: Game> Player<G> for MctsPlayer<G> {
    fn name(&self) -> String {
        if self.threads > 1 {
            format!("mcts({} threads)", self.threads)
        } else {
            "mcts".to_string()
        }
    }

    fn prepare(
        &mut self,
        _game: &G,
        _role: RoleIndex,
        _deadline: Deadline,
    ) -> Result<(), PlayerError> {
        self.trees.clear();
        Ok(())
    }

    fn choose(
        &mut self,
        game: &G,
        state: &G::State,
        role: RoleIndex,
        deadline: Deadline,
    ) -> Result<Choice<G::Move>, PlayerError> {
        let started = Instant::now();
        self.moves_chosen += 1;
        let roles = game.info().num_roles();
        if self.trees.len() != self.threads || self.trees.first().is_some_and(|t| t.roles != roles)
        {
            self.trees = (0..self.threads)
                .map(|t| Tree::new(roles, role_seed(self.seed, t)))
                .collect();
        }
        for (t, tree) in self.trees.iter_mut().enumerate() {
            let seed = role_seed(self.seed ^ self.moves_chosen.rotate_left(32), t);
            tree.reroot(game, state, seed);
            tree.leaf_playouts = self.leaf_playouts;
        }
        if let Some(choice) = forced_choice(game, state, role, started) {
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
        let exploration = self.exploration;
        let node_cap = MAX_NODES / self.threads;
        let limit = self
            .max_simulations
            .map_or(u64::MAX, |n| n.div_ceil(self.threads as u64));
        let progress = self.progress.clone();
        let moves_text = |tree: &Tree<G::State, G::Move>, i: usize| {
            let at = tree.stat_index(&tree.nodes[0], role, i as u32);
            game.show_move(&tree.moves[at])
        };
        let run = Run {
            game,
            evaluator: self.evaluator.as_deref(),
            deadline,
            exploration,
            node_cap,
            limit,
        };
        let run = &run;
        std::thread::scope(|scope| {
            let (first, rest) = self.trees.split_first_mut().expect("one tree a thread");
            for tree in rest {
                scope.spawn(move || search(tree, run, None));
            }
            let report = |tree: &Tree<G::State, G::Move>| {
                let moves = root_moves(tree, role);
                let b = final_choice(&moves);
                format!(
                    "mcts: {} simulations, {} nodes, best {} expecting {:.0}",
                    thousands(tree.simulations),
                    thousands(tree.nodes.len() as u64),
                    moves_text(tree, b),
                    moves[b].mean() * 100.0
                )
            };
            let mut timer = ProgressTimer::new(progress);
            search(first, run, Some(&mut |tree| timer.maybe(|| report(tree))));
        });
        let mut moves = root_moves(&self.trees[0], role);
        for tree in &self.trees[1..] {
            for (m, other) in moves.iter_mut().zip(root_moves(tree, role)) {
                m.visits += other.visits;
                m.total += other.total;
                m.exact = m.exact.or(other.exact);
            }
        }
        let best = final_choice(&moves);
        let at = self.trees[0].stat_index(&self.trees[0].nodes[0], role, best as u32);
        Ok(Choice {
            mv: self.trees[0].moves[at].clone(),
            stats: SearchStats {
                elapsed: started.elapsed(),
                simulations: self.trees.iter().map(|t| t.simulations).sum(),
                tree: self.trees.iter().map(|t| t.nodes.len() as u64).sum(),
                expected: Some(moves[best].mean() * 100.0),
                ..SearchStats::default()
            },
        })
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
}

/// Runs simulations on `tree` until the deadline, `limit` simulations, or until its root is exact.
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
    } = *run;
    let mut ticker = Ticker::new(deadline);
    let started = Instant::now();
    let mut next_reserve = 256;
    while tree.simulations < limit && !ticker.tick() && tree.nodes[0].exact == NONE {
        if tree.simulations == next_reserve {
            // Growing an arena of a million nodes copies it, which takes longer than the clock's
            // margin near the end of a move: make room now for the nodes the rest of the search will add.
            next_reserve *= 4;
            let rate = tree.simulations as f64 / started.elapsed().as_secs_f64().max(1e-6);
            let more = rate * deadline.remaining().as_secs_f64() * 1.25;
            let total = (tree.nodes.len() as f64 + more).min(node_cap as f64) as usize;
            tree.reserve_nodes(total);
        }
        let full = tree.nodes.len() >= node_cap;
        tree.simulate(game, evaluator, exploration, full, deadline.instant());
        if let Some(r) = report.as_mut() {
            if tree.simulations.is_multiple_of(256) {
                r(tree);
            }
        }
    }
}

/// This player's moves at the root of `tree`, with what the tree knows of each.
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
mod tests {
    use super::*;
    use crate::games::connect4::Connect4;
    use crate::games::tictactoe::TicTacToe;
    use std::time::Duration;

    fn play_moves<G: Game>(g: &G, moves: &[(usize, &str)]) -> G::State {
        let mut s = g.initial_state();
        for &(role, text) in moves {
            let mv = g.parse_move(&s, role, text).unwrap();
            s = g.play(&s, role, &mv);
        }
        s
    }

    #[test]
    fn final_choice_prefers_proven_values_over_losing_averages() {
        let win = RootMove {
            visits: 1,
            total: 0.0,
            exact: Some(1.0),
        };
        let busy = RootMove {
            visits: 900,
            total: 800.0,
            exact: None,
        };
        assert_eq!(
            final_choice(&[busy, win]),
            1,
            "a proven win is played at once"
        );
        let draw = RootMove {
            visits: 5,
            total: 2.5,
            exact: Some(0.5),
        };
        let loss = RootMove {
            visits: 50,
            total: 0.0,
            exact: Some(0.0),
        };
        let poor = RootMove {
            visits: 100,
            total: 20.0,
            exact: None,
        };
        assert_eq!(
            final_choice(&[poor, draw, loss]),
            1,
            "the draw beats a 20% average"
        );
        let good = RootMove {
            visits: 100,
            total: 70.0,
            exact: None,
        };
        assert_eq!(
            final_choice(&[good, draw, loss]),
            0,
            "a 70% average beats the draw"
        );
    }

    #[test]
    fn mcts_takes_an_immediate_win_and_blocks_an_immediate_loss() {
        let g = TicTacToe::new(3, 3).unwrap();
        // x: (1,1) (1,2); o: (2,1) (2,2); x to move wins at (1,3).
        let s = play_moves(
            &g,
            &[
                (0, "mark(1,1)"),
                (1, "mark(2,1)"),
                (0, "mark(1,2)"),
                (1, "mark(2,2)"),
            ],
        );
        let mut p = MctsPlayer::new(3);
        let c = Player::<TicTacToe>::choose(
            &mut p,
            &g,
            &s,
            0,
            Deadline::after(Duration::from_millis(300)),
        )
        .unwrap();
        assert_eq!(g.show_move(&c.mv), "mark(1,3)");
        // o to move must block x's row at (1,3).
        let s = play_moves(&g, &[(0, "mark(1,1)"), (1, "mark(3,3)"), (0, "mark(1,2)")]);
        let mut p = MctsPlayer::new(5);
        let c = Player::<TicTacToe>::choose(
            &mut p,
            &g,
            &s,
            1,
            Deadline::after(Duration::from_millis(300)),
        )
        .unwrap();
        assert_eq!(g.show_move(&c.mv), "mark(1,3)");
    }

    #[test]
    fn the_tree_is_kept_for_the_state_actually_reached() {
        let g = Connect4::new(6, 7).unwrap();
        let mut p = MctsPlayer::new(1);
        let s = g.initial_state();
        let c = Player::<Connect4>::choose(
            &mut p,
            &g,
            &s,
            0,
            Deadline::after(Duration::from_millis(100)),
        )
        .unwrap();
        let after = g.play(&s, 0, &c.mv);
        let known = p.trees[0]
            .children_of(0)
            .into_iter()
            .find(|&n| p.trees[0].nodes[n as usize].state == after)
            .map(|n| p.trees[0].nodes[n as usize].visits)
            .expect("the chosen move's child is in the tree");
        let _ = Player::<Connect4>::choose(
            &mut p,
            &g,
            &after,
            1,
            Deadline::after(Duration::from_millis(1)),
        );
        assert!(
            p.trees[0].nodes[0].visits >= known,
            "the subtree's visits were kept"
        );
        assert!(p.trees[0].nodes[0].state == after);
    }
}
