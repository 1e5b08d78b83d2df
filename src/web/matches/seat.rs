//! A person's seat on the page: their legal moves offered as a `turn` event, each with the squares of
//! the drawing it changes (how a click on the board picks a move), and their answer read from the
//! room's inbox within the play clock.

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Input, MatchRoom};
use crate::game::{Dynamics, Game, RoleIndex};
use crate::referee::{Answer, MatchStart, Seat, Turn, Violation};

/// A person on the page: shown their legal moves (and the squares each changes, so that a click on
/// the board picks one), answering with what the page sends within the play clock.
pub struct BrowserSeat {
    pub(super) room: Arc<MatchRoom>,
    pub(super) role: RoleIndex,
    pub(super) can_take_back: bool,
}

impl<G: Game> Seat<G> for BrowserSeat {
    fn name(&self) -> String {
        "human".into()
    }

    fn start(&mut self, _game: &G, start: &MatchStart<'_>) -> Result<String, Violation> {
        self.can_take_back = start.can_take_back;
        Ok("human".into())
    }

    fn ask(&mut self, turn: &Turn<'_, G>) -> Answer<G::Move> {
        let game = turn.game;
        let mut legal = Vec::new();
        game.legal_moves(turn.state, turn.role, &mut legal);
        if legal.len() == 1 {
            // The waiting role's no-op: nothing to decide.
            return Answer::Move {
                mv: legal.swap_remove(0),
                stats: None,
                explanation: None,
            };
        }
        let squares = squares_changed(game, turn.state, turn.role, &legal);
        let number = {
            let mut inputs = self.room.inputs();
            let inbox = &mut inputs[self.role];
            inbox.queue.clear();
            inbox.turn += 1;
            inbox.asking = true;
            inbox.turn
        };
        let deadline = turn.asked + turn.clock.play;
        let offer = |left: Duration| {
            json!({
                "type": "turn",
                "role": self.role,
                "turn": number,
                "moves": legal.iter().zip(&squares).map(|(m, sq)| json!({
                    "move": game.show_move(m), "squares": sq,
                })).collect::<Vec<_>>(),
                "clock_ms": left.as_millis() as u64,
                // When the turn ends, in Unix milliseconds: a page that replays the event later (a
                // reload) counts down what is left, not the whole clock again.
                "ends_at_ms": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |t| (t + left).as_millis() as u64),
                "can_take_back": self.can_take_back,
            })
        };
        // The time left: asked again after a take-back with nothing to take back, the clock runs on.
        self.room
            .feed
            .push(offer(deadline.saturating_duration_since(Instant::now())));
        self.wait(turn, deadline, &offer)
    }
}

impl BrowserSeat {
    /// The person's answer to a turn offered, or why there is none by `deadline`; a move that does
    /// not parse is `rejected` and the turn offered again with the time left. The turn is no longer
    /// asked when this returns.
    fn wait<G: Game>(
        &self,
        turn: &Turn<'_, G>,
        deadline: Instant,
        offer: &dyn Fn(Duration) -> Value,
    ) -> Answer<G::Move> {
        let game = turn.game;
        let mut inputs = self.room.inputs();
        let answer = loop {
            // A person who sends bad moves without end fills the feed with turns offered again:
            // the match stops here, not at the referee's next event, which may be a clock away.
            if self.room.feed.is_full() {
                self.room.stop();
            }
            if self.room.stop.is_set() || self.room.abandoned() {
                break Answer::Failed(Violation::ConnectionError {
                    detail: "the page was closed or the match stopped".into(),
                });
            }
            match inputs[self.role].queue.pop_front() {
                Some(Input::TakeBack) if self.can_take_back => break Answer::TakeBack,
                Some(Input::TakeBack) => self.room.feed.push(json!({
                    "type": "rejected", "role": self.role,
                    "error": "moves cannot be taken back when a remote player has seen them",
                })),
                Some(Input::Move(text)) => match game.parse_move(turn.state, turn.role, &text) {
                    Ok(mv) => {
                        break Answer::Move {
                            mv,
                            stats: None,
                            explanation: None,
                        }
                    }
                    Err(e) => {
                        self.room.feed.push(json!({
                            "type": "rejected", "role": self.role, "error": e.to_string(),
                        }));
                        // The page let go of the turn when it sent the move: offer it again.
                        let left = deadline.saturating_duration_since(Instant::now());
                        self.room.feed.push(offer(left));
                    }
                },
                None => {
                    let now = Instant::now();
                    if now >= deadline {
                        break Answer::Failed(Violation::Timeout {
                            detail: "no move was chosen within the play clock".into(),
                        });
                    }
                    // Wakes at a move, a stop, or often enough to notice a closed page.
                    let wait = (deadline - now).min(Duration::from_millis(200));
                    inputs = self
                        .room
                        .input_arrived
                        .wait_timeout(inputs, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        };
        // Under the same lock as the last read: a move sent from now on is for a turn that ended.
        inputs[self.role].asking = false;
        answer
    }
}

/// A square of a drawing, as (board, row, column), and what stands on it.
type Square = ([usize; 3], Option<String>);

/// For each of `role`'s legal moves, the squares of the drawing it changes, as (board, row,
/// column): how a click on the board picks a move (a mark's square, the square a disc falls to, a
/// piece's from and to).
///
/// In a simultaneous game the other roles are taken to play their first legal move, and what that
/// changes is not the move's: a square counts for a move when its value there differs from the value
/// most of the moves leave (the other roles' square, the same after every move, does not count); a
/// move that changes no such square (one that clashes with the other roles' move) gets the squares
/// where it leaves the board unlike most moves do, or else (of two moves, the one that clashes) the
/// squares where any other move leaves the board otherwise: then a click there offers both moves
/// instead of picking one alone.
fn squares_changed<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    legal: &[G::Move],
) -> Vec<Vec<[usize; 3]>> {
    let Some(before) = game.drawing(state) else {
        return vec![Vec::new(); legal.len()];
    };
    let roles = game.info().num_roles();
    let others: Vec<Option<G::Move>> = (0..roles)
        .map(|r| {
            let mut moves = Vec::new();
            game.legal_moves(state, r, &mut moves);
            moves.into_iter().next()
        })
        .collect();
    // A drawing's squares with their values, in `before`'s order; none when its boards are shaped
    // otherwise (then no square can be compared).
    let cells = |d: &crate::drawing::Drawing| -> Option<Vec<Square>> {
        let same_shape = d.boards.len() == before.boards.len()
            && before
                .boards
                .iter()
                .zip(&d.boards)
                .all(|(g0, g1)| g0.rows == g1.rows && g0.columns == g1.columns);
        same_shape.then(|| {
            let mut out = Vec::new();
            for (b, g) in d.boards.iter().enumerate() {
                for (r, row) in g.cells.iter().enumerate() {
                    for (c, v) in row.iter().enumerate() {
                        out.push(([b, r, c], v.clone()));
                    }
                }
            }
            out
        })
    };
    let start = cells(&before).unwrap_or_default();
    let after: Vec<Option<Vec<Square>>> = legal
        .iter()
        .map(|mv| {
            let next = match game.info().dynamics {
                Dynamics::TurnTaking => game.play(state, role, mv),
                Dynamics::Simultaneous => {
                    let joint: Option<Vec<G::Move>> = (0..roles)
                        .map(|r| {
                            if r == role {
                                Some(mv.clone())
                            } else {
                                others[r].clone()
                            }
                        })
                        .collect();
                    game.next_state(state, &joint?)
                }
            };
            game.drawing(&next).and_then(|d| cells(&d))
        })
        .collect();
    let changed = |a: &[Square]| -> Vec<[usize; 3]> {
        a.iter()
            .zip(&start)
            .filter(|((_, v1), (_, v0))| v1 != v0)
            .map(|((sq, _), _)| *sq)
            .collect()
    };
    if game.info().dynamics == Dynamics::TurnTaking || legal.len() < 2 {
        return after
            .iter()
            .map(|a| a.as_deref().map_or_else(Vec::new, changed))
            .collect();
    }
    // The value most moves leave on each square; on a tie the value it has now (with two moves, each
    // changing a square of its own, neither change is the usual one).
    let usual: Vec<&Option<String>> = (0..start.len())
        .map(|i| {
            let mut counts: hashbrown::HashMap<&Option<String>, usize> = hashbrown::HashMap::new();
            let values: Vec<&Option<String>> = after
                .iter()
                .flatten()
                .filter_map(|a| a.get(i).map(|(_, v)| v))
                .collect();
            for v in &values {
                *counts.entry(*v).or_default() += 1;
            }
            let mut best = (counts.get(&start[i].1).copied().unwrap_or(0), &start[i].1);
            for v in values {
                if counts[v] > best.0 {
                    best = (counts[v], v);
                }
            }
            best.1
        })
        .collect();
    after
        .iter()
        .map(|a| {
            let Some(a) = a else {
                return Vec::new();
            };
            let unusual = |(i, (_, v)): &(usize, &Square)| v != usual[*i];
            let own: Vec<[usize; 3]> = a
                .iter()
                .enumerate()
                .filter(|(i, (_, v))| *v != start[*i].1)
                .filter(unusual)
                .map(|(_, (sq, _))| *sq)
                .collect();
            if !own.is_empty() {
                return own;
            }
            let unlike: Vec<[usize; 3]> = a
                .iter()
                .enumerate()
                .filter(unusual)
                .map(|(_, (sq, _))| *sq)
                .collect();
            if !unlike.is_empty() {
                return unlike;
            }
            // A move that leaves every square as usual (of two, the one that clashes): the
            // squares where any other move leaves the board otherwise, so that a click there
            // offers it among the others instead of picking another move alone.
            a.iter()
                .enumerate()
                .filter(|(i, (_, v))| {
                    after
                        .iter()
                        .flatten()
                        .any(|b| b.get(*i).is_some_and(|(_, w)| w != v))
                })
                .map(|(_, (sq, _))| *sq)
                .collect()
        })
        .collect()
}
