//! The logos lexers of both syntaxes, and the passes over their token streams that run before the
//! lalrpop parsers: collecting comments and lexical errors, and checking parenthesis nesting (so that no
//! later recursive pass can be driven deeper than [`MAX_DEPTH`]).

use logos::Logos;

use crate::diagnostics::{Diagnostic, Problems};
use crate::syntax::ast::{Comment, Span};

/// The deepest parenthesis nesting accepted. Real games nest a handful of levels; the limit keeps the
/// recursive passes over terms (conversion, printing, checking, dropping) far from the stack's end.
pub const MAX_DEPTH: usize = 500;

/// What went wrong while cutting the text into tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LexError {
    /// A character that cannot start any token.
    #[default]
    BadChar,
    /// A `"` without its closing `"`.
    UnterminatedString,
}

/// Skips to the closing quote of a string; the token is the text between the quotes.
fn string<'s, T: Logos<'s, Source = str>>(
    lex: &mut logos::Lexer<'s, T>,
) -> Result<&'s str, LexError> {
    let rest = lex.remainder();
    match rest.find(['"', '\n']) {
        Some(i) if rest.as_bytes()[i] == b'"' => {
            lex.bump(i + 1);
            Ok(&rest[..i])
        }
        _ => {
            // The rest of the line belongs to the broken string; lexing resumes on the next line.
            let end = rest.find('\n').unwrap_or(rest.len());
            lex.bump(end);
            Err(LexError::UnterminatedString)
        }
    }
}

/// A token of KIF.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\x0C]+")]
pub enum KifTok<'s> {
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `?name`, the text after `?` (may be empty: reported by [`lex_kif`]).
    #[regex(r#"\?[^ \t\r\n\x0C();"\x00-\x08\x0E-\x1F\x7F]*"#, |lex| &lex.slice()[1..])]
    Var(&'s str),
    /// Any other run of non-blank characters: constants, relation names, `<=`, keywords, numbers.
    #[regex(
        r#"[^ \t\r\n\x0C();"?\x00-\x08\x0E-\x1F\x7F][^ \t\r\n\x0C();"\x00-\x08\x0E-\x1F\x7F]*"#
    )]
    Ident(&'s str),
    /// A double-quoted constant, the text between the quotes.
    #[token("\"", string)]
    Str(&'s str),
    /// `; ...` to the end of the line, the text after `;`.
    #[regex(r";[^\n]*", |lex| &lex.slice()[1..])]
    Comment(&'s str),
}

/// Extends an identifier over `.` followed by more identifier characters, so `a.b` is one token but the
/// full stop that ends a statement (`role(x).`) is not swallowed.
fn dotted<'s>(lex: &mut logos::Lexer<'s, InfixTok<'s>>) -> &'s str {
    loop {
        let rest = lex.remainder().as_bytes();
        if rest.len() >= 2 && rest[0] == b'.' && is_infix_ident_char(rest[1]) {
            let n = 1 + rest[1..]
                .iter()
                .take_while(|&&b| is_infix_ident_char(b))
                .count();
            lex.bump(n);
        } else {
            return lex.slice();
        }
    }
}

/// The characters that may follow the first one of an infix identifier (besides `.`).
pub fn is_infix_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'+' | b'-' | b'*')
}

/// A token of the Epilog infix syntax.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\x0C]+")]
pub enum InfixTok<'s> {
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `,`
    #[token(",")]
    Comma,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `&`
    #[token("&")]
    And,
    /// `|`
    #[token("|")]
    Or,
    /// `~`
    #[token("~")]
    Not,
    /// `:-`
    #[token(":-")]
    If,
    /// `::`
    #[token("::")]
    Colons,
    /// `==>`
    #[token("==>")]
    Arrow,
    /// `.` between statements.
    #[token(".")]
    Dot,
    /// A variable: upper-case letter or `_` first.
    #[regex(r"[A-Z_][A-Za-z0-9_/+*-]*", dotted)]
    Var(&'s str),
    /// A constant or relation name: lower-case letter or digit first.
    #[regex(r"[a-z0-9][A-Za-z0-9_/+*-]*", dotted)]
    Ident(&'s str),
    /// A double-quoted constant, the text between the quotes.
    #[token("\"", string)]
    Str(&'s str),
    /// `% ...` to the end of the line, the text after `%`.
    #[regex(r"%[^\n]*", |lex| &lex.slice()[1..])]
    Comment(&'s str),
}

/// A token with its byte range, as lalrpop's external-lexer interface wants it.
pub type Spanned<T> = (usize, T, usize);

/// The tokens of a file, its comments, and every lexical problem found.
pub struct Lexed<T> {
    /// The tokens the parser reads (comments and bad characters removed).
    pub tokens: Vec<Spanned<T>>,
    /// The comments, in order.
    pub comments: Vec<Comment>,
    /// The lexical errors.
    pub errors: Problems,
}

fn lex_error(err: LexError, span: Span, src: &str) -> Diagnostic {
    match err {
        LexError::BadChar => {
            let rest = &src[span.start as usize..];
            let c = rest.chars().next().unwrap_or('?');
            let d = Diagnostic::error(span, format!("unexpected character {c:?}"));
            // KIF's habits, met only in infix (where KIF writes them, they are tokens).
            if c == '?' {
                d.with_help(
                    "infix variables start with a capital letter (`X`, `Row`); `?x` is how KIF \
                     writes one",
                )
            } else if rest.starts_with("<=") {
                d.with_help(
                    "an infix rule is `head :- body`, `(<= head body)` is KIF's; a comparison is \
                     `leq(X, Y)`",
                )
            } else {
                d.with_help("remove it; names are made of letters, digits and `_ - + * / .`")
            }
        }
        LexError::UnterminatedString => Diagnostic::error(span, "unterminated string")
            .with_help("close the string with `\"` on the same line"),
    }
}

/// Cuts KIF text into tokens.
pub fn lex_kif(src: &str) -> Lexed<KifTok<'_>> {
    let mut out = Lexed {
        tokens: Vec::new(),
        comments: Vec::new(),
        errors: Problems::new(),
    };
    let mut bad_run = None;
    let mut lexer = KifTok::lexer(src);
    let (mut depth, mut skip_until) = (0usize, 0usize);
    while let Some(tok) = lexer.next() {
        let r = lexer.span();
        let span = Span::new(r.start, r.end);
        if r.start < skip_until {
            continue;
        }
        match tok {
            Ok(KifTok::LParen) => depth += 1,
            Ok(KifTok::RParen) => depth = depth.saturating_sub(1),
            // An infix comment between KIF statements would read as facts, one per word.
            Ok(KifTok::Ident(name)) if depth == 0 && name.starts_with('%') => {
                skip_until = end_of_line(src, r.start);
                out.errors.push(
                    Diagnostic::error(span, "`%` does not start a comment in KIF").with_help(
                        "KIF comments start with `;` (`%` starts one in the infix syntax)",
                    ),
                );
                continue;
            }
            // A space that is not ASCII (pasted from a web page) would join two words into one name.
            Ok(t @ (KifTok::Ident(name) | KifTok::Var(name)))
                if name.contains(char::is_whitespace) =>
            {
                let c = name.chars().find(|c| c.is_whitespace()).unwrap_or(' ');
                let name = match t {
                    KifTok::Var(_) => format!("?{name}"),
                    _ => name.to_string(),
                };
                out.errors.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`{name}` holds U+{:04X}, a space that does not separate words in KIF",
                            u32::from(c)
                        ),
                    )
                    .with_help("replace it with a plain space"),
                );
                continue;
            }
            Ok(KifTok::Ident(":-")) if depth == 0 => {
                out.errors.push(
                    Diagnostic::error(span, "`:-` is the infix syntax's, not KIF's")
                        .with_help("KIF writes a rule as `(<= head condition ...)`"),
                );
                continue;
            }
            _ => {}
        }
        match tok {
            Ok(KifTok::Comment(text)) => out.comments.push(Comment {
                text: text.trim_end_matches('\r').to_string(),
                span,
            }),
            Ok(KifTok::Var("")) => {
                out.errors.push(
                    Diagnostic::error(span, "`?` must be followed by a variable name")
                        .with_help("write a name right after `?`, for example `?x`"),
                );
            }
            Ok(t) => out.tokens.push((r.start, t, r.end)),
            Err(e) => push_lex_error(&mut out.errors, &mut bad_run, e, span, src),
        }
    }
    out.errors.extend(bad_run);
    out
}

/// Where the line holding byte `at` ends (its `\n`, or the end of `src`).
fn end_of_line(src: &str, at: usize) -> usize {
    src[at..].find('\n').map_or(src.len(), |i| at + i)
}

/// Runs of bad characters are reported once, not once per character: `bad_run` is the run being
/// read, pushed when another starts (or, by the lexer, at the end; the listing is sorted anyway).
fn push_lex_error(
    errors: &mut Problems,
    bad_run: &mut Option<Diagnostic>,
    e: LexError,
    span: Span,
    src: &str,
) {
    if e != LexError::BadChar {
        errors.push(lex_error(e, span, src));
        return;
    }
    match bad_run {
        Some(run) if run.span.end == span.start => run.span.end = span.end,
        _ => errors.extend(bad_run.replace(lex_error(e, span, src))),
    }
}

/// Cuts infix text into tokens.
pub fn lex_infix(src: &str) -> Lexed<InfixTok<'_>> {
    let mut out = Lexed {
        tokens: Vec::new(),
        comments: Vec::new(),
        errors: Problems::new(),
    };
    let mut bad_run = None;
    let mut lexer = InfixTok::lexer(src);
    let mut skip_until = 0usize;
    while let Some(tok) = lexer.next() {
        let r = lexer.span();
        let span = Span::new(r.start, r.end);
        if r.start < skip_until {
            continue;
        }
        // A KIF comment: one error for it, not one for each of its words.
        if tok.is_err() && src.as_bytes()[r.start] == b';' {
            skip_until = end_of_line(src, r.start);
            out.errors.push(
                Diagnostic::error(span, "`;` does not start a comment in the infix syntax")
                    .with_help("infix comments start with `%` (`;` starts one in KIF)"),
            );
            continue;
        }
        match tok {
            Ok(InfixTok::Comment(text)) => out.comments.push(Comment {
                text: text.trim_end_matches('\r').to_string(),
                span,
            }),
            Ok(t) => out.tokens.push((r.start, t, r.end)),
            Err(e) => push_lex_error(&mut out.errors, &mut bad_run, e, span, src),
        }
    }
    out.errors.extend(bad_run);
    out
}

/// Checks that parentheses match and nest at most [`MAX_DEPTH`] deep. Every stray `)` and every
/// unclosed `(` (the outermost one, where the statement starts) is reported.
///
/// With `balance` false only the depth is checked (the infix parser reports unbalanced parentheses
/// itself, together with its other syntax errors).
pub fn check_parens<T>(
    tokens: &[Spanned<T>],
    balance: bool,
    is_open: impl Fn(&T) -> bool,
    is_close: impl Fn(&T) -> bool,
    new_statement: impl Fn(usize) -> bool,
    errors: &mut Problems,
) {
    let mut open: Vec<usize> = Vec::new();
    let mut too_deep_reported = false;
    for (i, (start, tok, end)) in tokens.iter().enumerate() {
        if balance && !open.is_empty() && new_statement(i) {
            // What can only start a statement (a rule at the start of a line): the one before it
            // lacks its `)`s, and each such statement is reported, not only the first.
            unclosed(&open, errors);
            open.clear();
        }
        if is_open(tok) {
            open.push(*start);
            if open.len() > MAX_DEPTH && !too_deep_reported {
                too_deep_reported = true;
                errors.push(
                    Diagnostic::error(
                        Span::new(*start, *end),
                        format!("parentheses nested more than {MAX_DEPTH} deep"),
                    )
                    .with_help("no game needs terms this deep; check for a runaway `(`"),
                );
            }
        } else if is_close(tok) && open.pop().is_none() && balance {
            errors.push(
                Diagnostic::error(Span::new(*start, *end), "unmatched `)`")
                    .with_help("remove it, or add the `(` it should close"),
            );
        }
    }
    if balance && !open.is_empty() {
        unclosed(&open, errors);
    }
}

/// The error of a statement whose `(`s at `open` are never closed.
fn unclosed(open: &[usize], errors: &mut Problems) {
    let first = open[0];
    errors.push(
        Diagnostic::error(Span::new(first, first + 1), "this `(` is never closed")
            .with_help(format!("add {} `)` where the statement ends", open.len())),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_infix(src: &str) -> Vec<InfixTok<'_>> {
        lex_infix(src).tokens.into_iter().map(|t| t.1).collect()
    }

    #[test]
    fn infix_full_stop_is_not_part_of_a_name() {
        use InfixTok::*;
        assert_eq!(
            kinds_infix("role(x). a.b c. X.y"),
            vec![
                Ident("role"),
                LParen,
                Ident("x"),
                RParen,
                Dot,
                Ident("a.b"),
                Ident("c"),
                Dot,
                Var("X.y")
            ]
        );
        assert_eq!(
            kinds_infix("a:-b::c==>~d"),
            vec![
                Ident("a"),
                If,
                Ident("b"),
                Colons,
                Ident("c"),
                Arrow,
                Not,
                Ident("d")
            ]
        );
    }

    #[test]
    fn kif_tokens_and_errors() {
        use KifTok::*;
        let l = lex_kif("(<= (p ?x) \"a b\") ; hi\n? \u{1}\u{2} \"open");
        let toks: Vec<_> = l.tokens.iter().map(|t| t.1).collect();
        assert_eq!(
            toks,
            vec![
                LParen,
                Ident("<="),
                LParen,
                Ident("p"),
                Var("x"),
                RParen,
                Str("a b"),
                RParen
            ]
        );
        assert_eq!(l.comments.len(), 1);
        assert_eq!(l.errors.len(), 3, "{:?}", l.errors);
    }
}
