//! `discover`: Argo CD's plugin discovery. Prints the manifest files of the application
//! directory that hold a RolloutManager; a directory with none is not this plugin's.

use std::path::Path;
use std::process::ExitCode;

use crate::input::source;

pub(crate) fn command(dir: &Path) -> ExitCode {
    let Ok(files) = source::directory_files(dir, false) else {
        return ExitCode::SUCCESS;
    };
    let found: String = files
        .iter()
        .filter(|file| {
            std::fs::read(file)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .is_some_and(|text| mentions_rollout_manager(&text))
        })
        .map(|path| format!("{}\n", path.display()))
        .collect();
    super::write_stdout(found.as_bytes())
}

/// Whether some line (outside comments) says `kind: RolloutManager`, in YAML or JSON form.
/// A file that does not parse still counts when its text names the kind, so that a broken
/// RolloutManager is reported by `generate` instead of being silently skipped.
pub fn mentions_rollout_manager(text: &str) -> bool {
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
