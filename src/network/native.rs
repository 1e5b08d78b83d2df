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
//! (the interpreter serves them). A part may also hold guards ([`Op::Guard`]): the instructions after
//! one run only when a node it tests is non-zero, which a [`Op::Tracked`] gate sets to the lanes where
//! it changed its node (the specialised steps skip the parts of their cones that nothing changed).
//! This file knows instructions over inputs only; when a game compiles its
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

/// One instruction of a compiled part: a gate, a gate that also records where it changed its node, or a
/// guard that skips the instructions after it when what they read did not change.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// `vals[node] = AND(inputs) ^ negate`.
    Gate(PassGate),
    /// The gate, and `vals[changed]` set to the lanes where it changed `vals[node]`'s value.
    Tracked {
        /// The gate.
        gate: PassGate,
        /// Where the changed lanes go.
        changed: u32,
    },
    /// The next `len` instructions (none of them a guard) run only when a node of `inputs[start..end]`
    /// (read as literals) is non-zero in some lane.
    Guard {
        /// The first of the nodes read.
        start: u32,
        /// One past the last.
        end: u32,
        /// How many instructions it guards.
        len: u32,
    },
}

impl Op {
    /// The gate it evaluates, if it is one.
    #[cfg(test)]
    pub(crate) fn gate(&self) -> Option<PassGate> {
        match *self {
            Op::Gate(g) | Op::Tracked { gate: g, .. } => Some(g),
            Op::Guard { .. } => None,
        }
    }

    /// How many inputs it reads (a guard: the nodes it tests).
    fn inputs(&self) -> usize {
        match self {
            Op::Gate(g) | Op::Tracked { gate: g, .. } => (g.end - g.start) as usize,
            Op::Guard { start, end, .. } => (end - start) as usize,
        }
    }
}

/// `gates` as instructions.
pub(crate) fn ops(gates: &[PassGate]) -> Vec<Op> {
    gates.iter().copied().map(Op::Gate).collect()
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
struct Code(Mutex<Vec<JITModule>>);

impl Code {
    fn new(modules: Vec<JITModule>) -> Code {
        Code(Mutex::new(modules))
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        let modules = self.0.get_mut().map(std::mem::take).unwrap_or_default();
        for module in modules {
            // SAFETY: the code's function pointers are held only by the value that holds this `Code`,
            // which is being dropped; no compiled function runs while it is dropped (`&mut self`).
            unsafe { module.free_memory() };
        }
    }
}

/// A module that compiles for the host machine, set for code that is mostly loads and stores: no
/// optimiser, which made the passes no faster (Connect Four's greedy search 35.6k against 34.7k
/// simulations/s). For code in a straight line (`branches` false), the single-pass register allocator:
/// the backtracking one made it no faster either, and took five times as long. Code that branches (the
/// guarded steps) gets the backtracking one: with the single-pass one Connect Four's guarded steps
/// played 0.87 of the unguarded steps' playouts a second, with the backtracking one 1.09. `None` where
/// the host has no code generator.
fn host_module(branches: bool) -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("opt_level", "none").ok()?;
    let regalloc = if branches {
        "backtracking"
    } else {
        "single_pass"
    };
    flags.set("regalloc_algorithm", regalloc).ok()?;
    flags.set("is_pic", "false").ok()?;
    // The verifier checks Cranelift's own work, on every function: a tenth of a load's compiling.
    flags.set("enable_verifier", "false").ok()?;
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
    /// Compiles each of `parts` (instructions over `inputs`) for the host machine. `None` when the parts
    /// hold more than [`MAX_INPUTS`] inputs, or when the host has no code generator (the caller
    /// interprets then).
    pub(crate) fn compile(parts: &[&[Op]], inputs: &[NetLit]) -> Option<NativePasses> {
        let total: usize = parts.iter().flat_map(|p| p.iter()).map(Op::inputs).sum();
        if total > MAX_INPUTS {
            return None;
        }
        // The straight-line code's module, and the module of the code with guards.
        let mut modules = vec![host_module(false)?, host_module(true)?];
        let config = modules[0].target_config();
        let ptr = config.pointer_type();
        let mut sig = modules[0].make_signature();
        sig.params.push(AbiParam::new(ptr));
        let mut ctx: Context = modules[0].make_context();
        let mut fctx = FunctionBuilderContext::new();
        let mut ids = Vec::new();
        let mut min_lens = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let mut part_ids = Vec::new();
            let mut min_len = 0usize;
            for (c, chunk) in functions(part).into_iter().enumerate() {
                let name = format!("pass_{p}_{c}");
                let m = usize::from(chunk.iter().any(|op| matches!(op, Op::Guard { .. })));
                let module = &mut modules[m];
                let id = module.declare_function(&name, Linkage::Local, &sig).ok()?;
                ctx.func.signature = sig.clone();
                ctx.func.name = UserFuncName::user(0, id.as_u32());
                let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
                let block = b.create_block();
                b.append_block_params_for_function_params(block);
                b.switch_to_block(block);
                let vals = b.block_params(block)[0];
                let flags = MemFlagsData::trusted();
                // The block after the current guard's instructions, and how many of them are left.
                let mut guarded: Option<(cranelift_codegen::ir::Block, u32)> = None;
                let load = |b: &mut FunctionBuilder, min_len: &mut usize, node: usize| {
                    *min_len = (*min_len).max(node + 1);
                    Some(b.ins().load(types::I64, flags, vals, offset(node)?))
                };
                for op in chunk {
                    match *op {
                        Op::Guard { start, end, len } => {
                            let mut any = None;
                            for &l in &inputs[start as usize..end as usize] {
                                let v = load(&mut b, &mut min_len, (l >> 1) as usize)?;
                                any = Some(any.map_or(v, |a| b.ins().bor(a, v)));
                            }
                            let any = any.unwrap_or_else(|| b.ins().iconst(types::I64, 1));
                            let (body, after) = (b.create_block(), b.create_block());
                            b.ins().brif(any, body, &[], after, &[]);
                            b.switch_to_block(body);
                            guarded = Some((after, len));
                            if len == 0 {
                                b.ins().jump(after, &[]);
                                b.switch_to_block(after);
                                guarded = None;
                            }
                        }
                        Op::Gate(g) | Op::Tracked { gate: g, .. } => {
                            let mut acc = None;
                            for &l in &inputs[g.start as usize..g.end as usize] {
                                let v = load(&mut b, &mut min_len, (l >> 1) as usize)?;
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
                            let node = g.node as usize;
                            if let Op::Tracked { changed, .. } = *op {
                                let old = load(&mut b, &mut min_len, node)?;
                                let diff = b.ins().bxor(old, out);
                                min_len = min_len.max(changed as usize + 1);
                                b.ins().store(flags, diff, vals, offset(changed as usize)?);
                            }
                            min_len = min_len.max(node + 1);
                            b.ins().store(flags, out, vals, offset(node)?);
                            if let Some((after, left)) = guarded {
                                guarded = if left <= 1 {
                                    b.ins().jump(after, &[]);
                                    b.switch_to_block(after);
                                    None
                                } else {
                                    Some((after, left - 1))
                                };
                            }
                        }
                    }
                }
                if let Some((after, _)) = guarded {
                    // A guard past the function's end (`functions` keeps them whole; this only
                    // ends a malformed part's code soundly).
                    b.ins().jump(after, &[]);
                    b.switch_to_block(after);
                }
                b.ins().return_(&[]);
                b.seal_all_blocks();
                b.finalize(config);
                module.define_function(id, &mut ctx).ok()?;
                module.clear_context(&mut ctx);
                part_ids.push((m, id));
            }
            ids.push(part_ids);
            min_lens.push(min_len);
        }
        for module in &mut modules {
            module.finalize_definitions().ok()?;
        }
        let parts = ids
            .iter()
            .map(|part| {
                part.iter()
                    .map(|&(m, id)| {
                        let code = modules[m].get_finalized_function(id);
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
            code: Code::new(modules),
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

/// `part` cut into functions of about [`GATES_PER_FUNCTION`] gates, a guard and the instructions it
/// guards always in one function.
fn functions(part: &[Op]) -> Vec<&[Op]> {
    let mut out = Vec::new();
    let (mut from, mut i) = (0, 0);
    while i < part.len() {
        let step = match part[i] {
            Op::Guard { len, .. } => 1 + len as usize,
            _ => 1,
        };
        if i - from >= GATES_PER_FUNCTION {
            out.push(&part[from..i]);
            from = i;
        }
        i = (i + step).min(part.len());
    }
    if from < part.len() || out.is_empty() {
        out.push(&part[from..]);
    }
    out
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
        assert!(NativePasses::compile(&[&ops(&[gate])], &inputs).is_none());
    }

    #[test]
    fn a_guard_runs_what_it_guards_only_when_a_tracked_write_changed_something() {
        // Node 1 takes node 2's value, leaving at node 3 the lanes it changed; node 4, the negation
        // of node 1, runs only when node 3 is not zero.
        let gate = |node, start, end, negate| PassGate {
            node,
            start,
            end,
            negate,
        };
        let part = [
            Op::Tracked {
                gate: gate(1, 0, 1, 0),
                changed: 3,
            },
            Op::Guard {
                start: 1,
                end: 2,
                len: 1,
            },
            Op::Gate(gate(4, 2, 3, !0)),
        ];
        let inputs = [2 << 1, 3 << 1, 1 << 1];
        let native = NativePasses::compile(&[&part], &inputs).expect("compiles");
        let check = |before: [u64; 5], after: [u64; 5]| {
            let mut vals = before.to_vec();
            assert!(native.run(0, &mut vals));
            assert_eq!(vals, after, "from {before:?}");
        };
        check(
            [0, 0b1100, 0b1010, 0, 7],
            [0, 0b1010, 0b1010, 0b0110, !0b1010],
        );
        // Nothing changed: node 4 keeps its value, right or not.
        check([0, 0b1010, 0b1010, 9, 7], [0, 0b1010, 0b1010, 0, 7]);
        // A guard of nothing leaves what follows it unguarded.
        let empty = [
            Op::Guard {
                start: 1,
                end: 2,
                len: 0,
            },
            Op::Gate(gate(4, 2, 3, !0)),
        ];
        let native = NativePasses::compile(&[&empty], &inputs).expect("compiles");
        let mut vals = vec![0, 0b1010, 0, 0, 7];
        assert!(native.run(0, &mut vals));
        assert_eq!(vals, [0, 0b1010, 0, 0, !0b1010]);
    }

    #[test]
    fn functions_keep_a_guard_with_what_it_guards() {
        let gate = Op::Gate(PassGate {
            node: 1,
            start: 0,
            end: 0,
            negate: 0,
        });
        let guard = Op::Guard {
            start: 0,
            end: 0,
            len: 3,
        };
        let mut part = vec![gate; GATES_PER_FUNCTION - 1];
        part.push(guard);
        part.extend([gate; 3]);
        part.push(gate);
        let lens: Vec<usize> = functions(&part).iter().map(|f| f.len()).collect();
        assert_eq!(lens, [GATES_PER_FUNCTION + 3, 1]);
        assert_eq!(functions(&[]).len(), 1);
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
        let native = NativePasses::compile(&[&ops(&gates)], &[2]).expect("compiles");
        let mut vals = vec![0u64, 0, 0b1010];
        assert!(native.run(0, &mut vals));
        // Node 2 reads node 1 (literal 2 = node 1, not negated) and negates: all ones, then none.
        assert_eq!(vals, vec![0, !0, 0]);
        assert!(!native.run(0, &mut [0u64, 0]));
        assert!(!native.run(1, &mut vals));
    }
}
