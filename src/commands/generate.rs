//! `generate`: the Argo CD config management plugin's entry point. argocd-cmp-server runs it
//! in the application's directory with stdin closed; stdout carries manifests only, and stderr
//! goes to the UI and the Application status: plain, short, and never the content of Secrets.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use super::INVALID_INPUT;
use super::render::{self, Outcome};
use crate::cli::params;
use crate::diag::Diagnostics;
use crate::input::source::{DEFAULT_MAX_INPUT_BYTES, Inputs, ReadOptions};

/// `generate` reads with the default limit, which users cannot raise: the sidecar's memory
/// limit in `deploy/` is sized for it (README, "Reading YAML").
const GENERATE_READ: ReadOptions = ReadOptions {
    recursive: false,
    max_bytes: DEFAULT_MAX_INPUT_BYTES,
    fixed_limit: true,
};

/// At most this many diagnostics are printed by `generate`: Argo CD stores stderr in the
/// Application's status, which should stay short.
pub const CMP_MAX_DIAGNOSTICS: usize = 20;

/// The run, with options from the plugin environment (`env`, the process environment passed
/// in) and the application directory already read into `inputs`.
pub fn outcome(inputs: &Inputs, env: &BTreeMap<String, String>) -> Outcome {
    let (options, parameter_diagnostics) = params::options(env);
    let mut diagnostics = Diagnostics::default();
    diagnostics.extend(parameter_diagnostics);
    let Some(options) = options else {
        return Outcome::failed(INVALID_INPUT, diagnostics);
    };
    let mut outcome = render::run(inputs, &options, true);
    diagnostics.extend(outcome.diagnostics);
    outcome.diagnostics = diagnostics;
    outcome
}

/// stderr for Argo CD: plain text (no colour), at most [`CMP_MAX_DIAGNOSTICS`] entries.
pub fn stderr_text(diagnostics: &Diagnostics) -> String {
    let all: Vec<_> = diagnostics.iter().collect();
    let mut out = String::new();
    for diagnostic in all.iter().take(CMP_MAX_DIAGNOSTICS) {
        out.push_str(&diagnostic.render(false));
        out.push('\n');
    }
    if all.len() > CMP_MAX_DIAGNOSTICS {
        out.push_str(&format!(
            "… and {} more; run `rollouts-render validate` on the directory to see them all\n",
            all.len() - CMP_MAX_DIAGNOSTICS
        ));
    }
    out
}

pub(crate) fn command(dir: &Path) -> ExitCode {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    // Plain text for Argo CD, whatever the terminal.
    let mut inputs = match super::read_inputs(&[dir.to_path_buf()], &GENERATE_READ, false) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    // Name the directory as Argo CD users know it: its path in the repository.
    if let Some(path) = env.get("ARGOCD_APP_SOURCE_PATH").filter(|p| !p.is_empty()) {
        inputs.names = vec![format!("the application directory `{path}`")];
    }
    let outcome = outcome(&inputs, &env);
    super::eprint(&stderr_text(&outcome.diagnostics));
    render::finish(&outcome)
}
