//! The games the pages offer: the bundled `games/` (embedded in the binary, so an installed `ggp-run`
//! has them) and the rule files of any `--games` folder, each with its optional stylesheet, and what
//! loading each one tells (roles, dynamics, the engine that plays it), found in the background.
//!
//! A stylesheet is a file beside the rules with the same stem and the extension `.style`: one line per
//! piece, `VALUE SYMBOL [COLOUR]` (`x ✕ #c0392b`), where VALUE is what stands on a square as the
//! drawing shows it (`red`, `white/rook`); `%` starts a comment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::game::Dynamics;
use crate::load::{load, GameSource, LoadError, LoadOptions};
use crate::syntax::ast::Syntax;

/// The bundled games: file name, rules, stylesheet.
const BUNDLED: &[(&str, &str, Option<&str>)] = &[
    (
        "tictactoe.gdl",
        include_str!("../../games/tictactoe.gdl"),
        Some(include_str!("../../games/tictactoe.style")),
    ),
    (
        "connect4.gdl",
        include_str!("../../games/connect4.gdl"),
        Some(include_str!("../../games/connect4.style")),
    ),
    (
        "breakthrough.gdl",
        include_str!("../../games/breakthrough.gdl"),
        Some(include_str!("../../games/breakthrough.style")),
    ),
    (
        "knightstour.gdl",
        include_str!("../../games/knightstour.gdl"),
        None,
    ),
    ("nim.gdl", include_str!("../../games/nim.gdl"), None),
    (
        "roshambo.gdl",
        include_str!("../../games/roshambo.gdl"),
        None,
    ),
];

/// The file names of the bundled games (a test checks it is every rule file of `games/`).
pub fn bundled_files() -> impl Iterator<Item = &'static str> {
    BUNDLED.iter().map(|b| b.0)
}

/// One game of the library.
#[derive(Debug)]
pub struct Entry {
    /// The name pages use (the file's stem, with its folder when two folders have the same stem).
    pub name: String,
    /// Where the rules come from (`games/tictactoe.gdl` for a bundled game).
    pub file: String,
    /// Their syntax.
    pub syntax: Syntax,
    /// The rules.
    pub text: String,
    /// The stylesheet, read ([`Style`]).
    pub style: Style,
}

impl Entry {
    /// The game as the loader takes it.
    pub fn source(&self) -> GameSource {
        GameSource::RuleText {
            text: self.text.clone(),
            name: self.name.clone(),
            syntax: self.syntax,
        }
    }
}

/// How a game's pieces are drawn: per value, a symbol and a colour.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Style {
    /// Per value as drawn, its symbol and colour.
    pub pieces: HashMap<String, Piece>,
    /// Lines that could not be read, with their number.
    pub problems: Vec<String>,
}

/// One piece's look.
#[derive(Clone, Debug, Serialize)]
pub struct Piece {
    /// What is drawn on its square.
    pub symbol: String,
    /// Its colour, as CSS reads it.
    pub colour: Option<String>,
}

impl Style {
    /// Reads a stylesheet (see the module documentation).
    pub fn parse(text: &str) -> Style {
        let mut style = Style::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('%').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [value, symbol] | [value, symbol, _] => {
                    let colour = words.get(2).map(|c| c.to_string());
                    let symbol = symbol.to_string();
                    style
                        .pieces
                        .insert(value.to_string(), Piece { symbol, colour });
                }
                _ => style.problems.push(format!(
                    "line {}: expected `VALUE SYMBOL [COLOUR]`, e.g. `x ✕ #c0392b`, found `{line}`",
                    n + 1
                )),
            }
        }
        style
    }
}

/// What loading a game tells, for the library's table.
#[derive(Clone, Debug, Serialize)]
pub struct Description {
    /// The roles in order.
    pub roles: Vec<String>,
    /// `turn-taking` or `simultaneous`.
    pub dynamics: &'static str,
    /// `network` or `datalog`.
    pub engine: &'static str,
    /// How long it took to load, in milliseconds.
    pub load_ms: u64,
}

/// The games, and what is known of each.
pub struct Library {
    entries: Vec<Arc<Entry>>,
    described: Arc<Mutex<HashMap<String, Result<Description, String>>>>,
    load: LoadOptions,
}

impl Library {
    /// The bundled games and the rule files (`.kif`, `.gdl`) of `folders`.
    pub fn new(folders: &[PathBuf], load: LoadOptions) -> std::io::Result<Library> {
        let mut entries: Vec<Arc<Entry>> = BUNDLED
            .iter()
            .map(|(file, text, style)| {
                let path = Path::new(file);
                let (syntax, _) = crate::syntax::syntax_of_file(path, text);
                Arc::new(Entry {
                    name: stem(path),
                    file: format!("games/{file}"),
                    syntax,
                    text: text.to_string(),
                    style: style.map(Style::parse).unwrap_or_default(),
                })
            })
            .collect();
        for folder in folders {
            let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", folder.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| x == "kif" || x == "gdl" || x == "gdl2")
                })
                .collect();
            files.sort();
            for path in files {
                let text = crate::syntax::read_source(&path)
                    .and_then(|bytes| {
                        String::from_utf8(bytes).map_err(|_| {
                            std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text")
                        })
                    })
                    .map_err(|e| {
                        std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?;
                let (syntax, _) = crate::syntax::syntax_of_file(&path, &text);
                let style = std::fs::read_to_string(path.with_extension("style"))
                    .map(|s| Style::parse(&s))
                    .unwrap_or_default();
                // A name taken (a bundled game's, or the same stem in another folder or syntax)
                // gets the folder's, then a number: two entries of one name could not both open.
                let taken = |name: &str| entries.iter().any(|e| e.name == name);
                let mut name = stem(&path);
                if taken(&name) {
                    name = format!("{}/{name}", stem(folder));
                }
                let first = name.clone();
                let mut n = 2;
                while taken(&name) {
                    name = format!("{first} ({n})");
                    n += 1;
                }
                entries.push(Arc::new(Entry {
                    name,
                    file: path.display().to_string(),
                    syntax,
                    text,
                    style,
                }));
            }
        }
        Ok(Library {
            entries,
            described: Arc::new(Mutex::new(HashMap::new())),
            load,
        })
    }

    /// Every game, bundled first.
    pub fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The game named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// What is known of `name` so far: `None` while it has not been loaded.
    pub fn description(&self, name: &str) -> Option<Result<Description, String>> {
        self.described
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// Loads every game once, one after the other on a thread of its own, to fill in the table.
    pub fn describe_in_background(&self) {
        let entries = self.entries.clone();
        let described = Arc::clone(&self.described);
        let options = self.load;
        std::thread::spawn(move || {
            for entry in entries {
                let found = describe(&entry, &options);
                described
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(entry.name.clone(), found);
            }
        });
    }
}

/// Loads `entry` and says what it is, or why it does not load.
fn describe(entry: &Entry, options: &LoadOptions) -> Result<Description, String> {
    let started = std::time::Instant::now();
    let source = entry.source();
    match load(&source, options) {
        Ok(game) => {
            let info = game.info();
            Ok(Description {
                roles: info.roles.clone(),
                dynamics: match info.dynamics {
                    Dynamics::TurnTaking => "turn-taking",
                    Dynamics::Simultaneous => "simultaneous",
                },
                engine: game.report().engine.as_str(),
                load_ms: started.elapsed().as_millis() as u64,
            })
        }
        Err(LoadError::Invalid { errors, .. }) => Err(format!(
            "{} in the rules",
            crate::diagnostics::count(errors.len(), "error")
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stylesheets_read_pieces_and_report_bad_lines() {
        let style = Style::parse("% pieces\nx ✕ #c0392b\no ◯\nwhite/rook ♖ white\nnonsense\n");
        assert_eq!(style.pieces["x"].symbol, "✕");
        assert_eq!(style.pieces["x"].colour.as_deref(), Some("#c0392b"));
        assert_eq!(style.pieces["o"].colour, None);
        assert_eq!(style.pieces["white/rook"].symbol, "♖");
        assert_eq!(style.problems.len(), 1);
        assert!(
            style.problems[0].starts_with("line 5:"),
            "{:?}",
            style.problems
        );
    }

    #[test]
    fn games_of_one_name_in_two_folders_get_names_of_their_own() {
        let root = std::env::temp_dir().join(format!("ggp-library-{}", std::process::id()));
        let folders = [root.join("a/games"), root.join("b/games")];
        let rules = "(role r) (init s) (legal r go) (<= (next t) (true s)) (<= terminal (true t)) \
                     (goal r 100)";
        for (folder, files) in folders
            .iter()
            .zip([&["three.kif", "three.gdl2"][..], &["three.kif"]])
        {
            std::fs::create_dir_all(folder).unwrap();
            for file in files {
                std::fs::write(folder.join(file), rules).unwrap();
            }
        }
        let library = Library::new(&folders, LoadOptions::default());
        std::fs::remove_dir_all(&root).unwrap();
        let library = library.unwrap();
        let names: Vec<&str> = library
            .entries()
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| n.contains("three"))
            .collect();
        assert_eq!(names, ["three", "games/three", "games/three (2)"]);
    }

    #[test]
    fn the_bundled_games_are_every_rule_file_of_the_games_folder() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("games");
        let mut on_disk: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".gdl") || f.ends_with(".kif"))
            .collect();
        on_disk.sort();
        let mut bundled: Vec<String> = bundled_files().map(String::from).collect();
        bundled.sort();
        assert_eq!(bundled, on_disk);
    }
}
