//! The warnings of a successful run, written into the output (`--warnings-annotation`).
//!
//! Argo CD shows a plugin's stderr only when generation fails; on success argocd-cmp-server
//! writes it to its own log, so a warning would never reach the Application or the UI. With
//! this option the warnings travel with the manifests instead: one annotation,
//! [`WARNINGS_ANNOTATION`], on the ConfigMap of the first RolloutManager. It is metadata
//! outside the ConfigMap `data` that the pod template's checksum covers, so recording a warning,
//! or fixing it, changes that ConfigMap's metadata and never restarts the controller. Positions
//! are left out: a line added above a plugin must not change the annotation, or Argo CD would
//! show a diff with nothing to act on.

use crate::diag::{Diagnostic, Diagnostics, Location, Severity};

/// The annotation on the `argo-rollouts-config` ConfigMap that holds the warnings.
pub const WARNINGS_ANNOTATION: &str = "rollouts-render/warnings";

/// At most this many warnings are recorded: annotations count towards the object's 256 KiB
/// metadata limit, and the text is meant to be read in the Argo CD UI.
pub const MAX_WARNINGS: usize = 20;

/// The text of [`WARNINGS_ANNOTATION`] for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarningsNote(String);

impl WarningsNote {
    /// The warnings among `diagnostics`, in their order, each as `render` prints it but with
    /// its source file and no line or column; `None` when there are none.
    pub fn new(diagnostics: &Diagnostics) -> Option<Self> {
        let warnings: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .collect();
        if warnings.is_empty() {
            return None;
        }
        let mut entries: Vec<String> = warnings
            .iter()
            .take(MAX_WARNINGS)
            .map(|warning| without_position(warning).render(false))
            .collect();
        if warnings.len() > MAX_WARNINGS {
            entries.push(format!(
                "… and {} more; run `rollouts-render validate` on the directory to see them all",
                warnings.len() - MAX_WARNINGS
            ));
        }
        Some(Self(entries.join("\n")))
    }

    pub fn text(&self) -> &str {
        &self.0
    }
}

fn without_position(diagnostic: &Diagnostic) -> Diagnostic {
    let mut stable = diagnostic.clone();
    stable.location = diagnostic.location.as_ref().map(|location| Location {
        source: location.source.clone(),
        pos: None,
    });
    stable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{FieldPath, Pos};

    fn warning_at(line: u32, message: &str) -> Diagnostic {
        Diagnostic::warning(message)
            .at(Location {
                source: "rm.yaml".into(),
                pos: Some(Pos { line, col: 7 }),
            })
            .path(FieldPath::from("spec.plugins").key("metric").index(0))
            .hint("pin the binary")
    }

    #[test]
    fn warnings_are_recorded_without_positions() {
        let mut diagnostics = Diagnostics::default();
        diagnostics.push(warning_at(8, "no `sha256`"));
        diagnostics.push(Diagnostic::warning("unknown parameter `strcit` is ignored"));
        let note = WarningsNote::new(&diagnostics).unwrap();
        assert_eq!(
            note.text(),
            "rm.yaml: warning: spec.plugins.metric[0]: no `sha256`\n  hint: pin the binary\nwarning: unknown parameter `strcit` is ignored"
        );

        let mut moved = Diagnostics::default();
        moved.push(warning_at(80, "no `sha256`"));
        moved.push(Diagnostic::warning("unknown parameter `strcit` is ignored"));
        assert_eq!(WarningsNote::new(&moved), Some(note));
    }

    #[test]
    fn no_warnings_no_note_and_errors_are_not_warnings() {
        assert_eq!(WarningsNote::new(&Diagnostics::default()), None);
        let mut errors = Diagnostics::default();
        errors.push(Diagnostic::error("bad"));
        assert_eq!(WarningsNote::new(&errors), None);
    }

    #[test]
    fn the_note_stays_short() {
        let mut diagnostics = Diagnostics::default();
        for line in 0..(MAX_WARNINGS as u32 + 5) {
            diagnostics.push(warning_at(line, &format!("warning {line}")));
        }
        let text = WarningsNote::new(&diagnostics).unwrap().text().to_owned();
        assert_eq!(text.matches("warning:").count(), MAX_WARNINGS);
        assert!(text.ends_with(
            "… and 5 more; run `rollouts-render validate` on the directory to see them all"
        ));
    }
}
