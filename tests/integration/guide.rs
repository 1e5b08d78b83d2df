//! Every example of `games/README.md` (the guide to writing games) works as the guide says:
//! - a fenced block ```` ```gdl file=NAME ```` or ```` ```kif file=NAME ```` is written to a scratch
//!   directory and must pass `ggp-run check` (or fail it, with `check=fails`);
//! - a ```` ```console ```` block holds `$ ggp-run ARGS` lines, each followed by the output it must print
//!   on standard output, run in that directory; a line `...` stands for any lines.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Block {
    info: String,
    body: String,
}

/// The fenced blocks of a Markdown text, with their info strings.
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) => {
                current = Some(Block {
                    info: info.trim().to_string(),
                    body: String::new(),
                })
            }
            (Some(_), Some(_)) => out.extend(current.take()),
            (Some(b), None) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

fn ggp_run(dir: &Path, args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ggp-run runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Whether `got` matches `want` line by line, `...` in `want` standing for any number of lines.
fn matches(want: &[&str], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((&"...", rest)) => (0..=got.len()).any(|i| matches(rest, &got[i..])),
        Some((w, rest)) => got.first() == Some(w) && matches(rest, &got[1..]),
    }
}

#[test]
fn every_example_of_the_guide_works_as_shown() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/README.md");
    let text = std::fs::read_to_string(&guide).expect("games/README.md");
    let dir: PathBuf = std::env::temp_dir().join(format!("ggp-guide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut files, mut commands) = (0, 0);
    for b in blocks(&text) {
        let mut words = b.info.split_whitespace();
        let lang = words.next().unwrap_or_default();
        let attrs: Vec<&str> = words.collect();
        if let Some(name) = attrs.iter().find_map(|a| a.strip_prefix("file=")) {
            assert!(matches!(lang, "gdl" | "kif"), "{}", b.info);
            std::fs::write(dir.join(name), &b.body).unwrap();
            let (ok, out) = ggp_run(&dir, &["check", name]);
            let should = !attrs.contains(&"check=fails");
            assert_eq!(ok, should, "check {name}:\n{out}");
            files += 1;
        } else if lang == "console" {
            let mut lines = b.body.lines().peekable();
            while let Some(line) = lines.next() {
                let cmd = line
                    .strip_prefix("$ ggp-run ")
                    .unwrap_or_else(|| panic!("a console block starts with `$ ggp-run`: {line}"));
                let mut want = Vec::new();
                while let Some(l) = lines.next_if(|l| !l.starts_with("$ ")) {
                    want.push(l);
                }
                let args: Vec<&str> = cmd.split_whitespace().collect();
                let (_, out) = ggp_run(&dir, &args);
                let got: Vec<&str> = out.lines().collect();
                assert!(
                    matches(&want, &got),
                    "`ggp-run {cmd}` printed\n{out}\nnot\n{}",
                    want.join("\n")
                );
                commands += 1;
            }
        }
    }
    assert!(
        files >= 3 && commands >= 4,
        "{files} files, {commands} commands"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The two versions of the guide's game play alike, move for move (not just in number).
#[test]
fn the_guides_two_syntaxes_are_one_game() {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("games/README.md");
    let text = std::fs::read_to_string(guide).unwrap();
    let dir: PathBuf = std::env::temp_dir().join(format!("ggp-guide2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for b in blocks(&text) {
        if let Some(name) = b
            .info
            .split_whitespace()
            .find_map(|a| a.strip_prefix("file="))
        {
            std::fs::write(dir.join(name), &b.body).unwrap();
        }
    }
    let (_, gdl) = ggp_run(&dir, &["perft", "take.gdl", "4"]);
    let (_, kif) = ggp_run(&dir, &["perft", "take.kif", "4"]);
    assert_eq!(gdl.trim(), kif.trim(), "perft 4");
    for seed in ["1", "2"] {
        let play = |file: &str| {
            ggp_run(
                &dir,
                &[file, "--player", "random", "--seed", seed, "--quiet"],
            )
            .1
        };
        assert_eq!(play("take.gdl"), play("take.kif"), "seed {seed}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
