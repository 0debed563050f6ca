//! `import`: an `argo-rollouts-config` ConfigMap (alone or in a whole installation) to a
//! RolloutManager (see [`crate::import`]); with `--helm-values`, the argo-helm chart's values
//! (see [`crate::import::helm`]).

use std::path::Path;
use std::process::ExitCode;

use super::INVALID_INPUT;
use crate::cli::ImportArgs;
use crate::emit;
use crate::options::Format;

pub(crate) fn command(args: &ImportArgs) -> ExitCode {
    if let Some(values) = &args.helm_values {
        return helm(values, args);
    }
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

/// `--helm-values`: the RolloutManager on stdout; on stderr the problems, then the report.
fn helm(values: &Path, args: &ImportArgs) -> ExitCode {
    let colour = super::use_colour();
    let inputs = match super::read_inputs(&[values.to_path_buf()], &args.read_options(), colour) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    match crate::import::helm::import(&inputs, &args.name) {
        Ok(imported) => {
            super::print_diagnostics(&imported.warnings, colour);
            super::eprint(&imported.report.render());
            super::write_stdout(emit::yaml(&imported.document).as_bytes())
        }
        Err(diagnostics) => {
            super::print_diagnostics(&diagnostics, colour);
            ExitCode::from(INVALID_INPUT)
        }
    }
}
