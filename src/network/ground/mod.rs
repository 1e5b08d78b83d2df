//! Grounding and compilation: a classic GDL program becomes a levelised AND/NOT network.
//!
//! The entry point is [`ground`] ([`ground_with`] for another [`Budget`], [`ground_as`] for one
//! [`Strategy`]). It runs these stages, each in its own file, each handing the next a value:
//!
//! 1. **rewrite** ([`analysis`]): the program is lowered and made classic, with the same rewrites as the
//!    Datalog engine's, so that both engines accept the same games; for [`Strategy::Decomposed`], its
//!    rules are decomposed and restricted to what is asked (the magic-sets rewrite). The result is the
//!    classic program that is grounded, which [`grounded_program`] returns for printing;
//! 2. **analyse** ([`analysis`]): the *relaxed* fixpoint (negations of state relations dropped, `true` fed from
//!    `init`/`next`, `does` from `legal`) on the engine's evaluator, an over-approximation of every fact
//!    that can ever hold, and the exact facts of the relations that depend on neither `true` nor `does`
//!    (they become constants);
//! 3. **instantiate** ([`instantiate`]): every rule of a state-dependent relation is joined against those
//!    fact sets, keeping only instances whose positive conditions can hold; static conditions are
//!    decided on the spot. The instances, indexed by head atom, are the ground program ([`atoms`]);
//! 4. **prove turns** ([`turns`]): when at most one role's turn holds and only that role moves, rules
//!    that read a move drop the turn it implies;
//! 5. **compile** ([`compile`], with the gate logic of [`logic`] over the gate tables of [`gates`]): the ground atoms reachable from the
//!    outputs (`legal`, `goal`, `terminal`, `next`) become gates, each after the gates it reads;
//!    constants fold away, identical gates are shared, a NOT costs nothing (it is a flag on a gate
//!    input);
//! 6. **order**: the gates no output reads go, and the rest are numbered state part first.
//!
//! Every gate is an AND of possibly negated inputs with a possibly negated output (an OR is the negated
//! AND of negated inputs), so one loop evaluates the whole network. **Gates that do not read `does`
//! come first** (the *state* part: legal, goal, terminal), then the *move* part (`next`). **The
//! network does not depend on how many threads ground or compile it.**
//!
//! A ground recursion through state-dependent relations (a cycle in the network) is not supported and
//! returns [`NetworkError::Cyclic`]; so do budgets exceeded ([`budget`]), so that a caller can fall
//! back to the Datalog evaluator with the reason.

mod analysis;
mod atoms;
mod budget;
mod compile;
pub(crate) mod decompose;
mod gates;
mod instantiate;
mod join;
mod logic;
mod net;
mod turns;
mod unfold;

use std::time::Instant;

use crate::datalog::ir::Program;
use crate::engine::analysis::Numbered;

use crate::syntax::ast;

use analysis::{Analysis, Prepared};
use atoms::Ground;
pub use budget::{Budget, Limit, NetworkError, OverBudget};
use compile::{Compiled, Network, Outputs, SIDE_BY_SIDE};
use instantiate::Instantiated;
pub use net::{Gate, Grounded, LegalOut, LoadReport, NetLit, Strategy, FALSE, TRUE};

/// Grounds and compiles `p` with the default [`Budget`].
pub fn ground(p: &ast::Program) -> Result<Grounded, NetworkError> {
    ground_with(p, Budget::default())
}

/// Grounds and compiles `p` within `budget` (see the module documentation): the rules as written
/// first, within [`PLAIN_SHARE`] of the default budget (and of `budget`); when that exceeds it, the
/// rules decomposed and demand-driven (see [`Strategy::Decomposed`]) in the time left. A larger
/// budget goes to the second strategy: the rules as written do not get smaller with time.
pub fn ground_with(p: &ast::Program, budget: Budget) -> Result<Grounded, NetworkError> {
    let started = Instant::now();
    let default = Budget::default();
    let plain = Budget {
        max_time: budget.max_time.min(default.max_time).mul_f64(PLAIN_SHARE),
        max_instances: budget.max_instances.min(PLAIN_SIZE.0),
        max_gates: budget.max_gates.min(default.max_gates),
        max_analysis_facts: budget.max_analysis_facts.min(PLAIN_SIZE.1),
    };
    match ground_as(p, plain, started, Strategy::AsWritten) {
        Err(NetworkError::Budget(first)) => {
            match ground_as(p, budget, started, Strategy::Decomposed) {
                Err(NetworkError::Budget(second)) => Err(NetworkError::over(
                    if first.limit == Limit::Time {
                        Limit::Time
                    } else {
                        second.limit
                    },
                    both_ways(&first.why, &second.why),
                )),
                other => other,
            }
        }
        other => other,
    }
}

/// Why neither strategy fit the budget, each reason once: `the load-time analysis: more than 300000 facts
/// derived ... as written; the evaluation ran past its time limit ... decomposed and demand-driven`, the
/// part both share said first and once.
fn both_ways(first: &str, second: &str) -> String {
    if first == second {
        return format!("{first} (as written, and decomposed and demand-driven alike)");
    }
    let shared = match (first.split_once(": "), second.split_once(": ")) {
        (Some((a, _)), Some((b, _))) if a == b => Some(a),
        _ => None,
    };
    match shared {
        Some(what) => format!(
            "{what}: {} with the rules as written; {} with them decomposed and demand-driven",
            &first[what.len() + 2..],
            &second[what.len() + 2..]
        ),
        None => format!(
            "{first} with the rules as written; {second} with them decomposed and demand-driven"
        ),
    }
}

/// The part of the time budget the rules as written get before the decomposed form is tried.
pub const PLAIN_SHARE: f64 = 0.3;

/// The most instances and analysis facts the rules as written get, whatever the budget: a game that
/// needs more is one whose decomposed form is far smaller (chess's relaxed fixpoint as written passes
/// 300,000 facts in 70 ms; kalaha's as written needs about 400,000 for 432,915 gates, decomposed 96,836
/// gates that play twice as fast). The othello games need between 150,000 and 300,000 as written:
/// with the limit at 150,000, othello-comp2007 loaded decomposed in 776 ms instead of 168 ms and
/// played 0.77x as fast, so chess's doomed first attempt (some 60 ms) is kept.
pub const PLAIN_SIZE: (usize, usize) = (3_000_000, 300_000);

/// [`ground_with`] with one [`Strategy`], the budget's time counted from `started`.
pub fn ground_as(
    p: &ast::Program,
    budget: Budget,
    started: Instant,
    strategy: Strategy,
) -> Result<Grounded, NetworkError> {
    ground_compiling(p, budget, started, strategy, SIDE_BY_SIDE)
}

/// The classic program that [`ground_as`] grounds with `strategy`: the game lowered, its operation
/// rules made classic and rewritten as for the Datalog engine, then, for [`Strategy::Decomposed`],
/// decomposed and demand-driven (a relation a demand restricts reads its demand relation, named
/// after it with `#` and which arguments are asked). It prints as rules (`Program`'s `Display`, as
/// `ggp-run stage --stage classic` prints the program before these rewrites). The relaxed fixpoint
/// runs on a copy of it with the negations of state relations dropped; this is the program whose
/// rules are instantiated.
///
/// Fails as grounding would: an invalid game, or a load-time analysis (the demand rewrite sizes the
/// static tables) over the default [`Budget`].
pub fn grounded_program(p: &ast::Program, strategy: Strategy) -> Result<Program, NetworkError> {
    let limits = budget::analysis_limits(Budget::default(), Instant::now());
    Ok(analysis::rewrite(p, strategy, limits)?.prog)
}

/// [`ground_as`], the relations of at least `side_by_side` atoms compiled side by side, that many
/// atoms a task (see [`compile::Compiler::compile_side_by_side`]): the stages one after the other.
fn ground_compiling(
    p: &ast::Program,
    budget: Budget,
    started: Instant,
    strategy: Strategy,
    side_by_side: usize,
) -> Result<Grounded, NetworkError> {
    let attempt = Instant::now();
    let limits = budget::analysis_limits(budget, started);
    let prepared: Prepared = analysis::rewrite(p, strategy, limits)?;
    let mut facts: Analysis = analysis::analyse(prepared, limits)?;
    let analysed = Instant::now();
    let Instantiated {
        found,
        atoms,
        to_ground,
    } = instantiate::instantiate(&mut facts, budget, started)?;
    let mut g = Ground::of(&facts, found, atoms, started);
    let outputs = Outputs::of(&facts, &g);
    let grounded = Instant::now();
    let turns = turns::prove_turns(&mut g, &facts);
    let compiled: Compiled = compile::compile(
        &g,
        &facts,
        &to_ground,
        &outputs,
        &turns,
        budget,
        side_by_side,
    )?;
    let net: Network = compiled.order(facts.numbered.props.len());
    let (terms, instances) = (g.terms, g.instances);
    let facts_derived = facts.relaxed.derived();
    let Analysis {
        prog,
        roles,
        numbered: Numbered { props, moves, .. },
        initial,
        ..
    } = facts;
    Ok(Grounded {
        terms,
        syntax: prog.syntax,
        roles,
        props,
        moves,
        initial,
        num_nodes: net.first_gate + net.gates.len(),
        first_gate: net.first_gate,
        gates: net.gates,
        state_gates: net.state_gates,
        inputs: net.inputs,
        legal: net.legal,
        goals: net.goals,
        terminal: net.terminal,
        next: net.next,
        load: LoadReport {
            strategy,
            analysis: analysed - attempt,
            facts: facts_derived,
            grounding: grounded - analysed,
            instances,
            compiling: grounded.elapsed(),
            total: started.elapsed(),
        },
    })
}

/// What the unit tests of the stages share: small games, and the stages run up to a point.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A turn-taking game on two cells: the role in control marks an unmarked cell, the other waits.
    pub(crate) const TURNS: &str = "
        (role white) (role black)
        (init (control white))
        (cell 1) (cell 2)
        (<= (legal ?r (mark ?x)) (true (control ?r)) (cell ?x) (not (true (marked ?x))))
        (<= (legal ?r noop) (role ?r) (not (true (control ?r))))
        (<= (next (marked ?x)) (does ?r (mark ?x)))
        (<= (next (marked ?x)) (true (marked ?x)))
        (<= (next (control black)) (true (control white)))
        (<= (next (control white)) (true (control black)))
        (<= terminal (true (marked 1)) (true (marked 2)))
        (<= (goal ?r 50) (role ?r))";

    /// A KIF program.
    pub(super) fn kif(text: &str) -> ast::Program {
        crate::syntax::parse_kif(text).expect("parses")
    }

    /// A game of the repository's `games/`.
    pub(super) fn game(name: &str) -> ast::Program {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("games")
            .join(name);
        crate::syntax::parse_file(&file).expect("parses").0
    }

    /// The rewrite and the analysis of `p` with the default budget.
    pub(super) fn analysed(p: &ast::Program, strategy: Strategy) -> Analysis {
        let limits = budget::analysis_limits(Budget::default(), Instant::now());
        analysis::analyse(
            analysis::rewrite(p, strategy, limits).expect("rewrites"),
            limits,
        )
        .expect("analyses")
    }

    /// `a` instantiated with the default budget.
    pub(super) fn instantiated(a: &mut Analysis) -> Instantiated {
        instantiate::instantiate(a, Budget::default(), Instant::now()).expect("grounds")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn both_strategies_failing_say_each_reason_once() {
        let same = "the evaluation ran past its time limit";
        assert_eq!(
            both_ways(same, same),
            "the evaluation ran past its time limit (as written, and decomposed and demand-driven alike)"
        );
        assert_eq!(
            both_ways("analysis: 300001 facts", "analysis: 2.0 s"),
            "analysis: 300001 facts with the rules as written; 2.0 s with them decomposed and demand-driven"
        );
        assert_eq!(
            both_ways("too many facts", "too slow"),
            "too many facts with the rules as written; too slow with them decomposed and demand-driven"
        );
    }

    #[test]
    fn the_grounded_program_is_the_demand_driven_rewrite_for_the_decomposed_strategy() {
        let p = game("tictactoe.gdl");
        let as_written = grounded_program(&p, Strategy::AsWritten)
            .expect("rewrites")
            .to_string();
        let decomposed = grounded_program(&p, Strategy::Decomposed)
            .expect("rewrites")
            .to_string();
        // As written, the program is the lowered one (`ggp-run stage --stage lowered`) prepared.
        assert!(as_written.contains("line(") && !as_written.contains('#'));
        // Decomposed and demand-driven: rules read demand relations, which have rules of their own.
        let demand_rules = decomposed
            .lines()
            .filter(|l| l.split(":-").next().is_some_and(|h| h.contains('#')))
            .count();
        assert!(demand_rules > 0, "no demand rules in\n{decomposed}");
        assert_ne!(as_written, decomposed);
    }

    /// The network, without the load report (timings).
    fn network(path: &str, strategy: Strategy, side_by_side: usize) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let (p, _) = crate::syntax::parse_file(&file).expect("parses");
        let g = ground_compiling(
            &p,
            Budget::default(),
            Instant::now(),
            strategy,
            side_by_side,
        )
        .expect("grounds");
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            g.gates, g.inputs, g.legal, g.goals, g.terminal, g.next, g.initial
        )
    }

    #[test]
    fn the_instances_budget_counts_every_grounding_phase_together() {
        // 95 x 95 instances in each of three rules: `next`'s and the late `q`'s in the first phase
        // (about 18,000), `goal`'s, which reads `q`, in the second (about 9,000).
        let nums: String = (0..95).map(|n| format!("(num {n}) ")).collect();
        let p = kif(&format!(
            "(role a) {nums}
            (<= (init (on ?x)) (num ?x))
            (<= (legal a (set ?x)) (num ?x))
            (<= (next (on ?x)) (does a (set ?x)))
            (<= (next (mark ?x ?y)) (true (on ?x)) (num ?y))
            (<= (q ?x ?y) (true (on ?x)) (true (on ?y)))
            (<= (goal a 100) (q ?x ?y) (true (mark ?x ?y)))
            (<= terminal (true (mark 0 0)))"
        ));
        let within = |max_instances| {
            let budget = Budget {
                max_instances,
                ..Budget::default()
            };
            ground_as(&p, budget, Instant::now(), Strategy::AsWritten)
        };
        let g = within(40_000).expect("about 27,000 instances fit 40,000");
        assert!(g.load.instances > 27_000, "{} instances", g.load.instances);
        // Each phase alone fits 20,000 (counted from zero at each phase, it passed); together they
        // do not.
        match within(20_000) {
            Err(NetworkError::Budget(over)) => assert_eq!(over.limit, Limit::Size),
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(g) => panic!("{} instances fit a budget of 20,000", g.load.instances),
        }
    }

    #[test]
    fn compiling_side_by_side_makes_the_same_network_as_atom_after_atom() {
        for game in [
            "games/connect4.gdl",
            "games/breakthrough.gdl",
            "games/tictactoe.gdl",
        ] {
            for strategy in [Strategy::AsWritten, Strategy::Decomposed] {
                let one_by_one = network(game, strategy, usize::MAX);
                // Two atoms a task: every relation of two atoms or more is split among tasks.
                let side_by_side = network(game, strategy, 2);
                assert!(one_by_one == side_by_side, "{game} ({strategy:?}) differs");
            }
        }
    }
}
