//! One run of `render` or `validate` as a value: exit status, stdout text and diagnostics.
//! The binary prints an [`Outcome`]; tests and the fuzz target inspect it.

use crate::diag::Diagnostics;
use crate::input::source::{self, Inputs, ReadError};
use crate::options::{Format, Options};
use crate::pipeline::Rendered;
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
    /// What goes to stdout: only on success, and only once every input was checked.
    pub output: Option<(Rendered, Format)>,
    pub diagnostics: Diagnostics,
}

impl Outcome {
    fn failed(status: u8, diagnostics: Diagnostics) -> Self {
        Self {
            status,
            output: None,
            diagnostics,
        }
    }

    /// Writes the output (rendered while it is written).
    pub fn write_output(&self, out: &mut (impl std::io::Write + ?Sized)) -> std::io::Result<()> {
        match &self.output {
            Some((rendered, format)) => emit::write_stream(rendered.documents(), *format, out),
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
            let mut diagnostics = Diagnostics::default();
            diagnostics.push(diagnostic);
            Outcome::failed(INVALID_INPUT, diagnostics)
        }
        Err(error @ ReadError::Io { .. }) => {
            let mut diagnostics = Diagnostics::default();
            diagnostics.push(crate::diag::Diagnostic::error(error.to_string()));
            Outcome::failed(USAGE_OR_IO, diagnostics)
        }
    }
}

/// At most this many diagnostics are printed by `generate`: Argo CD stores stderr in the
/// Application's status, which should stay short.
pub const CMP_MAX_DIAGNOSTICS: usize = 20;

/// The Argo CD plugin's `generate`: options from the plugin environment (`env`, the process
/// environment passed in), the application directory already read into `inputs`.
pub fn generate(inputs: &Inputs, env: &std::collections::BTreeMap<String, String>) -> Outcome {
    let (options, parameter_diagnostics) = crate::cli::params::options(env);
    let mut diagnostics = Diagnostics::default();
    diagnostics.extend(parameter_diagnostics);
    if diagnostics.has_errors() {
        return Outcome::failed(INVALID_INPUT, diagnostics);
    }
    let mut outcome = run(inputs, &options, true);
    diagnostics.extend(outcome.diagnostics);
    outcome.diagnostics = diagnostics;
    outcome
}

/// stderr for Argo CD: plain text (no colour), at most [`CMP_MAX_DIAGNOSTICS`] entries.
pub fn cmp_stderr(diagnostics: &Diagnostics) -> String {
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

/// The Argo CD plugin's discovery: the manifest files of `dir` that hold a RolloutManager.
/// A file that does not parse still counts when its text names the kind, so that a broken
/// RolloutManager is reported by `generate` instead of being silently skipped.
pub fn discover(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(files) = source::directory_files(dir, false) else {
        return Vec::new();
    };
    files
        .into_iter()
        .filter(|file| {
            std::fs::read(file)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .is_some_and(|text| mentions_rollout_manager(&text))
        })
        .collect()
}

/// Whether some line (outside comments) says `kind: RolloutManager`, in YAML or JSON form.
fn mentions_rollout_manager(text: &str) -> bool {
    text.lines().any(|line| {
        let code = if line.trim_start().starts_with('#') {
            ""
        } else {
            line.split(" #").next().unwrap_or_default()
        };
        code.match_indices("kind").any(|(at, _)| {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| !matches!(c, ' ' | '\t' | '{' | ',' | '"' | '\'')) {
                return false;
            }
            let rest = code[at + 4..].trim_start_matches(['"', '\'']).trim_start();
            let Some(value) = rest.strip_prefix(':') else {
                return false;
            };
            let value = value.trim_start().trim_start_matches(['"', '\'']);
            value.strip_prefix("RolloutManager").is_some_and(|after| {
                after
                    .chars()
                    .next()
                    .is_none_or(|c| matches!(c, '"' | '\'' | ',' | '}' | ' ' | '\t'))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_finds_the_kind_in_yaml_and_json() {
        assert!(mentions_rollout_manager(
            "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\n"
        ));
        assert!(mentions_rollout_manager(
            "kind: \"RolloutManager\" # the manager\n"
        ));
        assert!(mentions_rollout_manager(
            "{\"apiVersion\": \"argoproj.io/v1alpha1\", \"kind\": \"RolloutManager\"}"
        ));
        assert!(!mentions_rollout_manager("kind: Rollout\n"));
        assert!(!mentions_rollout_manager(
            "# kind: RolloutManager is what we need\n"
        ));
    }
}
