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
//! (the interpreter serves them). This file knows gates and inputs only; when a game compiles its
//! passes, and the check that they agree with the interpreter, the reference, are in `passes`.

use std::sync::Mutex;

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use super::ground::NetLit;

/// The most gates one compiled function evaluates.
pub(crate) const GATES_PER_FUNCTION: usize = 4_000;

/// The most gate inputs, over all parts, that are compiled: more would take a core for a second or
/// more (about 2 µs an input), and the corpus games that large (chess, othello-comp2007, atariGo_7x7)
/// play by change propagation, not by full passes.
pub(crate) const MAX_INPUTS: usize = 400_000;

/// A gate of a full pass over part of the network: `vals[node] = AND(inputs[start..end]) ^ negate`
/// (an input is a literal: `node << 1 | 1` when it is read negated).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PassGate {
    pub(crate) node: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) negate: u64,
}

impl PassGate {
    /// Gate `g` of `net` (counted from its first gate).
    pub(crate) fn of(net: &super::ground::Grounded, g: usize) -> PassGate {
        let gate = net.gates[g];
        PassGate {
            node: (net.first_gate + g) as u32,
            start: gate.start,
            end: gate.end,
            negate: gate.negate,
        }
    }
}

/// A compiled pass: `vals` points at the node values (one `u64` of lanes per node).
type PassFn = unsafe extern "C" fn(vals: *mut u64);

/// Compiled passes over parts of one network, each as a list of functions run in order.
pub(crate) struct NativePasses {
    parts: Vec<Vec<PassFn>>,
    /// For each part, the fewest node values its code may touch (one more than the highest node it
    /// reads or writes): a part that writes past the network's nodes (the `next` values) does not
    /// keep the others from running on values without that room.
    min_len: Vec<usize>,
    /// Held for the code's memory, freed when the passes are dropped.
    #[allow(dead_code)]
    code: Code,
}

/// Compiled code's memory, freed when it is dropped. In a mutex only so that the code can be shared
/// between threads: the module is not touched after compiling.
struct Code(Mutex<Option<JITModule>>);

impl Code {
    fn new(module: JITModule) -> Code {
        Code(Mutex::new(Some(module)))
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(module) = self.0.get_mut().ok().and_then(Option::take) {
            // SAFETY: the code's function pointers are held only by the value that holds this `Code`,
            // which is being dropped; no compiled function runs while it is dropped (`&mut self`).
            unsafe { module.free_memory() };
        }
    }
}

/// A module that compiles for the host machine, set for code that is mostly loads and stores in a
/// straight line: Cranelift's optimiser and its backtracking register allocator made the passes no
/// faster (Connect Four's greedy search 35.6k against 34.7k simulations/s) and took five times as long
/// to compile. `None` where the host has no code generator.
fn host_module() -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("opt_level", "none").ok()?;
    flags.set("regalloc_algorithm", "single_pass").ok()?;
    flags.set("is_pic", "false").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    Some(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

impl std::fmt::Debug for NativePasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePasses")
            .field("parts", &self.parts.len())
            .field("functions", &self.parts.iter().map(Vec::len).sum::<usize>())
            .finish()
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
        let mut module = host_module()?;
        let config = module.target_config();
        let ptr = config.pointer_type();
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(ptr));
        let mut ctx: Context = module.make_context();
        let mut fctx = FunctionBuilderContext::new();
        let mut ids = Vec::new();
        let mut min_lens = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let mut part_ids = Vec::new();
            let mut min_len = 0usize;
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
            min_lens.push(min_len);
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
            min_len: min_lens,
            code: Code::new(module),
        })
    }

    /// Runs part `part` on `vals`; false, with nothing done, when `vals` is shorter than the code
    /// needs or there is no such part.
    #[inline]
    pub(crate) fn run(&self, part: usize, vals: &mut [u64]) -> bool {
        let (Some(fns), Some(&min_len)) = (self.parts.get(part), self.min_len.get(part)) else {
            return false;
        };
        if vals.len() < min_len {
            return false;
        }
        for f in fns {
            // SAFETY: every load and store of the part's code is at a node below its
            // `min_len <= vals.len()`, 8-byte aligned from `vals`'s start; `vals` is borrowed
            // mutably for the call.
            unsafe { f(vals.as_mut_ptr()) };
        }
        true
    }
}

/// The byte offset of node `node`'s value, when it fits an instruction's offset.
fn offset(node: usize) -> Option<i32> {
    i32::try_from(node.checked_mul(8)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
