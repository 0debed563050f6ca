//! YAML documents for the `yaml-document` rule: the renderer's reading of a passthrough
//! object ([`yaml::parse`] then [`yaml11::to_json`]) against `sigs.k8s.io/yaml.YAMLToJSON`,
//! what `kubectl apply` and Argo CD run.

use serde_json::{Value as Json, json};

use crate::diag::Diagnostics;
use crate::input::{yaml, yaml11};

/// Refusals the renderer makes on purpose where Go reads the document: each names the
/// message that shows it, so the Go side can count them apart from disagreements.
const POLICIES: &[(&str, &str)] = &[
    // Go's non-strict decoding keeps the last value: the earlier one is silently lost.
    ("duplicate-key", "duplicate key"),
    // Go keeps one of the two, by map iteration order: a different one each run.
    ("colliding-keys", "both become the key"),
    ("number-key", "is a number, not a string"),
    // Go reads the value its own way (a custom tag ignored, base64 decoded).
    ("unsupported-tag", "unsupported YAML tag"),
    // Go keeps the colon in the scalar (`{a:, b}` has the key `a:`), rarely what was meant.
    ("flow-colon", "colon included"),
    // Go takes the merged value over a key written before `<<`.
    ("merge-over-key", "the merge key `<<` replaces"),
];

/// The renderer's reading of one document, as the Go side prints `YAMLToJSON`'s.
pub fn verdict(input: &str) -> Json {
    let mut diagnostics = Diagnostics::default();
    let documents = match yaml::parse(&"verdict".into(), input, &mut diagnostics) {
        Ok(documents) => documents,
        Err(_) => return json!({"accept": false}),
    };
    let value = match documents.first() {
        None => Some(Json::Null),
        Some(document) => yaml11::to_json(document, &mut diagnostics),
    };
    let errors: Vec<_> = diagnostics.iter().filter(|d| d.is_error()).collect();
    let policy = |message: &str| {
        POLICIES
            .iter()
            .find(|(_, needle)| message.contains(needle))
            .map(|(name, _)| *name)
    };
    match value {
        Some(value) if errors.is_empty() => json!({"accept": true, "json": value}),
        // A refusal on purpose when any error is one: what Go then makes of the document
        // depends on the value it silently dropped (a subtree with a null key or `.inf`
        // that a later duplicate replaces is never converted there).
        _ => match errors.iter().find_map(|e| policy(&e.message)) {
            Some(name) => json!({"accept": false, "policy": name}),
            None => json!({"accept": false}),
        },
    }
}

use super::corpus::{Rng, plain_scalar};

/// A random document, biased to where YAML readers differ: merge keys before and after
/// explicit keys, keys that resolve alike (`yes`, `"true"`, `~`, `1`, `"1"`), explicit tags
/// that do or do not fit, anchors and aliases, flow keys followed by `:,`, tabs after `-`
/// and `:`, block and quoted scalars.
pub fn document(rng: &mut Rng) -> String {
    let hostile = rng.chance(50);
    let mut writer = Writer {
        rng,
        hostile,
        out: String::new(),
        anchors: Vec::new(),
        next_anchor: 0,
    };
    match writer.rng.below(10) {
        0 => writer.block_seq(0, 0),
        1 => {
            let flow = writer.flow(0);
            writer.out.push_str(&flow);
            writer.out.push('\n');
        }
        _ => writer.block_map(0, 0, false),
    }
    writer.out
}

const KEYS: &[&str] = &[
    "a",
    "b",
    "c",
    "name",
    "data",
    "a",
    "b",
    "yes",
    "\"true\"",
    "true",
    "on",
    "~",
    "null",
    "\"null\"",
    "1",
    "\"1\"",
    "01",
    "0x1",
    "1.5",
    "'a'",
    "\"a\"",
    "y",
    "n",
    "NO",
    "1e3",
    "2001-12-14",
    "? x",
];
/// Keys no reader refuses, some still typed by YAML 1.1 (`on`, `01`).
const CLEAN_KEYS: &[&str] = &[
    "a",
    "b",
    "c",
    "name",
    "data",
    "on",
    "01",
    "\"yes\"",
    "0x1f",
    "2001-12-14",
    "'~'",
    "x.y",
];
const CLEAN_TAGGED: &[&str] = &[
    "!!str 12",
    "!!int 12",
    "!!int 0x1f",
    "!!float 1",
    "!!bool yes",
    "!!null ~",
    "!!str",
];
const TAGGED: &[&str] = &[
    "!!str 12",
    "!!str yes",
    "!!int 12",
    "!!int hunter2",
    "!!int 0x1f",
    "!!float 1",
    "!!float x",
    "!!bool yes",
    "!!bool maybe",
    "!!null ~",
    "!!null x",
    "!custom x",
    "!!str",
    "!!binary aGk=",
    "!!timestamp 2001-12-14",
    "!!map {a: 1}",
    "!!seq [1]",
];
const FLOW_PLAIN: &[&str] = &[
    "x",
    "1",
    "yes",
    "~",
    "0x1f",
    "1.5",
    "-1",
    "a:b",
    "a b",
    "true",
    "null",
    "0b1",
    "0b+1",
    ".inf",
    "1_000",
    "0755",
    "2001-12-14",
    "<<",
];

struct Writer<'a> {
    rng: &'a mut Rng,
    /// Whether to write what some reader refuses (tabs, null keys, bad tags, `a:,`); half
    /// the documents are clean, so that most of those are read by both.
    hostile: bool,
    out: String,
    /// Anchors of finished nodes, the only ones an alias may name.
    anchors: Vec<String>,
    next_anchor: usize,
}

impl Writer<'_> {
    fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn separator(&mut self) -> &'static str {
        if self.hostile && self.rng.chance(4) {
            "\t"
        } else {
            " "
        }
    }

    fn alias(&mut self) -> Option<String> {
        (!self.anchors.is_empty()).then(|| {
            let i = self.rng.below(self.anchors.len());
            format!("*{}", self.anchors[i])
        })
    }

    fn new_anchor(&mut self) -> String {
        self.next_anchor += 1;
        format!("a{}", self.next_anchor)
    }

    fn key(&mut self) -> String {
        if self.hostile {
            self.rng.pick(KEYS).to_owned()
        } else {
            self.rng.pick(CLEAN_KEYS).to_owned()
        }
    }

    /// A scalar (or alias) that fits on the line after `key:` or `- `.
    fn scalar(&mut self) -> String {
        let scalar = self.any_scalar();
        // JSON has no infinity or NaN: both readers refuse them.
        let non_finite = matches!(crate::input::yaml11::resolve(&scalar), crate::input::yaml11::Plain::Float(f) if !f.is_finite());
        if !self.hostile && non_finite {
            "x".to_owned()
        } else {
            scalar
        }
    }

    fn any_scalar(&mut self) -> String {
        match self.rng.below(12) {
            0..=4 => plain_scalar(self.rng),
            5 => format!(
                "\"{}\"",
                self.rng
                    .pick(&["x", "1", "a\\tb", "\\u00e9", "", "yes", "a\\\"b"])
            ),
            6 => format!("'{}'", self.rng.pick(&["x", "1", "it''s", "", "~"])),
            7 if self.hostile => self.rng.pick(TAGGED).to_owned(),
            7 => self.rng.pick(CLEAN_TAGGED).to_owned(),
            8 => self.alias().unwrap_or_else(|| "x".to_owned()),
            9 => {
                let anchor = self.new_anchor();
                let text = format!("&{anchor} {}", self.rng.pick(FLOW_PLAIN));
                self.anchors.push(anchor);
                text
            }
            _ => self.rng.pick(FLOW_PLAIN).to_owned(),
        }
    }

    /// A flow collection on one line.
    fn flow(&mut self, depth: usize) -> String {
        let count = self.rng.below(4);
        let mut items = Vec::new();
        let mapping = self.rng.chance(60);
        for _ in 0..count {
            let value = if depth < 2 && self.rng.chance(15) {
                self.flow(depth + 1)
            } else if self.rng.chance(10) {
                self.alias().unwrap_or_else(|| "x".to_owned())
            } else {
                match self.rng.pick(FLOW_PLAIN) {
                    ".inf" if !self.hostile => "x".to_owned(),
                    plain => plain.to_owned(),
                }
            };
            items.push(if mapping {
                match self.rng.below(10) {
                    // `key:` right before `,` or `}`: YAML 1.1 keeps the colon in the key.
                    0 if self.hostile => format!("{}:", self.rng.pick(&["a", "b", "replicas"])),
                    0 | 1 => self.key(),
                    2 => format!(
                        "<<: {}",
                        self.alias().unwrap_or_else(|| "{m: 1}".to_owned())
                    ),
                    _ => format!("{}: {value}", self.key()),
                }
            } else if self.hostile && self.rng.chance(10) {
                format!("{}:", self.rng.pick(&["a", "b"]))
            } else {
                value
            });
        }
        let body = items.join(", ");
        if mapping {
            format!("{{{body}}}")
        } else {
            format!("[{body}]")
        }
    }

    /// A block mapping at `indent`; with `inline`, its first key continues the current line
    /// (after `- `).
    fn block_map(&mut self, indent: usize, depth: usize, inline: bool) {
        let count = 1 + self.rng.below(4);
        for i in 0..count {
            if i > 0 || !inline {
                self.indent(indent);
            }
            if self.rng.chance(12) {
                let source = match self.rng.below(4) {
                    0 => "{m: 1, a: merged}".to_owned(),
                    1 => match (self.alias(), self.alias()) {
                        (Some(a), Some(b)) => format!("[{a}, {b}]"),
                        _ => "[{m: 1}, {m: 2, a: 3}]".to_owned(),
                    },
                    _ => self.alias().unwrap_or_else(|| "{a: merged}".to_owned()),
                };
                self.out.push_str(&format!("<<: {source}\n"));
                continue;
            }
            let key = self.key();
            self.out.push_str(&key);
            self.out.push(':');
            self.value(indent, depth);
        }
    }

    /// What follows `key:`: a scalar or flow collection on the line, or a block collection
    /// below it.
    fn value(&mut self, indent: usize, depth: usize) {
        let choice = if depth >= 3 {
            self.rng.below(2)
        } else {
            self.rng.below(6)
        };
        match choice {
            0 => {
                let sep = self.separator();
                let scalar = self.scalar();
                self.out.push_str(&format!("{sep}{scalar}\n"));
            }
            1 => {
                let flow = self.flow(depth);
                self.out.push_str(&format!(" {flow}\n"));
            }
            2 | 3 => {
                let anchor = self.rng.chance(25).then(|| self.new_anchor());
                if let Some(anchor) = &anchor {
                    self.out.push_str(&format!(" &{anchor}"));
                }
                self.out.push('\n');
                self.block_map(indent + 2, depth + 1, false);
                if let Some(anchor) = anchor {
                    self.anchors.push(anchor);
                }
            }
            4 => {
                self.out.push_str(" |\n");
                self.indent(indent + 2);
                self.out
                    .push_str(self.rng.pick(&["line", "two\tcols", "a: b", "- x"]));
                self.out.push('\n');
            }
            _ => {
                self.out.push('\n');
                let inner = if self.rng.chance(50) {
                    indent
                } else {
                    indent + 2
                };
                self.block_seq(inner, depth + 1);
            }
        }
    }

    fn block_seq(&mut self, indent: usize, depth: usize) {
        let count = 1 + self.rng.below(3);
        for _ in 0..count {
            self.indent(indent);
            self.out.push('-');
            let sep = self.separator();
            if depth < 3 && self.rng.chance(40) {
                self.out.push_str(sep);
                self.block_map(indent + 2, depth + 1, true);
            } else {
                let scalar = self.scalar();
                self.out.push_str(&format!("{sep}{scalar}\n"));
            }
        }
    }
}
