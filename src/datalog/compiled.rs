//! The compiled program: what the planner hands the evaluator.
//!
//! [`Plan`] is the whole of it: the [`Stratum`]s in evaluation order, each relation's [`Phase`], and
//! the key [`Slot`]s of each relation's indexes. A stratum's rules are [`CompiledRule`]s: the body as
//! planned [`Step`]s (what the plan prints) and as the [`Instr`]uctions the join runs, which
//! [`compile`] derives from the steps. The entry point is [`compile`]; `plan` builds a [`Plan`] and
//! `eval` runs one, and this module depends on neither, so the planner and the evaluator each depend
//! on this interface and not on each other.
//!
//! **Invariant:** the body order is fixed by the planner, so [`compile`] knows where each variable
//! gets bound: a [`Match`] binds or compares and never has to undo a binding, and a column an index
//! keys whole is not compared again. The steps and the instructions say the same thing in two forms,
//! and both are kept: the steps for printing and for the analyses that read a plan (the static prefix,
//! `exists_from`), the instructions for running.

use std::fmt;

use smallvec::SmallVec;

use super::ir::{Arith, Cmp, IrAtom, Pat, RelId};
use super::terms::{TermId, TermStore};
use crate::syntax::ast::Sym;

/// When a relation is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Once, when the game is loaded.
    Static,
    /// Once per state (depends on `true`).
    State,
    /// Once per joint move (depends on `does`).
    Move,
}

/// Where one key value sits in a fact: a column, and the argument path inside that column's term
/// (empty: the whole column), or the function symbol of a column's term ([`Slot::functor`]).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Slot {
    /// The column.
    pub col: usize,
    /// The argument positions leading from the column's term to the value; [`FUNCTOR`] alone: the
    /// column's function symbol.
    pub path: SmallVec<[u8; 2]>,
}

/// The path of a [`Slot::functor`] slot.
pub const FUNCTOR: u8 = u8::MAX;

/// The key value of function symbol `s` in a functor slot: above every term number, so that it is
/// never a term's.
pub(crate) fn functor_key(s: Sym) -> TermId {
    TermId(0x8000_0000 | s.0)
}

impl Slot {
    /// The whole column `col`.
    pub fn column(col: usize) -> Slot {
        Slot {
            col,
            path: SmallVec::new(),
        }
    }

    /// The function symbol of column `col`'s term: a key for a column whose function term has
    /// nothing bound (`true((control ?p))` looks up the `control` facts, not every `true` fact).
    pub fn functor(col: usize) -> Slot {
        Slot {
            col,
            path: SmallVec::from_slice(&[FUNCTOR]),
        }
    }

    /// Whether the slot is a [`Slot::functor`] one.
    pub fn is_functor(&self) -> bool {
        self.path.last() == Some(&FUNCTOR)
    }

    /// The part of an atom's arguments `args` that the slot names (made by [`key_slots`](super::plan::key_slots) over them);
    /// for a functor slot, the column's function term.
    pub(crate) fn pattern<'a>(&self, args: &'a [Pat]) -> &'a Pat {
        let mut p = &args[self.col];
        for &i in &self.path {
            // The function symbol's mark, never an argument's place: a term's 256th argument
            // (index 255) is no key of a functor slot.
            if i == FUNCTOR {
                break;
            }
            if let Pat::Func(_, sub) = p {
                if let Some(q) = sub.get(usize::from(i)) {
                    p = q;
                }
            }
        }
        p
    }

    /// The key value of the slot in a bound pattern: the pattern itself, or for a functor slot the
    /// [`functor_key`] of its symbol.
    pub(crate) fn key_pattern<'a>(&self, args: &'a [Pat]) -> Result<&'a Pat, TermId> {
        match self.pattern(args) {
            Pat::Func(s, _) if self.is_functor() => Err(functor_key(*s)),
            p => Ok(p),
        }
    }

    /// The slot's value in a fact, if the fact's terms have that part.
    #[inline]
    pub(crate) fn value(&self, terms: &TermStore, fact: &[TermId]) -> Option<TermId> {
        let mut t = fact[self.col];
        for &i in &self.path {
            if terms.is_const(t) {
                return None;
            }
            if i == FUNCTOR {
                return Some(functor_key(terms.sym(t)));
            }
            t = *terms.args(t).get(usize::from(i))?;
        }
        Some(t)
    }
}

/// `2` for a whole column, `1.0.3` for argument 3 of argument 0 of column 1's term.
impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.col)?;
        for &i in &self.path {
            if i == FUNCTOR {
                write!(f, ".f")?;
            } else {
                write!(f, ".{i}")?;
            }
        }
        Ok(())
    }
}

/// One step of a compiled rule body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// For every fact of `atom.rel` whose `key` columns equal the bound values, bind the other columns.
    Scan {
        /// The atom.
        atom: IrAtom,
        /// What is bound when the step runs.
        key: Vec<Slot>,
        /// Which of the relation's indexes serves `key` (none for a full scan).
        index: Option<usize>,
    },
    /// Succeeds when no fact of `atom.rel` matches (negation as failure).
    Absent {
        /// The atom.
        atom: IrAtom,
        /// What is bound when the step runs.
        key: Vec<Slot>,
        /// Which of the relation's indexes serves `key`.
        index: Option<usize>,
    },
    /// A comparison.
    Cmp(Cmp, Pat, Pat),
    /// Arithmetic.
    Arith(Arith, Pat, Pat, Pat),
    /// Negated arithmetic, every argument bound.
    NotArith(Arith, Pat, Pat, Pat),
}

/// A rule with its body in evaluation order.
#[derive(Clone, Debug)]
pub struct CompiledRule {
    /// Index of the rule in [`Program::rules`](super::ir::Program::rules).
    pub source: usize,
    /// The conclusion.
    pub head: IrAtom,
    /// The body, in evaluation order.
    pub steps: Vec<Step>,
    /// The number of variables.
    pub num_vars: usize,
    /// The first step from which no step binds a head variable: one solution of the steps from there
    /// on is as good as all of them (they only check that something exists), so the join stops there
    /// at the first success.
    pub exists_from: usize,
    /// The semi-naive variants: for each body scan of a relation of the rule's own stratum, the body
    /// ordered with that scan first (it is the one restricted to the previous round's new rows, so
    /// the join starts from the few new facts instead of looking them up from every old one).
    pub deltas: Vec<DeltaPlan>,
    /// `steps` compiled for execution.
    pub code: Vec<Instr>,
    /// In a per-state or per-move rule, the number of leading steps that read only load-time
    /// relations (0 when fewer than two): their answers are the same in every state, so the evaluator
    /// computes them once and replays them.
    pub static_prefix: usize,
    /// The variables bound by those steps, in the order the replay stores them.
    pub prefix_vars: Vec<u32>,
}

/// A rule body ordered to start from one recursive relation's new facts.
#[derive(Clone, Debug)]
pub struct DeltaPlan {
    /// The relation whose new rows step 0 scans.
    pub rel: RelId,
    /// Its place among its stratum's relations ([`Stratum::rels`]): where a round finds its new
    /// rows without searching the stratum's relations for it, which every variant of every round
    /// once did (chess's load-time fixpoint: some 400 rounds of a stratum of hundreds of relations).
    pub slot: usize,
    /// The body, in evaluation order, starting with the scan of `rel`.
    pub steps: Vec<Step>,
    /// As [`CompiledRule::exists_from`], for these steps.
    pub exists_from: usize,
    /// `steps` compiled for execution.
    pub code: Vec<Instr>,
}

/// A stratum: relations defined together.
#[derive(Clone, Debug)]
pub struct Stratum {
    /// The relations.
    pub rels: Vec<RelId>,
    /// The compiled rules defining them.
    pub rules: Vec<CompiledRule>,
    /// Whether a rule reads a relation of the stratum itself.
    pub recursive: bool,
    /// When the stratum is computed.
    pub phase: Phase,
}

/// The evaluation plan of a program.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Strata in evaluation order.
    pub strata: Vec<Stratum>,
    /// The phase of each relation.
    pub phases: Vec<Phase>,
    /// For each relation, the key slots of its indexes.
    pub indexes: Vec<Vec<Vec<Slot>>>,
}

/// How a term is matched at one place of a compiled rule. Whether each variable is already bound there
/// is known when the rule is compiled (the body order is fixed), so matching never asks and never
/// has to undo a binding: a variable bound here is simply overwritten by the next row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Binds the variable.
    Bind(u32),
    /// Equals the (bound) variable.
    Var(u32),
    /// Equals the term.
    Const(TermId),
    /// A function term with this symbol and arguments matching these, in order.
    Func(Sym, Box<[Match]>),
}

/// Where one key column's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A bound variable.
    Var(u32),
    /// A ground term.
    Const(TermId),
    /// A function term over bound variables (looked up in the term store; when absent, nothing matches).
    Pat(Pat),
}

/// For every row of `rel` whose key columns (those of `index`) equal `key`, match `cols`; when
/// `positive` is false, succeed once when no row matches (negation as failure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The relation.
    pub rel: u32,
    /// The index serving the key (none: every row).
    pub index: Option<usize>,
    /// The key values, in the index's column order.
    pub key: Box<[Key]>,
    /// The other columns and how they match.
    pub cols: Box<[(usize, Match)]>,
    /// A scan (true) or a negation (false).
    pub positive: bool,
}

/// One step of a compiled rule body (see [`compile`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// A scan or a negation of a relation.
    Scan(Scan),
    /// `distinct` of two bound patterns.
    Distinct(Pat, Pat),
    /// The bound pattern's term matches the other side.
    Same(Pat, Match),
    /// An ordering (`less`, `leq` or a negation of either) of two bound patterns.
    Order(Cmp, Pat, Pat),
    /// Arithmetic on two bound patterns, the result matched.
    Arith(Arith, Pat, Pat, Match),
    /// Negated arithmetic on three bound patterns: no integer result of the first two is the third.
    NotArith(Arith, Pat, Pat, Pat),
}

/// The matcher of a pattern given what is bound; marks what it binds.
fn matcher(p: &Pat, bound: &mut [bool]) -> Match {
    match p {
        Pat::Var(v) if bound[*v as usize] => Match::Var(*v),
        Pat::Var(v) => {
            bound[*v as usize] = true;
            Match::Bind(*v)
        }
        Pat::Term(t) => Match::Const(*t),
        Pat::Func(s, args) => Match::Func(*s, args.iter().map(|a| matcher(a, bound)).collect()),
    }
}

fn key_of(p: &Pat) -> Key {
    match p {
        Pat::Var(v) => Key::Var(*v),
        Pat::Term(t) => Key::Const(*t),
        Pat::Func(..) => Key::Pat(p.clone()),
    }
}

/// Compiles planned steps into the form [`Db::run`](super::eval::Db::run) executes, deciding statically where each variable
/// is bound (following the same rules as the planner: a scan binds its variables, a negation binds
/// nothing after it, `same` binds its free side, arithmetic its result).
pub fn compile(steps: &[Step], num_vars: usize) -> Vec<Instr> {
    let mut bound = vec![false; num_vars];
    let mut out = Vec::with_capacity(steps.len());
    for st in steps {
        out.push(match st {
            Step::Scan { atom, key, index } | Step::Absent { atom, key, index } => {
                let positive = matches!(st, Step::Scan { .. });
                let mut local = bound.clone();
                let by_index = index.is_some();
                let keyv: Box<[Key]> = if by_index {
                    key.iter()
                        .map(|s| match s.key_pattern(&atom.args) {
                            Ok(p) => key_of(p),
                            Err(functor) => Key::Const(functor),
                        })
                        .collect()
                } else {
                    Box::new([])
                };
                // A column keyed whole is not compared again; one keyed by parts is matched in full.
                let cols: Box<[(usize, Match)]> = (0..atom.args.len())
                    .filter(|&c| !by_index || !key.contains(&Slot::column(c)))
                    .map(|c| (c, matcher(&atom.args[c], &mut local)))
                    .collect();
                if positive {
                    bound = local;
                }
                Instr::Scan(Scan {
                    rel: atom.rel.0,
                    index: *index,
                    key: keyv,
                    cols,
                    positive,
                })
            }
            Step::Cmp(Cmp::Distinct, x, y) => Instr::Distinct(x.clone(), y.clone()),
            Step::Cmp(c @ (Cmp::Less | Cmp::Leq | Cmp::NotLess | Cmp::NotLeq), x, y) => {
                Instr::Order(*c, x.clone(), y.clone())
            }
            Step::Cmp(Cmp::Same, x, y) => {
                let (x, y) = if x.is_bound(&bound) { (x, y) } else { (y, x) };
                let m = matcher(y, &mut bound);
                Instr::Same(x.clone(), m)
            }
            Step::Arith(op, x, y, z) => {
                let m = matcher(z, &mut bound);
                Instr::Arith(*op, x.clone(), y.clone(), m)
            }
            Step::NotArith(op, x, y, z) => Instr::NotArith(*op, x.clone(), y.clone(), z.clone()),
        });
    }
    out
}
