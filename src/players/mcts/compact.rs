//! Keeping the subtree of the state reached without copying it: the nodes it holds slide down within
//! the tree's own arenas, and what it does not hold is dropped.
//!
//! Copying a subtree ([`Tree::subtree`]) costs about two microseconds a node (a state allocated, a
//! node's moves, statistics and child slots written to fresh memory): keeping a million nodes of a
//! tree that a 15 s clock grew late in a game of breakthrough took 1.8 s of the next move's clock.
//! Sliding reads and writes the same memory in order and allocates nothing per node.
//!
//! **Every arena holds the nodes' parts in the order the nodes were added** (a node's moves,
//! statistics, `starts` and child slots are appended when it is added), and without transpositions
//! every node below the new root was added after it: numbered in their old order, the kept nodes
//! start with the root (node 0, as the tree wants it) and each part moves to an index no higher than
//! its own, so one pass in that order never overwrites a part still to move. With transpositions (a
//! graph, where a node may have been added before the root that reaches it) the root trades numbers
//! with the first node kept, so parts no longer lie in the order of the nodes' numbers; they slide
//! in the order they lie in (their `starts` say it), which keeps every move downwards, and the
//! table of states is renumbered in place.

use super::tree::{Children, Tree, NONE};
#[cfg(test)]
use {super::tree::Node, crate::game::Game};

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// The subtree of `node` as a tree of its own seeded by `seed`, made from this tree's arenas
    /// (left empty), a graph kept a graph; `None`, with the tree untouched, when there is no such
    /// node.
    pub(super) fn slide_subtree(&mut self, node: u32, seed: u64) -> Option<Tree<S, M>>
    where
        S: Send + 'static,
    {
        if node as usize >= self.nodes.len() {
            return None;
        }
        let roles = self.roles;
        // Mark what `node` reaches (as `subtree` walks it), then number it in the old order.
        let mut map = vec![NONE; self.nodes.len()];
        map[node as usize] = 0;
        let mut stack = vec![node];
        while let Some(x) = stack.pop() {
            let n = &self.nodes[x as usize];
            let children: &[u32] = match n.children {
                Children::Direct(start) if !self.no_slots(x) => {
                    &self.slots[start as usize..(start + n.joints) as usize]
                }
                Children::Direct(_) => &[],
                Children::Sparse(i) => {
                    for &(_, c) in &self.sparse[i as usize] {
                        if map[c as usize] == NONE {
                            map[c as usize] = 0;
                            stack.push(c);
                        }
                    }
                    &[]
                }
            };
            for &c in children {
                if c != NONE && map[c as usize] == NONE {
                    map[c as usize] = 0;
                    stack.push(c);
                }
            }
        }
        let mut kept = 0u32;
        let mut order = Vec::new();
        for (old, m) in map.iter_mut().enumerate() {
            if *m != NONE {
                *m = kept;
                kept += 1;
                order.push(old as u32);
            }
        }
        // In a graph the root may have been added after nodes it reaches: it trades numbers with
        // the first kept node, and the parts, no longer in the order of the nodes' numbers, slide in
        // the order they lie in.
        let root_rank = map[node as usize];
        let first_kept = order[0];
        map[node as usize] = 0;
        map[first_kept as usize] = root_rank;
        let nodes = &self.nodes;
        // (`starts` grows by the same length for every node, so it orders them strictly.)
        if order
            .windows(2)
            .any(|w| nodes[w[0] as usize].starts > nodes[w[1] as usize].starts)
        {
            order.sort_unstable_by_key(|&x| nodes[x as usize].starts);
        }
        // Slide every kept node's parts down, in the order they lie in.
        let (mut at_move, mut at_start, mut at_slot, mut at_sparse) =
            (0usize, 0usize, 0usize, 0usize);
        let mut exact = Vec::new();
        for &old in &order {
            let no_slots = self.no_slots(old);
            let n = &mut self.nodes[old as usize];
            let total = self.starts[n.starts as usize + roles] as usize;
            let first = n.first as usize;
            if first != at_move {
                self.stats.copy_within(first..first + total, at_move);
                for k in 0..total {
                    self.moves.swap(first + k, at_move + k);
                }
            }
            n.first = at_move as u32;
            at_move += total;
            let starts = n.starts as usize;
            self.starts
                .copy_within(starts..starts + roles + 1, at_start);
            n.starts = at_start as u32;
            at_start += roles + 1;
            n.children = match n.children {
                Children::Direct(_) if no_slots => Children::Direct(0),
                Children::Direct(start) => {
                    let joints = n.joints as usize;
                    let start = start as usize;
                    self.slots.copy_within(start..start + joints, at_slot);
                    for c in &mut self.slots[at_slot..at_slot + joints] {
                        if *c != NONE {
                            *c = map[*c as usize];
                        }
                    }
                    at_slot += joints;
                    Children::Direct((at_slot - joints) as u32)
                }
                Children::Sparse(i) => {
                    self.sparse.swap(i as usize, at_sparse);
                    for (_, c) in &mut self.sparse[at_sparse] {
                        *c = map[*c as usize];
                    }
                    at_sparse += 1;
                    Children::Sparse(at_sparse as u32 - 1)
                }
            };
            if n.exact != NONE {
                let e = n.exact as usize * roles;
                n.exact = (exact.len() / roles) as u32;
                exact.extend_from_slice(&self.exact[e..e + roles]);
            }
        }
        // The nodes themselves slide in the order of their numbers, each to its rank (no higher
        // than its number), then the root takes number 0.
        let mut rank = 0;
        for (old, m) in map.iter().enumerate() {
            if *m != NONE {
                self.nodes.swap(old, rank);
                rank += 1;
            }
        }
        self.nodes.swap(0, root_rank as usize);
        // What goes is handed aside by moving the smaller part out of the vector.
        let kept = kept as usize;
        if self.nodes.len() - kept <= kept {
            drop_aside(self.nodes.split_off(kept));
        } else {
            let nodes: Vec<_> = self.nodes.drain(..kept).collect();
            drop_aside(std::mem::replace(&mut self.nodes, nodes));
        }
        self.stats.truncate(at_move);
        self.moves.truncate(at_move);
        self.starts.truncate(at_start);
        self.slots.truncate(at_slot);
        self.sparse.truncate(at_sparse);
        let mut out = Tree::new(roles, seed);
        if let Some(mut table) = self.table.take() {
            table.retain(|_, n| {
                *n = map[*n as usize];
                *n != NONE
            });
            out.table = Some(table);
        }
        out.nodes = std::mem::take(&mut self.nodes);
        out.stats = std::mem::take(&mut self.stats);
        out.moves = std::mem::take(&mut self.moves);
        out.starts = std::mem::take(&mut self.starts);
        out.slots = std::mem::take(&mut self.slots);
        out.sparse = std::mem::take(&mut self.sparse);
        out.exact = exact;
        Some(out)
    }

    /// The tree below `node` copied into a tree of its own (node 0): what the slide replaced, kept
    /// as the reference its test compares with.
    #[cfg(test)]
    pub(super) fn subtree<G: Game<State = S, Move = M>>(
        &self,
        game: &G,
        node: u32,
        seed: u64,
    ) -> Tree<S, M> {
        let mut out = Tree::new(self.roles, seed);
        out.share_transpositions(game, self.table.is_some());
        // In a graph a node reached again is linked, not copied twice.
        let mut copied: Vec<u32> = if self.table.is_some() {
            vec![NONE; self.nodes.len()]
        } else {
            Vec::new()
        };
        let mut stack = vec![(node, NONE, 0u32)];
        while let Some((from, parent, joint)) = stack.pop() {
            if let Some(&c) = copied.get(from as usize).filter(|&&c| c != NONE) {
                out.set_child(parent, joint, c);
                continue;
            }
            let n = &self.nodes[from as usize];
            let index = out.nodes.len() as u32;
            if let Some(c) = copied.get_mut(from as usize) {
                *c = index;
            }
            if let Some(table) = &mut out.table {
                table.insert(game.state_key(&n.state), index);
            }
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

    /// Replaces the tree with an empty one, and returns the old one when it is big (see
    /// [`DROP_ASIDE`]): with its nodes go their moves, statistics and children's lists, and freeing
    /// them slows everything else down, on any thread (the second move of a one-player game whose
    /// start clock had grown three million nodes took 0.5 s of a 0.1 s play clock, freed on a
    /// thread of its own). The caller keeps it until no clock runs.
    pub(super) fn let_go(&mut self, seed: u64) -> Option<Tree<S, M>> {
        let old = std::mem::replace(self, Tree::new(self.roles, seed));
        (old.nodes.len() >= DROP_ASIDE).then_some(old)
    }

    /// Whether node `x` has no child slots of its own although its children say `Direct`: a solved
    /// node without moves (a terminal state), whose `Direct(0)` points at another node's slots.
    pub(super) fn no_slots(&self, x: u32) -> bool {
        let n = &self.nodes[x as usize];
        n.exact != NONE && self.starts[n.starts as usize + self.roles] == 0
    }
}

/// Nodes a drop would free one state at a time on the search's clock: a tree bigger than this is
/// dropped on a thread of its own (freeing a million states takes about a tenth of a second).
const DROP_ASIDE: usize = 50_000;

/// Drops `nodes` (or a tree) on a thread of its own when there are many, so that the search that
/// keeps a subtree does not wait for the rest to be freed.
pub(super) fn drop_aside<T: Send + 'static>(nodes: Vec<T>) {
    if nodes.len() < DROP_ASIDE {
        return;
    }
    // Should no thread be had, the nodes are dropped here as before.
    let _ = std::thread::Builder::new()
        .name("mcts-drop".into())
        .spawn(move || drop(nodes));
}
