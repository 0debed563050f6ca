//! The subcommands. Each reads what it needs (files, standard input, the environment), runs
//! the pure stages, and writes standard output and standard error; this is the one layer that
//! does I/O, prints diagnostics and chooses exit codes:
//!
//! - `0` success (warnings may be printed on stderr),
//! - `1` invalid input: every diagnostic on stderr, nothing on stdout,
//! - `2` usage or I/O error.
//!
//! A closed stdout (`| head`) or stderr ends the program quietly with its status.

pub mod discover;
pub mod fn_;
pub mod generate;
pub mod import;
pub mod manager_files;
pub mod render;
pub mod schema;
pub mod verdicts;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::source::{self, Inputs, ReadError, ReadOptions};

/// Exit status: success, possibly with warnings.
pub const SUCCESS: u8 = 0;
/// Exit status: invalid input; every diagnostic on stderr, nothing on stdout.
pub const INVALID_INPUT: u8 = 1;
/// Exit status: usage or I/O error.
pub const USAGE_OR_IO: u8 = 2;

/// Runs one parsed command line.
pub fn main(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Render(args) => render::command(&args, true),
        Command::Validate(args) if args.manager_files => manager_files::command(&args.render),
        Command::Validate(args) => render::command(&args.render, false),
        Command::Generate(args) => generate::command(&args.path),
        Command::Discover(args) => discover::command(&args.path),
        Command::Import(args) => import::command(&args),
        Command::Fn(args) => fn_::command(&args),
        Command::Schema => schema::json_schema(),
        Command::Crd => schema::crd(),
        Command::PluginYaml => schema::plugin_yaml(),
        Command::Completions { shell } => schema::completions(shell),
        Command::Man => schema::man(),
        Command::Verdicts(args) => verdicts::command(&args),
    }
}

/// Colour only for a person at a terminal who has not asked for none (<https://no-color.org>).
fn use_colour() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Writes to stderr. A stderr nobody reads any more is not an error: the exit status still
/// tells what happened.
fn eprint(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

fn print_diagnostics(diagnostics: &Diagnostics, colour: bool) {
    let text: String = diagnostics
        .iter()
        .map(|diagnostic| format!("{}\n", diagnostic.render(colour)))
        .collect();
    eprint(&text);
}

fn usage_error(message: &str) -> ExitCode {
    eprint(&format!("error: {message}\n"));
    ExitCode::from(USAGE_OR_IO)
}

/// Reads the inputs; on failure reports it (an I/O error is a usage error, invalid bytes are
/// invalid input) and gives the exit code.
fn read_inputs(paths: &[PathBuf], options: &ReadOptions, colour: bool) -> Result<Inputs, ExitCode> {
    source::read(paths, options).map_err(|error| report_read_error(error, colour))
}

fn report_read_error(error: ReadError, colour: bool) -> ExitCode {
    match error {
        ReadError::Io { path, source } => usage_error(&format!("{path}: {source}")),
        ReadError::Invalid(diagnostic) => {
            eprint(&format!("{}\n", diagnostic.render(colour)));
            ExitCode::from(INVALID_INPUT)
        }
    }
}

fn write_stdout(bytes: &[u8]) -> ExitCode {
    write_stdout_with(|out| out.write_all(bytes))
}

/// Writes to a buffered stdout; a closed pipe (`| head`) ends the program quietly.
fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> ExitCode {
    let mut stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    match write(&mut stdout).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => usage_error(&format!("writing output: {error}")),
    }
}

/// A diagnostic list holding one error.
fn single(diagnostic: Diagnostic) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    diagnostics.push(diagnostic);
    diagnostics
}
