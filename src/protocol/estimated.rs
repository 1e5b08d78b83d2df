//! A game that owns its rules and estimates positions by random playouts: what
//! [`PlayoutEstimate`](crate::players::PlayoutEstimate) gives the command line's players, for a match
//! session that must own its game rather than borrow it.
//!
//! Depth-limited players (alpha-beta, `id`, ...) see a rule game's flat goal values at their horizon;
//! with the playout estimate they play sensibly. Every other method passes straight through.

use crate::players::PlayoutEstimate;

use super::KifGame;

/// Random playouts behind each estimate: the command line's default for rule files.
pub const ESTIMATE_PLAYOUTS: u32 = 8;

/// `G`, owned, with the playout estimate.
pub type Estimated<G> = PlayoutEstimate<Box<G>>;

impl<G: KifGame> KifGame for Estimated<G> {
    fn move_kif(&self, mv: &Self::Move) -> String {
        self.inner().move_kif(mv)
    }

    fn state_kif(&self, state: &Self::State) -> Vec<String> {
        self.inner().state_kif(state)
    }
}
