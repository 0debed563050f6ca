//! `render` and `validate`: the whole pipeline over files, directories or standard input.

use std::process::ExitCode;

use super::{INVALID_INPUT, SUCCESS, USAGE_OR_IO};
use crate::cli::RenderArgs;
use crate::diag::{Diagnostic, Diagnostics};
use crate::emit;
use crate::input::source::{self, Inputs, ReadError};
use crate::options::{Format, Options};
use crate::pipeline::{self, Rendered};
use crate::render::warnings::WarningsNote;

/// One run of `render` or `validate` as a value: exit status, stdout and diagnostics. The
/// command prints it; tests and the fuzz target inspect it.
#[derive(Debug)]
pub struct Outcome {
    pub status: u8,
    /// What goes to stdout: only on success, and only once every input was checked.
    pub output: Option<(Rendered, Format)>,
    pub diagnostics: Diagnostics,
}

impl Outcome {
    pub(crate) fn failed(status: u8, diagnostics: Diagnostics) -> Self {
        Self {
            status,
            output: None,
            diagnostics,
        }
    }

    /// Writes the output (rendered while it is written). With `--warnings-annotation`, the
    /// warnings recorded are exactly the ones printed: [`Self::diagnostics`].
    pub fn write_output(&self, out: &mut (impl std::io::Write + ?Sized)) -> std::io::Result<()> {
        match &self.output {
            Some((rendered, format)) => {
                let note = rendered
                    .notes_warnings()
                    .then(|| WarningsNote::new(&self.diagnostics))
                    .flatten();
                emit::write_stream(rendered.documents_noting(note.as_ref()), *format, out)
            }
            None => Ok(()),
        }
    }

    /// The output as text (for tests and the fuzz target).
    pub fn stdout(&self) -> String {
        let mut out = Vec::new();
        self.write_output(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("YAML and JSON are UTF-8")
    }
}

/// Renders (or, without `write_output`, only validates) the inputs.
pub fn run(inputs: &Inputs, options: &Options, write_output: bool) -> Outcome {
    match pipeline::render(inputs, options) {
        Ok(mut rendered) => {
            let diagnostics = std::mem::take(&mut rendered.warnings);
            Outcome {
                status: SUCCESS,
                output: write_output.then_some((rendered, options.format)),
                diagnostics,
            }
        }
        Err(diagnostics) => Outcome::failed(INVALID_INPUT, diagnostics),
    }
}

/// The whole pipeline over raw bytes, as if they came on standard input.
pub fn run_bytes(bytes: &[u8], options: &Options) -> Outcome {
    match source::from_bytes(source::STDIN_NAME, bytes.to_vec()) {
        Ok(source) => run(&Inputs::from(vec![source]), options, true),
        Err(ReadError::Invalid(diagnostic)) => {
            Outcome::failed(INVALID_INPUT, super::single(diagnostic))
        }
        Err(error @ ReadError::Io { .. }) => Outcome::failed(
            USAGE_OR_IO,
            super::single(Diagnostic::error(error.to_string())),
        ),
    }
}

/// Prints a finished run: diagnostics on stderr, then (on success) the output on stdout.
pub(crate) fn finish(outcome: &Outcome) -> ExitCode {
    if outcome.status != SUCCESS {
        return ExitCode::from(outcome.status);
    }
    super::write_stdout_with(|out| outcome.write_output(out))
}

pub(crate) fn command(args: &RenderArgs, write_output: bool) -> ExitCode {
    let colour = super::use_colour();
    let inputs = match super::read_inputs(&args.paths, &args.read_options(), colour) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let outcome = run(&inputs, &args.options.options(), write_output);
    super::print_diagnostics(&outcome.diagnostics, colour);
    finish(&outcome)
}
