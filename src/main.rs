//! The `rollouts-render` binary: the command line, the one place that prints diagnostics, and
//! exit codes.
//!
//! Exit status: 0 success (warnings may be printed), 1 invalid input (every diagnostic on
//! stderr, nothing on stdout), 2 usage or I/O error.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use rollouts_render::cli::{Cli, Command, RenderArgs};
use rollouts_render::diag::Diagnostics;
use rollouts_render::source::{self, ReadError};
use rollouts_render::{emit, pipeline};

const INVALID_INPUT: u8 = 1;
const USAGE_OR_IO: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Render(args) => run(&args, true),
        Command::Validate(args) => run(&args, false),
    }
}

fn run(args: &RenderArgs, write_output: bool) -> ExitCode {
    let options = match args.options() {
        Ok(options) => options,
        Err(message) => return usage_error(&message),
    };
    let sources = match source::read(&args.paths, &args.read_options()) {
        Ok(sources) => sources,
        Err(ReadError::Io { path, source }) => return usage_error(&format!("{path}: {source}")),
        Err(ReadError::Invalid(diagnostic)) => {
            eprintln!("{diagnostic}");
            return ExitCode::from(INVALID_INPUT);
        }
    };
    match pipeline::render(&sources, &options) {
        Ok(rendered) => {
            print_diagnostics(&rendered.warnings);
            if write_output {
                write_stdout(emit::stream(&rendered.documents, options.format).as_bytes())
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(diagnostics) => {
            print_diagnostics(&diagnostics);
            ExitCode::from(INVALID_INPUT)
        }
    }
}

fn print_diagnostics(diagnostics: &Diagnostics) {
    let mut stderr = io::stderr().lock();
    for diagnostic in diagnostics.iter() {
        let _ = writeln!(stderr, "{diagnostic}");
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(USAGE_OR_IO)
}

/// Writes the whole output at once; a closed pipe (`| head`) ends the program quietly.
fn write_stdout(bytes: &[u8]) -> ExitCode {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => usage_error(&format!("writing output: {error}")),
    }
}
