//! The stages a rule file goes through, in order, each named, each with one entry point, each printable.
//!
//! ```text
//!  program      syntax::parse_file                 the rules as read (printed in the file's own syntax)
//!  classic      engine::lower + ops::to_classic    plain rules over interned ids, operation rules classic
//!  prepared     engine::rewrite::prepared          the rules both engines start from
//!  analysed     engine::RuleGame (its analysis)    roles, when each relation is computed, propositions, moves
//!  plan         engine::plan                       the Datalog evaluator's strata, join orders, indexes
//!  decomposed   network::ground::grounded_program  the rules decomposed and demand-driven, as grounded
//!  network      network::ground                    one equation per gate and output
//! ```
//!
//! The Datalog evaluator ([`crate::engine::RuleGame`]) plays from `plan`; the network
//! ([`crate::network::NetGame`]) from `network`, grounding either `prepared` or, when that exceeds its
//! budget, `decomposed`. [`print`] shows any stage of a program, which is what `ggp-run stage` prints
//! and what the snapshot tests (tests/integration/stages.rs) compare, so a change in any stage shows up as a
//! readable difference.

use crate::syntax::ast;

/// A stage of the pipeline (see the module documentation), in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The parsed program, printed in the file's own syntax (what `ggp-run fmt` prints).
    Program,
    /// The program lowered to plain rules over interned ids, operation rules made classic GDL.
    Classic,
    /// The classic program after the rewrites both engines start from (per-instance negation split
    /// off).
    Prepared,
    /// What the Datalog evaluator's load-time analysis finds: roles, when each relation is computed,
    /// the base propositions and the moves.
    Analysed,
    /// The Datalog evaluator's plan: strata, phases, join orders and index keys.
    Plan,
    /// The prepared rules decomposed and demand-driven, as the network grounds them when the rules as
    /// written exceed its budget.
    Decomposed,
    /// The grounded propositional network: one equation per gate and output.
    Network,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 7] = [
        Stage::Program,
        Stage::Classic,
        Stage::Prepared,
        Stage::Analysed,
        Stage::Plan,
        Stage::Decomposed,
        Stage::Network,
    ];

    /// The stage's name, as `ggp-run stage --stage NAME` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Program => "program",
            Stage::Classic => "classic",
            Stage::Prepared => "prepared",
            Stage::Analysed => "analysed",
            Stage::Plan => "plan",
            Stage::Decomposed => "decomposed",
            Stage::Network => "network",
        }
    }

    /// One line on what the stage prints.
    pub fn about(self) -> &'static str {
        match self {
            Stage::Program => "The rules as read, in the file's own syntax",
            Stage::Classic => "Plain rules over interned ids, operation rules made classic GDL",
            Stage::Prepared => "The classic rules after the rewrites both engines start from",
            Stage::Analysed => {
                "The load-time analysis: roles, when each relation is computed, propositions, moves"
            }
            Stage::Plan => "The Datalog evaluator's plan: strata, phases, join orders, index keys",
            Stage::Decomposed => {
                "The rules decomposed and demand-driven, as the network grounds them when needed"
            }
            Stage::Network => "The grounded network: one equation per gate and output",
        }
    }
}

/// `stage` of `program` as text; `name` names the game in messages. Fails as that stage fails (an
/// invalid game, a network over its budget), with the reason.
///
/// ```
/// use ggp::pipeline::{print, Stage};
/// let program = ggp::syntax::parse_kif(
///     "(role a) (init (on)) (<= (legal a flip) (true (on))) (<= (next (on)) (not (true (on))))
///      (<= terminal (not (true (on)))) (goal a 100)",
/// )
/// .unwrap();
/// let analysed = print(&program, "flip", Stage::Analysed).unwrap();
/// assert!(analysed.contains("propositions (1):\n  on\n"));
/// let network = print(&program, "flip", Stage::Network).unwrap();
/// assert!(network.contains("terminal"));
/// ```
pub fn print(program: &ast::Program, name: &str, stage: Stage) -> Result<String, StageError> {
    use crate::engine::{lower, ops, rewrite, RuleGame};
    Ok(match stage {
        Stage::Program => crate::print::format(program),
        Stage::Classic => ops::to_classic(&lower(program)?)?.to_string(),
        Stage::Prepared => rewrite::prepared(program)?.to_string(),
        Stage::Analysed => RuleGame::from_program(program, name)?
            .analysis()
            .to_string(),
        Stage::Plan => {
            let game = RuleGame::from_program(program, name)?;
            crate::datalog::plan::PlanDisplay {
                program: game.program(),
                plan: game.plan(),
            }
            .to_string()
        }
        Stage::Decomposed => crate::network::ground::grounded_program(
            program,
            crate::network::ground::Strategy::Decomposed,
        )?
        .to_string(),
        Stage::Network => crate::network::ground(program)?.to_string(),
    })
}

/// Why a stage could not be made: the engine's or the network's refusal.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The Datalog stages (classic, prepared, analysed, plan) refuse the program.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// The network's stages (decomposed, network) refuse it.
    #[error(transparent)]
    Network(#[from] crate::network::NetworkError),
}
