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
use super::logic::Logic;
use super::{net::Gate, net::LegalOut, net::NetLit, net::FALSE};
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
            logic: Logic::new(num_props, num_does, does_by_role, role_of_does),
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
