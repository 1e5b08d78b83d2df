//! Problems found in a rule file, as values, and the one renderer the command line uses to show them.
//!
//! The library never prints: parsing and checking return [`Diagnostic`]s, and only the CLI calls
//! [`render`]. A diagnostic points at a byte [`Span`] of the source; the renderer turns that into
//! `file:line:column`, shows the line and puts carets under the span.

use std::fmt::Write as _;

use std::hash::{Hash, Hasher};

/// A byte range of the source text, `start..end`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

// Spans are layout, not meaning: two nodes that differ only in where they were written are equal.
impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}
impl Eq for Span {}
impl Hash for Span {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// Text from elsewhere (a remote player's reply, a client's match id) made safe to print on one line:
/// control characters (a terminal's escape sequences, line breaks that would forge log lines) and
/// the invisible characters that reorder text escaped,
/// and at most `limit` characters kept, with `…` where it was cut.
///
/// ```
/// use ggp::diagnostics::printable;
/// assert_eq!(printable("a\nb\u{1b}[2J", 10), "a\\nb\\u{1b}[2J");
/// assert_eq!(printable("abcdef", 3), "abc…");
/// ```
pub fn printable(text: &str, limit: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == limit {
            out.push('…');
            break;
        }
        // Control characters, and the invisible ones that reorder or break lines (bidirectional
        // overrides and isolates, the line and paragraph separators).
        if c.is_control()
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
        {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `n` and the noun, singular or plural as `n` asks: `1 role`, `2 roles`, `0 errors` (the noun's
/// plural is `plural`, or the noun with an `s`).
pub fn count(n: usize, noun: &str) -> String {
    count_as(n, noun, &format!("{noun}s"))
}

/// [`count`] with an irregular plural: `count_as(2, "playout", "playouts")`.
pub fn count_as(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// The candidate closest to `word` when it is close enough to be a slip of the keyboard (an edit
/// distance of at most a third of the word's length, and at least one): the "did you mean" of an
/// unknown name. Letter case is ignored.
pub fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let word = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    let length = word.chars().count();
    // On a tie the candidate of the same length wins: `mtcs` is `mcts` with two letters swapped
    // rather than `mcs` with one added.
    let (distance, _, closest) = candidates
        .into_iter()
        .map(|c| {
            let d = edit_distance(&word, &c.to_ascii_lowercase());
            (d, c.chars().count().abs_diff(length), c)
        })
        .min_by_key(|&(d, len, _)| (d, len))?;
    (distance > 0 && distance <= limit).then_some(closest)
}

/// Levenshtein distance, with a transposition of two neighbours counting as one edit (`mtcs` is one
/// edit from `mcts`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// How bad a problem is: errors make a file unusable, warnings only point at something suspicious.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The file cannot be used.
    Error,
    /// The file can be used, but something looks wrong.
    Warning,
}

/// A secondary place in the source that explains a diagnostic (for example the other use of a symbol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What it has to do with the problem.
    pub message: String,
}

/// One problem of a rule file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The main place of the problem.
    pub span: Span,
    /// What is wrong, in words a game author understands.
    pub message: String,
    /// How to fix it, when that can be said.
    pub help: Option<String>,
    /// Other places that explain the problem.
    pub labels: Vec<Label>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
            help: None,
            labels: Vec::new(),
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// The same diagnostic with a help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The same diagnostic with one more secondary place.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The most problems listed for one stage of one file: past it the rest is likely noise (a stray
/// `)` a line), and listing a million of them would cost the reader and a server far more.
pub const MAX_LISTED: usize = 100;

/// `ds` in source order, cut to [`MAX_LISTED`], with a problem at the first one left out saying
/// how many more there are.
pub fn capped(ds: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut problems = Problems::new();
    problems.extend(ds);
    problems.into_listed()
}

/// Problems gathered while a stage reads a file, holding a bounded number however many are found:
/// the first [`MAX_LISTED`] in source order, the next (where the count of the rest is reported),
/// and a count of the others. A megabyte of stray `)` would otherwise build a million diagnostics,
/// a hundred times the file's size, only for all but a hundred to be thrown away.
#[derive(Debug, Default)]
pub struct Problems {
    kept: Vec<Diagnostic>,
    left_out: usize,
}

impl Problems {
    /// No problems yet.
    pub fn new() -> Problems {
        Problems::default()
    }

    /// Adds a problem (in any order: the listing is sorted).
    pub fn push(&mut self, d: Diagnostic) {
        self.kept.push(d);
        if self.kept.len() >= 4 * (MAX_LISTED + 1) {
            self.trim();
        }
    }

    /// Adds every problem of `ds`.
    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        for d in ds {
            self.push(d);
        }
    }

    /// The problems kept so far, in the order found.
    pub fn listed(&self) -> &[Diagnostic] {
        &self.kept
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// How many problems were found, listed or not.
    pub fn len(&self) -> usize {
        self.kept.len() + self.left_out
    }

    // A stable sort keeps the earliest pushed of problems at the same place first, as one sort of
    // them all would.
    fn trim(&mut self) {
        self.kept.sort_by_key(|d| d.span.start);
        let keep = MAX_LISTED + 1;
        self.left_out += self.kept.len().saturating_sub(keep);
        self.kept.truncate(keep);
    }

    /// The problems as listed: in source order, at most [`MAX_LISTED`] of them, then one at the
    /// first left out saying how many more there are.
    pub fn into_listed(mut self) -> Vec<Diagnostic> {
        self.trim();
        if self.kept.len() <= MAX_LISTED {
            return self.kept;
        }
        let more = self.kept.len() - MAX_LISTED + self.left_out;
        let first_left_out = self.kept.pop().expect("more than MAX_LISTED are kept");
        self.kept.truncate(MAX_LISTED);
        let message = format!(
            "{} from here on are not listed",
            count(more, "more problem")
        );
        let rest = match first_left_out.severity {
            Severity::Error => Diagnostic::error(first_left_out.span, message),
            Severity::Warning => Diagnostic::warning(first_left_out.span, message),
        };
        self.kept.push(
            rest.with_help("fix the ones above first: many of the rest may follow from them"),
        );
        self.kept
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `source`.
///
/// Offsets past the end or inside a multi-byte character are clamped, so any span can be shown.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = clamp_to_char(source, offset);
    let before = &source[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = source[line_start..offset].chars().count() + 1;
    (line, col)
}

fn clamp_to_char(source: &str, offset: usize) -> usize {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Renders a diagnostic for a person:
///
/// ```text
/// game.kif:3:7: error: message
///   3 | (<= (p ?x) (not (q ?x)))
///     |       ^^
///   = help: ...
/// ```
///
/// then the same for every label (`note: ...`).
pub fn render(diag: &Diagnostic, file_name: &str, source: &str) -> String {
    let mut out = String::new();
    let kind = match diag.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let (line, col) = line_col(source, diag.span.start as usize);
    let _ = writeln!(out, "{file_name}:{line}:{col}: {kind}: {}", diag.message);
    snippet(&mut out, source, diag.span);
    for label in &diag.labels {
        let (line, col) = line_col(source, label.span.start as usize);
        let _ = writeln!(out, "{file_name}:{line}:{col}: note: {}", label.message);
        snippet(&mut out, source, label.span);
    }
    if let Some(help) = &diag.help {
        let _ = writeln!(out, "  = help: {help}");
    }
    out
}

/// The source line of `span.start` with carets under the part of the span on that line.
fn snippet(out: &mut String, source: &str, span: Span) {
    let start = clamp_to_char(source, span.start as usize);
    let end = clamp_to_char(source, (span.end as usize).max(start));
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    let (line_no, _) = line_col(source, start);
    let text = source[line_start..line_end].trim_end_matches('\r');
    // Tabs would misalign the carets; show them as one space each.
    let shown: String = text
        .chars()
        .map(|c| if c == '\t' || c.is_control() { ' ' } else { c })
        .collect();
    let gutter = line_no.to_string().len();
    let pad = source[line_start..start].chars().count();
    let width = source[start..end.min(line_end)].chars().count().max(1);
    // A very long line (generated or minified rules) is cut to a window around the span.
    let skip = pad.saturating_sub(40);
    let cut: String = shown.chars().skip(skip).take(120).collect();
    let (prefix, indent) = if skip > 0 {
        ("...", pad - skip + 3)
    } else {
        ("", pad)
    };
    let suffix = if shown.chars().count() > skip + 120 {
        "..."
    } else {
        ""
    };
    let _ = writeln!(out, "{line_no:>gutter$} | {prefix}{cut}{suffix}");
    let _ = writeln!(
        out,
        "{:>gutter$} | {}{}",
        "",
        " ".repeat(indent),
        "^".repeat(width.min(120))
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_line_column_and_carets() {
        let src = "(role x)\n(init (p ?y))\n";
        let d = Diagnostic::error(Span::new(15, 17), "bad").with_help("fix it");
        let text = render(&d, "f.kif", src);
        assert_eq!(
            text,
            "f.kif:2:7: error: bad\n2 | (init (p ?y))\n  |       ^^\n  = help: fix it\n"
        );
    }

    #[test]
    fn a_flood_of_problems_is_cut_with_a_count_of_the_rest() {
        let ds: Vec<Diagnostic> = (0..MAX_LISTED as u32 + 7)
            .map(|i| Diagnostic::error(Span::new(i as usize, i as usize + 1), "stray `)`"))
            .collect();
        let cut = capped(ds);
        assert_eq!(cut.len(), MAX_LISTED + 1);
        let last = cut.last().expect("the count");
        assert_eq!(last.message, "7 more problems from here on are not listed");
        assert_eq!(last.span.start, MAX_LISTED as u32, "at the first left out");
        let few = vec![Diagnostic::error(Span::new(0, 1), "one")];
        assert_eq!(capped(few.clone()).len(), 1);
    }

    #[test]
    fn problems_hold_a_bounded_number_and_list_what_one_cut_of_them_all_would() {
        // Pushed out of order, in several runs, with ties: the listing is the same as sorting them
        // all at once, and far fewer than were found are ever held.
        let all: Vec<Diagnostic> = (0..10_000u32)
            .map(|i| {
                let at = ((i * 7919) % 5_000) as usize;
                Diagnostic::error(Span::new(at, at + 1), format!("problem {i}"))
            })
            .collect();
        let mut problems = Problems::new();
        for d in all.iter().cloned() {
            problems.push(d);
            assert!(problems.kept.len() < 4 * (MAX_LISTED + 1));
        }
        assert_eq!(problems.len(), all.len());
        let listed = problems.into_listed();
        let mut sorted = all.clone();
        sorted.sort_by_key(|d| d.span.start);
        let messages = |ds: &[Diagnostic]| ds.iter().map(|d| d.message.clone()).collect::<Vec<_>>();
        assert_eq!(
            messages(&listed[..MAX_LISTED]),
            messages(&sorted[..MAX_LISTED])
        );
        let last = listed.last().expect("the count");
        assert_eq!(
            last.message,
            format!(
                "{} more problems from here on are not listed",
                all.len() - MAX_LISTED
            )
        );
        assert_eq!(last.span.start, sorted[MAX_LISTED].span.start);
        assert!(Problems::new().into_listed().is_empty());
    }

    #[test]
    fn slips_of_the_keyboard_are_recognised() {
        let kinds = ["mcts", "mcs", "minimax", "random", "id"];
        assert_eq!(did_you_mean("mtcs", kinds), Some("mcts"));
        assert_eq!(did_you_mean("MINIMAZ", kinds), Some("minimax"));
        assert_eq!(did_you_mean("ranodm", kinds), Some("random"));
        assert_eq!(did_you_mean("chess", kinds), None);
        assert_eq!(
            did_you_mean("mcts", kinds),
            None,
            "an exact name is no slip"
        );
        assert_eq!(
            did_you_mean("ocupied", ["occupied", "cell"]),
            Some("occupied")
        );
    }

    #[test]
    fn any_span_renders() {
        let src = "é\nab";
        for (s, e) in [(0, 0), (1, 2), (0, 100), (50, 60), (3, 1)] {
            let d = Diagnostic::error(Span::new(s, e), "m");
            let _ = render(&d, "f", src);
        }
        let _ = render(&Diagnostic::error(Span::new(0, 0), "m"), "f", "");
    }
}
