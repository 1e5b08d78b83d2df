//! N×N tic-tac-toe with K in a row (seed 2), on two bitboards.
//!
//! Moves are written as the rule file `games/tictactoe.gdl` writes them, `mark(ROW,COL)` with 1-based row
//! and column, so native and rule games can be compared move for move; the waiting role plays `noop`.

use crate::evaluators::{Estimate, Evaluator, Outcome};
use crate::game::{Dynamics, Game, GameError, GameInfo, Goal, RoleIndex};

/// The most cells a board may have: one bit per cell in a `u64`.
const MAX_CELLS: usize = 64;

/// The no-op move of the role not in control.
pub const NOOP: u8 = u8::MAX;

/// A tic-tac-toe state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TicTacToeState {
    /// Cells marked by x (bit `row * size + col`).
    pub x: u64,
    /// Cells marked by o.
    pub o: u64,
    /// 0 while playing, 1 x won, 2 o won, 3 draw.
    pub outcome: u8,
}

/// A move: the cell index `row * size + col`, or [`NOOP`].
pub type TicTacToeMove = u8;

/// N×N tic-tac-toe, K in a row wins.
#[derive(Clone, Debug)]
pub struct TicTacToe {
    info: GameInfo,
    size: usize,
    k: usize,
    full: u64,
    /// Every line of K cells, for the estimator.
    windows: Vec<u64>,
}

impl TicTacToe {
    /// A `size`×`size` board where `k` in a row wins; needs `1 <= k <= size <= 8`.
    pub fn new(size: usize, k: usize) -> Result<Self, GameError> {
        if size == 0 || size.checked_mul(size).is_none_or(|cells| cells > MAX_CELLS) {
            return Err(GameError::Unsupported(format!(
                "tic-tac-toe size must be between 1 and 8, not {size}"
            )));
        }
        if k == 0 || k > size {
            return Err(GameError::Unsupported(format!(
                "tic-tac-toe needs 1 <= k <= size, but k is {k} and size is {size}"
            )));
        }
        let full = if size * size == 64 {
            u64::MAX
        } else {
            (1u64 << (size * size)) - 1
        };
        let mut windows = Vec::new();
        let dirs: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];
        for r in 0..size as isize {
            for c in 0..size as isize {
                for (dr, dc) in dirs {
                    let mut mask = 0u64;
                    let mut ok = true;
                    for i in 0..k as isize {
                        let (rr, cc) = (r + dr * i, c + dc * i);
                        if rr < 0 || cc < 0 || rr >= size as isize || cc >= size as isize {
                            ok = false;
                            break;
                        }
                        mask |= 1 << (rr as usize * size + cc as usize);
                    }
                    if ok {
                        windows.push(mask);
                    }
                }
            }
        }
        Ok(TicTacToe {
            info: GameInfo {
                name: format!("tictactoe{size}x{size}k{k}"),
                roles: vec!["x".to_string(), "o".to_string()],
                dynamics: Dynamics::TurnTaking,
                zero_sum: true,
            },
            size,
            k,
            full,
            windows,
        })
    }

    /// The board size N.
    pub fn size(&self) -> usize {
        self.size
    }

    fn to_move(state: &TicTacToeState) -> RoleIndex {
        ((state.x | state.o).count_ones() % 2) as RoleIndex
    }

    /// Whether the mark just placed at `cell` completes K in a row in `mine`.
    fn wins(&self, mine: u64, cell: usize) -> bool {
        let (r, c) = ((cell / self.size) as isize, (cell % self.size) as isize);
        let n = self.size as isize;
        let has = |rr: isize, cc: isize| {
            rr >= 0 && cc >= 0 && rr < n && cc < n && mine & (1 << (rr * n + cc)) != 0
        };
        for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
            let mut count = 1;
            for sign in [1, -1] {
                let mut i = 1;
                while has(r + sign * dr * i, c + sign * dc * i) {
                    count += 1;
                    i += 1;
                }
            }
            if count >= self.k {
                return true;
            }
        }
        false
    }

    /// Open lines: every line of K cells holding marks of one player only scores 4^(marks-1) for that
    /// player, so near-complete unblocked lines dominate.
    pub fn open_lines(&self, state: &TicTacToeState) -> Estimate {
        match state.outcome {
            1 => return Estimate::Definitely(Outcome::Winner(0)),
            2 => return Estimate::Definitely(Outcome::Winner(1)),
            3 => return Estimate::Definitely(Outcome::Draw),
            _ => {}
        }
        let mut score: i64 = 0;
        for &w in &self.windows {
            let (xs, os) = ((w & state.x).count_ones(), (w & state.o).count_ones());
            if os == 0 && xs > 0 {
                score += 1 << (2 * (xs - 1).min(15));
            } else if xs == 0 && os > 0 {
                score -= 1 << (2 * (os - 1).min(15));
            }
        }
        Estimate::Guess(score.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
    }
}

impl Game for TicTacToe {
    type State = TicTacToeState;
    type Move = TicTacToeMove;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> TicTacToeState {
        TicTacToeState {
            x: 0,
            o: 0,
            outcome: 0,
        }
    }

    fn is_terminal(&self, state: &TicTacToeState) -> bool {
        state.outcome != 0
    }

    fn legal_moves(&self, state: &TicTacToeState, role: RoleIndex, out: &mut Vec<TicTacToeMove>) {
        out.clear();
        if role != Self::to_move(state) {
            out.push(NOOP);
            return;
        }
        let mut empty = !(state.x | state.o) & self.full;
        while empty != 0 {
            out.push(empty.trailing_zeros() as u8);
            empty &= empty - 1;
        }
    }

    fn next_state(&self, state: &TicTacToeState, joint: &[TicTacToeMove]) -> TicTacToeState {
        let mover = Self::to_move(state);
        match joint.get(mover) {
            Some(mv) => self.play(state, mover, mv),
            None => *state,
        }
    }

    fn play(&self, state: &TicTacToeState, _role: RoleIndex, mv: &TicTacToeMove) -> TicTacToeState {
        let cell = usize::from(*mv);
        if state.outcome != 0 || cell >= self.size * self.size {
            return *state;
        }
        let bit = 1u64 << cell;
        if (state.x | state.o) & bit != 0 {
            return *state;
        }
        let mut next = *state;
        let x_moves = Self::to_move(state) == 0;
        let mine = if x_moves {
            next.x |= bit;
            next.x
        } else {
            next.o |= bit;
            next.o
        };
        if self.wins(mine, cell) {
            next.outcome = if x_moves { 1 } else { 2 };
        } else if (next.x | next.o) == self.full {
            next.outcome = 3;
        }
        next
    }

    fn goal(&self, state: &TicTacToeState, role: RoleIndex) -> Goal {
        match (state.outcome, role) {
            (1, 0) | (2, 1) => 100,
            (3, _) => 50,
            _ => 0,
        }
    }

    fn mover(&self, state: &TicTacToeState) -> Option<RoleIndex> {
        (!self.is_terminal(state)).then(|| Self::to_move(state))
    }

    fn show_move(&self, mv: &TicTacToeMove) -> String {
        if *mv == NOOP {
            return "noop".to_string();
        }
        let cell = usize::from(*mv);
        format!("mark({},{})", cell / self.size + 1, cell % self.size + 1)
    }

    /// The board as `mark(Row,Col)` names it: row 1 at the top, the column numbers above, the row
    /// numbers at the left (as `games/tictactoe.gdl` is drawn), empty cells as `.`.
    fn show_state(&self, state: &TicTacToeState) -> String {
        let margin = self.size.to_string().len();
        let mut out = format!("{:margin$}  ", "");
        for c in 1..=self.size {
            out.push_str(&format!(" {c}"));
        }
        out.push('\n');
        for r in 0..self.size {
            out.push_str(&format!("{:>margin$} |", r + 1));
            for c in 0..self.size {
                let bit = 1u64 << (r * self.size + c);
                out.push(' ');
                out.push(if state.x & bit != 0 {
                    'x'
                } else if state.o & bit != 0 {
                    'o'
                } else {
                    '.'
                });
            }
            out.push('\n');
        }
        out
    }

    fn state_name(&self, state: &TicTacToeState) -> Option<String> {
        Some(format!("{:x}.{:x}", state.x, state.o))
    }
}

/// The hand-written judgement of tic-tac-toe: open lines ([`TicTacToe::open_lines`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

impl Evaluator<TicTacToe> for Heuristic {
    fn name(&self) -> String {
        "open lines".to_string()
    }

    fn estimate(&self, game: &TicTacToe, state: &TicTacToeState) -> Result<Estimate, GameError> {
        Ok(game.open_lines(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_new(size: usize, k: usize, ok: bool) {
        assert_eq!(TicTacToe::new(size, k).is_ok(), ok, "size {size} k {k}");
    }

    #[test]
    fn sizes_are_checked() {
        for (size, k, ok) in [
            (3, 3, true),
            (8, 5, true),
            (9, 3, false),
            (0, 0, false),
            (3, 4, false),
        ] {
            check_new(size, k, ok);
        }
    }

    #[test]
    fn moves_print_one_based_and_parse_back() {
        let g = TicTacToe::new(3, 3).unwrap();
        let s = g.initial_state();
        assert_eq!(g.show_move(&1), "mark(1,2)");
        assert_eq!(g.parse_move(&s, 0, "(mark 1 2)").unwrap(), 1);
        assert!(g.parse_move(&s, 0, "mark(4,4)").is_err());
        assert_eq!(g.parse_move(&s, 1, "noop").unwrap(), NOOP);
    }

    #[test]
    fn a_row_wins() {
        let g = TicTacToe::new(3, 3).unwrap();
        let mut s = g.initial_state();
        for (role, cell) in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)] {
            assert!(!g.is_terminal(&s));
            s = g.play(&s, role, &cell);
        }
        assert!(g.is_terminal(&s));
        assert_eq!((g.goal(&s, 0), g.goal(&s, 1)), (100, 0));
    }
}
