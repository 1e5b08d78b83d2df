//! The match record as an observer: ggp-base's match JSON ([`MatchRecord`]) filled in from the
//! referee's events, for `--out FILE.json`, the viewer and the web page's replays.

use std::time::{SystemTime, UNIX_EPOCH};

use super::events::{MatchEvent, Observer};
use crate::game::Game;
use crate::protocol::messages::ggp_base_spacing;
use crate::protocol::record::{state_text, MatchRecord};

/// Milliseconds since the Unix epoch.
pub fn epoch_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Keeps the record of a match as it is played.
pub struct Recorder {
    record: MatchRecord,
}

impl Recorder {
    /// A record of the match `match_id` of `game` under these clocks; `token` tells it from another
    /// match of the same id.
    pub fn new<G: Game>(
        game: &G,
        match_id: &str,
        clock: crate::players::Clock,
        token: String,
    ) -> Recorder {
        let info = game.info();
        Recorder {
            record: MatchRecord {
                match_id: match_id.to_string(),
                random_token: token,
                start_time: epoch_millis(),
                game_meta_url: String::new(),
                start_clock: clock.start.as_secs_f64(),
                play_clock: clock.play.as_secs_f64(),
                preview_clock: -1.0,
                is_completed: false,
                is_aborted: false,
                scrambled: false,
                states: Vec::new(),
                moves: Vec::new(),
                state_times: Vec::new(),
                errors: Vec::new(),
                goal_values: Vec::new(),
                player_names_from_host: vec![String::new(); info.num_roles()],
                game_name: Some(info.name.clone()),
                game_role_names: Some(info.roles.clone()),
            },
        }
    }

    /// The record so far.
    pub fn record(&self) -> &MatchRecord {
        &self.record
    }

    /// The record.
    pub fn into_record(self) -> MatchRecord {
        self.record
    }
}

impl<G: Game> Observer<G> for Recorder {
    fn observe(&mut self, game: &G, event: &MatchEvent<'_, G>) {
        let r = &mut self.record;
        match event {
            MatchEvent::Starting { seats, .. } => r.player_names_from_host = seats.to_vec(),
            MatchEvent::Ready { role, name, .. } => {
                if let Some(slot) = r.player_names_from_host.get_mut(*role) {
                    *slot = name.to_string();
                }
            }
            MatchEvent::State { step, state } => {
                // A taken-back step is recorded again from where play resumed.
                r.states.truncate(*step);
                r.state_times.truncate(*step);
                r.states.push(state_text(&game.state_kif(state)));
                r.state_times.push(epoch_millis());
            }
            MatchEvent::Moves { step, moves, .. } => {
                r.moves.truncate(step - 1);
                r.errors.truncate(step - 1);
                r.moves.push(
                    moves
                        .iter()
                        .map(|m| ggp_base_spacing(&game.move_kif(&m.mv)))
                        .collect(),
                );
                r.errors.push(
                    moves
                        .iter()
                        .map(|m| {
                            m.violation
                                .as_ref()
                                .map(|v| v.record_text())
                                .unwrap_or_default()
                        })
                        .collect(),
                );
            }
            MatchEvent::TakenBack {
                step: Some(step), ..
            } => {
                r.moves.truncate(*step);
                r.errors.truncate(*step);
            }
            MatchEvent::TakenBack { step: None, .. } => {}
            MatchEvent::Finished { goals, .. } => {
                r.is_completed = true;
                r.goal_values = goals.to_vec();
            }
            MatchEvent::Aborted { .. } => r.is_aborted = true,
        }
    }
}
/// The states of `record`'s match replayed on `game`, the initial state first: the record's moves
/// must be legal there, and its roles (when it names them) the game's.
pub fn replay<G: Game>(game: &G, record: &MatchRecord) -> Result<Vec<G::State>, String> {
    let info = game.info();
    if let Some(roles) = &record.game_role_names {
        if *roles != info.roles {
            return Err(format!(
                "the record is of {} (roles {}), not of {} (roles {})",
                record.game_name.as_deref().unwrap_or("another game"),
                roles.join(", "),
                info.name,
                info.roles.join(", ")
            ));
        }
    }
    let mut state = game.initial_state();
    let mut states = Vec::with_capacity(record.moves.len() + 1);
    for (step, joint) in record.moves.iter().enumerate() {
        if joint.len() != info.num_roles() {
            return Err(format!(
                "step {} has {} but the game has {}",
                step + 1,
                crate::diagnostics::count(joint.len(), "move"),
                crate::diagnostics::count(info.num_roles(), "role")
            ));
        }
        let moves = joint
            .iter()
            .enumerate()
            .map(|(role, text)| game.parse_move(&state, role, text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                format!(
                    "step {} does not replay on {}: {e}{}",
                    step + 1,
                    info.name,
                    match &record.game_name {
                        Some(g) if *g != info.name => {
                            format!(" (the record is of `{g}`; is this its rule file?)")
                        }
                        _ => String::new(),
                    }
                )
            })?;
        let next = game.next_state(&state, &moves);
        states.push(std::mem::replace(&mut state, next));
        if game.is_terminal(&states[states.len() - 1]) {
            return Err(format!("step {} is played after the game ended", step + 1));
        }
    }
    states.push(state);
    Ok(states)
}
