//! The GGP protocol end to end: `ggp-run serve` processes on loopback play full matches refereed by
//! `ggp-run match`; misbehaving players are substituted and recorded; a server survives hostile clients.
//!
//! Every server listens on 127.0.0.1 on a port picked at run time (`--port 0`, the address read from
//! its first line of output); every child process is killed when its guard drops; every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ggp::game::Game;
use ggp::load::{load, GameSource, LoadOptions, Loaded, Visitor};
use ggp::protocol::messages::compact_kif;
use ggp::protocol::record::{state_text, MatchRecord};
use ggp::syntax::ast::Syntax;

use crate::common;
use common::shared;

pub(crate) mod test_players;
use test_players::{hanging_up_player, misbehaving_player, Misbehaviour};

fn game_file(name: &str) -> PathBuf {
    shared().join("games/kif").join(name)
}

/// A `ggp-run serve` child, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(["serve", "--port", "0", "--host", "127.0.0.1"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("ggp-run serve starts");
    let url = common::listening_address(&mut child);
    Server { child, url }
}

/// Runs a child to completion within `limit`, killing it past that.
fn run_bounded(mut cmd: Command, limit: Duration) -> (bool, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ggp-run starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        status.is_some(),
        "ggp-run did not finish within {limit:?}\n{out}\n{err}"
    );
    (status.is_some_and(|s| s.success()), out, err)
}

fn tmp_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", std::process::id()))
}

/// Referees a match of a corpus game and returns its printed output and its record.
fn referee(
    game: &str,
    players: &[String],
    clocks: (&str, &str),
    extra: &[&str],
) -> (String, MatchRecord) {
    referee_file(
        &game_file(game),
        players,
        clocks,
        extra,
        Duration::from_secs(90),
    )
}

/// Referees a match of the rule file `game` within `limit` and returns its printed output and its
/// record.
fn referee_file(
    game: &Path,
    players: &[String],
    clocks: (&str, &str),
    extra: &[&str],
    limit: Duration,
) -> (String, MatchRecord) {
    static MATCHES: AtomicUsize = AtomicUsize::new(0);
    let n = MATCHES.fetch_add(1, Ordering::Relaxed);
    let out_file = tmp_file(&format!("match-{n}.json"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    cmd.arg("match")
        .arg(game)
        .args(["--startclock", clocks.0, "--playclock", clocks.1])
        .arg("--out")
        .arg(&out_file)
        .args(extra);
    for p in players {
        cmd.args(["--player", p]);
    }
    let (ok, out, err) = run_bounded(cmd, limit);
    assert!(ok, "ggp-run match failed\n{out}\n{err}");
    let json = std::fs::read_to_string(&out_file).expect("the record is written");
    let _ = std::fs::remove_file(&out_file);
    let record = MatchRecord::from_json(&json).expect("the record parses back");
    (out, record)
}

/// Replays a record on the game: every recorded move is legal, every recorded state is the one the
/// moves lead to, and the goal values are those of the final state.
struct Replay<'a>(&'a MatchRecord);

impl Visitor for Replay<'_> {
    type Output = ();

    fn visit<G: Game>(self, loaded: Loaded<G>) {
        let game = loaded.game.as_ref();
        let record = self.0;
        let mut state = game.initial_state();
        for (step, joint) in record.moves.iter().enumerate() {
            assert_eq!(
                record.states[step],
                state_text(&game.state_kif(&state)),
                "state {step}"
            );
            let moves: Vec<G::Move> = joint
                .iter()
                .enumerate()
                .map(|(role, text)| {
                    game.parse_move(&state, role, text)
                        .unwrap_or_else(|e| panic!("step {step}: {e}"))
                })
                .collect();
            state = game.next_state(&state, &moves);
        }
        assert_eq!(
            record.states.last(),
            Some(&state_text(&game.state_kif(&state)))
        );
        assert!(
            game.is_terminal(&state),
            "the match ends in a terminal state"
        );
        let goals: Vec<i32> = (0..game.info().num_roles())
            .map(|r| game.goal(&state, r))
            .collect();
        assert_eq!(record.goal_values, goals);
        assert!(record.is_completed);
    }
}

fn check_record(game: &str, record: &MatchRecord) {
    let text = std::fs::read_to_string(game_file(game)).unwrap();
    let source = GameSource::RuleText {
        text: compact_kif(&text).unwrap(),
        name: game.to_string(),
        syntax: Syntax::Kif,
    };
    let engine = load(&source, &LoadOptions::default()).unwrap();
    assert_eq!(record.errors.len(), record.moves.len());
    assert_eq!(record.states.len(), record.moves.len() + 1);
    engine.visit(Replay(record));
}

fn errors_of(record: &MatchRecord, role: usize) -> Vec<String> {
    record
        .errors
        .iter()
        .map(|e| e[role].split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn tic_tac_toe_between_two_servers() {
    let a = serve(&["--player", "mcts", "--margin", "0.2", "--name", "alice"]);
    let b = serve(&["--player", "random", "--name", "bob"]);
    let (out, record) = referee(
        "ticTacToe.kif",
        &[format!("xplayer={}", a.url), format!("oplayer={}", b.url)],
        ("10", "1"),
        &[],
    );
    check_record("ticTacToe.kif", &record);
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{out}"
    );
    assert_eq!(record.player_names_from_host, ["alice", "bob"]);
    assert!(out.contains("Goals: xplayer="), "{out}");
    assert!(out.contains("Step 1: xplayer plays"), "{out}");
    // The record loads back in `view`.
    let file = tmp_file("view.json");
    std::fs::write(&file, record.to_json()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    cmd.arg("view").arg(&file);
    let (ok, view, err) = run_bounded(cmd, Duration::from_secs(20));
    assert!(ok, "{err}");
    assert!(view.contains("Step 1: xplayer plays"), "{view}");
    assert!(view.contains("Goals: xplayer="), "{view}");
    // With the game, the states are replayed and drawn as boards.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    cmd.arg("view")
        .arg(&file)
        .arg("--game")
        .arg(game_file("ticTacToe.kif"));
    let (ok, boards, err) = run_bounded(cmd, Duration::from_secs(20));
    assert!(ok, "{err}");
    assert!(boards.contains("1 | "), "{boards}");
    assert!(boards.contains("Step 1: xplayer plays"), "{boards}");
    // A record of moves without their states shows the moves, and the boards with the game.
    let mut bare = record.clone();
    bare.states.clear();
    std::fs::write(&file, bare.to_json()).unwrap();
    for game in [None, Some(game_file("ticTacToe.kif"))] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
        cmd.arg("view").arg(&file);
        if let Some(game) = &game {
            cmd.arg("--game").arg(game);
        }
        let (ok, view, err) = run_bounded(cmd, Duration::from_secs(20));
        assert!(ok, "{err}");
        assert!(view.contains("Step 1: xplayer plays"), "{view}");
        assert_eq!(view.contains("1 | "), game.is_some(), "{view}");
        assert_eq!(view.contains("keeps no states"), game.is_none(), "{view}");
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn connect_four_between_two_servers() {
    // Half the clock is margin: a busy machine may delay an answer on its way by a few hundred
    // milliseconds, and the test is that the server aims inside its clock, not at the machine's speed.
    let a = serve(&["--player", "mcs", "--margin", "0.5"]);
    let b = serve(&["--player", "random"]);
    let (out, record) = referee(
        "connectFour.kif",
        &[format!("red={}", a.url), format!("black={}", b.url)],
        ("10", "1"),
        &[],
    );
    check_record("connectFour.kif", &record);
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{out}"
    );
    // The searching server answers within the play clock itself, not just within the grace second:
    // `Step N: red plays (drop 4) in 0.412s of 1.00s`.
    let times: Vec<f64> = out
        .lines()
        .filter(|l| l.contains(": red plays"))
        .filter_map(|l| l.split(" in ").nth(1)?.split('s').next()?.parse().ok())
        .collect();
    assert!(times.len() >= 4, "{out}");
    assert!(times.iter().all(|&t| t < 1.0), "{times:?}");
    assert!(
        times.iter().any(|&t| t > 0.1),
        "it used its clock: {times:?}"
    );
}

#[test]
fn a_simultaneous_game_between_a_server_and_a_local_player() {
    let a = serve(&["--player", "mcts", "--margin", "0.2"]);
    let b = serve(&["--player", "random"]);
    let (out, record) = referee(
        "roshambo2.kif",
        &[format!("white={}", a.url), format!("black={}", b.url)],
        ("10", "0.5"),
        &[],
    );
    check_record("roshambo2.kif", &record);
    assert!(
        record.errors.iter().flatten().all(String::is_empty),
        "{out}"
    );
    // Both roles move at every step.
    assert!(
        out.contains("Step 1: white plays") && out.contains("Step 1: black plays"),
        "{out}"
    );
    let (_, record) = referee(
        "gt_prisoner.kif",
        &[format!("white={}", a.url), "black=random".to_string()],
        ("10", "0.5"),
        &[],
    );
    check_record("gt_prisoner.kif", &record);
}

#[test]
fn two_matches_on_one_server_finish_independently() {
    let shared_server = serve(&["--player", "random", "--capacity", "2"]);
    // `id` searches to a horizon judged by playouts: the estimate a served rule game needs.
    let other = serve(&["--player", "id", "--margin", "0.2"]);
    let games = [
        ("ticTacToe.kif", "xplayer", "oplayer"),
        ("connectFour.kif", "red", "black"),
    ];
    let records: Vec<(String, MatchRecord)> = std::thread::scope(|s| {
        let handles: Vec<_> = games
            .iter()
            .enumerate()
            .map(|(i, (game, first, second))| {
                let players = [
                    format!("{first}={}", shared_server.url),
                    format!("{second}={}", other.url),
                ];
                let id = format!("both-{i}");
                s.spawn(move || {
                    let (_, r) = referee(game, &players, ("10", "0.5"), &["--match-id", &id]);
                    (game.to_string(), r)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (game, record) in &records {
        check_record(game, record);
        assert!(
            record.errors.iter().flatten().all(String::is_empty),
            "{game}: {:?}",
            record.errors
        );
    }
    assert_ne!(records[0].1.match_id, records[1].1.match_id);
}

#[test]
fn misbehaving_players_are_substituted_and_recorded() {
    let cases = [
        (Misbehaviour::Sleeps, "TO"),
        (Misbehaviour::Illegal, "IL"),
        (Misbehaviour::Garbage, "IL"),
        (Misbehaviour::MissesStart, "TO"),
        (Misbehaviour::Escapes, "IL"),
    ];
    let players: Vec<_> = cases
        .iter()
        .map(|(how, _)| misbehaving_player(*how))
        .collect();
    let mut urls: Vec<(String, &str, String)> = cases
        .iter()
        .zip(players)
        .map(|((how, code), url)| (url, *code, format!("{how:?}")))
        .collect();
    urls.push((hanging_up_player(), "CE", "HangsUp".to_string()));
    let results: Vec<(String, &str, String, MatchRecord)> = std::thread::scope(|s| {
        let handles: Vec<_> = urls
            .iter()
            .map(|(url, code, name)| {
                s.spawn(move || {
                    // A player that misses the start stops a match unless told to play on.
                    let (out, record) = referee(
                        "ticTacToe.kif",
                        &["xplayer=random".to_string(), format!("oplayer={url}")],
                        ("2", "0.5"),
                        &["--match-id", name, "--play-on"],
                    );
                    (name.clone(), *code, out, record)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (name, code, out, record) in &results {
        check_record("ticTacToe.kif", record);
        assert!(
            !out.contains('\u{1b}'),
            "{name}: an escape reached the terminal:\n{out}"
        );
        let errors = errors_of(record, 1);
        assert!(
            errors.iter().all(|e| e == code),
            "{name}: {errors:?}\n{out}"
        );
        assert!(errors_of(record, 0).iter().all(String::is_empty), "{name}");
        assert!(
            out.contains(&format!("[{code}, substituted")),
            "{name}: {out}"
        );
        assert!(
            out.contains(&format!(
                "Errors: xplayer none; oplayer {} {code}",
                errors.len()
            )),
            "{name}: {out}"
        );
    }
    let illegal = &results[1].3;
    assert_eq!(illegal.errors[0][1], "IL (mark 9 9)");
}

/// Sends raw bytes and returns what comes back within `limit` (an empty string for a closed
/// connection).
fn raw_exchange(addr: SocketAddr, request: &[u8], limit: Duration) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    stream.set_write_timeout(Some(limit)).unwrap();
    // A server that refuses a huge body may close while it is still being sent.
    let _ = stream.write_all(request);
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

fn post(body: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/acl\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn status_and_body(reply: &str) -> (u16, String) {
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

#[test]
fn a_server_survives_hostile_clients_and_still_plays() {
    let server = serve(&[
        "--player",
        "random",
        "--read-timeout",
        "2",
        "--capacity",
        "2",
    ]);
    let addr: SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();
    // Long enough that a server without its 2 s read timeout would keep the two stalled requests
    // below past the 25 s bound, with room for a busy machine either way.
    let limit = Duration::from_secs(30);

    // Malformed and unknown messages get an error reply; a wrong match id gets `busy`.
    for bad in [
        "(((",
        "",
        "hello world",
        "(start)",
        "(frobnicate 1 2)",
        "(play m nil) (extra)",
        "\u{1F600}",
    ] {
        let (status, body) = status_and_body(&raw_exchange(addr, &post(bad), limit));
        assert_eq!(status, 400, "{bad:?} -> {body}");
        assert!(body.starts_with("error: "), "{bad:?} -> {body}");
    }
    // Without a Content-Length (or chunks) a request has no body for HTTP: the message is lost,
    // and the reply says how to send one.
    let no_length = b"POST / HTTP/1.0\r\nHost: x\r\nContent-Type: text/acl\r\n\r\n(info)";
    let (status, body) = status_and_body(&raw_exchange(addr, no_length, limit));
    assert_eq!(status, 411, "{body}");
    assert!(body.contains("Content-Length"), "{body}");
    let bad_rules = "(start m1 xplayer ((role xplayer) (<= (legal xplayer ?x) (true (p)))) 10 1)";
    let (status, body) = status_and_body(&raw_exchange(addr, &post(bad_rules), limit));
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("rules:"),
        "the checker's located error: {body}"
    );
    for wrong_id in ["(play nosuch nil)", "(STOP nosuch nil)", "(abort nosuch)"] {
        let (status, body) = status_and_body(&raw_exchange(addr, &post(wrong_id), limit));
        assert_eq!((status, body.as_str()), (200, "busy"), "{wrong_id}");
    }

    // Leniency: GET with the message in the query, OPTIONS, keywords in any case, CORS headers.
    let reply = raw_exchange(
        addr,
        b"GET /?%28INFO%29 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        limit,
    );
    assert!(
        reply
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: *"),
        "{reply}"
    );
    assert!(
        status_and_body(&reply).1.contains("(status available)"),
        "{reply}"
    );
    let reply = raw_exchange(
        addr,
        b"OPTIONS / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        limit,
    );
    assert_eq!(status_and_body(&reply).0, 200, "{reply}");
    // HTTP/1.0 with bare LF line ends, from a client that shuts its side once the message is sent.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    stream
        .write_all(b"POST / HTTP/1.0\nContent-Type: text/acl\nContent-Length: 6\n\n(info)")
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    assert!(
        status_and_body(&reply).1.contains("(status available)"),
        "{reply}"
    );

    // A 5 MB body is refused (413) or the connection closed, and the server stays up.
    let huge = post(&format!("(info {})", "x".repeat(5 << 20)));
    let (status, _) = status_and_body(&raw_exchange(addr, &huge, limit));
    assert!(status == 413 || status == 0, "{status}");
    // A body broken off by a malformed chunk is a bad request, not one too large.
    let broken =
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
                   6\r\n(info)\r\nzz\r\n";
    let (status, body) = status_and_body(&raw_exchange(addr, broken, limit));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("could not be read"), "{body}");

    // A body that arrives a byte at a time is read; a body or headers that stall are cut off after the
    // read timeout.
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    stream
        .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\n")
        .unwrap();
    for b in b"(info)" {
        std::thread::sleep(Duration::from_millis(100));
        stream.write_all(&[*b]).unwrap();
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    assert_eq!(status_and_body(&reply).0, 200, "{reply}");
    let stalled =
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n(in";
    let (status, _) = status_and_body(&raw_exchange(addr, stalled, limit));
    assert!(status == 408 || status == 0, "{status}");
    let (status, _) = status_and_body(&raw_exchange(addr, b"POST / HTTP/1.1\r\nHo", limit));
    assert!(status == 408 || status == 0, "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );

    // Fifty connections at once all get an answer.
    let answered: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..50)
            .map(|_| {
                s.spawn(move || {
                    status_and_body(&raw_exchange(addr, &post("(info)"), limit)).0 == 200
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum()
    });
    assert_eq!(answered, 50);

    // A start with an illegal move afterwards: the error is a reply, the match goes on.
    let rules = compact_kif(&std::fs::read_to_string(game_file("ticTacToe.kif")).unwrap()).unwrap();
    let start = format!("(START m9 OPLAYER ({rules}) 10 1)");
    assert_eq!(
        status_and_body(&raw_exchange(addr, &post(&start), limit)),
        (200, "ready".into())
    );
    let (status, body) = status_and_body(&raw_exchange(addr, &post("(play m9 nil)"), limit));
    assert_eq!((status, body.as_str()), (200, "noop"));
    let (status, body) = status_and_body(&raw_exchange(
        addr,
        &post("(play m9 ((mark 7 7) noop))"),
        limit,
    ));
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("(mark 7 7)") || body.contains("mark 7 7"),
        "{body}"
    );
    let (status, body) = status_and_body(&raw_exchange(
        addr,
        &post("(play m9 ((MARK 1 1) NOOP))"),
        limit,
    ));
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("(mark"), "{body}");
    // Capacity 2: a second match fills the server, a third is refused, `info` says busy.
    let start = format!("(start m10 xplayer ({rules}) 10 1)");
    assert_eq!(
        status_and_body(&raw_exchange(addr, &post(&start), limit)),
        (200, "ready".into())
    );
    let start = format!("(start m11 xplayer ({rules}) 10 1)");
    assert_eq!(
        status_and_body(&raw_exchange(addr, &post(&start), limit)),
        (200, "busy".into())
    );
    let (_, info) = status_and_body(&raw_exchange(addr, &post("(info)"), limit));
    assert!(info.contains("(status busy)"), "{info}");
    assert_eq!(
        status_and_body(&raw_exchange(addr, &post("(abort m9)"), limit)),
        (200, "aborted".into())
    );
    assert_eq!(
        status_and_body(&raw_exchange(addr, &post("(abort m10)"), limit)),
        (200, "aborted".into())
    );

    // After all that, a whole match still works.
    let (_, record) = referee(
        "ticTacToe.kif",
        &[
            format!("xplayer={}", server.url),
            "oplayer=random".to_string(),
        ],
        ("10", "0.5"),
        &[],
    );
    check_record("ticTacToe.kif", &record);
    assert!(record.errors.iter().flatten().all(String::is_empty));
}

#[test]
fn the_referee_and_the_viewer_refuse_bad_input_clearly() {
    let run = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
        cmd.args(args);
        run_bounded(cmd, Duration::from_secs(20))
    };
    let game = game_file("ticTacToe.kif");
    let game = game.to_str().unwrap();
    let (ok, _, err) = run(&["match", game, "--player", "xplayer=random"]);
    assert!(!ok && err.contains("nobody plays oplayer"), "{err}");
    let (ok, _, err) = run(&["match", game, "--player", "zplayer=random"]);
    assert!(!ok && err.contains("unknown role `zplayer`"), "{err}");
    let (ok, _, err) = run(&["match", game, "--player", "wizard"]);
    assert!(!ok && err.contains("unknown player"), "{err}");
    let (ok, _, err) = run(&[
        "match",
        game,
        "--player",
        "random",
        "--match-id",
        "my match",
    ]);
    assert!(
        !ok && err.contains("--match-id `my match`: a match id is sent"),
        "{err}"
    );
    // One server cannot tell which of two roles a play asks for.
    let (ok, _, err) = run(&["match", game, "--player", "localhost:9"]);
    assert!(
        !ok && err.contains("http://localhost:9 is given for xplayer and oplayer"),
        "{err}"
    );
    let bad = tmp_file("not-a-record.json");
    std::fs::write(&bad, "{\"matchId\": []}").unwrap();
    let (ok, _, err) = run(&["view", bad.to_str().unwrap()]);
    let _ = std::fs::remove_file(&bad);
    assert!(!ok && err.contains("not a match record"), "{err}");
    // A player that is not there at all stops the match before it begins, naming the address and
    // why; with --play-on it is substituted throughout, and the match still ends.
    let unused = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = unused.local_addr().unwrap();
    let dead = format!("oplayer={address}");
    drop(unused);
    let against = |oplayer: &str| {
        run(&[
            "match",
            game,
            "--player",
            "xplayer=random",
            "--player",
            oplayer,
        ])
    };
    let (ok, out, err) = against(&dead);
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!(
            "oplayer: http://{address} could not start the match"
        )) && err.contains("refused")
            && err.contains("--play-on"),
        "{err}"
    );
    assert!(!out.contains("Step 1"), "no move was played: {out}");
    let (_, record) = referee(
        "ticTacToe.kif",
        &["xplayer=random".to_string(), dead],
        ("2", "0.5"),
        &["--play-on"],
    );
    check_record("ticTacToe.kif", &record);
    assert!(errors_of(&record, 1).iter().all(|e| e == "CE"));
    // A player that answers the start with anything but `ready` has not said it will play.
    let garbled = format!("oplayer={}", misbehaving_player(Misbehaviour::GarbageStart));
    let (ok, out, err) = against(&garbled);
    assert!(!ok, "{out}");
    assert!(
        err.contains("could not start the match")
            && err.contains("replied `(((garbage` to start, not `ready`"),
        "{err}"
    );
}

/// A tournament with a remote entrant is played from the game the command line loads, as a local one:
/// the engine, the playouts behind each judgement, the grounding time and the depth all apply.
#[test]
fn a_remote_tournament_honours_the_engine_and_search_flags() {
    let server = serve(&["--player", "random"]);
    let play = |extra: &[&str]| {
        let csv = tmp_file(&format!("flags-{}.csv", extra.join("-")));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
        cmd.arg("tournament")
            .arg(game_file("ticTacToe.kif"))
            .args(["--players", &format!("alphabeta,{}", server.url)])
            .args([
                "--games",
                "2",
                "--startclock",
                "2",
                "--playclock",
                "1",
                "--depth",
                "2",
            ])
            .args(extra)
            .arg("--csv")
            .arg(&csv);
        let (ok, out, err) = run_bounded(cmd, Duration::from_secs(120));
        assert!(ok, "{extra:?}: the tournament failed\n{out}\n{err}");
        let text = std::fs::read_to_string(&csv).expect("the CSV is written");
        let _ = std::fs::remove_file(&csv);
        let depth = text
            .lines()
            .find(|l| l.starts_with("\"alphabeta\""))
            .and_then(|l| l.rsplit(',').next())
            .map(str::to_string)
            .unwrap_or_default();
        (out, err, depth)
    };
    let (out, _, depth) = play(&["--engine", "datalog", "--playouts", "0"]);
    assert!(
        out.contains("(datalog, positions judged by goals and mobility)"),
        "{out}"
    );
    assert_eq!(
        depth, "2.00",
        "alpha-beta searched to --depth 2 every move: {out}"
    );
    let (out, err, _) = play(&["--grounding-seconds", "0", "--playouts", "3"]);
    assert!(
        out.contains("(datalog, positions judged by playouts(3))"),
        "{out}"
    );
    assert!(
        err.contains("the Datalog evaluator plays this game"),
        "{err}"
    );
    let (out, _, depth) = play(&["--engine", "network"]);
    assert!(
        out.contains("(network, positions judged by playouts(8))"),
        "{out}"
    );
    assert_eq!(depth, "2.00", "{out}");
}

/// Reads a tournament's CSV table into (name, games, wins, draws, losses, substituted moves).
fn tournament_rows(csv: &str) -> Vec<(String, u32, u32, u32, u32, u32)> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "player,games,wins,draws,losses,average_goal,score,score_low95,score_high95,\
             substituted_moves,mean_depth"
        )
    );
    lines
        .map(|line| {
            let (name, rest) = line[1..].split_once("\",").expect("a quoted name");
            let f: Vec<&str> = rest.split(',').collect();
            let n = |i: usize| f[i].parse::<u32>().unwrap_or_else(|_| panic!("{line}"));
            (name.to_string(), n(0), n(1), n(2), n(3), n(8))
        })
        .collect()
}

#[test]
fn a_tournament_seats_remote_players_beside_local_ones() {
    let mcts = serve(&["--player", "mcts"]);
    let cheat = misbehaving_player(Misbehaviour::Illegal);
    let csv = tmp_file("remote-tournament.csv");
    let players = format!("{},{},random", mcts.url, cheat);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    cmd.arg("tournament")
        .arg(game_file("ticTacToe.kif"))
        .args(["--players", &players, "--games", "2"])
        .args(["--startclock", "2", "--playclock", "0.3", "--csv"])
        .arg(&csv);
    let (ok, out, err) = run_bounded(cmd, Duration::from_secs(120));
    assert!(ok, "the tournament failed\n{out}\n{err}");
    assert!(out.contains("substituted moves"), "{out}");
    let rows = tournament_rows(&std::fs::read_to_string(&csv).expect("the CSV is written"));
    let _ = std::fs::remove_file(&csv);
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, [mcts.url.as_str(), cheat.as_str(), "random"]);
    for (name, games, wins, draws, losses, _) in &rows {
        // Three entrants, two games a pair: every entrant plays four.
        assert_eq!(*games, 4, "{name}");
        assert_eq!(wins + draws + losses, *games, "{name}");
    }
    let total_wins: u32 = rows.iter().map(|r| r.2).sum();
    let total_losses: u32 = rows.iter().map(|r| r.4).sum();
    assert_eq!(
        total_wins, total_losses,
        "a two-player game has a loser per winner"
    );
    // The server plays every move itself; each move the cheat sends is illegal and substituted.
    assert_eq!(rows[0].5, 0, "{out}");
    assert!(rows[1].5 >= 4, "{out}");
    assert_eq!(rows[2].5, 0);
    assert!(
        rows[0].2 >= 2,
        "mcts beats random and a random-moving cheat\n{out}"
    );

    // Remote players need the rules to send: a native game or a pair holding three seats is refused.
    let run = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
        cmd.args(args);
        run_bounded(cmd, Duration::from_secs(20))
    };
    let remote = format!("random,{}", mcts.url);
    let (ok, _, err) = run(&["tournament", "tictactoe", "--players", &remote]);
    assert!(!ok && err.contains("must be a rule file"), "{err}");
    let three = game_file("3pConnectFour.kif");
    let (ok, _, err) = run(&["tournament", three.to_str().unwrap(), "--players", &remote]);
    assert!(!ok && err.contains("one- and two-role games"), "{err}");
}

/// A served `learned:FILE` player plays the game it was trained on, though the referee sends it under
/// the match's name and in KIF where it was trained on the infix file; sent another game, it refuses at
/// `start`, and the referee stops the match there, saying why.
#[test]
fn a_served_learned_player_plays_its_game_and_refuses_another_at_start() {
    let tictactoe = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.gdl");
    let scores = tmp_file("tictactoe.scores");
    let mut train = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    train
        .arg("train")
        .arg(&tictactoe)
        .args(["--turns", "20000", "--out"])
        .arg(&scores);
    let (ok, out, err) = run_bounded(train, Duration::from_secs(120));
    assert!(ok, "train failed\n{out}\n{err}");
    let server = serve(&["--player", &format!("learned:{}", scores.display())]);

    let (_, record) = referee_file(
        &tictactoe,
        &[format!("x={}", server.url), "o=random".into()],
        ("10", "5"),
        &[],
        Duration::from_secs(120),
    );
    assert!(record.is_completed);
    assert!(
        errors_of(&record, 0).iter().all(String::is_empty),
        "the learned player's moves were all its own: {:?}",
        record.errors
    );

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-run"));
    cmd.arg("match")
        .arg(game_file("connectFour.kif"))
        .args(["--startclock", "10", "--playclock", "5"])
        .args([
            "--player",
            &format!("red={}", server.url),
            "--player",
            "black=random",
        ]);
    let (ok, out, err) = run_bounded(cmd, Duration::from_secs(120));
    assert!(
        !ok,
        "a match the served player cannot play is stopped\n{out}"
    );
    assert!(
        err.contains("cannot play this game") && err.contains("trained on"),
        "the referee says why:\n{err}"
    );
}

/// The bundled infix breakthrough, whose rules read `legal` in a body, goes to a remote player as KIF
/// that it loads and plays to the end.
#[test]
fn a_remote_match_of_the_bundled_infix_breakthrough_completes() {
    let breakthrough = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/breakthrough.gdl");
    let server = serve(&["--player", "random"]);
    let (_, record) = referee_file(
        &breakthrough,
        &[format!("white={}", server.url), "black=random".into()],
        ("20", "5"),
        &[],
        Duration::from_secs(300),
    );
    assert!(record.is_completed);
    assert!(
        errors_of(&record, 0).iter().all(String::is_empty),
        "every remote move was legal and on time: {:?}",
        record.errors
    );
}

/// A match started anywhere sends the started rules: a served player given the position where x
/// completes the top row in one move (`--moves`) finds that move, and the record begins there.
#[test]
fn a_served_player_plays_a_match_started_anywhere() {
    let tictactoe = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.gdl");
    let server = serve(&["--player", "alphabeta"]);
    let (_, record) = referee_file(
        &tictactoe,
        &[format!("x={}", server.url), "o=random".into()],
        ("10", "5"),
        &["--moves", "mark(1,1); mark(2,1); mark(1,2); mark(2,2)"],
        Duration::from_secs(120),
    );
    assert!(record.is_completed);
    assert!(
        record.states[0].contains("( cell 2 2 o )") && record.states[0].contains("( control x )"),
        "{}",
        record.states[0]
    );
    assert_eq!(
        record.moves,
        vec![vec!["( mark 1 3 )".to_string(), "noop".to_string()]]
    );
    assert_eq!(record.goal_values, vec![100, 0]);
}
