//! Runs the `ggp-run` binary as a user would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common;

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

/// A temporary file holding `text`, named after the test so parallel tests do not collide, removed
/// when the value is dropped.
fn temp_file(name: &str, text: &str) -> common::TempPath {
    let path = common::TempPath::new(&format!("cli-{name}"));
    std::fs::write(&path, text).expect("temp file");
    path
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
    assert!(out.contains(" nodes ("), "the effort of each move: {out}");
    let goals = out.lines().last().unwrap_or_default();
    assert!(
        [
            "Goals: red=100 black=0 (red wins)",
            "Goals: red=0 black=100 (black wins)",
            "Goals: red=50 black=50 (a draw)"
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
    assert_eq!(
        stdout(&o).trim(),
        "Goals: x=50 o=50 (a draw)",
        "{}",
        stderr(&o)
    );
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
    check_error(&["perft", "nim", "200000"], "depth must be at most 64");
    // A device that never ends is refused after the bytes a rule file may hold.
    check_error(
        &["check", "/dev/zero"],
        "longer than the 64 MB a rule file may hold",
    );
    check_error(
        &[
            "tournament",
            "nim",
            "--players",
            "random,legal",
            "--games",
            "4000000000",
        ],
        "--games must be between 1 and 100000",
    );
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
    check_error(&["search", &tree, "--player", "random"], "does not search");
    check_error(
        &["search", &tree, "--player", "jamboree", "--fraction", "2"],
        "--fraction",
    );
    // A negative number is a value out of range, not an unknown argument.
    check_error(
        &["tictactoe", "--player", "random", "--playclock", "-1"],
        "--playclock must be a number of seconds above 0 and at most 86400, not -1",
    );
    check_error(
        &[
            "train",
            "tictactoe",
            "--turns",
            "10",
            "--out",
            "x",
            "--rate",
            "-1",
        ],
        "the learning rate must be above 0 and at most 1, not -1",
    );
    // Self-play that never reaches a game's end learns nothing, and says so instead of writing 0s.
    let scores = common::TempPath::new("cli-never-ends.scores");
    let out = scores.as_str();
    check_error(
        &[
            "train", "nim", "--pile", "1000000", "--turns", "300000", "--out", out,
        ],
        "no self-play game of `nim` ended within 100,000 turns (3 cut off there",
    );
    assert!(!std::path::Path::new(out).exists(), "nothing is written");
    check_error(&["games/nosuch.gdl"], "cannot read games/nosuch.gdl");
    check_error(
        &["games/tictactoe.gdl", "--engine", "native"],
        "--engine native",
    );
    check_error(&["connect4", "--engine", "network"], "--engine network");
    check_error(
        &["connect4", "--grounding-seconds", "5"],
        "--grounding-seconds does not apply to connect4",
    );
    check_error(
        &[
            "bench",
            "games/tictactoe.gdl",
            "--grounding-seconds",
            "soon",
        ],
        "invalid value 'soon'",
    );
    check_error(&["bench", "nim", "--threads", "0"], "--threads");
    let bad_rule = temp_file("arity.kif", "(role a)\n(<= (legal a x) (role a b))\n");
    let o = run(&["check", &bad_rule], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("arity.kif:2:"), "{}", stdout(&o));
    check_error(&[&bad_rule, "--player", "random"], "arity.kif:2:");
    check_error(
        &["replay", "games/tictactoe.gdl", &tree],
        "no playouts in the trace",
    );
    check_error(&["bench", "nim", "--seconds", "0"], "--seconds");
    check_error(&[], "GAME");
}

/// A path under the shared material, as a command-line argument.
fn shared(rel: &str) -> String {
    common::shared().join(rel).to_string_lossy().into_owned()
}

#[test]
fn rule_files_play_on_either_engine() {
    for engine in ["auto", "network", "datalog"] {
        let o = run(
            &[
                "games/connect4.gdl",
                "--player",
                "random",
                "--engine",
                engine,
                "--seed",
                "3",
            ],
            "",
        );
        let out = stdout(&o);
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        assert!(out.contains("red plays drop("), "{engine}: {out}");
        // The board is drawn as a grid with the column numbers underneath.
        assert!(out.contains("    1 "), "{engine}: {out}");
        assert!(
            out.lines().last().unwrap().starts_with("Goals: red="),
            "{out}"
        );
    }
    let o = run(&["games/connect4.gdl", "--quiet", "--player", "random"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("Goals: "), "{}", stdout(&o));
}

#[test]
fn a_person_types_moves_in_the_files_syntax() {
    // Infix and KIF spellings of the same move, a wrong one first: asked again, then the match goes on.
    let o = run(
        &[
            "games/tictactoe.gdl",
            "--player",
            "x=human",
            "--player",
            "o=legal",
        ],
        "mark(9,9)\nmark(1,1)\n(mark 2 2)\n",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("x plays mark(1,1)"), "{out}");
    assert!(out.contains("x plays mark(2,2)"), "{out}");
    assert!(out.contains("Input ended"), "{out}");
}

#[test]
fn rule_files_count_search_and_bench() {
    let o = run(&["perft", "games/tictactoe.gdl", "9"], "");
    assert_eq!(stdout(&o).trim(), "255168", "{}", stderr(&o));
    let o = run(
        &["perft", "games/connect4.gdl", "4", "--engine", "datalog"],
        "",
    );
    assert_eq!(stdout(&o).trim(), "2401", "{}", stderr(&o));
    let o = run(&["search", "games/tictactoe.gdl", "--depth", "9"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Value: a draw with best play"),
        "{}",
        stdout(&o)
    );
    for engine in ["network", "datalog"] {
        let o = run(
            &[
                "bench",
                "games/connect4.gdl",
                "--seconds",
                "0.2",
                "--engine",
                engine,
            ],
            "",
        );
        let line = stdout(&o);
        assert!(o.status.success(), "{}", stderr(&o));
        for key in ["playouts_per_sec=", "load_ms=", &format!("engine={engine}")] {
            assert!(line.contains(key), "{line}");
        }
        assert_eq!(line.contains("gates="), engine == "network", "{line}");
        // bench waits for the network's compiled passes before it measures.
        assert_eq!(
            line.contains("passes=compiled"),
            engine == "network",
            "{line}"
        );
        // And it says how the playouts run, as the compiling thread chose.
        assert_eq!(
            line.contains(" playouts=propagate") || line.contains(" playouts=passes"),
            engine == "network",
            "{line}"
        );
        // The compiling thread also timed 64 playouts at once against one at a time.
        assert_eq!(
            line.contains("batch_speedup="),
            engine == "network",
            "{line}"
        );
    }
    let o = run(
        &["bench", "tictactoe", "--seconds", "0.2", "--threads", "2"],
        "",
    );
    assert!(stdout(&o).contains("threads=2"), "{}", stdout(&o));
}

#[test]
fn check_summarises_a_valid_game() {
    let o = run(&["check", "games/connect4.gdl"], "");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("valid game (operation rules)"), "{out}");
    assert!(out.contains("roles: red, black"), "{out}");
    assert!(out.contains("network: "), "{out}");
    // Where the load time went, stage by stage.
    assert!(out.contains("(rules as written: analysis "), "{out}");
    assert!(out.contains(" instances), compiling "), "{out}");
    // With what the budget limits: the analysis's facts and the rule instances, neither zero.
    let counted = |unit: &str| {
        out.split(&format!(" {unit})"))
            .next()
            .and_then(|before| before.rsplit('(').next())
            .and_then(|n| n.parse::<usize>().ok())
    };
    assert!(counted("facts").is_some_and(|n| n > 0), "{out}");
    assert!(counted("instances").is_some_and(|n| n > 0), "{out}");
    // The play-test's line: random matches played on the loaded game.
    assert!(
        out.contains("\n  play-test: 20 random matches, all ended after "),
        "{out}"
    );
    let o = run(&["check", &shared("games/kif/ticTacToe.kif")], "");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("valid game (classic GDL)"), "{out}");
    assert!(out.contains("legal/2"), "{out}");
    // A network with no time at all is not built, and the summary says which flag gives it more.
    let o = run(
        &[
            "check",
            &shared("games/kif/ticTacToe.kif"),
            "--grounding-seconds",
            "0",
        ],
        "",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("network: not built"), "{out}");
    assert!(out.contains("`--grounding-seconds S`"), "{out}");
    // The play-test runs on the Datalog evaluator too (tic-tac-toe's random matches last 5 to 9 moves).
    assert!(
        out.contains("play-test: 20 random matches, all ended after 5 to 9 moves"),
        "{out}"
    );
}

/// Runs `ggp-run args` under a pseudo-terminal (util-linux's `script`, in Debian's essential
/// packages), as a person at a terminal does: what it drew there, standard output and error mixed.
fn at_a_terminal(args: &[&str]) -> Output {
    let quote = |a: &str| format!("'{}'", a.replace('\'', r"'\''"));
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_ggp-run"))
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    Command::new("script")
        .args(["-q", "-e", "-c", &command.join(" "), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux's `script` runs (Debian package bsdutils): the terminal of this test")
}

#[test]
fn a_rule_files_load_shows_what_it_does_at_a_terminal_and_nothing_when_piped() {
    // The start of the line: a narrow terminal cuts its end.
    let says = "tictactoe.gdl: building its network (up to 10 s;";
    let o = at_a_terminal(&["check", "games/tictactoe.gdl"]);
    let drawn = stdout(&o);
    assert!(o.status.success(), "{drawn}");
    assert!(drawn.contains(says), "{drawn}");
    // The spinner's line is erased once the game is loaded (`ESC [2K` after its last drawing), and
    // the summary follows.
    let last = drawn.rfind(says).expect("drawn");
    assert!(drawn[last..].contains("\u{1b}[2K"), "{drawn}");
    assert!(drawn[last..].contains("network: "), "{drawn}");
    // Then the play-test's, erased too.
    let testing = "tictactoe.gdl: play-testing (20 random matches";
    let last = drawn.rfind(testing).expect("drawn");
    assert!(drawn[last..].contains("\u{1b}[2K"), "{drawn}");
    assert!(drawn[last..].contains("play-test: "), "{drawn}");
    let o = run(&["check", "games/tictactoe.gdl"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    for piped in [stderr(&o), stdout(&o)] {
        assert!(!piped.contains("building its network"), "{piped}");
        assert!(!piped.contains("play-testing"), "{piped}");
    }
    // A native game loads at once: nothing to say.
    let o = at_a_terminal(&["perft", "tictactoe", "1"]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(!stdout(&o).contains("building"), "{}", stdout(&o));
}

#[test]
fn stage_prints_what_each_compilation_stage_makes() {
    let cases = [
        ("program", "legal(mark(M, N)) :- cell(M, N, b)"),
        ("classic", "legal(?R, ?A) :- legal(?A), true(control(?R))."),
        ("lowered", "legal(?R, ?A) :- legal(?A), true(control(?R))."),
        ("prepared", "legal(?R, ?A) :- legal(?A), true(control(?R))."),
        ("analysed", "propositions (29):\n  cell(1,1,b)\n"),
        ("plan", "stratum 0 Static: role"),
        ("decomposed", "demand#"),
        ("network", "legal(x, mark(1,1)) = n"),
    ];
    for (stage, needle) in cases {
        let o = run(&["stage", "games/tictactoe.gdl", "--stage", stage], "");
        let out = stdout(&o);
        assert!(o.status.success(), "{stage}: {}", stderr(&o));
        assert!(out.contains(needle), "{stage} lacks {needle:?}:\n{out}");
    }
    check_error(
        &["stage", "games/tictactoe.gdl", "--stage", "bytecode"],
        "possible values: program, classic, prepared, analysed, plan, decomposed, network",
    );
}

#[test]
fn check_reports_every_problem_with_its_place() {
    let bad = shared("games/kif/ggpbase_test_invalid_sentence_arities_differ.kif");
    let o = run(&["check", &bad], "");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("ggpbase_test_invalid_sentence_arities_differ.kif:"),
        "{out}"
    );
    assert!(out.contains("error"), "{out}");
}

#[test]
fn fmt_and_convert_keep_the_meaning() {
    // Classic KIF to infix and back, and an operation game to classic KIF: every result is a valid game
    // with the same perft counts as the original.
    let kif = shared("games/kif/ticTacToe.kif");
    let to_gdl = temp_file("ttt.gdl", "");
    let o = run(&["convert", &kif, "--to", "gdl", "-o", &to_gdl], "");
    assert!(o.status.success(), "{}", stderr(&o));
    let op_kif = temp_file("c4.kif", "");
    let o = run(
        &[
            "convert",
            "games/connect4.gdl",
            "--to",
            "kif",
            "-o",
            &op_kif,
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (file, depth, expected) in [
        (kif.as_str(), "4", "3024"),
        (to_gdl.as_str(), "4", "3024"),
        (op_kif.as_str(), "4", "2401"),
    ] {
        let o = run(&["perft", file, depth], "");
        assert_eq!(stdout(&o).trim(), expected, "{file}: {}", stderr(&o));
    }
    // A rule KIF lets pass unsafe because the game never reads it becomes a comment, with a note.
    let unread = temp_file("unread.gdl", "");
    let o = run(
        &[
            "convert",
            &shared("games/kif/ggpbase_test_case_3b.kif"),
            "--to",
            "gdl",
            "-o",
            &unread,
        ],
        "",
    );
    assert!(
        stderr(&o).contains("note: 2 rules with variables that have no value became comments"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&unread).unwrap();
    assert!(
        text.contains("% distinctCell(X, Y, M, N) :- distinct(Y, N)"),
        "{text}"
    );
    let o = run(&["check", &unread], "");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let o = run(&["fmt", "games/nim.gdl"], "");
    assert!(o.status.success(), "{}", stderr(&o));
    let formatted = temp_file("nim.gdl", &stdout(&o));
    let o = run(&["fmt", &formatted], "");
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(&formatted).unwrap(),
        "fmt is idempotent"
    );
}

#[test]
fn replay_reports_passes_and_the_first_difference() {
    let game = shared("games/kif/ticTacToe.kif");
    let trace = shared("conformance/ticTacToe.trace");
    for engine in ["network", "datalog"] {
        let o = run(&["replay", &game, &trace, "--engine", engine], "");
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o).trim(), "4 passed, 0 failed");
    }
    // The same trace against a different game: every playout fails, each with its first difference.
    let other = shared("games/kif/connectFour.kif");
    let o = run(&["replay", &other, &trace], "");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.starts_with("0 passed, "), "{out}");
    assert!(out.contains("playout 0 step 0"), "{out}");
}

#[test]
fn a_forced_network_gets_time_to_build_and_a_short_budget_names_the_flag() {
    // chess.kif's network takes about 5 s on the development machine, half the default budget;
    // `--engine network` waits for it however long it takes on a slower one, the network replays
    // chess's reference playouts, and a budget too short for it names the flag that gives more.
    let chess = shared("games/kif/chess.kif");
    let trace = shared("conformance/chess.trace");
    let o = run(&["replay", &chess, &trace, "--engine", "network"], "");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains(" passed, 0 failed"), "{out}");
    check_error(
        &[
            "bench",
            &chess,
            "--engine",
            "network",
            "--grounding-seconds",
            "1",
        ],
        "`--grounding-seconds S` gives the network S seconds",
    );
}

#[test]
fn players_obey_the_clock_and_say_what_they_cannot_play() {
    let started = std::time::Instant::now();
    let o = run(
        &[
            "search",
            "connect4",
            "--depth",
            "1000",
            "--playclock",
            "1.5",
        ],
        "",
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("alphabeta: searching depth 1000, 1.00 s of 1.50 s"),
        "a heartbeat while it searches: {err}"
    );
    assert!(
        err.contains("did not finish depth 1000 within the 1.50 s play clock"),
        "{err}"
    );
    // Depth 1000 would run for ever: finishing at all, well within a minute, means the clock stopped it.
    assert!(
        started.elapsed().as_secs_f64() < 60.0,
        "it stopped at the clock"
    );

    let o = run(
        &["search", "connect4", "--player", "id", "--playclock", "0.5"],
        "",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("Overall choice: move 3[drop(4)] for red"),
        "{out}"
    );
    assert!(out.contains("Effort: depth "), "{out}");

    check_error(
        &["games/roshambo.gdl", "--player", "alphabeta"],
        "Players that can play it: legal, random, id, mcs, mcts",
    );

    // Tic-tac-toe: mcts proves the draw within a few moves, so a whole match at a 1 s clock (100 ms of
    // margin, room for the other tests running beside this one) takes seconds.
    let o = run(
        &[
            "tictactoe",
            "--player",
            "mcts",
            "--playclock",
            "1",
            "--quiet",
        ],
        "",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "Goals: x=50 o=50 (a draw)",
        "{}",
        stderr(&o)
    );
    assert!(
        !stderr(&o).contains("past its"),
        "no move was late: {}",
        stderr(&o)
    );
}

#[test]
fn a_puzzle_is_solved_with_full_score_within_the_clock() {
    let hanoi = shared_game("hanoi.kif");
    let o = run(
        &[&hanoi, "--player", "id", "--playclock", "5", "--quiet"],
        "",
    );
    assert_eq!(
        stdout(&o).trim(),
        "Goals: player=100 (solved, full score)",
        "{}",
        stderr(&o)
    );
}

/// A corpus game: under `$GGP_SHARED`, or `../shared` beside the checkout.
fn shared_game(file: &str) -> String {
    shared(&format!("games/kif/{file}"))
}

/// `mcts` as the command line builds it probes each game in three ways. For a cut-off: checkers' goals
/// count pieces and predict the end, Connect Four's say nothing before it. For NST: breakthrough's
/// moves tell who wins (a move onto the last rows wins wherever it is played), Connect Four's
/// columns do not. For pieces: breakthrough's squares of each colour, whose moves may take them. The probes have at most a second for their 400 random games each (a few
/// milliseconds to 0.2 s on the development machine); on a loaded machine they play fewer, and the
/// depth the cut-off picks may move (48 moves when all are played), so only the decision is checked.
#[test]
fn mcts_probes_each_game_for_a_cutoff_and_for_moves_that_tell_who_wins() {
    for (game, expected) in [
        ("checkers.kif", &["mcts: playouts cut after "][..]),
        (
            "breakthrough.kif",
            &[
                "mcts: the moves played explain ",
                "playouts guided by move pairs (NST)",
                "mcts: pieces found (white: (cellHolds _ _ white)",
                "playouts take a piece where they can",
            ],
        ),
        (
            "connectFour.kif",
            &[
                "mcts: playouts played to the end",
                "mcts: the moves played explain ",
                "playouts uniformly random",
                "mcts: no piece counts",
            ],
        ),
    ] {
        let path = shared_game(game);
        let o = run(
            &["search", &path, "--player", "mcts", "--playclock", "5"],
            "",
        );
        let all = format!("{}{}", stdout(&o), stderr(&o));
        for line in expected {
            assert!(all.contains(line), "{game}: `{line}` missing from {all}");
        }
    }
}

/// An output file that cannot be written is refused before the match, the training or the
/// tournament that would fill it, not after.
#[test]
fn an_output_path_that_cannot_be_written_is_refused_before_the_work() {
    let missing = std::env::temp_dir().join("ggp-no-such-dir").join("nested");
    let _ = std::fs::remove_dir_all(missing.parent().unwrap());
    let file = |name: &str| missing.join(name).to_string_lossy().into_owned();
    for args in [
        vec!["tictactoe", "--player", "random", "--out", &file("m.json")],
        vec![
            "train",
            "tictactoe",
            "--turns",
            "100000",
            "--out",
            &file("t.scores"),
        ],
        vec![
            "tournament",
            "tictactoe",
            "--players",
            "random,legal",
            "--games",
            "2",
            "--csv",
            &file("t.csv"),
        ],
    ] {
        let o = run(&args, "");
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(!o.status.success(), "{args:?}: {out}");
        assert!(err.contains("ggp-no-such-dir"), "{args:?}: {err}");
        // Nothing was played or trained: no board, no result, no table.
        assert!(
            out.trim().is_empty(),
            "{args:?} worked before refusing: {out}"
        );
    }
}

/// A loss for sure is worth less than a game still open with the same goal value: `twostep` blocks
/// x's line and `onestep` does not complete its own losing line, with any seed. Both once valued a
/// loss a little above an open state of goal 0, and played into it.
#[test]
fn short_searches_prefer_an_open_game_to_a_certain_loss() {
    let blocks = shared_game("ticTacToe.kif");
    let suicide = shared_game("ticTacToeLargeSuicide.kif");
    let cases = [
        (
            blocks.as_str(),
            "twostep",
            "(mark 1 1) & noop; noop & (mark 3 3); (mark 1 2) & noop",
            "[(mark 1 3)]",
        ),
        (
            suicide.as_str(),
            "onestep",
            "(play 1 1 x) & noop; noop & (play 5 5 o); (play 1 2 x) & noop; noop & (play 5 4 o); \
             (play 1 3 x) & noop; noop & (play 5 3 o); (play 1 4 x) & noop; noop & (play 4 1 o)",
            "(play 1 5 x)",
        ),
    ];
    for (game, player, moves, what) in cases {
        for seed in ["1", "2", "3", "4", "5", "6"] {
            let o = run(
                &[
                    "search", game, "--player", player, "--moves", moves, "--seed", seed,
                ],
                "",
            );
            let out = stdout(&o);
            assert!(o.status.success(), "{}", stderr(&o));
            let choice = out
                .lines()
                .find(|l| l.starts_with("Overall choice"))
                .unwrap_or_else(|| panic!("{player}: no choice in {out}"));
            let chose = choice.contains(what);
            let wanted = player == "twostep";
            assert_eq!(chose, wanted, "{player} with seed {seed}: {choice}");
        }
    }
}
