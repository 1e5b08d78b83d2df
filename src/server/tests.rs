//! The server's answers with sessions built in code (a search that overruns, one that ponders, and
//! one that goes on after its match is aborted) and with a real game's starts, dropped or aborted
//! while the game is built.

use std::sync::atomic::AtomicBool;

use super::http::{serve_at_most, REFUSAL};
use super::session::{MoveReply, SessionError};
use super::*;
use crate::game::Goal;

/// A player whose search is the given function, whatever its deadline, with `noop` to fall back on,
/// and, when it has one, the given thinking after an answer.
struct Searching {
    search: Box<dyn FnMut(Deadline) -> MoveReply + Send>,
    ponder: Option<Box<Thinking>>,
    /// The joint moves applied to the session, and to its tracker, in order.
    advanced: Steps,
    tracked: Steps,
}

/// Joint moves written down in order.
type Steps = Arc<Mutex<Vec<Vec<String>>>>;

/// Thinking after an answer: until a deadline, watching the count of [`Wanted`]; the simulations.
type Thinking = dyn FnMut(Deadline, &AtomicUsize) -> u64 + Send;

impl Session for Searching {
    fn role(&self) -> &str {
        "r"
    }
    fn engine(&self) -> crate::load::EngineKind {
        crate::load::EngineKind::Native
    }
    fn prepare(&mut self, _: Deadline) -> Option<String> {
        None
    }
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError> {
        self.advanced.lock().unwrap().push(moves.to_vec());
        Ok(())
    }
    fn tracker(&mut self) -> Box<dyn Tracker> {
        Box::new(Noop(Arc::clone(&self.tracked)))
    }
    fn choose(&mut self, deadline: Deadline) -> Result<MoveReply, SessionError> {
        Ok((self.search)(deadline))
    }
    fn stop(&mut self, _: Option<&[String]>) -> Result<Option<Goal>, SessionError> {
        Ok(None)
    }
    fn ponder(&mut self, until: Deadline, wanted: &AtomicUsize) -> u64 {
        match &mut self.ponder {
            Some(ponder) => ponder(until, wanted),
            None => 0,
        }
    }
}

/// A tracker whose every fallback is `noop`, writing down the joint moves it follows; a move named
/// `illegal` it refuses.
struct Noop(Steps);

impl Tracker for Noop {
    fn advance(&mut self, moves: &[String]) -> Result<(), SessionError> {
        if moves.iter().any(|m| m == "illegal") {
            return Err(SessionError::BadMoves(
                "`illegal` is not a legal move".into(),
            ));
        }
        self.0.lock().unwrap().push(moves.to_vec());
        Ok(())
    }
    fn fallback_move(&mut self) -> Result<String, SessionError> {
        Ok("noop".into())
    }
}

/// A player whose search is `search`, and which does not think after answering.
fn searching(search: impl FnMut(Deadline) -> MoveReply + Send + 'static) -> Searching {
    Searching {
        search: Box::new(search),
        ponder: None,
        advanced: Steps::default(),
        tracked: Steps::default(),
    }
}

/// A server with `config` holding match `m`, played by `session`.
fn serving(
    config: ServerConfig,
    session: Box<dyn Session>,
    play_clock: Duration,
    idle_limit: Duration,
) -> Arc<PlayerServer> {
    let server = PlayerServer::new(config, Arc::new(|_: &str| {}));
    server
        .matches()
        .insert("m".into(), entry(Some(session), play_clock, idle_limit));
    server
}

/// A match played by `session`, or whose game is still being built.
fn entry(
    session: Option<Box<dyn Session>>,
    play_clock: Duration,
    idle_limit: Duration,
) -> MatchEntry {
    MatchEntry {
        session: session.map(Playing::new),
        steps: Steps::default(),
        failed: None,
        play_clock,
        last_seen: Instant::now(),
        idle_limit,
        wanted: Wanted::new(),
        work: Arc::new(()),
        stop: Arc::new(StopSwitch::new()),
    }
}

/// A runtime of one worker, as the tests drive the server's answers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// The move a search gives too late.
fn late() -> MoveReply {
    MoveReply {
        mv: "late".into(),
        effort: String::new(),
        fallback: None,
    }
}

/// A server for one match whose margin is a second: the fallback to a search that overruns
/// comes half a margin before the clock's end, time enough on a busy machine.
fn one_place() -> ServerConfig {
    ServerConfig {
        margin: Duration::from_millis(1000),
        capacity: 1,
        ..ServerConfig::default()
    }
}

/// A player that ignores its deadline.
fn stubborn() -> Searching {
    searching(|_| {
        std::thread::sleep(Duration::from_millis(4000));
        late()
    })
}

#[test]
fn a_search_that_overruns_is_answered_with_the_fallback_in_time() {
    let server = serving(
        one_place(),
        Box::new(stubborn()),
        Duration::from_secs(3),
        Duration::from_secs(60),
    );
    let runtime = runtime();
    runtime.block_on(async {
        let info = server.answer(Message::Info, Arrival::now()).await;
        assert!(info.body.contains("(status busy)"), "{}", info.body);
        fallback_in_time(&server, None).await;
        let reply = server.play("other", None, Arrival::now()).await;
        assert_eq!(reply.body, "busy");
    });
}

/// The start of match `m` of Connect Four, whose build (the player thinks through the start clock
/// less the margin, a second by default) takes `start_clock` less a second.
fn start_connect4(start_clock: f64) -> Message {
    let program = crate::syntax::parse_infix(include_str!("../../games/connect4.gdl")).unwrap();
    let rules = crate::print::to_kif(&crate::print::convert(&program, Syntax::Kif).unwrap());
    Message::Start {
        match_id: "m".into(),
        role: "red".into(),
        rules,
        start_clock,
        play_clock: 1.0,
    }
}

/// A server of the default player holding at most `capacity` matches, and none yet.
fn holding(capacity: usize) -> Arc<PlayerServer> {
    let config = ServerConfig {
        capacity,
        ..ServerConfig::default()
    };
    PlayerServer::new(config, Arc::new(|_: &str| {}))
}

/// Waits until `ready` holds, bounded by a minute.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let waiting = Instant::now();
    while !ready() {
        assert!(waiting.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_start_dropped_while_its_game_is_built_lets_its_place_go_when_the_build_ends() {
    let server = holding(1);
    let start = start_connect4(2.0);
    let runtime = runtime();
    let status = |server: &Arc<PlayerServer>| {
        runtime
            .block_on(server.answer(Message::Info, Arrival::now()))
            .body
    };
    // No time at all: the start is polled once (it takes its place and hands the build to the
    // blocking pool) and then dropped, as when the runtime shuts down.
    let dropped = runtime.block_on(async {
        tokio::time::timeout(Duration::ZERO, server.answer(start, Arrival::now())).await
    });
    assert!(
        dropped.is_err(),
        "the build ended before its first poll returned"
    );
    // The build ends by its start clock.
    wait_until("the dropped start's place was never let go", || {
        status(&server).contains("(status available)")
    });
    assert!(server.matches().is_empty());
}

#[test]
fn a_start_aborted_while_its_game_is_built_leaves_a_new_start_of_the_same_match_alone() {
    // Room for the aborted build, still running, and the new one.
    let server = holding(2);
    let runtime = runtime();
    let started = |server: &Arc<PlayerServer>| {
        let server = Arc::clone(server);
        // Builds of seven seconds: the abort and the second start come well within the first's.
        runtime.spawn(async move { server.answer(start_connect4(8.0), Arrival::now()).await })
    };
    let first = started(&server);
    wait_until("the first start never took its place", || {
        server.matches().contains_key("m")
    });
    let abort = Message::Abort {
        match_id: "m".into(),
    };
    assert_eq!(
        runtime.block_on(server.answer(abort, Arrival::now())).body,
        "aborted"
    );
    let second = started(&server);
    wait_until("the second start never took its place", || {
        server.matches().contains_key("m")
    });
    let first = runtime.block_on(first).unwrap();
    assert_eq!(
        first.body, "busy",
        "the aborted build took the new start's place"
    );
    let second = runtime.block_on(second).unwrap();
    assert_eq!(second.body, "ready", "{:?}", second.note);
    assert!(server.matches()["m"].session.is_some());
}

/// A player whose search runs until `gate` opens, whatever its deadline.
fn held(gate: Arc<(Mutex<bool>, std::sync::Condvar)>) -> Searching {
    searching(move |_| {
        wait_for(&gate);
        late()
    })
}

/// Waits until `gate` opens.
fn wait_for(gate: &(Mutex<bool>, std::sync::Condvar)) {
    let (released, changed) = gate;
    let mut r = released.lock().unwrap_or_else(PoisonError::into_inner);
    while !*r {
        r = changed.wait(r).unwrap_or_else(PoisonError::into_inner);
    }
}

/// Opens a gate however the test ends: a runtime dropped with a task still waiting for it would
/// wait for it for ever.
struct Release(Arc<(Mutex<bool>, std::sync::Condvar)>);

impl Drop for Release {
    fn drop(&mut self) {
        let (released, changed) = &*self.0;
        *released.lock().unwrap_or_else(PoisonError::into_inner) = true;
        changed.notify_all();
    }
}

#[test]
fn an_aborted_match_s_search_holds_its_place_until_it_ends() {
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let server = serving(
        one_place(),
        Box::new(held(Arc::clone(&gate))),
        Duration::from_secs(3),
        Duration::from_secs(60),
    );
    let runtime = runtime();
    // Dropped before the runtime (declared after it).
    let release = Release(Arc::clone(&gate));
    let status = |server: &Arc<PlayerServer>| {
        runtime
            .block_on(server.answer(Message::Info, Arrival::now()))
            .body
    };
    // The search overruns: the fallback answers, and the search goes on.
    let reply = runtime.block_on(server.play("m", None, Arrival::now()));
    assert_eq!(reply.body, "noop");
    let abort = Message::Abort {
        match_id: "m".into(),
    };
    let reply = runtime.block_on(server.answer(abort, Arrival::now()));
    assert_eq!(reply.body, "aborted");
    assert!(
        status(&server).contains("(status busy)"),
        "the search still runs"
    );
    drop(release);
    // The search ends as soon as it is let go.
    wait_until("the place was never freed", || {
        status(&server).contains("(status available)")
    });
}

#[test]
fn an_abort_ends_the_match_s_search_before_its_clock() {
    let started = Arc::new(AtomicBool::new(false));
    let searching_now = Arc::clone(&started);
    // A search that uses all its time: the play clock is an hour.
    let session = searching(move |deadline: Deadline| {
        searching_now.store(true, Ordering::SeqCst);
        while !deadline.passed() {
            std::thread::sleep(Duration::from_millis(2));
        }
        MoveReply {
            mv: "searched".into(),
            effort: String::new(),
            fallback: None,
        }
    });
    let server = serving(
        one_place(),
        Box::new(session),
        Duration::from_secs(3600),
        Duration::from_secs(7200),
    );
    let runtime = runtime();
    let playing = runtime.spawn({
        let server = Arc::clone(&server);
        async move { server.play("m", None, Arrival::now()).await }
    });
    wait_until("the search never started", || {
        started.load(Ordering::SeqCst)
    });
    let abort = Message::Abort {
        match_id: "m".into(),
    };
    let reply = runtime.block_on(server.answer(abort, Arrival::now()));
    assert_eq!(reply.body, "aborted");
    // The search ends at the abort: its move comes back, and its place is free. Without the stop,
    // it would search for the hour (the bound below turns that into a failure).
    let reply = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(600), playing).await })
        .expect("the aborted search ended before its hour")
        .expect("the request's task ran");
    assert_eq!(reply.body, "searched");
    wait_until("the place was never freed", || {
        runtime
            .block_on(server.answer(Message::Info, Arrival::now()))
            .body
            .contains("(status available)")
    });
}

/// A session that answers at once and then thinks until the next request (or its limit),
/// writing down in `spells` whether a request (or the match's end) stopped each spell of thinking,
/// rather than its limit.
fn pondering(spells: Arc<Mutex<Vec<bool>>>) -> Searching {
    Searching {
        ponder: Some(Box::new(move |until: Deadline, wanted: &AtomicUsize| {
            while wanted.load(Ordering::Relaxed) > 1 && !until.passed() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let stopped = wanted.load(Ordering::Relaxed) <= 1;
            spells.lock().unwrap().push(stopped);
            1
        })),
        ..searching(|_| chosen())
    }
}

/// The move a search chooses in time.
fn chosen() -> MoveReply {
    MoveReply {
        mv: "chosen".into(),
        effort: String::new(),
        fallback: None,
    }
}

/// The joint move of a step of match `m`: `mv` and a no-op.
fn step(mv: &str) -> Vec<String> {
    vec![mv.to_string(), "noop".to_string()]
}

/// Plays answered while the game is built are steps all the same (the manager plays on with
/// another move for the role): the first play after the build applies them, in order, before its
/// own, to the session and to its tracker.
#[test]
fn the_steps_of_plays_answered_while_the_game_is_built_reach_the_session() {
    let server = PlayerServer::new(one_place(), Arc::new(|_: &str| {}));
    let play_clock = Duration::from_millis(200);
    let idle = Duration::from_secs(60);
    server
        .matches()
        .insert("m".into(), entry(None, play_clock, idle));
    let runtime = runtime();
    for mv in ["a", "b"] {
        let reply = runtime.block_on(server.play("m", Some(step(mv)), Arrival::now()));
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            reply.body
        );
    }
    let session = searching(|_| chosen());
    let (advanced, tracked) = (Arc::clone(&session.advanced), Arc::clone(&session.tracked));
    server.matches().get_mut("m").unwrap().session = Some(Playing::new(Box::new(session)));
    let reply = runtime.block_on(server.play("m", Some(step("c")), Arrival::now()));
    assert_eq!(reply.body, "chosen");
    let expected = vec![step("a"), step("b"), step("c")];
    assert_eq!(*advanced.lock().unwrap(), expected);
    wait_until("the tracker never followed the steps", || {
        *tracked.lock().unwrap() == expected
    });
}

/// Whoever holds a session or a tracker applies the steps it has not applied yet, in the order they
/// came, each once, a step that does not fit counted as applied (it is reported once).
#[test]
fn a_match_s_steps_are_applied_once_and_in_order_whichever_task_comes_first() {
    let steps = Steps::default();
    steps.lock().unwrap().extend([step("a"), step("b")]);
    let (mut seen, mut applied) = (Vec::new(), 0);
    let mut follow = |applied: &mut usize| {
        catch_up(&steps, applied, |m| {
            seen.push(m[0].clone());
            if m[0] == "bad" {
                return Err(SessionError::BadMoves("bad".into()));
            }
            Ok(())
        })
    };
    assert!(follow(&mut applied).is_ok());
    // A later task that finds nothing new applies nothing again.
    assert!(follow(&mut applied).is_ok());
    steps.lock().unwrap().extend([step("bad"), step("c")]);
    assert!(follow(&mut applied).is_err());
    assert!(follow(&mut applied).is_ok());
    assert_eq!(applied, 4);
    assert_eq!(seen, ["a", "b", "bad", "c"]);
}

/// A player still thinking after its last answer holds its session (a single playout on the Datalog
/// evaluator can outlast the next play clock): the next play is answered in time with a legal move
/// its tracker gives, not refused for want of one.
#[test]
fn a_player_thinking_past_the_next_play_clock_has_a_legal_move_answered_for_it() {
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let held = Arc::clone(&gate);
    let session = Searching {
        ponder: Some(Box::new(move |_: Deadline, _: &AtomicUsize| {
            wait_for(&held);
            0
        })),
        ..searching(|_| chosen())
    };
    let config = ServerConfig {
        ponder: true,
        ..one_place()
    };
    let server = serving(
        config,
        Box::new(session),
        Duration::from_secs(3),
        Duration::from_secs(60),
    );
    let runtime = runtime();
    // Dropped before the runtime (declared after it).
    let _release = Release(gate);
    let reply = runtime.block_on(server.play("m", None, Arrival::now()));
    assert_eq!(reply.body, "chosen");
    runtime.block_on(fallback_in_time(&server, Some(step("a"))));
    // Moves the tracker refuses get the answer the session would give them, saying why.
    let reply = runtime.block_on(server.play("m", Some(step("illegal")), Arrival::now()));
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (
            StatusCode::BAD_REQUEST,
            "error: `illegal` is not a legal move"
        )
    );
}

/// Plays `moves` in match `m`, whose play clock is 3 s: the answer is the fallback, `noop`, within it.
async fn fallback_in_time(server: &Arc<PlayerServer>, moves: Option<Vec<String>>) {
    let arrival = Arrival::now();
    let arrived = arrival.headers;
    let reply = server.play("m", moves, arrival).await;
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (StatusCode::OK, "noop")
    );
    assert!(
        arrived.elapsed() < Duration::from_secs(3),
        "{:?}",
        arrived.elapsed()
    );
}

/// Plays three steps of a match whose session ponders and ends it with `end`; returns what
/// ended each spell of thinking.
fn ponder_through(ponder: bool, end: Message) -> Vec<bool> {
    let config = ServerConfig {
        margin: Duration::from_millis(100),
        ponder,
        ..ServerConfig::default()
    };
    let spells = Arc::new(Mutex::new(Vec::new()));
    let session = pondering(Arc::clone(&spells));
    // Long enough that a spell ended by its own limit is told from one a request ended.
    let server = serving(
        config,
        Box::new(session),
        Duration::from_secs(60),
        Duration::from_secs(600),
    );
    let runtime = runtime();
    runtime.block_on(async {
        for _ in 0..3 {
            // Each request gets the session's own move: the thinking before it let go.
            let reply = server.play("m", None, Arrival::now()).await;
            assert_eq!(reply.body, "chosen");
        }
        server.answer(end, Arrival::now()).await;
    });
    // The last spell ends when the match does: wait for it (bounded by the spell's limit).
    let expected = if ponder { 3 } else { 0 };
    let waiting = Instant::now();
    while spells.lock().unwrap().len() < expected && waiting.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let spells = spells.lock().unwrap().clone();
    spells
}

#[test]
fn a_session_thinks_between_requests_until_the_next_one_comes() {
    let stop = Message::Stop {
        match_id: "m".into(),
        moves: None,
    };
    assert_eq!(ponder_through(true, stop), [true, true, true]);
    let abort = Message::Abort {
        match_id: "m".into(),
    };
    assert_eq!(ponder_through(true, abort), [true, true, true]);
    let stop = Message::Stop {
        match_id: "m".into(),
        moves: None,
    };
    assert!(ponder_through(false, stop).is_empty());
}

#[test]
fn a_message_slow_to_arrive_does_not_widen_every_match_s_margin() {
    let server = serving(
        one_place(),
        Box::new(searching(|_| MoveReply {
            mv: "quick".into(),
            effort: String::new(),
            fallback: None,
        })),
        Duration::from_secs(20),
        Duration::from_secs(60),
    );
    let clock = Duration::from_secs(20);
    // Its headers came nine seconds before the rest: the manager's clock counts them, the player's
    // overhead does not.
    let read = Instant::now();
    let arrival = Arrival {
        headers: read.checked_sub(Duration::from_secs(9)).unwrap_or(read),
        read,
    };
    let reply = runtime().block_on(server.play("m", None, arrival));
    assert_eq!(reply.body, "quick");
    // Twice the nine seconds would be 15 s (three quarters of the clock); the player's own overhead
    // is milliseconds, however busy the machine.
    let margin = server.margin(clock);
    assert!(margin < Duration::from_secs(9), "{margin:?}");
}

#[test]
fn a_connection_past_the_cap_is_told_why_it_is_refused() {
    use std::io::{Read, Write};
    let runtime = runtime();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let router = Router::new().fallback(|| async { "served" });
    let log: Log = Arc::new(|_: &str| {});
    let cap = 4;
    runtime.spawn(serve_at_most(
        listener,
        router,
        Duration::from_secs(60),
        log,
        cap,
    ));
    // Every place taken by a connection that sends nothing (each waits for its headers for a minute).
    let held: Vec<std::net::TcpStream> = (0..cap)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    let bounded = Some(Duration::from_secs(60));
    // The server takes the held connections in order; a place may still be free until it has.
    let mut reply = String::new();
    for _ in 0..600 {
        let mut next = std::net::TcpStream::connect(addr).unwrap();
        next.set_read_timeout(bounded).unwrap();
        let _ = next.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        reply.clear();
        let _ = next.read_to_string(&mut reply);
        if reply.starts_with("HTTP/1.1 503") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.ends_with(REFUSAL), "{reply}");
    drop(held);
}

/// The start of match `m` of Connect Four with 100,000 facts more and `extra`, whose reading takes
/// long past the first look at the clock: with a start clock of 0, the start answers before the
/// build ends. The play clock is a minute, time enough for the build on a busy machine.
fn late_start(extra: &str) -> Message {
    let Message::Start { mut rules, .. } = start_connect4(0.0) else {
        unreachable!("a start")
    };
    for i in 0..100_000 {
        rules.push_str(&format!(" (filler {i})"));
    }
    rules.push_str(extra);
    Message::Start {
        match_id: "m".into(),
        role: "red".into(),
        rules,
        start_clock: 0.0,
        play_clock: 60.0,
    }
}

/// The first play of match `m`.
fn first_play(server: &Arc<PlayerServer>, runtime: &tokio::runtime::Runtime) -> Reply {
    let play = Message::Play {
        match_id: "m".into(),
        moves: None,
    };
    runtime.block_on(server.answer(play, Arrival::now()))
}

/// A start clock too short for its game: the start answers by its clock and the build goes on; the
/// first play waits for it, then answers a legal move.
#[test]
fn a_start_answers_by_its_clock_and_the_first_play_waits_for_the_build() {
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = Arc::clone(&lines);
    let config = ServerConfig {
        capacity: 1,
        player: crate::players::PlayerKind::Random.into(),
        ..ServerConfig::default()
    };
    let server = PlayerServer::new(
        config,
        Arc::new(move |line: &str| log.lock().unwrap().push(line.to_string())),
    );
    let runtime = runtime();
    let reply = runtime.block_on(server.answer(late_start(""), Arrival::now()));
    assert_eq!(reply.body, "ready");
    assert_eq!(
        reply.note.as_deref(),
        Some("the game is still being built: the first play waits"),
        "the build ended before its first poll returned"
    );
    let reply = first_play(&server, &runtime);
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(reply.body.contains("drop"), "{}", reply.body);
    wait_until("the late build was never logged", || {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("built after its start answer: ready"))
    });
}

/// Rules that cannot be played (a role of two names, refused once everything is read), built
/// after the start has answered "ready": the first play is told why, and the place is free again.
#[test]
fn a_game_that_fails_to_build_after_the_start_answered_is_reported_at_the_first_play() {
    let server = holding(1);
    let runtime = runtime();
    let reply = runtime.block_on(server.answer(late_start("\n(role red blue)\n"), Arrival::now()));
    assert_eq!(
        reply.body, "ready",
        "the build ended before its first poll returned"
    );
    let reply = first_play(&server, &runtime);
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(reply.body.contains("rules:"), "{}", reply.body);
    assert!(server.matches().is_empty());
}
