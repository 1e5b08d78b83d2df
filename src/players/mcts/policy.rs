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
//! **NST**, the N-gram Selection Technique (Tak, Winands and Björnsson 2012), adds to MAST's table
//! the averages of move *pairs*: a move's reward when it answered a given move, the last real
//! choice (a role with more than one legal move) before it in the simulation. A pick scores a move by
//! its MAST average, blended half and half with its pair's average once that pair has been seen
//! [`NST_MIN_VISITS`] times, and picks ε-greedily as MAST does. The pair table is indexed, not hashed:
//! (role, move) squared cells, so a game with more than [`NST_MAX_CELLS`] of them plays MAST alone.
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

/// The visits before a pair's average counts (Tak, Winands and Björnsson's threshold).
pub(super) const NST_MIN_VISITS: u32 = 7;

/// The most cells of NST's pair table (8 bytes each): 32 MiB a tree.
pub(super) const NST_MAX_CELLS: usize = 1 << 22;

/// No move: the context of a simulation's first choice.
const NO_MOVE: u32 = u32::MAX;

/// What picks the playouts' moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Guide {
    /// Uniformly random moves (the moves are still recorded, for RAVE).
    #[default]
    Random,
    /// MAST's move averages.
    Mast,
    /// MAST's averages blended with those of move pairs (NST).
    Nst,
}

/// One role's record of one move.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    /// In 64 bits: a record lives the whole match, and an `f32` sum stops growing at 2^24, which
    /// a busy move's record reaches within minutes of thinking.
    total: f64,
    count: u32,
}

impl Record {
    fn add(&mut self, reward: f64) {
        self.total += reward;
        self.count += 1;
    }

    fn mean(self) -> f32 {
        if self.count == 0 {
            1.0
        } else {
            (self.total / f64::from(self.count)) as f32
        }
    }
}

/// The moves of the simulation under way, and MAST's move averages of every role when it guides.
#[derive(Clone, Debug, Default)]
pub(super) struct Policy {
    /// Rows per role: the game's move count.
    moves: usize,
    /// What picks the playouts' moves.
    guide: Guide,
    records: Vec<Record>,
    /// With NST, per (context, move) pair, `context * roles * moves + move`, each a `role * moves +
    /// move`; empty when the game has too many moves for it.
    pairs: Vec<Record>,
    /// `role * moves + move` of each move of the current simulation, in the order played.
    pub(super) played: Vec<u32>,
    /// The context of each move of `played`: the last real choice before it ([`NO_MOVE`] for none).
    contexts: Vec<u32>,
    /// The last real choice of the current simulation.
    last: u32,
    /// Per `role * moves + move`, the stamp of the last [`Policy::mark`] that saw it.
    seen: Vec<u32>,
    stamp: u32,
}

impl Policy {
    /// A policy for `roles` roles of a game with `moves` move numbers, its playouts picked by `guide`.
    pub(super) fn new(roles: usize, moves: usize, guide: Guide) -> Policy {
        let cells = roles * moves;
        let pairs = if guide == Guide::Nst && cells.saturating_mul(cells) <= NST_MAX_CELLS {
            vec![Record::default(); cells * cells]
        } else {
            Vec::new()
        };
        Policy {
            moves,
            guide,
            records: vec![Record::default(); cells],
            pairs,
            played: Vec::new(),
            contexts: Vec::new(),
            last: NO_MOVE,
            seen: vec![0; cells],
            stamp: 0,
        }
    }

    /// Whether the policy fits a game of `roles` roles and `moves` move numbers and `guide`.
    pub(super) fn fits(&self, roles: usize, moves: usize, guide: Guide) -> bool {
        self.moves == moves && self.records.len() == roles * moves && self.guide == guide
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
        self.contexts.clear();
        self.last = NO_MOVE;
    }

    /// Notes that `role` played the move numbered `number` in this simulation; `choice` when it had
    /// another (the next moves' context for NST).
    pub(super) fn note(&mut self, role: RoleIndex, number: Option<u32>, choice: bool) {
        if let Some(n) = number.filter(|&n| (n as usize) < self.moves) {
            let at = (role * self.moves) as u32 + n;
            self.played.push(at);
            self.contexts.push(self.last);
            if choice {
                self.last = at;
            }
        }
    }

    /// Ends a simulation: with MAST or NST, each move played adds its role's reward (0..=1), and with
    /// NST its pair with its context too.
    pub(super) fn learn(&mut self, rewards: &[f64]) {
        if self.guide != Guide::Random {
            let cells = self.records.len();
            for (&at, &context) in self.played.iter().zip(&self.contexts) {
                let Some(&reward) = rewards.get(at as usize / self.moves) else {
                    continue;
                };
                if let Some(r) = self.records.get_mut(at as usize) {
                    r.add(reward);
                }
                if context != NO_MOVE {
                    if let Some(r) = self.pairs.get_mut(context as usize * cells + at as usize) {
                        r.add(reward);
                    }
                }
            }
        }
        self.played.clear();
        self.contexts.clear();
        self.last = NO_MOVE;
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
        } else if self.guide == Guide::Random || rng.gen_bool(EPSILON) {
            random_index(rng, moves.len())
        } else {
            let row = role * self.moves;
            // With NST and a context, the pair row of this simulation's last choice.
            let pairs = match self.last {
                NO_MOVE => None,
                last => {
                    let cells = self.records.len();
                    self.pairs
                        .get(last as usize * cells..(last as usize + 1) * cells)
                }
            };
            let value = |n: u32| {
                if (n as usize) >= self.moves {
                    return 0.0;
                }
                let own = self.records[row + n as usize].mean();
                match pairs.map(|p| p[row + n as usize]) {
                    Some(pair) if pair.count >= NST_MIN_VISITS => (own + pair.mean()) / 2.0,
                    _ => own,
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
        self.note(role, moves.get(chosen).copied(), moves.len() > 1);
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_best_average_is_picked_greedily_and_untried_moves_first() {
        let mut m = Policy::new(2, 4, Guide::Mast);
        let mut rng = SmallRng::seed_from_u64(7);
        // Role 0 played move 1 and won, move 2 and lost; role 1 played move 1 and lost.
        m.note(0, Some(1), true);
        m.note(1, Some(1), true);
        m.learn(&[1.0, 0.0]);
        m.note(0, Some(2), true);
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
        m.note(0, None, true);
        m.note(0, Some(9), true);
        m.learn(&[1.0, 1.0]);
        assert_eq!(m.mean(0, 1), 1.0);
    }

    #[test]
    fn nst_picks_the_best_answer_to_the_last_choice_where_mast_sees_a_tie() {
        let mut m = Policy::new(2, 4, Guide::Nst);
        // Role 1's move 2 wins after role 0's move 1 and loses after its move 0; move 3 the other way
        // round: alike on average, so MAST alone cannot tell them apart.
        for _ in 0..NST_MIN_VISITS {
            for (first, answer, reward) in [(1, 2, 1.0), (1, 3, 0.0), (0, 2, 0.0), (0, 3, 1.0)] {
                m.begin();
                m.note(0, Some(first), true);
                m.note(1, Some(answer), true);
                m.learn(&[1.0 - reward, reward]);
            }
        }
        assert_eq!(m.mean(1, 2), m.mean(1, 3));
        let mut rng = SmallRng::seed_from_u64(3);
        for (first, best) in [(1, 0), (0, 1)] {
            let mut picks = [0u32; 2];
            for _ in 0..1000 {
                m.begin();
                m.note(0, Some(first), true);
                // A forced move (the no-op of the role waiting) is no context.
                m.note(0, Some(0), false);
                picks[m.pick(1, &[2, 3], &mut rng)] += 1;
            }
            assert!(
                (700..900).contains(&picks[best]),
                "after {first}: {picks:?}"
            );
        }
        // Without a context (the simulation's first choice) the averages alone decide: a tie.
        let mut picks = [0u32; 2];
        for _ in 0..1000 {
            m.begin();
            picks[m.pick(1, &[2, 3], &mut rng)] += 1;
        }
        assert!((400..600).contains(&picks[0]), "{picks:?}");
        // A game with too many moves for the pair table plays MAST alone.
        assert!(Policy::new(2, 2048, Guide::Nst).pairs.is_empty());
    }

    #[test]
    fn a_random_policy_records_and_marks_what_was_played() {
        let mut p = Policy::new(2, 4, Guide::Random);
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

    #[test]
    fn a_records_mean_holds_past_two_to_the_twenty_four_rewards() {
        // An `f32` sum stopped at 16,777,216: 20 M wins then read as a mean of 0.84.
        let mut r = Record::default();
        for _ in 0..20_000_000 {
            r.add(1.0);
        }
        assert_eq!(r.mean(), 1.0);
    }
}
