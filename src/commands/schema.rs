//! The commands that print what the program knows about itself: the JSON Schema and the CRD
//! of the RolloutManager, the plugin's `plugin.yaml`, shell completions and the man page.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, params};
use crate::{emit, schema};

pub(crate) fn json_schema() -> ExitCode {
    super::write_stdout(schema::json_schema_text().as_bytes())
}

pub(crate) fn crd() -> ExitCode {
    super::write_stdout(emit::yaml(&schema::crd()).as_bytes())
}

pub(crate) fn plugin_yaml() -> ExitCode {
    super::write_stdout(params::plugin_yaml_text().as_bytes())
}

pub(crate) fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rollouts-render", &mut out);
    super::write_stdout(&out)
}

pub(crate) fn man() -> ExitCode {
    let mut out = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => super::write_stdout(&out),
        Err(error) => super::usage_error(&error.to_string()),
    }
}
