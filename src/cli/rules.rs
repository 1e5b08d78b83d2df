//! The commands that work on rule files as text: `check`, `fmt`, `convert`, `stage` and `replay`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ggp::check::{check, Semantics};
use ggp::diagnostics::{count, count_as, render};
use ggp::load::{AnyGame, EngineChoice, GameSource, LoadOptions};
use ggp::load::{PlayTest, PlayTestReport};
use ggp::pipeline::Stage;
use ggp::print::{convert, to_infix, to_kif};
use ggp::syntax::ast::{Program, Syntax};

use super::spec::{fallback_note, load_error, render_errors, under_spinner, while_loading};
use super::CliError;

/// Reads, parses and checks a rule file; errors come back rendered with file, line and column.
fn read_rules(path: &Path) -> Result<(Program, String), CliError> {
    let source = GameSource::RuleFile(path.to_path_buf());
    let text = ggp::load::read(path).map_err(|e| load_error(e, &source))?;
    let (syntax, note) = ggp::syntax::syntax_of_file(path, &text);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let rules = ggp::load::read_rules(text, path.display().to_string(), syntax)
        .map_err(|e| load_error(e, &source))?;
    Ok((rules.program, rules.text))
}

/// `cannot read FILE: no such file` when `path` cannot be read, in one line.
fn unreadable(path: &Path) -> Option<String> {
    ggp::load::read(path).err().and_then(|e| match e {
        ggp::load::LoadError::Unreadable { .. } => Some(e.to_string()),
        _ => None,
    })
}

/// `ggp-run check FILE...`: each file checked in turn; with several files, a summary line at the end.
/// Fails (exit status 1) when a file has errors or cannot be read.
pub fn check_files(
    paths: &[PathBuf],
    grounding: Duration,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if let [path] = paths {
        if let Some(why) = unreadable(path) {
            return Err(CliError::Failed(why));
        }
        return if check_file(path, grounding, out)? {
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
        if let Some(why) = unreadable(path) {
            writeln!(out, "{why}")?;
            missing += 1;
        } else if check_file(path, grounding, out)? {
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
pub fn check_file(
    path: &Path,
    grounding: Duration,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let file = path.display().to_string();
    let parsed = ggp::syntax::parse_file(path);
    let text = match &parsed {
        Ok((_, src)) | Err((_, src)) => src,
    };
    if let (_, Some(note)) = ggp::syntax::syntax_of_file(path, text) {
        writeln!(out, "note: {note}")?;
    }
    let (program, src) = match parsed {
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
    let options = LoadOptions {
        grounding: Some(grounding),
        ..LoadOptions::default()
    };
    let summary = report.summary.clone();
    let places = ggp::load::RulePlaces::of(&program);
    let rules = ggp::load::Rules {
        program,
        text: src.clone(),
        file: file.clone(),
        syntax_note: None,
    };
    let loaded = while_loading(&GameSource::RuleFile(path.to_path_buf()), &options, || {
        ggp::load::load_checked(rules, &name, &options)
    });
    let (tested, network) = match loaded {
        Ok(game) => {
            let options = PlayTest::default();
            // Up to its time limit on a slow evaluator: not in silence.
            let playing = format!(
                "{}: play-testing ({} random matches, up to {} s)",
                path.file_name()
                    .map_or(file.as_str().into(), |n| n.to_string_lossy()),
                options.matches,
                options.max_time.as_secs_f64()
            );
            let tested = under_spinner(playing, || game.play_test(options)).unwrap_or_default();
            let network = match &game {
                AnyGame::Network(l) => Ok((
                    l.game.num_propositions(),
                    l.game.num_gates(),
                    l.report.took,
                    l.game.network().load.to_string(),
                )),
                other => Err(other.report().fallback.clone()),
            };
            (tested, network)
        }
        Err(e) => (PlayTestReport::unplayable(&e, &places), Err(None)),
    };
    for d in &tested.problems {
        write!(out, "{}", render(d, &file, &src))?;
    }
    let warnings = report.warnings.len() + tested.problems.iter().filter(|d| !d.is_error()).count();
    if tested.has_errors() {
        writeln!(
            out,
            "{file}: {}, {}",
            ggp::diagnostics::count(
                tested.problems.iter().filter(|d| d.is_error()).count(),
                "error"
            ),
            ggp::diagnostics::count(warnings, "warning")
        )?;
        // The game loads and plays until the problem: what was built and played is still worth seeing
        // (a network's size and load time, say).
        what_was_loaded(out, &network, &tested)?;
        return Ok(false);
    }
    let s = &summary;
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
    if warnings > 0 {
        writeln!(out, "  warnings: {warnings}")?;
    }
    what_was_loaded(out, &network, &tested)?;
    Ok(true)
}

/// The summary's last lines: the network built (or why not), and the play-test's matches.
fn what_was_loaded(
    out: &mut impl Write,
    network: &Result<(usize, usize, Duration, String), Option<ggp::network::NetworkError>>,
    tested: &PlayTestReport,
) -> Result<(), CliError> {
    match network {
        Ok((props, gates, took, strategy)) => writeln!(
            out,
            "  network: {props} propositions, {gates} gates, built in {:.0} ms ({strategy})",
            took.as_secs_f64() * 1e3,
        )?,
        Err(Some(e)) => writeln!(
            out,
            "  network: not built ({e}); the Datalog evaluator plays this game{}",
            super::spec::budget_hint(e)
        )?,
        Err(None) => {}
    }
    if tested.played > 0 {
        writeln!(out, "  play-test: {}", tested.summary())?;
    }
    Ok(())
}

/// `ggp-run fmt FILE`: the file laid out, and whether that differs from the file. The text is
/// checked to read back as the same rules with the same comments, so that `--write` loses nothing.
pub fn fmt_file(path: &Path) -> Result<(String, bool), CliError> {
    // Formatting needs the rules to parse, not to be a finished game.
    let source = GameSource::RuleFile(path.to_path_buf());
    let original = ggp::load::read(path).map_err(|e| load_error(e, &source))?;
    let (syntax, note) = ggp::syntax::syntax_of_file(path, &original);
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let program = ggp::syntax::parse_str(&original, syntax).map_err(|errors| {
        CliError::Failed(render_errors(
            &errors,
            &path.display().to_string(),
            &original,
        ))
    })?;
    let text = ggp::print::format(&program);
    if !ggp::print::reads_back(&program, &text) {
        return Err(CliError::Failed(format!(
            "{}: the formatted text does not read back as the same rules; the file is left as it \
             is (please report this)",
            path.display()
        )));
    }
    let changed = text != original;
    Ok((text, changed))
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
                 {lo} to {hi} (from the smallest to the largest number the rules write; goal values \
                 only where a goal is computed)",
                if used.len() == 1 { "" } else { "s" },
                used.join(", "),
                count(facts, "fact")
            );
        }
    }
    if to == Syntax::Infix && program.syntax == Syntax::Kif {
        let unread = ggp::check::unsafe_rules(&program)
            .iter()
            .filter(|r| !r.read && r.role_only.is_none())
            .count();
        if unread > 0 {
            eprintln!(
                "note: {} with variables that have no value became comments: the game never reads \
                 them, and infix refuses them",
                count_as(unread, "rule", "rules")
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
    ggp::pipeline::print(&program, &path.display().to_string(), stage).map_err(|e| CliError::File {
        path: PathBuf::from(path),
        message: e.to_string(),
    })
}

/// `ggp-run replay GAME TRACE`: replays a reference trace; returns whether every playout passed.
pub fn replay_file(
    game: &Path,
    trace: &Path,
    engine: EngineChoice,
    grounding: Option<Duration>,
    out: &mut impl Write,
) -> Result<bool, CliError> {
    let text = std::fs::read_to_string(trace).map_err(|e| CliError::File {
        path: trace.to_path_buf(),
        message: e.to_string(),
    })?;
    let source = GameSource::RuleFile(game.to_path_buf());
    let options = LoadOptions {
        engine,
        grounding,
        ..LoadOptions::default()
    };
    let loaded = while_loading(&source, &options, || ggp::load::load(&source, &options))
        .map_err(|e| load_error(e, &source))?;
    if let Some(why) = fallback_note(loaded.report()) {
        eprintln!("{}", why.replace("plays this game", "replays this trace"));
    }
    // A file of no playouts at all is not a trace (its lines would each fail as unknown records).
    if !text.lines().any(|l| l.split(' ').next() == Some("playout")) {
        return Err(CliError::File {
            path: trace.to_path_buf(),
            message: "no playouts in the trace (expected `playout K` lines, see FORMAT.md)".into(),
        });
    }
    let report = match &loaded {
        AnyGame::Network(l) => ggp::network::replay(l.game.as_ref(), &text),
        AnyGame::Datalog(l) => ggp::engine::conformance::replay(l.game.as_ref(), &text),
        _ => {
            return Err(CliError::Usage(format!(
                "{} is not a rule file, and only rule files have reference traces",
                game.display()
            )))
        }
    };
    write!(out, "{report}")?;
    Ok(report.failed.is_empty())
}
