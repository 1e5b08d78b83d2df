//! Stage 2, checking: is a parsed program a well-formed game?
//!
//! [`check`] reports every problem at once (errors and, separately, warnings) together with a
//! [`Summary`] of the game. [`strata`] exposes the dependency analysis the rule engine needs: the
//! relations grouped into strata so that negation only looks at lower strata.
//!
//! The checks: one arity per symbol, safety, stratified negation, GDL's recursion restriction,
//! keywords only where they make sense, the required relations present, and (infix) no mixing of
//! operation rules with classic `true`/`does`/`next`. Keywords are recognised in any letter case.
//!
//! The one check that needs a loaded game, the play-test, is the loader's
//! ([`crate::load::play_test`]): the engines call [`check`] themselves, so the checker cannot depend
//! on them.

mod arity;
mod graph;
mod reserved;
mod roles;
mod safety;

use arity::Arities;

use hashbrown::{HashMap, HashSet};

use crate::diagnostics::{Diagnostic, Problems};
use crate::syntax::ast::{
    Atom, Program, Span, Statement, Sym, Syntax, Term, MAX_EXPANDED_TERMS, MAX_RULE_CONDITIONS,
};
use crate::syntax::Keyword;

pub use crate::syntax::ast::{for_each_atom, for_each_var};
pub use graph::{strata, Strata};
pub use safety::{unsafe_rules, UnsafeRule};

/// Which game semantics a program uses (EPILOG.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// Classic GDL: `true`, `does`, `next`, `legal(R, A)` (every KIF file, and infix HRF).
    Classic,
    /// Operation rules (`::`, `==>`) on a state of facts (Gamemaster infix).
    Operation,
}

/// What a valid game consists of, for `ggp-run check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The semantics.
    pub semantics: Semantics,
    /// The roles in order.
    pub roles: Vec<String>,
    /// Every relation with its arity, sorted by name.
    pub relations: Vec<(String, usize)>,
    /// Statements with a body (rules).
    pub rules: usize,
    /// Statements without a body (facts).
    pub facts: usize,
    /// Operation rules.
    pub operations: usize,
    /// Number of strata of the rules (0 when negation is not stratified).
    pub strata: usize,
}

/// Everything [`check`] found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Problems that make the game unusable, in source order.
    pub errors: Vec<Diagnostic>,
    /// Suspicious things that do not stop the game, in source order.
    pub warnings: Vec<Diagnostic>,
    /// What the game consists of.
    pub summary: Summary,
}

impl CheckReport {
    /// Whether the game has no errors.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// The built-in relations of a syntax: evaluated, never defined by rules.
pub fn is_builtin(name: &str, syntax: Syntax) -> bool {
    if name.eq_ignore_ascii_case("distinct") {
        return true;
    }
    // The engines read built-ins in any case (`PLUS` is `plus`), as they read keywords.
    syntax == Syntax::Infix
        && matches!(
            name.to_ascii_lowercase().as_str(),
            "same" | "plus" | "minus" | "times" | "less" | "leq"
        )
}

fn atom_vars(a: &Atom, f: &mut impl FnMut(Sym, Span)) {
    for t in &a.args {
        for_each_var(t, f);
    }
}

/// The semantics of a program, decided by whether it has operation rules.
pub fn semantics(p: &Program) -> Semantics {
    if p.statements
        .iter()
        .any(|s| matches!(s, Statement::Operation { .. }))
    {
        Semantics::Operation
    } else {
        Semantics::Classic
    }
}

struct Checker<'p> {
    p: &'p Program,
    sem: Semantics,
    errors: Problems,
    warnings: Problems,
}

impl<'p> Checker<'p> {
    fn new(p: &'p Program) -> Checker<'p> {
        Checker {
            p,
            sem: semantics(p),
            errors: Problems::new(),
            warnings: Problems::new(),
        }
    }
}

impl Checker<'_> {
    fn name(&self, s: Sym) -> &str {
        self.p.symbols.name(s)
    }

    fn kw(&self, s: Sym) -> Option<Keyword> {
        Keyword::of(self.name(s))
    }

    fn var_name(&self, v: Sym) -> String {
        match self.p.syntax {
            Syntax::Kif => format!("?{}", self.name(v)),
            Syntax::Infix => self.name(v).to_string(),
        }
    }

    /// A role fact in the file's own syntax, for help texts.
    fn role_example(&self) -> &'static str {
        match self.p.syntax {
            Syntax::Infix => "role(white)",
            Syntax::Kif => "(role white)",
        }
    }

    fn builtin(&self, s: Sym) -> bool {
        is_builtin(self.name(s), self.p.syntax)
    }

    /// One arity per relation and per function symbol; the first use sets it.
    fn arities(&mut self) {
        let mut a = Arities::new(self.p, self.sem == Semantics::Operation);
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    a.atom(head);
                    for l in body {
                        for_each_atom(l, false, &mut |x, _| a.atom(x));
                    }
                }
                Statement::Operation {
                    action,
                    conditions,
                    effects,
                    ..
                } => {
                    // The action pattern is an action term, like the second argument of `does`.
                    a.note(true, action.pred, action.args.len(), action.span);
                    for t in &action.args {
                        a.term(t);
                    }
                    for l in conditions {
                        for_each_atom(l, false, &mut |x, _| a.atom(x));
                    }
                    for e in effects {
                        a.atom(&e.atom);
                    }
                }
            }
        }
        self.errors.extend(a.into_errors());
    }

    fn keywords(&mut self) {
        let mut first_op: Option<Span> = None;
        let mut first_classic: Option<(Span, Keyword)> = None;
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    match self.kw(head.pred) {
                        Some(k @ (Keyword::True | Keyword::Does)) => self.errors.push(
                            Diagnostic::error(
                                head.span,
                                format!("`{}` cannot be defined by a rule or fact", k.name()),
                            )
                            .with_help(format!(
                                "`{}` is given by the game manager; use another relation name",
                                k.name()
                            )),
                        ),
                        Some(Keyword::Role) if !body.is_empty() => self.errors.push(
                            Diagnostic::error(head.span, "roles must be plain facts, not rules")
                                .with_help(format!(
                                    "write each role as a fact, like `{}`",
                                    self.role_example()
                                )),
                        ),
                        Some(
                            k @ (Keyword::Not
                            | Keyword::Or
                            | Keyword::And
                            | Keyword::Distinct
                            | Keyword::Implies),
                        ) => self.errors.push(Diagnostic::error(
                            head.span,
                            format!("`{}` is built in and cannot be defined", k.name()),
                        )),
                        _ => {}
                    }
                    if let Some(k @ (Keyword::True | Keyword::Does | Keyword::Next)) =
                        self.kw(head.pred)
                    {
                        first_classic.get_or_insert((head.span, k));
                    }
                    for l in body {
                        for_each_atom(l, false, &mut |a, _| {
                            let k = Keyword::of(self.p.symbols.name(a.pred));
                            if let Some(k @ (Keyword::Init | Keyword::Next)) = k {
                                self.errors.push(
                                    Diagnostic::error(a.span, format!("`{}` cannot be used in a rule body", k.name()))
                                        .with_help(if k == Keyword::Init {
                                            "to read the current state use `true`"
                                        } else {
                                            "`next` only describes the following state; read the current one with `true`"
                                        }),
                                );
                            }
                            if let Some(k @ (Keyword::True | Keyword::Does | Keyword::Next)) = k {
                                first_classic.get_or_insert((a.span, k));
                            }
                        });
                    }
                }
                Statement::Operation { span, .. } => {
                    first_op.get_or_insert(*span);
                }
            }
            match self.p.syntax {
                Syntax::Infix => self.kif_connectives_read_as_relations(st),
                Syntax::Kif => self.rules_inside_rules(st),
            }
        }
        if let (Some(op), Some((span, k))) = (first_op, first_classic) {
            self.errors.push(
                Diagnostic::error(span, format!("`{}` (classic GDL) mixed with operation rules", k.name()))
                    .with_label(op, "an operation rule is here")
                    .with_help("write the game either with operation rules (`::`) or with `true`/`does`/`next`, not both"),
            );
        }
    }

    /// The state relations of an operation game (EPILOG.md: its views read them by name): the
    /// relation of every fact `init` or `base` names and of every effect. Empty for classic GDL, whose
    /// views read the state through `true`.
    fn state_relations(&self) -> HashSet<Sym> {
        let mut state = HashSet::new();
        if self.sem != Semantics::Operation {
            return state;
        }
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, .. } => {
                    if matches!(self.kw(head.pred), Some(Keyword::Init | Keyword::Base)) {
                        if let Some(Term::Func(f, _, _) | Term::Const(f, _)) = head.args.first() {
                            state.insert(*f);
                        }
                    }
                }
                Statement::Operation { effects, .. } => {
                    state.extend(effects.iter().map(|e| e.atom.pred));
                }
            }
        }
        state
    }

    /// In an operation game, only `init` and the operations write state facts: a rule or fact of a
    /// state relation would be a view of the same name, which the engines cannot tell apart.
    fn state_not_defined(&mut self, state: &HashSet<Sym>) {
        for st in &self.p.statements {
            let Statement::Rule { head, .. } = st else {
                continue;
            };
            if !state.contains(&head.pred) {
                continue;
            }
            let name = self.name(head.pred);
            self.errors.push(
                Diagnostic::error(
                    head.span,
                    format!(
                        "`{name}` is a state fact (it appears in `init`, `base` or an effect), so \
                         no rule or fact may define it"
                    ),
                )
                .with_help(format!(
                    "write `init({name}(...))` for a fact of the initial state, an effect \
                     `==> {name}(...)` to add it in play, or give the view another name"
                )),
            );
        }
    }

    fn required(&mut self) {
        let mut has = HashSet::new();
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, .. } => {
                    if let Some(k) = self.kw(head.pred) {
                        has.insert(k);
                    }
                }
                Statement::Operation { .. } => {}
            }
        }
        let end = Span::new(0, 0);
        let no_roles = format!("no roles: add a fact like `{}`", self.role_example());
        for (k, what) in [
            (Keyword::Role, no_roles.as_str()),
            (Keyword::Legal, "no `legal` rules: nobody can ever move"),
            (Keyword::Goal, "no `goal` rules: the game gives no rewards"),
            (Keyword::Terminal, "no `terminal` rule: the game never ends"),
        ] {
            if !has.contains(&k) {
                self.errors.push(
                    Diagnostic::error(
                        end,
                        format!("the game has {}", what.split(':').next().unwrap_or(what)),
                    )
                    .with_help(what.split(": ").nth(1).unwrap_or("add it").to_string()),
                );
            }
        }
        // Classic GDL allows an empty initial state (several corpus games start from it), so a missing
        // `init` is only suspicious there.
        if !has.contains(&Keyword::Init) {
            let d = if self.sem == Semantics::Operation {
                Diagnostic::error(end, "the game has no initial state")
            } else {
                Diagnostic::warning(
                    end,
                    "the game has no `init` facts: it starts from the empty state",
                )
            };
            let d = d.with_help("add `init` facts for the state the game starts in");
            if d.is_error() {
                self.errors.push(d);
            } else {
                self.warnings.push(d);
            }
        }
    }

    /// What the engines would refuse at play, read from the rules alone: a goal value that is not an
    /// integer from 0 to 100, and (infix) `legal(A)` with no `control` state fact to say whose action
    /// it is.
    fn playable(&mut self) {
        let mut control = false;
        let mut legal1: Option<Span> = None;
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, .. } => match self.kw(head.pred) {
                    Some(Keyword::Goal) if head.args.len() == 2 => {
                        let value = match &head.args[1] {
                            Term::Const(v, span) => Some((self.name(*v), *span)),
                            Term::Func(v, args, span) if args.is_empty() => {
                                Some((self.name(*v), *span))
                            }
                            _ => None,
                        };
                        if let Some((v, span)) = value {
                            if !v.parse::<i64>().is_ok_and(|g| (0..=100).contains(&g)) {
                                let d = Diagnostic::error(
                                    span,
                                    format!("the goal value `{v}` is not an integer from 0 to 100"),
                                )
                                .with_help("GDL rewards are integers from 0 to 100");
                                self.errors.push(d);
                            }
                        }
                    }
                    Some(Keyword::Init) => {
                        if let Some(Term::Func(f, args, _)) = head.args.first() {
                            control |= args.len() == 1 && self.name(*f) == "control";
                        }
                    }
                    Some(Keyword::Legal) if head.args.len() == 1 => {
                        legal1 = legal1.or(Some(head.span));
                    }
                    _ => {}
                },
                Statement::Operation { effects, .. } => {
                    for e in effects {
                        control |= e.atom.args.len() == 1 && self.name(e.atom.pred) == "control";
                    }
                }
            }
        }
        // Reported only when nothing else is wrong: a game with other errors may not be meant to be
        // played yet (the catalogue of bad inputs shares a small game without `control`).
        if let (Some(span), false, true) = (legal1, control, self.errors.is_empty()) {
            if self.p.syntax == Syntax::Infix {
                self.errors.push(
                    Diagnostic::error(
                        span,
                        "`legal(A)` names the action of the role in `control(R)`, but the game has no `control` state fact",
                    )
                    .with_help("add `init(control(R))` for the role that moves first (and effects that pass control), or write `legal(R, A)`"),
                );
            }
        }
    }

    /// The rule where the program's `or`s, multiplied out, pass the terms the engines take
    /// ([`MAX_EXPANDED_TERMS`], counted as the lowering counts them).
    fn expansion(&mut self) {
        let mut total: u64 = 0;
        for st in &self.p.statements {
            let longest = st.longest_body();
            if longest > MAX_RULE_CONDITIONS {
                let help = match self.p.syntax {
                    Syntax::Infix => {
                        "give a group of the conditions a relation of its own, `part(X, Y) :- p(X) \
                         & q(Y)`, and write `part(X, Y)` in their place"
                    }
                    Syntax::Kif => {
                        "give a group of the conditions a relation of its own, `(<= (part ?x ?y) \
                         (p ?x) (q ?y))`, and write `(part ?x ?y)` in their place"
                    }
                };
                self.errors.push(
                    Diagnostic::error(
                        st.span(),
                        format!(
                            "this rule has {longest} conditions in a row, more than the \
                             {MAX_RULE_CONDITIONS} the engines take in one rule"
                        ),
                    )
                    .with_help(help),
                );
            }
            let own = st.expanded_terms();
            total = total.saturating_add(own);
            if total <= MAX_EXPANDED_TERMS {
                continue;
            }
            let or = match self.p.syntax {
                Syntax::Infix => "`|`",
                Syntax::Kif => "`or`",
            };
            let what = if own > MAX_EXPANDED_TERMS {
                format!(
                    "the {or}s of this rule multiply out into rules of {} terms, more than the \
                     {MAX_EXPANDED_TERMS} the engines take (each alternative becomes a rule of its own)",
                    if own == u64::MAX { "countless".to_string() } else { own.to_string() }
                )
            } else {
                format!(
                    "with this rule, the {or}s of the rules multiply out into rules of more than the \
                     {MAX_EXPANDED_TERMS} terms the engines take (each alternative becomes a rule of its own)"
                )
            };
            let help = match self.p.syntax {
                Syntax::Infix => {
                    "give a disjunction a relation of its own, `either(X) :- p(X)` and \
                     `either(X) :- q(X)`, and write `either(X)` in its place"
                }
                Syntax::Kif => {
                    "give a disjunction a relation of its own, `(<= (either ?x) (p ?x))` and \
                     `(<= (either ?x) (q ?x))`, and write `(either ?x)` in its place"
                }
            };
            self.errors
                .push(Diagnostic::error(st.span(), what).with_help(help));
            return;
        }
    }

    fn usage_warnings(&mut self) {
        let mut defined: HashMap<Sym, Span> = HashMap::new();
        let mut used: HashMap<Sym, Span> = HashMap::new();
        let mut state: HashSet<Sym> = HashSet::new();
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    defined.entry(head.pred).or_insert(head.span);
                    if matches!(self.kw(head.pred), Some(Keyword::Init | Keyword::Base)) {
                        if let Some(Term::Func(f, ..) | Term::Const(f, _)) = head.args.first() {
                            state.insert(*f);
                        }
                    }
                    for l in body {
                        for_each_atom(l, false, &mut |a, _| {
                            used.entry(a.pred).or_insert(a.span);
                        });
                    }
                }
                Statement::Operation {
                    conditions,
                    effects,
                    ..
                } => {
                    for l in conditions {
                        for_each_atom(l, false, &mut |a, _| {
                            used.entry(a.pred).or_insert(a.span);
                        });
                    }
                    for e in effects {
                        state.insert(e.atom.pred);
                    }
                }
            }
        }
        let mut out = Vec::new();
        // The relations read but never defined, each with the defined-but-unread one its name is a slip
        // of (`ocupied` beside `occupied`): one problem, said once.
        let unread: Vec<Sym> = defined
            .keys()
            .copied()
            .filter(|s| self.kw(*s).is_none() && !used.contains_key(s) && !state.contains(s))
            .collect();
        let mut slips: HashMap<Sym, Sym> = HashMap::new();
        for (&s, &span) in &used {
            let classic_input = matches!(self.kw(s), Some(Keyword::True | Keyword::Does));
            let state_read = self.sem == Semantics::Operation && state.contains(&s);
            // `GOAL` is `goal` to the engines: defined when `goal` is.
            let keyword_defined = self.kw(s).is_some()
                && defined
                    .keys()
                    .any(|&d| self.name(d).eq_ignore_ascii_case(self.name(s)));
            // A connective read as a relation has its error (`kif_connectives_read_as_relations`).
            let connective = matches!(
                self.kw(s),
                Some(Keyword::Not | Keyword::Or | Keyword::And | Keyword::Implies)
            );
            if !defined.contains_key(&s)
                && !keyword_defined
                && !connective
                && !classic_input
                && !state_read
                && !self.builtin(s)
            {
                let n = self.name(s);
                let names: Vec<&str> = unread.iter().map(|&u| self.name(u)).collect();
                let slip = crate::diagnostics::did_you_mean(n, names.iter().copied())
                    .and_then(|m| unread.iter().copied().find(|&u| self.name(u) == m));
                let d = Diagnostic::warning(
                    span,
                    format!("the relation `{n}` is never defined, so it is always false"),
                );
                out.push(match slip {
                    Some(m) => {
                        slips.insert(m, s);
                        d.with_help(format!(
                            "did you mean `{}`? It is defined, and read nowhere else",
                            self.name(m)
                        ))
                        .with_label(defined[&m], "defined here")
                    }
                    None => d.with_help("define it with a fact or a rule, or check the spelling"),
                });
            }
        }
        for s in unread {
            let n = self.name(s);
            if slips.contains_key(&s) || (self.sem == Semantics::Operation && n == "action") {
                continue;
            }
            let d = if n.eq_ignore_ascii_case("sees") {
                Diagnostic::warning(
                    defined[&s],
                    "`sees` is GDL-II (what each role perceives), which is not supported",
                )
                .with_help(
                    "the game is played as GDL: every role sees the whole state, and `sees` is ignored",
                )
            } else {
                Diagnostic::warning(
                    defined[&s],
                    format!("the relation `{n}` is defined but never used"),
                )
                .with_help("remove it, or check the spelling where it should be used")
            };
            out.push(d);
        }
        self.role_warnings(&mut out);
        self.warnings.extend(out);
    }

    fn summary(&self, strata: usize) -> Summary {
        let mut roles = Vec::new();
        let mut relations: HashMap<String, usize> = HashMap::new();
        let (mut rules, mut facts, mut operations) = (0, 0, 0);
        for st in &self.p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    if body.is_empty() {
                        facts += 1;
                    } else {
                        rules += 1;
                    }
                    if self.kw(head.pred) == Some(Keyword::Role) {
                        if let Some(Term::Const(r, _)) = head.args.first() {
                            roles.push(self.name(*r).to_string());
                        }
                    }
                    relations
                        .entry(self.name(head.pred).to_string())
                        .or_insert(head.args.len());
                    for l in body {
                        for_each_atom(l, false, &mut |a, _| {
                            relations
                                .entry(self.name(a.pred).to_string())
                                .or_insert(a.args.len());
                        });
                    }
                }
                Statement::Operation {
                    conditions,
                    effects,
                    ..
                } => {
                    operations += 1;
                    for l in conditions {
                        for_each_atom(l, false, &mut |a, _| {
                            relations
                                .entry(self.name(a.pred).to_string())
                                .or_insert(a.args.len());
                        });
                    }
                    for e in effects {
                        relations
                            .entry(self.name(e.atom.pred).to_string())
                            .or_insert(e.atom.args.len());
                    }
                }
            }
        }
        let mut relations: Vec<(String, usize)> = relations.into_iter().collect();
        relations.sort();
        Summary {
            semantics: self.sem,
            roles,
            relations,
            rules,
            facts,
            operations,
            strata,
        }
    }
}

/// Checks a program: every problem at once, errors apart from warnings, and a summary.
pub fn check(p: &Program) -> CheckReport {
    let mut c = Checker::new(p);
    c.arities();
    c.safety();
    c.keywords();
    let g = graph::Graph::build(p);
    let strata = match g.strata(p) {
        Ok(s) => s.layers.len(),
        Err(errs) => {
            c.errors.extend(errs);
            0
        }
    };
    c.errors.extend(g.recursion_restriction(p));
    if c.sem == Semantics::Classic {
        c.errors.extend(g.does_dependence(p));
    }
    let state = c.state_relations();
    c.state_not_defined(&state);
    let state_reads = match c.sem {
        Semantics::Classic => "read neither `true` nor `does`, directly or through other relations",
        Semantics::Operation => "read no state fact, directly or through views",
    };
    c.errors.extend(g.init_dependence(
        p,
        |s| match c.sem {
            Semantics::Classic => matches!(c.kw(s), Some(Keyword::True | Keyword::Does)),
            Semantics::Operation => state.contains(&s),
        },
        state_reads,
    ));
    c.required();
    c.playable();
    c.expansion();
    c.usage_warnings();
    let summary = c.summary(strata);
    CheckReport {
        errors: c.errors.into_listed(),
        warnings: c.warnings.into_listed(),
        summary,
    }
}
