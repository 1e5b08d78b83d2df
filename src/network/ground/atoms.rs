//! The ground program: every ground atom with its alternatives, as the instantiation leaves them.
//!
//! [`Ground::new`] indexes the grounding workers' instance buffers by head atom; the turn proofs read
//! and simplify it, and the compiler turns it into gates. **An atom is a row of the relaxed fixpoint
//! of a state-dependent relation, numbered across relations**, so finding an atom costs no hashing of
//! its own and numbering them costs nothing. **An atom's alternatives are in rule order, and its
//! bodies side by side** in one array, so the network does not depend on which worker found which
//! instance, and compiling an atom reads one stretch of memory.

use std::time::Instant;

use rayon::prelude::*;

use super::analysis::Analysis;
use super::budget::{Limit, NetworkError};
use crate::datalog::eval::Db;
use crate::datalog::ir::RelId;
use crate::datalog::terms::{TermId, TermStore};

/// The rule instances of one rule as a grounding worker records them, one after the other in a flat
/// buffer (no allocation per instance): the head's atom, the number of body literals, then the
/// literals (`atom << 1 | negated`). An atom is a row of the relaxed fixpoint, numbered across
/// relations (see [`Grounder::row_id`](super::instantiate::Grounder::row_id)).
pub(super) type Instances = Vec<u32>;

/// The length of an instance that [`drop_implied_turns`](super::turns::drop_implied_turns) removed.
pub(super) const DROPPED: u32 = u32::MAX;

/// The ground atoms with their alternatives, ready to compile. An atom is a row of the relaxed
/// fixpoint of a state-dependent relation, numbered across relations (see
/// [`Grounder::row_id`](super::instantiate::Grounder::row_id)), so that finding an atom costs no
/// hashing of its own and numbering them costs nothing.
pub(super) struct Ground<'a> {
    pub(super) relaxed: &'a Db,
    /// Per relation, whether it depends on the state.
    pub(super) dynamic: &'a [bool],
    pub(super) terms: TermStore,
    /// The alternatives of atom `a` are `alts[first[a]..first[a + 1]]`, in rule order, each the
    /// (start, length) of its body in `lits`; an atom's bodies are side by side there, so that
    /// compiling an atom reads one stretch of memory. A length of [`DROPPED`]: no alternative.
    pub(super) first: Vec<u32>,
    pub(super) alts: Vec<(u32, u32)>,
    pub(super) lits: Vec<u32>,
    /// Atoms with an instance of no state-dependent condition: always true.
    pub(super) always: Vec<bool>,
    /// Atoms that some instance mentions.
    pub(super) used: Vec<bool>,
    /// Per relation, its first atom and its number of atoms.
    pub(super) row_base: Vec<u32>,
    pub(super) row_len: Vec<u32>,
    /// (first atom, relation) of every relation with atoms, by first atom.
    pub(super) by_base: Vec<(u32, u32)>,
    pub(super) instances: usize,
    pub(super) started: Instant,
    pub(super) true_: RelId,
    pub(super) does: RelId,
    pub(super) rel_names: Vec<String>,
}

impl<'a> Ground<'a> {
    /// The ground program of `found`, the instances of the rules of `a` that the grounder
    /// ([`instantiate`](super::instantiate::instantiate)) found, its atoms numbered by `atoms`.
    pub(super) fn of(
        a: &'a Analysis,
        found: Vec<Instances>,
        atoms: Numbering,
        started: Instant,
    ) -> Self {
        let rel_names = a
            .prog
            .relations
            .iter()
            .map(|r| a.prog.terms.name(r.name).to_string())
            .collect();
        Ground::new(
            &a.relaxed,
            &a.dynamic,
            found,
            atoms,
            started,
            (a.rels.true_, a.rels.does),
            rel_names,
        )
    }

    /// Indexes the instances by head atom, in rule order, and notes which atoms are used.
    fn new(
        relaxed: &'a Db,
        dynamic: &'a [bool],
        found: Vec<Instances>,
        Numbering {
            base: row_base,
            len: row_len,
            ..
        }: Numbering,
        started: Instant,
        (true_, does): (RelId, RelId),
        rel_names: Vec<String>,
    ) -> Self {
        let terms = relaxed.terms.clone();
        let atoms = row_len.iter().map(|&n| n as usize).sum();
        let mut by_base: Vec<(u32, u32)> = (0..row_base.len())
            .filter(|&r| row_len[r] > 0)
            .map(|r| (row_base[r], r as u32))
            .collect();
        by_base.sort_unstable();
        // Every buffer holds one rule's instances, so one relation's heads: the relations' atoms are
        // disjoint stretches, indexed side by side, each from its rules' buffers in rule order.
        let mut bufs_of: Vec<Vec<&[u32]>> = vec![Vec::new(); by_base.len()];
        for buf in &found {
            if let Some(&head) = buf.first() {
                bufs_of[by_base.partition_point(|&(b, _)| b <= head) - 1].push(buf);
            }
        }
        let spans: Vec<(usize, usize)> = by_base
            .iter()
            .map(|&(b, r)| (b as usize, row_len[r as usize] as usize))
            .collect();
        // Per atom, its number of alternatives and of literals (counted at `a + 1`, summed below).
        let mut first = vec![0u32; atoms + 1];
        let mut lit_first = vec![0u32; atoms + 1];
        let mut always = vec![false; atoms];
        let words = atoms.div_ceil(64);
        let parts = split_spans(&spans, &mut first[1..])
            .zip(split_spans(&spans, &mut lit_first[1..]))
            .zip(split_spans(&spans, &mut always))
            .zip(&bufs_of)
            .zip(&spans);
        // As many groups of stretches as threads, about as many instance words each, each group
        // with one bitset of the atoms its instances mention.
        let threads = rayon::current_num_threads().max(1);
        let total: usize = found.iter().map(Vec::len).sum();
        let mut groups: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
        let mut done = 0;
        for part in parts {
            let words_in: usize = part.0 .1.iter().map(|b| b.len()).sum();
            groups[(done * threads / total.max(1)).min(threads - 1)].push(part);
            done += words_in;
        }
        let counted: Vec<(Vec<u64>, usize)> = groups
            .into_par_iter()
            .map(|group| {
                let (mut used, mut instances) = (vec![0u64; words], 0usize);
                for ((((alts_n, lits_n), always), bufs), &(base, _)) in group {
                    for buf in bufs {
                        let mut at = 0;
                        while at < buf.len() {
                            let (head, n) = (buf[at] as usize, buf[at + 1] as usize);
                            used[head / 64] |= 1 << (head % 64);
                            for &l in &buf[at + 2..at + 2 + n] {
                                let x = (l >> 1) as usize;
                                used[x / 64] |= 1 << (x % 64);
                            }
                            always[head - base] |= n == 0;
                            alts_n[head - base] += 1;
                            lits_n[head - base] += n as u32;
                            instances += 1;
                            at += 2 + n;
                        }
                    }
                }
                (used, instances)
            })
            .collect();
        let instances = counted.iter().map(|c| c.1).sum();
        let used: Vec<bool> = (0..atoms)
            .map(|a| counted.iter().any(|c| c.0[a / 64] >> (a % 64) & 1 == 1))
            .collect();
        for a in 0..atoms {
            first[a + 1] += first[a];
            lit_first[a + 1] += lit_first[a];
        }
        let mut alts = vec![(0, 0); instances];
        let mut lits = vec![0; lit_first[atoms] as usize];
        // Each relation's stretch of alternatives and of literals.
        let stretches = |of: &[u32]| -> Vec<(usize, usize)> {
            spans
                .iter()
                .map(|&(b, n)| (of[b] as usize, (of[b + n] - of[b]) as usize))
                .collect()
        };
        let (alt_parts, lit_parts) = (stretches(&first), stretches(&lit_first));
        split_spans(&alt_parts, &mut alts)
            .zip(split_spans(&lit_parts, &mut lits))
            .zip(&bufs_of)
            .zip(&spans)
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(|(((alts, lits), bufs), &(base, n))| {
                // Where each atom's next alternative and literal go, from the stretch's start.
                let (alt0, lit0) = (first[base], lit_first[base]);
                let mut fill: Vec<u32> = first[base..base + n].iter().map(|f| f - alt0).collect();
                let mut lit_fill: Vec<u32> =
                    lit_first[base..base + n].iter().map(|f| f - lit0).collect();
                for buf in bufs {
                    let mut at = 0;
                    while at < buf.len() {
                        let (head, k) = (buf[at] as usize - base, buf[at + 1] as usize);
                        let start = lit_fill[head] as usize;
                        lits[start..start + k].copy_from_slice(&buf[at + 2..at + 2 + k]);
                        lit_fill[head] += k as u32;
                        alts[fill[head] as usize] = (lit0 + start as u32, k as u32);
                        fill[head] += 1;
                        at += 2 + k;
                    }
                }
            });
        Ground {
            relaxed,
            dynamic,
            terms,
            first,
            alts,
            lits,
            always,
            used,
            row_base,
            row_len,
            by_base,
            instances,
            started,
            true_,
            does,
            rel_names,
        }
    }

    /// The atom of `rel(args)`, if the relaxed fixpoint has it.
    pub(super) fn find_atom(&self, rel: RelId, args: &[TermId]) -> Option<u32> {
        let i = self.relaxed.rel(rel).position(args)?;
        Some(self.row_base[rel.0 as usize] + i as u32)
    }

    /// The relation of atom `a`: the last whose first atom is at most `a`.
    pub(super) fn rel_of(&self, a: u32) -> RelId {
        RelId(self.by_base[self.by_base.partition_point(|&(b, _)| b <= a) - 1].1)
    }

    /// Whether atom `a` is a fact of `rel`.
    pub(super) fn is(&self, a: u32, rel: RelId) -> bool {
        a.wrapping_sub(self.row_base[rel.0 as usize]) < self.row_len[rel.0 as usize]
    }

    /// The atoms of `rel`.
    pub(super) fn atoms_of(&self, rel: RelId) -> std::ops::Range<u32> {
        let b = self.row_base[rel.0 as usize];
        b..b + self.row_len[rel.0 as usize]
    }

    /// The arguments of atom `a`.
    pub(super) fn args(&self, a: u32) -> &[TermId] {
        let rel = self.rel_of(a);
        self.relaxed
            .rel(rel)
            .row((a - self.row_base[rel.0 as usize]) as usize)
    }

    /// The atoms of `rel` that some instance mentions.
    pub(super) fn used_atoms(&self, rel: RelId) -> impl Iterator<Item = u32> + '_ {
        self.atoms_of(rel).filter(|&a| self.used[a as usize])
    }

    /// The body of alternative `(start, length)`, `None` when it was dropped.
    pub(super) fn body(&self, (start, n): (u32, u32)) -> Option<&[u32]> {
        (n != DROPPED).then(|| &self.lits[start as usize..(start + n) as usize])
    }

    /// The alternatives of atom `a`, as positions for [`Ground::body`].
    pub(super) fn alts_of(&self, a: u32) -> &[(u32, u32)] {
        &self.alts[self.first[a as usize] as usize..self.first[a as usize + 1] as usize]
    }

    /// The bodies of atom `a`'s alternatives.
    pub(super) fn bodies(&self, a: u32) -> impl Iterator<Item = &[u32]> + '_ {
        self.alts_of(a).iter().filter_map(|&p| self.body(p))
    }

    /// The literal of atom `a`'s bodies at position (body `bi`, literal `li`), moving the position on:
    /// a depth-first walk keeps its place in each atom on its stack. `None` after the last.
    pub(super) fn next_lit(&self, a: u32, bi: &mut usize, li: &mut usize) -> Option<u32> {
        let alts = self.alts_of(a);
        while *bi < alts.len() {
            match self.body(alts[*bi]) {
                Some(body) if *li < body.len() => {
                    *li += 1;
                    return Some(body[*li - 1]);
                }
                _ => {
                    *bi += 1;
                    *li = 0;
                }
            }
        }
        None
    }
}

/// `all` cut into the stretches `spans` (start, length; increasing, disjoint), one slice each, in
/// order; what lies between or after them is left out.
fn split_spans<'s, T>(
    spans: &'s [(usize, usize)],
    all: &'s mut [T],
) -> impl Iterator<Item = &'s mut [T]> + 's {
    let mut rest: &'s mut [T] = all;
    let mut at = 0;
    spans.iter().map(move |&(start, n)| {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
        let (part, tail) = tail.split_at_mut(n);
        rest = tail;
        at = start + n;
        part
    })
}

/// A ground atom as KIF, for messages.
pub(super) fn atom_name(g: &Ground, a: u32) -> String {
    let mut s = format!("({}", g.rel_names[g.rel_of(a).0 as usize]);
    for t in g.args(a) {
        s.push(' ');
        s.push_str(&g.terms.kif(*t));
    }
    s.push(')');
    s
}

/// How the relaxed rows of the state-dependent relations are numbered as atoms: relation `r`'s are
/// `base[r]..base[r] + len[r]`, relations numbered one after the other (the late ones when complete).
#[derive(Clone)]
pub(super) struct Numbering {
    pub(super) base: Vec<u32>,
    pub(super) len: Vec<u32>,
    pub(super) total: u64,
}

impl Numbering {
    /// Numbers relation `r`'s `len` rows next.
    pub(super) fn number(&mut self, r: usize, len: usize) -> Result<(), NetworkError> {
        self.total += len as u64;
        if self.total >= 1 << 31 {
            return Err(NetworkError::over(
                Limit::Size,
                "more than 2^31 facts can hold in some state".into(),
            ));
        }
        self.base[r] = (self.total - len as u64) as u32;
        self.len[r] = len as u32;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::net::Strategy;
    use super::super::testing::{analysed, game, instantiated, kif, TURNS};
    use super::*;

    #[test]
    fn split_spans_cuts_the_stretches_and_leaves_the_gaps_out() {
        let mut all: Vec<u32> = (0..10).collect();
        let spans = [(0, 2), (3, 0), (3, 4), (8, 1)];
        let parts: Vec<Vec<u32>> = split_spans(&spans, &mut all).map(|p| p.to_vec()).collect();
        assert_eq!(parts, [vec![0, 1], vec![], vec![3, 4, 5, 6], vec![8]]);
        for p in split_spans(&spans, &mut all) {
            p.iter_mut().for_each(|x| *x += 100);
        }
        assert_eq!(all, [100, 101, 2, 103, 104, 105, 106, 7, 108, 9]);
    }

    #[test]
    fn the_ground_program_indexed_side_by_side_is_the_one_indexed_instance_after_instance() {
        // Decomposed breakthrough: hundreds of relations, late ones among them.
        let mut a = analysed(&game("breakthrough.gdl"), Strategy::Decomposed);
        let inst = instantiated(&mut a);
        let found = inst.found.clone();
        let g = Ground::of(&a, inst.found, inst.atoms, Instant::now());
        let atoms = g.used.len();
        assert!(
            g.by_base.len() > 10,
            "{} relations with atoms",
            g.by_base.len()
        );
        // Every atom's bodies, in order, read from the buffers one instance after the other.
        let mut bodies: Vec<Vec<Vec<u32>>> = vec![Vec::new(); atoms];
        let mut used = vec![false; atoms];
        for buf in &found {
            let mut at = 0;
            while at < buf.len() {
                let (head, n) = (buf[at] as usize, buf[at + 1] as usize);
                let body = buf[at + 2..at + 2 + n].to_vec();
                used[head] = true;
                body.iter().for_each(|&l| used[(l >> 1) as usize] = true);
                bodies[head].push(body);
                at += 2 + n;
            }
        }
        for (atom, expected) in bodies.iter().enumerate() {
            let got: Vec<Vec<u32>> = g.bodies(atom as u32).map(<[u32]>::to_vec).collect();
            assert_eq!(&got, expected, "atom {atom}");
            let always = expected.iter().any(Vec::is_empty);
            assert_eq!(g.always[atom], always, "atom {atom}");
        }
        assert_eq!(g.used, used);
        assert_eq!(g.instances, bodies.iter().map(Vec::len).sum::<usize>());
    }

    #[test]
    fn an_atom_has_its_alternatives_in_rule_order() {
        let mut a = analysed(&kif(TURNS), Strategy::AsWritten);
        let inst = instantiated(&mut a);
        let g = Ground::of(&a, inst.found, inst.atoms, Instant::now());
        let marked = a.relaxed.terms.kif(a.numbered.props[2]);
        assert_eq!(marked, "(marked 1)");
        let next = g
            .find_atom(a.rels.next, &[a.numbered.props[2]])
            .expect("next (marked 1) can hold");
        assert_eq!(atom_name(&g, next), "(next (marked 1))");
        // `does(r, (mark 1))` for each role, then `true (marked 1)`: the rules' order.
        let bodies: Vec<Vec<String>> = g
            .bodies(next)
            .map(|b| b.iter().map(|&x| atom_name(&g, x >> 1)).collect())
            .collect();
        assert_eq!(
            bodies,
            [
                vec!["(does white (mark 1))"],
                vec!["(does black (mark 1))"],
                vec!["(true (marked 1))"]
            ]
        );
        assert!(!g.always[next as usize] && g.used[next as usize]);
        // An input atom is defined by no rule: no alternative.
        let input = g
            .find_atom(a.rels.true_, &[a.numbered.props[2]])
            .expect("true (marked 1)");
        assert_eq!(g.bodies(input).count(), 0);
    }
}
