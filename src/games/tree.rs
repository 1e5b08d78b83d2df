//! Explicit game trees (seed 3's `ExplicitGame`), read from `.tree` files, for testing searchers.
//!
//! Syntax: `(name child child ...)` is an inner node, `name:value` a leaf whose estimate is the integer
//! `value` (negative numbers as `-2` or SML's `~2`); `;` starts a comment that runs to the end of the line.
//! The root belongs to maxie (role 0) and levels alternate; a node's moves are numbered 0, 1, ... in the
//! order its children are written.
//!
//! A leaf is a terminal state: a match plays down to one, and maxie wins it when its value is positive,
//! loses when negative (a draw at 0). A search may stop at any depth up to the tree's height: an inner
//! node at its horizon is estimated by the minimax value of its subtree (the tree is explicit, so the
//! estimate is exact), and at the depths the seeds give a search reaches exactly the leaves it did there.
//! [`TreeValues`] is the judgement the file gives, and logs every state it judges.

use std::fmt;
use std::sync::Mutex;

use crate::evaluators::{Estimate, Evaluator};
use crate::game::{Dynamics, Game, GameError, GameInfo, Goal, RoleIndex};

/// The no-op move of the role not in control.
pub const NOOP: u32 = u32::MAX;

/// A syntax error in a `.tree` file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct TreeError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}

#[derive(Clone, Debug)]
struct Node {
    name: String,
    children: Vec<u32>,
    /// `Some` for a leaf.
    value: Option<i32>,
    depth: u32,
}

/// An explicit game tree.
#[derive(Debug)]
pub struct TreeGame {
    info: GameInfo,
    nodes: Vec<Node>,
    /// Each node's minimax value (a leaf's own value).
    values: Vec<i32>,
}

/// Every node's minimax value. Children come after their parent (the parser numbers nodes in
/// preorder), so one pass from the end settles each node after its children, without recursion.
fn minimax_values(nodes: &[Node]) -> Vec<i32> {
    let mut values = vec![0; nodes.len()];
    for (id, n) in nodes.iter().enumerate().rev() {
        values[id] = match n.value {
            Some(v) => v,
            None => {
                let kids = n
                    .children
                    .iter()
                    .filter_map(|&c| values.get(c as usize).copied());
                let best = if n.depth % 2 == 0 {
                    kids.max()
                } else {
                    kids.min()
                };
                best.unwrap_or(0)
            }
        };
    }
    values
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open,
    Close,
    Colon,
    Word(String),
    End,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// The next token and the position where it starts.
    fn next(&mut self) -> Result<(Tok, usize, usize), TreeError> {
        loop {
            match self.chars.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some(';') => {
                    while self.chars.peek().is_some_and(|&c| c != '\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
        }
        let (line, column) = (self.line, self.column);
        let tok = match self.chars.peek().copied() {
            None => Tok::End,
            Some('(') => {
                self.bump();
                Tok::Open
            }
            Some(')') => {
                self.bump();
                Tok::Close
            }
            Some(':') => {
                self.bump();
                Tok::Colon
            }
            Some(c) if is_word_char(c) => {
                let mut w = String::new();
                while let Some(&c) = self.chars.peek() {
                    if !is_word_char(c) {
                        break;
                    }
                    w.push(c);
                    self.bump();
                }
                Tok::Word(w)
            }
            Some(c) => {
                return Err(TreeError {
                    line,
                    column,
                    message: format!("unexpected character `{c}`"),
                })
            }
        };
        Ok((tok, line, column))
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '~' || c == '.'
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Open => "`(`".to_string(),
        Tok::Close => "`)`".to_string(),
        Tok::Colon => "`:`".to_string(),
        Tok::Word(w) => format!("`{w}`"),
        Tok::End => "the end of the file".to_string(),
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Option<(Tok, usize, usize)>,
    nodes: Vec<Node>,
}

impl Parser<'_> {
    fn peek(&mut self) -> Result<&(Tok, usize, usize), TreeError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex.next()?);
        }
        Ok(self.peeked.as_ref().expect("just filled"))
    }

    fn take(&mut self) -> Result<(Tok, usize, usize), TreeError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex.next(),
        }
    }

    fn error(line: usize, column: usize, expected: &str, found: &Tok) -> TreeError {
        TreeError {
            line,
            column,
            message: format!("expected {expected}, found {}", describe(found)),
        }
    }

    /// node := `(` name node+ `)` | name `:` integer
    fn node(&mut self, depth: u32) -> Result<u32, TreeError> {
        if depth > 10_000 {
            let (_, line, column) = self.peek()?.clone();
            return Err(TreeError {
                line,
                column,
                message: "the tree is nested too deeply".to_string(),
            });
        }
        let (tok, line, column) = self.take()?;
        match tok {
            Tok::Open => {
                let name = match self.take()? {
                    (Tok::Word(w), _, _) => w,
                    (t, l, c) => return Err(Self::error(l, c, "a node name after `(`", &t)),
                };
                let id = self.nodes.len() as u32;
                self.nodes.push(Node {
                    name,
                    children: Vec::new(),
                    value: None,
                    depth,
                });
                loop {
                    match self.peek()?.clone() {
                        (Tok::Close, l, c) => {
                            self.take()?;
                            if self.nodes[id as usize].children.is_empty() {
                                return Err(Self::error(l, c, "a child node", &Tok::Close));
                            }
                            return Ok(id);
                        }
                        (Tok::End, l, c) => {
                            return Err(Self::error(l, c, "a child node or `)`", &Tok::End))
                        }
                        _ => {
                            let child = self.node(depth + 1)?;
                            self.nodes[id as usize].children.push(child);
                        }
                    }
                }
            }
            Tok::Word(name) => {
                match self.take()? {
                    (Tok::Colon, _, _) => {}
                    (t, l, c) => {
                        return Err(Self::error(
                            l,
                            c,
                            &format!("`:` and a value after leaf `{name}` (inner nodes are written `({name} child ...)`)"),
                            &t,
                        ))
                    }
                }
                let value = match self.take()? {
                    (Tok::Word(w), l, c) => parse_int(&w).ok_or_else(|| TreeError {
                        line: l,
                        column: c,
                        message: format!(
                            "expected an integer value for leaf `{name}`, found `{w}`"
                        ),
                    })?,
                    (t, l, c) => {
                        return Err(Self::error(
                            l,
                            c,
                            &format!("an integer value for leaf `{name}`"),
                            &t,
                        ))
                    }
                };
                let id = self.nodes.len() as u32;
                self.nodes.push(Node {
                    name,
                    children: Vec::new(),
                    value: Some(value),
                    depth,
                });
                Ok(id)
            }
            t => Err(Self::error(line, column, "`(` or a leaf `name:value`", &t)),
        }
    }
}

fn parse_int(w: &str) -> Option<i32> {
    match w.strip_prefix('~') {
        Some(rest) if !rest.starts_with(['-', '+']) => rest.parse::<i32>().ok().map(|n| -n),
        Some(_) => None,
        None => w.parse().ok(),
    }
}

impl TreeGame {
    /// Reads a tree from its text.
    pub fn parse(text: &str) -> Result<TreeGame, TreeError> {
        let mut p = Parser {
            lex: Lexer {
                chars: text.chars().peekable(),
                line: 1,
                column: 1,
            },
            peeked: None,
            nodes: Vec::new(),
        };
        p.node(0)?;
        match p.take()? {
            (Tok::End, _, _) => {}
            (t, l, c) => {
                return Err(Parser::error(
                    l,
                    c,
                    "the end of the file after the root node",
                    &t,
                ))
            }
        }
        Ok(TreeGame {
            info: GameInfo {
                name: p.nodes[0].name.clone(),
                roles: vec!["maxie".to_string(), "minnie".to_string()],
                dynamics: Dynamics::TurnTaking,
                zero_sum: true,
            },
            values: minimax_values(&p.nodes),
            nodes: p.nodes,
        })
    }

    /// The name of node `state`.
    pub fn name(&self, state: u32) -> &str {
        self.nodes
            .get(state as usize)
            .map_or("?", |n| n.name.as_str())
    }

    /// A leaf's value, or the minimax value of an inner node's subtree (maxie, at even depths,
    /// maximises).
    pub fn minimax_value(&self, state: u32) -> i32 {
        self.values.get(state as usize).copied().unwrap_or(0)
    }
}

impl fmt::Display for TreeGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn write(g: &TreeGame, id: usize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let n = &g.nodes[id];
            match n.value {
                Some(v) => write!(f, "{}:{v}", n.name),
                None => {
                    write!(f, "({}", n.name)?;
                    for &c in &n.children {
                        write!(f, " ")?;
                        write(g, c as usize, f)?;
                    }
                    write!(f, ")")
                }
            }
        }
        write(self, 0, f)
    }
}

impl Game for TreeGame {
    type State = u32;
    type Move = u32;

    fn info(&self) -> &GameInfo {
        &self.info
    }

    fn initial_state(&self) -> u32 {
        0
    }

    fn is_terminal(&self, state: &u32) -> bool {
        self.nodes
            .get(*state as usize)
            .is_some_and(|n| n.value.is_some())
    }

    fn legal_moves(&self, state: &u32, role: RoleIndex, out: &mut Vec<u32>) {
        out.clear();
        let Some(node) = self.nodes.get(*state as usize) else {
            return;
        };
        if role != (node.depth % 2) as usize {
            out.push(NOOP);
            return;
        }
        out.extend(0..node.children.len() as u32);
    }

    fn next_state(&self, state: &u32, joint: &[u32]) -> u32 {
        let mover = self.mover(state).unwrap_or(0);
        match joint.get(mover) {
            Some(mv) => self.play(state, mover, mv),
            None => *state,
        }
    }

    fn play(&self, state: &u32, _role: RoleIndex, mv: &u32) -> u32 {
        self.nodes
            .get(*state as usize)
            .and_then(|n| n.children.get(*mv as usize))
            .copied()
            .unwrap_or(*state)
    }

    fn goal(&self, state: &u32, role: RoleIndex) -> Goal {
        let v = self
            .nodes
            .get(*state as usize)
            .and_then(|n| n.value)
            .unwrap_or(0);
        let maxie = match v.signum() {
            1 => 100,
            -1 => 0,
            _ => 50,
        };
        if role == 0 {
            maxie
        } else {
            100 - maxie
        }
    }

    fn mover(&self, state: &u32) -> Option<RoleIndex> {
        self.nodes
            .get(*state as usize)
            .filter(|n| n.value.is_none())
            .map(|n| (n.depth % 2) as usize)
    }

    fn show_move(&self, mv: &u32) -> String {
        if *mv == NOOP {
            "noop".to_string()
        } else {
            mv.to_string()
        }
    }

    fn show_state(&self, state: &u32) -> String {
        match self.nodes.get(*state as usize) {
            Some(n) => {
                let children: Vec<&str> = n.children.iter().map(|&c| self.name(c)).collect();
                match n.value {
                    Some(v) => format!("leaf {} (value {v})\n", n.name),
                    None => format!("node {} (children {})\n", n.name, children.join(" ")),
                }
            }
            None => "?\n".to_string(),
        }
    }

    fn state_name(&self, state: &u32) -> Option<String> {
        Some(self.name(*state).to_string())
    }
}

/// The judgement a tree file gives: a leaf's value, and an inner node's subtree's minimax value (the
/// tree is explicit, so the judgement is exact). Every judgement is logged ("Estimating state e\[3\]")
/// so tests can check exactly which states a search looked at.
#[derive(Debug, Default)]
pub struct TreeValues {
    log: Mutex<Vec<String>>,
}

impl TreeValues {
    /// A judge with an empty log.
    pub fn new() -> TreeValues {
        TreeValues::default()
    }

    /// The judgements made so far, as the seed prints them (`Estimating state e[3]`), and clears the
    /// log. Parallel searches judge in no fixed order, so compare those as sets.
    pub fn take_estimate_log(&self) -> Vec<String> {
        match self.log.lock() {
            Ok(mut log) => std::mem::take(&mut *log),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// The names of the states judged so far (see [`TreeValues::take_estimate_log`]); clears the log.
    pub fn take_estimated_leaves(&self) -> Vec<String> {
        self.take_estimate_log()
            .into_iter()
            .map(|l| {
                let name = l.trim_start_matches("Estimating state ");
                name.split('[').next().unwrap_or(name).to_string()
            })
            .collect()
    }
}

impl Evaluator<TreeGame> for TreeValues {
    fn name(&self) -> String {
        "the tree's values".to_string()
    }

    fn estimate(&self, game: &TreeGame, state: &u32) -> Result<Estimate, GameError> {
        let node = game
            .nodes
            .get(*state as usize)
            .ok_or_else(|| GameError::Rules(format!("no tree node {state}")))?;
        let v = game.minimax_value(*state);
        let line = format!("Estimating state {}[{}]", node.name, Estimate::Guess(v))
            .replace("[Guess:", "[");
        match self.log.lock() {
            Ok(mut log) => log.push(line),
            Err(poisoned) => poisoned.into_inner().push(line),
        }
        Ok(Estimate::Guess(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_error(text: &str, line: usize, column: usize, needle: &str) {
        match TreeGame::parse(text) {
            Ok(t) => panic!("{text:?} parsed as {t}"),
            Err(e) => {
                assert_eq!((e.line, e.column), (line, column), "{text:?}: {e}");
                assert!(e.message.contains(needle), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn bad_trees_are_reported_with_positions() {
        check_error("", 1, 1, "expected `(` or a leaf");
        check_error("(a b:1", 1, 7, "expected a child node or `)`");
        check_error("(a)", 1, 3, "expected a child node");
        check_error("(a b)", 1, 5, "expected `:` and a value after leaf `b`");
        check_error("(a\n  b:x)", 2, 5, "expected an integer value for leaf `b`");
        check_error("(a b:1) c", 1, 9, "the end of the file");
        check_error("(a b:1 # )", 1, 8, "unexpected character `#`");
        check_error("((a b:1))", 1, 2, "a node name");
    }

    #[test]
    fn trees_round_trip_and_number_moves_in_order() {
        let text = "(a (b c:3 d:6 e:-2) (f g:6 h:4 i:~10)) ; comment";
        let t = TreeGame::parse(text).unwrap();
        assert_eq!(t.to_string(), "(a (b c:3 d:6 e:-2) (f g:6 h:4 i:-10))");
        let f = t.play(&0, 0, &1);
        assert_eq!(t.name(f), "f");
        assert_eq!(t.mover(&f), Some(1));
        let i = t.play(&f, 1, &2);
        let values = TreeValues::new();
        assert_eq!(values.estimate(&t, &i).unwrap(), Estimate::Guess(-10));
        assert_eq!(
            values.take_estimate_log(),
            vec!["Estimating state i[~10]".to_string()]
        );
        // An inner node is worth its subtree's minimax value; a leaf ends the game.
        assert_eq!(values.estimate(&t, &f).unwrap(), Estimate::Guess(-10));
        assert_eq!(t.minimax_value(0), -2);
        assert!(t.is_terminal(&i) && !t.is_terminal(&f));
        assert_eq!(t.mover(&i), None);
        assert_eq!(t.goal(&i, 0), 0);
        assert_eq!(t.goal(&i, 1), 100);
    }
}
