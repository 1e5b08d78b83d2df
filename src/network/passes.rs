//! When a game's full passes are compiled (`native` compiles them), how a pass runs (compiled or
//! interpreted), and the check that the compiled passes leave exactly the interpreter's values.
//!
//! A game's passes are compiled on a thread of their own, which builds a compiled twin of the game,
//! times the playout methods on it, and publishes the passes and the method it chose through the
//! game's `OnceLock`; until then the game plays interpreted, by propagation (the method is chosen
//! once, on the compiled passes), so no load waits for the compiler
//! (Cranelift takes about 2 µs a gate input: Connect Four's 2,193 in 5 ms, reversi's 46,684 in
//! 110 ms, hex's 152,000 in 350 ms; compiling them while the game loaded made small games load up to
//! half as slow again). A network too large to compile (over `MAX_INPUTS` gate inputs) gets the same
//! thread, which only times the methods on the interpreter.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::native::{self, NativePasses, Op, PassGate, MAX_INPUTS};
use super::steps::{MoveStep, TurnStep, NO_STEP};
use super::*;
use crate::game::{nth_set_bit, random_index};

impl NetGame {
    /// Compiles the passes (here, on a thread of their own, or never: see [`Compile`]) and chooses
    /// the playout method by timing both on the passes the game will run: here, or on that thread
    /// once they are compiled (the game propagates until then).
    pub(super) fn compile(&mut self, when: Compile) {
        if when == Compile::Never {
            self.interpreted_for_good();
            return;
        }
        if when == Compile::Now {
            self.compile_now();
            return;
        }
        // Until the compiling thread has timed both methods on the compiled passes, the game
        // propagates: timing them here on the interpreter took up to 40 ms of every load for a
        // choice that is made again a moment later. A network too large to compile is timed there
        // too, interpreted: here, the two timings took 90-120 ms of its load (chess, atariGo_7x7,
        // othelloSuicide), about half of atariGo's.
        self.method = PlayoutMethod::Propagate;
        let interpreted = self.method;
        let cell = Arc::downgrade(&self.native);
        let net = self.net.clone();
        let name = self.info.name.clone();
        let spawned = std::thread::Builder::new()
            .name("ggp-compile".into())
            .spawn(move || {
                // A twin of the game, compiled, times the playout methods with the compiled passes.
                let twin = std::panic::catch_unwind(|| {
                    NetGame::from_grounded_compiling(net, &name, Compile::Now).ok()
                });
                let compiled = twin
                    .ok()
                    .flatten()
                    .and_then(|twin| Arc::try_unwrap(twin.native).ok())
                    .and_then(OnceLock::into_inner);
                if let Some(cell) = cell.upgrade() {
                    // Whatever happened, the cell is set, so that `wait_compiled` returns.
                    let _ =
                        cell.set(compiled.unwrap_or_else(|| {
                            Compiled::interpreted(interpreted, StepWay::UNTIMED)
                        }));
                }
            });
        if spawned.is_err() {
            let _ = self
                .native
                .set(Compiled::interpreted(self.method, StepWay::UNTIMED));
        }
    }

    /// Compiles the passes here and chooses the playout method with them.
    fn compile_now(&mut self) {
        if self.pass_inputs() > MAX_INPUTS {
            // Too large to compile: the passes are not built, only the method chosen.
            self.interpreted_for_good();
            return;
        }
        let (state, moves) = self.pass.split_at(self.pass_state);
        let mut inputs = self.net.inputs.clone();
        let next = self.next_gates(&self.net.next, None, &mut inputs);
        let budget = MAX_INPUTS.saturating_sub(self.pass_inputs());
        let (move_steps, steps) = self.move_steps(&mut inputs, budget);
        let passes = [state, moves, &self.all_state_gates(), &next].map(native::ops);
        let mut parts: Vec<&[Op]> = passes.iter().map(Vec::as_slice).collect();
        // The specialised steps are the parts after `Part`'s.
        let steps = steps
            .into_iter()
            .map(|role| {
                role.into_iter()
                    .map(|k| match k.part {
                        NO_STEP => k,
                        part => MoveStep {
                            part: part + parts.len() as u32,
                            ..k
                        },
                    })
                    .collect()
            })
            .collect();
        parts.extend(move_steps.iter().map(Vec::as_slice));
        let passes = NativePasses::compile(&parts, &inputs);
        let steps = if passes.is_some() { steps } else { Vec::new() };
        self.native = Arc::new(OnceLock::from(Compiled {
            passes,
            method: PlayoutMethod::Propagate,
            way: StepWay::UNTIMED,
            batch_speedup: None,
            steps,
        }));
        let way;
        (self.method, way) = self.fastest_method();
        let batch_speedup = self.is_compiled().then(|| self.batch_speedup_now());
        let compiled = Arc::try_unwrap(std::mem::take(&mut self.native))
            .ok()
            .and_then(OnceLock::into_inner);
        let (passes, steps) = compiled.map_or((None, Vec::new()), |c| (c.passes, c.steps));
        self.native = Arc::new(OnceLock::from(Compiled {
            passes,
            method: self.method,
            way,
            batch_speedup,
            steps,
        }));
    }

    /// Times random playouts from the initial state one at a time (by the chosen method) and 64 at
    /// once, on the same probe as [`NetGame::fastest_method`], and returns how many times as many
    /// playouts a second the batch plays. Rounds alternate and each keeps its best time (another
    /// process can only slow a round down); about 6 ms in all.
    fn batch_speedup_now(&self) -> f64 {
        const ROUNDS: usize = 3;
        const ROUND: Duration = Duration::from_millis(1);
        let start = self.initial_state();
        let steps = self.probe_steps();
        let mut rng = SmallRng::seed_from_u64(0x6a7c);
        let mut best = [f64::INFINITY; 2];
        for _ in 0..ROUNDS {
            for (k, best) in best.iter_mut().enumerate() {
                let (mut playouts, began) = (0u32, Instant::now());
                while began.elapsed() < ROUND && playouts < 64_000 {
                    playouts += if k == 0 {
                        self.random_playout_with(self.method, &start, &mut rng, steps);
                        1
                    } else {
                        self.batch_playouts_from(&start, &mut rng, 64, steps, &mut [])
                            .0
                    };
                }
                *best = best.min(began.elapsed().as_secs_f64() / f64::from(playouts.max(1)));
            }
        }
        best[0] / best[1].max(f64::MIN_POSITIVE)
    }

    /// The inputs of every gate the passes evaluate (each proposition's `next` one).
    fn pass_inputs(&self) -> usize {
        let n = &self.net;
        self.pass
            .iter()
            .map(|g| (g.end - g.start) as usize)
            .chain(
                n.gates[..n.state_gates]
                    .iter()
                    .map(|g| (g.end - g.start) as usize),
            )
            .sum::<usize>()
            + n.next.len()
    }

    /// Every state gate, in evaluation order, as a pass ([`Part::AllState`]).
    pub(super) fn all_state_gates(&self) -> Vec<PassGate> {
        (0..self.net.state_gates)
            .map(|g| PassGate::of(&self.net, g))
            .collect()
    }

    /// Whether the full passes now run as machine code (they are compiled on a thread of their own
    /// after the game loads: see [`NetGame::wait_compiled`]).
    pub fn is_compiled(&self) -> bool {
        matches!(
            self.native.get(),
            Some(Compiled {
                passes: Some(_),
                ..
            })
        )
    }

    /// Waits until the thread compiling the passes has finished (at once when they are compiled
    /// already, or interpreted); returns whether they run compiled.
    pub fn wait_compiled(&self) -> bool {
        matches!(
            self.native.wait(),
            Compiled {
                passes: Some(_),
                ..
            }
        )
    }

    /// Runs the full passes as machine code (`true`, the default where the network is small enough to
    /// compile) or interpreted (`false`, the reference): both give the same values. Compiles the
    /// passes here when they are not yet compiled, and chooses the playout method again (a full pass
    /// costs more interpreted); returns whether the passes now run compiled.
    pub fn set_compiled(&mut self, compiled: bool) -> bool {
        if compiled {
            if !self.wait_compiled() {
                self.compile_now();
            }
        } else {
            self.interpreted_for_good();
        }
        self.is_compiled()
    }

    /// Settles the game on interpreted passes: the playout method chosen by timing them, and no
    /// passes compiled.
    fn interpreted_for_good(&mut self) {
        let way;
        (self.method, way) = self.fastest_method_interpreted();
        self.native = Arc::new(OnceLock::from(Compiled::interpreted(self.method, way)));
    }

    /// [`NetGame::fastest_method`] with the passes interpreted.
    fn fastest_method_interpreted(&mut self) -> (PlayoutMethod, StepWay) {
        let kept = std::mem::take(&mut self.native);
        let chosen = self.fastest_method();
        self.native = kept;
        chosen
    }

    /// Evaluates `part` of the network on `vals` in every lane, compiled where it is.
    #[inline]
    pub(super) fn run_pass(&self, part: Part, vals: &mut [u64]) {
        if let Some(Compiled {
            passes: Some(native),
            ..
        }) = self.native.get()
        {
            if native.run(part as usize, vals) {
                return;
            }
        }
        let n = &self.net;
        match part {
            Part::State => eval_pass(&self.pass[..self.pass_state], &n.inputs, vals, n.num_nodes),
            Part::Moves => eval_pass(&self.pass[self.pass_state..], &n.inputs, vals, n.num_nodes),
            Part::AllState => eval(&n.gates[..n.state_gates], &n.inputs, vals, n.first_gate),
            Part::Next => self.eval_next(vals),
        }
    }

    /// [`Part::Next`] interpreted: every `next` read before any proposition is written.
    fn eval_next(&self, vals: &mut [u64]) {
        let n = &self.net;
        let np = n.props.len();
        for (p, l) in n.next.iter().enumerate() {
            let v = lit_val(vals, *l);
            vals[n.num_nodes + p] = v;
        }
        vals.copy_within(n.num_nodes..n.num_nodes + np, 1);
        for v in &mut vals[1 + np..n.first_gate] {
            *v = 0;
        }
    }

    /// The compiled step specialised to output `output` of `role`'s legal outputs, run on `vals`:
    /// whether it evaluated the playout's state part too (the move's cone), or `None`, with nothing
    /// done, when there is no such step (the caller plays the general step).
    #[inline]
    pub(super) fn run_move_step(
        &self,
        vals: &mut [u64],
        role: usize,
        output: usize,
    ) -> Option<bool> {
        let Some(Compiled {
            passes: Some(native),
            steps,
            ..
        }) = self.native.get()
        else {
            return None;
        };
        match steps.get(role).and_then(|s| s.get(output)) {
            Some(k) if k.part != NO_STEP && native.run(k.part as usize, vals) => Some(k.state),
            _ => None,
        }
    }

    /// Checks the compiled passes against the interpreter along `batches` batches of 64 random
    /// playouts of at most `max_steps` moves: at every step each part of the network (the playout's
    /// state part, every state gate, the move gates, the step to the next state) is evaluated both
    /// ways on the same values, and every node must agree in every lane, so the legal moves,
    /// terminal flag, goals and next states agree; and the step specialised to each move drawn in
    /// the first live lane must leave that lane's next state as the general step does. Returns the
    /// number of passes compared (0 when the passes are interpreted), or the first difference.
    pub fn check_compiled(
        &self,
        rng: &mut SmallRng,
        batches: u32,
        max_steps: u32,
    ) -> Result<u64, String> {
        let Some(Compiled {
            passes: Some(native),
            ..
        }) = self.native.get()
        else {
            return Ok(0);
        };
        let n = &self.net;
        let mut compared = 0;
        let parts = [
            (Part::State, "the playout's state part"),
            (Part::AllState, "every state gate"),
            (Part::Moves, "the move gates"),
            (Part::Next, "each proposition's next"),
        ];
        let np = n.props.len();
        for batch in 0..batches {
            // Room past the nodes for the `next` values.
            let mut vals = vec![0u64; n.num_nodes + np];
            for &p in &n.initial {
                vals[1 + p as usize] = !0;
            }
            let mut alive = !0u64;
            for step in 0..max_steps {
                for &(part, what) in &parts[..2] {
                    self.compare(native, part, &mut vals)
                        .map_err(|e| format!("batch {batch}, step {step}, {what}: {e}"))?;
                    compared += 1;
                }
                alive &= !lit_val(&vals, n.terminal);
                // The moves drawn in the first live lane, whose specialised steps are checked.
                let watch = alive.trailing_zeros();
                let mut turn = TurnStep::default();
                for (r, legal) in n.legal.iter().enumerate() {
                    let mut lanes = alive;
                    while lanes != 0 {
                        let lane = lanes.trailing_zeros();
                        lanes &= lanes - 1;
                        let count = legal
                            .iter()
                            .filter(|o| lit_val(&vals, o.lit) >> lane & 1 != 0)
                            .count();
                        if count == 0 {
                            alive &= !(1 << lane);
                            continue;
                        }
                        let k = random_index(rng, count);
                        let drawn = legal
                            .iter()
                            .enumerate()
                            .filter(|(_, o)| lit_val(&vals, o.lit) >> lane & 1 != 0)
                            .nth(k);
                        if let Some((j, o)) = drawn {
                            if lane == watch {
                                turn.add(r, j, self.noop_out[r]);
                            }
                            if o.does != u32::MAX {
                                vals[o.does as usize] |= 1 << lane;
                            }
                        }
                    }
                }
                if alive == 0 {
                    break;
                }
                // The step of the joint move drawn there, when it has one.
                if alive >> watch & 1 != 0 {
                    if let Some((r, j)) = turn.step() {
                        let mut one = vals.clone();
                        super::playout::broadcast(&mut one[..n.num_nodes], watch);
                        let mut reference = one.clone();
                        eval_pass(
                            &self.pass[self.pass_state..],
                            &n.inputs,
                            &mut reference,
                            n.num_nodes,
                        );
                        self.eval_next(&mut reference);
                        if let Some(state_too) = self.run_move_step(&mut one, r, j) {
                            compared += 1;
                            // The state and the inputs, and the state part when the step evaluates
                            // its cone; move gates a step folded away are not written.
                            let mut nodes: Vec<usize> = (1..n.first_gate).collect();
                            if state_too {
                                let state = &self.pass[..self.pass_state];
                                eval_pass(state, &n.inputs, &mut reference, n.num_nodes);
                                nodes.extend(state.iter().map(|g| g.node as usize));
                            }
                            let differs = nodes.into_iter().find(|&i| one[i] != reference[i]);
                            if let Some(node) = differs {
                                return Err(format!(
                                    "batch {batch}, step {step}, the step specialised to role \
                                     {r}'s legal output {j}: node {node} is {:#018x} compiled and \
                                     {:#018x} by the general step interpreted",
                                    one[node], reference[node]
                                ));
                            }
                        }
                    }
                }
                let before = vals[1..=np].to_vec();
                for &(part, what) in &parts[2..] {
                    self.compare(native, part, &mut vals)
                        .map_err(|e| format!("batch {batch}, step {step}, {what}: {e}"))?;
                    compared += 1;
                }
                // Finished lanes keep their state.
                for (v, old) in vals[1..=np].iter_mut().zip(before) {
                    *v = (*v & alive) | (old & !alive);
                }
            }
        }
        Ok(compared)
    }

    /// Runs `part` compiled and interpreted on copies of `vals`, which takes the interpreter's values.
    fn compare(&self, native: &NativePasses, part: Part, vals: &mut [u64]) -> Result<(), String> {
        let mut compiled = vals.to_vec();
        if !native.run(part as usize, &mut compiled) {
            return Err("the compiled code did not run".into());
        }
        let n = &self.net;
        let reference: &mut [u64] = vals;
        match part {
            Part::State => eval_pass(
                &self.pass[..self.pass_state],
                &n.inputs,
                reference,
                n.num_nodes,
            ),
            Part::Moves => eval_pass(
                &self.pass[self.pass_state..],
                &n.inputs,
                reference,
                n.num_nodes,
            ),
            Part::AllState => eval(
                &n.gates[..n.state_gates],
                &n.inputs,
                reference,
                n.first_gate,
            ),
            Part::Next => self.eval_next(reference),
        }
        // Past the nodes is scratch (the compiled step parks there only what it must).
        let nodes = reference.len().min(n.num_nodes);
        match (0..nodes).find(|&i| compiled[i] != reference[i]) {
            None => Ok(()),
            Some(node) => Err(format!(
                "node {node} is {:#018x} compiled and {:#018x} interpreted (lane {})",
                compiled[node],
                reference[node],
                nth_set_bit(compiled[node] ^ reference[node], 0)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn game(src: &str) -> NetGame {
        let program = crate::syntax::parse_infix(src).expect("parses");
        NetGame::from_program(&program, "test").expect("grounds")
    }

    const TIC_TAC_TOE: &str = include_str!("../../games/tictactoe.gdl");

    #[test]
    fn a_role_without_any_move_stops_a_batch_instead_of_panicking() {
        // b has no legal move in any state: its batch timing, on the compiling thread, must end.
        let program = crate::syntax::parse_kif(
            "(role a) (role b) (init (step 1)) (<= (legal a go) (true (step 1))) \
             (<= (next (step 2)) (true (step 1))) (<= terminal (true (step 2))) \
             (<= (goal a 50) (true (step 2))) (<= (goal b 50) (true (step 2)))",
        )
        .expect("parses");
        let g = NetGame::from_program(&program, "nolegal").expect("grounds");
        assert!(g.wait_compiled(), "the compiling thread finished");
        assert!(g.batch_speedup().is_some());
        let mut rng = SmallRng::seed_from_u64(7);
        let (lanes, steps) = g.batch_playouts_from(&g.initial_state(), &mut rng, 64, 10, &mut []);
        assert_eq!((lanes, steps), (64, 0), "every lane stops at once");
    }

    #[test]
    fn compiled_passes_agree_with_the_interpreter() {
        let g = game(TIC_TAC_TOE);
        assert!(g.wait_compiled(), "the network is compiled");
        assert!(g.is_compiled());
        let mut rng = SmallRng::seed_from_u64(7);
        let compared = g.check_compiled(&mut rng, 4, 20).expect("agrees");
        assert!(compared > 4 * 3 * 5, "{compared} passes compared");
    }

    #[test]
    fn interpreted_passes_compare_nothing_and_can_be_compiled_again() {
        let mut g = game(TIC_TAC_TOE);
        assert!(!g.set_compiled(false));
        assert!(!g.is_compiled());
        assert_eq!(g.batch_speedup(), None, "measured only on compiled passes");
        let mut rng = SmallRng::seed_from_u64(7);
        assert_eq!(g.check_compiled(&mut rng, 1, 5), Ok(0));
        assert!(g.set_compiled(true));
        assert!(g.check_compiled(&mut rng, 1, 5).expect("agrees") > 0);
        let speedup = g.batch_speedup();
        assert!(
            speedup.is_some_and(|x| x.is_finite() && x > 0.0),
            "{speedup:?}"
        );
    }

    #[test]
    fn a_wrong_compiled_pass_is_caught() {
        // The move gates compiled as the state gates: a different function, so the check must fail.
        let mut g = game(TIC_TAC_TOE);
        let n = &g.net;
        let (state, _) = g.pass.split_at(g.pass_state);
        let wrong = [state, state, &g.all_state_gates()].map(native::ops);
        let wrong = NativePasses::compile(&wrong.each_ref().map(Vec::as_slice), &n.inputs)
            .expect("compiles");
        g.native = Arc::new(OnceLock::from(Compiled {
            passes: Some(wrong),
            method: g.method,
            way: StepWay::UNTIMED,
            batch_speedup: None,
            steps: Vec::new(),
        }));
        let mut rng = SmallRng::seed_from_u64(7);
        let err = g.check_compiled(&mut rng, 1, 20).expect_err("caught");
        assert!(err.contains("the move gates"), "{err}");
    }
}
