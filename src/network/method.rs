//! How playouts run, chosen at load by timing: a full pass or change propagation
//! ([`PlayoutMethod`]), and whether propagation takes each step's joint move back
//! ([`NetGame::step_undo`]).

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{NetGame, PlayoutMethod};
use crate::game::Game;

impl NetGame {
    /// The way [`Game::random_playout`] evaluates the network: chosen at load, and again once the
    /// full passes are compiled, unless [`NetGame::set_playout_method`] chose it.
    #[inline]
    pub fn playout_method(&self) -> PlayoutMethod {
        match self.native.get() {
            Some(c) if !self.method_fixed => c.method,
            _ => self.method,
        }
    }

    /// Chooses how [`Game::random_playout`] evaluates the network (the playouts stay the same).
    pub fn set_playout_method(&mut self, method: PlayoutMethod) {
        self.method = method;
        self.method_fixed = true;
    }

    /// Times both playout methods on the same random playouts from the initial state (at most 1000
    /// moves a playout, fewer in a large network: see `probe_steps`) and returns the faster: change
    /// propagation wins when a move changes a small part of the network, a full pass when a move
    /// changes much of it. Where some turns are not played by their writes alone, propagation is timed
    /// both ways of taking a step's joint move back (see [`NetGame::step_undo`]), and the second value
    /// says whether putting back the words it wrote was the faster by 5% or more: it wins where a
    /// move's effects fan out widely (hex, whose placements reach a reader for every step of the
    /// game: 1.6 to 2 times as fast; reversi 1.05 times), and the two are even where a move reaches
    /// few readers (speedChess), the move then left set as before.
    ///
    /// The timing is made robust against a busy machine: the methods alternate in short rounds on the
    /// same playouts, the first round only warms the code up, each method keeps its best round after
    /// it (another process can only slow a round down), and the full pass must win by 10% (a wrong
    /// choice then costs at most that): with a step and cone compiled for each move, Connect Four's
    /// passes are about 1.3 times as fast as propagation, and the 20% asked before left the choice to
    /// the machine's noise. About 10-40 ms in all.
    pub(super) fn fastest_method(&self) -> (PlayoutMethod, bool) {
        // Propagation finds its turns' writes at its first playout: not inside a timed round.
        let long_steps = !self
            .turn_writes
            .get_or_init(|| self.turn_writes())
            .every_turn;
        let [passes, kept] = self.time_playouts(
            [
                (PlayoutMethod::FullPass, false),
                (PlayoutMethod::Propagate, false),
            ],
            false,
        );
        let method = if passes * 1.1 < kept {
            PlayoutMethod::FullPass
        } else {
            PlayoutMethod::Propagate
        };
        // Timed on their own: timed beside the full passes, the way that ran after the other
        // propagation found the caches warm, and reversi's propagation then came within the margin
        // of its full passes, which run 1.15 times as fast.
        let undo = long_steps && {
            let [kept, undone] = self.time_playouts(
                [
                    (PlayoutMethod::Propagate, false),
                    (PlayoutMethod::Propagate, true),
                ],
                true,
            );
            undone * 1.05 < kept
        };
        (method, undo)
    }

    /// The best time of a random playout from the initial state each way (a method, and whether its
    /// steps are taken back), the ways alternating on the same playouts, each playout's first way the
    /// next in turn when `rotate` (else always the first): see [`NetGame::fastest_method`].
    fn time_playouts<const N: usize>(
        &self,
        ways: [(PlayoutMethod, bool); N],
        rotate: bool,
    ) -> [f64; N] {
        // The first round warms the code up and is not counted: reversi's compiled steps (130 of
        // them) ran their first playouts 1.5 to 2 times as slowly as their fourth, which left the
        // full pass within the 10% margin in 1 load of 3 though it plays 1.6 times as fast.
        const ROUNDS: usize = 10;
        let start = self.initial_state();
        let mut best = [f64::INFINITY; N];
        let began = Instant::now();
        let probe_steps = self.probe_steps();
        let mut seed = 0u64;
        for round in 0..ROUNDS {
            // One round: the same playouts each way, for about 1.5 ms of the last way.
            let mut count = 0u32;
            let mut spent = [Duration::ZERO; N];
            while spent[N - 1] < Duration::from_micros(1500) && count < 1000 {
                for i in 0..N {
                    let k = if rotate { (i + seed as usize) % N } else { i };
                    let (method, undo) = ways[k];
                    let mut rng = SmallRng::seed_from_u64(seed);
                    let t = Instant::now();
                    self.random_playout_by(method, undo, &start, &mut rng, probe_steps);
                    spent[k] += t.elapsed();
                }
                seed += 1;
                count += 1;
            }
            // (A network whose one round takes the whole time counts it.)
            if round == 0 && began.elapsed() < Duration::from_millis(40) {
                continue;
            }
            for k in 0..N {
                best[k] = best[k].min(spent[k].as_secs_f64() / f64::from(count));
            }
            if began.elapsed() > Duration::from_millis(40) {
                break;
            }
        }
        best
    }

    /// Whether propagating playouts take each step's joint move back by putting back the words it
    /// wrote, instead of leaving it set until the next step's moves replace it: chosen with the
    /// playout method (see [`NetGame::fastest_method`]; until then, left set), unless
    /// [`NetGame::set_step_undo`] chose it.
    pub fn step_undo(&self) -> bool {
        self.undo_fixed
            .unwrap_or_else(|| self.native.get().is_some_and(|c| c.step_undo))
    }

    /// Chooses whether propagating playouts take each step's joint move back (see
    /// [`NetGame::step_undo`]); the playouts stay the same either way.
    pub fn set_step_undo(&mut self, took_back: bool) {
        self.undo_fixed = Some(took_back);
    }

    /// The moves of a probe's playout. A playout of a network with half a million gates (chess)
    /// takes most of a second: probe the first moves only, about as many gate evaluations as 1000
    /// moves of a 2,000-gate game (four moves of chess: a full pass then does four times the work of
    /// the first step, which both methods share).
    pub(super) fn probe_steps(&self) -> u32 {
        (2_000_000 / self.net.gates.len().max(1)).clamp(4, 1000) as u32
    }
}
