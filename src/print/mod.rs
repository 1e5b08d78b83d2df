//! Printing programs in either syntax, and converting between the syntaxes and semantics.
//!
//! - [`to_kif`] and [`to_infix`] print any program neatly; comments are put back before the statement
//!   that follows them in the source. An operation-semantics program is translated first
//!   ([`convert`]), because KIF has no operation rules.
//! - Names that would not read back as the same kind of token are quoted (`"Black"` in infix, where an
//!   upper-case start means a variable). Variables are renamed only when the target syntax needs it
//!   (KIF `?x` becomes infix `X`); a statement's variables stay distinct, so `parse(print(p))` equals
//!   `p` up to a consistent renaming of each statement's variables (the corpus tests compare that way).

pub mod board;
mod convert;

use std::fmt::Write as _;

use hashbrown::{HashMap, HashSet};

use crate::check::{semantics, Semantics};
use crate::syntax::ast::{Atom, Comment, Literal, Program, Statement, Sym, Syntax, Term};
use crate::syntax::lexer::is_infix_ident_char;

pub use convert::{arithmetic_tables_of, convert, ConvertError};

/// Lines longer than this are broken, one body literal per line.
const WIDTH: usize = 80;

/// Whether `name` reads back as one KIF name token (wherever it stands: `%...` and `:-` are refused
/// between statements, as comments and rules of the infix syntax).
fn kif_plain(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['?', '%'])
        && name != ":-"
        && name
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !matches!(c, '(' | ')' | ';' | '"'))
}

fn kif_name(name: &str, out: &mut String) {
    if kif_plain(name) {
        out.push_str(name);
    } else {
        let _ = write!(out, "\"{name}\"");
    }
}

/// Whether `name` reads back as one infix token of the given kind (`upper`: a variable).
fn infix_plain(name: &str, upper: bool) -> bool {
    let b = name.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    let first_ok = if upper {
        first.is_ascii_uppercase() || first == b'_'
    } else {
        first.is_ascii_lowercase() || first.is_ascii_digit()
    };
    first_ok
        && b.iter().enumerate().skip(1).all(|(i, &c)| {
            is_infix_ident_char(c)
                || (c == b'.' && b.get(i + 1).is_some_and(|&n| is_infix_ident_char(n)))
        })
}

fn infix_name(name: &str, out: &mut String) {
    if infix_plain(name, false) {
        out.push_str(name);
    } else {
        let _ = write!(out, "\"{name}\"");
    }
}

/// Where the printer is in the source, to keep the author's blank lines between statements and
/// comments (when the program was read from text).
struct Spacing<'a> {
    blanks: &'a [u32],
    /// The end of the last statement or comment printed.
    last_end: Option<u32>,
}

impl<'a> Spacing<'a> {
    fn new(p: &'a Program) -> Spacing<'a> {
        Spacing {
            blanks: &p.blank_lines,
            last_end: None,
        }
    }

    /// Whether the author's layout is known for a statement at `span` (not one made by a
    /// translation).
    fn kept(&self, span: crate::diagnostics::Span) -> bool {
        !self.blanks.is_empty() && (span.start > 0 || span.end > 0)
    }

    /// Emits a blank line when the author left one between the last item printed and `start`.
    fn gap(&mut self, start: u32, out: &mut String) {
        if let Some(end) = self.last_end {
            // The blank lines are in source order: the first after `end` says it.
            let first_after = self.blanks.partition_point(|&b| b <= end);
            let between = self.blanks.get(first_after).is_some_and(|&b| b < start);
            if between && !out.ends_with("\n\n") {
                out.push('\n');
            }
        }
    }
}

/// A comment as the other syntax writes it: a KIF banner `;;;; Rules` is `%%%% Rules` in infix, and
/// back, rather than `%;;;`.
fn comment_line(marker: char, text: &str, out: &mut String) {
    let other = if marker == ';' { '%' } else { ';' };
    let repeated = text.chars().take_while(|&c| c == other).count();
    out.push(marker);
    for _ in 0..repeated {
        out.push(marker);
    }
    out.push_str(&text[repeated * other.len_utf8()..]);
    out.push('\n');
}

/// Emits the comments that come before byte `pos` in the source.
fn comments_before(
    comments: &[Comment],
    next: &mut usize,
    pos: u32,
    marker: char,
    spacing: &mut Spacing<'_>,
    out: &mut String,
) {
    while let Some(c) = comments.get(*next) {
        if c.span.start > pos {
            break;
        }
        if !spacing.blanks.is_empty() {
            spacing.gap(c.span.start, out);
            spacing.last_end = Some(c.span.end);
        }
        comment_line(marker, &c.text, out);
        *next += 1;
    }
}

/// Prints a program as KIF.
pub fn to_kif(p: &Program) -> String {
    if semantics(p) == Semantics::Operation {
        if let Ok(q) = convert(p, Syntax::Kif) {
            return to_kif(&q);
        }
    }
    let mut out = String::new();
    let mut next_comment = 0;
    let mut prev_fact_pred: Option<Sym> = None;
    let mut spacing = Spacing::new(p);
    for st in &p.statements {
        let Statement::Rule { head, body, span } = st else {
            continue;
        };
        // Comments of translated statements (empty span at 0) stay at the top.
        if span.start > 0 || span.end > 0 {
            comments_before(
                &p.comments,
                &mut next_comment,
                span.start,
                ';',
                &mut spacing,
                &mut out,
            );
        }
        if spacing.kept(*span) {
            // The author's layout: blank lines where they left them, a rule's conditions one a line.
            spacing.gap(span.start, &mut out);
            spacing.last_end = Some(span.end);
            if body.is_empty() {
                kif_atom(p, head, &mut out);
            } else {
                out.push_str("(<= ");
                kif_atom(p, head, &mut out);
                for l in body {
                    out.push_str("\n    ");
                    kif_lit(p, l, &mut out);
                }
                out.push(')');
            }
            out.push('\n');
            continue;
        }
        if body.is_empty() {
            if prev_fact_pred.is_some_and(|s| s != head.pred) {
                out.push('\n');
            }
            kif_atom(p, head, &mut out);
            out.push('\n');
            prev_fact_pred = Some(head.pred);
        } else {
            if prev_fact_pred.is_some() {
                out.push('\n');
            }
            out.push_str("(<= ");
            kif_atom(p, head, &mut out);
            for l in body {
                out.push_str("\n    ");
                kif_lit(p, l, &mut out);
            }
            out.push_str(")\n\n");
            prev_fact_pred = None;
        }
    }
    comments_before(
        &p.comments,
        &mut next_comment,
        u32::MAX,
        ';',
        &mut spacing,
        &mut out,
    );
    end_with_one_newline(&mut out);
    out
}

fn kif_atom(p: &Program, a: &Atom, out: &mut String) {
    if a.args.is_empty() && !a.parens {
        kif_name(p.symbols.name(a.pred), out);
        return;
    }
    out.push('(');
    kif_name(p.symbols.name(a.pred), out);
    for t in &a.args {
        out.push(' ');
        kif_term(p, t, out);
    }
    out.push(')');
}

fn kif_term(p: &Program, t: &Term, out: &mut String) {
    match t {
        Term::Var(v, _) => {
            let name = p.symbols.name(*v);
            // After `?` any name character may follow, `?` included (`??x` is the variable `?x`).
            if kif_plain(&format!("x{name}")) && !name.is_empty() {
                let _ = write!(out, "?{name}");
            } else {
                // A variable name KIF cannot spell; a stable spelling from its symbol id.
                let _ = write!(out, "?v{}", v.0);
            }
        }
        Term::Const(c, _) => kif_name(p.symbols.name(*c), out),
        Term::Func(f, args, _) => {
            out.push('(');
            kif_name(p.symbols.name(*f), out);
            for a in args {
                out.push(' ');
                kif_term(p, a, out);
            }
            out.push(')');
        }
    }
}

fn kif_lit(p: &Program, l: &Literal, out: &mut String) {
    match l {
        Literal::Atom(a) => kif_atom(p, a, out),
        Literal::Not(x, _) => {
            out.push_str("(not ");
            kif_lit(p, x, out);
            out.push(')');
        }
        Literal::Or(ls, _) | Literal::And(ls, _) => {
            out.push_str(if matches!(l, Literal::Or(..)) {
                "(or"
            } else {
                "(and"
            });
            for x in ls {
                out.push(' ');
                kif_lit(p, x, out);
            }
            out.push(')');
        }
    }
}

/// Variable spellings for one statement in infix: kept when already valid, else capitalised, else
/// `V<n>`; always distinct within the statement.
struct VarNames {
    map: HashMap<Sym, String>,
    used: HashSet<String>,
}

impl VarNames {
    fn new() -> Self {
        VarNames {
            map: HashMap::new(),
            used: HashSet::new(),
        }
    }

    fn get(&mut self, p: &Program, v: Sym) -> String {
        if let Some(n) = self.map.get(&v) {
            return n.clone();
        }
        let name = p.symbols.name(v);
        let mut cand = if infix_plain(name, true) && name != "_" {
            name.to_string()
        } else {
            let mut c = name.chars();
            let cap: String = c
                .next()
                .map(|f| f.to_ascii_uppercase())
                .into_iter()
                .chain(c)
                .collect();
            if infix_plain(&cap, true) && cap != "_" {
                cap
            } else {
                format!("V{}", self.map.len())
            }
        };
        while self.used.contains(&cand) {
            cand.push('_');
        }
        self.used.insert(cand.clone());
        self.map.insert(v, cand.clone());
        cand
    }
}

/// Prints a program as Epilog infix.
pub fn to_infix(p: &Program) -> String {
    let mut out = String::new();
    let mut next_comment = 0;
    let mut prev_fact_pred: Option<Sym> = None;
    let mut spacing = Spacing::new(p);
    for st in &p.statements {
        let span = st.span();
        if span.start > 0 || span.end > 0 {
            comments_before(
                &p.comments,
                &mut next_comment,
                span.start,
                '%',
                &mut spacing,
                &mut out,
            );
        }
        let kept = spacing.kept(span);
        if kept {
            // The author's layout: blank lines where they left them and nowhere else.
            spacing.gap(span.start, &mut out);
            spacing.last_end = Some(span.end);
            prev_fact_pred = None;
        }
        let mut vars = VarNames::new();
        let mut line = String::new();
        let mut parts: Vec<String> = Vec::new();
        match st {
            Statement::Rule { head, body, .. } => {
                infix_atom(p, head, &mut vars, &mut line);
                if body.is_empty() {
                    if prev_fact_pred.is_some_and(|s| s != head.pred) {
                        out.push('\n');
                    }
                    prev_fact_pred = (!kept).then_some(head.pred);
                    out.push_str(&line);
                    out.push('\n');
                    continue;
                }
                line.push_str(" :-");
                parts = infix_body(p, body, &mut vars);
            }
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                infix_atom(p, action, &mut vars, &mut line);
                line.push_str(" ::");
                if !conditions.is_empty() {
                    parts = infix_body(p, conditions, &mut vars);
                    if let Some(last) = parts.last_mut() {
                        last.push_str(" ==>");
                    }
                }
                for e in effects {
                    let mut s = String::new();
                    if !e.add {
                        s.push('~');
                    }
                    infix_atom(p, &e.atom, &mut vars, &mut s);
                    parts.push(s);
                }
            }
        }
        if prev_fact_pred.take().is_some() {
            out.push('\n');
        }
        let joined = join_parts(&parts, " ");
        if line.len() + 1 + joined.len() <= WIDTH {
            let _ = writeln!(out, "{line} {joined}");
        } else {
            out.push_str(&line);
            out.push_str("\n    ");
            out.push_str(&join_parts(&parts, "\n    "));
            out.push('\n');
        }
    }
    comments_before(
        &p.comments,
        &mut next_comment,
        u32::MAX,
        '%',
        &mut spacing,
        &mut out,
    );
    end_with_one_newline(&mut out);
    out
}

/// A printed file ends with one line end, not a blank line, so that printing it again gives the same
/// text.
fn end_with_one_newline(out: &mut String) {
    while out.ends_with("\n\n") {
        out.pop();
    }
}

/// Joins body parts with `&` between conjuncts (parts ending in `==>` already carry their operator).
fn join_parts(parts: &[String], sep: &str) -> String {
    let mut s = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let prev = &parts[i - 1];
            if prev.ends_with("==>") {
                s.push_str(sep);
            } else {
                s.push_str(" &");
                s.push_str(sep);
            }
        }
        s.push_str(part);
    }
    s
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// A conjunct of a `&` list.
    Conj,
    /// An alternative of a `|` list.
    Alt,
    /// The operand of `~`.
    Neg,
}

fn infix_body(p: &Program, body: &[Literal], vars: &mut VarNames) -> Vec<String> {
    if let [Literal::Or(alts, _)] = body {
        if alts.len() >= 2 {
            let mut s = String::new();
            infix_alts(p, alts, vars, &mut s);
            return vec![s];
        }
    }
    body.iter()
        .map(|l| {
            let mut s = String::new();
            infix_lit(p, l, Ctx::Conj, vars, &mut s);
            s
        })
        .collect()
}

fn infix_alts(p: &Program, alts: &[Literal], vars: &mut VarNames, out: &mut String) {
    for (i, a) in alts.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        infix_lit(p, a, Ctx::Alt, vars, out);
    }
}

fn infix_lit(p: &Program, l: &Literal, ctx: Ctx, vars: &mut VarNames, out: &mut String) {
    match l {
        Literal::Atom(a) => infix_atom(p, a, vars, out),
        Literal::Not(x, _) => {
            out.push('~');
            infix_lit(p, x, Ctx::Neg, vars, out);
        }
        // KIF's `(or)` and `(and)`, which infix cannot write empty: what they mean, false and true.
        Literal::Or(alts, _) if alts.is_empty() => out.push_str("distinct(0, 0)"),
        Literal::And(ls, _) if ls.is_empty() => out.push_str("same(0, 0)"),
        Literal::Or(alts, _) => {
            out.push('(');
            infix_alts(p, alts, vars, out);
            out.push(')');
        }
        Literal::And(ls, _) => {
            let bare = ctx == Ctx::Alt && ls.len() >= 2;
            if !bare {
                out.push('(');
            }
            for (i, x) in ls.iter().enumerate() {
                if i > 0 {
                    out.push_str(" & ");
                }
                infix_lit(p, x, Ctx::Conj, vars, out);
            }
            if !bare {
                out.push(')');
            }
        }
    }
}

fn infix_atom(p: &Program, a: &Atom, vars: &mut VarNames, out: &mut String) {
    infix_name(p.symbols.name(a.pred), out);
    if !a.args.is_empty() || a.parens {
        infix_args(p, &a.args, vars, out);
    }
}

fn infix_args(p: &Program, args: &[Term], vars: &mut VarNames, out: &mut String) {
    out.push('(');
    for (i, t) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        infix_term(p, t, vars, out);
    }
    out.push(')');
}

fn infix_term(p: &Program, t: &Term, vars: &mut VarNames, out: &mut String) {
    match t {
        Term::Var(v, _) => out.push_str(&vars.get(p, *v)),
        Term::Const(c, _) => infix_name(p.symbols.name(*c), out),
        Term::Func(f, args, _) => {
            infix_name(p.symbols.name(*f), out);
            infix_args(p, args, vars, out);
        }
    }
}

/// Whether `text` (the printer's output for `program`) reads back as the same rules with the same
/// comments: what `fmt` checks before it replaces a file, so that formatting loses nothing.
pub fn reads_back(program: &Program, text: &str) -> bool {
    crate::syntax::parse_str(text, program.syntax).is_ok_and(|back| {
        back == *program
            && back
                .comments
                .iter()
                .map(|c| c.text.trim_end())
                .eq(program.comments.iter().map(|c| c.text.trim_end()))
    })
}

/// Prints a program in the syntax it was read from (`ggp-run fmt`).
pub fn format(p: &Program) -> String {
    match p.syntax {
        Syntax::Kif => to_kif(p),
        Syntax::Infix => to_infix(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{parse_infix, parse_kif};

    fn check_kif(src: &str, expected: &str) {
        let p = parse_kif(src).unwrap();
        assert_eq!(to_kif(&p), expected);
        assert_eq!(parse_kif(&to_kif(&p)).unwrap(), p);
    }

    fn check_infix(src: &str, expected: &str) {
        let p = parse_infix(src).unwrap();
        assert_eq!(to_infix(&p), expected);
        assert_eq!(parse_infix(&to_infix(&p)).unwrap(), p);
    }

    #[test]
    fn kif_layout() {
        check_kif(
            "; roles\n(role x) (role o)\n(<= (p ?x) (q ?x) (not (r ?x)) (or a (b)))\n(init (Cell \"a b\"))",
            "; roles\n(role x)\n(role o)\n\n(<= (p ?x)\n    (q ?x)\n    (not (r ?x))\n    (or a (b)))\n\n(init (Cell \"a b\"))\n",
        );
    }

    /// A file read from text keeps its author's blank lines (several become one) and its comments
    /// beside the statements they precede.
    #[test]
    fn the_authors_layout_is_kept() {
        check_infix(
            "role(x)\nrole(o)\n\n\n% The move.\nlegal(mark(M,N)) :- cell(M,N,b)\np :- q\n\nq\n% last\n",
            "role(x)\nrole(o)\n\n% The move.\nlegal(mark(M, N)) :- cell(M, N, b)\np :- q\n\nq\n% last\n",
        );
        check_kif(
            ";;;; Roles\n(role x)\n\n; the rule\n(<= (p ?x) (q ?x))\n(q 1)\n",
            ";;;; Roles\n(role x)\n\n; the rule\n(<= (p ?x)\n    (q ?x))\n(q 1)\n",
        );
    }

    /// Comment banners take the other syntax's marker when converted: `;;;;` becomes `%%%%`.
    #[test]
    fn banners_change_their_marker_with_the_syntax() {
        let p = parse_kif(";;;; Roles ;;;;\n(role x)\n").unwrap();
        let q = crate::print::convert(&p, Syntax::Infix).unwrap();
        assert_eq!(to_infix(&q), "%%%% Roles ;;;;\nrole(x)\n");
        let p = parse_infix("%% Roles\nrole(x)\n").unwrap();
        assert_eq!(to_kif(&p), ";; Roles\n(role x)\n");
    }

    #[test]
    fn infix_layout_and_grouping() {
        check_infix(
            "p(X) :- q(X) & (r | s & t) & ~(u & v)",
            "p(X) :- q(X) & (r | s & t) & ~(u & v)\n",
        );
        check_infix(
            "line(X) :- row(M,X) | col(N,X)",
            "line(X) :- row(M, X) | col(N, X)\n",
        );
        check_infix("p :- (q)", "p :- (q)\n");
        check_infix("m(X) :: c(X) ==> d(X) & ~e", "m(X) :: c(X) ==> d(X) & ~e\n");
        check_infix("\"Big\"(x, \"A\") p()", "\"Big\"(x, \"A\")\n\np()\n");
    }
}
