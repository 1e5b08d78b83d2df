//! The network's answers to a reference trace (`../shared/conformance/FORMAT.md`): [`NetGame`] implements
//! [`TraceGame`], so [`crate::engine::conformance::replay`] checks it exactly as it checks the Datalog
//! engine.

use super::{NetGame, NetMove};
use crate::engine::conformance::TraceGame;
use crate::engine::BitState;
use crate::game::{Game, Goal, RoleIndex};

impl TraceGame for NetGame {
    fn trace_state(&self, state: &BitState) -> Vec<String> {
        self.state_facts(state)
    }

    fn trace_legal(&self, state: &BitState, role: RoleIndex) -> Result<Vec<String>, String> {
        let mut buf = Vec::new();
        self.legal_moves(state, role, &mut buf);
        Ok(buf.iter().map(|m| self.move_kif(*m).to_string()).collect())
    }

    fn trace_terminal(&self, state: &BitState) -> Result<bool, String> {
        Ok(self.is_terminal(state))
    }

    fn trace_goals(&self, state: &BitState, role: RoleIndex) -> Result<Vec<Goal>, String> {
        Ok(self.goal_values(state, role))
    }

    fn trace_move(&self, text: &str) -> Option<NetMove> {
        self.move_from_kif(text)
    }

    fn trace_next(&self, state: &BitState, joint: &[NetMove]) -> Result<BitState, String> {
        Ok(self.next_state(state, joint))
    }
}
