//! Stage 1, lowering: the author's program ([`ast::Program`]) becomes plain Datalog rules over ids.
//!
//! The main entry point is [`lower`]. It recognises the GDL keywords whatever their letter case, expands
//! `or` and nested `and` into several plain conjunctive rules (disjunctive normal form), turns a negated
//! compound condition into a negated auxiliary relation, renames variables to dense per-rule indices,
//! hash-conses every ground term into the [`TermStore`], and gives each relation (name and arity) a dense
//! [`RelId`]. `(p)` and `p` are the same 0-ary relation and the same constant. A symbol used with two
//! arities is an error, as the GDL specification says.
//!
//! The result prints itself as readable rules (`head :- body.`), used by snapshot tests.

use std::fmt;

use hashbrown::HashMap;

use super::terms::{TermId, TermStore};
use super::EngineError;
use crate::datalog::Invalid;
use crate::syntax::ast::{
    self, Literal, Statement, Sym, Syntax, Term, MAX_EXPANDED_TERMS, MAX_RULE_CONDITIONS,
};

/// A relation: a name and an arity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelId(pub u32);

/// A relation's name, arity and origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// The name (keywords in lower case).
    pub name: Sym,
    /// The number of arguments.
    pub arity: usize,
    /// Who made the relation: the author, or which stage of the pipeline. Later stages recognise the
    /// relations they treat apart (demand, domain) by this, never by their name: a KIF name may hold
    /// any character a generated name does (`domain#q` is a valid user relation).
    pub origin: Origin,
}

/// Who made a relation (see [`Relation::origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// Written by the author, or a GDL keyword.
    User,
    /// Lowering: the relation standing for a negated compound condition (`__not1`).
    Negation,
    /// Operation semantics: the facts a move adds or deletes (`added$`, `deleted$`).
    Operation,
    /// `rewrite::prepare`: a negation inside recursion split into a lower stratum (`q$not1`).
    SplitNegation,
    /// The demand rewrite: the arguments a reading asks about (`demand#q#bf`, and the projections of
    /// demand rules, `demand#proj#1`). Joined first; read by the grounder as constant filters.
    Demand,
    /// The demand rewrite: a copy of a relation restricted to what is asked (`q#bf`).
    DemandCopy,
    /// Variable elimination: a projection of some conditions of a rule (`elim#1`, `guard#1`,
    /// `relaxed#elim#1`).
    Eliminated,
    /// Variable elimination: a copy of a condition read only to bind a projection's variables
    /// (`domain#1`); the grounder leaves it out of the instances.
    Domain,
    /// Merged alternatives: one relation for the same `or` in several rules (`either#1`).
    Either,
    /// `RuleGame`: the state facts of one function symbol (`true$cell`).
    StateSplit,
}

/// An argument pattern: a variable, a ground term, or a function term with variables inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pat {
    /// Variable number `i` of the rule.
    Var(u32),
    /// A ground term.
    Term(TermId),
    /// A function term with at least one variable inside.
    Func(Sym, Vec<Pat>),
}

impl Pat {
    /// Calls `f` on every variable of the pattern.
    pub fn each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            Pat::Var(v) => f(*v),
            Pat::Term(_) => {}
            Pat::Func(_, args) => args.iter().for_each(|a| a.each_var(f)),
        }
    }

    /// Whether every variable of the pattern is marked in `bound` (indexed by variable number).
    pub(crate) fn is_bound(&self, bound: &[bool]) -> bool {
        match self {
            Pat::Var(v) => bound[*v as usize],
            Pat::Term(_) => true,
            Pat::Func(_, args) => args.iter().all(|a| a.is_bound(bound)),
        }
    }

    /// Marks every variable of the pattern in `bound`.
    pub(crate) fn bind_vars(&self, bound: &mut [bool]) {
        self.each_var(&mut |v| bound[v as usize] = true);
    }
}

/// An atom over a relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrAtom {
    /// The relation.
    pub rel: RelId,
    /// The arguments, as many as the relation's arity.
    pub args: Vec<Pat>,
}

/// A comparison built-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `distinct(X, Y)`: the terms differ.
    Distinct,
    /// `same(X, Y)` (and a negated `distinct`): the terms are equal.
    Same,
    /// `less(X, Y)`: integers, X < Y.
    Less,
    /// `leq(X, Y)`: integers, X <= Y.
    Leq,
    /// `~less(X, Y)`: unless X and Y are integers with X < Y (true of any term that is not one).
    NotLess,
    /// `~leq(X, Y)`: unless X and Y are integers with X <= Y.
    NotLeq,
}

impl Cmp {
    /// Whether an ordering (`less`, `leq` and their negations) holds of `x` and `y`, each an integer
    /// or none for a term that is not one. An ordering is false of anything but two integers, so its
    /// negation is true of it: `~less(a, 3)` holds, and `leq(3, a)` does not.
    pub fn orders(self, x: Option<i64>, y: Option<i64>) -> bool {
        let ordered = |strict: bool| match (x, y) {
            (Some(x), Some(y)) => x < y || (!strict && x == y),
            _ => false,
        };
        match self {
            Cmp::Less => ordered(true),
            Cmp::Leq => ordered(false),
            Cmp::NotLess => !ordered(true),
            Cmp::NotLeq => !ordered(false),
            Cmp::Distinct | Cmp::Same => false,
        }
    }
}

/// An arithmetic built-in with its result last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    /// `plus(X, Y, Z)`: Z = X + Y.
    Plus,
    /// `minus(X, Y, Z)`: Z = X - Y.
    Minus,
    /// `times(X, Y, Z)`: Z = X * Y.
    Times,
}

impl Arith {
    /// The result of `x op y`, none on overflow.
    pub fn apply(self, x: i64, y: i64) -> Option<i64> {
        match self {
            Arith::Plus => x.checked_add(y),
            Arith::Minus => x.checked_sub(y),
            Arith::Times => x.checked_mul(y),
        }
    }
}

/// A body condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lit {
    /// A positive atom.
    Pos(IrAtom),
    /// Negation as failure.
    Neg(IrAtom),
    /// A comparison of two terms.
    Cmp(Cmp, Pat, Pat),
    /// Arithmetic: `op(x, y, z)`.
    Arith(Arith, Pat, Pat, Pat),
    /// Negated arithmetic, `~op(x, y, z)`: holds unless `x` and `y` are integers whose result is
    /// `z`. A filter: it binds nothing and needs all three arguments.
    NotArith(Arith, Pat, Pat, Pat),
}

impl Lit {
    /// Whether a condition that binds nothing it tests (negation, comparison, arithmetic) can be
    /// evaluated once the variables in `bound` are known: a negation needs all its arguments, `=` one
    /// side and a variable on the other, arithmetic its two operands (negated, all three). A positive
    /// atom never is one.
    pub(crate) fn filter_ready(&self, bound: &[bool]) -> bool {
        match self {
            Lit::Pos(_) => false,
            Lit::Neg(a) => a.args.iter().all(|x| x.is_bound(bound)),
            Lit::NotArith(_, x, y, z) => {
                x.is_bound(bound) && y.is_bound(bound) && z.is_bound(bound)
            }
            Lit::Cmp(Cmp::Same, x, y) => {
                (x.is_bound(bound) && (y.is_bound(bound) || matches!(y, Pat::Var(_))))
                    || (y.is_bound(bound) && matches!(x, Pat::Var(_)))
            }
            Lit::Cmp(_, x, y) | Lit::Arith(_, x, y, _) => x.is_bound(bound) && y.is_bound(bound),
        }
    }

    /// Calls `f` on every variable of the condition.
    pub(crate) fn each_var(&self, f: &mut impl FnMut(u32)) {
        match self {
            Lit::Pos(a) | Lit::Neg(a) => a.args.iter().for_each(|x| x.each_var(f)),
            Lit::Cmp(_, x, y) => {
                x.each_var(f);
                y.each_var(f);
            }
            Lit::Arith(_, x, y, z) | Lit::NotArith(_, x, y, z) => {
                x.each_var(f);
                y.each_var(f);
                z.each_var(f);
            }
        }
    }

    /// Marks the variables the condition binds once evaluated: an atom's arguments, both sides of a
    /// comparison (`=` binds its variable side), an arithmetic result; a negation binds nothing.
    pub(crate) fn bind_vars(&self, bound: &mut [bool]) {
        match self {
            Lit::Pos(a) => a.args.iter().for_each(|x| x.bind_vars(bound)),
            Lit::Neg(_) | Lit::NotArith(..) => {}
            Lit::Cmp(_, x, y) => {
                x.bind_vars(bound);
                y.bind_vars(bound);
            }
            Lit::Arith(_, _, _, z) => z.bind_vars(bound),
        }
    }
}

/// A rule: `head :- body` (a fact has an empty body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The conclusion.
    pub head: IrAtom,
    /// The conditions, a plain conjunction.
    pub body: Vec<Lit>,
    /// The variables' names as written, indexed by variable number.
    pub var_names: Vec<Sym>,
}

/// An operation (operation semantics): when `action` is performed and `conditions` hold in the state
/// before the move, the effects fire for every answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The action pattern.
    pub action: Pat,
    /// The conditions (one conjunction; `or` gives several operations).
    pub conditions: Vec<Lit>,
    /// Effects: `(true, p)` adds `p`, `(false, p)` deletes it.
    pub effects: Vec<(bool, Pat)>,
    /// The variables' names as written.
    pub var_names: Vec<Sym>,
}

/// The GDL vocabulary's relations, when the program uses them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keywords {
    /// `role/1`.
    pub role: Option<RelId>,
    /// `init/1`.
    pub init: Option<RelId>,
    /// `true/1`.
    pub true_: Option<RelId>,
    /// `next/1`.
    pub next: Option<RelId>,
    /// `does/2`.
    pub does: Option<RelId>,
    /// `legal/2` (classic) .
    pub legal: Option<RelId>,
    /// `legal/1` (operation semantics).
    pub legal1: Option<RelId>,
    /// `goal/2`.
    pub goal: Option<RelId>,
    /// `terminal/0`.
    pub terminal: Option<RelId>,
    /// `base/1`.
    pub base: Option<RelId>,
    /// `input/2`.
    pub input: Option<RelId>,
}

/// A lowered program.
#[derive(Clone, Debug)]
pub struct Program {
    /// Every ground term the rules mention.
    pub terms: TermStore,
    /// The relations, indexed by [`RelId`].
    pub relations: Vec<Relation>,
    /// The rules.
    pub rules: Vec<Rule>,
    /// The operations (empty for classic GDL).
    pub operations: Vec<Operation>,
    /// The syntax the program was written in.
    pub syntax: Syntax,
    /// The vocabulary's relations.
    pub keywords: Keywords,
    /// The relations later stages made, by the name asked for, arity and origin (a name given to an
    /// author's symbol already gets another: see [`Program::add_generated`]).
    pub generated: HashMap<(String, usize, Origin), RelId>,
}

impl Program {
    /// The relation with this name and arity, if any.
    pub fn relation(&self, name: &str, arity: usize) -> Option<RelId> {
        let sym = self.terms.symbols().get(name)?;
        self.relations
            .iter()
            .position(|r| r.name == sym && r.arity == arity)
            .map(|i| RelId(i as u32))
    }

    /// Whether the program is written in operation semantics.
    pub fn is_operational(&self) -> bool {
        !self.operations.is_empty()
    }

    /// The author's relation (or GDL keyword) with this name and arity, added when the program has none
    /// (later stages ask for `true`, `next`, `legal`... this way).
    pub fn add_relation(&mut self, name: &str, arity: usize) -> RelId {
        let sym = self.terms.intern_sym(name);
        if let Some(i) = self
            .relations
            .iter()
            .position(|r| r.name == sym && r.arity == arity && r.origin == Origin::User)
        {
            return RelId(i as u32);
        }
        self.relations.push(Relation {
            name: sym,
            arity,
            origin: Origin::User,
        });
        RelId(self.relations.len() as u32 - 1)
    }

    /// A relation made by a later stage: the one made before with this name, arity and origin, or a new
    /// one. A new relation never shares its name with any symbol already known (the author's relations,
    /// constants and functions, or another stage's relations): the name gets primes until it is fresh,
    /// so a printed program never shows two relations under one name and no user relation is mistaken
    /// for a generated one.
    pub fn add_generated(&mut self, origin: Origin, name: &str, arity: usize) -> RelId {
        let key = (name.to_string(), arity, origin);
        if let Some(&r) = self.generated.get(&key) {
            return r;
        }
        let r = self.add_fresh(origin, name, arity);
        self.generated.insert(key, r);
        r
    }

    /// A new relation made by a later stage (never one made before, even under the same name): named
    /// `name`, or `name` with primes when a symbol has that name already (see [`Program::add_generated`]).
    pub fn add_fresh(&mut self, origin: Origin, name: &str, arity: usize) -> RelId {
        let mut fresh = name.to_string();
        while self.terms.symbols().get(&fresh).is_some() {
            fresh.push('\'');
        }
        let sym = self.terms.intern_sym(&fresh);
        self.relations.push(Relation {
            name: sym,
            arity,
            origin,
        });
        RelId(self.relations.len() as u32 - 1)
    }

    /// Who made relation `rel`.
    pub fn origin(&self, rel: RelId) -> Origin {
        self.relations[rel.0 as usize].origin
    }
}

/// Which relations depend, directly or not, on the state or the moves: `inputs` and `props`.
pub(crate) fn dynamic_relations(p: &Program, inputs: &[RelId], props: &[RelId]) -> Vec<bool> {
    let mut dynamic = vec![false; p.relations.len()];
    for r in inputs.iter().chain(props) {
        dynamic[r.0 as usize] = true;
    }
    loop {
        let mut changed = false;
        for r in &p.rules {
            let h = r.head.rel.0 as usize;
            if !dynamic[h]
                && r.body.iter().any(|l| match l {
                    Lit::Pos(a) | Lit::Neg(a) => dynamic[a.rel.0 as usize],
                    _ => false,
                })
            {
                dynamic[h] = true;
                changed = true;
            }
        }
        if !changed {
            return dynamic;
        }
    }
}

const KEYWORDS: &[&str] = &[
    "role", "init", "true", "next", "does", "legal", "goal", "terminal", "base", "input",
    "distinct",
];
const ARITH: &[&str] = &["same", "plus", "minus", "times", "less", "leq"];

/// Whether a relation name written in lower case is one the engines read in any case (`GOAL` is
/// `goal`): the keywords and the built-ins.
pub(crate) fn folds_case(lower: &str) -> bool {
    KEYWORDS.contains(&lower) || ARITH.contains(&lower)
}

struct Lowerer {
    out: Program,
    rel_ids: HashMap<Sym, (RelId, usize)>,
    func_arity: HashMap<Sym, usize>,
    builtins_on: bool,
    defined: hashbrown::HashSet<String>,
    aux: u32,
    /// The names given to negated compound conditions' relations.
    negations: hashbrown::HashSet<Sym>,
}

struct RuleCtx {
    vars: HashMap<Sym, u32>,
    names: Vec<Sym>,
}

impl RuleCtx {
    fn new() -> Self {
        RuleCtx {
            vars: HashMap::new(),
            names: Vec::new(),
        }
    }
    fn var(&mut self, s: Sym) -> u32 {
        let n = self.names.len() as u32;
        *self.vars.entry(s).or_insert_with(|| {
            self.names.push(s);
            n
        })
    }
}

fn count_term_vars(t: &Term, counts: &mut HashMap<Sym, usize>) {
    match t {
        Term::Var(s, _) => *counts.entry(*s).or_default() += 1,
        Term::Const(..) => {}
        Term::Func(_, args, _) => args.iter().for_each(|a| count_term_vars(a, counts)),
    }
}

fn count_lit_vars(l: &Literal, counts: &mut HashMap<Sym, usize>) {
    match l {
        Literal::Atom(a) => a.args.iter().for_each(|t| count_term_vars(t, counts)),
        Literal::Not(x, _) => count_lit_vars(x, counts),
        Literal::Or(xs, _) | Literal::And(xs, _) => {
            xs.iter().for_each(|x| count_lit_vars(x, counts))
        }
    }
}

/// Lowers a parsed program into plain rules (see the module documentation).
pub fn lower(src: &ast::Program) -> Result<Program, EngineError> {
    let mut defined = hashbrown::HashSet::new();
    for st in &src.statements {
        if let Statement::Rule { head, .. } = st {
            defined.insert(src.symbols.name(head.pred).to_ascii_lowercase());
        }
    }
    let mut l = Lowerer {
        out: Program {
            terms: TermStore::new(src.symbols.clone()),
            relations: Vec::new(),
            rules: Vec::new(),
            operations: Vec::new(),
            syntax: src.syntax,
            keywords: Keywords::default(),
            generated: HashMap::new(),
        },
        rel_ids: HashMap::new(),
        func_arity: HashMap::new(),
        builtins_on: src.syntax == Syntax::Infix,
        defined,
        aux: 0,
        negations: hashbrown::HashSet::new(),
    };
    let mut conditions: u64 = 0;
    for st in &src.statements {
        let at = || match st {
            Statement::Rule { head, .. } => src.symbols.name(head.pred).to_string(),
            Statement::Operation { action, .. } => src.symbols.name(action.pred).to_string(),
        };
        if st.longest_body() > MAX_RULE_CONDITIONS {
            return Err(EngineError::Invalid(Invalid::TooLongRule {
                at: at(),
                limit: MAX_RULE_CONDITIONS,
            }));
        }
        conditions = conditions.saturating_add(st.expanded_terms());
        if conditions > MAX_EXPANDED_TERMS {
            return Err(EngineError::Invalid(Invalid::TooManyTerms {
                at: at(),
                limit: MAX_EXPANDED_TERMS,
            }));
        }
        match st {
            Statement::Rule { head, body, .. } => l.rule(head, body)?,
            Statement::Operation {
                action,
                conditions,
                effects,
                ..
            } => l.operation(action, conditions, effects)?,
        }
    }
    let k = &mut l.out.keywords;
    let find = |rels: &HashMap<Sym, (RelId, usize)>, syms: &ast::Symbols, n: &str, a: usize| {
        syms.get(n)
            .and_then(|s| rels.get(&s))
            .filter(|(_, ar)| *ar == a)
            .map(|(r, _)| *r)
    };
    let syms = l.out.terms.symbols();
    k.role = find(&l.rel_ids, syms, "role", 1);
    k.init = find(&l.rel_ids, syms, "init", 1);
    k.true_ = find(&l.rel_ids, syms, "true", 1);
    k.next = find(&l.rel_ids, syms, "next", 1);
    k.does = find(&l.rel_ids, syms, "does", 2);
    k.legal = find(&l.rel_ids, syms, "legal", 2);
    k.legal1 = find(&l.rel_ids, syms, "legal", 1);
    k.goal = find(&l.rel_ids, syms, "goal", 2);
    k.terminal = find(&l.rel_ids, syms, "terminal", 0);
    k.base = find(&l.rel_ids, syms, "base", 1);
    k.input = find(&l.rel_ids, syms, "input", 2);
    if !l.out.operations.is_empty() && (k.next.is_some() || k.does.is_some()) {
        return Err(EngineError::Invalid(Invalid::MixedSemantics));
    }
    Ok(l.out)
}

impl Lowerer {
    /// The name of `s`: a source symbol, or one lowering made (`__not1`), which only the output's
    /// table knows.
    fn name(&self, s: Sym) -> &str {
        self.out.terms.name(s)
    }

    /// The canonical symbol of a relation name: keywords in lower case, other names as written.
    fn canonical(&mut self, s: Sym) -> Sym {
        // The output's table: it also knows the names lowering makes (`__not1`).
        let name = self.out.terms.name(s);
        let lower = name.to_ascii_lowercase();
        if lower != name && folds_case(&lower) {
            self.out.terms.intern_sym(&lower)
        } else {
            s
        }
    }

    fn rel(&mut self, pred: Sym, arity: usize) -> Result<RelId, EngineError> {
        let sym = self.canonical(pred);
        if let Some(&(id, a)) = self.rel_ids.get(&sym) {
            if a != arity {
                return Err(EngineError::Invalid(Invalid::Arity {
                    kind: "relation",
                    name: self.out.terms.name(sym).to_string(),
                    first: a,
                    other: arity,
                }));
            }
            return Ok(id);
        }
        let id = RelId(self.out.relations.len() as u32);
        let origin = match self.negations.contains(&sym) {
            true => Origin::Negation,
            false => Origin::User,
        };
        self.out.relations.push(Relation {
            name: sym,
            arity,
            origin,
        });
        self.rel_ids.insert(sym, (id, arity));
        Ok(id)
    }

    fn term(&mut self, t: &Term, ctx: &mut RuleCtx) -> Result<Pat, EngineError> {
        Ok(match t {
            Term::Var(s, _) => Pat::Var(ctx.var(*s)),
            Term::Const(s, _) => Pat::Term(self.out.terms.constant(*s)),
            Term::Func(f, args, _) if args.is_empty() => Pat::Term(self.out.terms.constant(*f)),
            Term::Func(f, args, _) => {
                match self.func_arity.get(f) {
                    Some(&n) if n != args.len() => {
                        return Err(EngineError::Invalid(Invalid::Arity {
                            kind: "function",
                            name: self.name(*f).to_string(),
                            first: n,
                            other: args.len(),
                        }))
                    }
                    _ => {
                        self.func_arity.insert(*f, args.len());
                    }
                }
                let pats = args
                    .iter()
                    .map(|a| self.term(a, ctx))
                    .collect::<Result<Vec<_>, _>>()?;
                if pats.iter().all(|p| matches!(p, Pat::Term(_))) {
                    let ids: Vec<TermId> = pats
                        .iter()
                        .map(|p| match p {
                            Pat::Term(t) => *t,
                            _ => unreachable!("checked above"),
                        })
                        .collect();
                    Pat::Term(self.out.terms.func(*f, &ids))
                } else {
                    Pat::Func(*f, pats)
                }
            }
        })
    }

    fn atom(&mut self, a: &ast::Atom, ctx: &mut RuleCtx) -> Result<IrAtom, EngineError> {
        let rel = self.rel(a.pred, a.args.len())?;
        let args = a
            .args
            .iter()
            .map(|t| self.term(t, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(IrAtom { rel, args })
    }

    /// A built-in's meaning, when the atom names one.
    fn builtin(&self, a: &ast::Atom) -> Option<&'static str> {
        let lower = self.name(a.pred).to_ascii_lowercase();
        let n = a.args.len();
        match (lower.as_str(), n) {
            ("distinct", 2) => Some("distinct"),
            _ if !self.builtins_on || self.defined.contains(&lower) => None,
            ("same", 2) => Some("same"),
            ("less", 2) => Some("less"),
            ("leq", 2) => Some("leq"),
            ("plus", 3) => Some("plus"),
            ("minus", 3) => Some("minus"),
            ("times", 3) => Some("times"),
            _ => None,
        }
    }

    fn positive(&mut self, a: &ast::Atom, ctx: &mut RuleCtx) -> Result<Lit, EngineError> {
        let Some(b) = self.builtin(a) else {
            return Ok(Lit::Pos(self.atom(a, ctx)?));
        };
        let mut p = a
            .args
            .iter()
            .map(|t| self.term(t, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(match b {
            "distinct" => Lit::Cmp(Cmp::Distinct, p.remove(0), p.remove(0)),
            "same" => Lit::Cmp(Cmp::Same, p.remove(0), p.remove(0)),
            "less" => Lit::Cmp(Cmp::Less, p.remove(0), p.remove(0)),
            "leq" => Lit::Cmp(Cmp::Leq, p.remove(0), p.remove(0)),
            op => {
                let op = match op {
                    "plus" => Arith::Plus,
                    "minus" => Arith::Minus,
                    _ => Arith::Times,
                };
                Lit::Arith(op, p.remove(0), p.remove(0), p.remove(0))
            }
        })
    }

    /// The disjunctive normal form of one body literal: alternatives, each a conjunction.
    fn dnf(
        &mut self,
        l: &Literal,
        ctx: &mut RuleCtx,
        outside: &HashMap<Sym, usize>,
    ) -> Result<Vec<Vec<Lit>>, EngineError> {
        Ok(match l {
            Literal::Atom(a) => vec![vec![self.positive(a, ctx)?]],
            Literal::Or(xs, _) => {
                let mut alts = Vec::new();
                for x in xs {
                    alts.extend(self.dnf(x, ctx, outside)?);
                }
                alts
            }
            Literal::And(xs, _) => {
                let mut alts = vec![Vec::new()];
                for x in xs {
                    let sub = self.dnf(x, ctx, outside)?;
                    let mut next = Vec::with_capacity(alts.len() * sub.len());
                    for a in &alts {
                        for s in &sub {
                            let mut c: Vec<Lit> = a.clone();
                            c.extend(s.iter().cloned());
                            next.push(c);
                        }
                    }
                    alts = next;
                }
                alts
            }
            Literal::Not(inner, span) => {
                // `not (not x)` is `x`: a relation for `not x` would bind none of `x`'s variables.
                if let Literal::Not(x, _) = &**inner {
                    return self.dnf(x, ctx, outside);
                }
                // `not (or a b)` is `not a` and `not b`: a relation of its own would need every
                // alternative to bind the variables the rest of the rule shares with it, and
                // `(not (or (true (winner ?r)) (true (winner none))))` does not.
                if let Literal::Or(xs, _) = &**inner {
                    let each: Vec<Literal> = xs
                        .iter()
                        .map(|x| Literal::Not(Box::new(x.clone()), *span))
                        .collect();
                    return self.dnf(&Literal::And(each, *span), ctx, outside);
                }
                if let Literal::Atom(a) = &**inner {
                    let lit = match self.positive(a, ctx)? {
                        Lit::Pos(atom) => Some(Lit::Neg(atom)),
                        Lit::Cmp(Cmp::Distinct, x, y) => Some(Lit::Cmp(Cmp::Same, x, y)),
                        Lit::Cmp(Cmp::Same, x, y) => Some(Lit::Cmp(Cmp::Distinct, x, y)),
                        // Not `leq(y, x)`: that is false when either is not an integer.
                        Lit::Cmp(Cmp::Less, x, y) => Some(Lit::Cmp(Cmp::NotLess, x, y)),
                        Lit::Cmp(Cmp::Leq, x, y) => Some(Lit::Cmp(Cmp::NotLeq, x, y)),
                        Lit::Cmp(Cmp::NotLess, x, y) => Some(Lit::Cmp(Cmp::Less, x, y)),
                        Lit::Cmp(Cmp::NotLeq, x, y) => Some(Lit::Cmp(Cmp::Leq, x, y)),
                        // A relation of its own for `~plus(X, 1, 3)` would have to list every X.
                        Lit::Arith(op, x, y, z) => Some(Lit::NotArith(op, x, y, z)),
                        Lit::Neg(_) | Lit::NotArith(..) => None,
                    };
                    if let Some(lit) = lit {
                        return Ok(vec![vec![lit]]);
                    }
                }
                // not(compound): a fresh relation over the variables the rest of the rule shares with it.
                let mut inside = HashMap::new();
                count_lit_vars(inner, &mut inside);
                let mut shared: Vec<Sym> = inside
                    .iter()
                    .filter(|(s, n)| outside.get(*s).copied().unwrap_or(0) > **n)
                    .map(|(s, _)| *s)
                    .collect();
                shared.sort();
                // A name no symbol of the author's has, so the relation is never theirs.
                let mut name;
                loop {
                    self.aux += 1;
                    name = format!("__not{}", self.aux);
                    if self.out.terms.symbols().get(&name).is_none() {
                        break;
                    }
                }
                let pred = self.out.terms.intern_sym(&name);
                self.negations.insert(pred);
                let head = ast::Atom {
                    pred,
                    args: shared.iter().map(|s| Term::Var(*s, *span)).collect(),
                    parens: false,
                    span: *span,
                };
                self.rule(&head, std::slice::from_ref(&**inner))?;
                vec![vec![Lit::Neg(self.atom(&head, ctx)?)]]
            }
        })
    }

    /// A conjunction of conditions as the conjunctions of plain literals it means: the product of
    /// each condition's disjunctive normal form (`a & (b | c)` is `a & b` or `a & c`).
    fn alternatives(
        &mut self,
        conditions: &[Literal],
        ctx: &mut RuleCtx,
        counts: &HashMap<Sym, usize>,
    ) -> Result<Vec<Vec<Lit>>, EngineError> {
        let mut alts = vec![Vec::new()];
        for l in conditions {
            let sub = self.dnf(l, ctx, counts)?;
            let mut next = Vec::with_capacity(alts.len() * sub.len());
            for a in &alts {
                for s in &sub {
                    let mut c: Vec<Lit> = a.clone();
                    c.extend(s.iter().cloned());
                    next.push(c);
                }
            }
            alts = next;
        }
        Ok(alts)
    }

    fn rule(&mut self, head: &ast::Atom, body: &[Literal]) -> Result<(), EngineError> {
        let mut counts = HashMap::new();
        head.args
            .iter()
            .for_each(|t| count_term_vars(t, &mut counts));
        body.iter().for_each(|l| count_lit_vars(l, &mut counts));
        let mut ctx = RuleCtx::new();
        let h = self.atom(head, &mut ctx)?;
        for body in self.alternatives(body, &mut ctx, &counts)? {
            self.out.rules.push(Rule {
                head: h.clone(),
                body,
                var_names: ctx.names.clone(),
            });
        }
        Ok(())
    }

    fn operation(
        &mut self,
        action: &ast::Atom,
        conditions: &[Literal],
        effects: &[ast::Effect],
    ) -> Result<(), EngineError> {
        let mut counts = HashMap::new();
        action
            .args
            .iter()
            .for_each(|t| count_term_vars(t, &mut counts));
        conditions
            .iter()
            .for_each(|l| count_lit_vars(l, &mut counts));
        for e in effects {
            e.atom
                .args
                .iter()
                .for_each(|t| count_term_vars(t, &mut counts));
        }
        let mut ctx = RuleCtx::new();
        let as_term = |a: &ast::Atom| a.clone().into_term();
        let act = self.term(&as_term(action), &mut ctx)?;
        let mut effs = Vec::new();
        for e in effects {
            // Effects name state facts; registering the relation keeps arities consistent with views.
            self.rel(e.atom.pred, e.atom.args.len())?;
            effs.push((e.add, self.term(&as_term(&e.atom), &mut ctx)?));
        }
        for conds in self.alternatives(conditions, &mut ctx, &counts)? {
            self.out.operations.push(Operation {
                action: act.clone(),
                conditions: conds,
                effects: effs.clone(),
                var_names: ctx.names.clone(),
            });
        }
        Ok(())
    }
}

struct PatFmt<'a>(&'a Program, &'a Pat, &'a [Sym]);

impl fmt::Display for PatFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let PatFmt(p, pat, names) = *self;
        match pat {
            Pat::Var(v) => write!(f, "?{}", p.terms.name(names[*v as usize])),
            // Terms are written the way atoms are, `cell(?x, 1, white)`, so that one rule does not mix
            // the two syntaxes.
            Pat::Term(t) => f.write_str(&p.terms.infix(*t)),
            Pat::Func(s, args) => {
                write!(f, "{}(", p.terms.name(*s))?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", PatFmt(p, a, names))?;
                }
                f.write_str(")")
            }
        }
    }
}

impl Program {
    /// Writes an atom as `name(arg, ...)`.
    fn fmt_atom(&self, f: &mut fmt::Formatter<'_>, a: &IrAtom, names: &[Sym]) -> fmt::Result {
        f.write_str(self.terms.name(self.relations[a.rel.0 as usize].name))?;
        if !a.args.is_empty() {
            f.write_str("(")?;
            for (i, x) in a.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", PatFmt(self, x, names))?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }

    /// Writes a body condition.
    pub(crate) fn fmt_lit(
        &self,
        f: &mut fmt::Formatter<'_>,
        l: &Lit,
        names: &[Sym],
    ) -> fmt::Result {
        match l {
            Lit::Pos(a) => self.fmt_atom(f, a, names),
            Lit::Neg(a) => {
                f.write_str("~")?;
                self.fmt_atom(f, a, names)
            }
            Lit::Cmp(c, x, y) => {
                let n = match c {
                    Cmp::Distinct => "distinct",
                    Cmp::Same => "same",
                    Cmp::Less => "less",
                    Cmp::Leq => "leq",
                    Cmp::NotLess => "~less",
                    Cmp::NotLeq => "~leq",
                };
                write!(
                    f,
                    "{n}({}, {})",
                    PatFmt(self, x, names),
                    PatFmt(self, y, names)
                )
            }
            Lit::Arith(op, x, y, z) | Lit::NotArith(op, x, y, z) => {
                let n = match op {
                    Arith::Plus => "plus",
                    Arith::Minus => "minus",
                    Arith::Times => "times",
                };
                if matches!(l, Lit::NotArith(..)) {
                    f.write_str("~")?;
                }
                write!(
                    f,
                    "{n}({}, {}, {})",
                    PatFmt(self, x, names),
                    PatFmt(self, y, names),
                    PatFmt(self, z, names)
                )
            }
        }
    }

    /// Writes one rule as `head :- body.`
    pub(crate) fn fmt_rule(&self, f: &mut fmt::Formatter<'_>, r: &Rule) -> fmt::Result {
        self.fmt_atom(f, &r.head, &r.var_names)?;
        for (i, l) in r.body.iter().enumerate() {
            f.write_str(if i == 0 { " :- " } else { ", " })?;
            self.fmt_lit(f, l, &r.var_names)?;
        }
        f.write_str(".")
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.rules {
            self.fmt_rule(f, r)?;
            writeln!(f)?;
        }
        for o in &self.operations {
            write!(f, "{} ::", PatFmt(self, &o.action, &o.var_names))?;
            for (i, l) in o.conditions.iter().enumerate() {
                f.write_str(if i == 0 { " " } else { ", " })?;
                self.fmt_lit(f, l, &o.var_names)?;
            }
            f.write_str(" ==>")?;
            for (add, e) in &o.effects {
                write!(
                    f,
                    " {}{}",
                    if *add { "" } else { "~" },
                    PatFmt(self, e, &o.var_names)
                )?;
            }
            writeln!(f, ".")?;
        }
        Ok(())
    }
}
