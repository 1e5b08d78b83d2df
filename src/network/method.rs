//! How playouts run, chosen by timing both: on the thread that compiles the passes (the game
//! propagates until then), or at load where the passes run interpreted: a full pass or change
//! propagation
//! ([`PlayoutMethod`]), and how propagation plays a step ([`StepWay`]): a turn by its writes
//! ([`NetGame::turns_by_writes`]), and whether a step's joint move is taken back
//! ([`NetGame::step_undo`]).

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{NetGame, PlayoutMethod, StepWay};
use crate::game::Game;

impl NetGame {
    /// The way [`Game::random_playout`] evaluates the network: propagation until the thread that
    /// compiles the full passes has timed both ways (timed at load where the passes run
    /// interpreted), unless [`NetGame::set_playout_method`] chose it.
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

    /// Times the playout methods on the same random playouts from the initial state (at most 1000
    /// moves a playout, fewer in a large network: see `probe_steps`) and returns the fastest:
    /// change propagation wins when a move changes a small part of the network, a full pass when a
    /// move changes much of it. Propagation is timed three ways first:
    ///
    /// - With turns played by their writes and without, where some turns have writes (see
    ///   `turn_writes`), the faster kept: writes made speedChess's playouts 1.1 times as fast and
    ///   sudokuGrade1's twice, but chineseCheckers6's half as fast (its moves' seven writes cost
    ///   more than their way through the move part) and wallmaze's 0.82 times, and no count tells
    ///   the games apart.
    /// - Where some turns are still played the long way, with each step's joint move taken back and
    ///   left set (see [`NetGame::step_undo`]): taking it back wins by 5% or more where a move's
    ///   effects fan out widely (hex, whose placements reach a reader for every step of the game:
    ///   1.6 to 2 times as fast; reversi 1.05 times), and the two are even where a move reaches few
    ///   readers (speedChess), the move then left set as before.
    ///
    /// The timing is made robust against a busy machine: the ways alternate in short rounds on the
    /// same playouts, the first round only warms the code up, each way keeps its best round after
    /// it (another process can only slow a round down), and the full pass must win by 10% (a wrong
    /// choice then costs at most that): with a step and cone compiled for each move, Connect Four's
    /// passes are about 1.3 times as fast as propagation, and the 20% asked before left the choice to
    /// the machine's noise. About 10-40 ms a timing, up to three timings.
    pub(super) fn fastest_method(&self) -> (PlayoutMethod, StepWay) {
        // Propagation finds its turns' writes at its first playout: not inside a timed round.
        let turns = self.turn_writes.get_or_init(|| self.turn_writes());
        let left_set = |writes| StepWay {
            writes,
            undo: false,
        };
        // Each way timed on its own, the ways of each timing taking turns to go first: timed beside
        // the full passes, the way that ran after another propagation found the caches warm, and
        // reversi's propagation then came within the margin of its full passes, which run 1.15
        // times as fast.
        let writes = !turns.is_empty() && {
            let [by_writes, long] = self.time_playouts(
                [
                    (PlayoutMethod::Propagate, left_set(true)),
                    (PlayoutMethod::Propagate, left_set(false)),
                ],
                true,
            );
            by_writes <= long
        };
        let undo = !(writes && turns.every_turn) && {
            let [kept, undone] = self.time_playouts(
                [
                    (PlayoutMethod::Propagate, left_set(writes)),
                    (PlayoutMethod::Propagate, StepWay { writes, undo: true }),
                ],
                true,
            );
            undone * 1.05 < kept
        };
        let way = StepWay { writes, undo };
        let [passes, propagated] = self.time_playouts(
            [
                (PlayoutMethod::FullPass, way),
                (PlayoutMethod::Propagate, way),
            ],
            false,
        );
        let method = if passes * 1.1 < propagated {
            PlayoutMethod::FullPass
        } else {
            PlayoutMethod::Propagate
        };
        (method, way)
    }

    /// The best time of a random playout from the initial state each way (a method, and how its
    /// steps are played), the ways alternating on the same runs of playouts, each run's first way
    /// the next in turn when `rotate` (else always the first): see [`NetGame::fastest_method`].
    fn time_playouts<const N: usize>(
        &self,
        ways: [(PlayoutMethod, StepWay); N],
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
        let (mut seed, mut turn) = (0u64, 0usize);
        // Playouts timed together, one timer read for the lot: a read costs tens of nanoseconds,
        // a playout of a tiny game a few hundred, and timed one by one, ruleDepthLinear's full
        // passes (1.18 times as fast as its propagation) came within the 10% margin in half of its
        // loads. Set after the first round to about 10 µs of playouts.
        let mut run = 1u64;
        for round in 0..ROUNDS {
            // One round: the same playouts each way, for about 1.5 ms of the last way.
            let mut count = 0u64;
            let mut spent = [Duration::ZERO; N];
            while spent[N - 1] < Duration::from_micros(1500) && count < 1000 {
                for i in 0..N {
                    let k = if rotate { (i + turn) % N } else { i };
                    let (method, way) = ways[k];
                    let t = Instant::now();
                    for seed in seed..seed + run {
                        let mut rng = SmallRng::seed_from_u64(seed);
                        self.random_playout_by(method, way, &start, &mut rng, probe_steps);
                    }
                    spent[k] += t.elapsed();
                }
                seed += run;
                turn += 1;
                count += run;
            }
            if round == 0 {
                let fastest = spent.iter().min().copied().unwrap_or_default() / count as u32;
                run = (Duration::from_micros(10).as_nanos() / fastest.as_nanos().max(1))
                    .clamp(1, 64) as u64;
                // (A network whose one round takes the whole time counts it.)
                if began.elapsed() < Duration::from_millis(40) {
                    continue;
                }
            }
            for k in 0..N {
                best[k] = best[k].min(spent[k].as_secs_f64() / count as f64);
            }
            if began.elapsed() > Duration::from_millis(40) {
                break;
            }
        }
        best
    }

    /// How propagating playouts play a step: as chosen with the playout method (see
    /// [`NetGame::fastest_method`]; until then [`StepWay::UNTIMED`]), unless
    /// [`NetGame::set_step_undo`] or [`NetGame::set_turns_by_writes`] chose.
    pub(super) fn step_way(&self) -> StepWay {
        let timed = self.native.get().map_or(StepWay::UNTIMED, |c| c.way);
        StepWay {
            writes: self.writes_fixed.unwrap_or(timed.writes),
            undo: self.undo_fixed.unwrap_or(timed.undo),
        }
    }

    /// Whether propagating playouts take each step's joint move back by putting back the words it
    /// wrote, instead of leaving it set until the next step's moves replace it: chosen with the
    /// playout method (see [`NetGame::fastest_method`]; until then, left set), unless
    /// [`NetGame::set_step_undo`] chose it.
    pub fn step_undo(&self) -> bool {
        self.step_way().undo
    }

    /// Chooses whether propagating playouts take each step's joint move back (see
    /// [`NetGame::step_undo`]); the playouts stay the same either way.
    pub fn set_step_undo(&mut self, took_back: bool) {
        self.undo_fixed = Some(took_back);
    }

    /// Whether propagating playouts play a turn whose writes are known by them (the propositions it
    /// sets, each to a literal the state part keeps), rather than through the move part: chosen with
    /// the playout method (see [`NetGame::fastest_method`]; until then, by their writes), unless
    /// [`NetGame::set_turns_by_writes`] chose it. A single next state (`Game::next_state`) is always
    /// read off a turn's writes where they are known: it propagates nothing either way.
    pub fn turns_by_writes(&self) -> bool {
        self.step_way().writes
    }

    /// Chooses whether propagating playouts play a turn by its writes where they are known (see
    /// [`NetGame::turns_by_writes`]); the playouts stay the same either way.
    pub fn set_turns_by_writes(&mut self, by_writes: bool) {
        self.writes_fixed = Some(by_writes);
    }

    /// The moves of a probe's playout. A playout of a network with half a million gates (chess)
    /// takes most of a second: probe the first moves only, about as many gate evaluations as 1000
    /// moves of a 2,000-gate game (four moves of chess: a full pass then does four times the work of
    /// the first step, which both methods share).
    pub(super) fn probe_steps(&self) -> u32 {
        (2_000_000 / self.net.gates.len().max(1)).clamp(4, 1000) as u32
    }
}
