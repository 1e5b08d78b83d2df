//! What a newcomer meets in their first hour with `ggp-run` (issue 20), pinned down as golden output:
//! each case is a command line, what it reads on standard input, and the text it must print.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common;

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ggp-run starts");
    // A command that does not read its input may exit first: a broken pipe here is no failure.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("ggp-run finishes")
}

/// Runs `ggp-run ARGS` (split at spaces) with `stdin` and checks `want`:
/// - `error: ...`: the command fails without a panic and its standard error ends with `want` (a note
///   about the engine may come first);
/// - `= ...`: standard output is exactly the rest (after trimming both ends);
/// - anything else: standard output contains `want`, a golden block of whole lines.
fn check(args: &str, stdin: &str, want: &str) {
    let argv: Vec<&str> = args.split_whitespace().collect();
    let o = run(&argv, stdin);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "`{args}` panicked: {err}");
    if want.starts_with("error: ") {
        assert!(!o.status.success(), "`{args}` succeeded: {out}");
        assert!(
            err.trim().ends_with(want.trim()),
            "`{args}`: stderr\n{err}\ndoes not end with\n{want}"
        );
    } else if let Some(exact) = want.strip_prefix("= ") {
        assert!(o.status.success(), "`{args}` failed: {err}");
        assert_eq!(out.trim(), exact.trim(), "`{args}`: stdout");
    } else {
        assert!(
            out.contains(want),
            "`{args}`: expected\n{want}\nin\n{out}\n(stderr: {err})"
        );
    }
}

/// The board after `x` plays `mark(3,1)`: row 3 is the bottom row, column 1 the left one, whichever way
/// the game is written, with the game's own coordinates on the edges and empty cells as `.`.
#[test]
fn tictactoe_is_drawn_the_way_its_rules_name_the_cells() {
    let board = "x plays mark(3,1)\n";
    let drawn = "    1 2 3\n1 | . . .\n2 | . . .\n3 | x . .\n";
    for game in ["tictactoe", "games/tictactoe.gdl"] {
        let args = format!("{game} --player x=human --player o=legal");
        check(&args, "mark(3,1)\n", board);
        check(&args, "mark(3,1)\n", drawn);
    }
    // The corpus's KIF tic-tac-toe names its cells `(cell ?m ?n ...)` and its moves `(mark ?m ?n)` too.
    let kif = shared("games/kif/ticTacToe.kif");
    check(
        &format!("{kif} --player xplayer=human --player oplayer=legal"),
        "(mark 3 1)\n",
        drawn,
    );
    // Connect Four puts the first coordinate across and row 1 at the bottom: `cell(Col,Row,Role)`.
    check(
        "games/connect4.gdl --player red=human --player black=legal",
        "drop(2)\n",
        "1 |     .   red     .     .     .     .     .\n        1     2     3     4     5     6     7\n",
    );
    check(
        "connect4 --player red=human --player black=legal",
        "2\n",
        "1 | . R . . . . .\n    1 2 3 4 5 6 7\n",
    );
}

/// Boards found from the corpus's rules, not only `cell(A, B, V)`: the eight-puzzle's `cell(M, N, T)` is
/// a matrix (its first row reads 8 7 6), pentago's four-argument `cellHolds(Q, X, Y, Player)` is one
/// board per quadrant, dots and boxes' `box(X, Y, Owner)` and peg solitaire's `hole(Row, Col, peg)`
/// are grids by their shape, hex's `connected(K, M, N)` (K a group) is not a board, and chess's
/// `cell(X, Y, Player, Piece)` shows both values on the square.
#[test]
fn corpus_boards_are_found_from_the_rules() {
    let cases = [
        (
            "eightPuzzle.kif",
            "    1 2 3\n1 | 8 7 6\n2 | 5 4 3\n3 | 2 1 .\n",
        ),
        ("pentago.kif", "cellHolds 1:\n3 |     .     .     .\n"),
        ("pentago.kif", "cellHolds 4:\n3 |     .     .     .\n"),
        (
            "dotsAndBoxes.kif",
            "1 | . . . . .\n    1 2 3 4 5\n(box_count oplayer 0)\n",
        ),
        (
            "peg.kif",
            "c4 |   peg   peg   peg     .   peg   peg   peg\n",
        ),
        (
            "hex.kif",
            "i |    .    .    .    .    .    .    .    .    .\n(control red)\n",
        ),
        ("speedChess.kif", "2 |   white/pawn   white/pawn"),
    ];
    for (game, want) in cases {
        let args = format!("{} --player legal", shared(&format!("games/kif/{game}")));
        let o = run(&args.split_whitespace().collect::<Vec<_>>(), "");
        let out = String::from_utf8_lossy(&o.stdout);
        let first = out.split("(step 0)").next().unwrap_or_default();
        assert!(
            first.contains(want),
            "{game}: expected\n{want}\nin the first state\n{first}"
        );
    }
}

/// Starting anywhere: `--moves` from the start, `--state FILE` (either syntax) instead of `init`, and
/// `--from RECORD --step N`; every searcher finds the one good move of a position with a known best
/// move (x completes the top row; o must block it), and wrong starts say what was expected.
#[test]
fn play_and_search_start_anywhere() {
    let win = "--moves mark(1,1);mark(2,1);mark(1,2);mark(2,2)";
    for player in [
        "alphabeta --depth 9",
        "minimax --depth 9",
        "id --playclock 1",
        "mcts --playclock 1",
    ] {
        check(
            &format!("search games/tictactoe.gdl {win} --player {player}"),
            "",
            "[mark(1,3)]",
        );
        check(
            &format!(
                "search games/tictactoe.gdl --state tests/data/positions/tictactoe_o_must_block.gdl.state --player {player}"
            ),
            "",
            "[mark(1,3)]",
        );
    }
    let kif = shared("games/kif/ticTacToe.kif");
    check(
        &format!(
            "search {kif} --state tests/data/positions/tictactoe_o_must_block.kif.state --player id --playclock 1"
        ),
        "",
        "[(mark 1 3)] for oplayer",
    );
    // A state of another game is refused, naming what this game's states hold.
    check(
        "search games/nim.gdl --state tests/data/positions/tictactoe_o_must_block.gdl.state",
        "",
        "error: tests/data/positions/tictactoe_o_must_block.gdl.state: `cell(1, 1, x)` is not a \
         fact of this game's states, which hold control/1, pile/1",
    );
    // A match starts there too, and the record it writes replays from any of its steps.
    let dir = std::env::temp_dir().join(format!("ggp-start-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let record = dir.join("m.json");
    let record = record.to_string_lossy();
    check(
        &format!("games/tictactoe.gdl {win} --player legal --out {record}"),
        "",
        "    1 2 3\n1 | x x .\n2 | o o .\n3 | . . .\ncontrol(x)\n\nx plays mark(1,3)",
    );
    // A record of a game started anywhere resumes from its own first state.
    check(
        &format!("games/tictactoe.gdl --from {record} --step 0 --player legal --quiet"),
        "",
        "= Goals: x=100 o=0 (x wins)",
    );
    check(
        &format!("games/tictactoe.gdl --from {record} --player legal"),
        "",
        "1 | x x x\n2 | o o .\n3 | . . .\n\nGoals: x=100 o=0 (x wins)",
    );
    // Viewed with its rules, its boards start where the match did.
    check(
        &format!("view {record} --game games/tictactoe.gdl"),
        "",
        "    1 2 3\n1 | x x .\n2 | o o .\n3 | . . .\ncontrol(x)\n\nStep 1: x plays ( mark 1 3 )",
    );
    // A record of another game is refused before a move is played.
    check(
        &format!("games/connect4.gdl --from {record} --step 0 --player random"),
        "",
        &format!(
            "error: the record {record} is of tictactoe (roles x, o), not of this game (roles \
             red, black)"
        ),
    );
    // And so is one viewed with another game's rules.
    check(
        &format!("view {record} --game games/connect4.gdl"),
        "",
        &format!(
            "error: the record {record} is of tictactoe (roles x, o), not of this game (roles \
             red, black)"
        ),
    );
    let whole = dir.join("whole.json");
    let whole = whole.to_string_lossy();
    check(
        &format!("games/tictactoe.gdl --player legal --quiet --out {whole}"),
        "",
        "Goals: x=100 o=0 (x wins)",
    );
    check(
        &format!("games/tictactoe.gdl --from {whole} --step 2 --player legal"),
        "",
        "Game tictactoe (network): x=legal o=legal; play clock 5.00 s\n\n    1 2 3\n1 | x o .\n2 | . . .\n3 | . . .\n",
    );
    check(
        &format!("search games/tictactoe.gdl --from {whole} --step 9"),
        "",
        &format!("error: --step 9: the record {whole} has 7 steps"),
    );
    std::fs::remove_dir_all(&dir).ok();
    // A seat that cannot start stops `play` (which has no --play-on) with the reason.
    let empty = std::env::temp_dir().join(format!("ggp-empty-{}.scores", std::process::id()));
    std::fs::write(&empty, "").unwrap();
    let seat = format!("learned:{}", empty.display());
    let o = run(&["tictactoe", "--player", &seat, "--quiet"], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.trim().ends_with("the match did not start")
            && !err.contains("--play-on"),
        "{err}"
    );
    std::fs::remove_file(&empty).ok();
    // A match that never ends is aborted, and the command fails (nim takes at most 3 a move).
    check(
        "nim --pile 40000 --player random --quiet",
        "",
        "error: the match was aborted after 10000 steps: the game did not end within 10000 joint \
         moves",
    );
    check(
        "search games/tictactoe.gdl --moves mark(1,1);mark(9,9)",
        "",
        "error: step 2 (mark(9,9)): `mark(9,9)` is not a legal move for o; legal moves are: \
         mark(1,2), mark(1,3), mark(2,1), mark(2,2), mark(2,3), mark(3,1), mark(3,2), mark(3,3)",
    );
    check(
        "search games/roshambo.gdl --moves rock",
        "",
        "error: step 1 (rock): 1 move given; give (every role moves at once here) 2 moves in role \
         order (left, right) joined by `&`",
    );
    check(
        "search games/tictactoe.gdl --moves mark(1,1)&noop&noop",
        "",
        "error: step 1 (mark(1,1) & noop & noop): 3 moves given; give the move of x (whose turn it \
         is), or 2 moves in role order (x, o) joined by `&`",
    );
    check(
        "search tictactoe --moves 1",
        "",
        "error: --state, --moves and --from start rule files anywhere, not tictactoe",
    );
}

/// `search --explain`: every root move with what the player saw in it, best first, and the line it
/// expects; on positions whose best move is known, the top line and the variation are pinned down.
#[test]
fn search_explains_its_choice() {
    let win = "--moves mark(1,1);mark(2,1);mark(1,2);mark(2,2)";
    check(
        &format!("search games/tictactoe.gdl {win} --player id --playclock 1 --explain"),
        "",
        "Moves considered, best first:\n  mark(1,3)  proven 100\n",
    );
    check(
        &format!("search games/tictactoe.gdl {win} --player id --playclock 1 --explain"),
        "",
        "Principal variation: x: mark(1,3)\n",
    );
    check(
        &format!("search games/tictactoe.gdl {win} --player mcts --playclock 1 --explain"),
        "",
        "Moves considered, best first:\n  mark(1,3)  visits 1  proven 100\n",
    );
    // o must block; with best play the game is then a draw, and id's line says how.
    let block = "--state tests/data/positions/tictactoe_o_must_block.gdl.state";
    check(
        &format!("search games/tictactoe.gdl {block} --player id --playclock 1 --explain"),
        "",
        "Moves considered, best first:\n  mark(1,3)  proven 50\n",
    );
    check(
        &format!("search games/tictactoe.gdl {block} --player id --playclock 1 --explain"),
        "",
        "Principal variation: o: mark(1,3), x: ",
    );
    // Every move is listed, each once.
    let o = run(
        &[
            "search",
            "games/connect4.gdl",
            "--player",
            "mcts",
            "--playclock",
            "0.5",
            "--explain",
        ],
        "",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let listed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  drop("))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["drop(1)", "drop(2)", "drop(3)", "drop(4)", "drop(5)", "drop(6)", "drop(7)"],
        "{out}"
    );
    assert!(
        out.contains(&format!("[{}]", listed[0])),
        "the first listed is the choice: {out}"
    );
    check(
        "search games/tictactoe.gdl --player alphabeta --explain",
        "",
        "error: alphabeta searches to a fixed depth and keeps no view of each move; --trace prints \
         its whole search, and mcts and id explain their choice with --explain",
    );
}

/// `fmt` keeps the author's blank lines and comments where they stand, `--write` formats in place
/// (and says when there was nothing to do), banners change marker with the syntax, and `stage`
/// writes a rule in one notation.
#[test]
fn fmt_keeps_the_authors_layout() {
    let original = std::fs::read_to_string("games/tictactoe.gdl").unwrap();
    let o = run(&["fmt", "games/tictactoe.gdl"], "");
    let formatted = String::from_utf8_lossy(&o.stdout).into_owned();
    let shape = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| {
                if l.trim().is_empty() {
                    String::new()
                } else {
                    l.replace(' ', "")
                }
            })
            .collect()
    };
    assert_eq!(shape(&formatted), shape(&original), "{formatted}");
    check(
        "fmt games/tictactoe.gdl",
        "",
        "init(control(x))\n\n% The role in control marks any blank cell; the other role plays noop.\nlegal(mark(M, N)) :- cell(M, N, b)\n\nmark(M, N) ::",
    );
    let dir = std::env::temp_dir().join(format!("ggp-fmt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.gdl");
    std::fs::write(&file, "role(x)\n\n\np(X):-q(X)&r(X)\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let o = run(&["fmt", &path, "--write"], "");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("formatted"),
        "{o:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "role(x)\n\np(X) :- q(X) & r(X)\n"
    );
    let o = run(&["fmt", &path, "--write"], "");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is already formatted"),
        "{o:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
    let kif = shared("games/kif/ticTacToe.kif");
    check(
        &format!("convert {kif} --to gdl"),
        "",
        "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%\n%%% Tictactoe\n",
    );
    check(
        "stage games/breakthrough.gdl --stage classic",
        "",
        "init(cell(?X, 1, white)) :- index(?X).\n",
    );
}

/// `bench --lanes 64`: playouts side by side in the bits of a word, reported as such; out-of-range
/// lanes and lanes with a player's search are refused, and an engine without lanes says so.
#[test]
fn bench_plays_playouts_in_lanes() {
    let o = run(
        &[
            "bench",
            "games/tictactoe.gdl",
            "--seconds",
            "0.2",
            "--lanes",
            "64",
        ],
        "",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("game=tictactoe playouts_per_sec=")
            && out.contains(" lanes=64 threads=1 engine=network"),
        "{out}"
    );
    let rate: f64 = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("playouts_per_sec="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(rate > 0.0, "{out}");
    check(
        "bench games/tictactoe.gdl --lanes 65",
        "",
        "error: invalid value '65' for '--lanes <LANES>': 65 is not in 1..=64\n\nFor more information, try '--help'.",
    );
    check(
        "bench games/tictactoe.gdl --lanes 64 --player mcts",
        "",
        "error: --lanes measures bare playouts; a player's search (--player) sets its own",
    );
    let o = run(
        &[
            "bench",
            "games/tictactoe.gdl",
            "--seconds",
            "0.2",
            "--lanes",
            "8",
            "--engine",
            "datalog",
        ],
        "",
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("note: only the network plays playouts side by side"),
        "{o:?}"
    );
}

#[test]
fn the_end_of_a_match_says_who_won_in_words() {
    check(
        "tictactoe --player alphabeta --depth 9 --quiet",
        "",
        "= Goals: x=50 o=50 (a draw)",
    );
    // The terminal state is drawn without its `control(...)` line.
    let o = run(&["games/tictactoe.gdl", "--player", "random"], "");
    let out = String::from_utf8_lossy(&o.stdout);
    let last_board = out.rsplit("\n\n").nth(1).unwrap_or_default();
    assert!(!last_board.contains("control("), "{out}");
    assert!(out.trim_end().ends_with(')'), "{out}");
}

/// A `.tree` file plays to a leaf and searches at any depth up to its height (the seeds' depth 2 keeps
/// its exact trace; see search.rs).
#[test]
fn trees_play_to_their_leaves_and_search_at_any_depth() {
    check(
        "games/tree2.tree --player alphabeta --quiet",
        "",
        "= Goals: maxie=100 minnie=0 (maxie wins)",
    );
    check(
        "games/tree2.tree --player alphabeta",
        "",
        "minnie plays 1 in ",
    );
    check(
        "games/tree2.tree --player alphabeta",
        "",
        "\nleaf h (value 4)\n\nGoals: ",
    );
    for depth in ["1", "2", "3"] {
        check(
            &format!("search games/tree2.tree --depth {depth}"),
            "",
            "Overall choice: move 1[f]\n",
        );
    }
}

#[test]
fn missing_files_and_several_files() {
    check(
        "check nosuch.kif",
        "",
        "error: cannot read nosuch.kif: no such file",
    );
    check(
        "nosuch.kif",
        "",
        "error: cannot read nosuch.kif: no such file",
    );
    check(
        "search nosuch.tree",
        "",
        "error: cannot read nosuch.tree: no such file",
    );
    check(
        "check games",
        "",
        "error: cannot read games: it is a directory",
    );
    check(
        "check games/nim.gdl games/tictactoe.gdl",
        "",
        "\n2 files checked: 2 valid, 0 with errors\n",
    );
    check(
        "check games/nim.gdl nosuch.kif",
        "",
        "cannot read nosuch.kif: no such file\n\n2 files checked: 1 valid, 0 with errors, 1 unreadable\n",
    );
    check(
        "check games/nim.gdl nosuch.kif",
        "",
        "error: 1 of 2 files is not a valid game",
    );
}

#[test]
fn the_command_line_says_what_it_accepts() {
    check(
        "nim --depth -1",
        "",
        "error: invalid value '-1' for '--depth <DEPTH>': the depth must be a whole number of plies \
         between 1 and 1000 (leave --depth out for the game's default)\n\nFor more information, try '--help'.",
    );
    check(
        "nim --depth 0",
        "",
        "error: invalid value '0' for '--depth <DEPTH>': the depth must be a whole number of plies \
         between 1 and 1000 (leave --depth out for the game's default)\n\nFor more information, try '--help'.",
    );
    check(
        "nim --player alphabeta --fraction 0.3",
        "",
        "error: --fraction applies only to jamboree, and no player here is one (the programs here: \
         alphabeta)",
    );
    check(
        "search nim --player alphabeta --fraction 0.3",
        "",
        "error: --fraction applies only to jamboree, and no player here is one (the programs here: \
         alphabeta)",
    );
    // Every player flag is refused where no player reads it, rather than silently ignored.
    check(
        "nim --player maxie=human --player minnie=mcts --depth 5",
        "",
        "error: --depth applies only to minimax, alphabeta, jamboree, id and minimaxdepth, and no \
         player here is one (the programs here: mcts)",
    );
    check(
        "nim --player random --threads 4",
        "",
        "error: --threads applies only to mcts and uct, and no player here is one (the programs \
         here: random)",
    );
    check(
        "nim --player human --threads 4",
        "",
        "error: --threads applies only to mcts and uct, and no player here is one (no program \
         plays here)",
    );
    check(
        "perft nim 2 --playouts 5",
        "",
        "error: --playouts sets how a depth-limited player judges positions, and perft counts move \
         sequences: leave it out",
    );
    check(
        "train tictactoe --turns 10 --out /dev/null --playouts 5",
        "",
        "error: --playouts sets how a depth-limited player judges positions, and training plays \
         every turn by its scores: leave it out",
    );
    check(
        "search nim --player mcs --depth 3",
        "",
        "error: --depth applies only to minimax, alphabeta, jamboree, id and minimaxdepth, and no \
         player here is one (the programs here: mcs)",
    );
    check(
        "nim --player maxie=random --player maxie=legal",
        "",
        "error: --player gives maxie twice (maxie=random and maxie=legal); give each role once",
    );
    check(
        "nim --player random --player legal",
        "",
        "error: --player gives a kind for every role twice (random and legal); give one, and \
         ROLE=KIND for the roles that differ",
    );
    // A role named wins over a kind for every role, in either order.
    check(
        "nim --pile 3 --player maxie=legal --player random --quiet",
        "",
        "Goals: ",
    );
    check(
        "connect4 --grounding-seconds 5",
        "",
        "error: --grounding-seconds does not apply to connect4",
    );
    check(
        "connect4 --pile 3 --playouts 2",
        "",
        "error: --pile, --playouts do not apply to connect4",
    );
    check(
        "connect4 --rows 10 --cols 10",
        "",
        "error: a Connect Four board needs at least one row and column and (rows + 1) * cols <= 64, \
         but it is 10 × 10",
    );
    check(
        "search tictactoe --player onestep --fraction 0.5 --seed 1",
        "",
        "error: --fraction applies only to jamboree, and no player here is one (the programs here: \
         onestep)",
    );
    check(
        "search nim --pile 3 --player alphabeta --depth 3",
        "",
        "Overall choice:",
    );
    check(
        "search games/knightstour.gdl --player alphabeta",
        "",
        "error: alpha-beta needs a two-player, turn-taking, zero-sum game, but `knightstour` is not \
         one: it has 1 role",
    );
    // The limits are in the help.
    check("connect4 --help", "", "(rows + 1) × cols must be");
    check("connect4 --help", "", "plies (1 to 1000)");
}

#[test]
fn bare_ggp_run_lists_the_subcommands() {
    let o = run(&[], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    for sub in [
        "search",
        "perft",
        "bench",
        "check",
        "convert",
        "serve",
        "tournament",
    ] {
        assert!(err.contains(&format!("\n  {sub} ")), "{sub}: {err}");
    }
}

/// A path under the shared material, as a command-line argument.
fn shared(rel: &str) -> String {
    common::shared().join(rel).to_string_lossy().into_owned()
}

/// The human player: the board and the other moves even with `--quiet`, no time for a person's move,
/// the legal moves once after a wrong one, a bare column number, `help` and `undo`.
#[test]
fn a_person_at_the_prompt() {
    let game = "connect4 --rows 4 --cols 5 --player red=human --player black=legal --quiet";
    // `--quiet` does not hide the board or black's move from the person playing red.
    check(
        game,
        "4\n",
        "1 | . . . R .\n    1 2 3 4 5\n\nblack plays drop(1) in ",
    );
    // The person's move has no time: it would be their typing.
    check(
        game,
        "4\n",
        "red, please type your move: red plays drop(4)\n",
    );
    // A wrong move: one error, which lists the legal moves once, and the prompt again.
    check(
        game,
        "9\n4\n",
        "red, please type your move: `9` is not a legal move for red; legal moves are: drop(1), \
         drop(2), drop(3), drop(4), drop(5)\nred, please type your move: red plays drop(4)\n",
    );
    check(game, "help\n", "`undo` takes back the last full round");
    check(game, "undo\n", "Nothing to take back yet.");
    // `undo` after two rounds goes back to before red's second move: red's 4 and black's 1 stay.
    check(
        game,
        "4\n3\nundo\n",
        "Taken back: the game is where red last chose a move.\n\n4 | . . . . .\n3 | . . . . .\n\
         2 | . . . . .\n1 | B . . R .\n",
    );
    // A person the rules give no move is not left at a prompt.
    let path = common::TempPath::new("newcomer-nolegal.kif");
    std::fs::write(
        &path,
        "(role a) (role b) (init (step 1)) (<= (legal a go) (true (step 1)))\n\
         (<= (next (step 2)) (true (step 1))) (<= terminal (true (step 2)))\n\
         (<= (goal a 50) (true (step 2))) (<= (goal b 50) (true (step 2)))\n",
    )
    .expect("temp file");
    check(
        &format!("{} --player b=human --player a=legal", path.as_str()),
        "",
        "error: the rules misbehave: b has no legal move in a state that is not terminal",
    );
    // The same in a rule file, whose moves are written `drop(4)`.
    check(
        "games/connect4.gdl --player red=human --player black=legal",
        "4\n",
        "red plays drop(4)\n",
    );
}

/// Search output outside `--trace`: the game's roles and values in words; a rule file's trace speaks
/// its roles and writes negatives plainly (the seeds' own format stays for their trees: search.rs).
#[test]
fn search_speaks_the_games_language() {
    check(
        "search games/tictactoe.gdl --depth 9",
        "",
        "Value: a draw with best play; nodes: ",
    );
    check(
        "search tictactoe --depth 9",
        "",
        "Value: a draw with best play; nodes: ",
    );
    check(
        "search nim --pile 5 --depth 5",
        "",
        "Value: maxie wins with best play; nodes: ",
    );
    check(
        "search games/tree2.tree --depth 2",
        "",
        "Value: estimate 4 (the game's heuristic score; above 0 favours maxie); nodes: ",
    );
    // A rule file's estimate is on the goal scale (its playouts are seeded by the position).
    check(
        "search games/connect4.gdl --depth 2",
        "",
        "Value: red expects a goal of about ",
    );
    let o = run(
        &["search", "games/connect4.gdl", "--depth", "2", "--trace"],
        "",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("Searching state (red,s1)"), "{out}");
    assert!(out.contains("Evaluating state (black,s2)"), "{out}");
    assert!(!out.contains("Maxie") && !out.contains(":~"), "{out}");
    // States are numbered, not named by 12 hex digits of a hash; guesses are expected goals, 0 to 100.
    for word in out.split(|c: char| !c.is_ascii_alphanumeric()) {
        assert!(
            !(word.len() == 12 && word.chars().all(|c| c.is_ascii_hexdigit())),
            "a hash names a state: {word}\n{out}"
        );
    }
    for guess in out.split("Guess:").skip(1) {
        let number: String = guess
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
            .collect();
        let value: f64 = number.parse().unwrap_or_else(|_| panic!("{guess}\n{out}"));
        assert!((0.0..=100.0).contains(&value), "Guess:{number}\n{out}");
    }
    // The seeds' tree keeps the seeds' words.
    check(
        "search games/tree2.tree --depth 2 --trace",
        "",
        "Therefore value of (Maxie,a) is Guess:4, and best move is 1.",
    );
}

/// A game that never ends: `bench` says its playouts were cut at the step limit.
#[test]
fn bench_says_when_playouts_were_cut() {
    let path = common::TempPath::new("newcomer-forever.gdl");
    std::fs::write(
        &path,
        "role(a)\nrole(b)\ninit(control(a))\nlegal(pass) :- control(R)\n\
         pass :: control(a) ==> ~control(a) & control(b)\n\
         pass :: control(b) ==> ~control(b) & control(a)\n\
         goal(a,50)\ngoal(b,50)\nterminal :- control(c)\n",
    )
    .expect("temp file");
    let o = run(&["bench", path.as_str(), "--seconds", "0.1"], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("playouts stopped at the limit of 10000 steps before the game ended"),
        "{err}"
    );
    check(
        &format!("check {}", path.as_str()),
        "",
        "  statements: 2 rules, 5 facts, 2 operations; 1 stratum\n",
    );
    // A game that ends says nothing of the kind.
    let o = run(&["bench", "tictactoe", "--seconds", "0.1"], "");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("stopped at the limit"));
}

/// A rule file's syntax is read from its text, not trusted to its name: a KIF game saved as `.gdl` or
/// `.txt` is checked and played as KIF, with a note saying so.
#[test]
fn a_rule_file_is_read_in_the_syntax_it_is_written_in() {
    let dir = std::env::temp_dir().join(format!("ggp-newcomer-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kif = std::fs::read_to_string(shared("games/kif/ticTacToe.kif")).unwrap();
    for name in ["tictactoe.gdl", "tictactoe.txt"] {
        let path = dir.join(name);
        std::fs::write(&path, &kif).unwrap();
        let p = path.to_string_lossy().to_string();
        let o = run(&["check", &p], "");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "check {name}: {out}");
        let note = if name.ends_with(".gdl") {
            format!("note: {p} is named like infix (Epilog) rules, but its statements open with `(`: it is read as KIF")
        } else {
            format!("note: {p}: its statements open with `(`, so it is read as KIF")
        };
        assert!(out.contains(&note), "check {name}:\n{out}");
        let o = run(&["play", &p, "--player", "random", "--seed", "1"], "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "play {name}: {err}");
        assert!(err.contains(&note), "play {name}: stderr\n{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
