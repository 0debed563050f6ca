//! Plugin lists in the exact bytes of Go's yaml.v2.
//!
//! The operator writes each list with `yaml.Marshal([]pluginItem{Name, Location, Sha256})`;
//! for every list it accepts, ours must be the same bytes (a user switching from the operator
//! sees no diff, and the checksum annotation only changes when the plugins do). Scalar styles
//! follow yaml.v2: plain when the text reads back as the same string, double-quoted when a
//! YAML 1.1 reader would take it for a number, boolean, null or timestamp, single-quoted when
//! it cannot be plain (`'---/x'`). The extension fields the operator never writes (`args`,
//! `disabled`, `headersFrom`) follow, written plain only when obviously safe and double-quoted
//! otherwise.

use std::fmt::Write;

use crate::input::yaml11;
use crate::spec::Plugin;

/// The ConfigMap value for one plugin list: `[]\n` when empty.
pub fn plugin_list(plugins: &[Plugin]) -> String {
    if plugins.is_empty() {
        return "[]\n".to_owned();
    }
    let mut out = String::new();
    for plugin in plugins {
        let _ = writeln!(out, "- name: {}", scalar(&plugin.name));
        let _ = writeln!(out, "  location: {}", scalar(&plugin.location));
        let _ = writeln!(out, "  sha256: {}", scalar(&plugin.sha256));
        if !plugin.args.is_empty() {
            out.push_str("  args:\n");
            for arg in &plugin.args {
                let _ = writeln!(out, "  - {}", extension_scalar(arg));
            }
        }
        if plugin.disabled {
            out.push_str("  disabled: true\n");
        }
        if !plugin.headers_from.is_empty() {
            out.push_str("  headersFrom:\n");
            for secret in &plugin.headers_from {
                let _ = writeln!(
                    out,
                    "  - secretRef:\n      name: {}",
                    extension_scalar(secret)
                );
            }
        }
    }
    out
}

/// A single-line scalar in yaml.v2's style. Line breaks and whitespace, which validation keeps
/// out of names, locations and digests, are double-quoted rather than folded.
pub(super) fn scalar(s: &str) -> String {
    if s.contains(char::is_whitespace) || !s.chars().all(is_printable) {
        return double_quoted(s);
    }
    if !yaml11::marshals_plain(s) {
        return double_quoted(s);
    }
    if block_plain_allowed(s) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Values the operator never writes: plain only if yaml.v2 would write them plain and they hold
/// no whitespace (which yaml.v2 would fold at 80 columns); otherwise double-quoted.
fn extension_scalar(s: &str) -> String {
    if !s.is_empty()
        && !s.contains(char::is_whitespace)
        && s.chars().all(is_printable)
        && yaml11::marshals_plain(s)
        && block_plain_allowed(s)
    {
        s.to_owned()
    } else {
        double_quoted(s)
    }
}

/// libyaml's `is_printable`, which yaml.v2 uses to decide what must be escaped.
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        && c != '\u{FEFF}'
}

/// libyaml's analysis of whether a single-line, whitespace-free string may be written plain in
/// block context (`yaml_emitter_analyze_scalar`).
fn block_plain_allowed(s: &str) -> bool {
    if s.is_empty() || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let followed_by_blank = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        let indicator = if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => true,
                '?' | ':' | '-' => followed_by_blank,
                _ => false,
            }
        } else {
            *c == ':' && followed_by_blank
        };
        if indicator {
            return false;
        }
    }
    true
}

/// A double-quoted scalar with libyaml's escapes; valid for YAML 1.1 and 1.2 readers.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{B}' => out.push_str("\\v"),
            '\u{C}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1B}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{A0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if is_printable(c) => out.push(c),
            c if u32::from(c) <= 0xFF => {
                let _ = write!(out, "\\x{:02X}", u32::from(c));
            }
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(name: &str, location: &str, sha256: &str) -> Plugin {
        Plugin {
            name: name.into(),
            location: location.into(),
            sha256: sha256.into(),
            args: Vec::new(),
            disabled: false,
            headers_from: Vec::new(),
            rules: Vec::new(),
            image: None,
        }
    }

    /// The example from the operator's own ConfigMap, byte for byte.
    #[test]
    fn matches_the_operator_example() {
        let list = plugin_list(&[
            plugin(
                "argoproj-labs/gatewayAPI",
                "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.4.0/gatewayapi-plugin-linux-amd64",
                "d00ce783dc0eb30ac2e203bdfdac5300a4b47695267a7fa57474e0a4a7376afe",
            ),
            plugin(
                "argoproj-labs/openshift",
                crate::render::tables::OPENSHIFT_PLUGIN_LOCATION,
                "",
            ),
        ]);
        assert_eq!(
            list,
            "- name: argoproj-labs/gatewayAPI\n  location: https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.4.0/gatewayapi-plugin-linux-amd64\n  sha256: d00ce783dc0eb30ac2e203bdfdac5300a4b47695267a7fa57474e0a4a7376afe\n- name: argoproj-labs/openshift\n  location: https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-openshift/releases/download/commit-8d0b3c6c5c18341f9f019cf1015b56b0d0c6085b/rollouts-plugin-trafficrouter-openshift-linux-amd64\n  sha256: \"\"\n"
        );
        assert_eq!(plugin_list(&[]), "[]\n");
    }

    #[test]
    fn scalars_are_styled_as_yaml_v2_styles_them() {
        let digits = "1".repeat(64);
        let overflowing = format!("1e{}", "2".repeat(62));
        let zero = format!("0e{}", "2".repeat(62));
        let cases = [
            (
                "argoproj-labs/gatewayAPI",
                "argoproj-labs/gatewayAPI".to_owned(),
            ),
            ("---/x", "'---/x'".to_owned()),
            ("-a/b", "-a/b".to_owned()),
            ("2024-01-01/x", "2024-01-01/x".to_owned()),
            ("https://h/a:", "'https://h/a:'".to_owned()),
            ("yes", "\"yes\"".to_owned()),
            ("2024-01-01", "\"2024-01-01\"".to_owned()),
            (digits.as_str(), format!("\"{digits}\"")),
            (overflowing.as_str(), overflowing.clone()),
            (zero.as_str(), format!("\"{zero}\"")),
            ("", "\"\"".to_owned()),
        ];
        for (input, expected) in cases {
            assert_eq!(scalar(input), expected, "{input}");
        }
    }

    #[test]
    fn extension_fields_follow_in_a_fixed_order() {
        let mut step = plugin("step/e2e", "file://plugin-bin/e2e", "");
        step.args = vec!["--seed".into(), "42".into(), "a b".into(), "on".into()];
        step.disabled = true;
        step.headers_from = vec!["token".into()];
        assert_eq!(
            plugin_list(&[step]),
            "- name: step/e2e\n  location: file://plugin-bin/e2e\n  sha256: \"\"\n  args:\n  - --seed\n  - \"42\"\n  - \"a b\"\n  - \"on\"\n  disabled: true\n  headersFrom:\n  - secretRef:\n      name: token\n"
        );
    }

    #[test]
    fn double_quoting_escapes_what_yaml_would_fold_or_reject() {
        assert_eq!(
            double_quoted("a\"b\\c\td\u{2028}\u{85}\u{1F600}"),
            "\"a\\\"b\\\\c\\td\\L\\N\\U0001F600\""
        );
    }
}
