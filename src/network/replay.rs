//! Replaying a reference trace (`../shared/conformance/FORMAT.md`) against a [`NetGame`], with the same
//! report types and the same comparisons as [`crate::engine::conformance::replay`].

use super::{NetGame, NetMove, NetState};
use crate::engine::conformance::{Difference, ReplayReport};
use crate::game::Game;

struct Playout {
    number: usize,
    state: NetState,
    step: usize,
    failed: Option<Difference>,
}

fn check(p: &mut Playout, what: &str, expected: &str, actual: String) {
    if p.failed.is_none() && expected != actual {
        p.failed = Some(Difference {
            playout: p.number,
            step: p.step,
            what: what.into(),
            expected: expected.into(),
            actual,
        });
    }
}

/// Replays every playout of `trace` on `game`: one case per playout, the first difference of each failed
/// one reported.
pub fn replay(game: &NetGame, trace: &str) -> ReplayReport {
    let mut report = ReplayReport::default();
    let mut cur: Option<Playout> = None;
    let mut legal_role = 0;
    let mut buf: Vec<NetMove> = Vec::new();
    let finish = |p: Playout, report: &mut ReplayReport| match p.failed {
        Some(d) => report.failed.push(d),
        None => report.passed += 1,
    };
    for line in trace.lines() {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "roles" => {
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
            "playout" => {
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
            "end" => {
                if let Some(p) = cur.take() {
                    finish(p, &mut report);
                }
                continue;
            }
            _ => {}
        }
        let Some(p) = cur.as_mut() else { continue };
        if p.failed.is_some() {
            continue;
        }
        match tag {
            "state" => {
                let got = game.state_facts(&p.state).join(" ");
                check(p, "state", rest, got);
                legal_role = 0;
            }
            "legal" => {
                let role = legal_role;
                legal_role += 1;
                game.legal_moves(&p.state, role, &mut buf);
                let mut v: Vec<&str> = buf.iter().map(|m| game.move_kif(*m)).collect();
                v.insert(0, game.info().roles.get(role).map_or("?", |s| s.as_str()));
                check(p, "legal", rest, v.join(" "));
                let t = game.is_terminal(&p.state);
                check(p, "terminal", "false", t.to_string());
            }
            "does" => {
                let joint: Option<Vec<NetMove>> = split_terms(rest)
                    .iter()
                    .map(|t| game.move_from_kif(t))
                    .collect();
                match joint {
                    Some(j) if j.len() == game.info().num_roles() => {
                        p.state = game.next_state(&p.state, &j);
                        p.step += 1;
                    }
                    _ => check(p, "does", rest, "a move the network does not know".into()),
                }
            }
            "terminal" => {
                let t = game.is_terminal(&p.state);
                check(p, "terminal", "true", t.to_string());
            }
            "goals" => {
                let got: Vec<String> = (0..game.info().num_roles())
                    .map(|r| match game.goal_values(&p.state, r) {
                        v if v.len() == 1 => v[0].to_string(),
                        v => format!("{v:?}"),
                    })
                    .collect();
                check(p, "goals", rest, got.join(" "));
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
