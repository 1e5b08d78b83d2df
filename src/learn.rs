//! Seed 2's self-play temporal-difference learner, and the file its scores are kept in.
//!
//! # The learner
//!
//! Every state has a score from the first role's point of view (the seed's X): a finished game scores
//! `(goal of role 0 − goal of role 1) / 100`, which is the seed's 1.0 / 0.0 / −1.0 for a win, a draw and a
//! loss of the first role, and a state not yet seen scores 0.0. The learner plays against itself: in every
//! turn the role in control moves to the next state with the best score (the highest for the first role,
//! the lowest for the second), choosing at random among equally good ones, which is all the exploration
//! the seed asks for. After each move from `s1` to `s2`, the score of `s1` is nudged toward the score of
//! `s2`: `score(s1) += rate × (score(s2) − score(s1))`, with the seed's rate of 0.3. When a game ends the
//! next turn starts a new game from the initial state.
//!
//! Scores are kept in a hash map keyed by [`Game::state_key`], a 64-bit key of the state, rather than by
//! the state itself: a tic-tac-toe table of a few thousand states then costs a few dozen kilobytes, and a
//! rule game's states (bitsets or fact sets) are not copied into it.
//!
//! The seed's scheme needs a two-role, turn-taking game (one score, two opposed preferences); other games
//! are refused with [`ModelError::Unsupported`].
//!
//! # The file
//!
//! A text file, so that it can be read and compared by hand:
//!
//! ```text
//! ggp-learned 1
//! game tictactoe
//! roles x o
//! fingerprint 5f0c3a29d1e4b7a8
//! turns 1000000
//! rate 0.3
//! states 4520
//! 0123456789abcdef 0.8125
//! ...
//! ```
//!
//! The first line names the format and its version. The fingerprint mixes the game's roles and the keys of
//! the states within two moves of the start, so a file trained on a differently sized board or other
//! rules is refused even when the name matches, and a game served under another name is recognised. A
//! rule file's two engines (network and Datalog) key a state by the same bitset of facts, so a file
//! trained on one serves the other; were their keys ever to differ, the initial state's key would differ
//! too and the file would be refused rather than misread. Then one line per state: its key in 16 hex
//! digits and its score. Loading checks every line and says which one is wrong.

use std::fmt::Write as _;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{mix64, Dynamics, Game, GameInfo, RoleIndex};

/// The first line of a learned-scores file.
pub const FORMAT_LINE: &str = "ggp-learned 1";

/// How every version's first line starts.
const FORMAT_PREFIX: &str = "ggp-learned ";

/// The seed's learning rate.
pub const DEFAULT_RATE: f64 = 0.3;

/// The largest learned-scores file read: a gigabyte (tic-tac-toe's table, 4,156 states, takes
/// 90 kB).
pub const MAX_MODEL_BYTES: u64 = 1 << 30;

/// Why learning, saving or loading scores failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The game does not suit the seed's scheme.
    #[error("{0}")]
    Unsupported(String),
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The file is not a well-formed learned-scores file.
    #[error("{}: line {line}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The file was trained on another game.
    #[error("{}: {message}", path.display())]
    WrongGame {
        /// The file.
        path: PathBuf,
        /// Which game it belongs to, and which it was asked to play.
        message: String,
    },
    /// The learned player was named without a file.
    #[error("the learned player needs a file: write learned:FILE")]
    NoFile,
}

/// What a scores file says about the game it was trained on.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelHeader {
    /// The game's name.
    pub game: String,
    /// The game's roles.
    pub roles: Vec<String>,
    /// [`fingerprint`] of the game.
    pub fingerprint: u64,
    /// Turns of self-play behind the scores.
    pub turns: u64,
    /// The learning rate.
    pub rate: f64,
}

/// Learned scores: a score per state key, from the first role's point of view.
#[derive(Clone, Debug)]
pub struct Model {
    /// The game they belong to.
    pub header: ModelHeader,
    /// Score per [`Game::state_key`]; states not here score 0.
    pub scores: HashMap<u64, f64>,
}

/// A key that tells games apart by their rules rather than their name: the roles, and the keys of the
/// initial state and of every state one and two joint moves from it, mixed in an order that does not
/// depend on the order of the moves. A file trained on a differently sized board or other rules is
/// refused even when the name matches, and a game served under another name (a match id) is
/// recognised.
pub fn fingerprint<G: Game>(game: &G) -> u64 {
    let info = game.info();
    let start = game.initial_state();
    let mut h = mix64(game.state_key(&start));
    for b in info.roles.join("\0").bytes() {
        h = mix64(h ^ u64::from(b)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    }
    // The states within two joint moves, summed (order-free) after mixing each with its depth.
    let mut buffers: Vec<Vec<G::Move>> = (0..info.num_roles()).map(|_| Vec::new()).collect();
    let mut frontier = vec![start];
    for depth in 1..=2u64 {
        let mut next = Vec::new();
        for state in &frontier {
            if game.is_terminal(state) {
                continue;
            }
            for joint in crate::game::joint_moves(game, state, &mut buffers) {
                let child = game.next_state(state, &joint);
                h = h.wrapping_add(mix64(game.state_key(&child) ^ depth));
                next.push(child);
            }
        }
        frontier = next;
    }
    mix64(h)
}

/// Checks that `info`'s game suits the seed's scheme: two roles taking turns.
pub fn check_supported(info: &GameInfo) -> Result<(), ModelError> {
    if info.roles.len() != 2 || info.dynamics != Dynamics::TurnTaking {
        return Err(ModelError::Unsupported(format!(
            "the TD self-play learner needs a two-role, turn-taking game (one score, the first role maximising \
             it and the second minimising it), but `{}` has {}{}",
            info.name,
            crate::diagnostics::count(info.roles.len(), "role"),
            if info.dynamics == Dynamics::Simultaneous {
                " moving simultaneously"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// The score of a finished game from the first role's point of view, in −1..=1.
pub fn terminal_score<G: Game>(game: &G, state: &G::State) -> f64 {
    (f64::from(game.goal(state, 0).saturating_sub(game.goal(state, 1))) / 100.0).clamp(-1.0, 1.0)
}

/// The seed's `best_next_state`: the index (in `moves`) of the move of `role` in `state` whose next state
/// scores best for `role` (highest for role 0, lowest for role 1), that state and its score; ties are
/// broken uniformly at random. `moves` is filled with `role`'s legal moves. `None` when there are none.
pub fn best_next<G: Game>(
    game: &G,
    state: &G::State,
    role: RoleIndex,
    scores: &HashMap<u64, f64>,
    rng: &mut SmallRng,
    moves: &mut Vec<G::Move>,
) -> Option<(usize, G::State, f64)> {
    game.legal_moves(state, role, moves);
    // Role 1 minimises: compare negated scores so one maximising loop serves both.
    let sign = if role == 0 { 1.0 } else { -1.0 };
    let mut best: Option<(usize, G::State, f64)> = None;
    // How many next states share the best score so far, for reservoir sampling among them.
    let mut ties = 0u32;
    for (i, mv) in moves.iter().enumerate() {
        let next = game.play(state, role, mv);
        let score = if game.is_terminal(&next) {
            terminal_score(game, &next)
        } else {
            scores.get(&game.state_key(&next)).copied().unwrap_or(0.0)
        };
        match &best {
            Some((_, _, b)) if sign * score < sign * b => {}
            Some((_, _, b)) if score == *b => {
                // The k-th equally good state replaces the kept one with probability 1/k.
                ties += 1;
                if rng.gen_range(0..ties) == 0 {
                    best = Some((i, next, score));
                }
            }
            _ => {
                ties = 1;
                best = Some((i, next, score));
            }
        }
    }
    best
}

/// How far training has got.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainProgress {
    /// Turns played.
    pub turns: u64,
    /// Games finished.
    pub games: u64,
    /// Games cut off unfinished after [`MAX_GAME_TURNS`] turns (and started again).
    pub cut_off: u64,
    /// States with a score.
    pub states: usize,
}

/// The longest self-play game: a rule game could loop for ever, so one this long is cut off and
/// started again.
pub const MAX_GAME_TURNS: u64 = 100_000;
// The message of a training that never reaches an end says the number as text.
const _: () = assert!(MAX_GAME_TURNS == 100_000);

/// Seed 2's `train`: `turns` turns of self-play from the initial state with learning rate `rate`, random
/// ties drawn from `seed`. `progress` is called every few thousand turns (at least every quarter second)
/// and at the end; it ends the training early by answering [`ControlFlow::Break`] (Ctrl-C), and the
/// scores learned so far are kept, their header saying how many turns taught them.
///
/// ```
/// use std::ops::ControlFlow;
/// use ggp::games::tictactoe::TicTacToe;
/// use ggp::learn::{train, DEFAULT_RATE};
///
/// // Stopped at its first report (by 4,096 turns, sooner on a slow machine), the model says so.
/// let game = TicTacToe::new(3, 3).unwrap();
/// let model = train(&game, 1_000_000, DEFAULT_RATE, 1, |_| ControlFlow::Break(())).unwrap();
/// assert!(model.header.turns <= 4_096 && model.header.turns % 16 == 0);
/// ```
pub fn train<G: Game>(
    game: &G,
    turns: u64,
    rate: f64,
    seed: u64,
    mut progress: impl FnMut(&TrainProgress) -> ControlFlow<()>,
) -> Result<Model, ModelError> {
    check_supported(game.info())?;
    if !(rate.is_finite() && rate > 0.0 && rate <= 1.0) {
        return Err(ModelError::Unsupported(format!(
            "the learning rate must be above 0 and at most 1, not {rate}"
        )));
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut scores: HashMap<u64, f64> = HashMap::new();
    let mut moves = Vec::new();
    let start = game.initial_state();
    if game.is_terminal(&start) {
        // Every self-play game would end before its first turn: no turn would ever be counted.
        return Err(ModelError::Unsupported(format!(
            "`{}` is over in its initial state: there is no move to learn from",
            game.info().name
        )));
    }
    let mut state = start.clone();
    let mut done = TrainProgress::default();
    let mut game_turns = 0;
    const SHOW_EVERY: std::time::Duration = std::time::Duration::from_millis(250);
    let mut shown = std::time::Instant::now();
    let mut stopped = false;
    while done.turns < turns {
        let over = game.is_terminal(&state);
        if over || game_turns == MAX_GAME_TURNS {
            state = start.clone();
            if over {
                done.games += 1;
            } else {
                done.cut_off += 1;
            }
            game_turns = 0;
            continue;
        }
        let Some(role) = game.mover(&state) else {
            return Err(ModelError::Unsupported(format!(
                "no role is in control of a state of `{}`",
                game.info().name
            )));
        };
        let Some((_, next, next_score)) =
            best_next(game, &state, role, &scores, &mut rng, &mut moves)
        else {
            return Err(ModelError::Unsupported(format!(
                "{} has no legal move in a state of `{}` that is not terminal",
                game.info().roles[role],
                game.info().name
            )));
        };
        let old = scores.entry(game.state_key(&state)).or_insert(0.0);
        *old += rate * (next_score - *old);
        state = next;
        done.turns += 1;
        game_turns += 1;
        // Every 4,096 turns, or sooner where a turn is slow (a rule game on Datalog): a progress bar
        // that moves at least every quarter second.
        if done.turns % 4096 == 0 || (done.turns % 16 == 0 && shown.elapsed() >= SHOW_EVERY) {
            done.states = scores.len();
            if progress(&done).is_break() {
                stopped = true;
                break;
            }
            shown = std::time::Instant::now();
        }
    }
    // A game ended by the last turn counts (the loop ends before it sees the end).
    if game.is_terminal(&state) {
        done.games += 1;
    }
    done.states = scores.len();
    if !stopped {
        // Already reported by the call that stopped it.
        let _ = progress(&done);
    }
    let info = game.info();
    // A game cut off by the last turn counts too (the loop ends before it restarts).
    if game_turns == MAX_GAME_TURNS {
        done.cut_off += 1;
    }
    if done.games == 0 && done.cut_off > 0 {
        // The scores move towards the goals of games' ends: with none reached, every one is 0.
        return Err(ModelError::Unsupported(format!(
            "no self-play game of `{}` ended within 100,000 turns ({} cut off there and started \
             again): the scores are learned from the ends of games, so nothing was learned",
            info.name, done.cut_off
        )));
    }
    if done.games == 0 {
        // Stopped, or too few turns, before the first game ended: the same holds.
        let why = if stopped {
            "stopped"
        } else {
            "ended (more turns may help)"
        };
        return Err(ModelError::Unsupported(format!(
            "training {why} after {} turns, before any self-play game of `{}` ended: the scores \
             are learned from the ends of games, so nothing was learned",
            done.turns, info.name
        )));
    }
    Ok(Model {
        header: ModelHeader {
            game: info.name.clone(),
            roles: info.roles.clone(),
            fingerprint: fingerprint(game),
            turns: done.turns,
            rate,
        },
        scores,
    })
}

impl Model {
    /// Checks that these scores were learned on `game` (its roles and its rules, by [`fingerprint`];
    /// not its name, which a server takes from the match); the error names the game they belong to.
    pub fn check<G: Game>(&self, game: &G, path: &Path) -> Result<(), ModelError> {
        let info = game.info();
        let h = &self.header;
        let message = if h.roles != info.roles {
            format!(
                "this file was trained on `{}` (roles {}), not on `{}` (roles {})",
                h.game,
                h.roles.join(", "),
                info.name,
                info.roles.join(", ")
            )
        } else if h.fingerprint != fingerprint(game) {
            format!(
                "this file was trained on `{}`, whose rules differ from `{}`'s (another initial \
                 state or other moves: other rules, another board size, or an engine that keys \
                 states differently)",
                h.game, info.name
            )
        } else {
            return Ok(());
        };
        Err(ModelError::WrongGame {
            path: path.to_path_buf(),
            message,
        })
    }

    /// The learned score of the state with key `key`, from the first role's point of view; 0 for a
    /// state never seen in training.
    pub fn score(&self, key: u64) -> f64 {
        self.scores.get(&key).copied().unwrap_or(0.0)
    }

    /// The file's text (see the module documentation), states in key order so that equal scores give
    /// equal files.
    pub fn to_text(&self) -> String {
        let h = &self.header;
        let mut out = String::with_capacity(32 * self.scores.len() + 200);
        let _ = writeln!(out, "{FORMAT_LINE}");
        let _ = writeln!(out, "game {}", h.game);
        let _ = writeln!(out, "roles {}", h.roles.join(" "));
        let _ = writeln!(out, "fingerprint {:016x}", h.fingerprint);
        let _ = writeln!(out, "turns {}", h.turns);
        let _ = writeln!(out, "rate {}", h.rate);
        let _ = writeln!(out, "states {}", self.scores.len());
        let mut entries: Vec<(u64, f64)> = self.scores.iter().map(|(&k, &v)| (k, v)).collect();
        entries.sort_unstable_by_key(|e| e.0);
        for (k, v) in entries {
            // Rust prints the shortest text that reads back as the same f64.
            let _ = writeln!(out, "{k:016x} {v}");
        }
        out
    }

    /// Writes the scores to `path`.
    pub fn save(&self, path: &Path) -> Result<(), ModelError> {
        let io = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        // Whole or not at all: a good file is never replaced by one cut short.
        crate::files::write_whole(path, self.to_text().as_bytes()).map_err(io)
    }

    /// Reads scores from `path`: a regular file of at most [`MAX_MODEL_BYTES`] (a device or a pipe
    /// could be read for ever, and the web's pages name the file).
    pub fn load(path: &Path) -> Result<Model, ModelError> {
        let io = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let refused = |why: String| io(std::io::Error::new(std::io::ErrorKind::InvalidInput, why));
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(refused(
                "not a regular file (learned scores are read from a file `ggp-run train` wrote)"
                    .to_string(),
            ));
        }
        if meta.len() > MAX_MODEL_BYTES {
            return Err(refused(format!(
                "{} bytes, more than the {MAX_MODEL_BYTES} a learned-scores file may have",
                meta.len()
            )));
        }
        let file = std::fs::File::open(path).map_err(io)?;
        Model::read(file, path)
    }

    /// Reads scores from `source` (at most [`MAX_MODEL_BYTES`]); `path` names it in errors. The
    /// first bytes tell a scores file from any other before the rest (up to a gigabyte) is read: a
    /// page naming a game's rules or a log gets its answer at once.
    fn read(mut source: impl Read, path: &Path) -> Result<Model, ModelError> {
        let io = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut text = Vec::new();
        (&mut source)
            .take(FORMAT_PREFIX.len() as u64)
            .read_to_end(&mut text)
            .map_err(io)?;
        if !text.starts_with(FORMAT_PREFIX.as_bytes()) {
            return Model::parse(&String::from_utf8_lossy(&text), path);
        }
        source
            .take(MAX_MODEL_BYTES - text.len() as u64)
            .read_to_end(&mut text)
            .map_err(io)?;
        let text = String::from_utf8(text).map_err(|e| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "not UTF-8 text (at byte {}): not a file `ggp-run train` wrote",
                    e.utf8_error().valid_up_to()
                ),
            ))
        })?;
        Model::parse(&text, path)
    }

    /// Parses a file's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Model, ModelError> {
        let err = |line: usize, message: String| ModelError::Format {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end()));
        match lines.next() {
            Some((_, FORMAT_LINE)) => {}
            Some((n, l)) if l.starts_with("ggp-learned ") => {
                return Err(err(
                    n,
                    format!("format `{l}` is not supported; this program reads `{FORMAT_LINE}`"),
                ))
            }
            _ => {
                return Err(err(
                    1,
                    format!("not a learned-scores file (the first line is not `{FORMAT_LINE}`)"),
                ))
            }
        }
        let mut field = |name: &str| -> Result<(usize, String), ModelError> {
            match lines.next() {
                Some((n, l)) => match l.split_once(' ') {
                    Some((k, v)) if k == name => Ok((n, v.to_string())),
                    _ if l == name => Ok((n, String::new())),
                    _ => Err(err(n, format!("expected the `{name}` line, found `{l}`"))),
                },
                // Counted only here: a scores file may be a gigabyte of lines.
                None => Err(err(
                    text.lines().count().max(1),
                    format!("the file ends before the `{name}` line"),
                )),
            }
        };
        let (_, game) = field("game")?;
        let (_, roles) = field("roles")?;
        let (n, fp) = field("fingerprint")?;
        let fingerprint = u64::from_str_radix(&fp, 16)
            .map_err(|_| err(n, format!("`{fp}` is not a hex fingerprint")))?;
        let (n, t) = field("turns")?;
        let turns = t
            .parse()
            .map_err(|_| err(n, format!("`{t}` is not a number of turns")))?;
        let (n, r) = field("rate")?;
        let rate: f64 = r
            .parse()
            .map_err(|_| err(n, format!("`{r}` is not a learning rate")))?;
        let (n, s) = field("states")?;
        let states: usize = s
            .parse()
            .map_err(|_| err(n, format!("`{s}` is not a number of states")))?;
        // The count comes from the file: cap the reservation so a corrupt count cannot exhaust memory.
        let mut scores = HashMap::with_capacity(states.min(1 << 20));
        let mut last = n;
        for (n, l) in lines {
            last = n;
            if l.is_empty() {
                continue;
            }
            let parsed = l.split_once(' ').and_then(|(k, v)| {
                let key = u64::from_str_radix(k, 16).ok()?;
                let score: f64 = v.parse().ok()?;
                score.is_finite().then_some((key, score))
            });
            match parsed {
                Some((key, score)) => {
                    if scores.insert(key, score).is_some() {
                        return Err(err(n, format!("state {key:016x} appears twice")));
                    }
                }
                None => {
                    return Err(err(
                        n,
                        format!("expected `KEY SCORE` (16 hex digits, a number), found `{l}`"),
                    ))
                }
            }
        }
        if scores.len() != states {
            return Err(err(
                last,
                format!(
                    "the header promises {states} states but the file holds {}",
                    scores.len()
                ),
            ));
        }
        Ok(Model {
            header: ModelHeader {
                game,
                roles: roles.split_whitespace().map(str::to_string).collect(),
                fingerprint,
                turns,
                rate,
            },
            scores,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::nim::Nim;
    use crate::games::tictactoe::TicTacToe;

    #[test]
    fn only_a_regular_file_is_read_as_scores() {
        // A directory stands for the devices and pipes a page could name: not a regular file.
        let dir = std::env::temp_dir();
        match Model::load(&dir) {
            Err(ModelError::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::InvalidInput);
                assert!(
                    source.to_string().contains("not a regular file"),
                    "{source}"
                );
            }
            other => panic!("expected a refusal, got {:?}", other.map(|_| "a model")),
        }
    }

    #[test]
    fn a_file_that_is_not_scores_is_refused_from_its_first_bytes() {
        /// Rules, then an error for any read past the first bytes: a reader that read the whole
        /// file before looking at it would fail on that, not on the rules.
        struct Rules(&'static [u8]);
        impl Read for Rules {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Err(std::io::Error::other("read past the first bytes"));
                }
                let n = buf.len().min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let rules = Rules(b"(role x)\n(role o)\n");
        match Model::read(rules, Path::new("rules.kif")) {
            Err(ModelError::Format {
                line: 1, message, ..
            }) => {
                assert!(message.contains("not a learned-scores file"), "{message}")
            }
            other => panic!(
                "expected a format error, got {:?}",
                other.map(|_| "a model")
            ),
        }
    }

    /// A game that the last turn ends has ended: one turn of nim from a pile of one learns its goal.
    #[test]
    fn a_game_ended_by_the_last_turn_counts() {
        let nim = crate::games::nim::Nim::new(1, false);
        let model = train(&nim, 1, DEFAULT_RATE, 1, |_| {
            std::ops::ControlFlow::Continue(())
        });
        assert_eq!(model.map(|m| m.header.turns).ok(), Some(1));
    }

    #[test]
    fn learn_tictactoe_scores_round_trip_through_the_file() {
        let game = TicTacToe::new(3, 3).unwrap();
        let model = train(&game, 20_000, DEFAULT_RATE, 7, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        assert!(model.scores.len() > 100);
        let text = model.to_text();
        let back = Model::parse(&text, Path::new("t")).unwrap();
        assert_eq!(back.header, model.header);
        assert_eq!(back.scores, model.scores);
        back.check(&game, Path::new("t")).unwrap();
    }

    #[test]
    fn learn_refuses_a_file_of_another_game() {
        let ttt = TicTacToe::new(3, 3).unwrap();
        let model = train(&ttt, 100, DEFAULT_RATE, 1, |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        let err = model
            .check(&Nim::new(21, false), Path::new("m.scores"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("trained on `tictactoe3x3k3` (roles x, o)"),
            "{err}"
        );
        assert!(err.contains("not on `nim"), "{err}");
        // Same name and roles, another initial state (as other rules of the same name would have).
        let mut other = model.clone();
        other.header.fingerprint ^= 1;
        let err = other.check(&ttt, Path::new("m")).unwrap_err().to_string();
        assert!(err.contains("whose rules differ"), "{err}");
        // The same rules under another name (a served match's id) are the same game.
        let four = TicTacToe::new(4, 3).unwrap();
        assert!(model.check(&four, Path::new("m")).is_err(), "another board");
    }

    #[test]
    fn learn_corrupt_files_give_errors_not_panics() {
        let p = Path::new("x");
        for text in [
            "",
            "hello",
            "ggp-learned 2\n",
            "ggp-learned 1\ngame g\n",
            "ggp-learned 1\ngame g\nroles a b\nfingerprint zz\n",
            "ggp-learned 1\ngame g\nroles a b\nfingerprint 1\nturns 1\nrate 0.3\nstates 1\n",
            "ggp-learned 1\ngame g\nroles a b\nfingerprint 1\nturns 1\nrate 0.3\nstates 1\n1 NaN\n",
            "ggp-learned 1\ngame g\nroles a b\nfingerprint 1\nturns 1\nrate 0.3\nstates 99999999999\n",
        ] {
            assert!(Model::parse(text, p).is_err(), "{text:?}");
        }
        // A file that ends early is placed at its last line.
        let e = Model::parse("ggp-learned 1\ngame g\n", p)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x: line 2: the file ends before the `roles` line");
    }
}
