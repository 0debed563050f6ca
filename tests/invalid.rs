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

/// The pod template carries the user's annotations and the checksum annotation: the largest
/// accepted input fills it to exactly the API server's 256 KiB, one more byte is refused.
#[test]
fn annotations_fill_the_pod_template_to_the_api_server_limit() {
    use rollouts_render::input::source::Source;
    const LIMIT: usize = 256 * 1024;
    let manager = |value_len: usize| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: ns\nspec:\n  additionalMetadata:\n    annotations:\n      example.com/big: {}\n",
            "x".repeat(value_len)
        )
    };
    let options = rollouts_render::Options::default();
    let largest = LIMIT - "checksum/argo-rollouts-config".len() - 64 - "example.com/big".len();
    let stream = common::render_sources(&[Source::new("rm.yaml", manager(largest))], &options)
        .expect("the largest annotations are accepted");
    let deployment = common::yaml12_documents(&stream)
        .into_iter()
        .find(|doc| doc["kind"] == "Deployment")
        .expect("a Deployment");
    let template = deployment["spec"]["template"]["metadata"]["annotations"]
        .as_object()
        .expect("pod template annotations");
    let total: usize = template
        .iter()
        .map(|(key, value)| key.len() + value.as_str().unwrap().len())
        .sum();
    assert_eq!(total, LIMIT);

    let refused = common::render_sources(&[Source::new("rm.yaml", manager(largest + 1))], &options)
        .expect_err("one byte more is refused");
    assert!(
        refused.contains("the annotations take 262052 bytes")
            && refused.contains("keep them to 262051 bytes at most"),
        "{refused}"
    );
}
