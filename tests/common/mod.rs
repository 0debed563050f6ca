//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use clap::Parser;
use rollouts_render::cli::{Cli, Command};
use rollouts_render::input::source::{self, Source};
use rollouts_render::{Options, emit, pipeline};

pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The arguments written on a testdata file's first line (`# args: --namespace x ...`).
pub fn case_args(text: &str) -> Vec<String> {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("# args:"))
        .map(|args| args.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The options of those arguments.
pub fn case_options(text: &str) -> Options {
    let mut argv = vec!["rollouts-render".to_owned(), "render".to_owned()];
    argv.extend(case_args(text));
    let cli = Cli::try_parse_from(argv).expect("valid args header");
    let Command::Render(args) = cli.command else {
        unreachable!("render was parsed");
    };
    args.options.options()
}

/// Renders a testdata file the way `rollouts-render render FILE` does: stdout on success,
/// the formatted diagnostics on failure.
pub fn render_case(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).expect("readable testdata");
    let options = case_options(&text);
    let name = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string();
    render_sources(&[Source::new(&name, text)], &options)
}

pub fn render_sources(sources: &[Source], options: &Options) -> Result<String, String> {
    match pipeline::render(&sources.to_vec().into(), options) {
        Ok(rendered) => Ok(emit::stream(
            &rendered.documents().collect::<Vec<_>>(),
            options.format,
        )),
        Err(diagnostics) => Err(diagnostics
            .iter()
            .map(|d| format!("{d}\n"))
            .collect::<String>()),
    }
}

/// Every `*.yaml` file of a testdata directory, sorted.
pub fn cases(dir: &str) -> Vec<PathBuf> {
    let mut files = source::directory_files(&repo_path(dir), false).expect("testdata directory");
    files.retain(|f| f.extension().is_some_and(|e| e == "yaml"));
    files
}

/// Reads a YAML stream as a YAML 1.2 editor does (the core schema: only `true`/`false` are
/// booleans, no octal `0755`, no `1_000`), one JSON value per document. Built on the parser's
/// events, independently of the renderer's own reader.
pub fn yaml12_documents(text: &str) -> Vec<serde_json::Value> {
    use granit_parser::{Event, Parser, ScalarStyle};
    use serde_json::Value as Json;

    fn scalar(text: &str) -> Json {
        let is_int = |s: &str| {
            let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
            !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
        };
        match text {
            "" | "~" | "null" | "Null" | "NULL" => Json::Null,
            "true" | "True" | "TRUE" => Json::Bool(true),
            "false" | "False" | "FALSE" => Json::Bool(false),
            s if is_int(s) => s.parse::<i64>().map_or_else(|_| Json::from(s), Json::from),
            s if s.parse::<f64>().is_ok_and(f64::is_finite)
                && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c)) =>
            {
                serde_json::Number::from_f64(s.parse().unwrap()).map_or(Json::Null, Json::Number)
            }
            s => Json::from(s),
        }
    }
    enum Open {
        Seq(Vec<Json>),
        Map(serde_json::Map<String, Json>, Option<String>),
    }
    struct Reader {
        documents: Vec<Json>,
        stack: Vec<(Open, usize)>,
        anchors: std::collections::HashMap<usize, Json>,
    }
    let mut reader = Reader {
        documents: Vec::new(),
        stack: Vec::new(),
        anchors: std::collections::HashMap::new(),
    };
    let done = |value: Json, anchor: usize, reader: &mut Reader| {
        if anchor != 0 {
            reader.anchors.insert(anchor, value.clone());
        }
        match reader.stack.last_mut() {
            None => reader.documents.push(value),
            Some((Open::Seq(items), _)) => items.push(value),
            Some((Open::Map(map, key), _)) => match key.take() {
                None => {
                    *key = Some(
                        value
                            .as_str()
                            .map_or_else(|| value.to_string(), str::to_owned),
                    )
                }
                Some(key) => {
                    map.insert(key, value);
                }
            },
        }
    };
    for event in Parser::new_from_str(text) {
        let (event, _) = event.expect("valid YAML");
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = if style == ScalarStyle::Plain && tag.is_none() {
                    scalar(&text)
                } else {
                    Json::from(text.as_ref())
                };
                done(value, anchor, &mut reader);
            }
            Event::Alias(anchor) => {
                let value = reader
                    .anchors
                    .get(&anchor)
                    .cloned()
                    .expect("a known anchor");
                done(value, 0, &mut reader);
            }
            Event::SequenceStart(_, anchor, _) => {
                reader.stack.push((Open::Seq(Vec::new()), anchor));
            }
            Event::MappingStart(_, anchor, _) => {
                reader
                    .stack
                    .push((Open::Map(serde_json::Map::new(), None), anchor));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (open, anchor) = reader.stack.pop().expect("an open collection");
                let value = match open {
                    Open::Seq(items) => Json::Array(items),
                    Open::Map(map, _) => Json::Object(map),
                };
                done(value, anchor, &mut reader);
            }
            _ => {}
        }
    }
    reader.documents.retain(|d| !d.is_null());
    reader.documents
}
