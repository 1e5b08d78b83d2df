//! The seeds' search traces as data, and their two printings.
//!
//! A search that is asked for a trace records one [`TraceEvent`] per line of seed 3's Figure 4
//! ("Evaluating state (Maxie,c) with ab=(Pruned,Pruned)", "Result of ... is ..."). The events hold the
//! role, the state, the bounds and the values, not text, so that one trace prints two ways:
//!
//! - [`seeds_text`]: the seeds' own notation, byte for byte (Maxie and Minnie, `Guess:~2`, states by
//!   their names or 12 hex digits of their hash), what the seeds' figures are compared with;
//! - [`Readable`]: the game's own role names, negative numbers with a minus, states without a natural
//!   name numbered `s1`, `s2`... in order of appearance, and guesses on the goal scale where the
//!   evaluator says what they mean there.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::bounds::{AlphaBeta, SearchResult, Value};
use crate::evaluators::{Estimate, Outcome};
use crate::game::{Game, RoleIndex};

/// A state as a trace names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceNode {
    /// The role to move (the seeds' Maxie is role 0).
    pub role: RoleIndex,
    /// The game's name for the state, when it has one ([`Game::state_name`]).
    pub name: Option<String>,
    /// 48 bits of the state's hash: how a state without a name is told apart.
    pub hash: u64,
}

impl TraceNode {
    /// The node of `state` with `role` to move.
    pub fn of<G: Game>(game: &G, role: RoleIndex, state: &G::State) -> TraceNode {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        state.hash(&mut h);
        TraceNode {
            role,
            name: game.state_name(state),
            hash: h.finish() & 0xffff_ffff_ffff,
        }
    }
}

/// What a node was worth, as the trace reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeResult {
    /// Minimax's value.
    Estimate(Estimate),
    /// Alpha-beta's and Jamboree's result, which may be a pruning.
    Bounded(SearchResult),
}

/// One line of a seeds' search trace (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// The search starts at the root, with the bounds alpha-beta starts from.
    Searching {
        /// The root.
        node: TraceNode,
        /// The root's bounds (none for minimax).
        bounds: Option<AlphaBeta>,
    },
    /// A node is entered.
    Evaluating {
        /// The node.
        node: TraceNode,
        /// The bounds it is searched with (none for minimax).
        bounds: Option<AlphaBeta>,
    },
    /// A node's result.
    Result {
        /// The node.
        node: TraceNode,
        /// What it was worth.
        result: NodeResult,
    },
    /// The search's conclusion: the root's value and the index of the best move.
    Conclusion {
        /// The root.
        root: TraceNode,
        /// Its value.
        value: Estimate,
        /// The chosen move's index in the mover's legal moves.
        best: usize,
    },
    /// How many leaves were estimated.
    Terminals(u64),
}

/// The seeds' name of a role in traces.
pub fn role_label(role: RoleIndex) -> &'static str {
    if role == 0 {
        "Maxie"
    } else {
        "Minnie"
    }
}

/// A trace in the seeds' notation, one string a line (blank lines where the seeds have them).
pub fn seeds_text(events: &[TraceEvent]) -> Vec<String> {
    let label = |n: &TraceNode| {
        let name = n.name.clone().unwrap_or_else(|| format!("{:012x}", n.hash));
        format!("({},{name})", role_label(n.role))
    };
    let with = |b: &Option<AlphaBeta>| b.map(|ab| format!(" with {ab}")).unwrap_or_default();
    let result = |r: &NodeResult| match r {
        NodeResult::Estimate(e) => e.to_string(),
        NodeResult::Bounded(r) => r.to_string(),
    };
    let mut out = Vec::with_capacity(events.len() + 4);
    for e in events {
        match e {
            TraceEvent::Searching { node, bounds } => {
                out.push(format!("Searching state {}{}", label(node), with(bounds)));
                out.push(String::new());
            }
            TraceEvent::Evaluating { node, bounds } => {
                out.push(format!("Evaluating state {}{}", label(node), with(bounds)))
            }
            TraceEvent::Result { node, result: r } => {
                out.push(format!("Result of {} is {}", label(node), result(r)))
            }
            TraceEvent::Conclusion { root, value, best } => {
                out.push(String::new());
                out.push(format!(
                    "Therefore value of {} is {value}, and best move is {best}.",
                    label(root)
                ));
                out.push(String::new());
            }
            TraceEvent::Terminals(n) => out.push(format!("Terminals visited: {n}")),
        }
    }
    out
}

/// Prints trace events and values for people (see the module documentation). It numbers the unnamed
/// states it meets, so one `Readable` serves one search.
pub struct Readable<'a> {
    roles: &'a [String],
    goal_of: &'a dyn Fn(i32) -> Option<f64>,
    numbers: HashMap<u64, usize>,
}

impl<'a> Readable<'a> {
    /// A printer for a game with these roles, whose guesses mean `goal_of(guess)` on the goal scale
    /// when that says something (see [`crate::evaluators::Evaluator::expected_goal`]).
    pub fn new(roles: &'a [String], goal_of: &'a dyn Fn(i32) -> Option<f64>) -> Readable<'a> {
        Readable {
            roles,
            goal_of,
            numbers: HashMap::new(),
        }
    }

    fn role(&self, role: RoleIndex) -> &str {
        self.roles.get(role).map_or("?", String::as_str)
    }

    fn label(&mut self, n: &TraceNode) -> String {
        let name = match &n.name {
            Some(name) => name.clone(),
            None => {
                let next = self.numbers.len() + 1;
                format!("s{}", *self.numbers.entry(n.hash).or_insert(next))
            }
        };
        format!("({},{name})", self.role(n.role))
    }

    /// An estimate: `Guess:62.5` where the guess has a goal meaning, `Guess:-2` where not,
    /// `Definitely:Winner x`.
    pub fn estimate(&self, e: Estimate) -> String {
        match e {
            Estimate::Guess(n) => match (self.goal_of)(n) {
                Some(goal) => format!("Guess:{goal:.1}"),
                None => format!("Guess:{n}"),
            },
            Estimate::Definitely(Outcome::Draw) => "Definitely:Draw".to_string(),
            Estimate::Definitely(Outcome::Winner(r)) => {
                format!("Definitely:Winner {}", self.role(r))
            }
        }
    }

    fn value(&self, v: Value) -> String {
        match v {
            Value::Pruned => "Pruned".to_string(),
            Value::Best { est, .. } => self.estimate(est),
        }
    }

    fn bounds(&self, b: &Option<AlphaBeta>) -> String {
        b.map(|ab| {
            format!(
                " with ab=({},{})",
                self.value(ab.alpha),
                self.value(ab.beta)
            )
        })
        .unwrap_or_default()
    }

    fn result(&self, r: &NodeResult) -> String {
        match r {
            NodeResult::Estimate(e) => self.estimate(*e),
            NodeResult::Bounded(SearchResult::ParentPrune) => "ParentPrune".to_string(),
            NodeResult::Bounded(SearchResult::Value(v)) => self.value(*v),
        }
    }

    /// The trace's lines, as [`seeds_text`] lays them out.
    pub fn lines(&mut self, events: &[TraceEvent]) -> Vec<String> {
        let mut out = Vec::with_capacity(events.len() + 4);
        for e in events {
            match e {
                TraceEvent::Searching { node, bounds } => {
                    let l = self.label(node);
                    out.push(format!("Searching state {l}{}", self.bounds(bounds)));
                    out.push(String::new());
                }
                TraceEvent::Evaluating { node, bounds } => {
                    let l = self.label(node);
                    out.push(format!("Evaluating state {l}{}", self.bounds(bounds)));
                }
                TraceEvent::Result { node, result } => {
                    let l = self.label(node);
                    out.push(format!("Result of {l} is {}", self.result(result)));
                }
                TraceEvent::Conclusion { root, value, best } => {
                    let l = self.label(root);
                    out.push(String::new());
                    out.push(format!(
                        "Therefore value of {l} is {}, and best move is {best}.",
                        self.estimate(*value)
                    ));
                    out.push(String::new());
                }
                TraceEvent::Terminals(n) => out.push(format!("Terminals visited: {n}")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: RoleIndex, name: Option<&str>, hash: u64) -> TraceNode {
        TraceNode {
            role,
            name: name.map(str::to_string),
            hash,
        }
    }

    #[test]
    fn one_trace_prints_the_seeds_way_and_the_readable_way() {
        let guess = |n| Value::Best {
            mv: 0,
            est: Estimate::Guess(n),
        };
        let events = vec![
            TraceEvent::Searching {
                node: node(0, None, 0xabc),
                bounds: Some(AlphaBeta::NONE),
            },
            TraceEvent::Evaluating {
                node: node(1, None, 0xdef),
                bounds: Some(AlphaBeta {
                    alpha: Value::Pruned,
                    beta: guess(-40),
                }),
            },
            TraceEvent::Result {
                node: node(1, None, 0xdef),
                result: NodeResult::Bounded(SearchResult::ParentPrune),
            },
            TraceEvent::Result {
                node: node(1, Some("b"), 1),
                result: NodeResult::Estimate(Estimate::Definitely(Outcome::Winner(1))),
            },
            TraceEvent::Conclusion {
                root: node(0, None, 0xabc),
                value: Estimate::Guess(-40),
                best: 2,
            },
            TraceEvent::Terminals(7),
        ];
        assert_eq!(
            seeds_text(&events),
            [
                "Searching state (Maxie,000000000abc) with ab=(Pruned,Pruned)",
                "",
                "Evaluating state (Minnie,000000000def) with ab=(Pruned,Guess:~40)",
                "Result of (Minnie,000000000def) is ParentPrune",
                "Result of (Minnie,b) is Definitely:Winner Minnie",
                "",
                "Therefore value of (Maxie,000000000abc) is Guess:~40, and best move is 2.",
                "",
                "Terminals visited: 7",
            ]
        );
        let roles = ["red".to_string(), "black".to_string()];
        let on_goal_scale = |n: i32| Some(50.0 + f64::from(n) / 20.0);
        let text = Readable::new(&roles, &on_goal_scale).lines(&events);
        assert_eq!(text[0], "Searching state (red,s1) with ab=(Pruned,Pruned)");
        assert_eq!(
            text[2],
            "Evaluating state (black,s2) with ab=(Pruned,Guess:48.0)"
        );
        assert_eq!(text[4], "Result of (black,b) is Definitely:Winner black");
        assert_eq!(
            text[6],
            "Therefore value of (red,s1) is Guess:48.0, and best move is 2."
        );
        let plain = |_| None;
        let text = Readable::new(&roles, &plain).lines(&events);
        assert_eq!(
            text[2],
            "Evaluating state (black,s2) with ab=(Pruned,Guess:-40)"
        );
    }
}
