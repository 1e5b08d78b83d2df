//! The shape of the source tree, as ARCHITECTURE.md states it: no import cycle between top-level modules
//! or between files, and no file of more than a thousand lines.
//!
//! A file's imports are the paths it names (`crate::a::b`, `super::x`, `use child::y`, also inside
//! `{...}` groups), outside comments and outside its `#[cfg(test)]` module, resolved to the file that
//! defines them. A module's `pub use` lines are its public face, not a dependency of its own code, so
//! they are left out; everything else counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be: past it, a file holds more than one idea.
const MAX_LINES: usize = 1000;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's files by module path (`players::seeds::trace`; the crate root is ``), leaving out the
/// binary (`main.rs`, `cli/`), which is a crate of its own.
fn library_files() -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let rel = p
                .strip_prefix(src())
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "main.rs" || rel.starts_with("cli/") {
                return None;
            }
            let mut parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
            if parts.last() == Some(&"mod") || parts == ["lib"] {
                parts.pop();
            }
            Some((parts.join("::"), p))
        })
        .collect()
}

/// The text that counts: no comment lines, no `pub use` lines, nothing from the test module on.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines.peek().is_some_and(|next| {
                next.trim_start()
                    .trim_start_matches("pub ")
                    .starts_with("mod ")
            })
        {
            break;
        }
        if t.starts_with("//") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ") {
            continue;
        }
        // A trailing comment is not code either.
        out.push_str(line.split(" // ").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Every path the code names that starts with `crate`, `super` or a child module of `module`: each as
/// its segments, `{a, b::c}` groups expanded one level deep.
fn paths(code: &str) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i]) || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == ':')) {
            i += 1;
            continue;
        }
        // A path: identifiers joined by `::`, possibly ending in a `{...}` group.
        let mut segs: Vec<String> = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            segs.push(bytes[start..j].iter().collect());
            if bytes.get(j) == Some(&':') && bytes.get(j + 1) == Some(&':') {
                j += 2;
                if bytes.get(j) == Some(&'{') {
                    let end = (j..bytes.len()).find(|&k| bytes[k] == '}').unwrap_or(j);
                    let group: String = bytes[j + 1..end].iter().collect();
                    for item in group.split(',') {
                        let item = item.split_whitespace().next().unwrap_or("");
                        if item.is_empty() || item == "self" {
                            continue;
                        }
                        let mut full = segs.clone();
                        full.extend(item.split("::").map(str::to_string));
                        out.push(full);
                    }
                    j = end;
                    segs.clear();
                    break;
                }
                if bytes.get(j).is_some_and(|&c| is_ident(c)) {
                    continue;
                }
            }
            break;
        }
        if segs.len() > 1 {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

/// The file (module path) a path names from `module`, if it names one of `files`.
fn resolve(module: &str, path: &[String], files: &BTreeMap<String, PathBuf>) -> Option<String> {
    let here: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let mut full: Vec<String> = match path[0].as_str() {
        "crate" => path[1..].to_vec(),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = &here[..here.len().saturating_sub(ups)];
            base.iter()
                .map(|s| s.to_string())
                .chain(path[ups..].iter().cloned())
                .collect()
        }
        "self" => here
            .iter()
            .map(|s| s.to_string())
            .chain(path[1..].iter().cloned())
            .collect(),
        first => {
            // A child module named directly (`use tree::Tree`, `seat::Turn`).
            let child: Vec<String> = here
                .iter()
                .map(|s| s.to_string())
                .chain([first.to_string()])
                .collect();
            if !files.contains_key(&child.join("::")) {
                return None;
            }
            child.into_iter().chain(path[1..].iter().cloned()).collect()
        }
    };
    while !full.is_empty() {
        let key = full.join("::");
        if files.contains_key(&key) {
            return (key != module).then_some(key);
        }
        full.pop();
    }
    None
}

/// Each file's imports, as files.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = library_files();
    files
        .iter()
        .map(|(module, path)| {
            let text = std::fs::read_to_string(path).expect("a source file is readable");
            let targets = paths(&code_of(&text))
                .iter()
                .filter_map(|p| resolve(module, p, &files))
                .filter(|t| !t.is_empty())
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

/// The strongly connected components of more than one node (the cycles), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finishing order on the graph, then components on the reversed graph.
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        let mut stack: Vec<(String, Vec<String>)> = Vec::new();
        seen.insert(start.clone());
        stack.push((start.clone(), graph[start].iter().cloned().collect()));
        while let Some((node, mut next)) = stack.pop() {
            match next.pop() {
                Some(n) => {
                    stack.push((node, next));
                    if graph.contains_key(&n) && seen.insert(n.clone()) {
                        let succ = graph[&n].iter().cloned().collect();
                        stack.push((n, succ));
                    }
                }
                None => order.push(node),
            }
        }
    }
    let mut reversed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (a, bs) in graph {
        for b in bs {
            reversed.entry(b.clone()).or_default().push(a.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for root in order.iter().rev() {
        if !assigned.insert(root.clone()) {
            continue;
        }
        let mut component = vec![root.clone()];
        let mut stack = vec![root.clone()];
        while let Some(n) = stack.pop() {
            for m in reversed.get(&n).into_iter().flatten() {
                if assigned.insert(m.clone()) {
                    component.push(m.clone());
                    stack.push(m.clone());
                }
            }
        }
        if component.len() > 1 {
            component.sort();
            out.push(component);
        }
    }
    out
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let graph = import_graph();
    assert!(
        graph.len() > 60,
        "the library's files were found: {}",
        graph.len()
    );
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(edges > 150, "their imports were read: {edges}");
    let cycles = cycles(&graph);
    assert!(cycles.is_empty(), "files importing each other: {cycles:#?}");
}

#[test]
fn no_top_level_module_imports_one_that_imports_it_back() {
    let top = |m: &str| m.split("::").next().unwrap_or("").to_string();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, targets) in import_graph() {
        let from = top(&file);
        if from.is_empty() {
            continue;
        }
        let entry = modules.entry(from.clone()).or_default();
        entry.extend(
            targets
                .iter()
                .map(|t| top(t))
                .filter(|t| *t != from && !t.is_empty()),
        );
    }
    assert!(modules.len() > 15, "{modules:?}");
    assert!(
        modules["referee"].contains("players") && modules["network"].contains("datalog"),
        "the module graph is read: {modules:?}"
    );
    let cycles = cycles(&modules);
    assert!(
        cycles.is_empty(),
        "modules importing each other: {cycles:#?}"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
    .collect();
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
    let files: BTreeMap<String, PathBuf> = ["referee", "referee::seat", "players"]
        .into_iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    let code =
        "use super::seat::{Seat, Turn};\nuse crate::players::{make_player, Clock};\nseat::Turn";
    let found: BTreeSet<String> = paths(code)
        .iter()
        .filter_map(|p| resolve("referee::events", p, &files))
        .collect();
    assert_eq!(found, ["players", "referee::seat"].map(String::from).into());
}

#[test]
fn no_file_is_longer_than_a_thousand_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}
