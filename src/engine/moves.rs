//! How [`super::RuleGame`] names moves, in either of its modes: an interned id, and the moves of a role
//! read from the facts of `legal`.

use crate::datalog::eval::Db;
use crate::datalog::ir::RelId;
use crate::datalog::terms::TermId;

/// The moves of `role` among the facts of `legal` (in either mode: what differs is how they are
/// numbered).
pub(crate) fn moves_of(db: &Db, legal: RelId, role: TermId) -> impl Iterator<Item = TermId> + '_ {
    let rel = db.rel(legal);
    (0..rel.len())
        .map(move |i| rel.row(i))
        .filter(move |row| row[0] == role)
        .map(|row| row[1])
}

/// A move: an interned id; ids are in the byte order of the moves' KIF text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleMove(pub u32);
