//! `validate --manager-files`: the pre-commit hook. pre-commit passes every staged file that
//! matches the hook's pattern, most of them no Kubernetes manifest at all (workflows, Helm
//! values, compose files). Only files that hold a RolloutManager are judged, each on its own:
//! in a GitOps repository each one belongs to its own application, rendered alone.

use std::process::ExitCode;

use super::discover::mentions_rollout_manager;
use super::render;
use super::{INVALID_INPUT, SUCCESS};
use crate::cli::RenderArgs;
use crate::input::source::Inputs;

pub(crate) fn command(args: &RenderArgs) -> ExitCode {
    let colour = super::use_colour();
    let inputs = match super::read_inputs(&args.paths, &args.read_options(), colour) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let options = args.options.options();
    let mut status = SUCCESS;
    for source in inputs
        .sources
        .into_iter()
        .filter(|source| mentions_rollout_manager(&source.text))
    {
        let outcome = render::run(&Inputs::from(vec![source]), &options, false);
        super::print_diagnostics(&outcome.diagnostics, colour);
        if outcome.status != SUCCESS {
            status = INVALID_INPUT;
        }
    }
    ExitCode::from(status)
}
