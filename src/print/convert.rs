//! Conversion between the syntaxes and, for operation-semantics games, to classic GDL (EPILOG.md,
//! last section).

use hashbrown::HashSet;

use crate::check::{semantics, unsafe_rules, Semantics};
use crate::syntax::ast::for_each_atom;
use crate::syntax::ast::{
    Atom, Comment, Effect, Literal, Program, Span, Statement, Sym, Syntax, Term,
};
use crate::syntax::Keyword;

/// Why a program cannot be converted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The arithmetic tables classic GDL needs would be too large.
    #[error("arithmetic over {0} numbers would need too large tables for classic GDL (at most {max} numbers)", max = MAX_NUMBERS)]
    TooManyNumbers(usize),
}

/// The most integers an arithmetic table may range over (a `plus` table has this squared facts).
const MAX_NUMBERS: usize = 256;

/// Converts a program to the given syntax without changing its meaning.
///
/// Classic GDL converts both ways unchanged (the printers take care of spelling). An operation-semantics
/// game converted to KIF becomes classic GDL: state reads become `true`, `legal(a)` becomes a relation of
/// its own (`legal_move(a)`, which bodies may read) and `legal(R, A)` for the role in control `R` (the
/// others get `noop`), operations become `added` /
/// `deleted` rules, `next` keeps what is not deleted, and arithmetic becomes finite tables over the
/// integer range the game's numbers span.
///
/// Relations named like an infix built-in (`plus`, `less`, ... are ordinary relations in KIF) are
/// renamed on the way to infix by adding an underscore (`plus` becomes `plus_`, `plus_` becomes
/// `plus__`), and the underscore is taken off again on the way back to KIF, so that KIF → infix → KIF
/// gives back the names the game was written with. Classic infix rules that use the built-ins get the
/// same `same` → `not distinct` and arithmetic tables as operation rules.
///
/// KIF converted to infix meets infix's stricter safety: a `legal` or `goal` rule whose variable role
/// nothing else binds gets the `role(R)` condition the engines read into it, and a rule with unsafe
/// variables that the game never reads becomes a comment (so converting back to KIF does not bring it
/// back; the game plays the same, since the engines drop such a rule).
pub fn convert(p: &Program, to: Syntax) -> Result<Program, ConvertError> {
    if p.syntax == to {
        return Ok(p.clone());
    }
    let mut q = if to == Syntax::Kif && semantics(p) == Semantics::Operation {
        operations_to_classic(p)?
    } else {
        let mut q = p.clone();
        q.syntax = to;
        if to == Syntax::Kif {
            classic_builtins_to_kif(p, &mut q)?;
        }
        q
    };
    let used = arithmetic_used(p);
    rename_relations(&mut q, |name| match to {
        Syntax::Infix => builtin_base(name).map(|_| format!("{name}_")),
        Syntax::Kif => builtin_base(name)
            .filter(|base| name.len() > base.len() && !used.iter().any(|u| u == base))
            .map(|_| name[..name.len() - 1].to_string()),
    });
    if to == Syntax::Infix && p.syntax == Syntax::Kif {
        make_safe_for_infix(p, &mut q);
    }
    Ok(q)
}

/// KIF accepts what infix refuses (EPILOG.md asks every rule to be safe), so that a converted game
/// checks as its source did: a `legal` or `goal` rule whose variable role nothing else binds gets the
/// `role(R)` condition the engines read into it anyway, and a rule with unsafe variables the game never
/// reads (dropped before play) becomes a comment where it stood. `q` is `p` converted statement for
/// statement.
fn make_safe_for_infix(p: &Program, q: &mut Program) {
    let mut commented = Vec::new();
    for r in unsafe_rules(p) {
        let Statement::Rule { head, body, span } = &mut q.statements[r.statement] else {
            continue;
        };
        if let Some(v) = r.role_only {
            let role = q.symbols.intern("role");
            body.insert(0, lit(role, vec![Term::Var(v, z())]));
        } else if !r.read {
            let alone = Program {
                statements: vec![Statement::Rule {
                    head: head.clone(),
                    body: body.clone(),
                    span: z(),
                }],
                symbols: q.symbols.clone(),
                syntax: Syntax::Infix,
                comments: Vec::new(),
                blank_lines: Vec::new(),
            };
            let at = *span;
            let text = super::to_infix(&alone);
            let why = " the game never reads this rule, and its variables without a value are errors in infix:";
            commented.push((
                r.statement,
                at,
                std::iter::once(why.to_string())
                    .chain(text.lines().map(|l| format!(" {l}")))
                    .collect::<Vec<_>>(),
            ));
        }
    }
    for (statement, at, lines) in commented.into_iter().rev() {
        q.statements.remove(statement);
        let place = q.comments.partition_point(|c| c.span.start <= at.start);
        q.comments.splice(
            place..place,
            lines.into_iter().map(|text| Comment { text, span: at }),
        );
    }
}

/// The infix built-in `name` is named after, when `name` is the built-in in any case (the engines
/// read `LESS` as `less`) followed by underscores only (`plus`, `plus_`, `Plus__`).
fn builtin_base(name: &str) -> Option<&'static str> {
    INFIX_BUILTINS.iter().copied().find(|b| {
        name.get(..b.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(b))
            && name[b.len()..].chars().all(|c| c == '_')
    })
}

/// The built-ins of infix that are ordinary names in KIF (`distinct` is built into both).
const INFIX_BUILTINS: &[&str] = &["same", "plus", "minus", "times", "less", "leq"];

/// The arithmetic built-ins an infix program uses (sorted), which KIF needs as tables of facts.
pub fn arithmetic_used(p: &Program) -> Vec<String> {
    if p.syntax != Syntax::Infix {
        return Vec::new();
    }
    let mut used: Vec<String> = Vec::new();
    for st in &p.statements {
        let lits: Vec<&Literal> = match st {
            Statement::Rule { body, .. } => body.iter().collect(),
            Statement::Operation { conditions, .. } => conditions.iter().collect(),
        };
        for l in lits {
            for_each_atom(l, false, &mut |a, _| {
                let n = p.symbols.name(a.pred).to_ascii_lowercase();
                if matches!(n.as_str(), "plus" | "minus" | "times" | "less" | "leq")
                    && !used.contains(&n)
                {
                    used.push(n);
                }
            });
        }
    }
    used.sort();
    used
}

/// What the arithmetic tables of a conversion to KIF hold: the built-ins, the range of numbers and the
/// facts written (`None` when the program uses no arithmetic).
pub fn arithmetic_tables_of(p: &Program) -> Option<(Vec<String>, i64, i64, usize)> {
    let used = arithmetic_used(p);
    if used.is_empty() {
        return None;
    }
    let mut q = Program {
        statements: Vec::new(),
        symbols: p.symbols.clone(),
        syntax: Syntax::Kif,
        comments: Vec::new(),
        blank_lines: Vec::new(),
    };
    let range = arithmetic_tables(p, &mut q).ok()??;
    Some((used, range.0, range.1, q.statements.len()))
}

/// Renames the relations (not the function symbols, not the actions of operation rules) for which
/// `rename` gives a new name.
fn rename_relations(q: &mut Program, rename: impl Fn(&str) -> Option<String>) {
    fn atom(
        symbols: &mut crate::syntax::ast::Symbols,
        a: &mut Atom,
        rename: &dyn Fn(&str) -> Option<String>,
    ) {
        if let Some(new) = rename(symbols.name(a.pred)) {
            a.pred = symbols.intern(&new);
        }
    }
    fn lit(
        symbols: &mut crate::syntax::ast::Symbols,
        l: &mut Literal,
        rename: &dyn Fn(&str) -> Option<String>,
    ) {
        match l {
            Literal::Atom(a) => atom(symbols, a, rename),
            Literal::Not(x, _) => lit(symbols, x, rename),
            Literal::Or(ls, _) | Literal::And(ls, _) => {
                ls.iter_mut().for_each(|x| lit(symbols, x, rename))
            }
        }
    }
    let symbols = &mut q.symbols;
    for st in &mut q.statements {
        match st {
            Statement::Rule { head, body, .. } => {
                atom(symbols, head, &rename);
                body.iter_mut().for_each(|l| lit(symbols, l, &rename));
            }
            Statement::Operation { conditions, .. } => {
                conditions.iter_mut().for_each(|l| lit(symbols, l, &rename));
            }
        }
    }
}

/// Classic infix rules in KIF: `same(X, Y)` becomes `(not (distinct ?x ?y))` and the arithmetic
/// built-ins get their tables.
fn classic_builtins_to_kif(p: &Program, q: &mut Program) -> Result<(), ConvertError> {
    fn lit(q: &mut Program, l: &mut Literal) {
        match l {
            Literal::Atom(a) if q.symbols.name(a.pred) == "same" && a.args.len() == 2 => {
                let distinct = q.symbols.intern("distinct");
                let mut a = a.clone();
                a.pred = distinct;
                *l = Literal::Not(Box::new(Literal::Atom(a)), z());
            }
            Literal::Atom(_) => {}
            Literal::Not(x, _) => lit(q, x),
            Literal::Or(ls, _) | Literal::And(ls, _) => ls.iter_mut().for_each(|x| lit(q, x)),
        }
    }
    let mut statements = std::mem::take(&mut q.statements);
    for st in &mut statements {
        if let Statement::Rule { body, .. } = st {
            body.iter_mut().for_each(|l| lit(q, l));
        }
    }
    q.statements = statements;
    arithmetic_tables(p, q).map(|_| ())
}

fn z() -> Span {
    Span::default()
}

struct Tx<'p> {
    p: &'p Program,
    q: Program,
    state: HashSet<Sym>,
    t_true: Sym,
    /// The relation `legal(A)` (the move of the role in control) becomes, so that a body may read it:
    /// classic `legal` has two arguments.
    legal1: Sym,
    /// The span of the source statement being translated: the rules made from it take it, so that the
    /// printer puts the comments written before it back before them.
    at: Span,
}

impl Tx<'_> {
    fn sym(&mut self, name: &str) -> Sym {
        self.q.symbols.intern(name)
    }

    /// A name not used anywhere in the source program.
    fn fresh(&mut self, base: &str) -> Sym {
        let mut name = base.to_string();
        while self.p.symbols.get(&name).is_some() {
            name.push('_');
        }
        self.sym(&name)
    }

    /// Whether a relation of the source program is a state relation.
    fn is_state(&mut self, s: Sym) -> bool {
        let s = self.sym(self.p.symbols.name(s));
        self.state.contains(&s)
    }

    fn term(&mut self, t: &Term) -> Term {
        match t {
            Term::Var(v, s) => Term::Var(self.sym(self.p.symbols.name(*v)), *s),
            Term::Const(c, s) => Term::Const(self.sym(self.p.symbols.name(*c)), *s),
            Term::Func(f, args, s) => {
                let f = self.sym(self.p.symbols.name(*f));
                Term::Func(f, args.iter().map(|a| self.term(a)).collect(), *s)
            }
        }
    }

    fn atom(&mut self, a: &Atom) -> Atom {
        Atom {
            pred: self.sym(self.p.symbols.name(a.pred)),
            args: a.args.iter().map(|t| self.term(t)).collect(),
            parens: a.parens,
            span: a.span,
        }
    }

    /// The atom as a term (`cell(1,2,b)` inside `true(...)`).
    fn as_term(&mut self, a: &Atom) -> Term {
        self.atom(a).into_term()
    }

    fn lit(&mut self, l: &Literal) -> Literal {
        match l {
            Literal::Atom(a) if self.is_state(a.pred) => {
                let t = self.as_term(a);
                Literal::Atom(Atom {
                    pred: self.t_true,
                    args: vec![t],
                    parens: false,
                    span: a.span,
                })
            }
            Literal::Atom(a) if is_kw(self.p, a.pred, Keyword::Legal) && a.args.len() == 1 => {
                let a = self.atom(a);
                Literal::Atom(Atom {
                    pred: self.legal1,
                    ..a
                })
            }
            Literal::Atom(a) if self.p.symbols.name(a.pred) == "same" && a.args.len() == 2 => {
                let a = self.atom(a);
                let distinct = self.sym("distinct");
                Literal::Not(
                    Box::new(Literal::Atom(Atom {
                        pred: distinct,
                        ..a
                    })),
                    z(),
                )
            }
            Literal::Atom(a) => Literal::Atom(self.atom(a)),
            Literal::Not(x, s) => Literal::Not(Box::new(self.lit(x)), *s),
            Literal::Or(ls, s) => Literal::Or(ls.iter().map(|x| self.lit(x)).collect(), *s),
            Literal::And(ls, s) => Literal::And(ls.iter().map(|x| self.lit(x)).collect(), *s),
        }
    }

    fn rule(&mut self, head: Atom, body: Vec<Literal>) {
        self.q.statements.push(Statement::Rule {
            head,
            body,
            span: self.at,
        });
    }
}

fn atom(pred: Sym, args: Vec<Term>) -> Atom {
    Atom {
        pred,
        args,
        parens: false,
        span: z(),
    }
}

fn lit(pred: Sym, args: Vec<Term>) -> Literal {
    Literal::Atom(atom(pred, args))
}

fn is_kw(p: &Program, s: Sym, k: Keyword) -> bool {
    Keyword::of(p.symbols.name(s)) == Some(k)
}

fn operations_to_classic(p: &Program) -> Result<Program, ConvertError> {
    // State relations: what `init`/`base` name and what effects touch.
    let mut state = HashSet::new();
    for st in &p.statements {
        match st {
            Statement::Rule { head, .. } => {
                if is_kw(p, head.pred, Keyword::Init) || is_kw(p, head.pred, Keyword::Base) {
                    if let Some(Term::Func(f, ..) | Term::Const(f, _)) = head.args.first() {
                        state.insert(p.symbols.name(*f).to_string());
                    }
                }
            }
            Statement::Operation { effects, .. } => {
                for e in effects {
                    state.insert(p.symbols.name(e.atom.pred).to_string());
                }
            }
        }
    }
    let mut q = Program {
        statements: Vec::new(),
        symbols: Default::default(),
        syntax: Syntax::Kif,
        comments: p.comments.clone(),
        blank_lines: p.blank_lines.clone(),
    };
    let t_true = q.symbols.intern("true");
    let mut tx = Tx {
        p,
        state: HashSet::new(),
        q,
        t_true,
        legal1: t_true,
        at: z(),
    };
    tx.legal1 = tx.fresh("legal_move");
    tx.state = state.iter().map(|n| tx.q.symbols.intern(n)).collect();
    let does = tx.sym("does");
    let legal = tx.sym("legal");
    let next = tx.sym("next");
    let role = tx.sym("role");
    let control = tx.sym("control");
    let added = tx.fresh("added");
    let deleted = tx.fresh("deleted");
    let noop = tx.fresh("noop");
    let r = tx.fresh("R");
    let pv = tx.fresh("P");
    let mut legal1_defined = false;

    for st in &p.statements {
        tx.at = st.span();
        match st {
            Statement::Rule { head, body, .. } => {
                let body: Vec<Literal> = body.iter().map(|l| tx.lit(l)).collect();
                if is_kw(p, head.pred, Keyword::Legal) && head.args.len() == 1 {
                    // legal(a) is the move of the role in control: a relation of its own, which
                    // bodies may read, and `legal` made from it below.
                    let a = tx.term(&head.args[0]);
                    tx.rule(atom(tx.legal1, vec![a]), body);
                    legal1_defined = true;
                } else {
                    let h = tx.atom(head);
                    tx.rule(h, body);
                }
            }
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                let act = tx.as_term(action);
                let mut b = vec![lit(does, vec![Term::Var(r, z()), act])];
                b.extend(conditions.iter().map(|l| tx.lit(l)));
                for Effect { add, atom: a, .. } in effects {
                    let t = tx.as_term(a);
                    let which = if *add { added } else { deleted };
                    tx.rule(atom(which, vec![t]), b.clone());
                }
            }
        }
    }
    tx.at = z();
    if legal1_defined {
        // The role in control may make the moves `legal(A)` names.
        let var_p = Term::Var(pv, z());
        tx.rule(
            atom(legal, vec![Term::Var(r, z()), var_p.clone()]),
            vec![
                lit(
                    t_true,
                    vec![Term::Func(control, vec![Term::Var(r, z())], z())],
                ),
                lit(tx.legal1, vec![var_p]),
            ],
        );
        // Roles not in control do nothing (a game that writes `legal(R, A)` says so itself).
        tx.rule(
            atom(legal, vec![Term::Var(r, z()), Term::Const(noop, z())]),
            vec![
                lit(role, vec![Term::Var(r, z())]),
                Literal::Not(
                    Box::new(lit(
                        t_true,
                        vec![Term::Func(control, vec![Term::Var(r, z())], z())],
                    )),
                    z(),
                ),
            ],
        );
    }
    let var_p = || Term::Var(pv, z());
    tx.rule(atom(next, vec![var_p()]), vec![lit(added, vec![var_p()])]);
    tx.rule(
        atom(next, vec![var_p()]),
        vec![
            lit(t_true, vec![var_p()]),
            Literal::Not(Box::new(lit(deleted, vec![var_p()])), z()),
        ],
    );
    arithmetic_tables(p, &mut tx.q)?;
    Ok(tx.q)
}

/// The integers the arithmetic tables span: from the smallest to the largest number the rules write (so
/// counters that step through unwritten numbers still work), leaving out the goal values written as
/// constants (a goal of 100 says nothing of how far a pile or a counter goes). The built-ins that compute
/// a goal's value (the second list: `times(N, 4, G)` for `goal(r, G)`) also need the whole goal scale,
/// 0..=100.
fn table_numbers(p: &Program) -> (Vec<i64>, Vec<String>) {
    fn term_numbers(p: &Program, t: &Term, out: &mut Vec<i64>) {
        match t {
            Term::Const(c, _) => out.extend(p.symbols.name(*c).parse::<i64>().ok()),
            Term::Var(..) => {}
            Term::Func(_, args, _) => args.iter().for_each(|a| term_numbers(p, a, out)),
        }
    }
    fn atom_numbers(p: &Program, a: &Atom, out: &mut Vec<i64>) {
        a.args.iter().for_each(|t| term_numbers(p, t, out));
    }
    let mut numbers = Vec::new();
    let mut goal_builtins: Vec<String> = Vec::new();
    for st in &p.statements {
        let (head, body): (&Atom, Vec<&Literal>) = match st {
            Statement::Rule { head, body, .. } => (head, body.iter().collect()),
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => {
                effects
                    .iter()
                    .for_each(|e| atom_numbers(p, &e.atom, &mut numbers));
                (action, conditions.iter().collect())
            }
        };
        match (is_kw(p, head.pred, Keyword::Goal), head.args.as_slice()) {
            (true, [role, value]) => {
                term_numbers(p, role, &mut numbers);
                if let Term::Var(v, _) = value {
                    for l in &body {
                        for_each_atom(l, false, &mut |a, _| {
                            if matches!(a.args.last(), Some(Term::Var(w, _)) if w == v) {
                                goal_builtins.push(p.symbols.name(a.pred).to_string())
                            }
                        });
                    }
                }
            }
            _ => atom_numbers(p, head, &mut numbers),
        }
        for l in body {
            for_each_atom(l, false, &mut |a, _| atom_numbers(p, a, &mut numbers));
        }
    }
    (numbers, goal_builtins)
}

/// Facts for the arithmetic built-ins the game uses, over the integers [`table_numbers`] spans.
/// Returns the widest range of numbers a table spans, when there are tables.
fn arithmetic_tables(p: &Program, q: &mut Program) -> Result<Option<(i64, i64)>, ConvertError> {
    let used = arithmetic_used(p);
    if used.is_empty() {
        return Ok(None);
    }
    let (numbers, goal_builtins) = table_numbers(p);
    let (Some(&written_lo), Some(&written_hi)) = (numbers.iter().min(), numbers.iter().max())
    else {
        return Ok(None);
    };
    let num = |q: &mut Program, n: i64| Term::Const(q.symbols.intern(&n.to_string()), z());
    let mut widest: Option<(i64, i64)> = None;
    for name in used.iter().map(String::as_str) {
        let (lo, hi) = if goal_builtins.iter().any(|b| b == name) {
            (written_lo.min(0), written_hi.max(100))
        } else {
            (written_lo.min(0), written_hi)
        };
        // In i128: the numbers written may span the whole of i64.
        let count = i128::from(hi) - i128::from(lo) + 1;
        if count > MAX_NUMBERS as i128 {
            return Err(ConvertError::TooManyNumbers(
                usize::try_from(count).unwrap_or(usize::MAX),
            ));
        }
        widest = Some(widest.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        let pred = q.symbols.intern(name);
        for x in lo..=hi {
            for y in lo..=hi {
                let row = match name {
                    "plus" => x.checked_add(y).map(|z| vec![x, y, z]),
                    "minus" => x.checked_sub(y).map(|z| vec![x, y, z]),
                    "times" => x.checked_mul(y).map(|z| vec![x, y, z]),
                    "less" => (x < y).then(|| vec![x, y]),
                    _ => (x <= y).then(|| vec![x, y]),
                };
                let Some(row) = row else { continue };
                if row.len() == 3 && !(lo..=hi).contains(&row[2]) {
                    continue;
                }
                let args = row.into_iter().map(|n| num(q, n)).collect();
                q.statements.push(Statement::Rule {
                    head: atom(pred, args),
                    body: Vec::new(),
                    span: z(),
                });
            }
        }
    }
    Ok(widest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;
    use crate::syntax::parse_infix;

    const TICTACTOE: &str = "role(x)  role(o)
index(1) index(2) index(3)
init(cell(M,N,b)) :- index(M) & index(N)
init(control(x))
legal(mark(M,N)) :- cell(M,N,b)
mark(M,N) :: control(R) ==> cell(M,N,R) & ~cell(M,N,b)
mark(M,N) :: control(x) ==> ~control(x) & control(o)
mark(M,N) :: control(o) ==> ~control(o) & control(x)
row(M,X) :- cell(M,1,X) & cell(M,2,X) & cell(M,3,X)
col(N,X) :- cell(1,N,X) & cell(2,N,X) & cell(3,N,X)
diag(X)  :- cell(1,1,X) & cell(2,2,X) & cell(3,3,X)
diag(X)  :- cell(1,3,X) & cell(2,2,X) & cell(3,1,X)
line(X)  :- row(M,X) | col(N,X) | diag(X)
open     :- cell(M,N,b)
goal(x,100) :- line(x) & ~line(o)
goal(x,50)  :- ~line(x) & ~line(o)
goal(x,0)   :- line(o) & ~line(x)
goal(o,100) :- line(o) & ~line(x)
goal(o,50)  :- ~line(x) & ~line(o)
goal(o,0)   :- line(x) & ~line(o)
terminal :- line(x) | line(o) | ~open
";

    #[test]
    fn operation_game_becomes_valid_classic_gdl() {
        let p = parse_infix(TICTACTOE).unwrap();
        let r = check(&p);
        assert!(r.is_ok(), "{:?}", r.errors);
        let q = convert(&p, Syntax::Kif).unwrap();
        let text = super::super::to_kif(&q);
        assert!(
            text.contains("(<= (legal_move (mark ?M ?N))\n    (true (cell ?M ?N b)))"),
            "{text}"
        );
        assert!(
            text.contains("(<= (legal ?R_ ?P)\n    (true (control ?R_))\n    (legal_move ?P))"),
            "{text}"
        );
        assert!(
            text.contains("(<= (next ?P)\n    (true ?P)\n    (not (deleted ?P)))"),
            "{text}"
        );
        let back = crate::syntax::parse_kif(&text).unwrap();
        let r = check(&back);
        assert!(r.is_ok(), "{:?}\n{text}", r.errors);
    }

    #[test]
    fn comments_stay_where_they_were() {
        let src = "% the role\nrole(a)\n% a counter\ninit(n(0))\nlegal(inc)\n% one step\n\
                   inc :: n(X) & plus(X,1,Y) ==> ~n(X) & n(Y)\ngoal(a,100)\n% the end\nterminal :- n(3)\n";
        let p = parse_infix(src).unwrap();
        let text = super::super::to_kif(&convert(&p, Syntax::Kif).unwrap());
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(at("; the role") < at("(role a)"), "{text}");
        assert!(
            at("(role a)") < at("; a counter") && at("; a counter") < at("(init (n 0))"),
            "{text}"
        );
        assert!(at("; one step") < at("(<= (deleted"), "{text}");
        assert!(
            at("(goal a 100)") < at("; the end") && at("; the end") < at("(<= terminal"),
            "{text}"
        );
    }

    #[test]
    fn arithmetic_becomes_tables() {
        let p = parse_infix("role(a) init(n(0)) legal(inc) inc :: n(X) & plus(X,1,Y) ==> ~n(X) & n(Y) goal(a,100) terminal :- n(3)").unwrap();
        let q = convert(&p, Syntax::Kif).unwrap();
        let text = super::super::to_kif(&q);
        assert!(
            text.contains("(plus 2 1 3)") && !text.contains("(plus 100 1 101)"),
            "{text}"
        );
    }

    /// Numbers that span the whole of i64 need more table rows than any file holds: refused at once
    /// (the count once wrapped to 0 and the tables grew until memory ran out).
    #[test]
    fn arithmetic_over_the_widest_numbers_is_refused() {
        let p = parse_infix(
            "role(a) init(n(0)) legal(inc) inc :: n(X) & plus(X,1,Y) ==> ~n(X) & n(Y) \
             goal(a,100) terminal :- n(9223372036854775807) big(\"-9223372036854775808\")",
        )
        .unwrap();
        assert!(matches!(
            convert(&p, Syntax::Kif),
            Err(ConvertError::TooManyNumbers(_))
        ));
    }
}
