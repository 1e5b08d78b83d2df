//! What a game played from its rules answers the same way on both engines.
//!
//! [`crate::engine::RuleGame`] (the Datalog evaluator) and [`crate::network::NetGame`] (the grounded
//! network) compute legal moves, next states and goals each in their own way, but the answers GDL leaves
//! open are chosen here once, so that a player sees the same game whichever engine runs it:
//!
//! - [`dynamics_of`]: `TurnTaking` when a base proposition `f(r)` of arity one ranges exactly over the
//!   roles (a `control` fact), or when there is one role; else `Simultaneous`.
//! - [`mover_of`]: the only role with more than one legal move; when every role has exactly one, the only
//!   role whose move is not the no-op ([`noop`]); otherwise `None`, and always `None` when a role has
//!   no legal move at all (a state the rules leave stuck: no joint move exists, so no role's move
//!   can be played alone).
//! - [`zero_sum`]: two roles, and every possible goal value `v` of one has `100 - v` among the other's.
//!
//! **Invariant:** both engines call these functions; neither writes its own version of these rules.

use hashbrown::HashMap;

use crate::datalog::terms::{TermId, TermStore};
use crate::game::{Dynamics, RoleIndex};
use crate::syntax::ast::{Sym, Syntax};

/// Whether the game takes turns, read from its base propositions (see the module documentation).
pub fn dynamics_of(terms: &TermStore, props: &[TermId], roles: &[TermId]) -> Dynamics {
    let mut by_sym: HashMap<Sym, Vec<TermId>> = HashMap::new();
    for &p in props {
        let args = terms.args(p);
        if args.len() == 1 {
            by_sym.entry(terms.sym(p)).or_default().push(args[0]);
        }
    }
    let turn = roles.len() > 1
        && by_sym.values().any(|vals| {
            vals.iter().all(|v| roles.contains(v)) && roles.iter().all(|r| vals.contains(r))
        });
    if turn || roles.len() == 1 {
        Dynamics::TurnTaking
    } else {
        Dynamics::Simultaneous
    }
}

/// What [`mover_of`] needs to know of one role's legal moves in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// No legal move: the state is stuck, whatever the other roles have.
    Stuck,
    /// Exactly the no-op.
    Nothing,
    /// Exactly one legal move, which is not the no-op.
    Forced,
    /// More than one legal move.
    Several,
}

impl Choice {
    /// The choice of a role with `count` legal moves whose only move, if one, `is_noop` tells.
    pub fn of(count: usize, is_noop: impl FnOnce() -> bool) -> Choice {
        match count {
            0 => Choice::Stuck,
            1 if is_noop() => Choice::Nothing,
            1 => Choice::Forced,
            _ => Choice::Several,
        }
    }
}

/// The role in control of a non-terminal state, from each role's [`Choice`] (see the module
/// documentation). Counts instead of collecting: a tree search asks at every node it adds.
pub fn mover_of(
    num_roles: usize,
    mut choice: impl FnMut(RoleIndex) -> Choice,
) -> Option<RoleIndex> {
    let (mut several, mut forced) = ((0, 0), (0, 0));
    for r in 0..num_roles {
        match choice(r) {
            Choice::Several => several = (several.0 + 1, r),
            Choice::Forced => forced = (forced.0 + 1, r),
            Choice::Nothing => {}
            Choice::Stuck => return None,
        }
    }
    match (several.0, forced.0) {
        (1, _) => Some(several.1),
        (0, 1) => Some(forced.1),
        _ => None,
    }
}

/// Whether the game is zero-sum, from each role's possible goal values: two roles, and every value `v`
/// of one has `100 - v` among the other's.
pub fn zero_sum(goal_values: &[Vec<i64>]) -> bool {
    let [a, b] = goal_values else {
        return false;
    };
    !a.is_empty()
        && a.iter().all(|v| b.contains(&100i64.saturating_sub(*v)))
        && b.iter().all(|v| a.contains(&100i64.saturating_sub(*v)))
}

/// The no-op move, `noop`, when the rules name one: the move a waiting role plays, which
/// [`mover_of`] does not count as a choice.
pub fn noop(terms: &TermStore) -> Option<TermId> {
    terms
        .symbols()
        .get("noop")
        .and_then(|s| terms.find_constant(s))
}

/// Each move's text in KIF (what the protocol and the traces use) and in the game's own syntax (what
/// people read), by move id: both engines print moves the same way.
#[derive(Debug, Default)]
pub(crate) struct MoveTexts {
    pub(crate) kif: Vec<String>,
    pub(crate) own: Vec<String>,
}

impl MoveTexts {
    /// The texts of `moves`, terms of `terms`, for a game written in `syntax`.
    pub(crate) fn of(terms: &TermStore, moves: &[TermId], syntax: Syntax) -> MoveTexts {
        let kif: Vec<String> = moves.iter().map(|t| terms.kif(*t)).collect();
        let own = match syntax {
            Syntax::Kif => kif.clone(),
            Syntax::Infix => moves.iter().map(|t| terms.infix(*t)).collect(),
        };
        MoveTexts { kif, own }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Symbols;

    #[test]
    fn the_mover_is_the_only_role_with_a_choice_or_else_the_only_one_not_waiting() {
        use Choice::*;
        let cases: &[(&[Choice], Option<RoleIndex>)] = &[
            (&[Several, Nothing], Some(0)),
            (&[Nothing, Several], Some(1)),
            (&[Several, Forced], Some(0)),
            (&[Forced, Nothing], Some(0)),
            (&[Nothing, Forced, Nothing], Some(1)),
            (&[Several, Several], None),
            (&[Forced, Forced], None),
            (&[Nothing, Nothing], None),
            // A role without a move leaves the state stuck: no role can move alone.
            (&[Stuck, Several], None),
            (&[Forced, Stuck], None),
            (&[Nothing, Several, Stuck], None),
        ];
        for (choices, expected) in cases {
            assert_eq!(
                mover_of(choices.len(), |r| choices[r]),
                *expected,
                "{choices:?}"
            );
        }
        assert_eq!(Choice::of(0, || unreachable!()), Choice::Stuck);
        assert_eq!(Choice::of(1, || true), Choice::Nothing);
        assert_eq!(Choice::of(1, || false), Choice::Forced);
        assert_eq!(Choice::of(3, || unreachable!()), Choice::Several);
    }

    #[test]
    fn a_proposition_ranging_over_the_roles_means_turns() {
        let mut t = TermStore::new(Symbols::default());
        let (white, black) = (t.intern_sym("white"), t.intern_sym("black"));
        let (white, black) = (t.constant(white), t.constant(black));
        let control = t.intern_sym("control");
        let cell = t.intern_sym("cell");
        let one = t.int(1);
        let props = vec![
            t.func(control, &[white]),
            t.func(control, &[black]),
            t.func(cell, &[one]),
        ];
        let roles = [white, black];
        assert_eq!(dynamics_of(&t, &props, &roles), Dynamics::TurnTaking);
        assert_eq!(
            dynamics_of(&t, &props[..1], &roles),
            Dynamics::Simultaneous,
            "control of one role only is not a turn"
        );
        assert_eq!(dynamics_of(&t, &[], &roles[..1]), Dynamics::TurnTaking);
        assert_eq!(dynamics_of(&t, &[], &roles), Dynamics::Simultaneous);
    }
}
