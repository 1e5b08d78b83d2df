//! Seats: who plays a role in a match. A seat is a program in this process ([`PlayerSeat`]), a player
//! server reached over the GGP protocol ([`super::remote::RemoteSeat`]) or a person
//! ([`super::person::Terminal`] at a terminal; a browser is one more kind). The referee treats them all
//! alike: it tells each the match is starting, asks each for its move in every state, and tells each
//! how the match ended.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use super::events::Violation;
use crate::game::{Game, RoleIndex};
use crate::players::{
    Ask, Clock, Deadline, Explanation, Player, PlayerSpec, SearchStats, Stop, Unanswered,
    UnknownPlayer,
};

/// What a seat is told when a match starts.
#[derive(Clone, Copy, Debug)]
pub struct MatchStart<'a> {
    /// The match's id.
    pub match_id: &'a str,
    /// The role it plays.
    pub role: RoleIndex,
    /// The rules as KIF sentences, for a game written as rules (what a remote player is sent).
    pub rules: Option<&'a str>,
    /// The clocks.
    pub clock: Clock,
    /// When the start clock began.
    pub started: Instant,
    /// Whether a person may take back moves (every other seat is a program in this process).
    pub can_take_back: bool,
    /// How many seats (this one included) are not ready yet.
    pub unprepared: Option<&'a AtomicUsize>,
    /// Set when the match is stopped: the preparation ends then.
    pub stop: Option<Stop>,
}

impl MatchStart<'_> {
    /// The deadline of the preparation.
    pub fn deadline(&self) -> Deadline {
        self.clock.start_deadline(self.started).or_stop(self.stop)
    }
}

/// A seat's turn: the state it is asked about, and its clock.
#[derive(Debug)]
pub struct Turn<'a, G: Game> {
    /// The game.
    pub game: &'a G,
    /// The state to move in.
    pub state: &'a G::State,
    /// The seat's role.
    pub role: RoleIndex,
    /// The joint move that led here (`None` on the first step), as the protocol's `play` carries it.
    pub last: Option<&'a [G::Move]>,
    /// The clocks.
    pub clock: Clock,
    /// How long past the play clock an answer is still taken.
    pub grace: Duration,
    /// When the play clock began.
    pub asked: Instant,
    /// How many of the seats asked in this state have not answered yet (this one included).
    pub unanswered: Option<&'a Unanswered>,
    /// Set when the match is stopped: the search ends then, before its clock.
    pub stop: Option<Stop>,
}

impl<G: Game> Turn<'_, G> {
    /// The deadline a program is given: the play clock less its margin, or the match's stop.
    pub fn deadline(&self) -> Deadline {
        self.clock.move_deadline(self.asked).or_stop(self.stop)
    }

    /// The longest the referee waits for an answer: the play clock and its grace.
    pub fn limit(&self) -> Duration {
        self.clock.play + self.grace
    }
}

/// A seat's answer when asked for a move.
#[derive(Debug)]
pub enum Answer<M> {
    /// A move (the referee checks that it is legal and in time).
    Move {
        /// The move.
        mv: M,
        /// The effort it took, when the seat searched.
        stats: Option<SearchStats>,
        /// The moves it weighed, when it says.
        explanation: Option<Explanation>,
    },
    /// No usable answer.
    Failed(Violation),
    /// A person asks to take back their last move (and every move since).
    TakeBack,
    /// A person stops the match (their input ended).
    Quit,
}

/// Who plays a role (see the module documentation).
pub trait Seat<G: Game>: Send {
    /// A name for reports (`mcts`, `http://host:9147`, `person`).
    fn name(&self) -> String;

    /// Whether the seat's answers must come within the play clock; a person at the command line's
    /// `play` takes their time.
    fn timed(&self) -> bool {
        true
    }

    /// Whether someone outside this process sees the moves (a player server): then no move can be
    /// taken back.
    fn is_remote(&self) -> bool {
        false
    }

    /// The match starts: the seat prepares within the start clock. Returns the seat's name as it
    /// reports it (a remote player's own), or why it could not start.
    fn start(&mut self, game: &G, start: &MatchStart<'_>) -> Result<String, Violation>;

    /// The seat's move in `turn.state`.
    fn ask(&mut self, turn: &Turn<'_, G>) -> Answer<G::Move>;

    /// The match ended (`completed`, or aborted) after the joint move `last`.
    fn finish(&mut self, game: &G, last: Option<&[G::Move]>, completed: bool) {
        let _ = (game, last, completed);
    }
}

/// A program in this process: a [`Player`]. One that fails or panics loses its answer (a substitute is
/// played); after a panic it is not asked again in this match (its own state may be broken).
pub struct PlayerSeat<G: Game> {
    player: Box<dyn Player<G>>,
    broken: Option<String>,
}

impl<G: Game> PlayerSeat<G> {
    /// A seat for `player`.
    pub fn new(player: Box<dyn Player<G>>) -> PlayerSeat<G> {
        PlayerSeat {
            player,
            broken: None,
        }
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

impl<G: Game> Seat<G> for PlayerSeat<G> {
    fn name(&self) -> String {
        self.player.name()
    }

    fn start(&mut self, game: &G, start: &MatchStart<'_>) -> Result<String, Violation> {
        let name = self.player.name();
        let (player, role, deadline) = (&mut self.player, start.role, start.deadline());
        let failed = |detail: String| Violation::ConnectionError { detail };
        let unprepared = start.unprepared;
        let prepared = catch_unwind(AssertUnwindSafe(|| match unprepared {
            Some(count) => player.prepare_beside(game, role, deadline, start.clock.play, count),
            None => player.prepare(game, role, deadline),
        }));
        match prepared {
            Ok(Ok(())) => Ok(name),
            Ok(Err(e)) => Err(failed(format!("it could not prepare: {e}"))),
            Err(p) => {
                let why = format!("it panicked while preparing: {}", panic_text(&*p));
                self.broken = Some(why.clone());
                Err(failed(why))
            }
        }
    }

    fn ask(&mut self, turn: &Turn<'_, G>) -> Answer<G::Move> {
        if let Some(why) = &self.broken {
            return Answer::Failed(Violation::ConnectionError {
                detail: why.clone(),
            });
        }
        let player = &mut self.player;
        let chosen = catch_unwind(AssertUnwindSafe(|| {
            let mut ask = Ask::new(turn.game, turn.state, turn.role, turn.deadline());
            ask.unanswered = turn.unanswered;
            player.choose(&ask)
        }));
        match chosen {
            Ok(Ok(c)) => Answer::Move {
                mv: c.mv,
                stats: Some(c.stats),
                explanation: c.explanation,
            },
            Ok(Err(e)) => Answer::Failed(Violation::ConnectionError {
                detail: format!("the player failed: {e}"),
            }),
            Err(p) => {
                let why = format!("the player panicked: {}", panic_text(&*p));
                self.broken = Some(why.clone());
                Answer::Failed(Violation::ConnectionError { detail: why })
            }
        }
    }
}

impl<G: Game> PlayerSeat<G> {
    /// Lets the player go on thinking after its answer (see [`Player::ponder`]); a broken player
    /// does not, and one that panics now is broken from here on. Returns the simulations added.
    pub fn ponder(
        &mut self,
        game: &G,
        role: RoleIndex,
        until: Deadline,
        wanted: &AtomicUsize,
    ) -> u64 {
        if self.broken.is_some() {
            return 0;
        }
        let player = &mut self.player;
        match catch_unwind(AssertUnwindSafe(|| {
            player.ponder(game, role, until, wanted)
        })) {
            Ok(added) => added,
            Err(p) => {
                self.broken = Some(format!("the player panicked: {}", panic_text(&*p)));
                0
            }
        }
    }
}

/// Who plays a role, as the command line names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatSpec {
    /// A program of this kind (with its scores file for `learned:FILE`), in this process.
    Player(PlayerSpec),
    /// A person (`human`).
    Person,
    /// A player server at this URL (`http://host:port`).
    Remote(String),
}

impl std::fmt::Display for SeatSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeatSpec::Player(spec) => write!(f, "{spec}"),
            SeatSpec::Person => f.write_str("human"),
            SeatSpec::Remote(url) => f.write_str(url),
        }
    }
}

/// The first two seats given the same player server, with its URL: a server plays one role of a
/// match, since the protocol's play messages name the match and not the role.
pub fn shared_server(specs: &[SeatSpec]) -> Option<(usize, usize, &str)> {
    let key = |url: &str| url.trim_end_matches('/').to_ascii_lowercase();
    specs.iter().enumerate().find_map(|(j, b)| {
        let SeatSpec::Remote(url) = b else {
            return None;
        };
        specs[..j]
            .iter()
            .position(|a| matches!(a, SeatSpec::Remote(other) if key(other) == key(url)))
            .map(|i| (i, j, url.as_str()))
    })
}

/// Why these seats cannot all be played, if one player server is given for two of them (see
/// [`shared_server`]), the seats named by `name`.
pub fn one_role_a_server(specs: &[SeatSpec], name: impl Fn(usize) -> String) -> Result<(), String> {
    match shared_server(specs) {
        Some((a, b, url)) => Err(format!(
            "{url} is given for {} and {}: a player server plays one role of a match (the \
             protocol's play messages do not say which role they ask), so start one server a role",
            name(a),
            name(b)
        )),
        None => Ok(()),
    }
}

impl std::str::FromStr for SeatSpec {
    type Err = UnknownPlayer;

    /// `human`, `http://...` (or `https://...`) or `host:port` for a remote player, anything else a
    /// player kind.
    fn from_str(s: &str) -> Result<SeatSpec, Self::Err> {
        let t = s.trim();
        // `learned:FILE` names a local player even when FILE looks like a port.
        if t.to_ascii_lowercase().starts_with("learned:") {
            return t.parse().map(SeatSpec::Player);
        }
        if t.eq_ignore_ascii_case("human") || t.eq_ignore_ascii_case("person") {
            return Ok(SeatSpec::Person);
        }
        let host_port = t
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if t.starts_with("http://") || t.starts_with("https://") {
            Ok(SeatSpec::Remote(t.to_string()))
        } else if host_port {
            Ok(SeatSpec::Remote(format!("http://{t}")))
        } else {
            t.parse().map(SeatSpec::Player)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::PlayerKind;

    #[test]
    fn a_server_given_for_two_seats_is_found() {
        let seats = |specs: &[&str]| -> Vec<SeatSpec> {
            specs.iter().map(|s| s.parse().unwrap()).collect()
        };
        let shared = seats(&["random", "localhost:9147", "http://LOCALHOST:9147/"]);
        assert_eq!(
            shared_server(&shared),
            Some((1, 2, "http://LOCALHOST:9147/"))
        );
        let apart = seats(&["localhost:9147", "localhost:9148", "mcts", "mcts"]);
        assert_eq!(shared_server(&apart), None);
    }

    #[test]
    fn seats_are_kinds_people_urls_or_host_and_port() {
        assert_eq!(
            "mcts".parse::<SeatSpec>().unwrap(),
            SeatSpec::Player(PlayerKind::Mcts.into())
        );
        assert_eq!("Human".parse::<SeatSpec>().unwrap(), SeatSpec::Person);
        assert_eq!(
            "http://10.0.0.1:9147".parse::<SeatSpec>().unwrap(),
            SeatSpec::Remote("http://10.0.0.1:9147".into())
        );
        assert_eq!(
            "localhost:9147".parse::<SeatSpec>().unwrap(),
            SeatSpec::Remote("http://localhost:9147".into())
        );
        assert!(matches!(
            "learned:x:1".parse::<SeatSpec>().unwrap(),
            SeatSpec::Player(PlayerSpec {
                kind: PlayerKind::Learned,
                ..
            })
        ));
        assert!("nobody".parse::<SeatSpec>().is_err());
    }
}
