//! Stage 5: replaying a reference trace (`../shared/conformance/FORMAT.md`) against a [`RuleGame`].
//!
//! The main entry point is [`replay`]: one case per playout, and for a failed playout the first
//! difference (step, what the trace says, what the engine says).

use std::fmt;

use super::rulegame::{RuleGame, RuleMove, RuleState};
use crate::game::Game;

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

struct Playout {
    number: usize,
    state: RuleState,
    step: usize,
    failed: Option<Difference>,
}

fn check(p: &mut Playout, what: &str, expected: String, actual: String) {
    if p.failed.is_none() && expected != actual {
        p.failed = Some(Difference {
            playout: p.number,
            step: p.step,
            what: what.into(),
            expected,
            actual,
        });
    }
}

/// Replays every playout of `trace` on `game` (see the module documentation).
pub fn replay(game: &RuleGame, trace: &str) -> ReplayReport {
    let mut report = ReplayReport::default();
    let mut cur: Option<Playout> = None;
    let mut legal_role = 0;
    let mut buf: Vec<RuleMove> = Vec::new();
    let finish = |p: Playout, report: &mut ReplayReport| match p.failed {
        Some(d) => report.failed.push(d),
        None => report.passed += 1,
    };
    for line in trace.lines() {
        let mut words = line.splitn(2, ' ');
        let tag = words.next().unwrap_or("");
        let rest = words.next().unwrap_or("");
        if tag == "roles" {
            let got = game.info().roles.join(" ");
            if got != rest {
                report.failed.push(Difference {
                    playout: 0,
                    step: 0,
                    what: "roles".into(),
                    expected: rest.into(),
                    actual: got,
                });
            }
            continue;
        }
        if tag == "playout" {
            if let Some(p) = cur.take() {
                finish(p, &mut report);
            }
            cur = Some(Playout {
                number: rest.trim().parse().unwrap_or(0),
                state: game.initial_state(),
                step: 0,
                failed: None,
            });
            legal_role = 0;
            continue;
        }
        let Some(p) = cur.as_mut() else { continue };
        if tag == "end" {
            if let Some(p) = cur.take() {
                finish(p, &mut report);
            }
            continue;
        }
        if p.failed.is_some() {
            continue;
        }
        let err = |e: super::EngineError| format!("error: {e}");
        match tag {
            "state" => {
                check(
                    p,
                    "state",
                    rest.into(),
                    game.state_facts(&p.state).join(" "),
                );
                legal_role = 0;
            }
            "legal" => {
                let role = legal_role;
                legal_role += 1;
                let actual = match game.try_legal(&p.state, role, &mut buf) {
                    Ok(()) => {
                        let mut v: Vec<&str> = buf.iter().map(|m| game.move_kif(*m)).collect();
                        v.insert(0, game.info().roles.get(role).map_or("?", |s| s.as_str()));
                        v.join(" ")
                    }
                    Err(e) => err(e),
                };
                check(p, "legal", rest.into(), actual);
                if p.failed.is_none() {
                    let t = game.try_terminal(&p.state);
                    check(
                        p,
                        "terminal",
                        "false".into(),
                        format!("{}", t.unwrap_or(true)),
                    );
                }
            }
            "does" => {
                let texts = split_terms(rest);
                let joint: Option<Vec<RuleMove>> =
                    texts.iter().map(|t| game.move_from_kif(t)).collect();
                match joint {
                    None => check(
                        p,
                        "does",
                        rest.into(),
                        "a move the engine does not know".into(),
                    ),
                    Some(j) => match game.try_next(&p.state, &j) {
                        Ok(s) => {
                            p.state = s;
                            p.step += 1;
                        }
                        Err(e) => check(p, "next state", "a state".into(), err(e)),
                    },
                }
            }
            "terminal" => {
                let t = game.try_terminal(&p.state).map_err(err);
                check(
                    p,
                    "terminal",
                    "true".into(),
                    match t {
                        Ok(b) => b.to_string(),
                        Err(e) => e,
                    },
                );
            }
            "goals" => {
                let mut got = Vec::new();
                for r in 0..game.info().num_roles() {
                    got.push(match game.goal_values(&p.state, r) {
                        Ok(v) if v.len() == 1 => v[0].to_string(),
                        Ok(v) => format!("{v:?}"),
                        Err(e) => err(e),
                    });
                }
                check(p, "goals", rest.into(), got.join(" "));
            }
            _ => {}
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
    use super::split_terms;

    #[test]
    fn terms_split_at_top_level_spaces() {
        assert_eq!(split_terms("(mark 1 1) noop"), vec!["(mark 1 1)", "noop"]);
        assert_eq!(
            split_terms("noop (move (a b) c)"),
            vec!["noop", "(move (a b) c)"]
        );
    }
}
