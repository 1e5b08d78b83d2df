//! Requests a page would never send: bodies that trickle in or break off, malformed or unknown
//! requests, and requests naming another site. Each is refused with a status and a reason.

use super::*;

#[test]
fn a_body_that_trickles_in_or_breaks_off_is_refused_with_its_reason() {
    let s = start(WebConfig {
        read_timeout: Duration::from_millis(500),
        abandon_after: Duration::from_secs(3600),
        ..WebConfig::default()
    });
    let exchange = |request: &str| s.exchange(request);
    let answer = exchange(
        "POST /api/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n\r\n{\"te",
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");
    // A body broken off by a malformed chunk is a bad request, not one too large.
    let answer = exchange(
        "POST /api/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\nzz\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("could not be read"), "{answer}");
    assert!(answer.contains("chunk"), "the cause is named: {answer}");
    assert_eq!(
        answer.matches("error reading a body").count(),
        1,
        "each cause once: {answer}"
    );
    // The server still answers others.
    let (status, _) = s.get("/api/games");
    assert_eq!(status, 200);
}

/// A request as a browser of another site would send it: its own `Host` (a name pointed at this
/// address, DNS rebinding), or its own `Origin` on a POST. Both are refused; the page's own
/// requests (the IP address, or `localhost`) are served.
#[test]
fn requests_naming_another_site_are_refused() {
    let s = server();
    let addr = s.base.trim_start_matches("http://").to_string();
    let send = |host: &str, origin: Option<&str>| {
        let body = r#"{"text":"(role r)","syntax":"kif"}"#;
        let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
        s.exchange(&format!(
            "POST /api/fmt HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    let status = |answer: &str| answer.split(' ').nth(1).unwrap_or("").to_string();
    let port = addr.rsplit_once(':').unwrap().1;
    for host in [addr.clone(), format!("localhost:{port}"), "[::1]".into()] {
        let answer = send(&host, Some(&format!("http://{host}")));
        assert_eq!(status(&answer), "200", "{host}: {answer}");
    }
    let rebound = send(&format!("attacker.example:{port}"), None);
    assert_eq!(status(&rebound), "421", "{rebound}");
    assert!(rebound.contains("--allow-host"), "{rebound}");
    let foreign = send(&addr, Some("http://attacker.example"));
    assert_eq!(status(&foreign), "403", "{foreign}");
}

#[test]
fn bad_requests_get_a_4xx_that_says_what_was_expected() {
    let s = start(WebConfig {
        max_body_bytes: 64 << 10,
        abandon_after: Duration::from_secs(3600),
        ..WebConfig::default()
    });
    let json_ = "application/json";
    let big = format!(
        "{{\"text\": \"{}\", \"syntax\": \"kif\"}}",
        "x".repeat(100 << 10)
    );
    let cases: Vec<(&str, &str, String, u16, &str)> = vec![
        (
            "/api/check",
            "text/plain",
            "(role x)".into(),
            415,
            "Content-Type",
        ),
        ("/api/check", json_, "{\"text\": ".into(), 400, "JSON"),
        (
            "/api/check",
            json_,
            "{\"txt\": \"(role x)\"}".into(),
            422,
            "text",
        ),
        (
            "/api/check",
            json_,
            json!({"text": "", "syntax": "lisp"}).to_string(),
            400,
            "kif",
        ),
        ("/api/check", json_, big, 413, ""),
        (
            "/api/convert",
            json_,
            json!({"text": "(role x)", "syntax": "kif"}).to_string(),
            400,
            "which syntax",
        ),
        (
            "/api/matches",
            json_,
            json!({"players": ["random"]}).to_string(),
            400,
            "give either",
        ),
        (
            "/api/matches",
            json_,
            json!({"game": "tictactoe", "players": ["random"]}).to_string(),
            400,
            "2 roles (x, o)",
        ),
        (
            "/api/matches",
            json_,
            json!({"game": "tictactoe", "players": ["random", "wizard"]}).to_string(),
            400,
            "wizard",
        ),
        (
            "/api/matches",
            json_,
            json!({"game": "tictactoe", "players": ["random", "random"], "playclock": 0})
                .to_string(),
            400,
            "play clock",
        ),
        (
            "/api/matches",
            json_,
            json!({"game": "roshambo", "players": ["alphabeta", "random"]}).to_string(),
            400,
            "left",
        ),
        (
            "/api/matches",
            json_,
            json!({"text": "(role x)", "syntax": "kif", "players": ["random"]}).to_string(),
            422,
            "error",
        ),
        (
            "/api/matches/999/move",
            json_,
            json!({"role": "x", "move": "mark(1,1)"}).to_string(),
            404,
            "999",
        ),
        ("/api/matches/999/stop", json_, "{}".into(), 404, "999"),
        (
            "/api/replay",
            json_,
            json!({"record": "{}"}).to_string(),
            400,
            "record",
        ),
        (
            "/api/replay",
            json_,
            json!({
                "record": {"matchId": "m", "startClock": 1, "playClock": 1, "states": [], "moves": vec![Vec::<String>::new(); 10_001]},
                "game": "tictactoe",
            })
            .to_string(),
            400,
            "10001 joint moves, more than the 10000",
        ),
        (
            "/api/tournaments",
            json_,
            json!({"game": "tictactoe", "players": ["random"]}).to_string(),
            400,
            "two to 16 players",
        ),
        ("/api/nothing", json_, "{}".into(), 404, "no such"),
        (
            "/api/matches/abc/stop",
            json_,
            "{}".into(),
            404,
            "numbered from 1",
        ),
        (
            "/api/matches/1/stop",
            "text/plain",
            "".into(),
            415,
            "Content-Type",
        ),
        // An address whose variable part is not text is a JSON error too.
        ("/api/matches/%FF/stop", json_, "{}".into(), 400, "address"),
        ("/api/tournaments/%FF/stop", json_, "{}".into(), 400, "UTF-8"),
    ];
    for (path, content_type, body, status, says) in cases {
        let (got, text) = s.send(path, content_type, body.clone());
        let shown: String = body.chars().take(80).collect();
        assert_eq!(got, status, "{path} {shown}: {text}");
        assert!(
            text.contains(says),
            "{path} {shown}: `{text}` lacks `{says}`"
        );
        if got != 413 {
            let error: Value = serde_json::from_str(&text).expect("errors are JSON");
            assert!(error["error"].is_string(), "{text}");
        }
    }
    // Rules with errors come back with their diagnostics, as the editor shows them.
    let (_, answer) = s.post(
        "/api/matches",
        json!({"text": "(role x)\n(init (p))", "syntax": "kif", "players": ["random"]}),
    );
    assert!(answer["diagnostics"][0]["line"].is_u64(), "{answer}");
    let (status, _) = s.get("/api/matches/999/events");
    assert_eq!(status, 404);
    let (status, text) = s.get("/api/check");
    assert_eq!(status, 405, "{text}");
    assert!(text.contains("POST"), "{text}");
    let (status, text) = s.get("/assets/nothing.js");
    assert_eq!(status, 404, "{text}");
    let (status, text) = s.get("/api/games/%FF");
    assert_eq!(status, 400, "{text}");
    let error: Value = serde_json::from_str(&text).expect("errors are JSON");
    assert!(
        error["error"].as_str().unwrap().contains("address"),
        "{text}"
    );
    let (status, page) = s.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("<script src=\"/assets/app.js\">"));
}
