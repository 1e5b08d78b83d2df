//! Compilation: the ground program becomes gates, and the gates a network in evaluation order.
//!
//! The entry point is [`compile`], which gives a [`Compiled`] (each output's literal over provisional
//! gates); [`Compiled::order`] then keeps the gates an output reads and numbers them, giving the
//! [`Network`]. An atom's literal is defined from its alternatives ([`Logic::define`]): constants fold
//! away, literals every alternative holds go into one AND with the OR of the rest, literals shared
//! by several alternatives are factored greedily, and the OR of most of a role's `does` inputs
//! becomes "the role moved, and not one of the few others". **Identical gates are shared** (see
//! [`gates`](super::gates)), and a NOT costs nothing: it is a flag on a literal.
//!
//! Atoms compile bottom-up, relation by relation in dependency order and each relation's atoms in row
//! order, so that bodies are read in memory order and **a gate only reads gates made before it**; the
//! depth-first walk of [`Compiler::atom_lit`] only takes over inside recursive relations, where a
//! ground cycle is refused. The atoms of a large relation outside recursion compile side by side
//! ([`Compiler::compile_side_by_side`]), and **the network is gate for gate the one compiled atom
//! after atom** (the unit test in [`super`] compares them). [`Compiled::order`] numbers **the state
//! gates (no `does` read) first, then the move gates**, each in creation order.

use std::time::Instant;

use hashbrown::HashMap;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::analysis::Analysis;
use super::atoms::{atom_name, Ground};
use super::budget::{Budget, NetworkError};
use super::gates::{GateStore, GateTable, Global, Local, GATE0, LOCAL0};
use super::{net::Gate, net::LegalOut, net::NetLit, net::FALSE, net::TRUE};
use crate::datalog::ir::{Lit, RelId};
use crate::datalog::plan::tarjan;
use crate::datalog::terms::TermId;

/// An output before compiling: a constant, or an atom.
#[derive(Clone, Copy)]
pub(super) enum Out {
    Const(bool),
    Atom(u32),
}

/// The outputs of the game as atoms (or constants): what the network computes.
pub(super) struct Outputs {
    /// Per role, (move number, move, legality) of every move that can be legal, by move number.
    legal: Vec<Vec<(u32, TermId, Out)>>,
    /// Per role, (value, output) of every goal value it can get, ascending.
    goals: Vec<Vec<(i32, Out)>>,
    terminal: Out,
    /// Per proposition, its `next`.
    next: Vec<Out>,
}

impl Outputs {
    /// The outputs of the game analysed in `a`, as atoms of `g`.
    pub(super) fn of(a: &Analysis, g: &Ground) -> Outputs {
        let out_lit = |r: RelId, args: &[TermId]| -> Out {
            if !a.dynamic[r.0 as usize] {
                return Out::Const(a.exact.rel(r).contains(args));
            }
            match g.find_atom(r, args) {
                Some(at) => Out::Atom(at),
                None => Out::Const(false),
            }
        };
        let role_of = |t: TermId| a.roles.iter().position(|r| *r == t);
        let mut legal: Vec<Vec<(u32, TermId, Out)>> = vec![Vec::new(); a.roles.len()];
        for row in &a.legal_rows {
            if let Some(ri) = role_of(row[0]) {
                legal[ri].push((
                    a.numbered.move_of[&row[1]],
                    row[1],
                    out_lit(a.rels.legal, row),
                ));
            }
        }
        for l in &mut legal {
            l.sort_by_key(|x| x.0);
            l.dedup_by_key(|x| x.0);
        }
        let mut goals: Vec<Vec<(i32, Out)>> = vec![Vec::new(); a.roles.len()];
        for row in super::analysis::rows(&a.relaxed, a.rels.goal) {
            let (Some(ri), Some(v)) = (
                role_of(row[0]),
                g.terms.as_int(row[1]).and_then(|v| i32::try_from(v).ok()),
            ) else {
                continue;
            };
            goals[ri].push((v, out_lit(a.rels.goal, &row)));
        }
        for v in &mut goals {
            v.sort_by_key(|x| x.0);
        }
        Outputs {
            legal,
            goals,
            terminal: out_lit(a.rels.terminal, &[]),
            next: a
                .numbered
                .props
                .iter()
                .map(|p| out_lit(a.rels.next, &[*p]))
                .collect(),
        }
    }
}

/// The outputs compiled (the result of [`compile`]): their literals over the compiler's gates, still
/// numbered provisionally.
pub(super) struct Compiled<'a> {
    c: Compiler<'a>,
    /// Per role, (move number, legality).
    legal: Vec<Vec<(u32, NetLit)>>,
    /// Per role, (goal value, literal).
    goals: Vec<Vec<(i32, NetLit)>>,
    terminal: NetLit,
    next: Vec<NetLit>,
}

/// The network in evaluation order (the result of [`Compiled::order`]); see
/// [`Grounded`](super::net::Grounded) for what each part means.
pub(super) struct Network {
    pub(super) first_gate: usize,
    pub(super) gates: Vec<Gate>,
    pub(super) state_gates: usize,
    pub(super) inputs: Vec<NetLit>,
    pub(super) legal: Vec<Vec<LegalOut>>,
    pub(super) goals: Vec<Vec<(i32, NetLit)>>,
    pub(super) terminal: NetLit,
    pub(super) next: Vec<NetLit>,
}

/// Compiles the atoms of `g` (the instances of rules `to_ground` of `a`'s program) that the
/// `outputs` read, within `budget`; `one_mover` is the turn of each role when turns were proved
/// exclusive (see [`one_mover`](super::turns::one_mover)). Relations outside recursion with at least
/// `side_by_side` atoms compile side by side, that many atoms a task.
pub(super) fn compile<'a>(
    g: &Ground,
    a: &'a Analysis,
    to_ground: &[usize],
    outputs: &Outputs,
    one_mover: &[Option<u32>],
    budget: Budget,
    side_by_side: usize,
) -> Result<Compiled<'a>, NetworkError> {
    let mut c = Compiler::new(
        g,
        a.numbered.props.len(),
        &a.numbered.prop_of,
        &a.roles,
        &a.numbered.move_of,
        budget,
    );
    c.logic.one_mover = one_mover.iter().map(|t| t.is_some()).collect();
    compile_atoms(&mut c, g, a, to_ground, side_by_side)?;
    let lit = |c: &mut Compiler, o: &Out| -> Result<NetLit, NetworkError> {
        match o {
            Out::Const(b) => Ok(*b as NetLit),
            Out::Atom(at) => c.atom_lit(g, *at),
        }
    };
    let mut legal = Vec::new();
    for l in &outputs.legal {
        let mut v = Vec::new();
        for (m, _, o) in l {
            v.push((*m, lit(&mut c, o)?));
        }
        legal.push(v);
    }
    let mut goals = Vec::new();
    for l in &outputs.goals {
        let mut v = Vec::new();
        for (val, o) in l {
            v.push((*val, lit(&mut c, o)?));
        }
        goals.push(v);
    }
    let terminal = lit(&mut c, &outputs.terminal)?;
    let mut next = Vec::new();
    for o in &outputs.next {
        next.push(lit(&mut c, o)?);
    }
    let compiled = Compiled {
        c,
        legal,
        goals,
        terminal,
        next,
    };
    if compiled
        .state_lits()
        .iter()
        .any(|l| compiled.c.move_dep(*l))
    {
        return Err(NetworkError::Unsupported(
            "`legal`, `goal` or `terminal` depends on `does`".into(),
        ));
    }
    Ok(compiled)
}

/// Compiles every atom an instance mentions, bottom-up, relation by relation and each relation's
/// atoms in order, so that an atom's bodies are read in memory order and its children are (nearly
/// always) compiled already; the depth-first walk of [`Compiler::atom_lit`] only takes over inside
/// recursive relations.
fn compile_atoms(
    c: &mut Compiler,
    g: &Ground,
    a: &Analysis,
    to_ground: &[usize],
    side_by_side: usize,
) -> Result<(), NetworkError> {
    let nrel = a.prog.relations.len();
    let mut deps: Vec<Vec<(usize, bool)>> = vec![Vec::new(); nrel];
    for &ri in to_ground {
        let rule = &a.prog.rules[ri];
        for l in &rule.body {
            if let Lit::Pos(x) | Lit::Neg(x) = l {
                // A reading of a copy whose atoms another copy's stand for reads that other's.
                let read = a.same_as[x.rel.0 as usize].unwrap_or(x.rel);
                deps[rule.head.rel.0 as usize].push((read.0 as usize, false));
            }
        }
    }
    for scc in tarjan(nrel, &deps) {
        // A relation outside any recursion, with many atoms, compiles side by side.
        if let [r] = scc[..] {
            let atoms: Vec<u32> = g.used_atoms(RelId(r as u32)).collect();
            let inputs = r == a.rels.true_.0 as usize || r == a.rels.does.0 as usize;
            if !inputs && atoms.len() >= side_by_side && !deps[r].iter().any(|d| d.0 == r) {
                c.compile_side_by_side(g, &atoms, side_by_side)?;
                continue;
            }
        }
        for r in scc {
            for at in g.used_atoms(RelId(r as u32)) {
                c.atom_lit(g, at)?;
            }
        }
    }
    Ok(())
}

impl Compiled<'_> {
    /// The literals of the state part's outputs: legal, goal, terminal.
    fn state_lits(&self) -> Vec<NetLit> {
        self.legal
            .iter()
            .flatten()
            .map(|x| x.1)
            .chain(self.goals.iter().flatten().map(|x| x.1))
            .chain([self.terminal])
            .collect()
    }

    /// The network of the gates an output reads, numbered from after the `num_props` propositions and
    /// the `does` inputs: state gates first, then move gates, each in creation order.
    pub(super) fn order(mut self, num_props: usize) -> Network {
        // Gates of atoms no output reads (the compiler walks every atom an instance mentions) go.
        let state_lits = self.state_lits();
        let c = &mut self.c;
        let first_gate = 1 + num_props + c.logic.num_does;
        let live = c.live_gates(state_lits.iter().chain(&self.next).copied());
        let remap = c.finish_order(first_gate, &live);
        let map = |l: NetLit| -> NetLit {
            let n = l >> 1;
            if n < GATE0 {
                l
            } else {
                (remap[(n - GATE0) as usize] << 1) | (l & 1)
            }
        };
        let mut gates = Vec::with_capacity(c.table.gates.len());
        let mut inputs = Vec::with_capacity(c.table.inputs.len());
        // The live gates by their new numbers, which are `first_gate..` without a gap: each goes
        // straight to its place.
        let mut order: Vec<usize> = vec![0; live.iter().filter(|&&l| l).count()];
        for (i, _) in live.iter().enumerate().filter(|(_, &l)| l) {
            order[remap[i] as usize - first_gate] = i;
        }
        debug_assert!(order.iter().all(|&i| (remap[i] as usize) < GATE0 as usize));
        let mut state_gates = 0;
        for &i in &order {
            let (s, e, neg, mv) = c.table.gates[i];
            if !mv {
                state_gates += 1;
            }
            let start = inputs.len() as u32;
            inputs.extend_from_slice(&c.table.inputs[s as usize..e as usize]);
            gates.push(Gate {
                start,
                end: inputs.len() as u32,
                negate: if neg { !0 } else { 0 },
            });
        }
        let legal = self
            .legal
            .iter()
            .enumerate()
            .map(|(ri, v)| {
                v.iter()
                    .map(|&(m, l)| LegalOut {
                        mv: m,
                        lit: map(l),
                        does: c
                            .does_node
                            .get(&(ri as u32, m))
                            .copied()
                            .unwrap_or(u32::MAX),
                    })
                    .collect()
            })
            .collect();
        let goals = self
            .goals
            .iter()
            .map(|v| v.iter().map(|&(val, l)| (val, map(l))).collect())
            .collect();
        Network {
            first_gate,
            gates,
            state_gates,
            inputs,
            legal,
            goals,
            terminal: map(self.terminal),
            next: self.next.iter().map(|&l| map(l)).collect(),
        }
    }
}

/// How ANDs and ORs of literals become gates: constants folded, shared literals factored, and the
/// ORs of many `does` inputs of a role rewritten (see [`Logic::or`]).
pub(super) struct Logic {
    num_props: usize,
    num_does: usize,
    /// Per role, the (positive) literals of its `does` inputs, sorted.
    does_by_role: Vec<Vec<NetLit>>,
    /// Per `does` input (its node less the first such node's), the role that plays it.
    role_of_does: Vec<u32>,
    /// Per role, whether it belongs to a set of roles of which at most one plays a `does` input in any
    /// reachable joint move (see [`one_mover`](super::turns::one_mover)).
    pub(super) one_mover: Vec<bool>,
}

impl Logic {
    /// The literal defining atom `a` from its bodies, every literal they read having one in
    /// `lit_of`.
    fn define<G: GateStore>(
        &self,
        gs: &mut G,
        g: &Ground,
        a: u32,
        lit_of: &[NetLit],
    ) -> Result<NetLit, NetworkError> {
        let lit = |x: u32| lit_of[(x >> 1) as usize] ^ (x & 1);
        if g.always[a as usize] {
            Ok(TRUE)
        } else if g.bodies(a).nth(1).is_none() {
            // At most one alternative (a projection, a single rule instance): its AND.
            match g.bodies(a).next() {
                Some(body) => {
                    let t: Lits = body.iter().map(|&x| lit(x)).collect();
                    self.and(gs, &t)
                }
                None => Ok(FALSE),
            }
        } else if g.bodies(a).all(|b| b.len() == 1) {
            // Alternatives of one literal each: their OR, nothing to factor.
            let t: Lits = g.bodies(a).map(|b| lit(b[0])).collect();
            self.or(gs, &t)
        } else {
            let terms: Vec<Lits> = g
                .bodies(a)
                .map(|body| body.iter().map(|&x| lit(x)).collect())
                .collect();
            self.sum_of_products(gs, terms)
        }
    }

    /// The AND of literals, folded and shared.
    fn and<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        // Sized once: an OR of a hundred alternatives would otherwise grow it four times.
        let mut key: SmallVec<[NetLit; 16]> = SmallVec::with_capacity(lits.len());
        for &l in lits {
            match l {
                FALSE => return Ok(FALSE),
                TRUE => {}
                _ => key.push(l),
            }
        }
        key.sort_unstable();
        key.dedup();
        if key.windows(2).any(|w| w[0] ^ 1 == w[1]) {
            return Ok(FALSE);
        }
        match key.len() {
            0 => Ok(TRUE),
            1 => Ok(key[0]),
            _ => gs.gate(&key),
        }
    }

    /// The OR of the ANDs of `terms`, with literals shared by several terms factored out
    /// (`a&b | a&c | d` becomes `a&(b|c) | d`): fewer gates and inputs, and a frame rule such as
    /// `next(p) :- true(p) & does(m)` over many moves `m` becomes `true(p) & (OR of the moves)`, which
    /// [`Logic::or`] can then shrink further. Literals every term holds go into one AND with the
    /// OR of the rest (chess's `legal` of a move: the turn, the piece on its square, and the OR over
    /// the king's squares).
    fn sum_of_products<G: GateStore>(
        &self,
        gs: &mut G,
        mut terms: Vec<Lits>,
    ) -> Result<NetLit, NetworkError> {
        // Fold constants: a term with false goes, true literals go, an empty term makes the OR true.
        terms.retain_mut(|t| {
            t.retain(|l| *l != TRUE);
            t.sort_unstable();
            t.dedup();
            !t.contains(&FALSE) && !t.windows(2).any(|w| w[0] ^ 1 == w[1])
        });
        self.factored(gs, terms)
    }

    /// [`Logic::sum_of_products`] of folded terms: each sorted, without repeats, constants or a
    /// literal beside its negation. What the factoring passes on to itself is folded already (parts
    /// of folded terms), so only the first call sorts.
    fn factored<G: GateStore>(
        &self,
        gs: &mut G,
        mut terms: Vec<Lits>,
    ) -> Result<NetLit, NetworkError> {
        if terms.iter().any(|t| t.is_empty()) {
            return Ok(TRUE);
        }
        match terms.len() {
            0 => return Ok(FALSE),
            1 => return self.and(gs, &terms[0]),
            _ => {}
        }
        if terms.iter().all(|t| t.len() == 1) {
            // Nothing to factor (skirmish's frame rules, once the piece's square is factored out:
            // one `does` a move, thousands of them): the OR of the distinct literals, which is what
            // the sweep below would build term by term.
            let mut lits: Lits = terms.iter().map(|t| t[0]).collect();
            lits.sort_unstable();
            lits.dedup();
            return self.or(gs, &lits);
        }
        let mut common: Lits = terms[0]
            .iter()
            .copied()
            .filter(|l| terms[1..].iter().all(|t| t.binary_search(l).is_ok()))
            .collect();
        if !common.is_empty() {
            for t in &mut terms {
                t.retain(|l| common.binary_search(l).is_err());
            }
            let rest = if terms.iter().any(|t| t.is_empty()) {
                TRUE
            } else {
                self.factored(gs, terms)?
            };
            common.push(rest);
            return self.and(gs, &common);
        }
        // Greedy, in one sweep: literals by how many terms hold them (most first, then the smallest
        // literal, so the result does not depend on hashing); each takes the terms still unclaimed.
        // Each holder is a literal and the term holding it, packed in one word so that sorting by
        // both is sorting integers (blobwars's compile spent a third of its time sorting pairs).
        let literal = |h: u64| (h >> 32) as NetLit;
        let term = |h: u64| h as u32;
        let mut holders: Vec<u64> = Vec::with_capacity(terms.iter().map(|t| t.len()).sum());
        for (i, t) in terms.iter().enumerate() {
            holders.extend(t.iter().map(|&l| (u64::from(l) << 32) | i as u64));
        }
        holders.sort_unstable();
        let mut shared: Vec<(usize, NetLit, usize)> = Vec::new();
        let mut start = 0;
        while start < holders.len() {
            let l = literal(holders[start]);
            let end = start
                + holders[start..]
                    .iter()
                    .take_while(|&&h| literal(h) == l)
                    .count();
            if end - start >= 2 {
                shared.push((end - start, l, start));
            }
            start = end;
        }
        shared.sort_unstable_by_key(|&(n, l, _)| (std::cmp::Reverse(n), l));
        let mut claimed = vec![false; terms.len()];
        // Each alternative is a shared literal's terms or one term: at most one per term.
        let mut alts: Lits = SmallVec::with_capacity(terms.len());
        for (n, l, start) in shared {
            let with: SmallVec<[u32; 16]> = holders[start..start + n]
                .iter()
                .map(|&h| term(h))
                .filter(|&i| !claimed[i as usize])
                .collect();
            if with.len() < 2 {
                continue;
            }
            let rest: Vec<Lits> = with
                .iter()
                .map(|&i| {
                    claimed[i as usize] = true;
                    terms[i as usize]
                        .iter()
                        .copied()
                        .filter(|x| *x != l)
                        .collect()
                })
                .collect();
            let inner = self.factored(gs, rest)?;
            alts.push(self.and(gs, &[l, inner])?);
        }
        for (t, _) in terms.iter().zip(&claimed).filter(|(_, c)| !**c) {
            alts.push(self.and(gs, t)?);
        }
        self.or(gs, &alts)
    }

    /// The OR of literals: the negated AND of the negations.
    ///
    /// Exactly one `does` input per role is true at a time (at most one while nothing is played), so
    /// the OR of most of a role's `does` inputs is cheaper as "the role moved, and not one of the few
    /// others": `OR(S) = OR(D) & !OR(D \ S)` for the role's inputs `D`. The `OR(D)` gate is shared.
    fn or<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        let does_nodes = (1 + self.num_props) as u32..(1 + self.num_props + self.num_does) as u32;
        if !lits.iter().any(|l| does_nodes.contains(&(l >> 1))) {
            return self.or_plain(gs, lits);
        }
        // Per role, how many of the literals are its inputs (played, not negated): one pass, since
        // an OR of thousands of moves is common (skirmish's frame rules).
        let mut mine_of: SmallVec<[usize; 4]> = SmallVec::from_elem(0, self.does_by_role.len());
        for &l in lits {
            if l & 1 == 0 && does_nodes.contains(&(l >> 1)) {
                mine_of
                    [self.role_of_does[(l >> 1) as usize - does_nodes.start as usize] as usize] +=
                    1;
            }
        }
        let mut lits: SmallVec<[NetLit; 8]> = SmallVec::from_slice(lits);
        // Per rewritten role: all its inputs, and those not in the OR.
        let mut parts: SmallVec<[(usize, Lits, Lits); 2]> = SmallVec::new();
        for r in 0..self.does_by_role.len() {
            let all = &self.does_by_role[r];
            if all.len() < 8 {
                continue;
            }
            let mine = mine_of[r];
            // Unique literals only count once: `and` dedups them anyway.
            if mine * 4 < all.len() * 3 {
                continue;
            }
            let is_mine = |l: &NetLit| {
                l & 1 == 0
                    && does_nodes.contains(&(l >> 1))
                    && self.role_of_does[(l >> 1) as usize - does_nodes.start as usize] as usize
                        == r
            };
            let mut picked: SmallVec<[NetLit; 8]> = lits.iter().copied().filter(is_mine).collect();
            picked.sort_unstable();
            picked.dedup();
            // `all` less `picked`, both sorted, `picked` within `all`.
            let mut others: SmallVec<[NetLit; 8]> =
                SmallVec::with_capacity(all.len() - picked.len());
            let mut next_picked = picked.iter().peekable();
            for &l in all {
                if next_picked.peek() == Some(&&l) {
                    next_picked.next();
                } else {
                    others.push(l);
                }
            }
            let all: SmallVec<[NetLit; 8]> = SmallVec::from_slice(all);
            lits.retain(|l| !is_mine(l));
            parts.push((r, all, others));
        }
        if parts.len() >= 2 && parts.iter().all(|p| self.one_mover[p.0]) {
            // At most one of these roles plays any of their inputs, so "some role played an input in
            // the OR" is "some role played one of their inputs, and it is not one of the others": the
            // `any` gate then holds at every step of a turn-taking game and flips never, instead of
            // each role's flipping at every turn.
            let mut all: SmallVec<[NetLit; 8]> = SmallVec::new();
            let mut others: SmallVec<[NetLit; 8]> = SmallVec::new();
            for (_, a, o) in &parts {
                all.extend_from_slice(a);
                others.extend_from_slice(o);
            }
            all.sort_unstable();
            others.sort_unstable();
            let any = self.or_plain(gs, &all)?;
            let none_of_others = self.or_plain(gs, &others)? ^ 1;
            let l = self.and(gs, &[any, none_of_others])?;
            lits.push(l);
        } else {
            for (_, all, others) in parts {
                let any = self.or_plain(gs, &all)?;
                let none_of_others = self.or_plain(gs, &others)? ^ 1;
                let l = self.and(gs, &[any, none_of_others])?;
                lits.push(l);
            }
        }
        self.or_plain(gs, &lits)
    }

    /// The OR of literals, without the rewrite of [`Logic::or`].
    fn or_plain<G: GateStore>(&self, gs: &mut G, lits: &[NetLit]) -> Result<NetLit, NetworkError> {
        let neg: SmallVec<[NetLit; 8]> = lits.iter().map(|l| l ^ 1).collect();
        Ok(self.and(gs, &neg)? ^ 1)
    }
}

/// Turns atom definitions into gates: the literal of each atom, and the gates made for them.
pub(super) struct Compiler<'a> {
    /// Per atom: `u32::MAX` unvisited, `u32::MAX - 1` in progress, else its literal.
    lit_of: Vec<NetLit>,
    table: GateTable,
    logic: Logic,
    does_node: HashMap<(u32, u32), u32>,
    prop_of: &'a HashMap<TermId, u32>,
    roles: &'a [TermId],
    move_of: &'a HashMap<TermId, u32>,
    budget: Budget,
    started: Instant,
}

/// A short list of literals.
type Lits = SmallVec<[NetLit; 8]>;

const UNSEEN: NetLit = u32::MAX;
const BUSY: NetLit = u32::MAX - 1;

/// The fewest atoms of a relation worth compiling side by side, and how many one worker takes at a
/// time (see [`Compiler::compile_side_by_side`]).
pub(super) const SIDE_BY_SIDE: usize = 1024;

impl<'a> Compiler<'a> {
    /// A compiler for `g`, its `does` inputs numbered after the `num_props` propositions.
    fn new(
        g: &Ground,
        num_props: usize,
        prop_of: &'a HashMap<TermId, u32>,
        roles: &'a [TermId],
        move_of: &'a HashMap<TermId, u32>,
        budget: Budget,
    ) -> Compiler<'a> {
        // `does` inputs get nodes in the order of their atoms.
        let mut does_node = HashMap::new();
        let mut num_does = 0;
        for a in g.used_atoms(g.does) {
            let args = g.args(a);
            let (Some(r), Some(&m)) = (
                roles.iter().position(|r| *r == args[0]),
                move_of.get(&args[1]),
            ) else {
                continue;
            };
            does_node.insert((r as u32, m), (1 + num_props + num_does) as u32);
            num_does += 1;
        }
        let mut does_by_role = vec![Vec::new(); roles.len()];
        let mut role_of_does = vec![0; num_does];
        for (&(r, _), &node) in &does_node {
            does_by_role[r as usize].push(node << 1);
            role_of_does[node as usize - 1 - num_props] = r;
        }
        for d in &mut does_by_role {
            d.sort_unstable();
        }
        Compiler {
            logic: Logic {
                num_props,
                num_does,
                one_mover: vec![false; does_by_role.len()],
                does_by_role,
                role_of_does,
            },
            lit_of: vec![UNSEEN; g.used.len()],
            table: GateTable::default(),
            does_node,
            prop_of,
            roles,
            move_of,
            budget,
            started: g.started,
        }
    }

    /// The compiler's gates as a [`GateStore`], with the budget's limits.
    fn global(&mut self) -> Global<'_> {
        Global {
            table: &mut self.table,
            num_props: self.logic.num_props,
            budget: self.budget,
            started: self.started,
        }
    }

    /// Whether literal `l` depends on a `does` input.
    fn move_dep(&self, l: NetLit) -> bool {
        self.table.move_dep(l, self.logic.num_props)
    }

    /// The literal of an input atom (`true`/`does`), or `None` for a defined atom.
    fn input_lit(&self, g: &Ground, a: u32) -> Option<NetLit> {
        if g.is(a, g.true_) {
            return Some(match self.prop_of.get(&g.args(a)[0]) {
                Some(&p) => (1 + p) << 1,
                None => FALSE,
            });
        }
        if g.is(a, g.does) {
            let args = g.args(a);
            let r = self.roles.iter().position(|r| *r == args[0]);
            let m = self.move_of.get(&args[1]);
            return Some(match (r, m) {
                (Some(r), Some(&m)) => self.does_node[&(r as u32, m)] << 1,
                _ => FALSE,
            });
        }
        None
    }

    /// The literal computing atom `root`, compiling what it needs first (iterative depth-first search).
    fn atom_lit(&mut self, g: &Ground, root: u32) -> Result<NetLit, NetworkError> {
        if self.lit_of[root as usize] < BUSY {
            return Ok(self.lit_of[root as usize]);
        }
        // (atom, body index, literal index within the body)
        let mut stack: Vec<(u32, usize, usize)> = vec![(root, 0, 0)];
        self.lit_of[root as usize] = BUSY;
        while let Some(&mut (a, ref mut bi, ref mut li)) = stack.last_mut() {
            if let Some(l) = self.input_lit(g, a) {
                self.lit_of[a as usize] = l;
                stack.pop();
                continue;
            }
            // Find the next child not yet compiled.
            let mut child = None;
            let always = g.always[a as usize];
            while let Some(x) = g.next_lit(a, bi, li).filter(|_| !always) {
                let c = x >> 1;
                match self.lit_of[c as usize] {
                    UNSEEN => {
                        child = Some(c);
                        break;
                    }
                    BUSY => return Err(NetworkError::Cyclic(atom_name(g, c))),
                    _ => {}
                }
            }
            if let Some(c) = child {
                self.lit_of[c as usize] = BUSY;
                stack.push((c, 0, 0));
                continue;
            }
            let mut gs = Global {
                table: &mut self.table,
                num_props: self.logic.num_props,
                budget: self.budget,
                started: self.started,
            };
            let l = self.logic.define(&mut gs, g, a, &self.lit_of)?;
            self.lit_of[a as usize] = l;
            stack.pop();
        }
        Ok(self.lit_of[root as usize])
    }

    /// Compiles atoms `atoms` (of one relation outside any recursion, so that each reads only atoms
    /// compiled before) on rayon's threads, `per_task` atoms a task: each task finds the gates
    /// it needs among the compiler's, makes those missing in its own table, and the tasks' gates
    /// then join the compiler's in task order, each a new gate only when no earlier one has its
    /// inputs. The gates, their numbering and every atom's literal are those [`Compiler::atom_lit`]
    /// gives atom after atom: a gate a task makes is new to the compiler's gates as they were, so
    /// its inputs (renumbered) never meet a literal it shares a gate with, and the renumbering needs
    /// no folding again; and the tasks are merged in the atoms' order.
    pub(super) fn compile_side_by_side(
        &mut self,
        g: &Ground,
        atoms: &[u32],
        per_task: usize,
    ) -> Result<(), NetworkError> {
        let ready = |lit_of: &[NetLit], a: u32| {
            !g.always[a as usize]
                && lit_of[a as usize] == UNSEEN
                && g.bodies(a)
                    .flatten()
                    .all(|&x| lit_of[(x >> 1) as usize] < BUSY)
        };
        let (lit_of, logic, table) = (&self.lit_of, &self.logic, &self.table);
        let (budget, started) = (self.budget, self.started);
        type Made = (Vec<(u32, NetLit)>, GateTable);
        let made: Vec<Result<Made, NetworkError>> = atoms
            .par_chunks(per_task)
            .map(|chunk| {
                let mut gs = Local {
                    global: table,
                    local: GateTable::default(),
                    num_props: logic.num_props,
                    budget,
                    started,
                };
                let mut lits = Vec::with_capacity(chunk.len());
                for &a in chunk {
                    // The rest (already compiled, or reading an atom that is not) go one by one.
                    let l = if ready(lit_of, a) {
                        logic.define(&mut gs, g, a, lit_of)?
                    } else {
                        UNSEEN
                    };
                    lits.push((a, l));
                }
                Ok((lits, gs.local))
            })
            .collect();
        let mut node_of: Vec<NetLit> = Vec::new();
        for m in made {
            let (lits, local) = m?;
            node_of.clear();
            let renumber = |l: NetLit, node_of: &[NetLit]| {
                if l >> 1 >= LOCAL0 {
                    node_of[((l >> 1) - LOCAL0) as usize] ^ (l & 1)
                } else {
                    l
                }
            };
            for j in 0..local.gates.len() as u32 {
                let inputs = local.key(j);
                // Keys are sorted, a task's own gates last: with none among the inputs, the key
                // and its hash are the ones the task made.
                let l = if inputs.last().is_some_and(|&l| l >> 1 < LOCAL0) {
                    self.global()
                        .gate_hashed(inputs, local.halves[j as usize])?
                } else {
                    let mut key: SmallVec<[NetLit; 16]> =
                        inputs.iter().map(|&l| renumber(l, &node_of)).collect();
                    key.sort_unstable();
                    self.global().gate(&key)?
                };
                node_of.push(l);
            }
            for (a, l) in lits {
                if l == UNSEEN {
                    self.atom_lit(g, a)?;
                } else {
                    self.lit_of[a as usize] = renumber(l, &node_of);
                }
            }
        }
        Ok(())
    }

    /// Final gate numbering of the `live` gates: state gates first, then move gates, each in creation
    /// order; also rewrites provisional gate nodes in their inputs. Returns, per gate, its final node
    /// (`u32::MAX` for a gate no output reads).
    fn finish_order(&mut self, first_gate: usize, live: &[bool]) -> Vec<u32> {
        let GateTable { gates, inputs, .. } = &mut self.table;
        let n_state = gates.iter().zip(live).filter(|(g, l)| **l && !g.3).count();
        let (mut s, mut m) = (0u32, n_state as u32);
        let remap: Vec<u32> = gates
            .iter()
            .zip(live)
            .map(|(g, &l)| {
                if !l {
                    return u32::MAX;
                }
                let k = if g.3 { &mut m } else { &mut s };
                *k += 1;
                first_gate as u32 + *k - 1
            })
            .collect();
        for (g, _) in gates.iter().zip(live).filter(|(_, l)| **l) {
            for l in &mut inputs[g.0 as usize..g.1 as usize] {
                let n = *l >> 1;
                if n >= GATE0 {
                    *l = (remap[(n - GATE0) as usize] << 1) | (*l & 1);
                }
            }
        }
        remap
    }

    /// Which gates an output reads, directly or through other gates. A gate reads only gates made
    /// before it, so one sweep from the last gate back settles it.
    fn live_gates(&self, outputs: impl Iterator<Item = NetLit>) -> Vec<bool> {
        let mut live = vec![false; self.table.gates.len()];
        let mark = |l: NetLit, live: &mut [bool]| {
            if l >> 1 >= GATE0 {
                live[((l >> 1) - GATE0) as usize] = true;
            }
        };
        for l in outputs {
            mark(l, &mut live);
        }
        for i in (0..self.table.gates.len()).rev() {
            if live[i] {
                for &l in self.table.key(i as u32) {
                    mark(l, &mut live);
                }
            }
        }
        live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Propositions 1 to 4, no `does` input.
    fn logic() -> Logic {
        Logic {
            num_props: 4,
            num_does: 0,
            does_by_role: Vec::new(),
            role_of_does: Vec::new(),
            one_mover: Vec::new(),
        }
    }
    fn prop(i: u32) -> NetLit {
        i << 1
    }
    /// The shared state of a compilation over four propositions, its gates in `table`.
    fn global(table: &mut GateTable) -> Global<'_> {
        Global {
            table,
            num_props: 4,
            budget: Budget::default(),
            started: std::time::Instant::now(),
        }
    }

    #[test]
    fn constants_fold_and_gates_are_shared() {
        let (l, mut table) = (logic(), GateTable::default());
        let mut gs = global(&mut table);
        let (a, b) = (prop(1), prop(2));
        assert_eq!(l.and(&mut gs, &[a, TRUE]).unwrap(), a);
        assert_eq!(l.and(&mut gs, &[a, FALSE, b]).unwrap(), FALSE);
        assert_eq!(l.and(&mut gs, &[a, b, a ^ 1]).unwrap(), FALSE);
        assert_eq!(l.and(&mut gs, &[]).unwrap(), TRUE);
        assert_eq!(l.or(&mut gs, &[a, TRUE]).unwrap(), TRUE);
        assert_eq!(l.or(&mut gs, &[a, FALSE]).unwrap(), a);
        let ab = l.and(&mut gs, &[b, a, a]).unwrap();
        assert_eq!(l.and(&mut gs, &[a, b]).unwrap(), ab);
        // `a | b` is the negated AND of `!a` and `!b`: a second gate, its output negated.
        let a_or_b = l.or(&mut gs, &[a, b]).unwrap();
        assert_eq!(a_or_b & 1, 1);
        assert_eq!(table.gates.len(), 2);
    }

    #[test]
    fn what_every_alternative_holds_is_factored_out() {
        let (l, mut table) = (logic(), GateTable::default());
        let mut gs = global(&mut table);
        let (a, b, c) = (prop(1), prop(2), prop(3));
        // `a&b | a&c` is `a & (b|c)`: an OR gate and an AND gate, not three.
        let terms: Vec<Lits> = vec![SmallVec::from_slice(&[a, b]), SmallVec::from_slice(&[a, c])];
        let l1 = l.sum_of_products(&mut gs, terms).unwrap();
        let b_or_c = l.or(&mut gs, &[b, c]).unwrap();
        assert_eq!(l.and(&mut gs, &[a, b_or_c]).unwrap(), l1);
        assert_eq!(table.gates.len(), 2);
    }

    #[test]
    fn an_or_of_most_of_a_roles_moves_reads_that_it_moved_and_not_one_of_the_others() {
        // Propositions 1 to 4, then twenty `does` inputs, nodes 5 to 24, the two roles' interleaved.
        let mut does_by_role = vec![Vec::new(), Vec::new()];
        let mut role_of_does = Vec::new();
        for node in 5..25u32 {
            does_by_role[(node % 2) as usize].push(node << 1);
            role_of_does.push(node % 2);
        }
        let l = Logic {
            num_props: 4,
            num_does: 20,
            does_by_role: does_by_role.clone(),
            role_of_does,
            one_mover: vec![false, false],
        };
        let mut table = GateTable::default();
        let mut gs = global(&mut table);
        let (mine, others) = does_by_role[1].split_at(8);
        let (p, theirs) = (prop(1), does_by_role[0][3]);
        // Eight of role 1's ten moves, one of role 0's and a proposition.
        let mut lits: Vec<NetLit> = mine.to_vec();
        lits.extend([theirs, p]);
        let got = l.or(&mut gs, &lits).unwrap();
        let moved = l.or_plain(&mut gs, &does_by_role[1]).unwrap();
        let not_others = l.or_plain(&mut gs, others).unwrap() ^ 1;
        let mine_played = l.and(&mut gs, &[moved, not_others]).unwrap();
        let expected = l.or_plain(&mut gs, &[theirs, p, mine_played]).unwrap();
        assert_eq!(got, expected);
        // A frame rule over those moves: the proposition factored out, its moves the same OR.
        let terms: Vec<Lits> = mine
            .iter()
            .map(|&d| SmallVec::from_slice(&[d, p]))
            .collect();
        let frame = l.sum_of_products(&mut gs, terms).unwrap();
        let mine_or = l.or(&mut gs, mine).unwrap();
        assert_eq!(frame, l.and(&mut gs, &[p, mine_or]).unwrap());
        assert_eq!(mine_or, l.and(&mut gs, &[moved, not_others]).unwrap());
    }
}
