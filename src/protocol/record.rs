//! Match records in ggp-base's JSON, so that a match played here can be read by ggp-base's tools (and
//! theirs by `ggp-run view`).
//!
//! States are KIF fact lists and moves KIF terms, both in ggp-base's spacing (`( mark 1 1 )`); errors
//! are one string per role per step: empty, `TO`, `CE` or `IL <reply>`. Fields ggp-base writes that this
//! engine has no use for are optional when reading; fields of our own are extra keys ggp-base ignores.

use serde::{Deserialize, Serialize};

/// A match record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchRecord {
    /// The match id sent to the players.
    pub match_id: String,
    /// A random string that tells this match from another with the same id.
    #[serde(default)]
    pub random_token: String,
    /// When the match started, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub start_time: i64,
    /// Where the game's description lives (ggp-base's game repositories); empty for a local file.
    #[serde(rename = "gameMetaURL", default)]
    pub game_meta_url: String,
    /// Seconds to prepare (whole seconds are written as integers, as ggp-base does).
    #[serde(with = "seconds")]
    pub start_clock: f64,
    /// Seconds per move.
    #[serde(with = "seconds")]
    pub play_clock: f64,
    /// Seconds to preview the game; -1 for none.
    #[serde(default = "no_preview", with = "seconds")]
    pub preview_clock: f64,
    /// Whether the match reached a terminal state.
    #[serde(default)]
    pub is_completed: bool,
    /// Whether the match was aborted.
    #[serde(default)]
    pub is_aborted: bool,
    /// Whether the game's symbols were scrambled (never here).
    #[serde(default)]
    pub scrambled: bool,
    /// One state per step, the initial state first: `( ( cell 1 1 b ) ( control xplayer ) )`.
    pub states: Vec<String>,
    /// One joint move per step, a move per role in role order.
    pub moves: Vec<Vec<String>>,
    /// When each state was reached, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub state_times: Vec<i64>,
    /// Per step, per role: empty, `TO` (late), `CE` (connection error) or `IL <reply>` (illegal or
    /// unreadable), for a move the referee substituted.
    #[serde(default)]
    pub errors: Vec<Vec<String>>,
    /// The goal values of the final state, in role order (empty when the match is not completed).
    #[serde(default)]
    pub goal_values: Vec<i32>,
    /// Each role's player: its name from `info`, or the local player kind.
    #[serde(default)]
    pub player_names_from_host: Vec<String>,
    /// The game's name (ours; ggp-base ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_name: Option<String>,
    /// The roles in order (ours; ggp-base ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_role_names: Option<Vec<String>>,
}

fn no_preview() -> f64 {
    -1.0
}

/// Clocks as ggp-base writes them: integers when whole.
mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.fract() == 0.0 && v.abs() < 1e15 {
            s.serialize_i64(*v as i64)
        } else {
            s.serialize_f64(*v)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        f64::deserialize(d)
    }
}

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not ggp-base's match JSON.
    #[error("not a match record: {0}")]
    Json(#[from] serde_json::Error),
    /// The lists disagree in length.
    #[error("inconsistent match record: {0}")]
    Inconsistent(String),
}

impl MatchRecord {
    /// The record as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serialising plain strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a record and checks that its lists fit together (a state per step, a move per role).
    pub fn from_json(text: &str) -> Result<MatchRecord, RecordError> {
        let r: MatchRecord = serde_json::from_str(text)?;
        if !r.states.is_empty()
            && r.states.len() != r.moves.len() + 1
            && r.states.len() != r.moves.len()
        {
            return Err(RecordError::Inconsistent(format!(
                "{} states for {} joint moves",
                r.states.len(),
                r.moves.len()
            )));
        }
        if let Some(roles) = r.moves.first().map(Vec::len) {
            if let Some(bad) = r.moves.iter().position(|m| m.len() != roles) {
                return Err(RecordError::Inconsistent(format!(
                    "joint move {bad} has {} moves, the first has {roles}",
                    r.moves[bad].len()
                )));
            }
        }
        let roles = match &r.game_role_names {
            Some(names) => Some(names.len()),
            None => r.moves.first().map(Vec::len),
        };
        let count = |n: usize, what: &str| crate::diagnostics::count(n, what);
        if let (Some(roles), Some(first)) = (roles, r.moves.first()) {
            if first.len() != roles {
                return Err(RecordError::Inconsistent(format!(
                    "{} for {}",
                    count(first.len(), "move"),
                    count(roles, "role")
                )));
            }
        }
        if let Some(roles) =
            roles.filter(|&n| !r.goal_values.is_empty() && n != r.goal_values.len())
        {
            return Err(RecordError::Inconsistent(format!(
                "{} for {}",
                count(r.goal_values.len(), "goal value"),
                count(roles, "role")
            )));
        }
        if r.is_completed && r.goal_values.is_empty() {
            return Err(RecordError::Inconsistent(
                "a completed match without goal values".into(),
            ));
        }
        Ok(r)
    }

    /// The roles' names: the recorded ones, or `role0`, `role1`, ... for a record without them.
    pub fn role_names(&self) -> Vec<String> {
        if let Some(names) = &self.game_role_names {
            return names.clone();
        }
        let n = self.moves.first().map(Vec::len).unwrap_or(
            self.goal_values
                .len()
                .max(self.player_names_from_host.len()),
        );
        (0..n).map(|i| format!("role{i}")).collect()
    }
}

/// A state's facts as ggp-base writes a state: `( ( cell 1 1 b ) ( control xplayer ) )`.
pub fn state_text(facts: &[String]) -> String {
    let mut out = String::from("(");
    for f in facts {
        out.push(' ');
        out.push_str(&super::messages::ggp_base_spacing(f));
    }
    out.push_str(" )");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_with_ggp_base_field_names() {
        let r = MatchRecord {
            match_id: "m1".into(),
            random_token: "abc".into(),
            start_time: 1_700_000_000_000,
            game_meta_url: String::new(),
            start_clock: 10.0,
            play_clock: 0.5,
            preview_clock: -1.0,
            is_completed: true,
            is_aborted: false,
            scrambled: false,
            states: vec![
                state_text(&["(cell 1 1 b)".into(), "(control x)".into()]),
                "( )".into(),
            ],
            moves: vec![vec!["( mark 1 1 )".into(), "noop".into()]],
            state_times: vec![1, 2],
            errors: vec![vec!["".into(), "TO".into()]],
            goal_values: vec![100, 0],
            player_names_from_host: vec!["a".into(), "b".into()],
            game_name: Some("ticTacToe".into()),
            game_role_names: Some(vec!["x".into(), "o".into()]),
        };
        let json = r.to_json();
        for key in [
            "\"matchId\"",
            "\"startClock\": 10,",
            "\"playClock\": 0.5",
            "\"goalValues\"",
            "\"playerNamesFromHost\"",
            "\"isCompleted\"",
            "\"stateTimes\"",
            "\"gameMetaURL\"",
        ] {
            assert!(json.contains(key), "{key} in {json}");
        }
        assert!(json.contains("( ( cell 1 1 b ) ( control x ) )"));
        assert_eq!(MatchRecord::from_json(&json).unwrap(), r);
        assert!(MatchRecord::from_json("{\"matchId\": 3}").is_err());
    }

    #[test]
    fn a_ggp_base_record_reads_without_our_fields() {
        // Fields as ggp-base writes them, with some this engine does not know.
        let json = r#"{"matchId": "Base.ttt.1", "startClock": 60, "playClock": 15,
            "gameMetaURL": "http://games.ggp.org/base/games/ticTacToe/v0/", "isCompleted": true,
            "states": ["( ( control xplayer ) )", "( ( control oplayer ) )"],
            "moves": [["( mark 1 1 )", "noop"]], "errors": [["", ""]], "goalValues": [100, 0],
            "stateTimes": [1, 2], "playerNamesFromHost": ["A", "B"], "isPlayerHuman": [false, false],
            "gameRulesheetHash": "abc", "scrambled": false, "randomToken": "x", "startTime": 1}"#;
        let r = MatchRecord::from_json(json).unwrap();
        assert_eq!(r.role_names(), ["role0", "role1"]);
        assert_eq!(r.preview_clock, -1.0);
        assert_eq!(r.goal_values, [100, 0]);
        let bad = json.replace(
            r#"[["( mark 1 1 )", "noop"]]"#,
            r#"[["( mark 1 1 )"], ["noop", "noop"]]"#,
        );
        assert!(MatchRecord::from_json(&bad).is_err());
        // Lists that do not fit together are refused, each saying how.
        for (from, to, why) in [
            (
                r#""goalValues": [100, 0]"#,
                r#""goalValues": []"#,
                "a completed match without goal values",
            ),
            (
                r#""goalValues": [100, 0]"#,
                r#""goalValues": [100, 0, 0, 0]"#,
                "4 goal values for 2 roles",
            ),
        ] {
            let bad = json.replace(from, to);
            let e = MatchRecord::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
