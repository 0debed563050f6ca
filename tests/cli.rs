//! The binary as users run it: exit codes, stdout and stderr.

mod common;

use assert_cmd::Command;

fn rollouts_render() -> Command {
    Command::cargo_bin("rollouts-render").expect("binary built")
}

fn case(name: &str) -> String {
    common::repo_path(&format!("testdata/{name}"))
        .display()
        .to_string()
}

const NO_NAMESPACE: &str =
    "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\nspec: {}\n";

#[test]
fn renders_a_file_with_exit_status_0() {
    let output = rollouts_render()
        .args(["render", &case("minimal.yaml")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    let expected = common::render_case(&common::repo_path("testdata/minimal.yaml")).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

#[test]
fn reads_standard_input_when_no_path_or_dash_is_given() {
    let from_file = rollouts_render()
        .args(["render", "-n", "ns", &case("minimal.yaml")])
        .output()
        .unwrap();
    for args in [vec!["render", "-n", "ns"], vec!["render", "-n", "ns", "-"]] {
        let from_stdin = rollouts_render()
            .args(&args)
            .write_stdin(std::fs::read(case("minimal.yaml")).unwrap())
            .output()
            .unwrap();
        assert_eq!(from_stdin.status.code(), Some(0));
        assert_eq!(from_stdin.stdout, from_file.stdout);
    }
}

#[test]
fn invalid_input_exits_1_with_nothing_on_stdout() {
    let output = rollouts_render()
        .arg("render")
        .write_stdin(NO_NAMESPACE)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "<stdin>:3:1: error: metadata: no namespace: the RolloutManager has no `metadata.namespace` and none was given\n  hint: set `metadata.namespace`, or pass `--namespace NS`\n"
    );
}

#[test]
fn one_bad_document_means_no_output_at_all() {
    let mut input = std::fs::read_to_string(case("minimal.yaml")).unwrap();
    input.push_str("---\n");
    input.push_str(NO_NAMESPACE);
    let output = rollouts_render()
        .arg("render")
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
}

#[test]
fn input_without_a_rollout_manager_is_an_error_unless_allowed() {
    let input = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n";
    let output = rollouts_render()
        .arg("render")
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: no RolloutManager found in <stdin>\n  hint: an empty render would make Argo CD prune the installation; pass --allow-empty if that is really meant\n"
    );

    let output = rollouts_render()
        .args(["render", "--allow-empty"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), input);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let unknown_flag = rollouts_render()
        .args(["render", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(unknown_flag.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(unknown_flag.stderr).unwrap(),
        "error: unexpected argument '--no-such-flag' found\n\n  tip: to pass '--no-such-flag' as a value, use '-- --no-such-flag'\n\nUsage: rollouts-render render [OPTIONS] [PATH]...\n\nFor more information, try '--help'.\n"
    );
    let missing_file = rollouts_render()
        .args(["render", "does/not/exist.yaml"])
        .output()
        .unwrap();
    assert_eq!(missing_file.status.code(), Some(2));
    assert!(missing_file.stdout.is_empty());
    assert_eq!(
        String::from_utf8(missing_file.stderr).unwrap(),
        "error: does/not/exist.yaml: No such file or directory (os error 2)\n"
    );
}

/// Every option value is checked where it is parsed, before any input is read: the message
/// names the option and says what is wrong with the value.
#[test]
fn bad_option_values_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--namespace", "Bad_NS!"],
            "invalid value 'Bad_NS!' for '--namespace <NS>': not a valid namespace: it must consist of lower case letters, digits or '-', and start and end with a letter or digit",
        ),
        (
            &["-n", ""],
            "invalid value '' for '--namespace <NS>': not a valid namespace: it must not be empty",
        ),
        (
            &["--image-pull-policy", "Sometimes"],
            "invalid value 'Sometimes' for '--image-pull-policy <POLICY>': not an image pull policy (use Always, IfNotPresent, Never)",
        ),
        (
            &["--rollouts-image", ""],
            "invalid value '' for '--rollouts-image <IMAGE>': not an image reference: it must be non-empty, without spaces",
        ),
        (
            &["--strict=yes"],
            "invalid value 'yes' for '--strict[=<BOOL>]': expects `true` or `false`",
        ),
        (
            &["--openshift-route-plugin=no"],
            "invalid value 'no' for '--openshift-route-plugin[=<LOCATION>]': not a location, and the only booleans are `true` (the operator's release) and `false` (no plugin)",
        ),
        (
            &["--openshift-route-plugin=ftp://x"],
            "invalid value 'ftp://x' for '--openshift-route-plugin[=<LOCATION>]': not a location the controller can read: the scheme `ftp` is not supported: the controller only downloads http(s) and copies file locations; or write `true` or `false`",
        ),
        (
            &["--allow-plugin-location", "github.com"],
            "invalid value 'github.com' for '--allow-plugin-location <PREFIX>': not a location prefix: write an https://, http:// or file:// URL, such as `https://github.com/argoproj-labs/`, or oci:// and an image repository prefix, such as `oci://ghcr.io/argoproj-labs/`",
        ),
        (
            &["--plugin-image-delivery", "pod"],
            "invalid value 'pod' for '--plugin-image-delivery <MODE>': not a plugin image delivery (use auto, volume, init-container)",
        ),
        (
            &["--kube-version", "latest"],
            "invalid value 'latest' for '--kube-version <VERSION>': not a Kubernetes version (write it like `1.34` or `v1.34.2`)",
        ),
    ];
    for (args, message) in cases {
        let output = rollouts_render()
            .arg("render")
            .args(*args)
            .arg(case("minimal.yaml"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty());
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            format!("error: {message}\n\nFor more information, try '--help'.\n")
        );
    }
}

#[test]
fn validate_checks_without_writing() {
    let ok = rollouts_render()
        .args(["validate", &case("plugins-all-kinds.yaml")])
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert!(ok.stdout.is_empty());
    let bad = rollouts_render()
        .arg("validate")
        .write_stdin(NO_NAMESPACE)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(bad.stdout.is_empty());
}

#[test]
fn directories_are_read_in_sorted_order() {
    let dir = std::env::temp_dir().join(format!("rollouts-render-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("b.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.yml"),
        std::fs::read(case("minimal.yaml")).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join(".hidden.yaml"), "not: [valid").unwrap();
    std::fs::write(dir.join("notes.txt"), "not: [valid").unwrap();
    let output = rollouts_render()
        .args(["render", dir.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("apiVersion: v1\nkind: ServiceAccount\n"));
    assert!(stdout.ends_with("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"));
}

#[test]
fn json_output_is_the_same_data_as_yaml_output() {
    for path in common::cases("testdata") {
        let path = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Vec<String> = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# args:"))
            .map(|a| a.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let run = |format: &str| {
            let output = rollouts_render()
                .args(["render", "-o", format, &path])
                .args(&header)
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(0), "{path}");
            String::from_utf8(output.stdout).unwrap()
        };
        let yaml: Vec<serde_json::Value> = serde_saphyr::from_multiple(&run("yaml")).unwrap();
        let json: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&run("json"))
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(yaml, json, "{path}");
    }
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::io::Read;
    use std::process::{Command as Process, Stdio};
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("rollouts-render"))
        .args(["render", &case("multiple-managers.yaml")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_kubectl_list_stands_for_its_items() {
    let live = "apiVersion: v1
kind: List
metadata:
  resourceVersion: \"\"
items:
- apiVersion: argoproj.io/v1alpha1
  kind: RolloutManager
  metadata:
    creationTimestamp: \"2026-01-02T03:04:05Z\"
    generation: 1
    name: argo-rollouts
    namespace: argo-rollouts
    resourceVersion: \"4242\"
    uid: 2f0b5a54-6a7b-4c35-9a53-b4c0c1f3a0f1
  spec: {}
  status:
    phase: Available
    rolloutController: Available
";
    let output = rollouts_render()
        .arg("render")
        .write_stdin(live)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = common::render_case(&common::repo_path("testdata/minimal.yaml")).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
}

/// A stderr nobody reads any more (`2>&1 | head -0`, a closed log pipe) must not turn an
/// error into a crash: every error path still exits with its documented status.
#[test]
fn a_closed_stderr_keeps_the_exit_status() {
    use std::process::{Command as Process, Stdio};
    let dir = std::env::temp_dir().join(format!("rollouts-render-closed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rm.yaml"), NO_NAMESPACE).unwrap();
    let invalid = dir.join("rm.yaml").display().to_string();
    let dir_name = dir.display().to_string();
    let cases: &[(&[&str], i32)] = &[
        (&["render", "does/not/exist.yaml"], 2),
        (&["render", &invalid], 1),
        (&["render", "--namespace", "Bad_NS!", &invalid], 2),
        (&["validate", &invalid], 1),
        (&["generate", "--path", "does/not/exist"], 2),
        (&["generate", "--path", &dir_name], 1),
        (&["import", "does/not/exist.yaml"], 2),
        (&["import", &invalid], 1),
    ];
    for (args, expected) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let status = Process::new(assert_cmd::cargo::cargo_bin("rollouts-render"))
            .args(*args)
            .env_remove("ARGOCD_APP_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(writer)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(*expected), "{args:?}: {status}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
