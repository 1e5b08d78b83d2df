//! Runs the `ggp-run` binary as a user would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const TREE2: &str = "(a (b c:3 d:6 e:-2) (f g:6 h:4 i:10) (j k:1 l:5 m:8))\n";

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ggp-run starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin takes the script");
    child.wait_with_output().expect("ggp-run finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary file holding `text`, named after the test so parallel tests do not collide.
fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("ggp-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("temp file");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_whole_match_between_two_searchers() {
    let o = run(
        &[
            "connect4",
            "--player",
            "red=alphabeta",
            "--player",
            "black=jamboree",
            "--depth",
            "3",
        ],
        "",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("red plays drop("), "{out}");
    assert!(out.contains("black plays drop("), "{out}");
    assert!(out.contains("nodes/s"), "{out}");
    let goals = out.lines().last().unwrap_or_default();
    assert!(
        [
            "Goals: red=100 black=0",
            "Goals: red=0 black=100",
            "Goals: red=50 black=50"
        ]
        .contains(&goals),
        "{out}"
    );
}

#[test]
fn perfect_tictactoe_players_draw() {
    let o = run(
        &[
            "tictactoe",
            "--player",
            "alphabeta",
            "--depth",
            "9",
            "--quiet",
        ],
        "",
    );
    assert_eq!(stdout(&o).trim(), "Goals: x=50 o=50", "{}", stderr(&o));
}

#[test]
fn a_human_is_asked_again_and_eof_ends_the_match() {
    let o = run(
        &["nim", "--player", "maxie=human", "--player", "minnie=legal"],
        "5\n3\n",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("Legal moves for maxie: 1 2 3"), "{out}");
    assert!(out.contains("`5` is not a legal move for maxie"), "{out}");
    assert!(out.contains("maxie plays 3"), "{out}");
    assert!(out.contains("minnie plays 1"), "{out}");
    assert!(out.contains("Input ended"), "{out}");
    assert!(!out.contains("Goals:"), "{out}");
}

#[test]
fn search_reports_seed_3s_tree_2() {
    let path = temp_file("tree2.tree", TREE2);
    for (player, leaves) in [("alphabeta", 7), ("jamboree", 9), ("minimax", 9)] {
        let o = run(&["search", &path, "--player", player, "--depth", "2"], "");
        let out = stdout(&o);
        assert!(
            out.contains(&format!("Terminals visited: {leaves}\n")),
            "{player}: {out}"
        );
        assert!(out.contains("Overall choice: move 1[f]"), "{player}: {out}");
    }
    let o = run(
        &[
            "search",
            &path,
            "--player",
            "alphabeta",
            "--depth",
            "2",
            "--trace",
        ],
        "",
    );
    let out = stdout(&o);
    assert!(
        out.starts_with("Searching state (Maxie,a) with ab=(Pruned,Pruned)\n"),
        "{out}"
    );
    assert!(
        out.contains("Result of (Maxie,k) is ParentPrune\n"),
        "{out}"
    );
    assert!(
        out.contains("Therefore value of (Maxie,a) is Guess:4, and best move is 1."),
        "{out}"
    );
}

#[test]
fn perft_counts() {
    for (args, expected) in [
        (vec!["perft", "tictactoe", "9"], "255168"),
        (vec!["perft", "connect4", "4"], "2401"),
        (vec!["perft", "nim", "2", "--pile", "2"], "2"),
    ] {
        let o = run(&args, "");
        assert_eq!(stdout(&o).trim(), expected, "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn bench_prints_one_line() {
    let o = run(&["bench", "tictactoe", "--seconds", "0.2"], "");
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = out.trim();
    for key in ["playouts_per_sec=", "states_per_sec=", "avg_depth="] {
        assert!(line.contains(key), "{line}");
    }
    assert_eq!(line.lines().count(), 1);
}

/// Runs a command that must fail: non-zero exit, no panic, and a message containing `needle`.
fn check_error(args: &[&str], needle: &str) {
    let o = run(args, "");
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded: {}", stdout(&o));
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn errors_are_clear_and_do_not_panic() {
    let bad = temp_file("bad.tree", "(a (b c:3)\n  d:x)");
    let tree = temp_file("ok.tree", TREE2);
    check_error(&["chess"], "unknown game `chess`");
    check_error(&["nim", "--player", "wizard"], "unknown player `wizard`");
    check_error(&["nim", "--player", "queen=legal"], "unknown role `queen`");
    check_error(&["nim", "--rows", "3"], "--rows");
    check_error(&["nim", "--depth", "deep"], "invalid value 'deep'");
    check_error(
        &["connect4", "--rows", "9", "--cols", "9"],
        "(rows + 1) * cols <= 64",
    );
    check_error(&["tictactoe", "--size", "3", "--k", "5"], "k <= size");
    check_error(
        &["search", &bad],
        "line 2, column 5: expected an integer value for leaf `d`",
    );
    check_error(&["search", "/nonexistent/x.tree"], "x.tree");
    check_error(&["search", &tree, "--depth", "3"], "past a leaf");
    check_error(&["search", &tree, "--depth", "1"], "inner node `b`");
    check_error(&["search", &tree, "--player", "random"], "does not search");
    check_error(
        &["search", &tree, "--player", "jamboree", "--fraction", "2"],
        "--fraction",
    );
    check_error(&["games/tictactoe.gdl"], "rule files are not supported yet");
    check_error(&["bench", "nim", "--seconds", "0"], "--seconds");
    check_error(&[], "GAME");
}
