//! The relation dependency graph: strata, negation cycles, the recursion restriction, and which
//! relations depend on `does`.

use hashbrown::{HashMap, HashSet};

use crate::datalog::scc;
use crate::diagnostics::Diagnostic;
use crate::syntax::ast::{for_each_atom, for_each_var};
use crate::syntax::ast::{Atom, Literal, Program, Span, Statement, Sym, Term, MAX_EXPANDED_TERMS};
use crate::syntax::Keyword;

/// The relations of a program in evaluation order: a relation's rules only need relations of lower
/// strata negatively and of lower or equal strata positively.
#[derive(Clone, Debug, Default)]
pub struct Strata {
    /// The stratum of every relation that appears in a rule or fact.
    pub stratum: HashMap<Sym, usize>,
    /// The relations of each stratum, lowest first.
    pub layers: Vec<Vec<Sym>>,
}

/// Groups the relations of `p` into strata, or names the relations of each negation cycle.
pub fn strata(p: &Program) -> Result<Strata, Vec<Diagnostic>> {
    Graph::build(p).strata(p)
}

struct Edge {
    to: usize,
    negative: bool,
    span: Span,
    /// The negated atom, kept to tell a real negation cycle from one between different instances.
    atom: Option<Atom>,
}

impl scc::Successor for Edge {
    fn to(&self) -> usize {
        self.to
    }
}

pub(super) struct Graph {
    nodes: Vec<Sym>,
    index: HashMap<Sym, usize>,
    edges: Vec<Vec<Edge>>,
    /// Strongly connected component of each node; components are numbered dependencies first (the
    /// order [`scc::tarjan`] returns them in).
    scc: Vec<usize>,
    /// First defining span of each node.
    defined_at: Vec<Option<Span>>,
}

impl Graph {
    fn node(&mut self, p: &Program, s: Sym) -> usize {
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        // `GOAL` is `goal` to the engines (keywords and built-ins in any case): one relation.
        let name = p.symbols.name(s);
        let lower = name.to_ascii_lowercase();
        if crate::datalog::ir::folds_case(&lower) {
            if let Some(&i) = self.index.iter().find_map(|(other, i)| {
                (p.symbols.name(*other).eq_ignore_ascii_case(name)).then_some(i)
            }) {
                self.index.insert(s, i);
                return i;
            }
        }
        let i = self.nodes.len();
        self.nodes.push(s);
        self.index.insert(s, i);
        self.edges.push(Vec::new());
        self.defined_at.push(None);
        i
    }

    pub(super) fn build(p: &Program) -> Graph {
        let mut g = Graph {
            nodes: Vec::new(),
            index: HashMap::new(),
            edges: Vec::new(),
            scc: Vec::new(),
            defined_at: Vec::new(),
        };
        for st in &p.statements {
            match st {
                Statement::Rule { head, body, .. } => {
                    let h = g.node(p, head.pred);
                    g.defined_at[h].get_or_insert(head.span);
                    for l in body {
                        for_each_atom(l, false, &mut |a, neg| {
                            let b = g.node(p, a.pred);
                            g.edges[h].push(Edge {
                                to: b,
                                negative: neg,
                                span: a.span,
                                atom: neg.then(|| a.clone()),
                            });
                        });
                    }
                }
                Statement::Operation {
                    conditions,
                    effects,
                    ..
                } => {
                    // Operations run after the views are evaluated, so they add no dependency edges;
                    // their relations still get a stratum.
                    for l in conditions {
                        for_each_atom(l, false, &mut |a, _| {
                            g.node(p, a.pred);
                        });
                    }
                    for e in effects {
                        g.node(p, e.atom.pred);
                    }
                }
            }
        }
        g.scc = scc::component_of(g.nodes.len(), &scc::tarjan(g.nodes.len(), &g.edges));
        g
    }

    pub(super) fn strata(&self, p: &Program) -> Result<Strata, Vec<Diagnostic>> {
        let ncomp = self.scc.iter().copied().max().map_or(0, |m| m + 1);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); ncomp];
        for (v, &c) in self.scc.iter().enumerate() {
            members[c].push(v);
        }
        let mut level = vec![0usize; ncomp];
        let mut errors = Vec::new();
        for c in 0..ncomp {
            let mut lv = 0;
            let mut bad: Option<Span> = None;
            for &v in &members[c] {
                for e in &self.edges[v] {
                    let d = self.scc[e.to];
                    if d == c {
                        if e.negative && self.real_negative_cycle(p, c, e.atom.as_ref()) {
                            bad.get_or_insert(e.span);
                        }
                    } else {
                        lv = lv.max(level[d] + usize::from(e.negative));
                    }
                }
            }
            level[c] = lv;
            if let Some(span) = bad {
                let mut names: Vec<&str> = members[c]
                    .iter()
                    .map(|&v| p.symbols.name(self.nodes[v]))
                    .collect();
                names.sort_unstable();
                let list = names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                errors.push(
                    Diagnostic::error(span, if names.len() == 1 {
                        format!("negation is not stratified: {list} depends on its own negation")
                    } else {
                        format!("negation is not stratified: {list} depend on each other through a negation")
                    })
                        .with_help(format!(
                            "a relation must not depend on its own negation; break the cycle through `{}`",
                            if p.syntax == crate::syntax::ast::Syntax::Infix { "~" } else { "not" }
                        )),
                );
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut out = Strata::default();
        let top = level.iter().copied().max().map_or(0, |m| m + 1);
        out.layers = vec![Vec::new(); top];
        for (v, &s) in self.nodes.iter().enumerate() {
            let l = level[self.scc[v]];
            out.stratum.insert(s, l);
            out.layers[l].push(s);
        }
        Ok(out)
    }

    /// A negative edge inside a component is harmless when every rule that could produce the negated
    /// atom stays outside the component, as in `(<= (goal r 100) (not (goal r 0)))` with `(goal r 0)`
    /// defined from `true` alone (several corpus games do this). Unification treats variables as
    /// wildcards, which over-approximates: a real cycle is never missed.
    fn real_negative_cycle(&self, p: &Program, c: usize, atom: Option<&Atom>) -> bool {
        let Some(atom) = atom else { return true };
        p.statements.iter().any(|st| {
            let Statement::Rule { head, body, .. } = st else {
                return false;
            };
            // The same relation, `GOAL` and `goal` too (one node).
            if self.index.get(&head.pred) != self.index.get(&atom.pred) || !unifiable(head, atom) {
                return false;
            }
            let mut inside = false;
            for l in body {
                for_each_atom(l, false, &mut |a, _| {
                    inside |= self.index.get(&a.pred).is_some_and(|&i| self.scc[i] == c);
                });
            }
            inside
        })
    }

    /// GDL's recursion restriction: in a rule for `p` with a body atom `q(s1..sn)` recursive with
    /// `p`, each `si` is ground, an argument of the head, or made of variables bound by positive atoms
    /// of relations not recursive with `p`.
    pub(super) fn recursion_restriction(&self, p: &Program) -> Vec<Diagnostic> {
        let mut errors = Vec::new();
        for st in &p.statements {
            let Statement::Rule { head, body, .. } = st else {
                continue;
            };
            let Some(&h) = self.index.get(&head.pred) else {
                continue;
            };
            let hc = self.scc[h];
            // Each alternative of the body's `or`s on its own, as the engines run it (a body that
            // multiplies out past what the engines take is refused by the expansion check).
            if st.expanded_terms() > MAX_EXPANDED_TERMS {
                continue;
            }
            let mut reported: HashSet<(u32, u32)> = HashSet::new();
            for alternative in positive_alternatives(body) {
                let mut safe_vars: HashSet<Sym> = HashSet::new();
                let mut recursive: Vec<&Atom> = Vec::new();
                for a in alternative {
                    let c = self.index.get(&a.pred).map(|&i| self.scc[i]);
                    if c == Some(hc) {
                        recursive.push(a);
                    } else {
                        for t in &a.args {
                            for_each_var(t, &mut |v, _| {
                                safe_vars.insert(v);
                            });
                        }
                    }
                }
                for a in recursive {
                    for (i, t) in a.args.iter().enumerate() {
                        if is_ground(t) || head.args.iter().any(|h| h == t) {
                            continue;
                        }
                        let mut ok = true;
                        for_each_var(t, &mut |v, _| ok &= safe_vars.contains(&v));
                        if !ok && reported.insert((t.span().start, t.span().end)) {
                            let q = p.symbols.name(a.pred);
                            let hn = p.symbols.name(head.pred);
                            errors.push(
                            Diagnostic::error(t.span(), format!(
                                "argument {} of `{q}` breaks GDL's recursion restriction in the rule for `{hn}`",
                                i + 1
                            ))
                            .with_help(format!(
                                "`{q}` is recursive with `{hn}`; each of its arguments must be ground, an argument of the head, or bound by a non-recursive positive condition"
                            )),
                        );
                        }
                    }
                }
            }
        }
        errors
    }

    /// Per relation, the condition through which it comes to depend on a relation `is_source` picks
    /// (`None` when it does not, or is one): a walk back along the edges, `next` left out (it describes
    /// the following state, so what reads it does not depend on the current one).
    fn depends_on(&self, p: &Program, is_source: impl Fn(usize) -> bool) -> Vec<Option<Span>> {
        let n = self.nodes.len();
        // reverse[v]: (u, span of the literal in u's rule that reads v).
        let mut reverse: Vec<Vec<(usize, Span)>> = vec![Vec::new(); n];
        for (v, es) in self.edges.iter().enumerate() {
            for e in es {
                reverse[e.to].push((v, e.span));
            }
        }
        let mut why: Vec<Option<Span>> = vec![None; n];
        let mut reach = vec![false; n];
        let mut work: Vec<usize> = (0..n).filter(|&v| is_source(v)).collect();
        for &v in &work {
            reach[v] = true;
        }
        while let Some(v) = work.pop() {
            if Keyword::of(p.symbols.name(self.nodes[v])) == Some(Keyword::Next) {
                continue;
            }
            for &(u, span) in &reverse[v] {
                if !reach[u] {
                    reach[u] = true;
                    why[u] = Some(span);
                    work.push(u);
                }
            }
        }
        why
    }

    /// `legal`, `goal` and `terminal` must not depend on `does`.
    pub(super) fn does_dependence(&self, p: &Program) -> Vec<Diagnostic> {
        let kw = |v: usize| Keyword::of(p.symbols.name(self.nodes[v]));
        let why = self.depends_on(p, |v| kw(v) == Some(Keyword::Does));
        let mut errors = Vec::new();
        for (v, span) in why.iter().enumerate() {
            let name = p.symbols.name(self.nodes[v]);
            if let (Some(span), Some(Keyword::Legal | Keyword::Goal | Keyword::Terminal)) =
                (span, kw(v))
            {
                errors.push(
                    Diagnostic::error(
                        *span,
                        format!("`{name}` depends on `does` through this condition"),
                    )
                    .with_help("legal moves, goals and termination must follow from the current state alone, not from the moves being made"),
                );
            }
        }
        errors
    }

    /// An error when `init` reads the state or the moves, directly or through the relations it
    /// reads (`is_state` names those relations: `true` and `does`, or an operation game's state
    /// relations; `state_reads` says in the help what the relations `init` reads must not do). The
    /// engines compute the initial state before any state exists, and the 2008 specification keeps
    /// `init` apart from `true`, `does` and what they make.
    pub(super) fn init_dependence(
        &self,
        p: &Program,
        is_state: impl Fn(Sym) -> bool,
        state_reads: &str,
    ) -> Vec<Diagnostic> {
        let why = self.depends_on(p, |v| is_state(self.nodes[v]));
        (0..self.nodes.len())
            .filter(|&v| Keyword::of(p.symbols.name(self.nodes[v])) == Some(Keyword::Init))
            .filter_map(|v| why[v])
            .map(|span| {
                Diagnostic::error(span, "`init` depends on the state through this condition")
                    .with_help(format!(
                        "the game starts from `init` before any state exists: derive it from \
                         facts and relations that {state_reads}"
                    ))
            })
            .collect()
    }
}

fn is_ground(t: &Term) -> bool {
    match t {
        Term::Var(..) => false,
        Term::Const(..) => true,
        Term::Func(_, args, _) => args.iter().all(is_ground),
    }
}

/// The positive atoms of each alternative of a conjunction once its `or`s are multiplied out (a
/// negation binds nothing, so what is under one is left out).
fn positive_alternatives(lits: &[Literal]) -> Vec<Vec<&Atom>> {
    fn of(l: &Literal) -> Vec<Vec<&Atom>> {
        match l {
            Literal::Atom(a) => vec![vec![a]],
            Literal::Not(..) => vec![vec![]],
            Literal::Or(xs, _) => xs.iter().flat_map(of).collect(),
            Literal::And(xs, _) => positive_alternatives(xs),
        }
    }
    lits.iter().fold(vec![vec![]], |mut alts, l| {
        let sub = of(l);
        if let [only] = &sub[..] {
            // A condition without alternatives extends each in place: copying every alternative
            // for each condition made a long body quadratic.
            alts.iter_mut().for_each(|a| a.extend_from_slice(only));
            return alts;
        }
        alts.iter()
            .flat_map(|a| {
                sub.iter()
                    .map(move |s| a.iter().chain(s).copied().collect::<Vec<_>>())
            })
            .collect()
    })
}

fn unifiable(a: &Atom, b: &Atom) -> bool {
    a.args.len() == b.args.len()
        && a.args
            .iter()
            .zip(&b.args)
            .all(|(x, y)| terms_unifiable(x, y))
}

fn terms_unifiable(x: &Term, y: &Term) -> bool {
    match (x, y) {
        (Term::Var(..), _) | (_, Term::Var(..)) => true,
        (Term::Const(a, _), Term::Const(b, _)) => a == b,
        (Term::Func(f, xs, _), Term::Func(g, ys, _)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(a, b)| terms_unifiable(a, b))
        }
        _ => false,
    }
}
