//! The only place that writes YAML or JSON text.
//!
//! Documents are written by serde-saphyr, configured once here: block style, two-space indent,
//! sequences not indented under their key and keys sorted (as `kubectl get -o yaml` writes
//! them), long lines never folded, multi-line strings as literal blocks, and every string that
//! a YAML 1.1 reader would take for something else quoted. The plugin lists inside the
//! ConfigMap are written by [`mod@plugin_list`] in the exact style of Go's yaml.v2, because the
//! operator writes them that way and the bytes must match.

mod plugin_list;
#[cfg(test)]
mod properties;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value as Json;

pub(crate) use plugin_list::plugin_list;

/// A single-line string in the exact style of Go's yaml.v2 `Marshal` (for the conformance
/// comparison of that style with Go).
pub(crate) fn yaml_v2_scalar(s: &str) -> String {
    plugin_list::scalar(s)
}

use crate::options::Format;

fn yaml_options() -> serde_saphyr::SerializerOptions {
    serde_saphyr::ser_options! {
        // Never fold: long strings (URLs) stay on one line, as yaml.v2 and kubectl write them.
        folded_wrap_chars: usize::MAX,
    }
}

/// Writes one stream: YAML documents separated by `---`, or pretty JSON objects one after
/// the other.
pub fn write_stream(
    documents: impl IntoIterator<Item = Json>,
    format: Format,
    out: &mut (impl std::io::Write + ?Sized),
) -> std::io::Result<()> {
    let mut text = String::new();
    for (index, document) in documents.into_iter().enumerate() {
        match format {
            Format::Yaml => {
                if index > 0 {
                    out.write_all(b"---\n")?;
                }
                text.clear();
                write_yaml(&document, &mut text);
                out.write_all(text.as_bytes())?;
            }
            Format::Json => {
                out.write_all(json(&document).as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

/// A whole stream as text.
pub fn stream(documents: &[Json], format: Format) -> String {
    let mut out = Vec::new();
    write_stream(documents.iter().cloned(), format, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("YAML and JSON are UTF-8")
}

/// One YAML document (no `---`), ending in a line break.
pub fn yaml(document: &Json) -> String {
    let mut text = String::new();
    write_yaml(document, &mut text);
    text
}

fn write_yaml(document: &Json, text: &mut String) {
    serde_saphyr::to_fmt_writer_with_options(text, &Sorted::yaml(document), yaml_options())
        .expect("JSON values serialize to YAML");
}

/// One pretty-printed JSON document, without a final line break.
pub fn json(document: &Json) -> String {
    serde_json::to_string_pretty(&Sorted::json(document)).expect("JSON values serialize")
}

/// Serializes a JSON value with object keys in byte order, whatever map type serde_json was
/// built with, and applies the YAML string policy.
struct Sorted<'a> {
    value: &'a Json,
    yaml: bool,
}

impl<'a> Sorted<'a> {
    fn yaml(value: &'a Json) -> Self {
        Self { value, yaml: true }
    }

    fn json(value: &'a Json) -> Self {
        Self { value, yaml: false }
    }

    fn child(&self, value: &'a Json) -> Self {
        Self {
            value,
            yaml: self.yaml,
        }
    }
}

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) if self.yaml && needs_double_quotes(s) => {
                serde_saphyr::DoubleQuoted(s.as_str()).serialize(serializer)
            }
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&self.child(item))?;
                }
                seq.end()
            }
            Json::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                // serde_json's map is ordered by key unless a dependency turned on its
                // `preserve_order` feature; sort only then.
                if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
                    for (key, value) in map {
                        out.serialize_entry(key, &self.child(value))?;
                    }
                } else {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    for (key, value) in entries {
                        out.serialize_entry(key, &self.child(value))?;
                    }
                }
                out.end()
            }
        }
    }
}

/// A multi-line string whose first non-empty line starts with a tab would be written as a
/// literal block without an indentation indicator, which Go's YAML reader rejects ("found a
/// tab character where an indentation space is expected"). Such strings are double-quoted.
fn needs_double_quotes(s: &str) -> bool {
    s.contains('\n')
        && s.split('\n')
            .find(|line| !line.trim_matches(' ').is_empty())
            .is_some_and(|line| line.trim_start_matches(' ').starts_with('\t'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documents_look_like_kubectl_output() {
        let doc = json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {"b": "1", "a": "yes"}},
            "data": {"list": "- a\n- b\n", "url": format!("https://example.com/{}", "x".repeat(100))},
            "items": [{"name": "n", "port": "p", "ports": [1, 2]}],
        });
        let expected = format!(
            "apiVersion: v1\ndata:\n  list: |\n    - a\n    - b\n  url: https://example.com/{}\nitems:\n- name: \"n\"\n  port: p\n  ports:\n  - 1\n  - 2\nkind: ConfigMap\nmetadata:\n  labels:\n    a: \"yes\"\n    b: \"1\"\n  name: x\n",
            "x".repeat(100)
        );
        assert_eq!(yaml(&doc), expected);
    }

    #[test]
    fn streams_separate_documents() {
        let docs = [json!({"a": 1}), json!({"b": 2})];
        assert_eq!(stream(&docs, Format::Yaml), "a: 1\n---\nb: 2\n");
        assert_eq!(
            stream(&docs, Format::Json),
            "{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n"
        );
    }

    #[test]
    fn tab_indented_multi_line_strings_are_double_quoted() {
        assert_eq!(yaml(&json!({"a": "\tx\ny"})), "a: \"\\tx\\ny\"\n");
        assert_eq!(yaml(&json!({"a": "\n\tx"})), "a: \"\\n\\tx\"\n");
        assert_eq!(yaml(&json!({"a": "x\n\ty\n"})), "a: |\n  x\n  \ty\n");
    }
}
