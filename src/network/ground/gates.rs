//! The gate tables: where the compiler finds a gate again or makes it, within the budget.
//!
//! A gate is an AND of sorted literals; a [`GateTable`] numbers the gates made so far and finds them by
//! their inputs (hashed, no key copies), so **a gate asked for twice is made once**. The compiler asks
//! through a [`GateStore`]: [`Global`] is its own table, [`Local`] one worker's table of a parallel
//! compile, which reads the compiler's gates and makes the missing ones under provisional numbers
//! ([`LOCAL0`] up) to be merged in order afterwards. Gate nodes are provisional too ([`GATE0`] up, above
//! every input node) until the compiler orders the network. **Every gate knows whether it reads a
//! `does` input**, so the state part and the move part can be told apart.

use std::time::Instant;

use hashbrown::HashTable;

use super::budget::{check_compile_time, check_gate_budget, Budget, NetworkError};
use super::net::NetLit;
use crate::datalog::terms::{hash_ids, Filed, TermId};

/// The AND gates made so far, findable by their inputs: a gate asked for again is shared.
#[derive(Default)]
pub(super) struct GateTable {
    /// Gates as created: (input start, input end, negated output, reads `does`).
    pub(super) gates: Vec<(u32, u32, bool, bool)>,
    pub(super) inputs: Vec<NetLit>,
    /// Each gate's half hash (see [`Filed`]), so that a merge need not hash an unchanged key again.
    pub(super) halves: Vec<u32>,
    /// The gates by their inputs (hashed with [`hash_lits`]).
    dedup: HashTable<Filed>,
}

impl GateTable {
    /// The gate whose inputs are `key`, hashed to `half` (see [`Filed`]).
    pub(super) fn find(&self, key: &[NetLit], half: u32) -> Option<u32> {
        self.dedup
            .find(Filed::spread(half), |f| {
                f.hash == half && self.key(f.row) == key
            })
            .map(|f| f.row)
    }

    /// Adds a gate (known to be new) over `key`; returns its index.
    pub(super) fn push(&mut self, key: &[NetLit], half: u32, mv: bool) -> u32 {
        let start = self.inputs.len() as u32;
        self.inputs.extend_from_slice(key);
        let i = self.gates.len() as u32;
        self.gates
            .push((start, self.inputs.len() as u32, false, mv));
        self.halves.push(half);
        let f = Filed { row: i, hash: half };
        self.dedup
            .insert_unique(Filed::spread(half), f, |f| Filed::spread(f.hash));
        i
    }

    /// Whether literal `l` (of an input, or of one of these gates) depends on a `does` input.
    pub(super) fn move_dep(&self, l: NetLit, num_props: usize) -> bool {
        let n = l >> 1;
        if n >= GATE0 {
            self.gates[(n - GATE0) as usize].3
        } else {
            n as usize > num_props
        }
    }

    /// Gate `i`'s inputs.
    pub(super) fn key(&self, i: u32) -> &[NetLit] {
        let (s, e, _, _) = self.gates[i as usize];
        &self.inputs[s as usize..e as usize]
    }
}

/// Where the gates a compile asks for are found or made.
pub(super) trait GateStore {
    /// The AND gate of `key` (sorted, at least two literals).
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError>;
    /// Whether literal `l` depends on a `does` input.
    fn move_dep(&self, l: NetLit) -> bool;
    /// Whether the compile is still within its time: the gates made read the clock now and then,
    /// but one atom of many long alternatives can work for seconds finding gates already made.
    fn in_time(&self) -> Result<(), NetworkError>;
}

/// The compiler's own gates, with the budget's limits.
pub(super) struct Global<'c> {
    pub(super) table: &'c mut GateTable,
    pub(super) num_props: usize,
    pub(super) budget: Budget,
    pub(super) started: Instant,
}

impl Global<'_> {
    /// [`GateStore::gate`] for a key whose half hash `half` is known.
    pub(super) fn gate_hashed(
        &mut self,
        key: &[NetLit],
        half: u32,
    ) -> Result<NetLit, NetworkError> {
        if let Some(i) = self.table.find(key, half) {
            return Ok((GATE0 + i) << 1);
        }
        let made = self.table.gates.len();
        check_gate_budget(made, made, self.budget, self.started)?;
        let mv = key.iter().any(|&l| self.move_dep(l));
        Ok((GATE0 + self.table.push(key, half, mv)) << 1)
    }
}

impl GateStore for Global<'_> {
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError> {
        self.gate_hashed(key, Filed::half(hash_lits(key)))
    }

    fn move_dep(&self, l: NetLit) -> bool {
        self.table.move_dep(l, self.num_props)
    }

    fn in_time(&self) -> Result<(), NetworkError> {
        check_compile_time(self.budget, self.started)
    }
}

/// Provisional nodes of the gates one worker of a parallel compile makes: above every compiler gate.
pub(super) const LOCAL0: u32 = 1 << 29;

/// One worker's gates in a parallel compile (see
/// [`Compiler::compile_side_by_side`](super::compile::Compiler::compile_side_by_side)): the
/// compiler's gates are read, never changed; a gate they lack is made here, numbered from
/// [`LOCAL0`], and merged into them afterwards.
pub(super) struct Local<'c> {
    pub(super) global: &'c GateTable,
    pub(super) local: GateTable,
    pub(super) num_props: usize,
    pub(super) budget: Budget,
    pub(super) started: Instant,
}

impl GateStore for Local<'_> {
    fn gate(&mut self, key: &[NetLit]) -> Result<NetLit, NetworkError> {
        let half = Filed::half(hash_lits(key));
        // Keys are sorted: one reading a gate of this worker (the largest nodes) is not the
        // compiler's.
        if key.last().is_some_and(|&l| l >> 1 < LOCAL0) {
            if let Some(i) = self.global.find(key, half) {
                return Ok((GATE0 + i) << 1);
            }
        }
        if let Some(j) = self.local.find(key, half) {
            return Ok((LOCAL0 + j) << 1);
        }
        let made = self.local.gates.len();
        let total = made + self.global.gates.len();
        check_gate_budget(made, total, self.budget, self.started)?;
        let mv = key.iter().any(|&l| self.move_dep(l));
        Ok((LOCAL0 + self.local.push(key, half, mv)) << 1)
    }

    fn move_dep(&self, l: NetLit) -> bool {
        let n = l >> 1;
        if n >= LOCAL0 {
            self.local.gates[(n - LOCAL0) as usize].3
        } else {
            self.global.move_dep(l, self.num_props)
        }
    }

    fn in_time(&self) -> Result<(), NetworkError> {
        check_compile_time(self.budget, self.started)
    }
}

fn hash_lits(lits: &[NetLit]) -> u64 {
    hash_ids(lits.iter().map(|&l| TermId(l)))
}

/// Provisional gate nodes live above every input node.
pub(super) const GATE0: u32 = 1 << 28;

#[cfg(test)]
mod tests {
    use super::*;

    /// Propositions 1 to 4 and, after them, `does` nodes 5 and 6.
    const PROPS: usize = 4;
    fn prop(i: u32) -> NetLit {
        i << 1
    }

    #[test]
    fn a_gate_asked_for_twice_is_made_once() {
        let mut table = GateTable::default();
        let mut gs = Global {
            table: &mut table,
            num_props: PROPS,
            budget: Budget::default(),
            started: Instant::now(),
        };
        let ab = gs.gate(&[prop(1), prop(2)]).unwrap();
        let not_a_b = gs.gate(&[prop(1) | 1, prop(2)]).unwrap();
        assert_ne!(ab, not_a_b);
        assert_eq!(gs.gate(&[prop(1), prop(2)]).unwrap(), ab);
        // A gate reading a `does` node is a move gate, and so is one reading it.
        let moved = gs.gate(&[prop(3), prop(5)]).unwrap();
        let later = gs.gate(&[ab, moved]).unwrap();
        assert!(!gs.move_dep(ab) && gs.move_dep(moved) && gs.move_dep(later));
        assert_eq!(table.gates.len(), 4);
        assert_eq!(ab >> 1, GATE0);
    }

    #[test]
    fn a_worker_reads_the_compilers_gates_and_makes_its_own_above_them() {
        let mut table = GateTable::default();
        let shared = Global {
            table: &mut table,
            num_props: PROPS,
            budget: Budget::default(),
            started: Instant::now(),
        }
        .gate(&[prop(1), prop(2)])
        .unwrap();
        let mut worker = Local {
            global: &table,
            local: GateTable::default(),
            num_props: PROPS,
            budget: Budget::default(),
            started: Instant::now(),
        };
        assert_eq!(worker.gate(&[prop(1), prop(2)]).unwrap(), shared);
        let own = worker.gate(&[prop(3), prop(4)]).unwrap();
        assert_eq!(own >> 1, LOCAL0);
        assert_eq!(worker.gate(&[prop(3), prop(4)]).unwrap(), own);
        assert_eq!((table.gates.len(), worker.local.gates.len()), (1, 1));
    }

    #[test]
    fn the_gate_budget_holds() {
        let mut table = GateTable::default();
        let mut gs = Global {
            table: &mut table,
            num_props: PROPS,
            budget: Budget {
                max_gates: 1,
                ..Budget::default()
            },
            started: Instant::now(),
        };
        assert!(gs.gate(&[prop(1), prop(2)]).is_ok());
        assert!(
            gs.gate(&[prop(1), prop(2)]).is_ok(),
            "a shared gate costs nothing"
        );
        assert!(matches!(
            gs.gate(&[prop(1), prop(3)]),
            Err(NetworkError::Budget(_))
        ));
    }
}
