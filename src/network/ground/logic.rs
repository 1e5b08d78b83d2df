//! How ANDs and ORs of literals become gates ([`Logic`]), for the compiler ([`super::compile`]):
//! constants fold away, literals every alternative holds go into one AND with the OR of the rest,
//! literals shared by several alternatives are factored greedily, and the OR of most of a role's
//! `does` inputs becomes "the role moved, and not one of the few others". The gates go to a
//! [`GateStore`], which shares identical ones.

use smallvec::SmallVec;

use super::atoms::Ground;
use super::budget::NetworkError;
use super::gates::GateStore;
use super::{net::NetLit, net::FALSE, net::TRUE};

/// A short list of literals.
pub(super) type Lits = SmallVec<[NetLit; 8]>;

/// How ANDs and ORs of literals become gates: constants folded, shared literals factored, and the
/// ORs of many `does` inputs of a role rewritten (see [`Logic::or`]).
pub(super) struct Logic {
    pub(super) num_props: usize,
    pub(super) num_does: usize,
    /// Per role, the (positive) literals of its `does` inputs, sorted.
    does_by_role: Vec<Vec<NetLit>>,
    /// Per `does` input (its node less the first such node's), the role that plays it.
    role_of_does: Vec<u32>,
    /// Per role, whether it belongs to a set of roles of which at most one plays a `does` input in any
    /// reachable joint move (see [`one_mover`](super::turns::one_mover)).
    pub(super) one_mover: Vec<bool>,
}

/// Alternatives from which factoring reads the clock: an OR this large can take a while, one of
/// fewer does not, and reading the clock for each would cost the compile of a big game several percent.
const LARGE_OR: usize = 64;

impl Logic {
    /// The logic over `num_props` propositions and `num_does` inputs, given each role's inputs
    /// (sorted, as positive literals) and each input's role; no role proved to move alone yet.
    pub(super) fn new(
        num_props: usize,
        num_does: usize,
        does_by_role: Vec<Vec<NetLit>>,
        role_of_does: Vec<u32>,
    ) -> Logic {
        Logic {
            num_props,
            num_does,
            one_mover: vec![false; does_by_role.len()],
            does_by_role,
            role_of_does,
        }
    }

    /// The literal defining atom `a` from its bodies, every literal they read having one in
    /// `lit_of`.
    pub(super) fn define<G: GateStore>(
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
            n if n >= LARGE_OR => gs.in_time()?,
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
        let mut common: Lits = terms[0].clone();
        for (i, t) in terms[1..].iter().enumerate() {
            if common.is_empty() {
                break;
            }
            if i % 4096 == 4095 {
                gs.in_time()?;
            }
            common.retain(|l| t.binary_search(l).is_ok());
        }
        if !common.is_empty() {
            for (i, t) in terms.iter_mut().enumerate() {
                if i % 4096 == 4095 {
                    gs.in_time()?;
                }
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
            // A literal read twice counts twice here (`and` then keeps it once).
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

#[cfg(test)]
mod tests {
    use super::super::budget::Budget;
    use super::super::gates::{GateTable, Global};
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
