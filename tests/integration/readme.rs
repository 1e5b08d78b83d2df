//! The README's first commands, the ones a newcomer runs on a fresh machine, work as the README says:
//! the play command starts the game it names with the players it names and takes a move typed as the
//! README shows. (The test command is this suite itself; `cargo install` is left to the newcomer.)

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lines of the README's first `sh` block, comments dropped.
fn first_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md starts with a ```sh block");
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_readme_starts_with_a_play_command_and_the_test_command() {
    let commands = first_commands();
    assert!(commands.len() >= 2, "two commands at the top: {commands:?}");
    assert!(
        commands[0].starts_with("cargo run --release -- "),
        "{commands:?}"
    );
    assert_eq!(commands[1], "cargo test --profile ci", "{commands:?}");
}

#[test]
fn the_readme_play_command_plays_the_move_a_newcomer_types() {
    let commands = first_commands();
    let args: Vec<&str> = commands[0]
        .strip_prefix("cargo run --release -- ")
        .expect("the play command runs the binary")
        .split_whitespace()
        .collect();
    // The README's command as written, with a short clock so the test is quick; `4` is the bare column
    // the README says a person may type, and the end of input stops the match cleanly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(&args)
        .args(["--playclock", "0.2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ggp-run starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"help\n4\n")
        .expect("the move is typed");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the README's play command did not stop at the end of input within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("red plays drop(4)"), "{stdout}");
    assert!(stdout.contains("black plays drop("), "{stdout}");
    assert!(stdout.contains("Input ended"), "{stdout}");
}
