//! Seed 2's learner and the tournaments: the learned tic-tac-toe player never loses to `random`, the
//! tournament table adds up, rule games of three roles and of simultaneous moves run, and the command
//! line trains, refuses a file of another game, and keeps what training and a tournament did on Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use ggp::games::tictactoe::TicTacToe;
use ggp::learn::{train, DEFAULT_RATE};
use ggp::load::{load, AnyGame, GameSource, LoadOptions, Loaded};
use ggp::players::{Clock, PlayerConfig};
use ggp::referee::{SeatSpec, GRACE};
use ggp::tournament::{
    entrant_names, run, standings, to_csv, GameRecord, Played, Standing, TournamentError,
    TournamentOptions, STOPPED_ON_REQUEST,
};

use crate::common;
use common::shared;

fn corpus_game(name: &str) -> String {
    let p = shared().join("games/kif").join(name);
    assert!(p.is_file(), "{} is missing (set GGP_SHARED)", p.display());
    p.to_string_lossy().into_owned()
}

fn temp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn ggp_run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(args)
        .output()
        .expect("ggp-run runs")
}

fn options(games: u32, play_ms: u64) -> TournamentOptions {
    TournamentOptions {
        games,
        clock: Clock::new(Duration::from_secs(1), Duration::from_millis(play_ms)),
        grace: GRACE,
        config: PlayerConfig::default(),
        workers: 2,
        stop: None,
    }
}

/// The records of a tournament that played its whole schedule.
fn everything(played: Result<Played, TournamentError>) -> Vec<GameRecord> {
    let played = played.expect("the tournament runs");
    assert_eq!(played.stopped, None);
    assert_eq!(played.records.len(), played.total);
    played.records
}

/// Native 3×3 tic-tac-toe, as the loader gives it.
fn tictactoe() -> Loaded<TicTacToe> {
    match load(
        &GameSource::named("tictactoe").unwrap(),
        &LoadOptions::default(),
    ) {
        Ok(AnyGame::TicTacToe(l)) => l,
        _ => panic!("tictactoe is the native game"),
    }
}

/// Every line of a table adds up: results per seat, scores and goals within range.
fn check_table(table: &[Standing]) {
    for s in table {
        assert_eq!(s.wins + s.draws + s.losses, s.games, "{s:?}");
        let score = (f64::from(s.wins) + 0.5 * f64::from(s.draws)) / f64::from(s.games);
        assert!((s.score - score).abs() < 1e-9, "{s:?}");
        assert!(s.low <= s.score && s.score <= s.high, "{s:?}");
        assert!((0.0..=100.0).contains(&s.average_goal), "{s:?}");
    }
}

#[test]
fn learned_tictactoe_never_loses_to_random() {
    let game = tictactoe();
    let model = train(game.game.as_ref(), 200_000, DEFAULT_RATE, 1, |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    let file = temp("ttt-200k.scores");
    model.save(&file).unwrap();
    let specs = vec![
        format!("learned:{}", file.display())
            .parse::<SeatSpec>()
            .unwrap(),
        "random".parse().unwrap(),
    ];
    let records = everything(run(&game, &specs, &options(200, 200), |_, _| {}));
    assert_eq!(records.len(), 200);
    // Both seats, half each.
    assert_eq!(records.iter().filter(|r| r.seats[0] == 0).count(), 100);
    let table = standings(&entrant_names(&specs), &records);
    check_table(&table);
    assert_eq!(table[0].losses, 0, "{:?}", table[0]);
    assert!(table[0].wins > 100, "{:?}", table[0]);
}

#[test]
fn a_tiny_tournament_adds_up_and_writes_csv() {
    let game = tictactoe();
    let specs: Vec<SeatSpec> = vec!["legal".parse().unwrap(), "random".parse().unwrap()];
    let records = everything(run(&game, &specs, &options(6, 50), |_, _| {}));
    assert_eq!(records.len(), 6);
    let names = entrant_names(&specs);
    let table = standings(&names, &records);
    check_table(&table);
    assert_eq!(table[0].games, 6);
    assert_eq!(table[1].games, 6);
    // Two players of a zero-sum game: one's wins are the other's losses, and the goals add to 100.
    assert_eq!(table[0].wins, table[1].losses);
    assert_eq!(table[0].draws, table[1].draws);
    assert!((table[0].average_goal + table[1].average_goal - 100.0).abs() < 1e-9);
    let mean_goal: f64 = records
        .iter()
        .map(|r| f64::from(r.goals[r.seats.iter().position(|&e| e == 0).unwrap()]))
        .sum::<f64>()
        / 6.0;
    assert!((table[0].average_goal - mean_goal).abs() < 1e-9);
    let csv = to_csv(&table);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("player,games,wins,draws,losses"));
    let fields: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(fields[0], "\"legal\"");
    assert_eq!(fields[1], "6");
    assert_eq!(fields[2], table[0].wins.to_string());
}

/// Runs a tournament on the command line and returns its CSV table's rows (name, games, w, d, l),
/// having checked that its CSV of every game and its table by seat add up to the same.
fn cli_tournament(game: &str, players: &str, games: &str, csv_name: &str) -> Vec<Vec<String>> {
    let csv = temp(csv_name);
    let games_csv = temp(&format!("games-{csv_name}"));
    let o = ggp_run(&[
        "tournament",
        game,
        "--players",
        players,
        "--games",
        games,
        "--playclock",
        "0.1",
        "--startclock",
        "1",
        "--csv",
        csv.to_str().unwrap(),
        "--games-csv",
        games_csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("avg goal"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    // Every seat of every game is a line of the games' CSV, and each entrant's results there are
    // its line of the table, and the sums of its line by seat.
    let seats = std::fs::read_to_string(&games_csv).unwrap();
    let seats: Vec<Vec<&str>> = seats
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let by_seat = out
        .split("by seat (w-d-l)")
        .nth(1)
        .unwrap_or_else(|| panic!("a table by seat: {out}"));
    // An entrant holding several seats of a game has one result in it, by their mean goal: the
    // table then counts games, not seats.
    let mut games_seated: Vec<(&str, &str)> = seats.iter().map(|s| (s[0], s[2])).collect();
    games_seated.sort_unstable();
    games_seated.dedup();
    let one_seat_each = games_seated.len() == seats.len();
    for r in &rows {
        let mine = |result: &str| {
            seats
                .iter()
                .filter(|s| s[2] == r[0] && s[4] == result)
                .count()
                .to_string()
        };
        let by_seats = [mine("win"), mine("draw"), mine("loss")];
        if one_seat_each {
            assert_eq!(
                by_seats,
                [r[2].clone(), r[3].clone(), r[4].clone()],
                "{r:?}"
            );
        } else {
            let games = games_seated.iter().filter(|(_, e)| *e == r[0]).count();
            assert_eq!(r[1], games.to_string(), "{r:?}");
        }
        let name = r[0].trim_matches('"');
        let line = by_seat
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} by seat: {by_seat}"));
        let (mut w, mut d, mut l) = (0, 0, 0);
        // A seat the player never held reads `-`.
        for cell in line[name.len()..]
            .split_whitespace()
            .filter(|c| c.len() > 1 && c.contains('-'))
        {
            let n: Vec<u32> = cell.split('-').map(|x| x.parse().unwrap()).collect();
            (w, d, l) = (w + n[0], d + n[1], l + n[2]);
        }
        assert_eq!([w, d, l].map(|x| x.to_string()), by_seats, "{line}");
    }
    let total: usize = rows.iter().map(|r| r[1].parse::<usize>().unwrap()).sum();
    assert_eq!(games_seated.len(), total);
    rows
}

fn check_rows(rows: &[Vec<String>], players: usize) {
    assert_eq!(rows.len(), players);
    for r in rows {
        let n: Vec<u32> = r[1..5].iter().map(|x| x.parse().unwrap()).collect();
        assert!(n[0] > 0);
        assert_eq!(n[1] + n[2] + n[3], n[0], "{r:?}");
    }
}

#[test]
fn a_stopped_tournament_keeps_the_games_it_played() {
    let game = tictactoe();
    let specs: Vec<SeatSpec> = vec!["legal".parse().unwrap(), "random".parse().unwrap()];
    let stop = Arc::new(ggp::players::StopSwitch::new());
    let options = TournamentOptions {
        stop: Some(Arc::clone(&stop)),
        workers: 1,
        ..options(50, 50)
    };
    let played = run(&game, &specs, &options, |done, _| {
        if done == 3 {
            stop.set();
        }
    })
    .unwrap();
    assert_eq!(
        played.records.len(),
        3,
        "one worker: no game starts after the stop"
    );
    assert_eq!(played.total, 50);
    assert_eq!(played.stopped.as_deref(), Some(STOPPED_ON_REQUEST));
    check_table(&standings(&entrant_names(&specs), &played.records));
}

#[test]
fn a_game_that_cannot_be_played_stops_the_tournament_and_keeps_the_rest() {
    let source =
        GameSource::RuleFile(Path::new(env!("CARGO_MANIFEST_DIR")).join("games/tictactoe.gdl"));
    let Ok(AnyGame::Network(game)) = load(&source, &LoadOptions::default()) else {
        panic!("games/tictactoe.gdl loads on the network");
    };
    // Nobody listens on a port just freed: the third entrant cannot start a match.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let specs: Vec<SeatSpec> = ["legal", "random", &format!("http://127.0.0.1:{port}")]
        .iter()
        .map(|p| p.parse().unwrap())
        .collect();
    let options = TournamentOptions {
        workers: 1,
        ..options(2, 50)
    };
    let played = run(&game, &specs, &options, |_, _| {}).unwrap();
    // The pair without it plays first.
    assert_eq!(played.records.len(), 2, "{:?}", played.stopped);
    assert!(played.records.iter().all(|r| !r.seats.contains(&2)));
    assert_eq!(played.total, 6);
    let why = played.stopped.unwrap();
    assert!(
        why.contains("could not start") && why.contains(&format!("127.0.0.1:{port}")),
        "{why}"
    );
}

#[test]
fn three_role_and_simultaneous_tournaments_finish() {
    let three = corpus_game("tictactoe_3player.kif");
    let rows = cli_tournament(&three, "random,greedy", "2", "three.csv");
    check_rows(&rows, 2);
    // Two games of three seats over a pair: each plays both, one result a game.
    assert!(rows.iter().all(|r| r[1] == "2"), "{rows:?}");
    let prisoner = corpus_game("gt_prisoner.kif");
    let rows = cli_tournament(&prisoner, "random,legal,mcts", "2", "prisoner.csv");
    check_rows(&rows, 3);
}

#[test]
fn train_writes_a_file_that_another_game_refuses() {
    let file = temp("cli-ttt.scores");
    let f = file.to_str().unwrap();
    let o = ggp_run(&["train", "tictactoe", "--turns", "5000", "--out", f]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("turns/s"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("ggp-learned 1\n"));
    let learned = format!("learned:{f}");
    let o = ggp_run(&["connect4", "--player", &learned, "--quiet"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("was trained on `tictactoe"), "{err}");
    assert!(err.contains("not on `connect4"), "{err}");
    // And it plays the game it was trained on.
    let o = ggp_run(&["tictactoe", "--player", &learned, "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A corrupt file is an error, not a panic.
    let bad = temp("bad.scores");
    std::fs::write(&bad, "ggp-learned 1\ngame x\n").unwrap();
    let o = ggp_run(&[
        "tictactoe",
        "--player",
        &format!("learned:{}", bad.display()),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line"));
}

/// Runs `ggp-run ARGS`, which writes `out` (a new path in the test's temporary directory), presses
/// Ctrl-C once the temporary file beside `out` exists (the interrupt is caught from before it is made),
/// and returns the output, after checking that no temporary file was left behind.
#[cfg(unix)]
fn interrupted(args: &[&str], out: &Path) -> Output {
    let dir = out.parent().unwrap();
    let temp_prefix = format!(".{}.", out.file_name().unwrap().to_str().unwrap());
    let temps = || {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(&temp_prefix))
            .count()
    };
    let _ = std::fs::remove_file(out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ggp-run runs");
    // Bounded: ten minutes of a busy machine to load tic-tac-toe and create a file.
    let mut waited = 0;
    while temps() == 0 {
        assert!(waited < 60_000, "ggp-run {args:?} never created its output");
        if child.try_wait().unwrap().is_some() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "ggp-run {args:?} ended first: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    // SAFETY: a plain system call on the child's id, which has not been waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // Bounded too: a command that ignored the interrupt fails the test instead of hanging it.
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() {
        if waited == 60_000 {
            let _ = child.kill();
            panic!("ggp-run {args:?} did not stop within ten minutes of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(10));
        waited += 1;
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        temps(),
        0,
        "a temporary file is left beside {}",
        out.display()
    );
    output
}

#[test]
#[cfg(unix)]
fn ctrl_c_keeps_what_training_and_a_tournament_did() {
    let scores = temp("interrupted.scores");
    let o = interrupted(
        &[
            "train",
            "tictactoe",
            "--turns",
            "1000000000000",
            "--out",
            scores.to_str().unwrap(),
        ],
        &scores,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("training stopped by Ctrl-C after ")
            && err.contains(" of its 1,000,000,000,000 turns"),
        "{err}"
    );
    let text = std::fs::read_to_string(&scores).expect("the scores are written");
    let turns: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("turns "))
        .expect("a turns line")
        .parse()
        .unwrap();
    assert!((1..1_000_000_000_000).contains(&turns), "{text:.200}");
    // And they play.
    let learned = format!("learned:{}", scores.display());
    let o = ggp_run(&["tictactoe", "--player", &learned, "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // A tournament of some 450 s (mcts thinks 0.1 s a move) keeps the games that ended.
    let csv = temp("interrupted.csv");
    let o = interrupted(
        &[
            "tournament",
            &corpus_game("ticTacToe.kif"),
            "--players",
            "mcts,random",
            "--games",
            "1000",
            "--playclock",
            "0.1",
            "--csv",
            csv.to_str().unwrap(),
        ],
        &csv,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("the tournament stopped by Ctrl-C after ")
            && err.contains(" of its 1000 games"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("player  games"), "the table is printed: {out}");
    let rows = std::fs::read_to_string(&csv).expect("the table is written");
    assert_eq!(rows.lines().count(), 3, "{rows}");
}

#[test]
fn train_refuses_games_that_are_not_two_role_turn_taking() {
    let o = ggp_run(&[
        "train",
        &corpus_game("gt_prisoner.kif"),
        "--turns",
        "10",
        "--out",
        temp("never.scores").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("two-role, turn-taking"));
}

#[test]
fn train_refuses_a_game_over_in_its_initial_state_instead_of_spinning() {
    // Every self-play game of an empty pile ends before its first turn: before the refusal, the
    // trainer restarted it for ever without counting a turn.
    let o = ggp_run(&[
        "train",
        "nim",
        "--pile",
        "0",
        "--turns",
        "1",
        "--out",
        temp("empty-pile.scores").to_str().unwrap(),
    ]);
    assert!(!o.status.success(), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("over in its initial state"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_tournament_reads_a_learned_entrants_file_before_its_first_game() {
    // The learned entrant plays only in the schedule's last games; its missing file must stop the
    // tournament before the others play, with the file's name, not after.
    let missing = temp("never-written.scores");
    let _ = std::fs::remove_file(&missing);
    let o = ggp_run(&[
        "tournament",
        "tictactoe",
        "--players",
        &format!("random,legal,learned:{}", missing.display()),
        "--games",
        "2",
        "--playclock",
        "0.1",
    ]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("never-written.scores"), "{err}");
    assert!(
        !out.contains("games of"),
        "no game should have been played: {out}"
    );
}
