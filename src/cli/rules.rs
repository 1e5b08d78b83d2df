//! The commands that work on rule files as text: `check`, `fmt`, `convert`, `stage` and `replay`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ggp::check::{check, Semantics};
use ggp::diagnostics::{count, render};
use ggp::network::{Budget, NetGame};
use ggp::pipeline::Stage;
use ggp::print::{convert, to_infix, to_kif};
use ggp::syntax::ast::Syntax;

use super::spec::{load_rules, read_rules, render_errors, EngineChoice, RuleEngine};
use super::CliError;

/// `ggp-run check FILE...`: each file checked in turn; with several files, a summary line at the end.
/// Fails (exit status 1) when a file has errors or cannot be read.
pub fn check_files(
    paths: &[PathBuf],
    budget: Budget,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if let [path] = paths {
        if let Some(why) = super::spec::unreadable(path) {
            return Err(CliError::Failed(why));
        }
        return if check_file(path, budget, out)? {
            Ok(())
        } else {
            Err(CliError::Failed(format!(
                "{}: not a valid game",
                path.display()
            )))
        };
    }
    let (mut valid, mut invalid, mut missing) = (0, 0, 0);
    for (i, path) in paths.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        if let Some(why) = super::spec::unreadable(path) {
            writeln!(out, "{why}")?;
            missing += 1;
        } else if check_file(path, budget, out)? {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    let mut summary = format!(
        "\n{} checked: {valid} valid, {invalid} with errors",
        ggp::diagnostics::count(paths.len(), "file")
    );
    if missing > 0 {
        summary.push_str(&format!(", {missing} unreadable"));
    }
    writeln!(out, "{summary}")?;
    if invalid + missing > 0 {
        let bad = invalid + missing;
        Err(CliError::Failed(format!(
            "{bad} of {} {}",
            ggp::diagnostics::count(paths.len(), "file"),
            if bad == 1 {
                "is not a valid game"
            } else {
                "are not valid games"
            }
        )))
    } else {
        Ok(())
    }
}

/// `ggp-run check FILE`: every problem of the file, or a summary of the game. Returns whether the file
/// is free of errors (the exit status is 1 when it is not).
pub fn check_file(path: &Path, budget: Budget, out: &mut impl Write) -> Result<bool, CliError> {
    let file = path.display().to_string();
    let (program, src) = match ggp::syntax::parse_file(path) {
        Ok(ok) => ok,
        Err((diags, src)) => {
            writeln!(out, "{}", render_errors(&diags, &file, &src))?;
            let n = diags.iter().filter(|d| d.is_error()).count();
            writeln!(
                out,
                "{file}: {}; the file does not parse",
                ggp::diagnostics::count(n, "error")
            )?;
            return Ok(false);
        }
    };
    let report = check(&program);
    for d in report.errors.iter().chain(&report.warnings) {
        write!(out, "{}", render(d, &file, &src))?;
    }
    if !report.is_ok() {
        writeln!(
            out,
            "{file}: {}, {}",
            ggp::diagnostics::count(report.errors.len(), "error"),
            ggp::diagnostics::count(report.warnings.len(), "warning")
        )?;
        return Ok(false);
    }
    let name = path
        .file_stem()
        .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
    // Load the game as play would (the network, else the Datalog evaluator) and ask it for every
    // role's first moves: a game no role can start is not valid.
    let started = Instant::now();
    let net = NetGame::from_program_within(&program, &name, budget);
    let elapsed = started.elapsed();
    let stuck = match &net {
        Ok(g) => ggp::check::initial_moves(&program, g),
        Err(_) => match ggp::engine::RuleGame::from_program(&program, &name) {
            Ok(g) => ggp::check::initial_moves(&program, &g),
            Err(e) => vec![ggp::diagnostics::Diagnostic::error(
                ggp::syntax::ast::Span::default(),
                format!("the game cannot be played: {e}"),
            )],
        },
    };
    if !stuck.is_empty() {
        for d in &stuck {
            write!(out, "{}", render(d, &file, &src))?;
        }
        writeln!(
            out,
            "{file}: {}, {}",
            ggp::diagnostics::count(stuck.len(), "error"),
            ggp::diagnostics::count(report.warnings.len(), "warning")
        )?;
        return Ok(false);
    }
    let s = &report.summary;
    let semantics = match s.semantics {
        Semantics::Classic => "classic GDL",
        Semantics::Operation => "operation rules",
    };
    writeln!(out, "{file}: valid game ({semantics})")?;
    writeln!(out, "  roles: {}", s.roles.join(", "))?;
    let relations: Vec<String> = s
        .relations
        .iter()
        .map(|(name, arity)| format!("{name}/{arity}"))
        .collect();
    writeln!(out, "  relations: {}", relations.join(" "))?;
    writeln!(
        out,
        "  statements: {}, {}, {}; {}",
        count(s.rules, "rule"),
        count(s.facts, "fact"),
        count(s.operations, "operation"),
        ggp::diagnostics::count_as(s.strata, "stratum", "strata")
    )?;
    if !report.warnings.is_empty() {
        writeln!(out, "  warnings: {}", report.warnings.len())?;
    }
    match net {
        Ok(g) => writeln!(
            out,
            "  network: {} propositions, {} gates, built in {:.0} ms ({})",
            g.num_propositions(),
            g.num_gates(),
            elapsed.as_secs_f64() * 1e3,
            g.network().load
        )?,
        Err(e) => writeln!(
            out,
            "  network: not built ({e}); the Datalog evaluator plays this game{}",
            super::spec::budget_hint(&e)
        )?,
    }
    Ok(true)
}

/// `ggp-run fmt FILE`: the file in its own syntax, laid out by the printer.
pub fn fmt_file(path: &Path) -> Result<String, CliError> {
    let (program, _) = read_rules(path)?;
    Ok(ggp::print::format(&program))
}

/// `ggp-run convert FILE --to kif|gdl`: the file in the other syntax, with the same meaning.
pub fn convert_file(path: &Path, to: Syntax) -> Result<String, CliError> {
    let (program, _) = read_rules(path)?;
    let converted = convert(&program, to).map_err(|e| CliError::File {
        path: PathBuf::from(path),
        message: e.to_string(),
    })?;
    if to == Syntax::Kif && program.syntax == Syntax::Infix {
        if let Some((used, lo, hi, facts)) = ggp::print::arithmetic_tables_of(&program) {
            eprintln!(
                "note: KIF has no arithmetic, so the built-in{} {} became {} over the numbers \
                 {lo} to {hi} (from the smallest to the largest number the file writes)",
                if used.len() == 1 { "" } else { "s" },
                used.join(", "),
                count(facts, "fact")
            );
        }
    }
    Ok(match to {
        Syntax::Kif => to_kif(&converted),
        Syntax::Infix => to_infix(&converted),
    })
}

/// A stage of [`ggp::pipeline`], as `ggp-run stage --stage NAME` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageArg(pub Stage);

impl clap::ValueEnum for StageArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [StageArg; Stage::ALL.len()] = {
            let mut all = [StageArg(Stage::Program); Stage::ALL.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = StageArg(Stage::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let value = clap::builder::PossibleValue::new(self.0.name()).help(self.0.about());
        Some(match self.0 {
            // The names these stages had before the pipeline was named.
            Stage::Classic => value.alias("lowered"),
            Stage::Analysed => value.alias("analyzed"),
            _ => value,
        })
    }
}

/// `ggp-run stage FILE --stage S`: what that stage makes of the file, as text.
pub fn stage_text(path: &Path, stage: Stage) -> Result<String, CliError> {
    let (program, _) = read_rules(path)?;
    ggp::pipeline::print(&program, &path.display().to_string(), stage).map_err(|message| {
        CliError::File {
            path: PathBuf::from(path),
            message,
        }
    })
}

/// `ggp-run replay GAME TRACE`: replays a reference trace; returns whether every playout passed.
pub fn replay_file(
    game: &Path,
    trace: &Path,
    engine: EngineChoice,
    budget: Budget,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let text = std::fs::read_to_string(trace).map_err(|e| CliError::File {
        path: trace.to_path_buf(),
        message: e.to_string(),
    })?;
    let (loaded_game, loaded) = load_rules(game, engine, budget)?;
    if let Some(why) = &loaded.fallback {
        eprintln!("note: {why}; the Datalog evaluator replays this trace");
    }
    let report = match &loaded_game {
        RuleEngine::Network(g) => ggp::network::replay(g.as_ref(), &text),
        RuleEngine::Datalog(g) => ggp::engine::conformance::replay(g.as_ref(), &text),
    };
    if report.passed + report.failed.len() == 0 {
        return Err(CliError::File {
            path: trace.to_path_buf(),
            message: "no playouts in the trace (expected `playout K` lines, see FORMAT.md)".into(),
        });
    }
    write!(out, "{report}")?;
    Ok(report.failed.is_empty())
}
