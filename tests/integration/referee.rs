//! The one match driver: what observers see, and the one rule for answers that cannot be played (late,
//! illegal, failed), with the seats of every kind the library has.

use std::sync::Arc;
use std::time::Duration;

use ggp::evaluators::GoalsOnly;
use ggp::game::{Game, RoleIndex};
use ggp::games::nim::Nim;
use ggp::games::tictactoe::TicTacToe;
use ggp::players::{
    make_player, Ask, Choice, Clock, Player, PlayerConfig, PlayerError, PlayerKind, StopSwitch,
};
use ggp::referee::person::Terminal;
use ggp::referee::{
    run_match, Answer, MatchEvent, MatchSettings, MatchStart, Observer, PlayerSeat, Seat, Turn,
    Verdict, Violation,
};

/// Counts every kind of event, and checks they come in order.
#[derive(Default, Debug)]
struct Counter {
    starting: usize,
    ready: usize,
    states: usize,
    moves: usize,
    finished: usize,
    aborted: usize,
    /// The step of each `State` event, in order.
    steps: Vec<usize>,
}

impl<G: Game> Observer<G> for Counter {
    fn observe(&mut self, _: &G, event: &MatchEvent<'_, G>) {
        match event {
            MatchEvent::Starting { .. } => self.starting += 1,
            MatchEvent::Ready { .. } => self.ready += 1,
            MatchEvent::State { step, .. } => {
                self.states += 1;
                self.steps.push(*step);
            }
            MatchEvent::Moves { .. } => self.moves += 1,
            MatchEvent::TakenBack { .. } => {}
            MatchEvent::Finished { .. } => self.finished += 1,
            MatchEvent::Aborted { .. } => self.aborted += 1,
        }
    }
}

fn program<G: Game>(game: &G, kind: PlayerKind, role: RoleIndex, seed: u64) -> Box<dyn Seat<G>> {
    let config = PlayerConfig {
        seed,
        ..PlayerConfig::default()
    };
    let player = make_player(&kind.into(), role, game, &config, Arc::new(GoalsOnly)).unwrap();
    Box::new(PlayerSeat::new(player))
}

fn clock(play_ms: u64) -> Clock {
    Clock::new(Duration::from_secs(1), Duration::from_millis(play_ms))
}

#[test]
fn a_custom_observer_sees_every_event_of_a_match_in_order() {
    let game = Nim::new(13, false);
    let mut seats = vec![
        program(&game, PlayerKind::Random, 0, 3),
        program(&game, PlayerKind::Random, 1, 3),
    ];
    let mut counter = Counter::default();
    let settings = MatchSettings::new("count", clock(200), 3);
    let result = run_match(&game, None, &mut seats, &settings, &mut [&mut counter]).unwrap();
    assert!(result.steps > 0);
    assert_eq!(counter.starting, 1);
    assert_eq!(counter.ready, 2, "one per seat");
    assert_eq!(counter.moves, result.steps, "one joint move a step");
    assert_eq!(
        counter.states,
        result.steps + 1,
        "the initial state and one after each step"
    );
    assert_eq!(counter.steps, (0..=result.steps).collect::<Vec<_>>());
    assert_eq!((counter.finished, counter.aborted), (1, 0));
    let goals = result.goals.expect("nim ends");
    assert!(matches!(result.verdict, Some(Verdict::Winner(w)) if goals[w] == 100));
    assert_eq!(result.substituted, [0, 0]);
}

/// Misbehaves as told, on its turn.
struct Misbehaving(&'static str);

impl<G: Game> Player<G> for Misbehaving {
    fn name(&self) -> String {
        self.0.to_string()
    }

    fn choose(&mut self, ask: &Ask<'_, G>) -> Result<Choice<G::Move>, PlayerError> {
        let (game, state, role, deadline) = (ask.game, ask.state, ask.role, ask.deadline);
        let mut moves = Vec::new();
        game.legal_moves(state, role, &mut moves);
        if moves.len() == 1 {
            return Ok(Choice {
                explanation: None,
                mv: moves.swap_remove(0),
                stats: Default::default(),
            });
        }
        match self.0 {
            "sleepy" => std::thread::sleep(deadline.remaining() + Duration::from_millis(200)),
            // A move that was legal at the start and is not any more, once the game has begun.
            "cheat" => {
                let mut first = Vec::new();
                game.legal_moves(&game.initial_state(), role, &mut first);
                if let Some(gone) = first.into_iter().find(|m| !moves.contains(m)) {
                    return Ok(Choice {
                        explanation: None,
                        mv: gone,
                        stats: Default::default(),
                    });
                }
            }
            "failing" => return Err(ggp::game::GameError::Rules("it gives up".into()).into()),
            "panicking" => panic!("deliberately"),
            _ => {}
        }
        Ok(Choice {
            explanation: None,
            mv: moves.swap_remove(0),
            stats: Default::default(),
        })
    }
}

#[test]
fn answers_that_cannot_be_played_are_replaced_and_counted() {
    let game = TicTacToe::new(3, 3).unwrap();
    for (how, code) in [
        ("sleepy", "TO"),
        ("cheat", "IL"),
        ("failing", "CE"),
        ("panicking", "CE"),
    ] {
        let mut seats: Vec<Box<dyn Seat<TicTacToe>>> = vec![
            program(&game, PlayerKind::Random, 0, 5),
            Box::new(PlayerSeat::new(Box::new(Misbehaving(how)))),
        ];
        let mut codes = Vec::new();
        let mut watch = |_: &TicTacToe, e: &MatchEvent<'_, TicTacToe>| {
            if let MatchEvent::Moves { moves, .. } = e {
                codes.extend(moves[1].violation.as_ref().map(Violation::code));
                assert!(
                    moves[0].violation.is_none(),
                    "{how}: the other seat is fine"
                );
            }
        };
        // A second of clock: the honest seats answer at once, and a busy machine must not make
        // them late; the sleepy seat sleeps past whatever clock it has.
        let settings = MatchSettings {
            grace: Duration::ZERO,
            ..MatchSettings::new(how, clock(1000), 5)
        };
        let result = run_match(&game, None, &mut seats, &settings, &mut [&mut watch]).unwrap();
        assert!(result.goals.is_some(), "{how}: the match always finishes");
        // The cheat's first move is still legal (nothing is taken yet); every later one is replaced.
        assert!(!codes.is_empty(), "{how}");
        assert!(codes.iter().all(|c| *c == code), "{how}: {codes:?}");
        assert_eq!(result.substituted[1] as usize, codes.len(), "{how}");
        assert_eq!(result.substituted[0], 0, "{how}");
    }
}

#[test]
fn a_step_cap_aborts_and_says_so() {
    let game = Nim::new(21, false);
    let mut seats = vec![
        program(&game, PlayerKind::Legal, 0, 1),
        program(&game, PlayerKind::Legal, 1, 1),
    ];
    let mut counter = Counter::default();
    let settings = MatchSettings {
        max_steps: 2,
        ..MatchSettings::new("capped", clock(100), 1)
    };
    let result = run_match(&game, None, &mut seats, &settings, &mut [&mut counter]).unwrap();
    assert_eq!(result.steps, 2);
    assert!(result.goals.is_none());
    assert!(result.aborted.unwrap().contains("did not end within 2"));
    assert_eq!((counter.finished, counter.aborted), (0, 1));
}

#[test]
fn a_person_takes_back_moves_and_the_match_resumes_there() {
    let game = TicTacToe::new(3, 3).unwrap();
    // x plays (1,1), o replies, and x takes back its move (with the reply) and plays (3,3) instead;
    // then the input ends.
    let script = "mark(1,1)\nundo\nmark(3,3)\n";
    let person = Terminal::new(
        Box::new(std::io::Cursor::new(script.as_bytes().to_vec())),
        Box::new(std::io::sink()),
        false,
    );
    let mut seats: Vec<Box<dyn Seat<TicTacToe>>> =
        vec![Box::new(person), program(&game, PlayerKind::Legal, 1, 1)];
    let mut played: Vec<String> = Vec::new();
    let mut taken_back = Vec::new();
    let mut watch = |g: &TicTacToe, e: &MatchEvent<'_, TicTacToe>| match e {
        MatchEvent::Moves { step, moves, .. } => {
            played.truncate(step - 1);
            played.push(g.show_move(&moves[0].mv));
        }
        MatchEvent::TakenBack { step, .. } => taken_back.push(*step),
        _ => {}
    };
    let settings = MatchSettings::new("undo", clock(1000), 1);
    let result = run_match(&game, None, &mut seats, &settings, &mut [&mut watch]).unwrap();
    assert_eq!(result.aborted.as_deref(), Some("input ended"));
    assert_eq!(taken_back, [Some(0)], "back to where x last chose");
    assert_eq!(played, ["mark(3,3)", "noop"]);
}

#[test]
fn a_line_that_is_not_utf8_is_a_mistyped_move_not_the_end_of_input() {
    let game = TicTacToe::new(3, 3).unwrap();
    let script = b"mark(\xff,1)\nmark(2,2)\n".to_vec();
    let person = Terminal::new(
        Box::new(std::io::Cursor::new(script)),
        Box::new(std::io::sink()),
        false,
    );
    let mut seats: Vec<Box<dyn Seat<TicTacToe>>> =
        vec![Box::new(person), program(&game, PlayerKind::Legal, 1, 1)];
    let mut played: Vec<String> = Vec::new();
    let mut watch = |g: &TicTacToe, e: &MatchEvent<'_, TicTacToe>| {
        if let MatchEvent::Moves { moves, .. } = e {
            played.push(g.show_move(&moves[0].mv));
        }
    };
    let settings = MatchSettings::new("latin-1", clock(1000), 1);
    let result = run_match(&game, None, &mut seats, &settings, &mut [&mut watch]).unwrap();
    assert_eq!(result.aborted.as_deref(), Some("input ended"));
    assert_eq!(
        played,
        ["mark(2,2)", "noop"],
        "the bad line was asked again"
    );
}

/// A seat whose start lasts until the match is stopped (a remote player still preparing), then
/// fails as a remote seat stopped mid-request does.
struct PreparesUntilStopped;

impl<G: Game> Seat<G> for PreparesUntilStopped {
    fn name(&self) -> String {
        "preparing".into()
    }

    fn start(&mut self, _: &G, start: &MatchStart<'_>) -> Result<String, Violation> {
        let stop = start.stop.expect("the match can be stopped");
        // Bounded: a referee that never passed the stop on fails the test instead of hanging it.
        for _ in 0..60_000 {
            if stop.is_set() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Err(Violation::ConnectionError {
            detail: "the match was stopped before the player answered".into(),
        })
    }

    fn ask(&mut self, _: &Turn<'_, G>) -> Answer<G::Move> {
        unreachable!("a stopped match asks nobody")
    }
}

#[test]
fn a_stop_during_the_start_clock_ends_the_match_as_a_stop_not_a_missed_start() {
    let game = TicTacToe::new(3, 3).unwrap();
    let mut seats: Vec<Box<dyn Seat<TicTacToe>>> = vec![
        program(&game, PlayerKind::Random, 0, 1),
        Box::new(PreparesUntilStopped),
    ];
    let switch = Arc::new(StopSwitch::new());
    let mut settings = MatchSettings::new(
        "stopped",
        Clock::new(Duration::from_secs(3600), Duration::from_secs(10)),
        1,
    );
    settings.stop = Some(Arc::clone(&switch));
    let stopping = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        switch.set();
    });
    let result = run_match(&game, None, &mut seats, &settings, &mut []);
    stopping.join().unwrap();
    let result = result.expect("a stopped match is not a seat's failure");
    assert_eq!(result.aborted.as_deref(), Some("the match was stopped"));
    assert_eq!(result.steps, 0);
}
