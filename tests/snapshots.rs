//! Snapshot tests: every `testdata/*.yaml`, rendered by the binary as a user runs it
//! (`rollouts-render render <# args: line> testdata/<file>`), gives exactly
//! `snapshots/render@<file>.snap`: the exit status and stderr as comment lines, then stdout.
//! The comments keep the snapshot's body a manifest stream for `conformance/`.

mod common;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

fn rendered(path: &Path) -> Output {
    let text = std::fs::read_to_string(path).unwrap();
    let relative = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
    Command::cargo_bin("rollouts-render")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("render")
        .args(common::case_args(&text))
        .arg(relative)
        .output()
        .unwrap()
}

/// What a user sees: the exit status, stderr and stdout.
fn seen(output: &Output) -> String {
    let mut text = format!("# exit status: {}\n", output.status.code().unwrap());
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    if stderr.is_empty() {
        text.push_str("# stderr: (empty)\n");
    } else {
        text.push_str("# stderr:\n");
        for line in stderr.lines() {
            text.push_str(&format!("# | {line}\n"));
        }
    }
    text + &String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn render() {
    settings().bind(|| {
        insta::glob!("../testdata", "*.yaml", |path| {
            let output = rendered(path);
            assert_eq!(output.status.code(), Some(0), "{}", path.display());
            insta::assert_snapshot!(seen(&output));
        });
    });
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    for path in common::cases("testdata") {
        assert_eq!(rendered(&path), rendered(&path), "{}", path.display());
    }
}

fn checksum(case: &str) -> String {
    let output = rendered(&common::repo_path(case));
    let line = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .find(|line| {
            line.trim_start()
                .starts_with("checksum/argo-rollouts-config:")
        })
        .expect("checksum annotation")
        .to_owned();
    line.rsplit(' ').next().unwrap().to_owned()
}

#[test]
fn the_checksum_follows_plugin_changes_only() {
    let base = checksum("testdata/plugins-base.yaml");
    let added = checksum("testdata/plugins-added.yaml");
    let changed = checksum("testdata/plugins-changed.yaml");
    let removed = checksum("testdata/plugins-removed.yaml");
    assert_ne!(base, added);
    assert_ne!(base, changed);
    assert_ne!(added, changed);
    assert_ne!(base, removed);
    // No plugins is no plugins, whatever else the spec says.
    assert_eq!(removed, checksum("testdata/minimal.yaml"));
    assert_eq!(removed, checksum("testdata/ha.yaml"));
    assert_eq!(removed, checksum("testdata/additional-metadata.yaml"));
}

/// A Deployment's selector can never change (the API server refuses it), so it must not
/// depend on anything a user changes later: two renders that differ in their labels select
/// the same pods, in the Deployment and in the HA anti-affinity terms.
#[test]
fn the_selector_does_not_follow_additional_labels() {
    let manager = |labels: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: n\nspec:\n  ha: {{enabled: true}}\n  additionalMetadata:\n    labels: {labels}\n"
        )
    };
    let selectors = |labels: &str| {
        let output = Command::cargo_bin("rollouts-render")
            .unwrap()
            .arg("render")
            .write_stdin(manager(labels))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap();
        let deployment = documents
            .iter()
            .find(|d| d["kind"] == "Deployment")
            .unwrap()
            .clone();
        let pod = &deployment["spec"]["template"];
        let anti = &pod["spec"]["affinity"]["podAntiAffinity"];
        (
            deployment["spec"]["selector"].clone(),
            anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
                ["labelSelector"]
                .clone(),
            anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"].clone(),
            pod["metadata"]["labels"].clone(),
        )
    };
    let before = selectors("{team: a}");
    let after = selectors("{team: b, tier: control}");
    let only_the_name =
        serde_json::json!({"matchLabels": {"app.kubernetes.io/name": "argo-rollouts"}});
    for (a, b) in [
        (&before.0, &after.0),
        (&before.1, &after.1),
        (&before.2, &after.2),
    ] {
        assert_eq!(a, &only_the_name);
        assert_eq!(b, &only_the_name);
    }
    // The pods themselves carry the labels.
    assert_eq!(before.3["team"], "a");
    assert_eq!(after.3["team"], "b");
    assert_eq!(after.3["tier"], "control");
}

fn render_stdin(input: &str) -> Vec<serde_json::Value> {
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .arg("render")
        .write_stdin(input.to_owned())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap()
}

/// The aggregate ClusterRoles belong to every manager of the stream: they carry what all of
/// them share, whatever order they come in.
#[test]
fn aggregate_roles_do_not_depend_on_the_order_of_the_managers() {
    let text =
        std::fs::read_to_string(common::repo_path("testdata/multiple-managers.yaml")).unwrap();
    let (first, second) = text.split_once("---\n").unwrap();
    let aggregates = |input: String| -> Vec<serde_json::Value> {
        render_stdin(&input)
            .into_iter()
            .filter(|d| {
                d["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("argo-rollouts-aggregate-to-"))
            })
            .collect()
    };
    let forwards = aggregates(format!("{first}---\n{second}"));
    let backwards = aggregates(format!("{second}---\n{first}"));
    assert_eq!(forwards.len(), 3);
    assert_eq!(forwards, backwards);
    assert_eq!(forwards[0]["metadata"]["labels"]["platform"], "rollouts");
    assert!(forwards[0]["metadata"]["labels"].get("team").is_none());
}

/// `tolerations: []` renders no `tolerations`, as the operator's Deployment has none.
#[test]
fn empty_tolerations_are_left_out() {
    let documents = render_stdin(
        "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: n\nspec:\n  nodePlacement:\n    tolerations: []\n",
    );
    let deployment = documents
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    assert!(
        deployment["spec"]["template"]["spec"]
            .get("tolerations")
            .is_none()
    );
}
