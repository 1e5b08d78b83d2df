//! What the integration tests and benches share: where the shared material (`games/kif/`,
//! `conformance/`) is, in one place so that no test or bench can name one machine's path, and a few
//! helpers several tests use.

use std::path::{Path, PathBuf};

/// The shared material: `$GGP_SHARED`, or `../shared` beside the checkout.
#[allow(dead_code)] // the browser tests read none of it
pub fn shared() -> PathBuf {
    std::env::var_os("GGP_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// The address a server started as `child` prints first (`listening on http://127.0.0.1:PORT`), read
/// within a minute: how the tests that start `ggp-run serve` or `ggp-run web` find their port.
#[allow(dead_code)] // only the tests that start servers use it
pub fn listening_address(child: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let stdout = child.stdout.take().expect("the server's stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the server prints its address");
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}

/// The names of the conformance traces (`conformance/*.trace` in the shared material), sorted;
/// fails unless the whole corpus is there, so a missing folder cannot pass as an empty run.
#[allow(dead_code)] // the benches include this file and read no traces
pub fn trace_names() -> Vec<String> {
    let names = file_stems(&shared().join("conformance"), "trace");
    assert!(names.len() > 100, "expected the whole corpus of traces");
    names
}

/// The traces `GGP_CONFORMANCE_ONLY` picks (comma-separated names), or `None` when it is unset; a
/// name that is not a trace fails the test, so that a misspelt choice cannot pass as an empty run.
#[allow(dead_code)] // the benches include this file and read no traces
pub fn chosen_traces(names: &[String]) -> Option<Vec<String>> {
    let only = std::env::var("GGP_CONFORMANCE_ONLY").ok()?;
    let chosen: Vec<String> = only.split(',').map(|x| x.trim().to_string()).collect();
    let unknown: Vec<&str> = chosen
        .iter()
        .filter(|c| !names.contains(c))
        .map(String::as_str)
        .collect();
    assert!(
        unknown.is_empty(),
        "GGP_CONFORMANCE_ONLY names no trace called {} (the names are those of conformance/*.trace)",
        unknown.join(", ")
    );
    Some(chosen)
}

/// The number in the environment variable `name`, decimal or hexadecimal (`0x5eed_0021`), or `None`
/// when it is unset; a value that is not a number fails the test rather than be ignored.
#[allow(dead_code)] // only the fuzz reads numbers from the environment
pub fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let digits = value.trim().replace('_', "");
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse(),
    };
    Some(parsed.unwrap_or_else(|e| {
        panic!("{name}={value:?} is not a number (decimal, or hexadecimal after 0x): {e}")
    }))
}

/// The names, without their ending, of the files in `dir` whose name ends in `.extension`, sorted.
#[allow(dead_code)] // the benches include this file and list no folders
pub fn file_stems(dir: &std::path::Path, extension: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A path in the system's temporary folder, `ggp-PID-NAME` (so that runs at once do not collide),
/// whose file or folder is removed when the value is dropped: at the end of the test that made it,
/// failing or not, so that no run leaves files behind.
#[allow(dead_code)] // the benches write no files
pub struct TempPath(String);

#[allow(dead_code)]
impl TempPath {
    /// The path for `name` (which keeps its ending: a rule file's says its syntax); nothing is created.
    pub fn new(name: &str) -> TempPath {
        let path = std::env::temp_dir().join(format!("ggp-{}-{name}", std::process::id()));
        TempPath(path.to_string_lossy().into_owned())
    }

    /// The path, as a command's argument.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for TempPath {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let path = Path::new(&self.0);
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A guide that picks by the moves alone (no state of its own), so it picks the same whether or not
/// it is asked about a role whose only move is a no-op.
#[allow(dead_code)] // the benches guide no playouts
pub struct ByNumber;

impl ggp::game::PlayoutGuide for ByNumber {
    fn pick(&mut self, role: usize, moves: &[u32], _rng: &mut rand::rngs::SmallRng) -> usize {
        (0..moves.len())
            .max_by_key(|&i| {
                ggp::game::mix64(u64::from(moves[i]) * 7 + role as u64 + moves.len() as u64)
            })
            .unwrap_or(0)
    }
}

/// A random playout on the Datalog evaluator from the initial state, drawing its moves as the
/// network's playouts do (role order, each role's legal moves in move order, by `draw_move`), for
/// at most `max_steps` joint moves: its last state's facts and its joint moves, or the evaluator's
/// error (a runaway, its deadline), which the network cannot report.
#[allow(dead_code)] // the benches play no Datalog playouts
pub fn datalog_playout(
    g: &ggp::engine::RuleGame,
    rng: &mut rand::rngs::SmallRng,
    max_steps: u32,
) -> Result<(Vec<String>, u32), ggp::engine::EngineError> {
    use ggp::game::Game;
    let mut s = g.initial_state();
    let (mut buf, mut joint) = (Vec::new(), Vec::new());
    let mut steps = 0;
    'play: while steps < max_steps && !g.try_terminal(&s)? {
        joint.clear();
        for r in 0..g.info().num_roles() {
            g.try_legal(&s, r, &mut buf)?;
            if buf.is_empty() {
                break 'play;
            }
            joint.push(buf[ggp::game::draw_move(rng, buf.len())]);
        }
        s = g.try_next(&s, &joint)?;
        steps += 1;
    }
    Ok((g.state_facts(&s), steps))
}
