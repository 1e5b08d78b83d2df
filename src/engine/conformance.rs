//! Stage 5: replaying a reference trace (`../shared/conformance/FORMAT.md`) against a game of either
//! engine.
//!
//! The main entry point is [`replay`], generic over [`TraceGame`] (implemented by [`RuleGame`] here and
//! by the network's `NetGame`): one case per playout, and for a failed playout the first difference
//! (step, what the trace says, what the engine says).

use std::fmt;

use super::rulegame::{RuleGame, RuleMove};
use super::BitState;
use crate::game::{Game, Goal, RoleIndex};

/// The first difference of a failed playout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The playout number.
    pub playout: usize,
    /// The step (number of joint moves played before it).
    pub step: usize,
    /// What was compared.
    pub what: String,
    /// What the trace says.
    pub expected: String,
    /// What the engine says.
    pub actual: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "playout {} step {}: {}: trace says `{}`, engine says `{}`",
            self.playout, self.step, self.what, self.expected, self.actual
        )
    }
}

/// The result of replaying a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Playouts that matched.
    pub passed: usize,
    /// The first difference of each playout that did not.
    pub failed: Vec<Difference>,
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} passed, {} failed", self.passed, self.failed.len())?;
        for d in &self.failed {
            writeln!(f, "  {d}")?;
        }
        Ok(())
    }
}

/// What a trace compares, asked of a game in the trace's own terms (KIF text), with failures as text so
/// that an engine error shows up as the difference it causes. Both engines implement it, so one
/// [`replay`] checks either against the same traces.
pub trait TraceGame: Game {
    /// The state's facts as KIF, sorted by bytes.
    fn trace_state(&self, state: &Self::State) -> Vec<String>;
    /// The legal moves of `role` as KIF, sorted by bytes.
    fn trace_legal(&self, state: &Self::State, role: RoleIndex) -> Result<Vec<String>, String>;
    /// Whether `state` is terminal.
    fn trace_terminal(&self, state: &Self::State) -> Result<bool, String>;
    /// Every goal value the rules give `role` in `state` (normally exactly one).
    fn trace_goals(&self, state: &Self::State, role: RoleIndex) -> Result<Vec<Goal>, String>;
    /// The move whose KIF text is `text`, if the game knows it.
    fn trace_move(&self, text: &str) -> Option<Self::Move>;
    /// The state after `joint`.
    fn trace_next(&self, state: &Self::State, joint: &[Self::Move]) -> Result<Self::State, String>;
}

impl TraceGame for RuleGame {
    fn trace_state(&self, state: &BitState) -> Vec<String> {
        self.state_facts(state)
    }

    fn trace_legal(&self, state: &BitState, role: RoleIndex) -> Result<Vec<String>, String> {
        let mut buf = Vec::new();
        self.try_legal(state, role, &mut buf)
            .map_err(|e| format!("error: {e}"))?;
        Ok(buf.iter().map(|m| self.move_kif(*m).to_string()).collect())
    }

    fn trace_terminal(&self, state: &BitState) -> Result<bool, String> {
        self.try_terminal(state).map_err(|e| format!("error: {e}"))
    }

    fn trace_goals(&self, state: &BitState, role: RoleIndex) -> Result<Vec<Goal>, String> {
        self.goal_values(state, role)
            .map_err(|e| format!("error: {e}"))
    }

    fn trace_move(&self, text: &str) -> Option<RuleMove> {
        self.move_from_kif(text)
    }

    fn trace_next(&self, state: &BitState, joint: &[RuleMove]) -> Result<BitState, String> {
        self.try_next(state, joint)
            .map_err(|e| format!("error: {e}"))
    }
}

struct Playout<S> {
    number: usize,
    state: S,
    step: usize,
    failed: Option<Difference>,
}

impl<S> Playout<S> {
    fn check(&mut self, what: &str, expected: &str, actual: String) {
        if self.failed.is_none() && expected != actual {
            self.failed = Some(Difference {
                playout: self.number,
                step: self.step,
                what: what.into(),
                expected: expected.into(),
                actual,
            });
        }
    }
}

/// Replays every playout of `trace` on `game` (see the module documentation). A `roles` line that
/// differs from the game's roles fails every playout at its first step.
pub fn replay<G: TraceGame>(game: &G, trace: &str) -> ReplayReport {
    let mut report = ReplayReport::default();
    let mut cur: Option<Playout<G::State>> = None;
    let mut roles_differ: Option<String> = None;
    let mut legal_role = 0;
    let finish = |p: Playout<G::State>, report: &mut ReplayReport| match p.failed {
        Some(d) => report.failed.push(d),
        None => report.passed += 1,
    };
    let show = |r: Result<String, String>| r.unwrap_or_else(|e| e);
    // A line the format does not know fails where it stands: a harness that skipped it would pass a
    // trace it never read.
    let unknown = |number: usize, step: usize, at: usize, line: &str| Difference {
        playout: number,
        step,
        what: "trace record".into(),
        expected: "a record of shared/conformance/FORMAT.md".into(),
        actual: format!(
            "line {}: `{}`",
            at + 1,
            line.chars().take(80).collect::<String>()
        ),
    };
    for (at, line) in trace.lines().enumerate() {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "roles" => {
                let got = game.info().roles.join(" ");
                roles_differ = (got != rest).then(|| rest.to_string());
                continue;
            }
            "playout" => {
                if let Some(p) = cur.take() {
                    finish(p, &mut report);
                }
                let number = rest.trim().parse();
                let mut p = Playout {
                    number: *number.as_ref().unwrap_or(&report.failed.len()),
                    state: game.initial_state(),
                    step: 0,
                    failed: None,
                };
                if number.is_err() {
                    p.failed = Some(unknown(p.number, 0, at, line));
                }
                if let Some(expected) = &roles_differ {
                    p.check("roles", expected, game.info().roles.join(" "));
                }
                cur = Some(p);
                legal_role = 0;
                continue;
            }
            "end" => {
                if let Some(p) = cur.take() {
                    finish(p, &mut report);
                }
                continue;
            }
            _ => {}
        }
        let Some(p) = cur.as_mut() else {
            if !line.trim().is_empty() {
                let number = report.passed + report.failed.len();
                report.failed.push(unknown(number, 0, at, line));
            }
            continue;
        };
        if p.failed.is_some() {
            continue;
        }
        match tag {
            "state" => {
                let got = game.trace_state(&p.state).join(" ");
                p.check("state", rest, got);
                legal_role = 0;
            }
            "legal" => {
                let role = legal_role;
                legal_role += 1;
                let name = game.info().roles.get(role).map_or("?", |s| s.as_str());
                let got = game.trace_legal(&p.state, role).map(|moves| {
                    std::iter::once(name.to_string())
                        .chain(moves)
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                p.check("legal", rest, show(got));
                let t = game.trace_terminal(&p.state).map(|t| t.to_string());
                p.check("terminal", "false", show(t));
            }
            "does" => {
                let joint: Option<Vec<G::Move>> = split_terms(rest)
                    .iter()
                    .map(|t| game.trace_move(t))
                    .collect();
                match joint {
                    Some(j) if j.len() == game.info().num_roles() => {
                        match game.trace_next(&p.state, &j) {
                            Ok(s) => {
                                p.state = s;
                                p.step += 1;
                            }
                            Err(e) => p.check("next state", "a state", e),
                        }
                    }
                    _ => p.check("does", rest, "a joint move the engine does not know".into()),
                }
            }
            "terminal" => {
                let t = game.trace_terminal(&p.state).map(|t| t.to_string());
                p.check("terminal", "true", show(t));
            }
            "goals" => {
                let got: Vec<String> = (0..game.info().num_roles())
                    .map(|r| match game.trace_goals(&p.state, r) {
                        Ok(v) if v.len() == 1 => v[0].to_string(),
                        Ok(v) => format!("{v:?}"),
                        Err(e) => e,
                    })
                    .collect();
                p.check("goals", rest, got.join(" "));
            }
            // A long game's playout stopped before its end: nothing to check.
            "cut" => {}
            _ if line.trim().is_empty() => {}
            _ => p.failed = Some(unknown(p.number, p.step, at, line)),
        }
    }
    if let Some(p) = cur.take() {
        finish(p, &mut report);
    }
    report
}

/// Splits a line of space-separated KIF terms, keeping parenthesised terms whole.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = None;
    for (i, c) in s.char_indices() {
        match c {
            ' ' if depth == 0 => {
                if let Some(st) = start.take() {
                    out.push(&s[st..i]);
                }
            }
            _ => {
                if start.is_none() {
                    start = Some(i);
                }
                if c == '(' {
                    depth += 1;
                } else if c == ')' {
                    depth -= 1;
                }
            }
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-step game: `go` from `a` to `b`, which ends it.
    fn one_step() -> RuleGame {
        let rules = "(role r) (init (a)) (<= (next (b)) (does r go)) (legal r go) \
                     (<= terminal (true (b))) (goal r 100)";
        let program = crate::syntax::parse_kif(rules).expect("parses");
        RuleGame::from_program(&program, "one step").expect("loads")
    }

    #[test]
    fn a_record_the_format_does_not_know_fails_its_playout_with_its_line() {
        let good =
            "roles r\nplayout 0\nstate a\nlegal r go\ndoes go\nstate b\nterminal\ngoals 100\nend\n";
        let report = replay(&one_step(), good);
        assert_eq!((report.passed, report.failed.len()), (1, 0), "{report}");
        let cut = good.replace("terminal\ngoals 100\n", "cut\n");
        let report = replay(&one_step(), &cut);
        assert_eq!((report.passed, report.failed.len()), (1, 0), "{report}");
        for (bad, line) in [
            (
                good.replace("legal r go", "legl r go"),
                "line 4: `legl r go`",
            ),
            (
                good.replace("playout 0", "playout zero"),
                "line 2: `playout zero`",
            ),
            (format!("{good}goals 100\n"), "line 10: `goals 100`"),
        ] {
            let report = replay(&one_step(), &bad);
            assert_eq!(report.failed.len(), 1, "{bad}: {report}");
            assert_eq!(report.failed[0].actual, line, "{bad}");
        }
    }

    #[test]
    fn terms_split_at_top_level_spaces() {
        assert_eq!(split_terms("(mark 1 1) noop"), vec!["(mark 1 1)", "noop"]);
        assert_eq!(
            split_terms("noop (move (a b) c)"),
            vec!["noop", "(move (a b) c)"]
        );
    }
}
