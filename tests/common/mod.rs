//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use clap::Parser;
use rollouts_render::cli::{Cli, Command};
use rollouts_render::source::{self, Source};
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
        Ok(rendered) => Ok(emit::stream(&rendered.documents, options.format)),
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
