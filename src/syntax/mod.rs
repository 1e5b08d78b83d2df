//! Stage 1, syntax: reading rule files (KIF and Epilog infix) into a [`ast::Program`].
//!
//! Entry points: [`parse_kif`], [`parse_infix`], [`parse_str`] (either, by [`Syntax`]) and
//! [`parse_file`] (the syntax chosen by the file's extension). All of them return every lexical and
//! syntax problem found, as [`Diagnostic`] values with spans inside the input; none of them panics.
//!
//! Letter case is kept as written. Later stages recognise GDL's keywords case-insensitively through
//! [`Keyword::of`].
pub mod ast;
pub mod infix;
mod keyword;
pub mod kif;
pub mod lexer;

use std::path::Path;

use lalrpop_util::{lalrpop_mod, ParseError};

use crate::diagnostics::{Diagnostic, Problems};
pub use ast::Syntax;
use ast::{Program, Span, Statement, Symbols};
pub use keyword::Keyword;
use lexer::{InfixTok, KifTok, Spanned};

lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, missing_docs, unused)]
    kif_grammar,
    "/kif.rs"
);
lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, missing_docs, unused)]
    infix_grammar,
    "/infix.rs"
);

/// Which syntax a file name's extension stands for: `.kif` is KIF; `.gdl` and `.hrf` are infix.
pub fn syntax_of_path(path: &Path) -> Option<Syntax> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "kif" => Some(Syntax::Kif),
        "gdl" | "hrf" | "epilog" => Some(Syntax::Infix),
        _ => None,
    }
}

/// Guesses the syntax of text by its first statement: KIF statements start with `(`, infix ones with
/// a name. Comment lines are passed over (a `;` comment above infix rules is a slip of the
/// pen, not a KIF file); text of comments alone goes by the first one (`;` KIF, `%` infix).
pub fn guess_syntax(src: &str) -> Syntax {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    if let Some(first) = first_statement_line(src) {
        return if first.starts_with('(') {
            Syntax::Kif
        } else {
            Syntax::Infix
        };
    }
    match src.lines().map(str::trim_start).find(|l| !l.is_empty()) {
        Some(l) if l.starts_with('%') => Syntax::Infix,
        _ => Syntax::Kif,
    }
}

/// The first line of `src` that is neither blank nor a comment (of either syntax), trimmed at the
/// start.
fn first_statement_line(src: &str) -> Option<&str> {
    src.lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with([';', '%']))
}

/// The syntax a rule file is written in, read from its text (KIF statements open with `(`, infix
/// ones with a name), and a note saying which was assumed when the file's extension says otherwise (a
/// KIF game saved as `.gdl`) or says nothing (`game.txt`).
pub fn syntax_of_file(path: &Path, text: &str) -> (Syntax, Option<String>) {
    let named = syntax_of_path(path);
    let first = first_statement_line(text.strip_prefix('\u{feff}').unwrap_or(text));
    let found = match (named, first) {
        (Some(s), None) => return (s, None),
        _ => guess_syntax(text),
    };
    let name = |s: Syntax| match s {
        Syntax::Kif => "KIF",
        Syntax::Infix => "infix (Epilog)",
    };
    let why = match (found, first) {
        (Syntax::Kif, None) => "its comments open with `;`",
        (Syntax::Infix, None) => "its comments open with `%`",
        (Syntax::Kif, Some(_)) => "its statements open with `(`",
        (Syntax::Infix, Some(_)) => "its statements open with a name, not `(`",
    };
    let note = match named {
        Some(s) if s == found => None,
        Some(s) => Some(format!(
            "{} is named like {} rules, but {why}: it is read as {}",
            path.display(),
            name(s),
            name(found)
        )),
        None => Some(format!(
            "{}: {why}, so it is read as {}",
            path.display(),
            name(found)
        )),
    };
    (found, note)
}

/// `src` with a leading byte-order mark (U+FEFF, which some editors write first) blanked: three
/// spaces in its three bytes, so that every position stays where it was.
fn blank_byte_order_mark(src: &str) -> std::borrow::Cow<'_, str> {
    match src.strip_prefix('\u{feff}') {
        Some(rest) => format!("   {rest}").into(),
        None => src.into(),
    }
}

/// Parses `src` in the given syntax.
pub fn parse_str(src: &str, syntax: Syntax) -> Result<Program, Vec<Diagnostic>> {
    match syntax {
        Syntax::Kif => parse_kif(src),
        Syntax::Infix => parse_infix(src),
    }
}

/// The most bytes a rule file may hold: the largest games known are a few hundred kilobytes, and
/// parsing takes some tens of times a file's size in memory.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A rule file's bytes, or why they cannot be read: a file longer than [`MAX_SOURCE_BYTES`] (a
/// device such as `/dev/zero` included) is refused after that many bytes rather than read whole.
pub fn read_source(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is longer than the {} MB a rule file may hold",
                MAX_SOURCE_BYTES >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// Reads and parses a rule file, in the syntax its text is written in ([`syntax_of_file`]). Returns the
/// source text too, for rendering diagnostics.
pub fn parse_file(path: &Path) -> Result<(Program, String), (Vec<Diagnostic>, String)> {
    let bytes = read_source(path).map_err(|e| {
        (
            vec![Diagnostic::error(
                Span::default(),
                format!("cannot read {}: {e}", path.display()),
            )],
            String::new(),
        )
    })?;
    let src = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            return Err((
                vec![
                    Diagnostic::error(Span::new(at, at + 1), "the file is not UTF-8 text")
                        .with_help("save the file as UTF-8"),
                ],
                text,
            ));
        }
    };
    let src = blank_byte_order_mark(&src).into_owned();
    let (syntax, _) = syntax_of_file(path, &src);
    match parse_str(&src, syntax) {
        Ok(p) => Ok((p, src)),
        Err(d) => Err((d, src)),
    }
}

/// Parses KIF text.
pub fn parse_kif(src: &str) -> Result<Program, Vec<Diagnostic>> {
    let src = &*blank_byte_order_mark(src);
    let lexed = lexer::lex_kif(src);
    let mut errors = lexed.errors;
    let lexical = errors.len();
    // `(<=` opening a line starts a rule: rules do not nest.
    let starts_rule = |i: usize| {
        let at_line_start = |start: usize| start == 0 || src.as_bytes()[start - 1] == b'\n';
        matches!(
            (lexed.tokens.get(i), lexed.tokens.get(i + 1)),
            (Some((start, KifTok::LParen, _)), Some((_, KifTok::Ident("<="), _)))
                if at_line_start(*start)
        )
    };
    lexer::check_parens(
        &lexed.tokens,
        true,
        |t| *t == KifTok::LParen,
        |t| *t == KifTok::RParen,
        starts_rule,
        &mut errors,
    );
    // Unbalanced parentheses leave no statement to read; a bad character is left out, and the
    // statements are still read for the problems after it.
    if errors.len() > lexical {
        return Err(errors.into_listed());
    }
    // With balanced parentheses every token sequence is a list of S-expressions, so the parser's own
    // errors cannot happen; they are still turned into diagnostics rather than trusted away.
    let sexprs = kif_grammar::FileParser::new()
        .parse(lexed.tokens.iter().copied())
        .map_err(|e| vec![syntax_error(e, src.len(), describe_kif)])?;
    let mut symbols = Symbols::new();
    let mut conv = kif::Converter {
        symbols: &mut symbols,
        errors: Problems::new(),
    };
    // A statement that held a bad character is not read: its problems would be that one's echo.
    let bad: Vec<u32> = errors.listed().iter().map(|d| d.span.start).collect();
    let statements: Vec<Statement> = sexprs
        .iter()
        .filter(|e| {
            let span = e.span();
            !bad.iter().any(|&at| span.start <= at && at < span.end)
        })
        .filter_map(|e| conv.statement(e))
        .collect();
    errors.extend(conv.errors.into_listed());
    drop(sexprs);
    if !errors.is_empty() {
        return Err(errors.into_listed());
    }
    Ok(Program {
        statements,
        symbols,
        syntax: Syntax::Kif,
        comments: lexed.comments,
        blank_lines: blank_lines(src),
    })
}

/// The most syntax errors reported for one infix file; after that the rest is likely noise.
const MAX_SYNTAX_ERRORS: usize = 20;

/// Parses Epilog infix text.
///
/// After a syntax error, parsing resumes at the next statement-like start (a name that begins a line
/// or follows a `.`), so several independent mistakes are reported together.
pub fn parse_infix(src: &str) -> Result<Program, Vec<Diagnostic>> {
    let src = &*blank_byte_order_mark(src);
    let lexed = lexer::lex_infix(src);
    let mut errors = lexed.errors;
    let lexical = errors.len();
    lexer::check_parens(
        &lexed.tokens,
        false,
        |t| *t == InfixTok::LParen,
        |t| *t == InfixTok::RParen,
        |_| false,
        &mut errors,
    );
    errors.extend(check_nesting(&lexed.tokens));
    if errors.len() > lexical {
        return Err(errors.into_listed());
    }
    // A bad character is left out and the rest is read, for the problems after it; a syntax error
    // on a line that holds one is likely its echo, and is not reported.
    // Made only when there is a bad character: most files have none.
    let line_starts: Vec<usize> = if errors.is_empty() {
        Vec::new()
    } else {
        std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect()
    };
    let line_of = |at: usize| line_starts.partition_point(|&start| start <= at);
    let bad_lines: Vec<usize> = errors
        .listed()
        .iter()
        .map(|d| line_of(d.span.start as usize))
        .collect();
    let tokens = lexed.tokens;
    let mut ctx = infix::Ctx::default();
    let mut statements = Vec::new();
    let parser = infix_grammar::FileParser::new();
    let mut from = 0;
    while from <= tokens.len() {
        match parser.parse(&mut ctx, tokens[from..].iter().copied()) {
            Ok(mut stmts) => {
                statements.append(&mut stmts);
                break;
            }
            Err(e) => {
                let at = error_location(&e).unwrap_or(src.len());
                if bad_lines.is_empty() || !bad_lines.contains(&line_of(at)) {
                    let unclosed = match e {
                        ParseError::UnrecognizedToken { .. } => {
                            unclosed_on_an_earlier_line(src, &tokens[from..], at, false)
                        }
                        ParseError::UnrecognizedEof { .. } => {
                            unclosed_on_an_earlier_line(src, &tokens[from..], at, true)
                        }
                        _ => None,
                    };
                    let mut d = syntax_error(e, src.len(), describe_infix);
                    if let Some(open) = unclosed {
                        d = d
                            .with_label(Span::new(open, open + 1), "this `(` is not closed")
                            .with_help("close it on the line where it opens");
                    }
                    errors.push(d);
                }
                if errors.len() >= MAX_SYNTAX_ERRORS {
                    break;
                }
                match resume_point(src, &tokens, at) {
                    Some(next) if next > from => from = next,
                    _ => break,
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors.into_listed());
    }
    Ok(Program {
        statements,
        symbols: ctx.symbols,
        syntax: Syntax::Infix,
        comments: lexed.comments,
        blank_lines: blank_lines(src),
    })
}

/// Where the blank lines of `src` start.
fn blank_lines(src: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = 0usize;
    for line in src.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push(at as u32);
        }
        at += line.len();
    }
    out
}

/// A `~` nests the literal after it as deeply as a parenthesis does, so the two count together:
/// `~(~(~(q)))` is six levels deep. Parentheses alone are bounded by [`lexer::check_parens`], which
/// also names their own mistakes; this bounds the mix (a run of `~` before every `(` would otherwise
/// nest literals hundreds of thousands deep within both limits).
fn check_nesting(tokens: &[Spanned<InfixTok>]) -> Option<Diagnostic> {
    // Per open parenthesis, the run of `~` before it: what its closing takes off the depth.
    let mut open: Vec<usize> = Vec::new();
    let (mut depth, mut run) = (0usize, 0usize);
    for &(l, t, r) in tokens {
        match t {
            InfixTok::Not => run += 1,
            InfixTok::LParen => {
                open.push(run + 1);
                depth += run + 1;
                run = 0;
            }
            InfixTok::RParen => {
                depth -= open.pop().unwrap_or(0);
                run = 0;
            }
            _ => run = 0,
        }
        if depth + run > lexer::MAX_DEPTH {
            let what = if t == InfixTok::Not && open.is_empty() {
                format!("more than {} `~` in a row", lexer::MAX_DEPTH)
            } else {
                format!(
                    "literals nested more than {} deep (each `~` and `(` is a level)",
                    lexer::MAX_DEPTH
                )
            };
            return Some(
                Diagnostic::error(Span::new(l, r), what)
                    .with_help("no game needs literals this deep; `~~q` is `q`"),
            );
        }
    }
    None
}

/// Where the innermost `(` still open at byte `at` stands, when `at` starts a line after the one of
/// that `(` (or the file ended, `eof`): the statement lacks its `)`, and the error at `at` is only
/// where that showed.
fn unclosed_on_an_earlier_line(
    src: &str,
    tokens: &[Spanned<InfixTok>],
    at: usize,
    eof: bool,
) -> Option<usize> {
    let mut open = Vec::new();
    let mut last_end = 0;
    for &(l, t, r) in tokens.iter().take_while(|t| t.0 < at) {
        match t {
            InfixTok::LParen => open.push(l),
            InfixTok::RParen => {
                open.pop();
            }
            _ => {}
        }
        last_end = r;
    }
    let innermost = *open.last()?;
    src.get(last_end..at.min(src.len()))
        .is_some_and(|between| between.contains('\n') || eof)
        .then_some(innermost)
}

/// The token index after byte `at` where a new statement plausibly starts.
fn resume_point(src: &str, tokens: &[Spanned<InfixTok>], at: usize) -> Option<usize> {
    let first_after = tokens.partition_point(|t| t.0 <= at);
    (first_after.max(1)..tokens.len()).find(|&i| {
        let (start, tok, _) = tokens[i];
        let (_, prev, prev_end) = tokens[i - 1];
        matches!(tok, InfixTok::Ident(_) | InfixTok::Str(_))
            && (prev == InfixTok::Dot || src[prev_end..start].contains('\n'))
    })
}

fn error_location<T>(e: &ParseError<usize, T, Diagnostic>) -> Option<usize> {
    match e {
        ParseError::InvalidToken { location } | ParseError::UnrecognizedEof { location, .. } => {
            Some(*location)
        }
        ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => {
            Some(token.0)
        }
        ParseError::User { error } => Some(error.span.start as usize),
    }
}

fn describe_kif(t: &KifTok) -> String {
    match t {
        KifTok::LParen => "`(`".into(),
        KifTok::RParen => "`)`".into(),
        KifTok::Var(v) => format!("the variable `?{v}`"),
        KifTok::Ident(s) => format!("`{s}`"),
        KifTok::Str(s) => format!("the string \"{s}\""),
        KifTok::Comment(_) => "a comment".into(),
    }
}

fn describe_infix(t: &InfixTok) -> String {
    match t {
        InfixTok::LParen => "`(`".into(),
        InfixTok::RParen => "`)`".into(),
        InfixTok::Comma => "`,`".into(),
        InfixTok::LBracket => "`[`".into(),
        InfixTok::RBracket => "`]`".into(),
        InfixTok::And => "`&`".into(),
        InfixTok::Or => "`|`".into(),
        InfixTok::Not => "`~`".into(),
        InfixTok::If => "`:-`".into(),
        InfixTok::Colons => "`::`".into(),
        InfixTok::Arrow => "`==>`".into(),
        InfixTok::Dot => "`.`".into(),
        InfixTok::Var(v) => format!("the variable `{v}`"),
        InfixTok::Ident(s) => format!("`{s}`"),
        InfixTok::Str(s) => format!("the string \"{s}\""),
        InfixTok::Comment(_) => "a comment".into(),
    }
}

/// lalrpop names terminals by their grammar spelling (`"\")\""`, `ident`); authors want `)` and "a name".
fn expected_list(expected: &[String]) -> String {
    let mut names: Vec<String> = expected
        .iter()
        .map(|e| match e.as_str() {
            "ident" => "a name".to_string(),
            "var" => "a variable".to_string(),
            "string" => "a string".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        })
        .collect();
    names.dedup();
    match names.len() {
        0 => "nothing more".to_string(),
        1 => names.pop().unwrap_or_default(),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!("{} or {last}", names.join(", "))
        }
    }
}

fn syntax_error<T>(
    e: ParseError<usize, T, Diagnostic>,
    len: usize,
    describe: fn(&T) -> String,
) -> Diagnostic {
    match e {
        ParseError::InvalidToken { location } => {
            Diagnostic::error(Span::new(location, location + 1), "invalid token")
        }
        ParseError::UnrecognizedEof { location, expected } => Diagnostic::error(
            Span::new(location.min(len), location.min(len)),
            format!(
                "unexpected end of file, expected {}",
                expected_list(&expected)
            ),
        )
        .with_help("the last statement is incomplete"),
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            let found = describe(&tok);
            let d = Diagnostic::error(
                Span::new(l, r),
                format!("expected {}, found {found}", expected_list(&expected)),
            );
            if found == "`,`" && expected.iter().any(|e| e.contains('&')) {
                d.with_help("conditions are joined by `&` in infix (`p :- q(X) & r(X)`); `,` separates a relation's arguments")
            } else if found == "`[`" || found == "`]`" {
                d.with_help("lists `[...]` are not supported; write them as nested terms, e.g. `cons(a, cons(b, nil))`")
            } else if found.starts_with("the variable") {
                d.with_help("relation and function names start with a lower-case letter or a digit; quote a name like `\"Name\"` to use it as a constant")
            } else {
                d
            }
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error(Span::new(l, r), format!("unexpected {}", describe(&tok)))
        }
        ParseError::User { error } => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &Program) -> Vec<String> {
        p.statements
            .iter()
            .map(|s| match s {
                Statement::Rule { head, body, .. } => {
                    format!(
                        "{}/{}:{}",
                        p.symbols.name(head.pred),
                        head.args.len(),
                        body.len()
                    )
                }
                Statement::Operation {
                    action, effects, ..
                } => format!("op {}:{}", p.symbols.name(action.pred), effects.len()),
            })
            .collect()
    }

    #[test]
    fn kif_statements() {
        let p =
            parse_kif("(role x) terminal (<= (p ?x) (q ?x) (not (r ?x)) (or a (b))) (init (f))")
                .unwrap();
        assert_eq!(names(&p), ["role/1:0", "terminal/0:0", "p/1:3", "init/1:0"]);
    }

    #[test]
    fn infix_statements_need_no_separator() {
        let p = parse_infix(
            "role(x) role(o). open :- cell(M,N,b) terminal :- ~open\n\
             mark(M,N) :: control(R) ==> cell(M,N,R) & ~cell(M,N,b)\n\
             p :: q & ~r",
        )
        .unwrap();
        assert_eq!(
            names(&p),
            [
                "role/1:0",
                "role/1:0",
                "open/0:1",
                "terminal/0:1",
                "op mark:2",
                "op p:2"
            ]
        );
    }

    #[test]
    fn infix_anonymous_variables_are_fresh() {
        let p = parse_infix("p(X) :- q(_, X, _)").unwrap();
        assert!(p.symbols.get("_1").is_some() && p.symbols.get("_2").is_some());
    }

    /// Each `_` is a variable of its own, whatever names the author gave the others, even one that
    /// comes later in the rule.
    #[test]
    fn an_anonymous_variable_is_never_one_the_author_named() {
        for (src, printed) in [
            ("p :- q(_, _1)", "p :- q(_2, _1)"),
            ("p :- q(_2, _) & r(_, _1)", "p :- q(_2, _3) & r(_4, _1)"),
            ("go :: r(_, _1) ==> s(_1)", "go :: r(_2, _1) ==> s(_1)"),
            ("p :- q(_, _)", "p :- q(_1, _2)"),
        ] {
            let out = crate::print::to_infix(&parse_infix(src).unwrap());
            assert_eq!(out.trim(), printed, "{src}");
        }
    }

    #[test]
    fn infix_reports_several_syntax_errors() {
        let errs = parse_infix("p(a b) :- x\nq(X :- r\nok(1)\ns(]").unwrap_err();
        assert!(errs.len() >= 2, "{errs:?}");
    }

    /// A byte-order mark before the first statement is no character of the rules, in either syntax.
    #[test]
    fn a_byte_order_mark_is_blank() {
        let kif = parse_kif("\u{feff}(role a) (b)").unwrap();
        assert_eq!(kif.statements.len(), 2);
        let infix = parse_infix("\u{feff}role(a)\nb(X) :- c(X").unwrap_err();
        assert_eq!(infix.len(), 1, "{infix:?}");
        // Positions are those of the text as written: the error is past the end of line 2.
        assert!(
            infix[0].span.start > "\u{feff}role(a)\n".len() as u32,
            "{infix:?}"
        );
        let dir = std::env::temp_dir().join(format!("ggp-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.kif");
        std::fs::write(&file, "\u{feff}(role a)\n").unwrap();
        let (program, _) = parse_file(&file).unwrap();
        assert_eq!(program.syntax, Syntax::Kif);
        assert_eq!(guess_syntax("\u{feff}(role a)"), Syntax::Kif);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The first statement decides, whatever the comments above it are written like.
    #[test]
    fn the_syntax_is_guessed_by_the_first_statement_not_the_first_comment() {
        for (text, syntax) in [
            (
                "; a slip
role(a)
",
                Syntax::Infix,
            ),
            (
                "% infix
(role a)
",
                Syntax::Kif,
            ),
            (
                "\n  ; KIF
",
                Syntax::Kif,
            ),
            (
                "% infix only
",
                Syntax::Infix,
            ),
            ("", Syntax::Kif),
        ] {
            assert_eq!(guess_syntax(text), syntax, "{text:?}");
        }
        let (syntax, note) = syntax_of_file(
            Path::new("g.gdl"),
            "; a slip
role(a)
",
        );
        assert_eq!((syntax, note), (Syntax::Infix, None));
    }

    /// A bad character is reported with the problems after it, not instead of them; a syntax
    /// error on its own line is its echo and is left out.
    #[test]
    fn a_bad_character_does_not_hide_the_problems_after_it() {
        let infix =
            parse_infix("role(a) $\ninit(s)\nnext(t) :- does(a go)\np(a$ b)\n").unwrap_err();
        // `$` twice and `does(a go)`; not `p(a b)`, the echo of the second `$`.
        assert_eq!(infix.len(), 3, "{infix:?}");
        let kif = parse_kif("(role a) ?\n(<= (next t) ((does) a go))\n").unwrap_err();
        assert_eq!(kif.len(), 2, "{kif:?}");
        // The statement that holds the bad character is not read: no echo of it.
        let kif = parse_kif("(\u{1}(role a) b)\n(<= (next t) ((does) a go))\n").unwrap_err();
        assert_eq!(kif.len(), 2, "{kif:?}");
        // Unbalanced parentheses still stop the reading: there is no statement to read.
        assert_eq!(parse_kif("(role a) ? (init").unwrap_err().len(), 2);
    }

    #[test]
    fn keywords_ignore_case() {
        assert_eq!(Keyword::of("LEGAL"), Some(Keyword::Legal));
        assert_eq!(Keyword::of("<="), Some(Keyword::Implies));
        assert_eq!(Keyword::of("cell"), None);
    }
}
