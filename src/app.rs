//! One run of `render` or `validate` as a value: exit status, stdout text and diagnostics.
//! The binary prints an [`Outcome`]; tests and the fuzz target inspect it.

use crate::diag::Diagnostics;
use crate::options::Options;
use crate::source::{self, Inputs, ReadError};
use crate::{emit, pipeline};

/// Exit status: success, possibly with warnings.
pub const SUCCESS: u8 = 0;
/// Exit status: invalid input; every diagnostic on stderr, nothing on stdout.
pub const INVALID_INPUT: u8 = 1;
/// Exit status: usage or I/O error.
pub const USAGE_OR_IO: u8 = 2;

#[derive(Debug)]
pub struct Outcome {
    pub status: u8,
    /// The whole output, written in one go only on success.
    pub stdout: String,
    pub diagnostics: Diagnostics,
}

/// Renders (or, without `write_output`, only validates) the inputs.
pub fn run(inputs: &Inputs, options: &Options, write_output: bool) -> Outcome {
    match pipeline::render(inputs, options) {
        Ok(rendered) => Outcome {
            status: SUCCESS,
            stdout: if write_output {
                emit::stream(&rendered.documents, options.format)
            } else {
                String::new()
            },
            diagnostics: rendered.warnings,
        },
        Err(diagnostics) => Outcome {
            status: INVALID_INPUT,
            stdout: String::new(),
            diagnostics,
        },
    }
}

/// The whole pipeline over raw bytes, as if they came on standard input.
pub fn run_bytes(bytes: &[u8], options: &Options) -> Outcome {
    match source::from_bytes(source::STDIN_NAME, bytes.to_vec()) {
        Ok(source) => run(&Inputs::from(vec![source]), options, true),
        Err(ReadError::Invalid(diagnostic)) => {
            let mut diagnostics = Diagnostics::default();
            diagnostics.push(diagnostic);
            Outcome {
                status: INVALID_INPUT,
                stdout: String::new(),
                diagnostics,
            }
        }
        Err(error @ ReadError::Io { .. }) => {
            let mut diagnostics = Diagnostics::default();
            diagnostics.push(crate::diag::Diagnostic::error(error.to_string()));
            Outcome {
                status: USAGE_OR_IO,
                stdout: String::new(),
                diagnostics,
            }
        }
    }
}
