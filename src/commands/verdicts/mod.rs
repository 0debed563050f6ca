//! `__verdicts`, for `conformance/differential` only: the renderer's answer for each rule it
//! ports from Go, on inputs read from stdin (JSON lines `{"rule", "input"}`) or on a corpus
//! it generates itself (`--generate --seed N --per-rule N`), printed as JSON lines
//! `{"rule", "input", "verdict"}` for Go's own functions to judge. Hidden from `--help`.

use std::io::{self, BufRead};
use std::process::ExitCode;

use serde_json::{Value as Json, json};

use crate::cli::VerdictArgs;
use crate::emit;
use crate::input::yaml::{self, Style, Value};
use crate::input::yaml11::{self, Plain};
use crate::options::Namespace;
use crate::validate::{env, location, plugins, quantity, syntax};

mod images;
mod yaml_documents;

/// Every rule with a Go counterpart, by the name both sides use.
pub const RULES: [&str; 18] = [
    "location",
    "quantity",
    "quantity-pattern",
    "dns1123-label",
    "dns1123-subdomain",
    "qualified-name",
    "annotation-key",
    "label-value",
    "env-var-name",
    "env-var-name-strict",
    "namespace",
    "config-map-key",
    "plugin-name",
    "yaml11-plain",
    "yaml-v2-scalar",
    "yaml-document",
    "image-reference",
    "kube-version",
];

fn accept(ok: bool) -> Json {
    json!({"accept": ok})
}

/// The renderer's answer for one input of a rule, in the JSON shape of the Go side.
pub fn verdict(rule: &str, input: &str) -> Option<Json> {
    Some(match rule {
        "location" => match location::parse_location(input) {
            Ok(location::Location::Download { secure }) => {
                json!({"accept": true, "scheme": if secure { "https" } else { "http" }})
            }
            Ok(location::Location::File { path }) => {
                json!({"accept": true, "scheme": "file", "path": location::resolve_file(&path)})
            }
            Err(_) => accept(false),
        },
        "quantity" => match quantity::parse(input) {
            Ok(quantity) => json!({"accept": true, "canonical": quantity.stored}),
            Err(_) => accept(false),
        },
        "quantity-pattern" => accept(quantity::matches_crd_pattern(input)),
        "dns1123-label" => accept(syntax::dns1123_label(input).is_none()),
        "dns1123-subdomain" => accept(syntax::dns1123_subdomain(input).is_none()),
        "qualified-name" => accept(syntax::qualified_name(input).is_none()),
        "annotation-key" => accept(syntax::annotation_key(input).is_none()),
        "label-value" => accept(syntax::label_value(input).is_none()),
        "env-var-name" => accept(syntax::env_var_name(input).is_none()),
        "env-var-name-strict" => accept(syntax::strict_env_var_name(input).is_none()),
        "namespace" => accept(Namespace::parse(input).is_ok()),
        "config-map-key" => accept(env::config_map_key(input).is_none()),
        "plugin-name" => accept(plugins::is_plugin_name(input)),
        "yaml11-plain" => yaml11_plain(input),
        "yaml-v2-scalar" => json!({"text": emit::yaml_v2_scalar(input)}),
        "yaml-document" => yaml_documents::verdict(input),
        "image-reference" | "kube-version" => return images::verdict(rule, input),
        _ => return None,
    })
}

/// How a plain scalar written as a mapping value reads under YAML 1.1.
fn yaml11_plain(input: &str) -> Json {
    let Some(text) = single_plain_value(input) else {
        return json!({"type": "invalid"});
    };
    match yaml11::resolve(&text) {
        Plain::Null => json!({"type": "null"}),
        Plain::Bool(b) => json!({"type": "bool", "value": b.to_string()}),
        Plain::Int(i) => json!({"type": "int", "value": i.to_string()}),
        Plain::Uint(u) => json!({"type": "int", "value": u.to_string()}),
        Plain::Float(f) => json!({"type": "float", "value": go_float(f)}),
        Plain::Timestamp | Plain::Str => json!({"type": "string", "value": text}),
    }
}

/// The text of `v: <input>` when it is one plain scalar value.
fn single_plain_value(input: &str) -> Option<String> {
    let text = format!("v: {input}\n");
    let mut diagnostics = crate::diag::Diagnostics::default();
    let documents = yaml::parse(&"verdict".into(), &text, &mut diagnostics).ok()?;
    if documents.len() != 1 || !diagnostics.is_empty() {
        return None;
    }
    let Value::Map(entries) = &documents[0].root.value else {
        return None;
    };
    match entries.as_slice() {
        [entry] if entry.key.scalar() == Some("v") && entry.value.tag.is_none() => {
            match &entry.value.value {
                Value::Scalar {
                    text,
                    style: Style::Plain,
                } => Some(text.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A float the way Go's `strconv.FormatFloat(f, 'g', -1, 64)` writes it; the Go side
/// compares floats as numbers, so only the value matters.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{f:e}")
    }
}

pub(crate) fn command(args: &VerdictArgs) -> ExitCode {
    let mut out = String::new();
    let mut answer = |rule: &str, input: &str| -> bool {
        let Some(verdict) = verdict(rule, input) else {
            super::eprint(&format!("error: unknown rule `{rule}`\n"));
            return false;
        };
        out.push_str(&json!({"rule": rule, "input": input, "verdict": verdict}).to_string());
        out.push('\n');
        true
    };
    if args.generate {
        for (rule, input) in corpus::generate(args.seed, args.per_rule) {
            answer(rule, &input);
        }
    } else {
        for line in io::stdin().lock().lines() {
            let Ok(line) = line else {
                return super::usage_error("reading stdin");
            };
            if line.trim().is_empty() {
                continue;
            }
            let Ok(query) = serde_json::from_str::<Json>(&line) else {
                return super::usage_error(&format!("not a JSON query: {line}"));
            };
            let (Some(rule), Some(input)) = (query["rule"].as_str(), query["input"].as_str())
            else {
                return super::usage_error(&format!("a query needs `rule` and `input`: {line}"));
            };
            if !answer(rule, input) {
                return ExitCode::from(super::USAGE_OR_IO);
            }
        }
    }
    super::write_stdout(out.as_bytes())
}

/// The generated corpus: a fixed seed, many strings per rule, biased to each rule's
/// alphabet and to its edges (lengths at the limits, separators, escapes, signs, suffixes).
pub mod corpus {
    /// SplitMix64: small, fast, and the same sequence on every machine.
    pub struct Rng(u64);

    impl Rng {
        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        pub fn below(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }

        pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }

        pub fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
    }

    pub(super) fn random_string(rng: &mut Rng, alphabet: &[&str], max: usize) -> String {
        let len = rng.below(max + 1);
        (0..len).map(|_| rng.pick(alphabet)).collect()
    }

    const NAME: &[&str] = &[
        "a", "b", "z", "A", "Z", "0", "9", "-", ".", "_", "a", "b", "c", "1", "x", "-", ".",
    ];
    const ODD: &[&str] = &[
        " ", "=", "/", "~", "é", "\u{212A}", "\u{130}", "\t", "\u{7f}", ":", "%", "\u{a0}", "$",
        "\"", "'", "!", "\u{0}", "😀",
    ];

    /// A name-like string: mostly the DNS alphabet, lengths around the limits.
    fn name(rng: &mut Rng, limit: usize) -> String {
        let len = match rng.below(4) {
            0 => rng.below(8),
            1 => limit.saturating_sub(2) + rng.below(5),
            _ => rng.below(limit + 4),
        };
        let mut s: String = (0..len)
            .map(|_| {
                if rng.chance(3) {
                    rng.pick(ODD)
                } else {
                    rng.pick(NAME)
                }
            })
            .collect();
        if rng.chance(20) {
            s = s.to_ascii_lowercase();
        }
        s
    }

    fn qualified(rng: &mut Rng) -> String {
        match rng.below(3) {
            0 => name(rng, 63),
            1 => format!("{}/{}", name(rng, 253).to_ascii_lowercase(), name(rng, 63)),
            _ => format!("{}/{}", name(rng, 20), name(rng, 20)),
        }
    }

    fn location(rng: &mut Rng) -> String {
        let scheme = rng.pick(&[
            "https", "http", "file", "HTTPS", "File", "ftp", "", "h2", "https", "file",
        ]);
        let separator = rng.pick(&["://", "://", "://", ":/", ":", ":///", "", "//"]);
        let user = if rng.chance(10) {
            format!(
                "{}@",
                random_string(rng, &["u", "p", ":", "%41", "%zz", " ", "@", "!"], 5)
            )
        } else {
            String::new()
        };
        let host = match rng.below(6) {
            0 => format!(
                "[{}]",
                rng.pick(&[
                    "::1",
                    "fe80::1%25eth0",
                    "1.2.3.4",
                    "::ffff:1.2.3.4",
                    "v1.x",
                    "::1%25",
                    "",
                    "2001:db8::",
                    "::1%zz",
                    "fe80::1%25%41",
                ])
            ),
            1 => random_string(
                rng,
                &[
                    "h", "x", ".", "-", "_", "~", "%20", "%41", "%C3%BC", "%2e", "ü", "<", ">",
                    "\"", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", " ", "%",
                ],
                8,
            ),
            2 => "".to_owned(),
            _ => rng
                .pick(&[
                    "github.com",
                    "h",
                    "1.2.3.4",
                    "example.com",
                    "a.b-c.d",
                    "xn--bcher-kva.example",
                ])
                .to_owned(),
        };
        let port = if rng.chance(20) {
            rng.pick(&[":80", ":", ":x", ":99999", ":0", ":65535", ":8080", ":-1"])
        } else {
            ""
        };
        let path = random_string(
            rng,
            &[
                "/", "/", "a", "plugin", ".", "..", "%20", "%2e", "%2E%2E", "%zz", "%", "?", "#",
                "=", "&", " ", "\\", "|", "{", "}", "^", "`", "ü", "\u{1}", ";", ":", "@", "~",
                "+", "!", "*", "'", "(", ")", "[", "]",
            ],
            10,
        );
        format!("{scheme}{separator}{user}{host}{port}{path}")
    }

    fn quantity(rng: &mut Rng) -> String {
        let sign = rng.pick(&["", "", "", "+", "-"]);
        let whole_len = rng_len(rng, 4, 22);
        let whole = random_string(rng, &["0", "1", "2", "5", "9"], whole_len);
        let fraction = if rng.chance(40) {
            let len = rng_len(rng, 3, 12);
            format!(".{}", random_string(rng, &["0", "1", "5", "9"], len))
        } else {
            String::new()
        };
        let suffix = match rng.below(4) {
            0 => "".to_owned(),
            1 => rng
                .pick(&[
                    "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
                    "Ei", "K", "i", "mi", "KB", "e", "E", " ", "_",
                ])
                .to_owned(),
            _ => format!(
                "{}{}{}",
                rng.pick(&["e", "E"]),
                rng.pick(&["", "", "+", "-"]),
                random_string(rng, &["0", "1", "3", "9"], 4)
            ),
        };
        let mut s = format!("{sign}{whole}{fraction}{suffix}");
        if rng.chance(5) {
            s.insert_str(rng.below(s.len() + 1), rng.pick(&[" ", ".", "x", "_", "e"]));
        }
        s
    }

    fn rng_len(rng: &mut Rng, common: usize, rare: usize) -> usize {
        if rng.chance(85) { common } else { rare }
    }

    pub fn plain_scalar(rng: &mut Rng) -> String {
        match rng.below(3) {
            0 => random_string(
                rng,
                &[
                    "0", "1", "7", "9", "_", ".", "e", "E", "+", "-", ":", "x", "o", "b", "a", "f",
                    "F", "inf", "nan", "Inf", "NaN",
                ],
                9,
            ),
            1 => rng
                .pick(&[
                    "yes", "Yes", "YES", "no", "on", "On", "off", "OFF", "y", "Y", "n", "N",
                    "true", "True", "false", "null", "Null", "~", ".inf", "-.inf", ".nan", "<<",
                    "=", "0x", "0o", "0b",
                ])
                .to_owned(),
            _ => format!(
                "{}{}{}",
                rng.pick(&["", "", "+", "-", "0", "1"]),
                random_string(rng, &["0", "1", "2", "5", "9"], 12),
                rng.pick(&[
                    "", ".5", "e3", "e+3", "E-2", "_000", ":20", ":59:59", "-12-14", ".", "e",
                    "0x1f", "b1", "o7", "x",
                ])
            ),
        }
    }

    fn scalar(rng: &mut Rng) -> String {
        random_string(
            rng,
            &[
                "a", "Z", "0", "9", "-", "/", ":", ".", "_", "'", "\"", "#", "@", "?", "!", "&",
                "*", "|", ">", "[", "]", "{", "}", ",", "`", "%", "~", "=", "<", "+", "---", "...",
                "yes", "1e", "0x", "é", "\\",
            ],
            10,
        )
    }

    /// `per_rule` inputs for every rule, in a fixed order.
    pub fn generate(seed: u64, per_rule: usize) -> Vec<(&'static str, String)> {
        let mut rng = Rng(seed);
        let mut corpus = Vec::new();
        for rule in super::RULES {
            for _ in 0..per_rule {
                let input = match rule {
                    "location" => location(&mut rng),
                    "quantity" => quantity(&mut rng),
                    "quantity-pattern" => quantity(&mut rng),
                    "dns1123-label" | "namespace" => name(&mut rng, 63),
                    "dns1123-subdomain" => name(&mut rng, 253),
                    "qualified-name" | "annotation-key" => qualified(&mut rng),
                    "label-value" => name(&mut rng, 63),
                    "env-var-name" | "env-var-name-strict" => name(&mut rng, 16),
                    "config-map-key" => name(&mut rng, 253),
                    "plugin-name" => format!("{}/{}", name(&mut rng, 8), name(&mut rng, 10)),
                    "yaml11-plain" => plain_scalar(&mut rng),
                    "yaml-document" => super::yaml_documents::document(&mut rng),
                    "image-reference" => super::images::image_reference(&mut rng),
                    "kube-version" => super::images::kube_version(&mut rng),
                    _ => scalar(&mut rng),
                };
                corpus.push((rule, input));
            }
        }
        corpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-picked cases of `conformance/differential/cases.jsonl` hold Go's answers (Go
    /// checks them there); the renderer must give the same ones.
    #[test]
    fn every_recorded_go_answer_is_ours() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/conformance/differential/cases.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut compared = 0;
        let mut disagreements = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case: Json = serde_json::from_str(line).unwrap();
            let (rule, input) = (
                case["rule"].as_str().unwrap(),
                case["input"].as_str().unwrap(),
            );
            let ours = verdict(rule, input).unwrap_or_else(|| panic!("unknown rule {rule}"));
            let want = &case["want"];
            let same = if rule == "yaml11-plain" && want["type"] == "float" {
                let number = |v: &Json| v["value"].as_str().and_then(|s| s.parse::<f64>().ok());
                ours["type"] == "float"
                    && match (number(&ours), number(want)) {
                        (Some(a), Some(b)) => a == b || a.is_nan() && b.is_nan(),
                        _ => false,
                    }
            } else if rule == "yaml-document" && ours.get("policy").is_some() {
                // Refused here by a stated policy: Go's answer, whatever it is, is what the
                // policy protects from (the Go harness counts these the same way).
                ours["accept"] == false
            } else {
                &ours == want
            };
            if !same {
                disagreements.push(format!("{rule} {input:?}: ours {ours}, Go's {want}"));
            }
            compared += 1;
        }
        assert!(disagreements.is_empty(), "{disagreements:#?}");
        assert!(compared > 400, "{compared}");
    }

    #[test]
    fn the_corpus_is_the_same_for_a_seed_and_covers_every_rule() {
        let a = corpus::generate(7, 50);
        assert_eq!(a, corpus::generate(7, 50));
        assert_ne!(a, corpus::generate(8, 50));
        for rule in RULES {
            assert_eq!(a.iter().filter(|(r, _)| *r == rule).count(), 50, "{rule}");
            assert!(verdict(rule, "x").is_some(), "{rule}");
        }
    }
}
