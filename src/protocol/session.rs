//! One match as a player sees it: the game, the role, the player and the current state, behind an
//! object-safe [`Session`] so that the server holds matches of any engine side by side.
//!
//! A player that fails or panics loses its own match only: the session answers a random legal move
//! instead, and after a panic it stops asking the player (its internal state may be broken).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::game::{GameError, Goal, RoleIndex};
use crate::players::{make_player, Deadline, Player, PlayerConfig, PlayerKind};

use super::estimated::{Estimated, ESTIMATE_PLAYOUTS};
use super::{KifGame, KifVisitor};

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
    /// `network` or `datalog`.
    fn engine(&self) -> &'static str;
    /// Lets the player prepare; returns before `deadline` (a player that fails to prepare still plays).
    fn prepare(&mut self, deadline: Deadline) -> Option<String>;
    /// Applies the last joint move (KIF text, one per role, in role order).
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError>;
    /// A random legal move of this role, as KIF: what to answer if the player cannot answer in time.
    fn fallback_move(&mut self) -> Result<String, SessionError>;
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
}

/// A [`Session`] over a game of type `G`.
pub struct MatchSession<G: KifGame> {
    game: Box<G>,
    role: RoleIndex,
    engine: &'static str,
    player: Box<dyn Player<G>>,
    state: G::State,
    /// Set once the player panicked: it is not asked again in this match.
    broken: Option<String>,
    rng: SmallRng,
}

impl<G: KifGame> MatchSession<G> {
    /// A session playing `role` of `game` with `player`, from the initial state.
    pub fn new(
        game: Box<G>,
        role: RoleIndex,
        engine: &'static str,
        player: Box<dyn Player<G>>,
        seed: u64,
    ) -> MatchSession<G> {
        let state = game.initial_state();
        MatchSession {
            game,
            role,
            engine,
            player,
            state,
            broken: None,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// The current state.
    pub fn state(&self) -> &G::State {
        &self.state
    }

    fn apply(&mut self, moves: &[String]) -> Result<(), SessionError> {
        let roles = self.game.info().num_roles();
        if moves.len() != roles {
            return Err(SessionError::BadMoves(format!(
                "the game has {roles} roles but the joint move has {} moves",
                moves.len()
            )));
        }
        if self.game.is_terminal(&self.state) {
            return Err(SessionError::Over);
        }
        let joint = moves
            .iter()
            .enumerate()
            .map(|(r, text)| self.game.parse_move(&self.state, r, text))
            .collect::<Result<Vec<_>, GameError>>()
            .map_err(|e| SessionError::BadMoves(e.to_string()))?;
        self.state = self.game.next_state(&self.state, &joint);
        Ok(())
    }

    fn fallback(&mut self, why: String) -> Result<MoveReply, SessionError> {
        let mut legal = Vec::new();
        self.game.legal_moves(&self.state, self.role, &mut legal);
        if legal.is_empty() {
            return Err(SessionError::Refused(format!(
                "{why}; and the role has no legal move"
            )));
        }
        let mv = &legal[self.rng.gen_range(0..legal.len())];
        Ok(MoveReply {
            mv: self.game.move_kif(mv),
            effort: String::new(),
            fallback: Some(why),
        })
    }
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

impl<G: KifGame> Session for MatchSession<G> {
    fn role(&self) -> &str {
        &self.game.info().roles[self.role]
    }

    fn engine(&self) -> &'static str {
        self.engine
    }

    fn prepare(&mut self, deadline: Deadline) -> Option<String> {
        let (game, player, role) = (&*self.game, &mut self.player, self.role);
        match catch_unwind(AssertUnwindSafe(|| player.prepare(game, role, deadline))) {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("the player could not prepare: {e}")),
            Err(p) => {
                let why = format!("the player panicked while preparing: {}", panic_text(&*p));
                self.broken = Some(why.clone());
                Some(why)
            }
        }
    }

    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError> {
        self.apply(moves)
    }

    fn fallback_move(&mut self) -> Result<String, SessionError> {
        if self.game.is_terminal(&self.state) {
            return Err(SessionError::Over);
        }
        self.fallback(String::new()).map(|reply| reply.mv)
    }

    fn choose(&mut self, deadline: Deadline) -> Result<MoveReply, SessionError> {
        if self.game.is_terminal(&self.state) {
            return Err(SessionError::Over);
        }
        if let Some(why) = &self.broken {
            let why = format!("{why}; playing random legal moves");
            return self.fallback(why);
        }
        let (game, player, state, role) = (&*self.game, &mut self.player, &self.state, self.role);
        match catch_unwind(AssertUnwindSafe(|| {
            player.choose(game, state, role, deadline)
        })) {
            Ok(Ok(choice)) => {
                let mut legal = Vec::new();
                game.legal_moves(state, role, &mut legal);
                if !legal.contains(&choice.mv) {
                    return self.fallback("the player chose an illegal move".to_string());
                }
                Ok(MoveReply {
                    mv: game.move_kif(&choice.mv),
                    effort: choice.stats.effort(),
                    fallback: None,
                })
            }
            Ok(Err(e)) => self.fallback(format!("the player failed: {e}")),
            Err(p) => {
                let why = format!("the player panicked: {}", panic_text(&*p));
                self.broken = Some(why.clone());
                self.fallback(why)
            }
        }
    }

    fn stop(&mut self, moves: Option<&[String]>) -> Result<Option<Goal>, SessionError> {
        if let Some(moves) = moves {
            if !self.game.is_terminal(&self.state) {
                self.apply(moves)?;
            }
        }
        Ok(self
            .game
            .is_terminal(&self.state)
            .then(|| self.game.goal(&self.state, self.role)))
    }
}

/// Builds a [`Session`] for `role` (named as the rules name it, any letter case) with a player of
/// `kind`, on whichever engine the game was loaded.
pub struct NewSession<'a> {
    /// The role to play.
    pub role: &'a str,
    /// The player.
    pub kind: PlayerKind,
    /// The player's settings.
    pub config: &'a PlayerConfig,
    /// `network` or `datalog`, for reports.
    pub engine: &'static str,
}

impl KifVisitor for NewSession<'_> {
    type Output = Result<Box<dyn Session>, SessionError>;

    fn visit<G: KifGame>(self, game: Box<G>) -> Self::Output {
        let info = game.info();
        let role = info.role_index(self.role).ok_or_else(|| {
            SessionError::Refused(format!(
                "`{}` is not a role of this game; the roles are {}",
                self.role,
                info.roles.join(", ")
            ))
        })?;
        self.kind
            .supports(info)
            .map_err(|e| SessionError::Refused(e.to_string()))?;
        // Rules bring no heuristic: depth-limited players judge their horizon by random playouts.
        let game = Box::new(Estimated::new(game, ESTIMATE_PLAYOUTS));
        let player = make_player::<Estimated<G>>(self.kind, role, self.config);
        let seed = crate::players::role_seed(self.config.seed, role);
        Ok(Box::new(MatchSession::new(
            game,
            role,
            self.engine,
            player,
            seed,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use crate::players::{Choice, PlayerError};
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
        fn choose(
            &mut self,
            _: &G,
            _: &G::State,
            _: RoleIndex,
            _: Deadline,
        ) -> Result<Choice<G::Move>, PlayerError> {
            panic!("deliberately")
        }
    }

    fn session(kind: Option<PlayerKind>) -> Box<dyn Session> {
        let (engine, _) = super::super::load_kif(RULES, "t", Duration::from_secs(2)).unwrap();
        let super::super::KifEngine::Network(game) = engine else {
            panic!("network expected")
        };
        match kind {
            Some(kind) => NewSession {
                role: "A",
                kind,
                config: &PlayerConfig::default(),
                engine: "network",
            }
            .visit(game)
            .unwrap(),
            None => Box::new(MatchSession::new(game, 0, "network", Box::new(Panicker), 1)),
        }
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
