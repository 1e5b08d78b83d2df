//! `ggp-run`: plays, searches, counts and benchmarks games. See `ggp-run --help`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`ggp-run ... | head`): nothing more to say.
        Err(cli::CliError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        // Rendered diagnostics already say `file:line:column: error: ...` for each problem, and an
        // interrupt's message says what was kept: neither is an error of its own.
        Err(e @ (cli::CliError::Rules(_) | cli::CliError::Interrupted(_))) => {
            eprintln!("{e}");
            ExitCode::from(e.exit_code())
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
