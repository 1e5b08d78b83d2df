//! The protocol's messages: KIF s-expressions read leniently (keywords in any letter case, any white
//! space, `;` comments) and printed the way every GGP system reads them.
//!
//! Rules and moves inside a message are kept as text, sliced from the message itself: the game engines
//! parse rules, and [`crate::game::Game::parse_move`] reads moves leniently against the legal ones.

use crate::diagnostics::count;
use std::fmt;

/// How deeply lists may nest in a message. Real game descriptions nest a dozen levels; the limit keeps a
/// hostile message from costing more than its length.
pub const MAX_NESTING: usize = 1_000;

/// An s-expression with the byte range of the text it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sexp {
    /// A symbol, number, variable or quoted string, as written.
    Atom(String, std::ops::Range<usize>),
    /// A parenthesised list.
    List(Vec<Sexp>, std::ops::Range<usize>),
}

impl Sexp {
    /// The byte range of the source text this expression was read from.
    pub fn span(&self) -> std::ops::Range<usize> {
        match self {
            Sexp::Atom(_, s) | Sexp::List(_, s) => s.clone(),
        }
    }

    /// The atom's text, if this is an atom.
    pub fn atom(&self) -> Option<&str> {
        match self {
            Sexp::Atom(a, _) => Some(a),
            Sexp::List(..) => None,
        }
    }

    /// Whether this is the atom `word`, in any letter case.
    pub fn is_word(&self, word: &str) -> bool {
        self.atom().is_some_and(|a| a.eq_ignore_ascii_case(word))
    }
}

impl fmt::Display for Sexp {
    /// Compact KIF: `(mark 1 1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sexp::Atom(a, _) => f.write_str(a),
            Sexp::List(items, _) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Why a message could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// The text is not a well-formed s-expression.
    #[error("malformed message: {0}")]
    Syntax(String),
    /// The s-expression is not a message this protocol knows.
    #[error("unknown message: {0} (expected info, preview, start, play, stop or abort)")]
    Unknown(String),
    /// A known message with the wrong arguments.
    #[error("bad `{kind}` message: {why}")]
    Arguments {
        /// The message's keyword.
        kind: &'static str,
        /// What is wrong.
        why: String,
    },
}

/// Reads every top-level s-expression of `src`.
///
/// The parser is iterative, so nesting depth costs no stack, and it stops at [`MAX_NESTING`] levels.
pub fn parse_sexps(src: &str) -> Result<Vec<Sexp>, MessageError> {
    // Each open list: its start offset and the items read so far.
    let mut stack: Vec<(usize, Vec<Sexp>)> = Vec::new();
    let mut top: Vec<Sexp> = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'(' => {
                if stack.len() >= MAX_NESTING {
                    return Err(MessageError::Syntax(format!(
                        "lists nested deeper than {MAX_NESTING} levels"
                    )));
                }
                stack.push((i, Vec::new()));
                i += 1;
            }
            b')' => {
                let (start, items) = stack
                    .pop()
                    .ok_or_else(|| MessageError::Syntax(format!("unbalanced `)` at byte {i}")))?;
                let list = Sexp::List(items, start..i + 1);
                match stack.last_mut() {
                    Some((_, parent)) => parent.push(list),
                    None => top.push(list),
                }
                i += 1;
            }
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                if c == b'"' {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += 1;
                    }
                    if i == bytes.len() {
                        return Err(MessageError::Syntax(format!(
                            "unterminated string at byte {start}"
                        )));
                    }
                    i += 1;
                } else {
                    while i < bytes.len()
                        && !bytes[i].is_ascii_whitespace()
                        && !matches!(bytes[i], b'(' | b')' | b';' | b'"')
                    {
                        i += 1;
                    }
                }
                // Slicing is safe: every boundary above is an ASCII byte or the end.
                let atom = Sexp::Atom(src[start..i].to_string(), start..i);
                match stack.last_mut() {
                    Some((_, parent)) => parent.push(atom),
                    None => top.push(atom),
                }
            }
        }
    }
    if let Some((start, _)) = stack.last() {
        return Err(MessageError::Syntax(format!(
            "the list opened at byte {start} is never closed"
        )));
    }
    Ok(top)
}

/// Reads exactly one s-expression (a move, a reply).
pub fn parse_one(src: &str) -> Result<Sexp, MessageError> {
    let mut all = parse_sexps(src)?;
    match all.len() {
        1 => Ok(all.remove(0)),
        0 => Err(MessageError::Syntax("empty text".into())),
        n => Err(MessageError::Syntax(format!(
            "{n} expressions where one was expected"
        ))),
    }
}

/// Rewrites KIF text compactly: comments dropped, one space between items (`(mark 1 1)`).
pub fn compact_kif(src: &str) -> Result<String, MessageError> {
    let sexps = parse_sexps(src)?;
    Ok(sexps
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" "))
}

/// ggp-base's spelling of a KIF term in match records: a space inside every parenthesis,
/// `( mark 1 1 )`. Text that does not parse is returned trimmed.
pub fn ggp_base_spacing(kif: &str) -> String {
    fn write(s: &Sexp, out: &mut String) {
        match s {
            Sexp::Atom(a, _) => out.push_str(a),
            Sexp::List(items, _) => {
                out.push('(');
                for item in items {
                    out.push(' ');
                    write(item, out);
                }
                out.push_str(" )");
            }
        }
    }
    match parse_one(kif) {
        Ok(s) => {
            let mut out = String::new();
            write(&s, &mut out);
            out
        }
        Err(_) => kif.trim().to_string(),
    }
}

/// A message from a game manager to a player.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// `(info)`: who are you, are you free?
    Info,
    /// `(preview (RULES...) CLOCK)`: a game to look at before a match.
    Preview {
        /// The rules, the text inside the list.
        rules: String,
        /// Seconds to look.
        clock: f64,
    },
    /// `(start MATCHID ROLE (RULES...) STARTCLOCK PLAYCLOCK)`.
    Start {
        /// The match id.
        match_id: String,
        /// The role to play, as the rules name it.
        role: String,
        /// The rules, the text inside the list.
        rules: String,
        /// Seconds to prepare.
        start_clock: f64,
        /// Seconds per move.
        play_clock: f64,
    },
    /// `(play MATCHID nil)` or `(play MATCHID (M1 ... Mk))`: the last joint move, none on the first step.
    Play {
        /// The match id.
        match_id: String,
        /// One move per role in role order, as KIF text; `None` on the first step.
        moves: Option<Vec<String>>,
    },
    /// `(stop MATCHID (M1 ... Mk))`: the match is over, after this last joint move.
    Stop {
        /// The match id.
        match_id: String,
        /// The last joint move, as KIF text, if the manager sent it.
        moves: Option<Vec<String>>,
    },
    /// `(abort MATCHID)`: the match ends without a result.
    Abort {
        /// The match id.
        match_id: String,
    },
}

impl Message {
    /// The message's keyword, lower case (`play`).
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Info => "info",
            Message::Preview { .. } => "preview",
            Message::Start { .. } => "start",
            Message::Play { .. } => "play",
            Message::Stop { .. } => "stop",
            Message::Abort { .. } => "abort",
        }
    }

    /// The match id, for the messages that have one.
    pub fn match_id(&self) -> Option<&str> {
        match self {
            Message::Start { match_id, .. }
            | Message::Play { match_id, .. }
            | Message::Stop { match_id, .. }
            | Message::Abort { match_id } => Some(match_id),
            Message::Info | Message::Preview { .. } => None,
        }
    }

    /// Reads a message; keywords (and `nil`) in any letter case.
    pub fn parse(src: &str) -> Result<Message, MessageError> {
        let sexp = parse_one(src)?;
        let items = match &sexp {
            Sexp::List(items, _) if !items.is_empty() => items,
            // ggp-base's managers send `(info)`, but a bare `info` is as clear.
            Sexp::Atom(..) if sexp.is_word("info") => return Ok(Message::Info),
            other => return Err(MessageError::Unknown(short(&other.to_string()))),
        };
        let keyword = items[0]
            .atom()
            .ok_or_else(|| MessageError::Unknown(short(&sexp.to_string())))?
            .to_ascii_lowercase();
        let args = &items[1..];
        let inner = |s: &Sexp| -> String {
            let span = s.span();
            // The text between the list's parentheses, as sent: the rules' own layout is kept.
            src.get(span.start + 1..span.end.saturating_sub(1))
                .unwrap_or_default()
                .to_string()
        };
        let text = |s: &Sexp| src.get(s.span()).unwrap_or_default().to_string();
        match keyword.as_str() {
            "info" => Ok(Message::Info),
            "preview" => {
                let kind = "preview";
                expect_len(kind, args, 2)?;
                Ok(Message::Preview {
                    rules: rules_text(kind, &args[0], inner)?,
                    clock: seconds(kind, "preview clock", &args[1])?,
                })
            }
            "start" => {
                let kind = "start";
                expect_len(kind, args, 5)?;
                Ok(Message::Start {
                    match_id: atom_arg(kind, "match id", &args[0])?,
                    role: atom_arg(kind, "role", &args[1])?,
                    rules: rules_text(kind, &args[2], inner)?,
                    start_clock: seconds(kind, "start clock", &args[3])?,
                    play_clock: seconds(kind, "play clock", &args[4])?,
                })
            }
            "play" | "stop" => {
                let kind = if keyword == "play" { "play" } else { "stop" };
                // ggp-base's older managers send `(stop ID)` without moves.
                if args.is_empty() || args.len() > 2 || (kind == "play" && args.len() != 2) {
                    let wanted = if kind == "play" {
                        "a match id and the last moves (`nil` on the first play)"
                    } else {
                        "a match id and the last moves (or the match id alone)"
                    };
                    return Err(MessageError::Arguments {
                        kind,
                        why: format!("expected {wanted}, got {}", count(args.len(), "argument")),
                    });
                }
                let match_id = atom_arg(kind, "match id", &args[0])?;
                let moves = match args.get(1) {
                    None => None,
                    Some(s) if s.is_word("nil") => None,
                    Some(Sexp::List(items, _)) => Some(items.iter().map(text).collect()),
                    Some(other) => {
                        return Err(MessageError::Arguments {
                            kind,
                            why: format!(
                                "the moves must be `nil` or a list, not `{}`",
                                short(&other.to_string())
                            ),
                        })
                    }
                };
                Ok(if kind == "play" {
                    Message::Play { match_id, moves }
                } else {
                    Message::Stop { match_id, moves }
                })
            }
            "abort" => {
                expect_len("abort", args, 1)?;
                Ok(Message::Abort {
                    match_id: atom_arg("abort", "match id", &args[0])?,
                })
            }
            _ => Err(MessageError::Unknown(short(&sexp.to_string()))),
        }
    }
}

impl fmt::Display for Message {
    /// The message as a manager sends it: `(play m1 ((mark 1 1) noop))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn moves(f: &mut fmt::Formatter<'_>, moves: &Option<Vec<String>>) -> fmt::Result {
            match moves {
                None => f.write_str("nil"),
                Some(ms) => write!(f, "({})", ms.join(" ")),
            }
        }
        match self {
            Message::Info => f.write_str("(info)"),
            Message::Preview { rules, clock } => {
                write!(f, "(preview ({rules}) {})", clock_text(*clock))
            }
            Message::Start {
                match_id,
                role,
                rules,
                start_clock,
                play_clock,
            } => write!(
                f,
                "(start {match_id} {role} ({rules}) {} {})",
                clock_text(*start_clock),
                clock_text(*play_clock)
            ),
            Message::Play { match_id, moves: m } => {
                write!(f, "(play {match_id} ")?;
                moves(f, m)?;
                f.write_str(")")
            }
            Message::Stop { match_id, moves: m } => {
                write!(f, "(stop {match_id} ")?;
                moves(f, m)?;
                f.write_str(")")
            }
            Message::Abort { match_id } => write!(f, "(abort {match_id})"),
        }
    }
}

/// Seconds as the protocol writes them: a whole number when it is one (what ggp-base's players read),
/// a decimal otherwise.
pub fn clock_text(seconds: f64) -> String {
    if seconds.fract() == 0.0 && seconds.abs() < 1e15 {
        format!("{}", seconds as i64)
    } else {
        format!("{seconds}")
    }
}

/// At most 120 characters of `text`, for error messages about hostile input.
fn short(text: &str) -> String {
    let mut s: String = text.chars().take(120).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

fn expect_len(kind: &'static str, args: &[Sexp], n: usize) -> Result<(), MessageError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(MessageError::Arguments {
            kind,
            why: format!("expected {n} arguments, got {}", args.len()),
        })
    }
}

fn atom_arg(kind: &'static str, what: &str, s: &Sexp) -> Result<String, MessageError> {
    s.atom()
        .map(str::to_string)
        .ok_or_else(|| MessageError::Arguments {
            kind,
            why: format!(
                "the {what} must be a symbol, not `{}`",
                short(&s.to_string())
            ),
        })
}

fn rules_text(
    kind: &'static str,
    s: &Sexp,
    inner: impl Fn(&Sexp) -> String,
) -> Result<String, MessageError> {
    match s {
        Sexp::List(..) => Ok(inner(s)),
        other => Err(MessageError::Arguments {
            kind,
            why: format!(
                "the rules must be a list of sentences, not `{}`",
                short(&other.to_string())
            ),
        }),
    }
}

/// The longest clock a message may give: a player's work for a match runs to its clock, and an
/// abort does not cut it short, so a clock of months would hold the player's place that long.
const MAX_CLOCK_SECONDS: f64 = 86_400.0;

fn seconds(kind: &'static str, what: &str, s: &Sexp) -> Result<f64, MessageError> {
    s.atom()
        .and_then(|a| a.parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0 && *x <= MAX_CLOCK_SECONDS)
        .ok_or_else(|| MessageError::Arguments {
            kind,
            why: format!(
                "the {what} must be a number of seconds from 0 to {MAX_CLOCK_SECONDS} (a day), not `{}`",
                short(&s.to_string())
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_read_in_any_case() {
        assert_eq!(Message::parse("( INFO )").unwrap(), Message::Info);
        let m = Message::parse("(PLAY m1 NIL)").unwrap();
        assert_eq!(
            m,
            Message::Play {
                match_id: "m1".into(),
                moves: None
            }
        );
        let m = Message::parse("(Play m1 ((mark 1 1) noop))").unwrap();
        assert_eq!(
            m,
            Message::Play {
                match_id: "m1".into(),
                moves: Some(vec!["(mark 1 1)".into(), "noop".into()])
            }
        );
    }

    #[test]
    fn start_keeps_the_rules_text_and_prints_back() {
        let src =
            "(start m7 xplayer ((role xplayer) (role oplayer)\r\n (init (cell 1 1 b))) 10 0.5)";
        let m = Message::parse(src).unwrap();
        let Message::Start {
            rules,
            start_clock,
            play_clock,
            ..
        } = &m
        else {
            panic!("{m:?}")
        };
        assert!(rules.starts_with("(role xplayer)"));
        assert_eq!((*start_clock, *play_clock), (10.0, 0.5));
        assert_eq!(Message::parse(&m.to_string()).unwrap(), m);
    }

    #[test]
    fn bad_messages_are_errors_that_say_what_was_expected() {
        for (bad, expected) in [
            ("", ""),
            ("(", ""),
            (")", ""),
            ("(start)", "expected 5 arguments, got 0"),
            (
                "(play)",
                "expected a match id and the last moves (`nil` on the first play), got 0 arguments",
            ),
            ("(play m1)", "got 1 argument"),
            (
                "(stop m1 nil x)",
                "(or the match id alone), got 3 arguments",
            ),
            ("(play m1 notalist)", "the moves must be `nil` or a list"),
            (
                "(start m r (rules) x 1)",
                "the start clock must be a number of seconds from 0 to 86400 (a day), not `x`",
            ),
            (
                "(start m r (rules) 10 1e7)",
                "the play clock must be a number of seconds from 0 to 86400 (a day), not `1e7`",
            ),
            ("(hello)", ""),
            ("\"open", ""),
            ("(() () ())", ""),
            ("(play (x) nil)", "match id"),
        ] {
            let e = Message::parse(bad).expect_err(bad).to_string();
            assert!(e.contains(expected), "{bad}: {e}");
        }
        let deep = "(".repeat(100_000);
        assert!(Message::parse(&deep).is_err());
    }

    #[test]
    fn ggp_base_spacing_puts_spaces_inside_parentheses() {
        assert_eq!(ggp_base_spacing("(mark 1 (f x))"), "( mark 1 ( f x ) )");
        assert_eq!(ggp_base_spacing(" noop "), "noop");
        assert_eq!(
            compact_kif("; c\n(role  x)\n(init\n(p))").unwrap(),
            "(role x) (init (p))"
        );
    }
}
