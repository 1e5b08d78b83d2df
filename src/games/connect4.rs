//! Connect Four (seed 3) on R rows × C columns, four in a row wins, on bitboards.
//!
//! Each player's stones are one `u64`, column-major with `R + 1` bits per column: bit `col * (R + 1) + row`,
//! row 0 at the bottom. The extra (sentinel) bit on top of each column is always empty, so shifting a board
//! by one column, or diagonally, never carries a stone from one column's top into the next one's bottom;
//! that makes a four-in-a-row test six shifts and ands. The 6×7 board takes 49 bits.

use rand::rngs::SmallRng;

use crate::evaluators::{Estimate, Evaluator, Outcome};
use crate::game::{random_index, Dynamics, Game, GameError, GameInfo, Goal, RoleIndex};

/// The no-op move of the role not in control.
pub const NOOP: u8 = u8::MAX;

/// A Connect Four state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Connect4State {
    /// Red's stones.
    pub red: u64,
    /// Black's stones.
    pub black: u64,
    /// Stones played so far; red moves when it is even.
    pub plies: u8,
    /// 0 while playing, 1 red won, 2 black won, 3 draw.
    pub outcome: u8,
}

impl Connect4State {
    fn mask(&self) -> u64 {
        self.red | self.black
    }
}

/// A move: the 0-based column, or [`NOOP`].
pub type Connect4Move = u8;

/// Connect Four.
#[derive(Clone, Debug)]
pub struct Connect4 {
    info: GameInfo,
    rows: u32,
    cols: u32,
    /// Bits per column, `rows + 1`.
    height: u32,
    /// The bottom cell of every column.
    bottom: u64,
    /// Every playable cell (no sentinels).
    full: u64,
    /// Every line of four cells on the board, for the estimator.
    windows: Vec<u64>,
}

/// `x << s`, zero when the shift is as wide as the word (tall one-column boards).
fn shl(x: u64, s: u32) -> u64 {
    x.checked_shl(s).unwrap_or(0)
}

/// `x >> s`, zero when the shift is as wide as the word.
fn shr(x: u64, s: u32) -> u64 {
    x.checked_shr(s).unwrap_or(0)
}

impl Connect4 {
    /// A board of `rows` × `cols`; `(rows + 1) * cols` must fit in 64 bits.
    pub fn new(rows: u32, cols: u32) -> Result<Self, GameError> {
        if rows == 0 || cols == 0 || (u64::from(rows) + 1) * u64::from(cols) > 64 {
            return Err(GameError::Unsupported(format!(
                "a Connect Four board needs at least one row and column and (rows + 1) * cols <= 64, \
                 but it is {rows} × {cols}"
            )));
        }
        let height = rows + 1;
        let mut bottom = 0u64;
        for c in 0..cols {
            bottom |= 1 << (c * height);
        }
        let full = bottom * ((1u64 << rows) - 1);
        let mut windows = Vec::new();
        let cell = |c: i64, r: i64| -> Option<u64> {
            (c >= 0 && r >= 0 && c < i64::from(cols) && r < i64::from(rows))
                .then(|| 1u64 << (c as u32 * height + r as u32))
        };
        for c in 0..i64::from(cols) {
            for r in 0..i64::from(rows) {
                for (dc, dr) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                    let w = (0..4)
                        .try_fold(0u64, |acc, i| cell(c + dc * i, r + dr * i).map(|b| acc | b));
                    if let Some(w) = w {
                        windows.push(w);
                    }
                }
            }
        }
        Ok(Connect4 {
            info: GameInfo {
                name: format!("connect4-{rows}x{cols}"),
                roles: vec!["red".to_string(), "black".to_string()],
                dynamics: Dynamics::TurnTaking,
                zero_sum: true,
            },
            rows,
            cols,
            height,
            bottom,
            full,
            windows,
        })
    }

    /// The number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// The number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    fn column_mask(&self, col: u32) -> u64 {
        (((1u64 << self.rows) - 1) << (col * self.height)) & self.full
    }

    /// The lowest empty cell of every column that is not full.
    fn playable(&self, mask: u64) -> u64 {
        mask.wrapping_add(self.bottom) & self.full
    }

    /// Whether `p` holds four in a row.
    fn has_four(&self, p: u64) -> bool {
        let h = self.height;
        for s in [1, h, h - 1, h + 1] {
            let m = p & shr(p, s);
            if m & shr(m, 2 * s) != 0 {
                return true;
            }
        }
        false
    }

    /// The empty cells that would give `p` four in a row.
    fn winning_cells(&self, p: u64, mask: u64) -> u64 {
        let h = self.height;
        let mut r = shl(p, 1) & shl(p, 2) & shl(p, 3);
        for s in [h, h - 1, h + 1] {
            let t = shl(p, s) & shl(p, 2 * s);
            r |= t & shl(p, 3 * s);
            r |= t & shr(p, s);
            let t = shr(p, s) & shr(p, 2 * s);
            r |= t & shl(p, s);
            r |= t & shr(p, 3 * s);
        }
        r & self.full & !mask
    }

    /// Places a stone on the already chosen cell `bit` and settles the outcome.
    #[inline]
    fn place(&self, state: &Connect4State, bit: u64) -> Connect4State {
        let mut next = *state;
        let red_moves = state.plies.is_multiple_of(2);
        let mine = if red_moves {
            next.red |= bit;
            next.red
        } else {
            next.black |= bit;
            next.black
        };
        next.plies += 1;
        if self.has_four(mine) {
            next.outcome = if red_moves { 1 } else { 2 };
        } else if u32::from(next.plies) == self.rows * self.cols {
            next.outcome = 3;
        }
        next
    }

    fn to_move(state: &Connect4State) -> RoleIndex {
        usize::from(state.plies % 2)
    }

    /// Scores one side: every line of four that the other side has not blocked scores by how full it
    /// is (so open runs, runs open at both ends, which lie in two such lines, and gapped threes all
    /// count), and every empty cell that would complete a four is a threat, worth much more when it can
    /// be played at once.
    fn side_score(&self, mine: u64, theirs: u64, mask: u64) -> i64 {
        let mut score = 0i64;
        for &w in &self.windows {
            if w & theirs == 0 {
                score += match (w & mine).count_ones() {
                    1 => 1,
                    2 => 8,
                    3 => 40,
                    _ => 0,
                };
            }
        }
        let threats = self.winning_cells(mine, mask);
        let playable = self.playable(mask);
        score += 60 * i64::from((threats & !playable).count_ones());
        score += 300 * i64::from((threats & playable).count_ones());
        score
    }

    /// The seeds' estimator: open runs, runs with two open ends and gapped threes of each side, the
    /// side to move a little ahead.
    pub fn threats(&self, state: &Connect4State) -> Estimate {
        match state.outcome {
            1 => return Estimate::Definitely(Outcome::Winner(0)),
            2 => return Estimate::Definitely(Outcome::Winner(1)),
            3 => return Estimate::Definitely(Outcome::Draw),
            _ => {}
        }
        let mask = state.mask();
        let mut score = self.side_score(state.red, state.black, mask)
            - self.side_score(state.black, state.red, mask);
        // The side to move gets to use its threats first.
        score += if Self::to_move(state) == 0 { 5 } else { -5 };
        Estimate::Guess(score.clamp(-1_000_000, 1_000_000) as i32)
    }
}

impl Game for Connect4 {
    type State = Connect4State;
    type Move = Connect4Move;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> Connect4State {
        Connect4State {
            red: 0,
            black: 0,
            plies: 0,
            outcome: 0,
        }
    }

    fn is_terminal(&self, state: &Connect4State) -> bool {
        state.outcome != 0
    }

    fn legal_moves(&self, state: &Connect4State, role: RoleIndex, out: &mut Vec<Connect4Move>) {
        out.clear();
        if role != Self::to_move(state) {
            out.push(NOOP);
            return;
        }
        if state.outcome != 0 {
            return;
        }
        let playable = self.playable(state.mask());
        for c in 0..self.cols {
            if playable & self.column_mask(c) != 0 {
                out.push(c as u8);
            }
        }
    }

    /// The columns, then the no-op.
    fn move_count(&self) -> usize {
        self.cols as usize + 1
    }

    fn move_number(&self, mv: &Connect4Move) -> Option<u32> {
        Some(if *mv == NOOP {
            self.cols
        } else {
            u32::from(*mv)
        })
    }

    fn next_state(&self, state: &Connect4State, joint: &[Connect4Move]) -> Connect4State {
        match joint.get(Self::to_move(state)) {
            Some(mv) => self.play(state, Self::to_move(state), mv),
            None => *state,
        }
    }

    fn play(&self, state: &Connect4State, _role: RoleIndex, mv: &Connect4Move) -> Connect4State {
        let col = u32::from(*mv);
        if state.outcome != 0 || col >= self.cols {
            return *state;
        }
        let bit = self.playable(state.mask()) & self.column_mask(col);
        if bit == 0 {
            return *state;
        }
        self.place(state, bit)
    }

    fn goal(&self, state: &Connect4State, role: RoleIndex) -> Goal {
        match (state.outcome, role) {
            (1, 0) | (2, 1) => 100,
            (3, _) => 50,
            _ => 0,
        }
    }

    fn mover(&self, state: &Connect4State) -> Option<RoleIndex> {
        (!self.is_terminal(state)).then(|| Self::to_move(state))
    }

    fn show_move(&self, mv: &Connect4Move) -> String {
        if *mv == NOOP {
            "noop".to_string()
        } else {
            format!("drop({})", u32::from(*mv) + 1)
        }
    }

    /// The board with row 1 at the bottom, the row numbers at the left and the column numbers that
    /// `drop(C)` takes underneath; `R` red, `B` black, `.` empty.
    fn show_state(&self, state: &Connect4State) -> String {
        let margin = self.rows.to_string().len();
        let width = self.cols.to_string().len();
        let mut out = String::new();
        for r in (0..self.rows).rev() {
            out.push_str(&format!("{:>margin$} |", r + 1));
            for c in 0..self.cols {
                let bit = 1u64 << (c * self.height + r);
                let cell = if state.red & bit != 0 {
                    'R'
                } else if state.black & bit != 0 {
                    'B'
                } else {
                    '.'
                };
                out.push_str(&format!(" {cell:>width$}"));
            }
            out.push('\n');
        }
        out.push_str(&format!("{:margin$}  ", ""));
        for c in 1..=self.cols {
            out.push_str(&format!(" {c:>width$}"));
        }
        out.push('\n');
        out
    }

    fn state_name(&self, state: &Connect4State) -> Option<String> {
        Some(format!("{:x}.{:x}", state.red, state.black))
    }

    /// Picks among the playable cells directly from the bitboard: no move list, no allocation.
    fn random_playout(
        &self,
        state: &Connect4State,
        rng: &mut SmallRng,
        _buf: &mut Vec<Connect4Move>,
        max_steps: u32,
    ) -> (Connect4State, u32) {
        let mut s = *state;
        let mut steps = 0;
        while s.outcome == 0 && steps < max_steps {
            let mut playable = self.playable(s.mask());
            let n = playable.count_ones();
            if n == 0 {
                break;
            }
            for _ in 0..random_index(rng, n as usize) {
                playable &= playable - 1;
            }
            s = self.place(&s, playable & playable.wrapping_neg());
            steps += 1;
        }
        (s, steps)
    }
}

/// The seeds' hand-written judgement of Connect Four ([`Connect4::threats`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

impl Evaluator<Connect4> for Heuristic {
    fn name(&self) -> String {
        "threats".to_string()
    }

    fn estimate(&self, game: &Connect4, state: &Connect4State) -> Result<Estimate, GameError> {
        Ok(game.threats(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_all(g: &Connect4, cols: &[u8]) -> Connect4State {
        cols.iter()
            .enumerate()
            .fold(g.initial_state(), |s, (i, c)| g.play(&s, i % 2, c))
    }

    fn check(cols: &[u8], outcome: u8) {
        let g = Connect4::new(6, 7).unwrap();
        assert_eq!(play_all(&g, cols).outcome, outcome, "moves {cols:?}");
    }

    #[test]
    fn fours_are_found_in_every_direction() {
        check(&[0, 1, 0, 1, 0, 1, 0], 1); // vertical
        check(&[0, 0, 1, 1, 2, 2, 3], 1); // horizontal
        check(&[0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3], 1); // rising diagonal
        check(&[6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3], 1); // falling diagonal
        check(&[6, 0, 1, 0, 1, 0, 1, 0], 2); // black vertical
        check(&[0, 1, 2, 4, 5, 6], 0); // no wrap across columns
    }

    #[test]
    fn full_columns_are_not_legal() {
        let g = Connect4::new(6, 7).unwrap();
        let s = play_all(&g, &[0, 0, 0, 0, 0, 0]);
        let mut out = Vec::new();
        g.legal_moves(&s, 0, &mut out);
        assert_eq!(out, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(g.play(&s, 0, &0), s);
    }

    #[test]
    fn bad_sizes_are_refused() {
        for (r, c) in [(0, 7), (6, 0), (8, 8), (64, 1)] {
            assert!(Connect4::new(r, c).is_err(), "{r}x{c}");
        }
        assert!(Connect4::new(63, 1).is_ok());
        assert!(Connect4::new(7, 8).is_ok());
    }

    #[test]
    fn the_estimate_prefers_open_threes() {
        let g = Connect4::new(6, 7).unwrap();
        // Red has three on the bottom row with both ends open; black has stacked on top.
        let s = play_all(&g, &[2, 2, 3, 3, 4, 6]);
        assert!(matches!(g.threats(&s), Estimate::Guess(n) if n > 100));
    }
}
