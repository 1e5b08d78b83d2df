//! The moves of a simulation by number, for the enhancements that learn from them: MAST's move
//! averages, which guide the playouts, and RAVE's all-moves-as-first statistics in the tree.
//!
//! **MAST**, the Move-Average Sampling Technique (Finnsson and Björnsson, CadiaPlayer 2008): every
//! role's average reward for each move, wherever in the game it was played, guides the playouts.
//! A playout picks, for each role, the legal move with the best average with probability 1 − ε and a
//! uniformly random one otherwise (the ε-greedy form, which Tak, Winands and Björnsson found stronger
//! than Gibbs sampling across GGP games); a move never tried counts as the best reward, so it is tried.
//! After the simulation every move of the walk and of the playout, tree part included, adds the
//! reward of the role that played it. The table is indexed by role and [`Game::move_number`], so a
//! pick reads a few array cells and hashes nothing; it lives as long as the tree (one a thread) and
//! is kept from move to move, since what a move is worth changes slowly.
//!
//! **RAVE** needs to know, at each node of the walk, which moves each role played there or later:
//! the moves are recorded in order (a playout without MAST picks uniformly at random and records),
//! and [`Policy::mark`] stamps a stretch of them so that [`Policy::seen`] answers by one array read.
//!
//! [`Game::move_number`]: crate::game::Game::move_number

use rand::rngs::SmallRng;
use rand::Rng;

use crate::game::{random_index, PlayoutGuide, RoleIndex};

/// The share of random picks.
pub(super) const EPSILON: f64 = 0.4;

/// One role's record of one move.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    total: f32,
    count: u32,
}

impl Record {
    fn mean(self) -> f32 {
        if self.count == 0 {
            1.0
        } else {
            self.total / self.count as f32
        }
    }
}

/// The moves of the simulation under way, and MAST's move averages of every role when it guides.
#[derive(Clone, Debug, Default)]
pub(super) struct Policy {
    /// Rows per role: the game's move count.
    moves: usize,
    /// Whether MAST picks the playouts' moves (else they are uniformly random).
    mast: bool,
    records: Vec<Record>,
    /// `role * moves + move` of each move of the current simulation, in the order played.
    pub(super) played: Vec<u32>,
    /// Per `role * moves + move`, the stamp of the last [`Policy::mark`] that saw it.
    seen: Vec<u32>,
    stamp: u32,
}

impl Policy {
    /// A policy for `roles` roles of a game with `moves` move numbers, guided by MAST or random.
    pub(super) fn new(roles: usize, moves: usize, mast: bool) -> Policy {
        Policy {
            moves,
            mast,
            records: vec![Record::default(); roles * moves],
            played: Vec::new(),
            seen: vec![0; roles * moves],
            stamp: 0,
        }
    }

    /// Whether the policy fits a game of `roles` roles and `moves` move numbers and the MAST switch.
    pub(super) fn fits(&self, roles: usize, moves: usize, mast: bool) -> bool {
        self.moves == moves && self.records.len() == roles * moves && self.mast == mast
    }

    /// Starts a new set of moves seen (see [`Policy::seen`]).
    pub(super) fn forget_seen(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
    }

    /// Adds the moves `played[from..to]` to the set seen.
    pub(super) fn mark(&mut self, from: usize, to: usize) {
        for &at in &self.played[from..to] {
            self.seen[at as usize] = self.stamp;
        }
    }

    /// Whether `role`'s move numbered `number` is in the set seen.
    pub(super) fn seen(&self, role: RoleIndex, number: u32) -> bool {
        (number as usize) < self.moves
            && self.seen[role * self.moves + number as usize] == self.stamp
    }

    /// Starts a simulation: forgets the moves of one that was cut short.
    pub(super) fn begin(&mut self) {
        self.played.clear();
    }

    /// Notes that `role` played the move numbered `number` in this simulation.
    pub(super) fn note(&mut self, role: RoleIndex, number: Option<u32>) {
        if let Some(n) = number.filter(|&n| (n as usize) < self.moves) {
            self.played.push((role * self.moves) as u32 + n);
        }
    }

    /// Ends a simulation: with MAST, each move played adds its role's reward (0..=1).
    pub(super) fn learn(&mut self, rewards: &[f64]) {
        if !self.mast {
            self.played.clear();
            return;
        }
        for &at in &self.played {
            let role = at as usize / self.moves;
            if let (Some(r), Some(&reward)) = (self.records.get_mut(at as usize), rewards.get(role))
            {
                r.total += reward as f32;
                r.count += 1;
            }
        }
        self.played.clear();
    }

    /// The average reward of `role`'s move `number` (1 when never tried).
    #[cfg(test)]
    pub(super) fn mean(&self, role: RoleIndex, number: u32) -> f32 {
        self.records[role * self.moves + number as usize].mean()
    }
}

impl PlayoutGuide for Policy {
    fn pick(&mut self, role: RoleIndex, moves: &[u32], rng: &mut SmallRng) -> usize {
        let chosen = if moves.len() <= 1 {
            0
        } else if !self.mast || rng.gen_bool(EPSILON) {
            random_index(rng, moves.len())
        } else {
            let row = role * self.moves;
            let value = |n: u32| {
                if (n as usize) < self.moves {
                    self.records[row + n as usize].mean()
                } else {
                    0.0
                }
            };
            // Ties go to the first of them from a random start, so equal moves share the picks.
            let start = random_index(rng, moves.len());
            let mut best = (f32::NEG_INFINITY, start);
            for k in 0..moves.len() {
                let i = (start + k) % moves.len();
                let v = value(moves[i]);
                if v > best.0 {
                    best = (v, i);
                }
            }
            best.1
        };
        self.note(role, moves.get(chosen).copied());
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_best_average_is_picked_greedily_and_untried_moves_first() {
        let mut m = Policy::new(2, 4, true);
        let mut rng = SmallRng::seed_from_u64(7);
        // Role 0 played move 1 and won, move 2 and lost; role 1 played move 1 and lost.
        m.note(0, Some(1));
        m.note(1, Some(1));
        m.learn(&[1.0, 0.0]);
        m.note(0, Some(2));
        m.learn(&[0.0, 1.0]);
        assert_eq!(m.mean(0, 1), 1.0);
        assert_eq!(m.mean(0, 2), 0.0);
        assert_eq!(m.mean(1, 1), 0.0);
        let mut picks = [0u32; 2];
        for _ in 0..1000 {
            m.begin();
            picks[m.pick(0, &[2, 1], &mut rng)] += 1;
        }
        // Greedy 60% of the time plus half of the random 40%: about 80% for move 1.
        assert!((700..900).contains(&picks[1]), "{picks:?}");
        // Role 1 has not tried move 3: it beats move 1, which lost.
        let mut picks = [0u32; 2];
        for _ in 0..1000 {
            m.begin();
            picks[m.pick(1, &[1, 3], &mut rng)] += 1;
        }
        assert!((700..900).contains(&picks[1]), "{picks:?}");
        // A move without a number is played but never learned.
        m.begin();
        m.note(0, None);
        m.note(0, Some(9));
        m.learn(&[1.0, 1.0]);
        assert_eq!(m.mean(0, 1), 1.0);
    }

    #[test]
    fn a_random_policy_records_and_marks_what_was_played() {
        let mut p = Policy::new(2, 4, false);
        let mut rng = SmallRng::seed_from_u64(1);
        p.begin();
        let a = [0, 1, 2][p.pick(0, &[0, 1, 2], &mut rng)];
        assert_eq!(p.pick(1, &[3], &mut rng), 0);
        assert_eq!(p.played, vec![a, 4 + 3]);
        p.forget_seen();
        p.mark(1, 2);
        assert!(p.seen(1, 3) && !p.seen(0, a) && !p.seen(1, 9));
        p.forget_seen();
        assert!(!p.seen(1, 3));
        // Without MAST nothing is learned, and the moves are forgotten.
        p.learn(&[1.0, 0.0]);
        assert!(p.played.is_empty() && p.records[a as usize].count == 0);
    }
}
