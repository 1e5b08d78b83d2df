//! The web server's API over HTTP, without a browser: status codes, the errors bad input gets, limits,
//! matches played, watched, taken back, stopped and abandoned, concurrent sessions, replays and
//! tournaments. Each test runs its own server on a free loopback port; every loop that waits is
//! bounded by a count of reads or polls (the event stream sends a keep-alive every second).

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ggp::protocol::record::MatchRecord;
use ggp::web::WebConfig;
use serde_json::{json, Value};

mod requests;

/// A server of this process, on a free port.
struct Server {
    base: String,
    agent: ureq::Agent,
}

fn start(config: WebConfig) -> Server {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let log: ggp::server::Log = std::sync::Arc::new(|_: &str| {});
        let addr = "127.0.0.1:0".parse().unwrap();
        let _ = ggp::web::run(addr, config, log, |bound| {
            let _ = tx.send(bound);
        });
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the web server binds a port");
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    Server {
        base: format!("http://{addr}"),
        agent,
    }
}

/// A server that never stops a match for want of watchers (the tests that want that say so).
fn server() -> Server {
    start(WebConfig {
        abandon_after: Duration::from_secs(3600),
        ..WebConfig::default()
    })
}

impl Server {
    fn get(&self, path: &str) -> (u16, String) {
        let mut r = self
            .agent
            .get(format!("{}{path}", self.base))
            .call()
            .expect("the server answers");
        let status = r.status().as_u16();
        (status, r.body_mut().read_to_string().unwrap_or_default())
    }

    fn send(&self, path: &str, content_type: &str, body: String) -> (u16, String) {
        let mut r = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", content_type)
            .send(body)
            .expect("the server answers");
        let status = r.status().as_u16();
        (
            status,
            r.body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .unwrap_or_default(),
        )
    }

    /// What the server answers `request`, sent as it is over a connection of its own.
    fn exchange(&self, request: &str) -> String {
        use std::io::{Read, Write};
        let addr = self.base.trim_start_matches("http://");
        let mut conn = std::net::TcpStream::connect(addr).expect("connects");
        // Bounds the test, not the server: a stalled body is answered after the read timeout.
        conn.set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        conn.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        answer
    }

    fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, text) = self.send(path, "application/json", body.to_string());
        let value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{path} answered {status} with no JSON ({e}): {text}"));
        (status, value)
    }

    fn get_json(&self, path: &str) -> (u16, Value) {
        let (status, text) = self.get(path);
        let value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{path} answered {status} with no JSON ({e}): {text}"));
        (status, value)
    }

    /// Starts a match and answers its id.
    fn start_match(&self, request: Value) -> u64 {
        let (status, answer) = self.post("/api/matches", request);
        assert_eq!(status, 201, "{answer}");
        answer["id"].as_u64().expect("an id")
    }

    /// Follows match `id`'s events, calling `on` with each until it answers true or the match ends;
    /// returns them all. The stream closes when this returns (the page is closed).
    fn follow(&self, id: u64, mut on: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let response = self
            .agent
            .get(format!("{}/api/matches/{id}/events", self.base))
            .call()
            .expect("the event stream opens");
        assert_eq!(response.status().as_u16(), 200);
        let mut lines = BufReader::new(response.into_body().into_reader()).lines();
        let mut events = Vec::new();
        // A keep-alive comes every second: 10,000 lines is hours of a stuck match.
        for _ in 0..10_000 {
            let Some(Ok(line)) = lines.next() else { break };
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let event: Value = serde_json::from_str(data).expect("events are JSON");
            let stop = on(&event) || event["type"] == "end";
            events.push(event);
            if stop {
                return events;
            }
        }
        panic!("match {id} never ended; its events: {events:?}");
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

#[test]
fn the_library_lists_the_bundled_games_with_what_loading_them_tells() {
    let s = server();
    let mut described = Value::Null;
    for _ in 0..600 {
        let (status, games) = s.get_json("/api/games");
        assert_eq!(status, 200);
        let all_known = games["games"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| !g["described"].is_null() || !g["problem"].is_null());
        described = games;
        if all_known {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let game = |name: &str| {
        described["games"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap_or_else(|| panic!("{name} is in the library: {described}"))
            .clone()
    };
    let cases = [
        ("tictactoe", json!(["x", "o"]), "turn-taking"),
        ("connect4", json!(["red", "black"]), "turn-taking"),
        ("breakthrough", json!(["white", "black"]), "turn-taking"),
        ("roshambo", json!(["left", "right"]), "simultaneous"),
    ];
    for (name, roles, dynamics) in cases {
        let g = game(name);
        assert_eq!(g["described"]["roles"], roles, "{g}");
        assert_eq!(g["described"]["dynamics"], dynamics, "{g}");
        assert_eq!(g["described"]["engine"], "network", "{g}");
    }
    let (status, ttt) = s.get_json("/api/games/tictactoe");
    assert_eq!(status, 200);
    assert!(ttt["text"].as_str().unwrap().contains("role(x)"));
    assert_eq!(ttt["style"]["pieces"]["x"]["symbol"], "✕");
    let (status, missing) = s.get_json("/api/games/chezz");
    assert_eq!(status, 404);
    let error = missing["error"].as_str().unwrap();
    assert!(
        error.contains("chezz") && error.contains("tictactoe"),
        "{error}"
    );
}

/// `check` on `text`: whether it is valid, and else the line and column of the error whose message
/// holds `message`.
fn check(s: &Server, text: &str, syntax: &str, expected: Option<(u64, u64, &str)>) {
    let (status, answer) = s.post("/api/check", json!({ "text": text, "syntax": syntax }));
    assert_eq!(status, 200, "{answer}");
    match expected {
        None => assert_eq!(answer["ok"], true, "{text}: {answer}"),
        Some((line, column, message)) => {
            assert_eq!(answer["ok"], false, "{text}: {answer}");
            let first = answer["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["message"].as_str().unwrap().contains(message))
                .unwrap_or_else(|| panic!("{text}: no error says `{message}`: {answer}"));
            assert_eq!(
                (first["line"].as_u64(), first["column"].as_u64()),
                (Some(line), Some(column)),
                "{text}: {first}"
            );
            let rendered = first["rendered"].as_str().unwrap();
            assert!(
                rendered.starts_with(&format!("rules.{syntax}:{line}:{column}: error")),
                "{rendered}"
            );
        }
    }
}

#[test]
fn check_answers_every_problem_with_its_line_and_column() {
    let s = server();
    let tictactoe = include_str!("../../../games/tictactoe.gdl");
    check(&s, tictactoe, "gdl", None);
    let broken = tictactoe.replace("role(o)", "role(o");
    let line = tictactoe
        .lines()
        .position(|l| l == "role(o)")
        .expect("tictactoe declares o") as u64
        + 1;
    check(
        &s,
        &broken,
        "gdl",
        Some((line + 2, 1, "expected `(`, `)` or `,`")),
    );
    check(
        &s,
        "(role x)\n(init (cell 1))\n(<= (legal x (mark ?y)) (true (cell ?x)))\n",
        "kif",
        Some((3, 20, "unsafe variable `?y`")),
    );
    check(&s, "(role x", "kif", Some((1, 1, "never closed")));
    // Unsafe variables are found at their place, with the check's own words.
    let (status, answer) = s.post(
        "/api/check",
        json!({ "text": tictactoe.replace("legal(mark(M,N)) :- cell(M,N,b)", "legal(mark(M,N)) :- cell(M,K,b)"), "syntax": "gdl" }),
    );
    assert_eq!(status, 200);
    let diagnostics = answer["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains('N') && d["severity"] == "error"),
        "{answer}"
    );
}

/// With `"play": true`, `check` also play-tests the game: a game whose static check passes but whose
/// role `b` has no move after two moves fails at `b`'s fact, and a sound game says what was played.
#[test]
fn check_with_play_plays_the_game_and_finds_a_role_without_a_move() {
    let s = server();
    let stuck = include_str!("../../check_unplayable/stuck_after_two_moves.kif");
    let play = |text: &str, syntax: &str, play: bool| {
        let (status, answer) = s.post(
            "/api/check",
            json!({ "text": text, "syntax": syntax, "play": play }),
        );
        assert_eq!(status, 200, "{answer}");
        answer
    };
    let answer = play(stuck, "kif", false);
    assert_eq!(
        (&answer["ok"], &answer["play_test"]),
        (&json!(true), &Value::Null),
        "{answer}"
    );
    let answer = play(stuck, "kif", true);
    assert_eq!(answer["ok"], false, "{answer}");
    let error = answer["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .unwrap_or_else(|| panic!("an error: {answer}"));
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(3), Some(1)),
        "{error}"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("the role `b` has no legal move after 2 moves (go noop, noop go)"),
        "{error}"
    );
    let answer = play(include_str!("../../../games/tictactoe.gdl"), "gdl", true);
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(
        answer["play_test"]
            .as_str()
            .unwrap_or_default()
            .starts_with("20 random matches, all ended after "),
        "{answer}"
    );
}

#[test]
fn fmt_and_convert_answer_text_that_checks() {
    let s = server();
    let tictactoe = include_str!("../../../games/tictactoe.gdl");
    let (status, kif) = s.post(
        "/api/convert",
        json!({ "text": tictactoe, "syntax": "gdl", "to": "kif" }),
    );
    assert_eq!(status, 200, "{kif}");
    assert_eq!(kif["syntax"], "kif");
    let kif_text = kif["text"].as_str().unwrap();
    assert!(kif_text.contains("(role x)"), "{kif_text}");
    check(&s, kif_text, "kif", None);
    let (status, back) = s.post(
        "/api/convert",
        json!({ "text": kif_text, "syntax": "kif", "to": "gdl" }),
    );
    assert_eq!(status, 200, "{back}");
    check(&s, back["text"].as_str().unwrap(), "gdl", None);
    let (status, formatted) = s.post(
        "/api/fmt",
        json!({ "text": "(role x)   (role   o)", "syntax": "kif" }),
    );
    assert_eq!(status, 200, "{formatted}");
    assert_eq!(formatted["text"], "(role x)\n(role o)\n");
}

#[test]
fn a_match_between_programs_is_watched_to_its_end_and_replays_from_its_record() {
    let s = server();
    let id = s.start_match(json!({
        "game": "tictactoe", "players": ["mcts", "random"], "startclock": 1, "playclock": 0.2,
    }));
    let events = s.follow(id, |_| false);
    let kinds = types(&events);
    assert_eq!(kinds[0], "starting", "{kinds:?}");
    assert_eq!(kinds[kinds.len() - 2], "finished", "{kinds:?}");
    let states: Vec<&Value> = events.iter().filter(|e| e["type"] == "state").collect();
    assert_eq!(
        states[0]["drawing"]["boards"][0]["cells"],
        json!([[null, null, null], [null, null, null], [null, null, null]])
    );
    assert!(states[0]["text"].as_str().unwrap().contains("control(x)"));
    // mcts says why it chose: its candidates with visits and values.
    let first = events.iter().find(|e| e["type"] == "moves").unwrap();
    let x = &first["moves"][0];
    assert!(x["effort"].as_str().unwrap().contains("simulations"), "{x}");
    let candidates = x["candidates"].as_array().expect("mcts explains its move");
    assert_eq!(candidates.len(), 9, "{x}");
    assert!(candidates.iter().any(|c| c["move"] == x["move"]), "{x}");
    let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
    let result = finished["result"].as_str().unwrap();
    assert!(result == "a draw" || result.ends_with(" wins"), "{result}");

    let (status, text) = s.get(&format!("/api/matches/{id}/record"));
    assert_eq!(status, 200);
    let record = MatchRecord::from_json(&text).expect("a record ggp-base reads");
    let moves = events.iter().filter(|e| e["type"] == "moves").count();
    assert_eq!(record.moves.len(), moves);
    assert!(record.is_completed);
    let (status, frames) = s.post("/api/replay", json!({ "record": text }));
    assert_eq!(status, 200, "{frames}");
    let steps = frames["steps"].as_array().unwrap();
    assert_eq!(steps.len(), moves + 1);
    assert_eq!(steps[0]["drawing"], states[0]["drawing"]);
    assert_eq!(steps[moves]["drawing"], states[states.len() - 1]["drawing"]);
    // The same record on another game is refused with the reason.
    let (status, refused) = s.post("/api/replay", json!({ "record": text, "game": "connect4" }));
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("roles"),
        "{refused}"
    );
}

#[test]
fn a_match_or_replay_past_the_bytes_it_may_show_is_stopped_or_refused() {
    // A whole match's record, from a server that shows as much as it likes.
    let roomy = server();
    let request = json!({
        "game": "connect4", "players": ["random", "random"], "startclock": 1, "playclock": 0.2,
    });
    let id = roomy.start_match(request.clone());
    let events = roomy.follow(id, |_| false);
    assert!(types(&events).contains(&"finished"), "{:?}", types(&events));
    let (status, record) = roomy.get(&format!("/api/matches/{id}/record"));
    assert_eq!(status, 200);

    let limit = 2 << 10;
    let cramped = start(WebConfig {
        abandon_after: Duration::from_secs(3600),
        max_shown_bytes: limit,
        ..WebConfig::default()
    });
    // The match stops at the referee's first event past the bytes, and says why.
    let id = cramped.start_match(request);
    let events = cramped.follow(id, |_| false);
    let shown: usize = events.iter().map(|e| e.to_string().len()).sum();
    let aborted = events
        .iter()
        .find(|e| e["type"] == "aborted")
        .unwrap_or_else(|| panic!("not stopped after {shown} bytes: {:?}", types(&events)));
    assert!(
        aborted["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("passed the {limit} bytes a match may show")),
        "{aborted}"
    );
    // Past the bytes come at most the state that passed them, the moves and state after it (the
    // referee looks at its stop flag after a state), `aborted` and `end`.
    let largest = events.iter().map(|e| e.to_string().len()).max().unwrap();
    assert!(
        shown > limit && shown <= limit + 5 * largest,
        "{shown} bytes, the largest event {largest}"
    );
    // The whole match's replay is refused with the reason.
    let (status, refused) = cramped.post("/api/replay", json!({ "record": record }));
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains(&format!("more than the {limit} bytes a replay may send")),
        "{refused}"
    );
}

#[test]
fn a_person_moves_takes_back_and_stops_through_the_api() {
    let s = server();
    let id = s.start_match(json!({
        "game": "tictactoe", "players": ["human", "random"], "startclock": 1, "playclock": 600,
    }));
    let turn = |events: &[Value]| events.last().is_some_and(|e| e["type"] == "turn");
    let events = s.follow(id, |e| e["type"] == "turn");
    let offered = &events.last().unwrap()["moves"];
    assert_eq!(offered.as_array().unwrap().len(), 9);
    // mark(2,2) changes the centre square, so a click there picks it.
    let centre = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["move"] == "mark(2,2)")
        .expect("mark(2,2) is offered");
    assert_eq!(centre["squares"], json!([[0, 1, 1]]));
    let (status, answer) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "o", "move": "mark(1,1)" }),
    );
    assert_eq!(status, 409, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("random"));
    // A move for a turn that is not the one asked is refused, not played on a later turn.
    let asked = events.last().unwrap()["turn"]
        .as_u64()
        .expect("a turn's number");
    let (status, answer) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "x", "move": "mark(1,1)", "turn": asked + 1 }),
    );
    assert_eq!(status, 409, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("which has ended"),
        "{answer}"
    );
    let (status, _) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "x", "move": "mark(4,4)", "turn": asked }),
    );
    assert_eq!(status, 202);
    let (status, _) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": 0, "move": "(mark 2 2)" }),
    );
    assert_eq!(status, 202);
    // The first turn, offered again after the move that does not parse, then the next one.
    let mut seen_turns = 0;
    let events = s.follow(id, |e| {
        seen_turns += usize::from(e["type"] == "turn");
        seen_turns == 3
    });
    assert!(turn(&events), "{:?}", types(&events));
    let at = events.iter().position(|e| e["type"] == "rejected").unwrap();
    let rejected = &events[at];
    assert!(
        rejected["error"].as_str().unwrap().contains("mark(4,4)"),
        "{rejected}"
    );
    let again = &events[at + 1];
    assert_eq!(
        (&again["type"], &again["turn"]),
        (&json!("turn"), &json!(asked)),
        "{again}"
    );
    assert!(again["clock_ms"].as_u64().unwrap() <= 600_000, "{again}");
    let played: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "moves")
        .map(|e| &e["moves"])
        .collect();
    assert_eq!(played[0][0]["move"], "mark(2,2)");
    // x asks to take back its move, and the events are followed to the match's `turns`-th turn.
    let take_back = |turns: usize| {
        let (status, _) = s.post(
            &format!("/api/matches/{id}/move"),
            json!({ "role": "x", "undo": true }),
        );
        assert_eq!(status, 202);
        let mut seen = 0;
        s.follow(id, |e| {
            seen += usize::from(e["type"] == "turn");
            seen == turns
        })
    };
    // Take back: x's move and o's reply are undone, x is asked again with the board empty (the
    // three turns before, one offered twice, then the first turn asked again).
    let events = take_back(4);
    let back = events.iter().find(|e| e["type"] == "takenback").unwrap();
    assert_eq!(back["step"], 0, "{back}");
    let last_state = events.iter().rev().find(|e| e["type"] == "state").unwrap();
    assert_eq!(last_state["step"], 0);
    // Nothing is left to take back: x is asked again on the clock that was running, not a new one.
    let ends_at = |e: &Value| e["ends_at_ms"].as_u64().expect("a turn's end");
    let before = ends_at(events.last().unwrap());
    std::thread::sleep(Duration::from_millis(200));
    let events = take_back(5);
    let nothing = events.iter().rfind(|e| e["type"] == "takenback").unwrap();
    assert_eq!(nothing["step"], Value::Null, "{nothing}");
    let after = ends_at(events.last().unwrap());
    assert!(
        after < before + 100,
        "the turn offered again ends at {after}, the one before at {before}: its clock restarted"
    );
    let (status, answer) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "x", "move": "m".repeat(70_000) }),
    );
    assert_eq!(status, 400, "{answer}");
    let (status, _) = s.post(&format!("/api/matches/{id}/stop"), json!({}));
    assert_eq!(status, 200);
    let events = s.follow(id, |_| false);
    let aborted = events.iter().position(|e| e["type"] == "aborted").unwrap();
    assert_eq!(events[aborted]["reason"], "the match was stopped");
    // Stopped during the person's turn: no move is played in their name.
    let last_moves = events.iter().rposition(|e| e["type"] == "moves");
    let last_turn = events.iter().rposition(|e| e["type"] == "turn").unwrap();
    assert!(
        last_moves.is_none_or(|m| m < last_turn),
        "{:?}",
        types(&events)
    );
    let (status, _) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "x", "move": "mark(1,1)" }),
    );
    assert_eq!(status, 409);
}

/// A person who sends moves that do not parse, without end, is offered the turn again each time:
/// past the bytes a match may show, the match stops at once, not when the play clock runs out.
#[test]
fn a_person_sending_bad_moves_without_end_stops_the_match_past_its_bytes() {
    let s = start(WebConfig {
        max_shown_bytes: 16 * 1024,
        abandon_after: Duration::from_secs(3600),
        ..WebConfig::default()
    });
    let id = s.start_match(json!({
        "game": "tictactoe", "players": ["human", "random"], "playclock": 600,
    }));
    s.follow(id, |e| e["type"] == "turn");
    // A turn offered again is some 500 bytes: 16 KiB are passed within a few hundred moves.
    let over = (0..5_000).find_map(|sent| {
        let (status, answer) = s.post(
            &format!("/api/matches/{id}/move"),
            json!({ "role": "x", "move": "zz" }),
        );
        // 202 queued, or 429 while the seat has four to read.
        (status == 409).then_some((sent, answer))
    });
    let (sent, answer) = over.expect("the match never stopped while moves were refused");
    assert!(
        answer["error"].as_str().unwrap().contains("over"),
        "{answer}"
    );
    let events = s.follow(id, |_| false);
    let aborted = events.iter().find(|e| e["type"] == "aborted").unwrap();
    assert!(
        aborted["reason"].as_str().unwrap().contains("bytes"),
        "after {sent} moves: {aborted}"
    );
}

#[test]
fn matches_past_the_limit_are_refused_until_a_place_is_free() {
    let s = start(WebConfig {
        max_matches: 1,
        abandon_after: Duration::from_secs(3600),
        ..WebConfig::default()
    });
    let waiting = json!({"game": "connect4", "players": ["human", "random"], "playclock": 600});
    let first = s.start_match(waiting.clone());
    let (status, refused) = s.post("/api/matches", waiting.clone());
    assert_eq!(status, 429, "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("--max-matches"),
        "{refused}"
    );
    s.post(&format!("/api/matches/{first}/stop"), json!({}));
    s.follow(first, |_| false);
    // The place is given back when the match's thread ends, just after its last event.
    let mut status = 0;
    for _ in 0..300 {
        status = s.post("/api/matches", waiting.clone()).0;
        if status == 201 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status, 201);
}

#[test]
fn an_abandoned_match_stops_within_its_clocks() {
    let s = start(WebConfig {
        abandon_after: Duration::from_millis(500),
        ..WebConfig::default()
    });
    let started = Instant::now();
    let id = s.start_match(json!({
        "game": "connect4", "players": ["human", "mcts"], "startclock": 1, "playclock": 120,
    }));
    s.follow(id, |e| e["type"] == "turn");
    // The page is closed (the stream above is dropped): the match ends long before the person's
    // 120 s clock would run out.
    let mut done = false;
    for _ in 0..600 {
        let (_, status) = s.get_json(&format!("/api/matches/{id}"));
        if status["done"] == true {
            done = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(done, "the abandoned match still runs");
    assert!(started.elapsed() < Duration::from_secs(120));
    let events = s.follow(id, |_| false);
    let aborted = events.iter().find(|e| e["type"] == "aborted").unwrap();
    assert_eq!(aborted["reason"], "the match was stopped");
    // Programs against each other, never followed: their searches end too, not at their 600 s
    // clocks (the minute polled here is a tenth of one).
    let id = s.start_match(json!({
        "game": "connect4", "players": ["mcts", "mcts"], "startclock": 1, "playclock": 600,
    }));
    let done = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        s.get_json(&format!("/api/matches/{id}")).1["done"] == true
    });
    assert!(done, "the unwatched match still runs");
}

/// A move sent for a seat that is not asked now would be dropped at its next turn: it is refused
/// with what to wait for.
#[test]
fn a_move_for_a_seat_not_asked_is_refused() {
    let s = server();
    let id = s.start_match(json!({
        "game": "tictactoe", "players": ["human", "human"], "playclock": 600,
    }));
    s.follow(id, |e| e["type"] == "turn");
    let (status, answer) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "o", "move": "mark(1,1)" }),
    );
    assert_eq!(status, 409, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("o is not asked for a move now"),
        "{answer}"
    );
    let (status, answer) = s.post(
        &format!("/api/matches/{id}/move"),
        json!({ "role": "x", "move": "mark(1,1)" }),
    );
    assert_eq!(status, 202, "{answer}");
    let mut turns = 0;
    let events = s.follow(id, |e| {
        turns += usize::from(e["type"] == "turn");
        turns == 2
    });
    assert_eq!(events.last().unwrap()["role"], 1, "{:?}", types(&events));
    s.post(&format!("/api/matches/{id}/stop"), json!({}));
}

/// Both roles mark a square at once; a square both choose stays blank.
const SIMULTANEOUS_MARKS: &str = "
(role red) (role blue)
(init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b))
(init (cell 2 1 b)) (init (cell 2 2 b)) (init (cell 2 3 b))
(init (cell 3 1 b)) (init (cell 3 2 b)) (init (cell 3 3 b))
(init (step 0))
(<= (legal ?r (mark ?m ?n)) (role ?r) (true (cell ?m ?n b)))
(<= (next (cell ?m ?n red)) (does red (mark ?m ?n)) (not (does blue (mark ?m ?n))))
(<= (next (cell ?m ?n blue)) (does blue (mark ?m ?n)) (not (does red (mark ?m ?n))))
(<= (next (cell ?m ?n b)) (does red (mark ?m ?n)) (does blue (mark ?m ?n)))
(<= (next (cell ?m ?n b)) (true (cell ?m ?n b))
    (not (does red (mark ?m ?n))) (not (does blue (mark ?m ?n))))
(<= (next (cell ?m ?n ?x)) (true (cell ?m ?n ?x)) (distinct ?x b))
(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= terminal (true (step 3)))
(goal red 50) (goal blue 50)
";

/// In a simultaneous game each move's squares are its own: not the other role's square (taken as
/// its first legal move), and a move that clashes with that still has its square.
#[test]
fn a_simultaneous_move_picks_its_own_square() {
    let s = server();
    let id = s.start_match(json!({
        "text": SIMULTANEOUS_MARKS, "syntax": "kif", "players": ["human", "random"],
        "playclock": 600,
    }));
    let events = s.follow(id, |e| e["type"] == "turn");
    let moves = events.last().unwrap()["moves"].as_array().unwrap().clone();
    assert_eq!(moves.len(), 9, "{moves:?}");
    let mut squares: Vec<&Value> = moves.iter().map(|m| &m["squares"]).collect();
    for sq in &squares {
        assert_eq!(sq.as_array().map(Vec::len), Some(1), "{moves:?}");
    }
    squares.sort_by_key(|s| s.to_string());
    squares.dedup();
    assert_eq!(squares.len(), 9, "{moves:?}");
    s.post(&format!("/api/matches/{id}/stop"), json!({}));
    // Two moves, each on a square of its own, the other role's assumed move elsewhere: each move
    // has its own square (neither change is the usual one).
    let two = SIMULTANEOUS_MARKS
        .replace(
            "(<= (legal ?r (mark ?m ?n)) (role ?r) (true (cell ?m ?n b)))",
            "(<= (legal red (mark 1 ?n)) (true (cell 1 ?n b)))
             (<= (legal blue (mark 3 ?n)) (true (cell 3 ?n b)))",
        )
        .replace("(init (cell 1 3 b))", "(init (cell 1 3 red))");
    let id = s.start_match(json!({
        "text": two, "syntax": "kif", "players": ["human", "random"], "playclock": 600,
    }));
    let events = s.follow(id, |e| e["type"] == "turn");
    let moves = &events.last().unwrap()["moves"];
    assert_eq!(
        moves,
        &json!([{"move": "(mark 1 1)", "squares": [[0, 0, 0]]},
                {"move": "(mark 1 2)", "squares": [[0, 0, 1]]}]),
        "{moves}"
    );
    s.post(&format!("/api/matches/{id}/stop"), json!({}));
    // Two moves, one of which clashes with the other role's assumed move (the same two squares are
    // its moves too): the two cannot be told apart, and each has both squares, so that a click
    // offers both instead of picking one alone.
    let clash = two.replace(
        "(mark 3 ?n)) (true (cell 3 ?n b))",
        "(mark 1 ?n)) (true (cell 1 ?n b))",
    );
    let clashing = s.start_match(json!({
        "text": clash, "syntax": "kif", "players": ["human", "random"], "playclock": 600,
    }));
    let events = s.follow(clashing, |e| e["type"] == "turn");
    let moves = &events.last().unwrap()["moves"];
    assert_eq!(
        moves,
        &json!([{"move": "(mark 1 1)", "squares": [[0, 0, 0], [0, 0, 1]]},
                {"move": "(mark 1 2)", "squares": [[0, 0, 0], [0, 0, 1]]}]),
        "{moves}"
    );
    s.post(&format!("/api/matches/{clashing}/stop"), json!({}));
    // The rules typed in are kept for the match's replay; a library game's are the library's.
    let (status, rules) = s.get_json(&format!("/api/matches/{id}/rules"));
    assert_eq!(status, 200, "{rules}");
    assert_eq!(rules, json!({"text": two, "syntax": "kif"}));
    let library = s.start_match(json!({"game": "tictactoe", "players": ["random", "random"]}));
    let (status, answer) = s.get_json(&format!("/api/matches/{library}/rules"));
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("/api/games/tictactoe"),
        "{answer}"
    );
    s.post(&format!("/api/matches/{library}/stop"), json!({}));
}

#[test]
fn concurrent_sessions_keep_their_own_moves() {
    let s = server();
    let request = json!({"game": "connect4", "players": ["human", "random"], "playclock": 600});
    let a = s.start_match(request.clone());
    let b = s.start_match(request);
    s.follow(a, |e| e["type"] == "turn");
    s.follow(b, |e| e["type"] == "turn");
    let (status, _) = s.post(
        &format!("/api/matches/{a}/move"),
        json!({"role": "red", "move": "drop(1)"}),
    );
    assert_eq!(status, 202);
    let (status, _) = s.post(
        &format!("/api/matches/{b}/move"),
        json!({"role": "red", "move": "drop(7)"}),
    );
    assert_eq!(status, 202);
    for (id, column) in [(a, "drop(1)"), (b, "drop(7)")] {
        let events = s.follow(id, |e| e["type"] == "moves");
        let moves = events.iter().rev().find(|e| e["type"] == "moves").unwrap();
        assert_eq!(moves["moves"][0]["move"], column, "match {id}");
        s.post(&format!("/api/matches/{id}/stop"), json!({}));
    }
    let (_, list) = s.get_json("/api/matches");
    assert_eq!(list["matches"].as_array().unwrap().len(), 2);
}

#[test]
fn a_tournament_fills_its_table_and_gives_its_csv() {
    let s = server();
    let (status, t) = s.post(
        "/api/tournaments",
        json!({"game": "tictactoe", "players": ["random", "legal"], "games": 2, "playclock": 0.1}),
    );
    assert_eq!(status, 201, "{t}");
    let id = t["id"].as_u64().unwrap();
    assert_eq!(t["total"], 2);
    let (status, list) = s.get_json("/api/tournaments");
    assert_eq!(status, 200, "{list}");
    let listed = &list["tournaments"][0];
    assert_eq!(
        (&listed["id"], &listed["game"], &listed["total"]),
        (&json!(id), &json!("tictactoe"), &json!(2)),
        "{list}"
    );
    assert!(listed.get("table").is_none(), "{list}");
    let mut last = Value::Null;
    for _ in 0..1200 {
        last = s.get_json(&format!("/api/tournaments/{id}")).1;
        if last["done"] == true {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(last["done"], true, "{last}");
    assert_eq!(last["played"], 2);
    let table = last["table"].as_array().unwrap();
    assert_eq!(table.len(), 2);
    assert_eq!(
        table[0]["games"].as_u64().unwrap() + table[1]["games"].as_u64().unwrap(),
        4
    );
    let (status, csv) = s.get(&format!("/api/tournaments/{id}/csv"));
    assert_eq!(status, 200);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("player,"), "{csv}");
}

#[test]
fn a_tournament_stopped_keeps_its_table_and_frees_its_place() {
    let s = server();
    let long =
        json!({"game": "tictactoe", "players": ["mcts", "random"], "games": 100, "playclock": 0.5});
    let (status, t) = s.post("/api/tournaments", long.clone());
    assert_eq!(status, 201, "{t}");
    let id = t["id"].as_u64().unwrap();
    let (status, stopping) = s.post(&format!("/api/tournaments/{id}/stop"), json!({}));
    assert_eq!(status, 200, "{stopping}");
    let mut last = Value::Null;
    for _ in 0..1200 {
        last = s.get_json(&format!("/api/tournaments/{id}")).1;
        if last["done"] == true {
            break;
        }
        assert_eq!(last["stopping"], true, "{last}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(last["done"], true, "{last}");
    assert_eq!(last["stopping"], false, "{last}");
    let played = last["played"].as_u64().unwrap();
    assert!(played < 100, "{last}");
    assert_eq!(
        last["error"],
        format!("stopped after {played} of 100 games: stopped on request"),
    );
    let seats: u64 = last["table"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["games"].as_u64().unwrap())
        .sum();
    assert_eq!(seats, 2 * played, "{last}");
    let (status, _) = s.post(&format!("/api/tournaments/{id}/stop"), json!({}));
    assert_eq!(
        status, 200,
        "stopping a finished tournament changes nothing"
    );
    let (status, none) = s.post("/api/tournaments/999999/stop", json!({}));
    assert_eq!(status, 404, "{none}");
    // Its place is free again: as many tournaments as the server runs at once can start.
    for _ in 0..WebConfig::default().max_matches {
        let (status, t) = s.post("/api/tournaments", long.clone());
        assert_eq!(status, 201, "{t}");
        let id = t["id"].as_u64().unwrap();
        s.post(&format!("/api/tournaments/{id}/stop"), json!({}));
    }
}

#[test]
fn a_stopped_match_ends_its_players_searches_at_once() {
    use crate::protocol::test_players::{misbehaving_player, Misbehaviour};
    let s = server();
    // A search of this process, and a remote player that answers after an hour.
    let silent = misbehaving_player(Misbehaviour::Silent);
    let id = s.start_match(json!({
        "game": "connect4", "players": ["mcts", silent], "startclock": 1, "playclock": 3600,
    }));
    // The first move's search is under way: its line of effort has come after the first state
    // (a line during the preparation would come before it).
    let mut seen_state = false;
    let events = s.follow(id, |e| {
        seen_state |= e["type"] == "state";
        seen_state && e["type"] == "thinking"
    });
    assert_eq!(events.last().unwrap()["type"], "thinking", "{events:?}");
    let stopped = Instant::now();
    let (status, _) = s.post(&format!("/api/matches/{id}/stop"), json!({}));
    assert_eq!(status, 200);
    // Without the stop reaching the search and the wait for the remote reply, the match would
    // wait out its hour-long play clock: ten minutes is a failure.
    while !s
        .get(&format!("/api/matches/{id}"))
        .1
        .contains("\"done\":true")
    {
        assert!(
            stopped.elapsed() < Duration::from_secs(600),
            "the match still runs ten minutes after its stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let events = s.follow(id, |_| false);
    assert!(
        events.iter().any(|e| e["type"] == "aborted"),
        "{:?}",
        types(&events)
    );
}
