//! `import`: an `argo-rollouts-config` ConfigMap (alone or in a whole installation) to a
//! RolloutManager (see [`crate::import`]).

use std::process::ExitCode;

use super::INVALID_INPUT;
use crate::cli::ImportArgs;
use crate::emit;
use crate::options::Format;

pub(crate) fn command(args: &ImportArgs) -> ExitCode {
    let colour = super::use_colour();
    let inputs = match super::read_inputs(&args.paths, &args.read_options(), colour) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    match crate::import::import(&inputs, &args.name) {
        Ok(imported) => {
            super::print_diagnostics(&imported.warnings, colour);
            super::write_stdout(emit::stream(&imported.documents, Format::Yaml).as_bytes())
        }
        Err(diagnostics) => {
            super::print_diagnostics(&diagnostics, colour);
            ExitCode::from(INVALID_INPUT)
        }
    }
}
