//! YAML 1.1 as Kubernetes reads it.
//!
//! Kubernetes, Argo CD and Argo Rollouts parse YAML with Go's `sigs.k8s.io/yaml`, a fork of
//! `gopkg.in/yaml.v2`, which types plain scalars by YAML 1.1 rules: `yes`, `on`, `y` are
//! booleans, `0755` is octal, `1_000` is an integer. This module reproduces that resolution
//! (`resolve` in yaml.v2's resolve.go: no Rust crate implements YAML 1.1's types, and the
//! YAML 1.2 readers deliberately do not) so that
//! - passthrough documents reach the output with exactly the data `kubectl apply` would send,
//! - the ConfigMap writer can choose quoting byte-for-byte as yaml.v2 does,
//! - tests can prove that everything we write reads back as the same strings.

use serde_json::{Map, Number, Value as Json};

use crate::diag::{Diagnostic, Diagnostics, FieldPath};
use crate::input::yaml::{self, Document, Node, Style, Value};

/// What a plain scalar means to a YAML 1.1 reader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// Looks like a timestamp; yaml.v2 still decodes it as a string into untyped values.
    Timestamp,
    Str,
}

/// Resolves a plain scalar the way yaml.v2 does.
pub fn resolve(text: &str) -> Plain {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Plain::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Plain::Bool(false);
        }
        ".nan" | ".NaN" | ".NAN" => return Plain::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Plain::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Plain::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match text.as_bytes()[0] {
        b'.' => match go_parse_float(text) {
            Some(f) => Plain::Float(f),
            None => Plain::Str,
        },
        b'0'..=b'9' | b'+' | b'-' => {
            if is_timestamp(text) {
                return Plain::Timestamp;
            }
            let stripped = text.replace('_', "");
            if let Some(i) = go_parse_int(&stripped) {
                return Plain::Int(i);
            }
            if let Some(u) = go_parse_uint(&stripped) {
                return Plain::Uint(u);
            }
            if is_yaml_float(&stripped)
                && let Some(f) = finite(stripped.parse::<f64>().ok())
            {
                return Plain::Float(f);
            }
            // yaml.v2 then tries binary once more, with strconv's sign rules: `0b+1` is 1,
            // `0b-1` is -1, `-0b1` is -1.
            if let Some(rest) = stripped.strip_prefix("0b") {
                if let Some(i) = go_parse_int_radix(rest, 2) {
                    return Plain::Int(i);
                }
                if let Some(u) = go_parse_uint_radix(rest, 2) {
                    return Plain::Uint(u);
                }
            } else if let Some(rest) = stripped.strip_prefix("-0b")
                && let Some(i) = go_parse_int_radix(&format!("-{rest}"), 2)
            {
                return Plain::Int(i);
            }
            Plain::Str
        }
        _ => Plain::Str,
    }
}

/// Go's `strconv.ParseFloat` reports overflow as an error, Rust's parse returns infinity.
fn finite(f: Option<f64>) -> Option<f64> {
    f.filter(|f| f.is_finite())
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, yaml.v2's float pattern.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat` for the scalars yaml.v2 hands it unmodified (those starting with
/// `.`): decimal syntax, where `_` may only separate digits.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c == b'_' {
            let before = i.checked_sub(1).map(|j| b[j]);
            let after = b.get(i + 1);
            if !before.is_some_and(|c| c.is_ascii_digit()) || !after.is_some_and(u8::is_ascii_digit)
            {
                return None;
            }
        }
    }
    let stripped = s.replace('_', "");
    if !is_yaml_float(&stripped) {
        return None;
    }
    finite(stripped.parse().ok())
}

/// Splits Go's base prefix off (`ParseInt(s, 0, 64)` rules): `0x`, `0b`, `0o`, or a leading `0`
/// for octal.
fn base_and_digits(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'0' {
        match b[1] {
            b'x' | b'X' => return (16, &s[2..]),
            b'b' | b'B' => return (2, &s[2..]),
            b'o' | b'O' => return (8, &s[2..]),
            _ => return (8, &s[1..]),
        }
    }
    (10, s)
}

/// `strconv.ParseUint(s, 0, 64)` (underscores are gone already).
fn go_parse_uint(s: &str) -> Option<u64> {
    let (base, digits) = base_and_digits(s);
    go_parse_uint_radix(digits, base)
}

/// `strconv.ParseUint(s, base, 64)`: digits only, no sign.
fn go_parse_uint_radix(digits: &str, base: u32) -> Option<u64> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    u64::from_str_radix(digits, base).ok()
}

/// `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    go_parse_signed(s, go_parse_uint)
}

/// `strconv.ParseInt(s, base, 64)`.
fn go_parse_int_radix(s: &str, base: u32) -> Option<i64> {
    go_parse_signed(s, |digits| go_parse_uint_radix(digits, base))
}

/// ParseInt's sign, then the magnitude as ParseUint reads it, in range.
fn go_parse_signed(s: &str, magnitude: impl Fn(&str) -> Option<u64>) -> Option<i64> {
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = magnitude(unsigned)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// yaml.v2 first checks `YYYY-` and then tries a few layouts with `time.Parse`; the layouts
/// only use digits, `-`, `:`, `.`, `T`, `t`, `Z`, `+` and space, so this character check is
/// exact for every string that fails it and conservative for the rest.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 4
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b.iter()
            .all(|c| c.is_ascii_digit() || b"-:.Ttz Z+".contains(c))
}

/// yaml.v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (whole, fraction) = match body.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (body, None),
    };
    if fraction.is_some_and(|f| !f.chars().all(|c| c.is_ascii_digit() || c == '_')) {
        return false;
    }
    let mut parts = whole.split(':');
    let Some(head) = parts.next() else {
        return false;
    };
    let head_ok = head.starts_with(|c: char| c.is_ascii_digit())
        && head.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mut sixties = 0;
    for part in parts {
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, d] => (b'0'..=b'5').contains(a) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        sixties += 1;
    }
    head_ok && sixties > 0
}

/// Whether yaml.v2's `Marshal` would write this string plain (it would read back as the same
/// string). Strings for which this is false are double-quoted by yaml.v2.
pub fn marshals_plain(s: &str) -> bool {
    matches!(resolve(s), Plain::Str) && !is_base60_float(s)
}

/// Whether a scalar written with one of the typed core tags (`!!int 5`) is a value of that
/// type, as yaml.v2 requires (it refuses `!!int hunter2`).
pub fn fits_tag(tag: &str, text: &str) -> bool {
    matches!(
        (tag, resolve(text)),
        (yaml::TAG_INT, Plain::Int(_) | Plain::Uint(_))
            | (
                yaml::TAG_FLOAT,
                Plain::Float(_) | Plain::Int(_) | Plain::Uint(_)
            )
            | (yaml::TAG_BOOL, Plain::Bool(_))
            | (yaml::TAG_NULL, Plain::Null)
    )
}

/// Why a tag is refused, and what Kubernetes would have made of the value.
pub fn unsupported_tag(tag: &str) -> String {
    let shown = yaml::display_tag(tag);
    let kubernetes = match tag {
        "tag:yaml.org,2002:binary" => "decode it from base64",
        "tag:yaml.org,2002:timestamp" => "turn it into an RFC 3339 time",
        _ if tag.starts_with('!') => "ignore the tag and read the value as if it had none",
        _ => "refuse it or read it its own way",
    };
    format!(
        "unsupported YAML tag `{shown}`: Kubernetes would {kubernetes}; write the value it should get, without the tag"
    )
}

/// Converts a passthrough document to JSON data exactly as Kubernetes would read it.
pub fn to_json(document: &Document, diagnostics: &mut Diagnostics) -> Option<Json> {
    let mut converter = Converter {
        document,
        diagnostics,
        failed: false,
    };
    let value = converter.node(&document.root, &FieldPath::root(), 0);
    (!converter.failed).then_some(value)
}

struct Converter<'a> {
    document: &'a Document,
    diagnostics: &'a mut Diagnostics,
    failed: bool,
}

impl Converter<'_> {
    fn error(&mut self, node: &Node, path: &FieldPath, message: String) -> Json {
        self.failed = true;
        self.diagnostics.push(
            Diagnostic::error(message)
                .at(self.document.location(node.pos))
                .path(path.clone()),
        );
        Json::Null
    }

    fn node(&mut self, node: &Node, path: &FieldPath, depth: usize) -> Json {
        if depth > yaml::MAX_DEPTH {
            return self.error(node, path, "the document nests too deeply".into());
        }
        match (&node.value, node.tag.as_deref()) {
            (Value::Scalar { text, style }, tag) => self.scalar(node, path, text, *style, tag),
            (Value::Seq(items), None | Some(yaml::TAG_SEQ)) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.node(item, &path.index(i), depth + 1))
                    .collect(),
            ),
            (Value::Map(entries), None | Some(yaml::TAG_MAP)) => {
                let mut map = Map::new();
                // The keys that changed on the way (`yes` became `true`), by what they became:
                // two keys can only collide if one of them changed (the same text twice is a
                // duplicate key, refused when composing). Small, unlike a map of every key.
                let mut changed: std::collections::HashMap<String, &str> = Default::default();
                for entry in entries {
                    let Some(key) = self.key(&entry.key, path) else {
                        continue;
                    };
                    let text = entry.key.scalar().unwrap_or_default();
                    if map.contains_key(&key) {
                        let first = changed.get(key.as_str()).copied().unwrap_or(key.as_str());
                        // Distinct YAML keys, one JSON key: sigs.k8s.io/yaml keeps whichever
                        // its map iteration meets last, a different one from run to run.
                        self.error(
                            &entry.key,
                            path,
                            format!(
                                "`{first}` and `{text}` both become the key `{key}` for Kubernetes (YAML 1.1), which then keeps one of them at random"
                            ),
                        );
                        continue;
                    }
                    if key != text {
                        changed.insert(key.clone(), text);
                    }
                    let value = self.node(&entry.value, &path.key(&key), depth + 1);
                    map.insert(key, value);
                }
                Json::Object(map)
            }
            (_, Some(tag)) => self.error(node, path, unsupported_tag(tag)),
        }
    }

    fn scalar(
        &mut self,
        node: &Node,
        path: &FieldPath,
        text: &str,
        style: Style,
        tag: Option<&str>,
    ) -> Json {
        let plain = match (style, tag) {
            (_, Some(yaml::TAG_STR)) => return Json::String(text.to_owned()),
            (Style::Plain, None) => resolve(text),
            (_, None) => return Json::String(text.to_owned()),
            (
                _,
                Some(tag @ (yaml::TAG_INT | yaml::TAG_FLOAT | yaml::TAG_BOOL | yaml::TAG_NULL)),
            ) => {
                if !fits_tag(tag, text) {
                    // The value is not repeated: it may be the content of a Secret.
                    return self.error(
                        node,
                        path,
                        format!(
                            "the value is not a valid `{}`, and Kubernetes' YAML reader refuses the document",
                            yaml::display_tag(tag)
                        ),
                    );
                }
                resolve(text)
            }
            (_, Some(tag)) => return self.error(node, path, unsupported_tag(tag)),
        };
        match plain {
            Plain::Null => Json::Null,
            Plain::Bool(b) => Json::Bool(b),
            Plain::Int(i) => Json::from(i),
            Plain::Uint(u) => Json::from(u),
            Plain::Float(f) => match Number::from_f64(f) {
                Some(n) => Json::Number(n),
                None => self.error(
                    node,
                    path,
                    format!("`{text}` is not a finite number, which JSON (and so Kubernetes) cannot represent"),
                ),
            },
            Plain::Timestamp | Plain::Str => Json::String(text.to_owned()),
        }
    }

    /// Mapping keys become strings as `sigs.k8s.io/yaml` makes them: a plain `yes` key turns
    /// into `"true"`. That is faithful but rarely meant, so it is also reported.
    fn key(&mut self, key: &Node, path: &FieldPath) -> Option<String> {
        let Value::Scalar { text, style } = &key.value else {
            self.error(
                key,
                path,
                format!("mapping keys must be strings, found {}", key.describe()),
            );
            return None;
        };
        if *style != Style::Plain || key.tag.as_deref() == Some(yaml::TAG_STR) {
            return Some(text.clone());
        }
        let converted = match resolve(text) {
            Plain::Str | Plain::Timestamp => return Some(text.clone()),
            Plain::Null => "null".to_owned(),
            Plain::Bool(b) => b.to_string(),
            Plain::Int(i) => i.to_string(),
            Plain::Uint(u) => u.to_string(),
            Plain::Float(_) => {
                self.error(
                    key,
                    path,
                    format!("the key `{text}` is a number, not a string; quote it"),
                );
                return None;
            }
        };
        if converted == *text {
            // `9000` is the integer 9000, and the key "9000" again: nothing changes.
            return Some(converted);
        }
        self.diagnostics.push(
            Diagnostic::warning(format!(
                "the key `{text}` is read as `{converted}` by Kubernetes (YAML 1.1)"
            ))
            .at(self.document.location(key.pos))
            .path(path.clone())
            .hint(format!("write \"{text}\" in quotes to keep it as written")),
        );
        Some(converted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_go_yaml_v2() {
        let cases: &[(&str, Plain)] = &[
            ("yes", Plain::Bool(true)),
            ("Y", Plain::Bool(true)),
            ("on", Plain::Bool(true)),
            ("OFF", Plain::Bool(false)),
            ("n", Plain::Bool(false)),
            ("~", Plain::Null),
            ("", Plain::Null),
            ("1_000", Plain::Int(1000)),
            ("0b101", Plain::Int(5)),
            ("0b+1", Plain::Int(1)),
            ("0b-1", Plain::Int(-1)),
            ("-0b1", Plain::Int(-1)),
            ("-0b-1", Plain::Str),
            ("0o17", Plain::Int(15)),
            ("0755", Plain::Int(493)),
            ("0x1f", Plain::Int(31)),
            ("-0x1f", Plain::Int(-31)),
            ("+12", Plain::Int(12)),
            ("18446744073709551615", Plain::Uint(u64::MAX)),
            ("08", Plain::Float(8.0)),
            (".5", Plain::Float(0.5)),
            ("1e3", Plain::Float(1000.0)),
            ("+.5", Plain::Float(0.5)),
            ("2001-12-14", Plain::Timestamp),
            ("1:20", Plain::Str),
            ("1e400", Plain::Str),
            ("yEs", Plain::Str),
            ("0x", Plain::Str),
            ("-", Plain::Str),
            ("._5", Plain::Str),
            ("abc", Plain::Str),
            ("=", Plain::Str),
            ("<<", Plain::Str),
        ];
        for (text, expected) in cases {
            assert_eq!(resolve(text), *expected, "{text}");
        }
        assert!(matches!(resolve(".nan"), Plain::Float(f) if f.is_nan()));
    }

    #[test]
    fn marshals_plain_like_yaml_v2() {
        for quoted in [
            "true",
            "yes",
            "on",
            "Y",
            "null",
            "~",
            "123",
            "0123",
            "1e3",
            "0x1f",
            "2024-01-01",
            "1:20",
            "",
        ] {
            assert!(!marshals_plain(quoted), "{quoted}");
        }
        let huge_exponent = format!("1e{}", "3".repeat(62));
        let zero_mantissa = format!("0e{}", "3".repeat(62));
        for plain in [
            "https://example.com/x",
            "ab:c",
            "argoproj-labs/gatewayAPI",
            "2024-01-01/x",
            huge_exponent.as_str(),
        ] {
            assert!(marshals_plain(plain), "{plain}");
        }
        assert!(!marshals_plain(&zero_mantissa));
    }
}
