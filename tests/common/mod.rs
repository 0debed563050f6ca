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

/// The options written on a testdata file's first line (`# args: --namespace x ...`).
pub fn case_options(text: &str) -> Options {
    let mut argv = vec!["rollouts-render".to_owned(), "render".to_owned()];
    if let Some(args) = text.lines().next().and_then(|l| l.strip_prefix("# args:")) {
        argv.extend(args.split_whitespace().map(str::to_owned));
    }
    let cli = Cli::try_parse_from(argv).expect("valid args header");
    let Command::Render(args) = cli.command else {
        unreachable!("render was parsed");
    };
    args.options().expect("valid options")
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
/// booleans, no octal `0755`, no `1_000`), one JSON value per document.
pub fn yaml12_documents(text: &str) -> Vec<serde_json::Value> {
    use rollouts_render::input::yaml::{self, Node, Style, Value};
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
    fn convert(node: &Node) -> Json {
        match &node.value {
            Value::Scalar {
                text,
                style: Style::Plain,
            } if node.tag.is_none() => scalar(text),
            Value::Scalar { text, .. } => Json::from(text.as_str()),
            Value::Seq(items) => Json::Array(items.iter().map(convert).collect()),
            Value::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| {
                        (
                            e.key.scalar().unwrap_or_default().to_owned(),
                            convert(&e.value),
                        )
                    })
                    .collect(),
            ),
        }
    }
    let mut diagnostics = rollouts_render::diag::Diagnostics::default();
    yaml::parse(&std::sync::Arc::from("yaml12"), text, &mut diagnostics)
        .expect("valid YAML")
        .iter()
        .map(|document| convert(&document.root))
        .collect()
}
