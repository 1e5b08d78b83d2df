//! The start-clock probes of [`MctsPlayer`], run in order in one window: the cut-off's
//! ([`super::cutoff`]), the moves' ([`super::moves_probe`]) and the pieces' ([`super::pieces`]), each
//! once a match, and what each one decides for the trees.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{cutoff, moves_probe, pieces, MctsPlayer};
use crate::game::Game;
use crate::players::clock::role_seed;
use crate::players::Player;

/// How many times a probe runs at most in a match: in the start clock and on the first move, say,
/// when the first finds no time.
const MAX_TRIES: u8 = 2;

impl<G: Game> MctsPlayer<G> {
    /// Whether the moves probe has still to run this match: it decides NST and the lookahead per
    /// game, so with both switched on it has nothing to decide.
    pub(super) fn moves_probe_due(&self, game: &G) -> bool {
        self.per_game
            && !(self.nst && self.lookahead)
            && self.moves_probe.is_none()
            && game.move_count() > 0
    }

    /// Runs the probes from `state` until `deadline`, once a match each, when they are on: the
    /// cut-off's in the first half of the time and the moves' in the rest (all of it when the
    /// cut-off's has run or is off).
    pub(super) fn probe_game(&mut self, game: &G, state: &G::State, deadline: Instant) {
        let moves = self.moves_probe_due(game);
        let now = Instant::now();
        let window = deadline.saturating_duration_since(now);
        let half = now + window / 2;
        self.probe_cutoff(game, state, if moves { half } else { deadline });
        if moves && !game.is_terminal(state) {
            self.probe_moves(game, state, deadline);
        }
        // The piece probe comes after the others, in half their window again: the decisions they
        // make keep the time they had without it.
        self.probe_pieces(game, state, Instant::now() + window / 2);
    }

    /// Runs the piece probe from `state` until `deadline`, once a match, when the switch is on and
    /// the game is a two-role game that numbers its propositions.
    fn probe_pieces(&mut self, game: &G, state: &G::State, deadline: Instant) {
        if !(self.pieces || self.captures) || self.material.is_some() || game.is_terminal(state) {
            return;
        }
        if game.info().num_roles() != 2 {
            self.material = Some(None);
            return;
        }
        let candidates = pieces::candidates(&game.base_propositions());
        let mut rng = SmallRng::seed_from_u64(role_seed(self.seed, 0x91ec));
        let probe = pieces::probe(game, state, &candidates, &mut rng, deadline);
        self.probe_tries.pieces += 1;
        if probe.games < pieces::MIN_GAMES
            && !candidates.is_empty()
            && self.probe_tries.pieces < MAX_TRIES
        {
            // No time for it: the next move probes again, once (a game too slow for the probe
            // goes without piece counts rather than spend part of every move on them).
            return;
        }
        self.capture_table = probe
            .material
            .as_ref()
            .filter(|_| self.captures)
            .and_then(|m| game.captures(m.masks()))
            .map(Arc::new);
        if let Some(progress) = &self.progress {
            let seeds = match (probe.material.is_some(), self.pieces) {
                (true, true) => "; their counts seed new nodes",
                _ => "",
            };
            let captures = match (&self.capture_table, self.captures, &probe.material) {
                (Some(t), true, _) => format!(
                    "; playouts take a piece where they can ({} and {} (move, piece) pairs \
                     may capture)",
                    t.len(0),
                    t.len(1)
                ),
                (None, true, Some(_)) => "; the game tells no captures".to_string(),
                _ => String::new(),
            };
            progress(&format!(
                "{}: {}{seeds}{captures}",
                self.name(),
                probe.describe(&game.info().roles)
            ));
        }
        self.material = Some(probe.material.map(Arc::new));
    }

    /// Runs the moves probe from `state` until `deadline` and keeps what it chose.
    fn probe_moves(&mut self, game: &G, state: &G::State, deadline: Instant) {
        let mut rng = SmallRng::seed_from_u64(role_seed(self.seed, 0x0257));
        let probe = moves_probe::probe(game, state, &mut rng, deadline);
        self.probe_tries.moves += 1;
        if probe.games < moves_probe::MIN_GAMES {
            if self.probe_tries.moves < MAX_TRIES {
                return;
            }
            // Out of tries: the switches given decide alone.
            if let Some(progress) = &self.progress {
                progress(&format!(
                    "{}: no time for the moves probe ({} random games in {MAX_TRIES} tries); \
                     playouts as the switches say",
                    self.name(),
                    probe.games
                ));
            }
            self.moves_probe = Some(moves_probe::Chosen {
                nst: self.nst,
                lookahead: self.lookahead,
                greedy: self.greedy,
                leaves: self.leaves,
            });
            return;
        }
        // Guided playouts are not greedy: where the probe finds NST pays it goes first, unless
        // greedy playouts were asked for.
        let nst = self.nst || (probe.nst() && !self.greedy);
        let chosen = moves_probe::Chosen {
            nst,
            lookahead: self.lookahead || probe.lookahead(),
            greedy: self.greedy || (probe.greedy() && !nst),
            leaves: self.leaves || (probe.leaves() && !nst),
        };
        if let Some(progress) = &self.progress {
            progress(&format!("{}: {}", self.name(), probe.describe(chosen)));
        }
        self.moves_probe = Some(chosen);
    }

    /// Runs the cut-off probe from `state` until `deadline`, once a match, when the switch is on.
    fn probe_cutoff(&mut self, game: &G, state: &G::State, deadline: Instant) {
        if !self.cutoff || self.probe.is_some() || game.is_terminal(state) {
            return;
        }
        let mut rng = SmallRng::seed_from_u64(role_seed(self.seed, 0x0c07));
        let mut probe = cutoff::probe(game, state, &mut rng, deadline);
        self.probe_tries.cutoff += 1;
        if probe.games < cutoff::MIN_GAMES {
            // No time for it (a start clock of nothing): the next move probes again, once.
            if self.probe_tries.cutoff < MAX_TRIES {
                return;
            }
            probe.cutoff = None;
        }
        if let Some(progress) = &self.progress {
            progress(&format!("{}: {}", self.name(), probe.describe()));
        }
        self.probe = Some(probe);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::clock::Deadline;
    use crate::players::Ask;
    use std::time::Duration;

    #[test]
    fn a_probe_without_time_is_tried_once_more_and_then_decides_by_the_switches() {
        // A game too slow for its probes (chess at a quarter-second clock) must not spend a fifth of
        // every move on probes that never finish. The deadlines here have passed: no probe plays a game.
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/connect4.gdl");
        let (program, _) = crate::syntax::parse_file(&file).expect("parses");
        let g = crate::network::NetGame::from_program(&program, "connect4").expect("builds");
        let s = g.initial_state();
        let mut p = MctsPlayer::new(1).with_simulation_limit(200);
        let passed = || Deadline::after(Duration::ZERO);
        p.choose(&Ask::new(&g, &s, 0, passed())).unwrap();
        assert_eq!((p.probe, p.moves_probe), (None, None), "tried once");
        p.choose(&Ask::new(&g, &s, 0, passed())).unwrap();
        let probe = p.probe.expect("the cut-off decided");
        assert_eq!((probe.games, probe.cutoff), (0, None));
        assert!(probe.describe().contains("no time"), "{}", probe.describe());
        let chosen = p.moves_probe.expect("the moves probe decided");
        assert_eq!(
            (chosen.nst, chosen.lookahead, chosen.greedy, chosen.leaves),
            (p.nst, p.lookahead, p.greedy, p.leaves)
        );
        // A new match probes afresh.
        p.prepare(&g, 0, Deadline::after(Duration::from_secs(60)))
            .unwrap();
        assert!(p
            .probe
            .is_some_and(|probe| probe.games >= cutoff::MIN_GAMES));
    }
}
