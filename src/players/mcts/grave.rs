//! GRAVE, Generalized Rapid Action Value Estimation (Cazenave, IJCAI 2015): RAVE whose
//! all-moves-as-first statistics come from the *reference* node, the deepest node of the walk with at
//! least [`GRAVE_REF`] visits, instead of the node itself. A node visited a few times has AMAF
//! statistics too thin to trust; its closest well-visited ancestor's are about the same moves of the
//! same stretch of the game, and thick.
//!
//! A move's value at a node is `(1 − β) · mean + β · amaf`, with the reference's AMAF average and
//! `β = a / (a + n + bias · a · n)` for its `n` visits and the reference's `a` AMAF visits; there is no
//! exploration term (the AMAF average drives exploration, as in the paper).
//!
//! The reference's statistics are found by the move's number ([`Game::move_number`]) in a table that
//! maps each role's move numbers to the reference's statistics, filled when the reference changes
//! (at most once a level of the walk), so a selection reads one array cell per move.
//!
//! The AMAF statistics themselves are gathered after each simulation by `amaf.rs`, for RAVE and
//! GRAVE alike.
//!
//! [`Game::move_number`]: crate::game::Game::move_number

/// The visits that make a node the reference for the nodes below it (the paper's `ref`).
pub(super) const GRAVE_REF: u32 = 50;

/// The paper's bias, which lowers β once a move has many visits of its own.
const GRAVE_BIAS: f64 = 1e-5;

const NONE: u32 = u32::MAX;

/// The reference node of the walk under way and its moves' statistics by move number.
#[derive(Clone, Debug, Default)]
pub(super) struct Reference {
    node: u32,
    /// Rows per role: the game's move count.
    moves: usize,
    /// Per `role * moves + move number`, the index of the reference's statistics, or none.
    map: Vec<u32>,
    /// The cells of `map` filled for the current reference.
    filled: Vec<u32>,
}

impl Reference {
    /// An empty reference for `roles` roles of a game of `moves` moves.
    pub(super) fn new(roles: usize, moves: usize) -> Reference {
        Reference {
            node: NONE,
            moves,
            map: vec![NONE; roles * moves],
            filled: Vec::new(),
        }
    }

    /// Whether it serves a game of `roles` roles and `moves` moves.
    pub(super) fn fits(&self, roles: usize, moves: usize) -> bool {
        self.moves == moves && self.map.len() == roles * moves
    }

    /// Whether a node of `visits` visits takes over as the reference (the root always does, since a
    /// walk starts there).
    pub(super) fn takes_over(&self, node: u32, visits: u32) -> bool {
        self.node != node && (node == 0 || visits >= GRAVE_REF)
    }

    /// Makes `node` the reference, with no statistics entered yet.
    pub(super) fn begin(&mut self, node: u32) {
        for &cell in &self.filled {
            self.map[cell as usize] = NONE;
        }
        self.filled.clear();
        self.node = node;
    }

    /// Enters the reference's statistics index `at` of `role`'s move numbered `number`.
    pub(super) fn enter(&mut self, role: usize, number: u32, at: usize) {
        let cell = role * self.moves + number as usize;
        if let Some(c) = self.map.get_mut(cell) {
            *c = at as u32;
            self.filled.push(cell as u32);
        }
    }

    /// The reference's statistics index of `role`'s move numbered `number`, if it has the move.
    pub(super) fn get(&self, role: usize, number: u32) -> Option<usize> {
        self.map
            .get(role * self.moves + number as usize)
            .filter(|&&at| at != NONE)
            .map(|&at| at as usize)
    }
}

/// GRAVE's value of a move with `visits` visits and `total` reward, given the reference's AMAF
/// statistics of the same move (reward, visits); `None` when neither has tried it.
pub(super) fn value(visits: u32, total: f64, amaf: (f64, u32)) -> Option<f64> {
    let (amaf_total, amaf_visits) = amaf;
    if visits == 0 && amaf_visits == 0 {
        return None;
    }
    let (n, a) = (f64::from(visits), f64::from(amaf_visits));
    let mean = if visits == 0 { 0.0 } else { total / n };
    if amaf_visits == 0 {
        return Some(mean);
    }
    let beta = a / (a + n + GRAVE_BIAS * a * n);
    Some((1.0 - beta) * mean + beta * amaf_total / a)
}
