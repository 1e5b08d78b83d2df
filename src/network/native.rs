//! The network's full passes compiled to machine code at load (Cranelift).
//!
//! A full pass evaluates every gate of a part of the network in all 64 lanes of a word. Interpreted
//! ([`super::eval_pass`]), each input costs a load of its literal, a shift, a mask made from its
//! negation bit and a load of its node; compiled, the node's offset and the negation are constants of
//! the code, so an input is one load and one AND (or AND-NOT). Greedy playouts, 64-lane batches and
//! every game whose playouts run full passes spend most of their time in these passes.
//!
//! Each part is cut into functions of at most [`GATES_PER_FUNCTION`] gates, so that compiling a large
//! network stays linear in its size; networks of more than [`MAX_INPUTS`] inputs are not compiled
//! (the interpreter serves them). **The interpreter stays the reference**: the network's tests
//! compare both on every corpus game.

use std::sync::{Arc, Mutex, OnceLock};

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use rand::rngs::SmallRng;

use super::ground::NetLit;
use super::{lit_val, NetGame, Part, PassGate};
use crate::game::{nth_set_bit, random_index};

/// The most gates one compiled function evaluates.
pub(crate) const GATES_PER_FUNCTION: usize = 4_000;

/// The most gate inputs, over all parts, that are compiled: beyond this the time to compile outweighs
/// what the passes gain in any playout budget we measured (chess: 491,094 gates).
pub(crate) const MAX_INPUTS: usize = 400_000;

/// The most gate inputs compiled while the game loads: more are compiled on a thread of their own
/// (Cranelift takes about 2 µs an input: Connect Four's 2,193 in 5 ms, reversi's 46,684 in 110 ms).
pub(crate) const INPUTS_COMPILED_AT_LOAD: usize = 10_000;

/// When a game's passes are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compile {
    /// While it loads, however large.
    Now,
    /// While it loads when it is small, on a thread of its own otherwise.
    Background,
}

/// The passes as compiled (`None`: interpreted) and the playout method chosen with them.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) passes: Option<NativePasses>,
    pub(crate) method: super::PlayoutMethod,
}

/// A compiled pass: `vals` points at the node values (one `u64` of lanes per node).
type PassFn = unsafe extern "C" fn(vals: *mut u64);

/// Compiled passes over parts of one network, each as a list of functions run in order.
pub(crate) struct NativePasses {
    parts: Vec<Vec<PassFn>>,
    /// The fewest node values the code may touch (one more than the highest node it reads or writes).
    min_len: usize,
    /// The code's memory, freed when the passes are dropped. In a mutex only so that the passes can be
    /// shared between threads: the module is not touched after compiling.
    module: Mutex<Option<JITModule>>,
}

impl std::fmt::Debug for NativePasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePasses")
            .field("parts", &self.parts.len())
            .field("functions", &self.parts.iter().map(Vec::len).sum::<usize>())
            .finish()
    }
}

impl Drop for NativePasses {
    fn drop(&mut self) {
        if let Some(module) = self.module.get_mut().ok().and_then(Option::take) {
            // SAFETY: the function pointers live in `self.parts`, which is being dropped with
            // `self`; no pass runs while `&mut self` exists.
            unsafe { module.free_memory() };
        }
    }
}

impl NativePasses {
    /// Compiles each of `parts` (gates over `inputs`) for the host machine. `None` when the parts hold
    /// more than [`MAX_INPUTS`] inputs, or when the host has no code generator (the caller interprets
    /// then).
    pub(crate) fn compile(parts: &[&[PassGate]], inputs: &[NetLit]) -> Option<NativePasses> {
        let total: usize = parts
            .iter()
            .flat_map(|p| p.iter())
            .map(|g| (g.end - g.start) as usize)
            .sum();
        if total > MAX_INPUTS {
            return None;
        }
        let mut flags = settings::builder();
        // The code is loads, ANDs and stores in a straight line: Cranelift's optimiser and its
        // backtracking register allocator made it no faster (Connect Four's greedy search 35.6k
        // against 34.7k simulations/s) and took five times as long to compile.
        flags.set("opt_level", "none").ok()?;
        flags.set("regalloc_algorithm", "single_pass").ok()?;
        flags.set("is_pic", "false").ok()?;
        let isa = cranelift_native::builder()
            .ok()?
            .finish(settings::Flags::new(flags))
            .ok()?;
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let config = module.target_config();
        let ptr = config.pointer_type();
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(ptr));
        let mut ctx: Context = module.make_context();
        let mut fctx = FunctionBuilderContext::new();
        let mut ids = Vec::new();
        let mut min_len = 0usize;
        for (p, part) in parts.iter().enumerate() {
            let mut part_ids = Vec::new();
            for (c, chunk) in part.chunks(GATES_PER_FUNCTION).enumerate() {
                let name = format!("pass_{p}_{c}");
                let id = module.declare_function(&name, Linkage::Local, &sig).ok()?;
                ctx.func.signature = sig.clone();
                ctx.func.name = UserFuncName::user(0, id.as_u32());
                let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
                let block = b.create_block();
                b.append_block_params_for_function_params(block);
                b.switch_to_block(block);
                let vals = b.block_params(block)[0];
                let flags = MemFlagsData::trusted();
                for g in chunk {
                    let mut acc = None;
                    for &l in &inputs[g.start as usize..g.end as usize] {
                        let node = (l >> 1) as usize;
                        min_len = min_len.max(node + 1);
                        let v = b.ins().load(types::I64, flags, vals, offset(node)?);
                        acc = Some(match (acc, l & 1 != 0) {
                            (None, false) => v,
                            (None, true) => b.ins().bnot(v),
                            (Some(a), false) => b.ins().band(a, v),
                            (Some(a), true) => b.ins().band_not(a, v),
                        });
                    }
                    let acc = match acc {
                        Some(a) => a,
                        None => b.ins().iconst(types::I64, -1),
                    };
                    let out = if g.negate != 0 {
                        b.ins().bnot(acc)
                    } else {
                        acc
                    };
                    min_len = min_len.max(g.node as usize + 1);
                    b.ins().store(flags, out, vals, offset(g.node as usize)?);
                }
                b.ins().return_(&[]);
                b.seal_all_blocks();
                b.finalize(config);
                module.define_function(id, &mut ctx).ok()?;
                module.clear_context(&mut ctx);
                part_ids.push(id);
            }
            ids.push(part_ids);
        }
        module.finalize_definitions().ok()?;
        let parts = ids
            .iter()
            .map(|part| {
                part.iter()
                    .map(|&id| {
                        let code = module.get_finalized_function(id);
                        // SAFETY: `id` was defined above with the signature of `PassFn` (one pointer
                        // argument, no result, the host's default calling convention).
                        unsafe { std::mem::transmute::<*const u8, PassFn>(code) }
                    })
                    .collect()
            })
            .collect();
        Some(NativePasses {
            parts,
            min_len,
            module: Mutex::new(Some(module)),
        })
    }

    /// Runs part `part` on `vals`; false, with nothing done, when `vals` is shorter than the code
    /// needs or there is no such part.
    #[inline]
    pub(crate) fn run(&self, part: usize, vals: &mut [u64]) -> bool {
        let Some(fns) = self.parts.get(part) else {
            return false;
        };
        if vals.len() < self.min_len {
            return false;
        }
        for f in fns {
            // SAFETY: every load and store of the code is at a node below `min_len <= vals.len()`,
            // 8-byte aligned from `vals`'s start; `vals` is borrowed mutably for the call.
            unsafe { f(vals.as_mut_ptr()) };
        }
        true
    }
}

/// The byte offset of node `node`'s value, when it fits an instruction's offset.
fn offset(node: usize) -> Option<i32> {
    i32::try_from(node.checked_mul(8)?).ok()
}

impl NetGame {
    /// Compiles the passes (at once, or on a thread of their own: see [`Compile`]) and chooses the
    /// playout method: at once with the compiled passes, or now with the interpreter and again on
    /// that thread once they are compiled.
    pub(super) fn compile(&mut self, when: Compile) {
        let inputs = self.pass_inputs();
        if when == Compile::Now || inputs <= INPUTS_COMPILED_AT_LOAD || inputs > MAX_INPUTS {
            self.compile_now();
            return;
        }
        self.method = self.fastest_method();
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
                    let _ = cell.set(compiled.unwrap_or(Compiled {
                        passes: None,
                        method: super::PlayoutMethod::Propagate,
                    }));
                }
            });
        if spawned.is_err() {
            let _ = self.native.set(Compiled {
                passes: None,
                method: self.method,
            });
        }
    }

    /// Compiles the passes here and chooses the playout method with them.
    fn compile_now(&mut self) {
        let (state, moves) = self.pass.split_at(self.pass_state);
        let passes =
            NativePasses::compile(&[state, moves, &self.all_state_gates()], &self.net.inputs);
        self.native = Arc::new(OnceLock::from(Compiled {
            passes,
            method: super::PlayoutMethod::Propagate,
        }));
        self.method = self.fastest_method();
        self.native = Arc::new(OnceLock::from(Compiled {
            passes: Arc::try_unwrap(std::mem::take(&mut self.native))
                .ok()
                .and_then(OnceLock::into_inner)
                .and_then(|c| c.passes),
            method: self.method,
        }));
    }

    /// The inputs of every gate the passes evaluate.
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
            .sum()
    }

    /// Every state gate, in evaluation order, as a pass ([`Part::AllState`]).
    pub(super) fn all_state_gates(&self) -> Vec<PassGate> {
        let n = &self.net;
        (0..n.state_gates)
            .map(|i| PassGate {
                node: (n.first_gate + i) as u32,
                start: n.gates[i].start,
                end: n.gates[i].end,
                negate: n.gates[i].negate,
            })
            .collect()
    }

    /// Whether the full passes now run as machine code (a large network's are compiled on a thread of
    /// their own after it loads: see [`NetGame::wait_compiled`]).
    pub fn is_compiled(&self) -> bool {
        matches!(
            self.native.get(),
            Some(Compiled {
                passes: Some(_),
                ..
            })
        )
    }

    /// Waits until the thread compiling the passes has finished (at once when they were compiled
    /// while the game loaded, or are interpreted); returns whether they run compiled.
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
            self.method = self.fastest_method_interpreted();
            self.native = Arc::new(OnceLock::from(Compiled {
                passes: None,
                method: self.method,
            }));
        }
        self.is_compiled()
    }

    /// [`NetGame::fastest_method`] with the passes interpreted.
    fn fastest_method_interpreted(&mut self) -> super::PlayoutMethod {
        let kept = std::mem::take(&mut self.native);
        let method = self.fastest_method();
        self.native = kept;
        method
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
            Part::State => {
                super::eval_pass(&self.pass[..self.pass_state], &n.inputs, vals, n.num_nodes)
            }
            Part::Moves => {
                super::eval_pass(&self.pass[self.pass_state..], &n.inputs, vals, n.num_nodes)
            }
            Part::AllState => super::eval(&n.gates[..n.state_gates], &n.inputs, vals, n.first_gate),
        }
    }

    /// Checks the compiled passes against the interpreter along `batches` batches of 64 random
    /// playouts of at most `max_steps` moves: at every step each part of the network (the playout's
    /// state part, every state gate, the move gates) is evaluated both ways on the same values, and
    /// every node must agree in every lane, so the legal moves, terminal flag, goals and next states
    /// agree. Returns the number of passes compared (0 when the passes are interpreted), or the first
    /// difference.
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
        ];
        for batch in 0..batches {
            let mut vals = vec![0u64; n.num_nodes];
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
                for legal in &n.legal {
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
                        let o = legal
                            .iter()
                            .filter(|o| lit_val(&vals, o.lit) >> lane & 1 != 0)
                            .nth(k);
                        if let Some(o) = o.filter(|o| o.does != u32::MAX) {
                            vals[o.does as usize] |= 1 << lane;
                        }
                    }
                }
                if alive == 0 {
                    break;
                }
                let (part, what) = parts[2];
                self.compare(native, part, &mut vals)
                    .map_err(|e| format!("batch {batch}, step {step}, {what}: {e}"))?;
                compared += 1;
                let next: Vec<u64> = n.next.iter().map(|&l| lit_val(&vals, l)).collect();
                for (p, v) in next.into_iter().enumerate() {
                    vals[1 + p] = (v & alive) | (vals[1 + p] & !alive);
                }
                for v in &mut vals[1 + n.props.len()..n.first_gate] {
                    *v = 0;
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
            Part::State => super::eval_pass(
                &self.pass[..self.pass_state],
                &n.inputs,
                reference,
                n.num_nodes,
            ),
            Part::Moves => super::eval_pass(
                &self.pass[self.pass_state..],
                &n.inputs,
                reference,
                n.num_nodes,
            ),
            Part::AllState => super::eval(
                &n.gates[..n.state_gates],
                &n.inputs,
                reference,
                n.first_gate,
            ),
        }
        match (0..reference.len()).find(|&i| compiled[i] != reference[i]) {
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
    fn compiled_passes_agree_with_the_interpreter() {
        let g = game(TIC_TAC_TOE);
        assert!(g.is_compiled(), "a small network is compiled");
        let mut rng = SmallRng::seed_from_u64(7);
        let compared = g.check_compiled(&mut rng, 4, 20).expect("agrees");
        assert!(compared > 4 * 3 * 5, "{compared} passes compared");
    }

    #[test]
    fn interpreted_passes_compare_nothing_and_can_be_compiled_again() {
        let mut g = game(TIC_TAC_TOE);
        assert!(!g.set_compiled(false));
        assert!(!g.is_compiled());
        let mut rng = SmallRng::seed_from_u64(7);
        assert_eq!(g.check_compiled(&mut rng, 1, 5), Ok(0));
        assert!(g.set_compiled(true));
        assert!(g.check_compiled(&mut rng, 1, 5).expect("agrees") > 0);
    }

    #[test]
    fn a_wrong_compiled_pass_is_caught() {
        // The move gates compiled as the state gates: a different function, so the check must fail.
        let mut g = game(TIC_TAC_TOE);
        let n = &g.net;
        let (state, _) = g.pass.split_at(g.pass_state);
        let wrong = NativePasses::compile(&[state, state, &g.all_state_gates()], &n.inputs)
            .expect("compiles");
        g.native = Arc::new(OnceLock::from(Compiled {
            passes: Some(wrong),
            method: g.method,
        }));
        let mut rng = SmallRng::seed_from_u64(7);
        let err = g.check_compiled(&mut rng, 1, 20).expect_err("caught");
        assert!(err.contains("the move gates"), "{err}");
    }

    #[test]
    fn networks_past_the_input_limit_are_left_to_the_interpreter() {
        let gate = PassGate {
            node: 2,
            start: 0,
            end: (MAX_INPUTS + 1) as u32,
            negate: 0,
        };
        let inputs = vec![2u32; MAX_INPUTS + 1];
        assert!(NativePasses::compile(&[&[gate]], &inputs).is_none());
    }

    #[test]
    fn a_gate_without_inputs_is_true_and_short_values_are_refused() {
        let gates = [
            PassGate {
                node: 1,
                start: 0,
                end: 0,
                negate: 0,
            },
            PassGate {
                node: 2,
                start: 0,
                end: 1,
                negate: !0,
            },
        ];
        let native = NativePasses::compile(&[&gates], &[2]).expect("compiles");
        let mut vals = vec![0u64, 0, 0b1010];
        assert!(native.run(0, &mut vals));
        // Node 2 reads node 1 (literal 2 = node 1, not negated) and negates: all ones, then none.
        assert_eq!(vals, vec![0, !0, 0]);
        assert!(!native.run(0, &mut [0u64, 0]));
        assert!(!native.run(1, &mut vals));
    }
}
