//! Invalid inputs: every file of `testdata/invalid/` fails with exit status 1, nothing on
//! stdout, and exactly the stderr pinned in `snapshots/invalid@<file>.snap`; `validate` says the
//! same as `render`.

mod common;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;

fn run(command: &str, path: &Path) -> Output {
    let text = std::fs::read_to_string(path).unwrap();
    let args: Vec<&str> = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# args:"))
        .map(|a| a.split_whitespace().collect())
        .unwrap_or_default();
    let relative = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
    Command::cargo_bin("rollouts-render")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg(command)
        .args(args)
        .arg(relative)
        .output()
        .unwrap()
}

#[test]
fn invalid() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../testdata/invalid", "*.yaml", |path| {
            let render = run("render", path);
            assert_eq!(render.status.code(), Some(1), "{}", path.display());
            assert!(render.stdout.is_empty(), "{}", path.display());
            let validate = run("validate", path);
            assert_eq!(validate.status.code(), Some(1));
            assert!(validate.stdout.is_empty());
            assert_eq!(
                validate.stderr, render.stderr,
                "validate and render disagree"
            );
            insta::assert_snapshot!(String::from_utf8(render.stderr).unwrap());
        });
    });
}
