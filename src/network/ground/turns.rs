//! The turn proofs: whether at most one role moves at a time, and what that makes redundant.
//!
//! The entry point is [`prove_turns`], run on the ground program before compiling. Turn-taking games
//! say whose turn it is with a base proposition (`true(control white)`) that every legal move of the
//! role reads. [`one_mover`] finds each role's turn and proves, by evaluating the turns' `next`
//! atoms on every state where at most one turn holds ([`turns_stay_exclusive`], bounded), that **at
//! most one turn holds in every reachable state and only the role whose turn it is plays a `does`
//! input**. A proof that does not fit its bounds is no proof: the game is then compiled as if any
//! role could move ([`one_mover`] returns no turns).
//!
//! With the proof, [`drop_implied_turns`] removes from each rule instance that reads a role's move
//! the turn conditions that move implies, and the instances that need another role's turn; the
//! compiler shares one "some role moved" signal among the roles. **Neither changes what any output
//! computes in a reachable state.**

use hashbrown::HashMap;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::analysis::Analysis;
use super::atoms::{Ground, DROPPED};
use crate::datalog::ir::RelId;
use crate::datalog::terms::TermId;

/// Proves the turns of the game analysed in `a` on its ground program `g` and drops the turn
/// conditions the moves imply (see the module documentation); returns per role its turn (the atom
/// of `true(turn)`), all `None` when there is no proof.
pub(super) fn prove_turns(g: &mut Ground, a: &Analysis) -> Vec<Option<u32>> {
    let turns = one_mover(
        g,
        &a.roles,
        a.rels.legal,
        a.rels.next,
        &a.initial,
        &a.numbered.prop_of,
    );
    drop_implied_turns(g, &a.roles, &turns);
    turns
}
/// Per role, its turn (the atom of `true(turn)`) when at most one of the roles with a turn can play a
/// `does` input in any reachable joint move (all `None` when that cannot be shown).
///
/// The proof is the turn of turn-taking games: each marked role's legal moves that have an input all
/// need one base proposition, its *turn* (`true(control white)` in every instance of its `legal`), and
/// at most one turn holds in every reachable state: at most one initially, and no two `next(turn)`
/// instances can hold together in a state where at most one turn holds (every pair of their
/// conditions holds two different turns, or a condition and its negation).
pub(super) fn one_mover(
    g: &Ground,
    roles: &[TermId],
    legal: RelId,
    next: RelId,
    initial: &[u32],
    prop_of: &HashMap<TermId, u32>,
) -> Vec<Option<u32>> {
    let none = vec![None; roles.len()];
    let atom = |r: RelId, args: &[TermId]| g.find_atom(r, args);
    // The turn of each role that has inputs, as the atom of `true(turn)`.
    let mut turn: Vec<Option<u32>> = vec![None; roles.len()];
    for (ri, &role) in roles.iter().enumerate() {
        let mut common: Option<Vec<u32>> = None;
        let mut any = false;
        for d in g.used_atoms(g.does).filter(|&a| g.args(a)[0] == role) {
            any = true;
            let Some(l) = atom(legal, &[role, g.args(d)[1]]) else {
                if g.dynamic[legal.0 as usize] {
                    continue; // never legal
                }
                return none;
            };
            if g.always[l as usize] {
                return none;
            }
            for body in g.bodies(l) {
                let trues: Vec<u32> = body
                    .iter()
                    .filter(|&&x| x & 1 == 0 && g.is(x >> 1, g.true_))
                    .map(|&x| x >> 1)
                    .collect();
                common = Some(match common {
                    None => trues,
                    Some(c) => c.into_iter().filter(|a| trues.contains(a)).collect(),
                });
            }
        }
        if !any {
            continue;
        }
        match common.and_then(|c| c.into_iter().min()) {
            Some(t) => turn[ri] = Some(t),
            None => return none,
        }
    }
    let turns: Vec<u32> = turn.iter().flatten().copied().collect();
    if turns.len() < 2 {
        return none;
    }
    let prop = |t: u32| prop_of.get(&g.args(t)[0]).copied();
    let initially = turns
        .iter()
        .filter(|&&t| prop(t).is_some_and(|p| initial.contains(&p)))
        .count();
    if initially > 1 {
        return none;
    }
    if !g.dynamic[next.0 as usize] {
        return none;
    }
    let next_of: Vec<Option<u32>> = turns.iter().map(|&t| atom(next, &[g.args(t)[0]])).collect();
    let turn_role: Vec<(usize, u32)> = turn
        .iter()
        .enumerate()
        .filter_map(|(r, t)| t.map(|t| (r, t)))
        .collect();
    if !turns_stay_exclusive(g, roles, &turn_role, &next_of) {
        return none;
    }
    turn
}

/// Whether no two turns' `next` atoms (`None`: never true) can hold together in a state where at
/// most one turn holds and only the role whose turn it is plays a `does` input, shown by evaluating
/// them on every such assignment of the inputs they depend on. False when they depend on more than a
/// few other propositions (or many atoms): that is not a proof.
fn turns_stay_exclusive(
    g: &Ground,
    roles: &[TermId],
    turn_role: &[(usize, u32)],
    next_of: &[Option<u32>],
) -> bool {
    const MAX_CONE: usize = 20_000;
    const MAX_FREE: usize = 12;
    const MAX_WORK: usize = 20_000_000;
    // The atoms the `next` atoms depend on, each after those it reads (post-order).
    let mut index: HashMap<u32, usize> = HashMap::new();
    let mut order: Vec<u32> = Vec::new();
    let mut stack: Vec<(u32, usize, usize)> = Vec::new();
    let mut seen: HashMap<u32, ()> = HashMap::new();
    for &root in next_of.iter().flatten() {
        if seen.insert(root, ()).is_some() {
            continue;
        }
        stack.push((root, 0, 0));
        while let Some(&mut (a, ref mut bi, ref mut li)) = stack.last_mut() {
            let leaf = g.is(a, g.true_) || g.is(a, g.does) || g.always[a as usize];
            let mut child = None;
            while let Some(x) = g.next_lit(a, bi, li).filter(|_| !leaf) {
                if seen.insert(x >> 1, ()).is_none() {
                    child = Some(x >> 1);
                    break;
                }
            }
            match child {
                Some(c) => stack.push((c, 0, 0)),
                None => {
                    stack.pop();
                    index.insert(a, order.len());
                    order.push(a);
                    if order.len() > MAX_CONE {
                        return false;
                    }
                }
            }
        }
    }
    let turn_of = |a: u32| turn_role.iter().find(|x| x.1 == a).map(|x| x.0);
    let role_of = |a: u32| roles.iter().position(|r| *r == g.args(a)[0]);
    let free: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&a| g.is(a, g.true_) && turn_of(a).is_none())
        .collect();
    if free.len() > MAX_FREE {
        return false;
    }
    let moves: Vec<u32> = order.iter().copied().filter(|&a| g.is(a, g.does)).collect();
    // Bound the work: assignments times atoms evaluated.
    let assignments: usize = turn_role
        .iter()
        .map(|&(r, _)| 1 + moves.iter().filter(|&&m| role_of(m) == Some(r)).count())
        .sum::<usize>()
        + 1;
    if (assignments << free.len()).saturating_mul(order.len()) > MAX_WORK {
        return false;
    }
    let mut val = vec![false; order.len()];
    // Who holds the turn (none, or a role), which of its inputs it plays (none, or one).
    let holders = std::iter::once(None).chain(turn_role.iter().map(|x| Some(x.0)));
    for holder in holders {
        let played = std::iter::once(None).chain(
            moves
                .iter()
                .filter(|&&m| holder.is_some() && role_of(m) == holder)
                .map(|&m| Some(m)),
        );
        for mv in played {
            for bits in 0..1u32 << free.len() {
                for (k, &a) in order.iter().enumerate() {
                    val[k] = if g.is(a, g.true_) {
                        match turn_of(a) {
                            Some(r) => holder == Some(r),
                            None => free
                                .iter()
                                .position(|&f| f == a)
                                .is_some_and(|i| bits >> i & 1 == 1),
                        }
                    } else if g.is(a, g.does) {
                        mv == Some(a)
                    } else {
                        g.always[a as usize]
                            || g.bodies(a).any(|body| {
                                body.iter().all(|&x| {
                                    index
                                        .get(&(x >> 1))
                                        .is_some_and(|&i| val[i] != (x & 1 == 1))
                                })
                            })
                    };
                }
                let holding = next_of
                    .iter()
                    .flatten()
                    .filter(|&&a| index.get(&a).is_some_and(|&i| val[i]))
                    .count();
                if holding > 1 {
                    return false;
                }
            }
        }
    }
    true
}

/// How many alternatives [`drop_implied_turns`] reads at a time on one thread.
const TURN_PIECE: usize = 1 << 16;

/// Simplifies rule instances that read a role's move together with a turn (see [`one_mover`]): a
/// role plays only on its turn, and at most one turn holds, so `does(r, m)` implies `true(turn_r)` and
/// the negation of every other turn. The turn conditions go, and an instance that needs another role's
/// turn (or the negation of its own) goes: the turn then no longer feeds the `next` of every cell
/// (`next(cell(C,R,P)) :- does(P2, drop(C)) & true(control(P)) & ..` keeps only `P2 = P`).
pub(super) fn drop_implied_turns(g: &mut Ground, roles: &[TermId], turns: &[Option<u32>]) {
    drop_implied_turns_by(g, roles, turns, TURN_PIECE);
}

/// [`drop_implied_turns`], `piece` alternatives at a time on one thread.
fn drop_implied_turns_by(g: &mut Ground, roles: &[TermId], turns: &[Option<u32>], piece: usize) {
    if turns.iter().all(|t| t.is_none()) {
        return;
    }
    let mut alts = std::mem::take(&mut g.alts);
    let mut lits = std::mem::take(&mut g.lits);
    let ground: &Ground = g;
    let mover_of = |x: u32| -> Option<usize> {
        if !ground.is(x, ground.does) {
            return None;
        }
        let r = roles.iter().position(|r| *r == ground.args(x)[0])?;
        turns[r].map(|_| r)
    };
    let turn_role = |atom: u32| turns.iter().position(|t| *t == Some(atom));
    // The alternatives in stretches, each with the literals of its bodies (which follow one another
    // in the alternatives' order), side by side.
    let mut pieces = Vec::new();
    let (mut alts_rest, mut lits_rest, mut offset) = (&mut alts[..], &mut lits[..], 0u32);
    while !alts_rest.is_empty() {
        let (piece, after) = alts_rest.split_at_mut(piece.min(alts_rest.len()));
        let end = after
            .first()
            .map_or(lits_rest.len(), |&(start, _)| (start - offset) as usize);
        let (piece_lits, lits_after) = lits_rest.split_at_mut(end);
        pieces.push((piece, piece_lits, offset));
        offset += end as u32;
        (alts_rest, lits_rest) = (after, lits_after);
    }
    pieces.into_par_iter().for_each(|(alts, lits, offset)| {
        for (start, len) in alts.iter_mut().filter(|(_, len)| *len != DROPPED) {
            let from = (*start - offset) as usize;
            let body = &mut lits[from..from + *len as usize];
            let movers: SmallVec<[usize; 2]> = body
                .iter()
                .filter(|&&x| x & 1 == 0)
                .filter_map(|&x| mover_of(x >> 1))
                .collect();
            let Some(&r) = movers.first() else {
                continue;
            };
            // Two roles moving at once, or a turn that cannot hold: the instance goes.
            let mut possible = movers.iter().all(|&m| m == r);
            let mut kept = 0;
            for i in 0..body.len() {
                let x = body[i];
                match turn_role(x >> 1) {
                    None => {
                        body[kept] = x;
                        kept += 1;
                    }
                    // Holds exactly when it is `r`'s turn; that is implied.
                    Some(t) => possible &= (t == r) == (x & 1 == 0),
                }
            }
            *len = if possible { kept as u32 } else { DROPPED };
        }
    });
    g.alts = alts;
    g.lits = lits;
}

#[cfg(test)]
mod tests {
    use super::super::net::Strategy;
    use super::super::testing::{analysed, instantiated, kif, TURNS};
    use super::*;

    #[test]
    fn turns_dropped_in_small_pieces_are_those_dropped_in_one() {
        let mut a = analysed(
            &super::super::testing::game("connect4.gdl"),
            Strategy::AsWritten,
        );
        let inst = instantiated(&mut a);
        let turns = one_mover(
            &Ground::of(
                &a,
                inst.found.clone(),
                inst.atoms.clone(),
                std::time::Instant::now(),
            ),
            &a.roles,
            a.rels.legal,
            a.rels.next,
            &a.initial,
            &a.numbered.prop_of,
        );
        assert!(
            turns.iter().all(Option::is_some),
            "connect4's turns are proved"
        );
        let dropped = |piece: usize| {
            let mut g = Ground::of(
                &a,
                inst.found.clone(),
                inst.atoms.clone(),
                std::time::Instant::now(),
            );
            drop_implied_turns_by(&mut g, &a.roles, &turns, piece);
            // Per atom, its bodies, a dropped one as `[u32::MAX]`.
            (0..g.used.len() as u32)
                .map(|x| {
                    g.alts_of(x)
                        .iter()
                        .map(|&p| g.body(p).map_or(vec![u32::MAX], <[u32]>::to_vec))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        let whole = dropped(usize::MAX);
        assert!(
            whole.iter().flatten().any(|b| b == &[u32::MAX]),
            "some instance goes"
        );
        assert_eq!(dropped(7), whole);
        assert_eq!(dropped(1), whole);
    }

    /// The turns of `text`, proved on its ground program, as the propositions' text.
    fn turns(text: &str) -> Vec<Option<String>> {
        let mut a = analysed(&kif(text), Strategy::AsWritten);
        let inst = instantiated(&mut a);
        let mut g = Ground::of(&a, inst.found, inst.atoms, std::time::Instant::now());
        let turns = prove_turns(&mut g, &a);
        turns
            .iter()
            .map(|t| t.map(|t| g.terms.kif(g.args(t)[0])))
            .collect()
    }

    #[test]
    fn turns_that_alternate_are_proved_exclusive() {
        assert_eq!(
            turns(TURNS),
            [
                Some("(control white)".to_string()),
                Some("(control black)".to_string())
            ]
        );
    }

    #[test]
    fn turns_that_can_hold_together_are_not() {
        // Both hold initially.
        let both = TURNS.replace(
            "(init (control white))",
            "(init (control white)) (init (control black))",
        );
        assert_eq!(turns(&both), [None, None]);
        // White keeps its turn when it gives black one.
        let kept = TURNS.replace(
            "(<= (next (control white)) (true (control black)))",
            "(<= (next (control white)) (true (control black)))
             (<= (next (control white)) (true (control white)))",
        );
        assert_eq!(turns(&kept), [None, None]);
    }

    #[test]
    fn a_move_drops_the_turn_it_implies() {
        let mut a = analysed(&kif(TURNS), Strategy::AsWritten);
        let inst = instantiated(&mut a);
        let mut g = Ground::of(&a, inst.found, inst.atoms, std::time::Instant::now());
        let reads_turn = |g: &Ground| {
            let legal = g.atoms_of(a.rels.legal);
            legal.into_iter().any(|l| {
                g.bodies(l).flatten().any(|&x| {
                    g.args(x >> 1)
                        .first()
                        .is_some_and(|t| g.terms.kif(*t).contains("control"))
                })
            })
        };
        assert!(reads_turn(&g));
        let turns = prove_turns(&mut g, &a);
        assert!(turns.iter().all(Option::is_some));
        // `legal` reads no move, so its turn stays; the instances that read a move lose theirs.
        assert!(reads_turn(&g));
        let next_marked = g
            .atoms_of(a.rels.next)
            .filter(|&n| g.bodies(n).any(|b| b.iter().any(|&x| g.is(x >> 1, g.does))));
        for n in next_marked {
            for body in g.bodies(n) {
                assert!(body
                    .iter()
                    .all(|&x| !g.terms.kif(g.args(x >> 1)[0]).contains("control")));
            }
        }
    }
}
