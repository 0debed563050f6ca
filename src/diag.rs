//! Diagnostics as values.
//!
//! Every problem found anywhere in the pipeline becomes a [`Diagnostic`]: where it is (source
//! name, line, column), which field it concerns, what is wrong and, when we know one, how to fix
//! it. Stages collect them; only the binary's entry point formats and prints them, once.

use std::fmt;
use std::sync::Arc;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The input is rejected: exit status 1, nothing on stdout.
    Error,
    /// The input is rendered, but probably not as the author meant (an error with `--strict`).
    Warning,
}

/// A position in an input: 1-based line and column (columns count characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// Where a diagnostic points: a named source and, when known, a position in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub source: Arc<str>,
    pub pos: Option<Pos>,
}

/// One segment of a field path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path to a field inside a document, displayed as `spec.plugins.metric[1].sha256`.
///
/// Keys that are not plain identifiers (label keys such as `app.kubernetes.io/name`) are shown
/// in brackets and quotes, so the path stays unambiguous.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    pub fn root() -> Self {
        Self(Vec::new())
    }

    pub fn key(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        Self(segments)
    }

    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    pub fn from_segments(segments: &[Segment]) -> Self {
        Self(segments.to_vec())
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses the dotted form used in code (`"spec.plugins"`); indices are not supported here.
impl From<&str> for FieldPath {
    fn from(dotted: &str) -> Self {
        Self(
            dotted
                .split('.')
                .filter(|part| !part.is_empty())
                .map(|part| Segment::Key(part.to_owned()))
                .collect(),
        )
    }
}

fn is_identifier(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if is_identifier(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => write!(f, "[{}]", serde_json::Value::from(key.as_str()))?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One problem, with everything needed to print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub location: Option<Location>,
    pub path: FieldPath,
    pub message: String,
    pub hint: Option<String>,
}

/// The longest value a message echoes, in characters (room for a URL or a command); longer ones are cut (the location still
/// says where the whole value is). Argo CD keeps stderr in the Application's status.
pub const MAX_ECHOED_CHARS: usize = 200;

/// Cuts every value quoted in backticks or double quotes that is longer than
/// [`MAX_ECHOED_CHARS`]: `xxxx…` (1048576 bytes). A whole message is cut to a few such values.
pub fn shorten(message: String) -> String {
    if message.len() <= MAX_ECHOED_CHARS {
        return message;
    }
    let mut out = String::with_capacity(message.len().min(4 * MAX_ECHOED_CHARS));
    let mut rest = message.as_str();
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest.as_bytes()[open];
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // A double-quoted value may hold escaped quotes (it is JSON).
        let close = if quote == b'"' {
            let mut escaped = false;
            rest.char_indices()
                .find(|&(_, c)| {
                    let end = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                })
                .map(|(i, _)| i)
        } else {
            rest.find('`')
        };
        let Some(close) = close else {
            break;
        };
        let value = &rest[..close];
        match value.char_indices().nth(MAX_ECHOED_CHARS) {
            Some((cut, _)) => {
                out.push_str(&value[..cut]);
                out.push('…');
                out.push(quote as char);
                out.push_str(&format!(" ({} bytes)", value.len()));
            }
            None => {
                out.push_str(value);
                out.push(quote as char);
            }
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    // What no quote marks (a value cut short of its closing quote, say) is cut here.
    if let Some((cut, _)) = out.char_indices().nth(25 * MAX_ECHOED_CHARS) {
        out.truncate(cut);
        out.push('…');
    }
    out
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            location: None,
            path: FieldPath::root(),
            message: shorten(message.into()),
            hint: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(message)
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn path(mut self, path: FieldPath) -> Self {
        self.path = path;
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(shorten(hint.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl Diagnostic {
    /// The text of the diagnostic, with ANSI colours for a terminal when `colour` is set:
    /// `file:line:column: error: field.path: message`, then an indented `hint:` line.
    pub fn render(&self, colour: bool) -> String {
        let paint = |code: &str, text: &str| {
            if colour {
                format!("\x1b[{code}m{text}\x1b[0m")
            } else {
                text.to_owned()
            }
        };
        let mut out = String::new();
        match &self.location {
            Some(Location {
                source,
                pos: Some(pos),
            }) => out.push_str(&paint("1", &format!("{source}:{}:{}:", pos.line, pos.col))),
            Some(Location { source, pos: None }) => {
                out.push_str(&paint("1", &format!("{source}:")))
            }
            None => {}
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&match self.severity {
            Severity::Error => paint("1;31", "error:"),
            Severity::Warning => paint("1;33", "warning:"),
        });
        out.push(' ');
        if !self.path.is_root() {
            out.push_str(&format!("{}: ", self.path));
        }
        out.push_str(&self.message);
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n  {} {hint}", paint("1;36", "hint:")));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

/// The diagnostics of one run, in the order they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(other);
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    /// Turns every warning into an error (`--strict`).
    pub fn escalate_warnings(&mut self) {
        for diagnostic in &mut self.0 {
            diagnostic.severity = Severity::Error;
        }
    }

    /// Sorted by source, position and then message, so output does not depend on the order in
    /// which checks ran. Sources keep the order in which they were read.
    pub fn sorted(mut self, source_order: &[Arc<str>]) -> Self {
        let rank = |d: &Diagnostic| {
            let source = d
                .location
                .as_ref()
                .and_then(|l| source_order.iter().position(|s| *s == l.source))
                .unwrap_or(usize::MAX);
            let pos = d.location.as_ref().and_then(|l| l.pos).unwrap_or_default();
            (source, pos)
        };
        self.0.sort_by_key(rank);
        self
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Suggests the candidate closest to `word` (Levenshtein distance, case-insensitive), if it is
/// close enough to be a plausible typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(1) + 1;
    candidates
        .into_iter()
        .map(|candidate| {
            let distance = strsim::levenshtein(&lower, &candidate.to_ascii_lowercase());
            (distance, candidate)
        })
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_display_like_kubectl_explain() {
        let path = FieldPath::from("spec.plugins")
            .key("metric")
            .index(1)
            .key("sha256");
        assert_eq!(path.to_string(), "spec.plugins.metric[1].sha256");
        let label = FieldPath::from("spec.additionalMetadata.labels").key("app.kubernetes.io/name");
        assert_eq!(
            label.to_string(),
            r#"spec.additionalMetadata.labels["app.kubernetes.io/name"]"#
        );
    }

    #[test]
    fn diagnostics_print_location_path_message_and_hint() {
        let d = Diagnostic::error("must be 64 lowercase hex characters")
            .at(Location {
                source: "rm.yaml".into(),
                pos: Some(Pos { line: 3, col: 7 }),
            })
            .path(
                FieldPath::from("spec.plugins")
                    .key("metric")
                    .index(0)
                    .key("sha256"),
            )
            .hint("compute it with `sha256sum`");
        assert_eq!(
            d.to_string(),
            "rm.yaml:3:7: error: spec.plugins.metric[0].sha256: must be 64 lowercase hex characters\n  hint: compute it with `sha256sum`"
        );
        assert_eq!(
            d.render(true),
            "\x1b[1mrm.yaml:3:7:\x1b[0m \x1b[1;31merror:\x1b[0m spec.plugins.metric[0].sha256: must be 64 lowercase hex characters\n  \x1b[1;36mhint:\x1b[0m compute it with `sha256sum`"
        );
    }

    #[test]
    fn suggestions_find_plausible_typos_only() {
        let fields = ["name", "location", "sha256", "args"];
        assert_eq!(closest("nmae", fields), Some("name"));
        assert_eq!(closest("locaton", fields), Some("location"));
        assert_eq!(closest("Location", fields), Some("location"));
        assert_eq!(closest("completely-different", fields), None);
    }

    #[test]
    fn long_echoed_values_are_cut() {
        let value = "v".repeat(1 << 20);
        let message = shorten(format!("the label value `{value}` is too long"));
        assert_eq!(
            message,
            format!(
                "the label value `{}…` (1048576 bytes) is too long",
                "v".repeat(200)
            )
        );
        let quoted = shorten(format!(
            "expected a boolean, found the string \"{}\\\"x\"",
            "é".repeat(250)
        ));
        assert_eq!(
            quoted,
            format!(
                "expected a boolean, found the string \"{}…\" (503 bytes)",
                "é".repeat(200)
            )
        );
        let short = "the key `a` and the value `b` are fine".to_owned();
        assert_eq!(shorten(short.clone()), short);
        assert!(shorten("x".repeat(10_000)).chars().count() <= 25 * MAX_ECHOED_CHARS + 1);
    }
}
