//! The referee: the one match driver. It plays a game between [seats](seat) (programs in this process,
//! player servers over the GGP protocol, people), as ggp-base's game server does:
//!
//! - every seat is told of the match at once and prepares within the start clock;
//! - in every state **every seat is asked at the same time**, each on its own thread and under its own
//!   clock, as the protocol asks every role (a waiting role answers its no-op);
//! - an answer that comes after the play clock and its grace (`TO`), is not a legal move (`IL`), or
//!   never comes because the seat failed (`CE`) is replaced by a random legal move, and the
//!   replacement is reported, so the match always goes on and a slow player gains nothing by being
//!   slow;
//! - a match ends when the game does, or is aborted after [`MAX_STEPS`] joint moves, or when a person
//!   stops it;
//! - observers see everything as typed [events] (the terminal printer, the JSON [record], a
//!   tournament's tally, a web page).
//!
//! A seat that misses the start stops the match before it begins, unless the settings say to play on
//! with random moves in its place. A person may take back moves when every other seat is a program in
//! this process.

pub mod events;
pub mod person;
pub mod record;
pub mod remote;
pub mod seat;

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::game::{Game, GameError, Goal, RoleIndex};
use crate::load::Loaded;
use crate::players::{make_player, Clock, PlayerConfig, StopSwitch, Unanswered};
use remote::RemoteSeat;

pub use events::{
    seat_results, verdict, MatchEvent, MoveReport, Observer, SeatResult, Verdict, Violation,
};
pub use seat::{
    one_role_a_server, shared_server, Answer, MatchStart, PlayerSeat, Seat, SeatSpec, Turn,
};

/// How long past its clock an answer is still taken (ggp-base's managers allow a second).
pub const GRACE: Duration = Duration::from_secs(1);

/// A match ends by itself long before this in every game we know; rules might loop.
pub const MAX_STEPS: usize = 10_000;

/// What to do when a seat cannot start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissedStart {
    /// Stop before the first move, saying which seat failed and why.
    #[default]
    Abort,
    /// Play on, a random legal move in the seat's place at every step.
    PlayOn,
}

/// A match's settings.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// The match id the seats are told.
    pub match_id: String,
    /// The clocks.
    pub clock: Clock,
    /// How long past the play clock an answer is still taken.
    pub grace: Duration,
    /// The most joint moves before the match is aborted.
    pub max_steps: usize,
    /// Seeds the substitute moves, so a match can be replayed.
    pub seed: u64,
    /// What a seat that cannot start does to the match.
    pub missed_start: MissedStart,
    /// Set by someone who wants the match stopped (a web page closed): the programs' searches end
    /// at once (their deadlines carry it), and the match is aborted before its next step.
    pub stop: Option<Arc<StopSwitch>>,
}

impl MatchSettings {
    /// Settings with `clock`, ggp-base's grace and the default step cap.
    pub fn new(match_id: impl Into<String>, clock: Clock, seed: u64) -> MatchSettings {
        MatchSettings {
            match_id: match_id.into(),
            clock,
            grace: GRACE,
            max_steps: MAX_STEPS,
            seed,
            missed_start: MissedStart::Abort,
            stop: None,
        }
    }
}

/// How a match went.
#[derive(Clone, Debug)]
pub struct MatchResult<S> {
    /// Each role's goal, when the game ended.
    pub goals: Option<Vec<Goal>>,
    /// Who won, when the game ended.
    pub verdict: Option<Verdict>,
    /// Why the match stopped early, when it did.
    pub aborted: Option<String>,
    /// Joint moves played.
    pub steps: usize,
    /// The last state.
    pub state: S,
    /// Per role, the answers replaced by a random legal move.
    pub substituted: Vec<u32>,
    /// Per role, the seat's name as it reported it.
    pub names: Vec<String>,
}

/// Why a match could not be played.
#[derive(Debug, thiserror::Error)]
pub enum RefereeError {
    /// The seats do not fit the game.
    #[error("{0}")]
    Seats(String),
    /// A seat could not start, and the settings say to stop.
    #[error("{role}: {seat} could not start the match: {violation}")]
    MissedStart {
        /// The role.
        role: String,
        /// The seat.
        seat: String,
        /// What went wrong.
        violation: Violation,
    },
    /// The rules misbehave (a role without a legal move in a state that is not terminal).
    #[error(transparent)]
    Game(#[from] GameError),
}

/// Builds the seat `spec` names for `role` of `loaded`'s game: a program made by
/// [`make_player`] (which refuses a game it cannot play), a remote player (the game must be written as
/// rules, which it is sent), or a person, whom `person` seats (a terminal, a browser).
pub fn make_seat<G: Game>(
    spec: &SeatSpec,
    role: RoleIndex,
    loaded: &Loaded<G>,
    config: &PlayerConfig,
    person: &mut dyn FnMut(RoleIndex) -> Result<Box<dyn Seat<G>>, RefereeError>,
) -> Result<Box<dyn Seat<G>>, RefereeError> {
    Ok(match spec {
        SeatSpec::Player(p) => {
            let evaluator = Arc::clone(&loaded.evaluator);
            let player = make_player(p, role, loaded.game.as_ref(), config, evaluator)?;
            Box::new(PlayerSeat::new(player))
        }
        SeatSpec::Remote(url) => {
            if loaded.rules.is_none() {
                return Err(RefereeError::Seats(format!(
                    "{url} is a remote player, which is sent the game's rules, so the game must \
                     be a rule file (.kif or .gdl), e.g. games/connect4.gdl rather than connect4"
                )));
            }
            Box::new(RemoteSeat::new(url))
        }
        SeatSpec::Person => person(role)?,
    })
}

/// Plays a match of `game` between `seats` (one per role, in role order), whose rules as KIF sentences
/// are `rules` (what remote seats are sent), telling every observer what happens.
pub fn run_match<G: Game>(
    game: &G,
    rules: Option<&str>,
    seats: &mut [Box<dyn Seat<G>>],
    settings: &MatchSettings,
    observers: &mut [&mut dyn Observer<G>],
) -> Result<MatchResult<G::State>, RefereeError> {
    let info = game.info();
    if seats.len() != info.num_roles() {
        return Err(RefereeError::Seats(format!(
            "the game has {} ({}) but {} {} given",
            crate::diagnostics::count(info.num_roles(), "role"),
            info.roles.join(", "),
            crate::diagnostics::count(seats.len(), "seat"),
            if seats.len() == 1 { "was" } else { "were" }
        )));
    }
    let mut referee = Referee {
        game,
        settings,
        observers,
        rng: SmallRng::seed_from_u64(settings.seed ^ 0x5eed),
        legal: Vec::new(),
    };
    let names: Vec<String> = seats.iter().map(|s| s.name()).collect();
    referee.tell(&MatchEvent::Starting {
        match_id: &settings.match_id,
        seats: &names,
    });
    let (names, missed) = referee.start_all(rules, seats)?;
    let (result, last) = referee.play(seats, &missed, names)?;
    say_goodbye(
        game,
        seats,
        &missed,
        last.as_deref(),
        result.aborted.is_none(),
    );
    Ok(result)
}

/// How the play went, and the last joint move (what the seats are told at the end).
type Played<G> = (
    MatchResult<<G as Game>::State>,
    Option<Vec<<G as Game>::Move>>,
);

/// A match in progress: what every step needs.
struct Referee<'a, 'o, G: Game> {
    game: &'a G,
    settings: &'a MatchSettings,
    observers: &'a mut [&'o mut dyn Observer<G>],
    /// Picks the substitute moves.
    rng: SmallRng,
    /// A role's legal moves, kept so that checking answers does not allocate.
    legal: Vec<G::Move>,
}

impl<G: Game> Referee<'_, '_, G> {
    fn tell(&mut self, event: &MatchEvent<'_, G>) {
        for o in self.observers.iter_mut() {
            o.observe(self.game, event);
        }
    }

    /// Starts every seat at once, so that the start clock runs once for all; per role, its name and,
    /// when it missed the start, why. Stops here when a seat missed it and the settings say so.
    fn start_all(
        &mut self,
        rules: Option<&str>,
        seats: &mut [Box<dyn Seat<G>>],
    ) -> Result<(Vec<String>, Vec<Option<Violation>>), RefereeError> {
        let (game, settings) = (self.game, self.settings);
        let started = Instant::now();
        // Taking back moves is for a person facing programs: nobody outside this process has seen them.
        let can_take_back = seats.iter().all(|s| !s.is_remote());
        let unprepared = AtomicUsize::new(seats.len());
        let unprepared = &unprepared;
        let outcomes: Vec<(String, Option<Violation>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = seats
                .iter_mut()
                .enumerate()
                .map(|(role, seat)| {
                    let start = MatchStart {
                        match_id: &settings.match_id,
                        role,
                        rules,
                        clock: settings.clock,
                        started,
                        can_take_back,
                        unprepared: Some(unprepared),
                        stop: settings.stop.as_ref().map(|s| s.token()),
                    };
                    scope.spawn(move || {
                        let started = match seat.start(game, &start) {
                            Ok(name) => (name, None),
                            Err(v) => (seat.name(), Some(v)),
                        };
                        unprepared.fetch_sub(1, Ordering::Relaxed);
                        started
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        let detail = "it panicked while starting".to_string();
                        ("?".into(), Some(Violation::ConnectionError { detail }))
                    })
                })
                .collect()
        });
        for (role, (name, problem)) in outcomes.iter().enumerate() {
            self.tell(&MatchEvent::Ready {
                role,
                name,
                problem: problem.as_ref(),
            });
        }
        // A stop during the start clock is the match's end, not a seat's failure: the first step
        // sees it.
        let first_missed = match self.stopped() {
            Some(_) => None,
            None => outcomes.iter().position(|(_, p)| p.is_some()),
        };
        if let (Some(role), MissedStart::Abort) = (first_missed, settings.missed_start) {
            let (seat, violation) = outcomes[role].clone();
            let reason = format!("{seat} could not start the match");
            let state = game.initial_state();
            self.tell(&MatchEvent::State {
                step: 0,
                state: &state,
            });
            self.tell(&MatchEvent::Aborted {
                step: 0,
                reason: &reason,
            });
            for (s, (_, problem)) in seats.iter_mut().zip(&outcomes) {
                if problem.is_none() {
                    s.finish(game, None, false);
                }
            }
            return Err(RefereeError::MissedStart {
                role: game.info().roles[role].clone(),
                seat,
                violation: violation.unwrap_or(Violation::ConnectionError {
                    detail: "unknown".into(),
                }),
            });
        }
        Ok(outcomes.into_iter().unzip())
    }

    /// Plays from the initial state until the game ends, the step cap, or a person stops.
    fn play(
        &mut self,
        seats: &mut [Box<dyn Seat<G>>],
        missed: &[Option<Violation>],
        names: Vec<String>,
    ) -> Result<Played<G>, RefereeError> {
        let game = self.game;
        let roles = game.info().num_roles();
        let mut state = game.initial_state();
        // The state before each step and the joint move played there, for taking back.
        let mut history: Vec<(G::State, Vec<G::Move>)> = Vec::new();
        let mut substituted = vec![0u32; roles];
        let timed: Vec<bool> = seats.iter().map(|s| s.timed()).collect();
        let mut aborted = None;
        // The role that asked to take back a move and had none, and when its clock started: asked
        // again, it has only the time left (the other seats start afresh: their answers to the
        // step asked before are not kept).
        let mut resumed: Option<(RoleIndex, Instant)> = None;
        loop {
            let step = history.len();
            self.tell(&MatchEvent::State {
                step,
                state: &state,
            });
            if game.is_terminal(&state) {
                break;
            }
            let cap = (step >= self.settings.max_steps)
                .then(|| format!("the game did not end within {step} joint moves"));
            if let Some(reason) = self.stopped().or(cap) {
                aborted = Some(self.abort(step, reason));
                break;
            }
            let last = history.last().map(|(_, joint)| joint.as_slice());
            let now = Instant::now();
            let asked: Vec<Instant> = (0..roles)
                .map(|r| match resumed {
                    Some((who, at)) if who == r => at,
                    _ => now,
                })
                .collect();
            resumed = None;
            let answers = ask_all(game, &state, last, seats, missed, self.settings, &asked);
            // Stopped while the seats thought: nothing of this step is played (a person who left gets
            // no random move in their name).
            let quit = answers
                .iter()
                .any(|(a, _)| matches!(a, Answer::Quit))
                .then(|| "input ended".to_string());
            if let Some(reason) = self.stopped().or(quit) {
                aborted = Some(self.abort(step, reason));
                break;
            }
            if let Some(role) = answers
                .iter()
                .position(|(a, _)| matches!(a, Answer::TakeBack))
            {
                let back = last_choice(game, &history, role);
                match back {
                    Some(back) => {
                        history.truncate(back + 1);
                        state = history.pop().map(|(s, _)| s).unwrap_or(state);
                    }
                    // Nothing to take back: the same step again, the role that asked on its
                    // running clock (a person who asks without end must not stop it).
                    None => resumed = Some((role, asked[role])),
                }
                self.tell(&MatchEvent::TakenBack { role, step: back });
                continue;
            }
            let mut reports = Vec::with_capacity(roles);
            for (role, (answer, took)) in answers.into_iter().enumerate() {
                let report = match self.judge(&state, role, answer, took, timed[role]) {
                    Ok(report) => report,
                    Err(violation) => {
                        substituted[role] += 1;
                        let mv = self.substitute(&state, role)?;
                        MoveReport {
                            mv,
                            took,
                            stats: None,
                            explanation: None,
                            violation: Some(violation),
                        }
                    }
                };
                reports.push(report);
            }
            self.tell(&MatchEvent::Moves {
                step: step + 1,
                mover: game.mover(&state),
                moves: &reports,
            });
            let joint: Vec<G::Move> = reports.into_iter().map(|r| r.mv).collect();
            let next = game.next_state(&state, &joint);
            history.push((std::mem::replace(&mut state, next), joint));
        }
        let (goals, verdict) = if aborted.is_none() {
            let goals: Vec<Goal> = (0..roles).map(|r| game.goal(&state, r)).collect();
            let verdict = verdict(&goals);
            self.tell(&MatchEvent::Finished {
                goals: &goals,
                verdict: &verdict,
            });
            (Some(goals), Some(verdict))
        } else {
            (None, None)
        };
        let steps = history.len();
        let result = MatchResult {
            goals,
            verdict,
            aborted,
            steps,
            state,
            substituted,
            names,
        };
        Ok((result, history.pop().map(|(_, joint)| joint)))
    }

    /// Tells the observers the match stops after `step` joint moves, and why; the reason.
    fn abort(&mut self, step: usize, reason: String) -> String {
        self.tell(&MatchEvent::Aborted {
            step,
            reason: &reason,
        });
        reason
    }

    /// Why the match must stop now, when someone asked it to.
    fn stopped(&self) -> Option<String> {
        let stop = self.settings.stop.as_ref()?;
        stop.is_set().then(|| "the match was stopped".to_string())
    }

    /// The move `role` answered, with its effort, or why it cannot be played: an answer past the clock
    /// and its grace is a timeout even when it is legal, so that a slow player gains nothing by being
    /// slow.
    fn judge(
        &mut self,
        state: &G::State,
        role: RoleIndex,
        answer: Answer<G::Move>,
        took: Duration,
        timed: bool,
    ) -> Result<MoveReport<G::Move>, Violation> {
        let limit = self.settings.clock.play + self.settings.grace;
        let (mv, stats, explanation) = match answer {
            Answer::Failed(v) => return Err(v),
            _ if timed && took > limit => {
                return Err(Violation::Timeout {
                    detail: format!(
                        "answered after {:.2} s, past the {:.2} s play clock and its {:.2} s grace",
                        took.as_secs_f64(),
                        self.settings.clock.play.as_secs_f64(),
                        self.settings.grace.as_secs_f64()
                    ),
                })
            }
            Answer::Move {
                mv,
                stats,
                explanation,
            } => (mv, stats, explanation),
            Answer::TakeBack | Answer::Quit => {
                return Err(Violation::Illegal {
                    answer: String::new(),
                    detail: "not a move".into(),
                })
            }
        };
        self.game.legal_moves(state, role, &mut self.legal);
        if !self.legal.contains(&mv) {
            return Err(Violation::Illegal {
                answer: self.game.move_kif(&mv),
                detail: format!(
                    "{} is not a legal move of {}",
                    self.game.show_move(&mv),
                    self.game.info().roles[role]
                ),
            });
        }
        Ok(MoveReport {
            mv,
            took,
            stats,
            explanation,
            violation: None,
        })
    }

    /// A random legal move in place of one that cannot be played; a role without a legal move is an
    /// error of the rules.
    fn substitute(&mut self, state: &G::State, role: RoleIndex) -> Result<G::Move, RefereeError> {
        self.game.legal_moves(state, role, &mut self.legal);
        if self.legal.is_empty() {
            return Err(GameError::Rules(format!(
                "{} has no legal move in a state that is not terminal",
                self.game.info().roles[role]
            ))
            .into());
        }
        Ok(self.legal[self.rng.gen_range(0..self.legal.len())].clone())
    }
}

/// Tells the seats that started how the match ended (after the joint move `last`), all at once: a
/// remote player may take a while to answer.
fn say_goodbye<G: Game>(
    game: &G,
    seats: &mut [Box<dyn Seat<G>>],
    missed: &[Option<Violation>],
    last: Option<&[G::Move]>,
    completed: bool,
) {
    std::thread::scope(|scope| {
        for (seat, missed) in seats.iter_mut().zip(missed) {
            if missed.is_none() {
                scope.spawn(move || seat.finish(game, last, completed));
            }
        }
    });
}

/// The index in `history` of the last state where `role` had a choice to make (more than one legal
/// move): taking back goes there, undoing the role's last move and every move since.
fn last_choice<G: Game>(
    game: &G,
    history: &[(G::State, Vec<G::Move>)],
    role: RoleIndex,
) -> Option<usize> {
    let mut moves = Vec::new();
    history.iter().rposition(|(s, _)| {
        game.legal_moves(s, role, &mut moves);
        moves.len() > 1
    })
}

/// Asks every seat for its move in `state` at once, each on its own thread (the last on this one);
/// returns each answer with the time it took since its seat's clock started (`asked`, by role).
fn ask_all<G: Game>(
    game: &G,
    state: &G::State,
    last: Option<&[G::Move]>,
    seats: &mut [Box<dyn Seat<G>>],
    missed: &[Option<Violation>],
    settings: &MatchSettings,
    asked: &[Instant],
) -> Vec<(Answer<G::Move>, Duration)> {
    // Seats that have not answered yet: a player thinking ahead on a forced move stops once every
    // seat still out only thinks ahead too, since the step waits for nobody else.
    let unanswered = Unanswered::new(seats.len());
    let unanswered = &unanswered;
    let ask = move |role: RoleIndex, seat: &mut Box<dyn Seat<G>>, missed: &Option<Violation>| {
        let asked = asked.get(role).copied().unwrap_or_else(Instant::now);
        let answer = match missed {
            Some(v) => Answer::Failed(v.missed_start()),
            None => seat.ask(&Turn {
                game,
                state,
                role,
                last,
                clock: settings.clock,
                grace: settings.grace,
                asked,
                unanswered: Some(unanswered),
                stop: settings.stop.as_ref().map(|s| s.token()),
            }),
        };
        unanswered.answered();
        (answer, asked.elapsed())
    };
    std::thread::scope(|scope| {
        let count = seats.len();
        let mut seats = seats.iter_mut().zip(missed).enumerate();
        let handles: Vec<_> = seats
            .by_ref()
            .take(count.saturating_sub(1))
            .map(|(role, (seat, missed))| scope.spawn(move || ask(role, seat, missed)))
            .collect();
        let own = seats
            .next()
            .map(|(role, (seat, missed))| ask(role, seat, missed));
        let failed = |role: RoleIndex| {
            let detail = "the seat panicked".to_string();
            let took = asked.get(role).map_or(Duration::ZERO, Instant::elapsed);
            (Answer::Failed(Violation::ConnectionError { detail }), took)
        };
        handles
            .into_iter()
            .enumerate()
            .map(|(role, h)| h.join().unwrap_or_else(|_| failed(role)))
            .chain(own)
            .collect()
    })
}
