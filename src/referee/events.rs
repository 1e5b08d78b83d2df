//! What happens in a match, as typed events for observers, and who won.
//!
//! The referee tells every [`Observer`] each event as it happens: the terminal printer, the match record,
//! a tournament's tally, a progress bar and a web page are all observers of the same events.

use std::time::Duration;

use crate::game::{Game, Goal, RoleIndex};
use crate::players::{Explanation, SearchStats};

/// Why a seat's answer was not played: the codes of ggp-base's match records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// `TO`: no answer within the play clock and its grace.
    Timeout {
        /// What happened, in words.
        detail: String,
    },
    /// `IL`: an answer that is not a legal move (or not a move at all).
    Illegal {
        /// What the seat answered (for a remote player, its reply's first hundred characters).
        answer: String,
        /// Why it is not legal.
        detail: String,
    },
    /// `CE`: the seat could not be reached, or failed.
    ConnectionError {
        /// What happened, in words.
        detail: String,
    },
}

impl Violation {
    /// `TO`, `IL` or `CE`.
    pub fn code(&self) -> &'static str {
        match self {
            Violation::Timeout { .. } => "TO",
            Violation::Illegal { .. } => "IL",
            Violation::ConnectionError { .. } => "CE",
        }
    }

    /// What happened, in words.
    pub fn detail(&self) -> &str {
        match self {
            Violation::Timeout { detail }
            | Violation::Illegal { detail, .. }
            | Violation::ConnectionError { detail } => detail,
        }
    }

    /// The violation a seat that missed the start is charged with at every step it is replaced: the
    /// same code as the start's (a start that timed out is a `TO` at every step, as ggp-base records
    /// it).
    pub fn missed_start(&self) -> Violation {
        let detail = format!("it missed the start ({})", self.detail());
        match self {
            Violation::Timeout { .. } => Violation::Timeout { detail },
            Violation::Illegal { answer, .. } => Violation::Illegal {
                answer: answer.clone(),
                detail,
            },
            Violation::ConnectionError { .. } => Violation::ConnectionError { detail },
        }
    }

    /// What a ggp-base match record keeps: the code, and for an illegal answer the answer itself
    /// (`IL (mark 9 9)`).
    pub fn record_text(&self) -> String {
        match self {
            Violation::Illegal { answer, .. } => format!("IL {answer}"),
            other => other.code().to_string(),
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.detail())
    }
}

/// One role's part in a step.
#[derive(Clone, Debug)]
pub struct MoveReport<M> {
    /// The move played (the substitute when the answer could not be played).
    pub mv: M,
    /// How long the seat took to answer.
    pub took: Duration,
    /// The player's effort, when it searched.
    pub stats: Option<SearchStats>,
    /// The moves the player weighed and the line it expects, when it says.
    pub explanation: Option<Explanation>,
    /// Why the answer was replaced, when it was.
    pub violation: Option<Violation>,
}

/// Who won a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// One role's goal is strictly the highest.
    Winner(RoleIndex),
    /// Several roles share the highest goal: every role (a draw), or these.
    Draw(Vec<RoleIndex>),
    /// A one-role game (a puzzle): the goal reached.
    Solo(Goal),
}

impl Verdict {
    /// The verdict in words, naming `roles`: `x wins`, `a draw`, `solved, full score`.
    pub fn words(&self, roles: &[String]) -> String {
        let name = |r: usize| roles.get(r).map_or("?", String::as_str);
        match self {
            Verdict::Solo(100) => "solved, full score".to_string(),
            Verdict::Solo(goal) => format!("{goal} of 100"),
            Verdict::Winner(r) => format!("{} wins", name(*r)),
            Verdict::Draw(tied) if tied.len() == roles.len() => "a draw".to_string(),
            Verdict::Draw(tied) => format!(
                "a draw between {}",
                tied.iter()
                    .map(|&r| name(r))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }
}

/// How one seat did in a finished game: a **win** when its goal is strictly higher than every other
/// seat's, a **draw** when it ties for the highest, a **loss** otherwise. A seat alone (a puzzle)
/// has nobody to beat: it wins with the full score, 100, and loses below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatResult {
    /// The highest goal, alone.
    Win,
    /// The highest goal, shared.
    Draw,
    /// Below the highest goal.
    Loss,
}

impl SeatResult {
    /// A seat's score: 1 for a win, ½ for a draw, 0 for a loss.
    pub fn score(self) -> f64 {
        match self {
            SeatResult::Win => 1.0,
            SeatResult::Draw => 0.5,
            SeatResult::Loss => 0.0,
        }
    }
}

/// Every seat's result (see [`SeatResult`]); the one definition of who won.
pub fn seat_results(goals: &[Goal]) -> Vec<SeatResult> {
    if let [goal] = goals {
        return vec![if *goal >= 100 {
            SeatResult::Win
        } else {
            SeatResult::Loss
        }];
    }
    let Some(&top) = goals.iter().max() else {
        return Vec::new();
    };
    let at_top = goals.iter().filter(|&&g| g == top).count();
    goals
        .iter()
        .map(|&g| match (g == top, at_top) {
            (false, _) => SeatResult::Loss,
            (true, 1) => SeatResult::Win,
            (true, _) => SeatResult::Draw,
        })
        .collect()
}

/// Who won a game that ended with `goals` (see [`seat_results`]).
pub fn verdict(goals: &[Goal]) -> Verdict {
    if let [goal] = goals {
        return Verdict::Solo(*goal);
    }
    let results = seat_results(goals);
    match results.iter().position(|&r| r == SeatResult::Win) {
        Some(winner) => Verdict::Winner(winner),
        None => Verdict::Draw(
            (0..goals.len())
                .filter(|&r| results[r] == SeatResult::Draw)
                .collect(),
        ),
    }
}

/// What happens in a match, as it happens.
#[derive(Debug)]
pub enum MatchEvent<'a, G: Game> {
    /// The match is about to start: each seat's name, in role order.
    Starting {
        /// The match's id.
        match_id: &'a str,
        /// Per role, the seat's name.
        seats: &'a [String],
    },
    /// A seat was told of the match; `problem` when it could not start.
    Ready {
        /// The role.
        role: RoleIndex,
        /// The seat's name (a remote player's own, when it says one).
        name: &'a str,
        /// Why it missed the start.
        problem: Option<&'a Violation>,
    },
    /// The state before step `step + 1` (or the final state).
    State {
        /// Joint moves played so far.
        step: usize,
        /// The state.
        state: &'a G::State,
    },
    /// Every seat was asked, and this joint move is played.
    Moves {
        /// The step, counting from 1.
        step: usize,
        /// The role in control, in a turn-taking state.
        mover: Option<RoleIndex>,
        /// Per role, in role order, its part.
        moves: &'a [MoveReport<G::Move>],
    },
    /// A person asked to take back their last move: play resumes from the state after `step` joint
    /// moves (`None`: they have made no move yet, nothing changes).
    TakenBack {
        /// Who asked.
        role: RoleIndex,
        /// The joint moves kept.
        step: Option<usize>,
    },
    /// The game is over.
    Finished {
        /// Each role's goal.
        goals: &'a [Goal],
        /// Who won.
        verdict: &'a Verdict,
    },
    /// The match stopped before the game ended.
    Aborted {
        /// Joint moves played.
        step: usize,
        /// Why.
        reason: &'a str,
    },
}

/// Something that follows a match: it sees every event in order, on the referee's thread.
pub trait Observer<G: Game> {
    /// Sees one event of the match of `game`.
    fn observe(&mut self, game: &G, event: &MatchEvent<'_, G>);
}

impl<G: Game, F: FnMut(&G, &MatchEvent<'_, G>)> Observer<G> for F {
    fn observe(&mut self, game: &G, event: &MatchEvent<'_, G>) {
        self(game, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_goal_alone_wins_and_shared_draws() {
        use SeatResult::*;
        assert_eq!(seat_results(&[100, 0]), [Win, Loss]);
        assert_eq!(seat_results(&[50, 50]), [Draw, Draw]);
        assert_eq!(seat_results(&[70, 70, 10]), [Draw, Draw, Loss]);
        assert_eq!(seat_results(&[100]), [Win]);
        assert_eq!(
            seat_results(&[99]),
            [Loss],
            "alone, only the full score wins"
        );
        assert_eq!(verdict(&[0, 100]), Verdict::Winner(1));
        assert_eq!(verdict(&[70, 70, 10]), Verdict::Draw(vec![0, 1]));
        assert_eq!(verdict(&[40]), Verdict::Solo(40));
    }

    #[test]
    fn violations_say_their_codes() {
        let il = Violation::Illegal {
            answer: "(mark 9 9)".into(),
            detail: "not legal".into(),
        };
        assert_eq!(il.code(), "IL");
        assert_eq!(il.record_text(), "IL (mark 9 9)");
        let to = Violation::Timeout {
            detail: "no reply".into(),
        };
        assert_eq!((to.code(), to.record_text()), ("TO", "TO".to_string()));
    }
}
