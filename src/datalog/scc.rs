//! Strongly connected components of a dependency graph, for every stage that stratifies rules.
//!
//! The entry point is [`tarjan`]. The checker (`check::graph`) numbers its strata with it, the planner
//! makes one stratum per component, the rewrites (`rewrite`, `demand`) and the grounder order their
//! work by it; they all read the same order, so it is stated once here: **a component comes after
//! every component it has an edge to** (reverse topological order of the edges). With edges from a
//! rule's head to its body's relations, that is "dependencies first", the order to evaluate them in.
//! Within a component, nodes are listed in increasing order.
//!
//! Tarjan's algorithm emits each component as soon as its root is finished, and every component
//! reachable from it was emitted before, which is where the order comes from. The walk keeps its own
//! call stack: a generated program may chain very many relations, and recursion would overflow.
//! Roots are tried in node order and edges in list order, so the result is deterministic.

/// An edge of an adjacency list, as [`tarjan`] reads it: the node it leads to. Edges may carry more
/// (whether the dependency is negative, where it was written), which the components ignore.
pub trait Successor {
    /// The node the edge leads to.
    fn to(&self) -> usize;
}

impl Successor for usize {
    #[inline]
    fn to(&self) -> usize {
        *self
    }
}

/// A dependency and whether it goes through a negation.
impl Successor for (usize, bool) {
    #[inline]
    fn to(&self) -> usize {
        self.0
    }
}

/// The strongly connected components of the graph over nodes `0..n` whose edges from node `v` are
/// `adj[v]` (a missing list has no edge; every edge must lead below `n`), each component after every
/// component it has an edge to, its nodes in increasing order (see the module documentation).
pub fn tarjan<E: Successor>(n: usize, adj: &[Vec<E>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let edges = |v: usize| adj.get(v).map_or(&[][..], |l| &l[..]);
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, its next edge), standing for the recursive calls.
        calls.push((root, 0));
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut e)) = calls.last_mut() {
            if let Some(edge) = edges(v).get(*e) {
                let w = edge.to();
                *e += 1;
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut c = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        c.push(w);
                        if w == v {
                            break;
                        }
                    }
                    c.sort_unstable();
                    out.push(c);
                }
            }
        }
    }
    out
}

/// The number of each node's component in `sccs` (a result of [`tarjan`] over `n` nodes).
pub fn component_of(n: usize, sccs: &[Vec<usize>]) -> Vec<usize> {
    let mut comp = vec![0; n];
    for (i, c) in sccs.iter().enumerate() {
        for &v in c {
            comp[v] = i;
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether every edge leads to the same component or an earlier one.
    fn dependencies_first(adj: &[Vec<usize>], sccs: &[Vec<usize>]) -> bool {
        let comp = component_of(adj.len(), sccs);
        (0..adj.len()).all(|v| adj[v].iter().all(|&w| comp[w] <= comp[v]))
    }

    #[test]
    fn a_dag_is_one_component_per_node_sinks_first() {
        // 0 → 1 → 3, 0 → 2 → 3, 4 alone.
        let adj = vec![vec![1, 2], vec![3], vec![3], vec![], vec![]];
        let sccs = tarjan(5, &adj);
        assert_eq!(sccs, [vec![3], vec![1], vec![2], vec![0], vec![4]]);
        assert!(dependencies_first(&adj, &sccs));
    }

    #[test]
    fn a_cycle_is_one_component_listed_in_node_order() {
        // 2 → 0 → 1 → 2, and 3 reads the cycle.
        let adj = vec![vec![1], vec![2], vec![0], vec![1]];
        let sccs = tarjan(4, &adj);
        assert_eq!(sccs, [vec![0, 1, 2], vec![3]]);
    }

    #[test]
    fn a_self_loop_is_a_component_of_its_own() {
        let adj = vec![vec![0usize, 1], vec![]];
        assert_eq!(tarjan(2, &adj), [vec![1], vec![0]]);
        // A self-loop is what tells a recursive singleton from a plain one: the components alone
        // do not, so callers look for the edge.
        assert_eq!(tarjan(1, &[Vec::<usize>::new()]), [vec![0]]);
    }

    #[test]
    fn components_come_after_those_they_reach() {
        // Two cycles {0, 1} and {2, 3}, the first reading the second, and 4 reading both; the
        // nodes are numbered against the order, so node order alone would get it wrong.
        let adj = vec![vec![1, 3], vec![0], vec![3], vec![2], vec![0, 2]];
        let sccs = tarjan(5, &adj);
        assert_eq!(sccs, [vec![2, 3], vec![0, 1], vec![4]]);
        assert!(dependencies_first(&adj, &sccs));
        assert_eq!(component_of(5, &sccs), [1, 1, 0, 0, 2]);
    }

    #[test]
    fn edges_carry_their_sign_and_missing_lists_have_no_edges() {
        let adj: Vec<Vec<(usize, bool)>> = vec![vec![(1, true)], vec![(0, false)]];
        assert_eq!(tarjan(3, &adj), [vec![0, 1], vec![2]]);
    }

    #[test]
    fn a_long_chain_does_not_overflow_the_stack() {
        let n = 200_000;
        let adj: Vec<Vec<usize>> = (0..n)
            .map(|v| if v + 1 < n { vec![v + 1] } else { vec![] })
            .collect();
        let sccs = tarjan(n, &adj);
        assert_eq!(sccs.len(), n);
        assert_eq!(sccs[0], [n - 1]);
        assert!(dependencies_first(&adj, &sccs));
    }
}
