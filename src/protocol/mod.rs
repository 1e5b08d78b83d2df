//! The GGP protocol (PROTOCOL.md in the shared reference): a player server that other game managers can
//! play against, a referee that runs matches between local and remote players, and ggp-base's match
//! records.
//!
//! - [`messages`]: the messages, read leniently and printed as managers send them.
//! - [`session`]: one match as a player sees it, whatever engine plays the game.
//! - [`server`]: the HTTP player server (axum on tokio).
//! - [`referee`]: the game manager (ureq for the remote players).
//! - [`record`]: ggp-base's match JSON.
//! - [`estimated`]: a game that owns its rules and estimates positions by random playouts.
//!
//! Games arrive as KIF text; [`load_kif`] builds the grounded network when it fits the time given and
//! the Datalog evaluator otherwise, and [`KifVisitor`] runs generic code on whichever was built.

pub mod estimated;
pub mod messages;
pub mod record;
pub mod referee;
pub mod server;
pub mod session;

use std::time::{Duration, Instant};

use crate::engine::RuleGame;
use crate::game::Game;
use crate::network::{Budget, NetGame};

/// A game read from KIF, which can say its moves and states in KIF (what the protocol and match records
/// carry).
pub trait KifGame: Game + 'static {
    /// A move as KIF text, `(mark 1 1)`.
    fn move_kif(&self, mv: &Self::Move) -> String;
    /// The facts true in `state`, each as KIF text, sorted.
    fn state_kif(&self, state: &Self::State) -> Vec<String>;
}

impl KifGame for NetGame {
    fn move_kif(&self, mv: &Self::Move) -> String {
        NetGame::move_kif(self, *mv).to_string()
    }
    fn state_kif(&self, state: &Self::State) -> Vec<String> {
        self.state_facts(state)
    }
}

impl KifGame for RuleGame {
    fn move_kif(&self, mv: &Self::Move) -> String {
        RuleGame::move_kif(self, *mv).to_string()
    }
    fn state_kif(&self, state: &Self::State) -> Vec<String> {
        self.state_facts(state)
    }
}

/// Why rules sent as KIF cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The rules do not parse, or the checker rejects them; the first located error, rendered.
    #[error("invalid rules: {0}")]
    Invalid(String),
    /// Neither engine could be built.
    #[error("the rules cannot be played: {0}")]
    Engine(String),
}

/// A game built from KIF on one of the two engines.
pub enum KifEngine {
    /// The grounded network.
    Network(Box<NetGame>),
    /// The Datalog evaluator.
    Datalog(Box<RuleGame>),
}

/// How [`load_kif`] built a game.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// `network` or `datalog`.
    pub engine: &'static str,
    /// Parsing, checking and building.
    pub took: Duration,
    /// Why the network was not used, when it was tried.
    pub fallback: Option<String>,
}

/// Code that runs on whichever engine [`load_kif`] built.
pub trait KifVisitor {
    /// What it produces.
    type Output;
    /// Runs on `game`.
    fn visit<G: KifGame>(self, game: Box<G>) -> Self::Output;
}

impl KifEngine {
    /// Runs `visitor` on the game.
    pub fn visit<V: KifVisitor>(self, visitor: V) -> V::Output {
        match self {
            KifEngine::Network(g) => visitor.visit(g),
            KifEngine::Datalog(g) => visitor.visit(g),
        }
    }

    /// The game's roles.
    pub fn roles(&self) -> &[String] {
        match self {
            KifEngine::Network(g) => &g.info().roles,
            KifEngine::Datalog(g) => &g.info().roles,
        }
    }
}

/// Parses, checks and builds a game from KIF `rules` (a sequence of sentences and rules): the grounded
/// network when it builds within `network_time`, the Datalog evaluator otherwise (or when
/// `network_time` is zero).
pub fn load_kif(
    rules: &str,
    name: &str,
    network_time: Duration,
) -> Result<(KifEngine, LoadReport), LoadError> {
    let started = Instant::now();
    let first_error = |diags: &[crate::diagnostics::Diagnostic]| {
        diags
            .iter()
            .find(|d| d.is_error())
            .map(|d| {
                crate::diagnostics::render(d, "rules", rules)
                    .trim()
                    .to_string()
            })
            .unwrap_or_else(|| "the rules have errors".to_string())
    };
    let program =
        crate::syntax::parse_kif(rules).map_err(|d| LoadError::Invalid(first_error(&d)))?;
    let report = crate::check::check(&program);
    if !report.is_ok() {
        return Err(LoadError::Invalid(first_error(&report.errors)));
    }
    let mut fallback = None;
    if !network_time.is_zero() {
        match NetGame::from_program_within(
            &program,
            name,
            Budget::for_seconds(network_time.as_secs_f64()),
        ) {
            Ok(g) => {
                let report = LoadReport {
                    engine: "network",
                    took: started.elapsed(),
                    fallback: None,
                };
                return Ok((KifEngine::Network(Box::new(g)), report));
            }
            Err(e) => fallback = Some(e.to_string()),
        }
    }
    let g = RuleGame::from_program(&program, name).map_err(|e| LoadError::Engine(e.to_string()))?;
    let report = LoadReport {
        engine: "datalog",
        took: started.elapsed(),
        fallback,
    };
    Ok((KifEngine::Datalog(Box::new(g)), report))
}

/// Seconds as a [`Duration`], for clocks read from messages (already checked finite and non-negative).
pub(crate) fn secs(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)
}

/// Seconds as a [`Duration`] when they are a sensible time to wait: finite, not negative, at most a day.
pub fn secs_checked(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && (0.0..=86_400.0).contains(&seconds)).then(|| secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kif_loads_on_the_network_and_the_evaluator() {
        let rules = "(role r) (init (s 0)) (legal r go) (<= (next (s 1)) (true (s 0))) \
                     (<= terminal (true (s 1))) (goal r 100)";
        let (net, report) = load_kif(rules, "t", Duration::from_secs(5)).unwrap();
        assert_eq!(report.engine, "network");
        assert_eq!(net.roles(), ["r"]);
        let (_, report) = load_kif(rules, "t", Duration::ZERO).unwrap();
        assert_eq!(report.engine, "datalog");
    }

    #[test]
    fn invalid_rules_say_where() {
        let err = load_kif("(role r) (<= (legal r ?x) (true (p)))", "t", Duration::ZERO)
            .err()
            .unwrap();
        assert!(
            matches!(err, LoadError::Invalid(ref m) if m.contains("rules:")),
            "{err}"
        );
        assert!(load_kif("(role", "t", Duration::ZERO).is_err());
    }
}
