//! RAVE's statistics: after each simulation, the all-moves-as-first (AMAF) statistics of the walk's
//! nodes are updated from the moves the simulation played, for `+rave` and `+grave` alike (GRAVE
//! reads them from a reference node, see `grave.rs`). Kept apart from `tree.rs`, which calls it, so
//! that neither file grows past one idea.

use super::tree::{Tree, NONE};
use crate::game::Game;

impl<S: Clone + PartialEq, M: Clone> Tree<S, M> {
    /// RAVE's update: at each node of the walk, every move that its role played there or later in the
    /// simulation (tree part and playout) adds the role's reward to the move's AMAF statistics.
    pub(super) fn update_amaf<G: Game<State = S, Move = M>>(&mut self, game: &G) {
        let Tree {
            roles,
            nodes,
            stats,
            moves,
            starts,
            policy: Some(policy),
            path,
            marks,
            rewards,
            ..
        } = self
        else {
            return;
        };
        policy.forget_seen();
        let mut end = policy.played.len();
        let mut mark = marks.len();
        for &(node, joint) in path.iter().rev() {
            if joint == NONE || mark == 0 {
                continue;
            }
            mark -= 1;
            let start = marks[mark] as usize;
            policy.mark(start, end);
            end = start;
            let n = &nodes[node as usize];
            let s = n.starts as usize;
            for (r, &reward) in rewards.iter().enumerate().take(*roles) {
                let (a, b) = (starts[s + r], starts[s + r + 1]);
                if b - a <= 1 {
                    continue;
                }
                for at in (n.first + a) as usize..(n.first + b) as usize {
                    if game
                        .move_number(&moves[at])
                        .is_some_and(|number| policy.seen(r, number))
                    {
                        stats[at].amaf_visits += 1;
                        stats[at].amaf_total += reward as f32;
                    }
                }
            }
        }
    }
}
