//! One match as a served player sees it: the loaded game, the role, the player and the current state,
//! behind an object-safe [`Session`] so that the server holds matches of any engine side by side.
//!
//! The player sits in a [`PlayerSeat`], the referee's seat for a program in this process: a player that
//! fails or panics loses its own answer only, and the session answers a random legal move instead.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{Game, GameError, Goal, RoleIndex};
use crate::load::{EngineKind, Loaded, Visitor};
use crate::players::{make_player, thousands, Clock, Deadline, PlayerConfig, PlayerSpec};
use crate::referee::{Answer, MatchStart, PlayerSeat, Seat, Turn};

/// What a session reports for one move.
#[derive(Clone, Debug)]
pub struct MoveReply {
    /// The move, as KIF.
    pub mv: String,
    /// The player's search effort (`SearchStats::effort`), empty when it did not search.
    pub effort: String,
    /// Why the player's own move was not used, when a fallback move was played instead.
    pub fallback: Option<String>,
}

/// Why a session refused a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The manager's joint move does not fit the game (wrong count, or an illegal move).
    #[error("{0}")]
    BadMoves(String),
    /// A `play` after the game has ended.
    #[error("the game is already over")]
    Over,
    /// The role is not one of the game's, or the player cannot play the game.
    #[error("{0}")]
    Refused(String),
}

/// A match in progress, whatever engine plays its game.
pub trait Session: Send {
    /// The role this session plays.
    fn role(&self) -> &str;
    /// What plays the game.
    fn engine(&self) -> EngineKind;
    /// Lets the player prepare; returns before `deadline` (a player that fails to prepare still plays).
    fn prepare(&mut self, deadline: Deadline) -> Option<String>;
    /// Applies the last joint move (KIF text, one per role, in role order).
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError>;
    /// A [`Tracker`] of the current state, which follows the manager's moves apart from the session
    /// (and its player).
    fn tracker(&mut self) -> Box<dyn Tracker>;
    /// Chooses this role's move in the current state before `deadline`.
    fn choose(&mut self, deadline: Deadline) -> Result<MoveReply, SessionError>;
    /// Applies the last joint move (`None` on the first step) and chooses this role's move before
    /// `deadline`.
    fn play(
        &mut self,
        moves: Option<&[String]>,
        deadline: Deadline,
    ) -> Result<MoveReply, SessionError> {
        if let Some(moves) = moves {
            self.advance(moves)?;
        }
        self.choose(deadline)
    }
    /// Applies the last joint move, if any, and returns this role's goal value in the final state when
    /// the game is over.
    fn stop(&mut self, moves: Option<&[String]>) -> Result<Option<Goal>, SessionError>;
    /// Lets the player go on thinking after its answer, until `until` or until `wanted` drops to 1
    /// or less (see [`Player::ponder`](crate::players::Player::ponder)); returns the simulations
    /// added. The default does nothing.
    fn ponder(&mut self, until: Deadline, wanted: &AtomicUsize) -> u64 {
        let _ = (until, wanted);
        0
    }
}

/// A match's state as the manager's moves make it, with a random legal move of the role to answer
/// when its player cannot: the server keeps one apart from the [`Session`], whose player may hold it
/// past the answer's moment (thinking on after its last answer, a step of which can outlast the
/// next play clock on the Datalog evaluator).
pub trait Tracker: Send {
    /// Applies the last joint move (KIF text, one per role, in role order).
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError>;
    /// A random legal move of the role, as KIF.
    fn fallback_move(&mut self) -> Result<String, SessionError>;
}

/// A [`Tracker`] over a game of type `G`, and the state a [`MatchSession`] plays from.
struct Track<G: Game> {
    game: Arc<G>,
    role: RoleIndex,
    state: G::State,
    rng: SmallRng,
}

impl<G: Game> Track<G> {
    fn apply(&mut self, moves: &[String]) -> Result<(), SessionError> {
        let game = &self.game;
        let roles = game.info().num_roles();
        if moves.len() != roles {
            return Err(SessionError::BadMoves(format!(
                "the game has {roles} roles but the joint move has {} moves",
                moves.len()
            )));
        }
        if game.is_terminal(&self.state) {
            return Err(SessionError::Over);
        }
        let joint = moves
            .iter()
            .enumerate()
            .map(|(r, text)| game.parse_move(&self.state, r, text))
            .collect::<Result<Vec<_>, GameError>>()
            .map_err(|e| SessionError::BadMoves(e.to_string()))?;
        self.state = game.next_state(&self.state, &joint);
        Ok(())
    }

    fn fallback(&mut self, why: String) -> Result<MoveReply, SessionError> {
        let game = &self.game;
        let mut legal = Vec::new();
        game.legal_moves(&self.state, self.role, &mut legal);
        if legal.is_empty() {
            return Err(SessionError::Refused(format!(
                "{why}; and the role has no legal move"
            )));
        }
        let mv = &legal[self.rng.gen_range(0..legal.len())];
        Ok(MoveReply {
            mv: game.move_kif(mv),
            effort: String::new(),
            fallback: Some(why),
        })
    }
}

impl<G: Game> Tracker for Track<G> {
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError> {
        self.apply(moves)
    }

    fn fallback_move(&mut self) -> Result<String, SessionError> {
        if self.game.is_terminal(&self.state) {
            return Err(SessionError::Over);
        }
        self.fallback(String::new()).map(|reply| reply.mv)
    }
}

/// A [`Session`] over a game of type `G`.
pub struct MatchSession<G: Game> {
    loaded: Loaded<G>,
    seat: PlayerSeat<G>,
    track: Track<G>,
    /// The simulations the player added after its last answer (see [`Session::ponder`]), reported
    /// with the next answer's effort.
    pondered: u64,
}

impl<G: Game> MatchSession<G> {
    /// A session playing `role` of `loaded`'s game with `seat`, from the initial state.
    pub fn new(loaded: Loaded<G>, role: RoleIndex, seat: PlayerSeat<G>, seed: u64) -> Self {
        let track = Track {
            game: Arc::clone(&loaded.game),
            role,
            state: loaded.game.initial_state(),
            rng: SmallRng::seed_from_u64(seed),
        };
        MatchSession {
            loaded,
            seat,
            track,
            pondered: 0,
        }
    }

    /// The current state.
    pub fn state(&self) -> &G::State {
        &self.track.state
    }
}

impl<G: Game> Session for MatchSession<G> {
    fn role(&self) -> &str {
        &self.loaded.game.info().roles[self.track.role]
    }

    fn engine(&self) -> EngineKind {
        self.loaded.report.engine
    }

    fn prepare(&mut self, deadline: Deadline) -> Option<String> {
        let now = Instant::now();
        let start = MatchStart {
            match_id: "",
            role: self.track.role,
            rules: None,
            clock: Clock {
                start: deadline.remaining(),
                play: deadline.remaining(),
                margin: std::time::Duration::ZERO,
            },
            started: now,
            can_take_back: false,
            // A served player uses the whole start clock: it cannot know when the others are ready.
            unprepared: None,
            // An abort ends the preparation.
            stop: deadline.stop(),
        };
        self.seat
            .start(&self.loaded.game, &start)
            .err()
            .map(|v| v.detail().to_string())
    }

    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError> {
        self.track.apply(moves)
    }

    fn tracker(&mut self) -> Box<dyn Tracker> {
        Box::new(Track {
            game: Arc::clone(&self.track.game),
            role: self.track.role,
            state: self.track.state.clone(),
            rng: SmallRng::seed_from_u64(self.track.rng.gen()),
        })
    }

    fn choose(&mut self, deadline: Deadline) -> Result<MoveReply, SessionError> {
        let game = Arc::clone(&self.loaded.game);
        if game.is_terminal(&self.track.state) {
            return Err(SessionError::Over);
        }
        let left = deadline.remaining();
        let turn = Turn {
            game: game.as_ref(),
            state: &self.track.state,
            role: self.track.role,
            last: None,
            clock: Clock {
                start: left,
                play: left,
                margin: std::time::Duration::ZERO,
            },
            grace: std::time::Duration::ZERO,
            asked: Instant::now(),
            // A served player cannot know when the other players answer the manager.
            unanswered: None,
            // An abort ends the search.
            stop: deadline.stop(),
        };
        match self.seat.ask(&turn) {
            Answer::Move { mv, stats, .. } => {
                let mut legal = Vec::new();
                game.legal_moves(&self.track.state, self.track.role, &mut legal);
                if !legal.contains(&mv) {
                    return self
                        .track
                        .fallback("the player chose an illegal move".to_string());
                }
                let mut effort = stats.map(|s| s.effort()).unwrap_or_default();
                let pondered = std::mem::take(&mut self.pondered);
                if pondered > 0 {
                    effort.push_str(&format!(
                        "; {} simulations while waiting for this request",
                        thousands(pondered)
                    ));
                }
                Ok(MoveReply {
                    mv: game.move_kif(&mv),
                    effort,
                    fallback: None,
                })
            }
            Answer::Failed(v) => self.track.fallback(v.detail().to_string()),
            Answer::TakeBack | Answer::Quit => {
                self.track.fallback("the player gave no move".into())
            }
        }
    }

    fn ponder(&mut self, until: Deadline, wanted: &AtomicUsize) -> u64 {
        let game = Arc::clone(&self.loaded.game);
        if game.is_terminal(&self.track.state) {
            return 0;
        }
        let added = self
            .seat
            .ponder(game.as_ref(), self.track.role, until, wanted);
        self.pondered += added;
        added
    }

    fn stop(&mut self, moves: Option<&[String]>) -> Result<Option<Goal>, SessionError> {
        if let Some(moves) = moves {
            if !self.loaded.game.is_terminal(&self.track.state) {
                self.track.apply(moves)?;
            }
        }
        let game = &self.loaded.game;
        Ok(game
            .is_terminal(&self.track.state)
            .then(|| game.goal(&self.track.state, self.track.role)))
    }
}

/// Builds a [`Session`] for `role` (named as the rules name it, any letter case) with the player
/// `spec`, on whichever game was loaded.
pub struct NewSession<'a> {
    /// The role to play.
    pub role: &'a str,
    /// The player.
    pub spec: &'a PlayerSpec,
    /// The player's settings.
    pub config: &'a PlayerConfig,
}

impl Visitor for NewSession<'_> {
    type Output = Result<Box<dyn Session>, SessionError>;

    fn visit<G: Game>(self, loaded: Loaded<G>) -> Self::Output {
        let info = loaded.game.info();
        let role = info.role_index(self.role).ok_or_else(|| {
            SessionError::Refused(format!(
                "`{}` is not a role of this game; the roles are {}",
                self.role,
                info.roles.join(", ")
            ))
        })?;
        let player = make_player(
            self.spec,
            role,
            loaded.game.as_ref(),
            self.config,
            Arc::clone(&loaded.evaluator),
        )
        .map_err(|e| SessionError::Refused(e.to_string()))?;
        let seed = crate::players::role_seed(self.config.seed, role);
        Ok(Box::new(MatchSession::new(
            loaded,
            role,
            PlayerSeat::new(player),
            seed,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{load, GameSource, LoadOptions};
    use crate::players::{Ask, Choice, Player, PlayerError, PlayerKind};
    use crate::syntax::ast::Syntax;
    use std::time::Duration;

    const RULES: &str =
        "(role a) (role b) (init (s 0)) (legal a go) (legal a stay) (legal b wait) \
         (<= (next (s 1)) (true (s 0))) (<= (next (s 2)) (true (s 1))) \
         (<= terminal (true (s 2))) (goal a 100) (goal b 0)";

    struct Panicker;
    impl<G: Game> Player<G> for Panicker {
        fn name(&self) -> String {
            "panicker".into()
        }
        fn choose(&mut self, _: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
            panic!("deliberately")
        }
    }

    /// A session with a panicking player, or (with `kind`) one made as the server makes them.
    struct Make(Option<PlayerKind>);

    impl Visitor for Make {
        type Output = Box<dyn Session>;
        fn visit<G: Game>(self, loaded: Loaded<G>) -> Box<dyn Session> {
            match self.0 {
                Some(kind) => NewSession {
                    role: "A",
                    spec: &kind.into(),
                    config: &PlayerConfig::default(),
                }
                .visit(loaded)
                .unwrap(),
                None => Box::new(MatchSession::new(
                    loaded,
                    0,
                    PlayerSeat::new(Box::new(Panicker)),
                    1,
                )),
            }
        }
    }

    fn session(kind: Option<PlayerKind>) -> Box<dyn Session> {
        let source = GameSource::RuleText {
            text: RULES.into(),
            name: "t".into(),
            syntax: Syntax::Kif,
        };
        load(&source, &LoadOptions::default())
            .unwrap()
            .visit(Make(kind))
    }

    #[test]
    fn a_session_follows_the_managers_moves() {
        let mut s = session(Some(PlayerKind::Legal));
        let d = || Deadline::after(Duration::from_millis(200));
        let first = s.play(None, d()).unwrap();
        assert!(first.fallback.is_none());
        let next = s.play(Some(&["(GO)".into(), "wait".into()]), d()).unwrap();
        assert!(next.mv == "go" || next.mv == "stay", "{next:?}");
        let err = s
            .play(Some(&["fly".into(), "wait".into()]), d())
            .unwrap_err();
        assert!(
            matches!(err, SessionError::BadMoves(ref m) if m.contains("fly")),
            "{err}"
        );
        assert!(s.play(Some(&["go".into()]), d()).is_err());
        assert_eq!(
            s.stop(Some(&["go".into(), "wait".into()])).unwrap(),
            Some(100)
        );
    }

    #[test]
    fn a_panicking_player_loses_only_its_moves() {
        let mut s = session(None);
        let d = Deadline::after(Duration::from_millis(200));
        let reply = s.play(None, d).unwrap();
        assert!(reply.fallback.unwrap().contains("panicked"));
        assert!(reply.mv == "go" || reply.mv == "stay");
        let reply = s.play(Some(&[reply.mv, "wait".into()]), d).unwrap();
        assert!(reply.fallback.is_some());
    }
}
