//! `rollouts-render fn`, the KRM function: every ResourceList of `testdata/krm/` against its
//! snapshot (exit status, stderr, stdout), the items it prints against what `render` prints,
//! and the function run for real by its orchestrators:
//!
//! - `kubectl kustomize --enable-alpha-plugins` (kubectl's kustomize runs container functions
//!   only: it has no `--enable-exec`). Container functions run through `docker run`; there is no
//!   container runtime and no registry here, so a `docker` on PATH stands in for the runtime:
//!   it checks the image named in the function annotation and runs the binary the image holds,
//!   as the image would (`rollouts-render fn`). kustomize and the function are real.
//! - a standalone kustomize (`RR_KUSTOMIZE`, else `kustomize` on PATH) with
//!   `--enable-alpha-plugins --enable-exec`, running the binary as an exec function;
//! - kpt (`kpt fn eval --exec`), when it is on PATH.
//!
//! Without one of these tools, its tests are skipped and say so. `.ci/run` makes sure
//! kubectl and kustomize exist; kpt cannot be built from the Go module proxy (see the README).

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value as Json;

const IMAGE: &str = "registry.example.com/rollouts-render:0.1.0";

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("rollouts-render")
}

fn run_fn(input: &str) -> Output {
    let mut child = Command::new(binary())
        .arg("fn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn krm() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../testdata/krm", "*.yaml", |path| {
            let output = run_fn(&std::fs::read_to_string(path).unwrap());
            let status = output.status.code().unwrap();
            let stdout = text(&output.stdout);
            // Whatever happens, stdout is a ResourceList; on failure it has no items.
            let list: Json = serde_saphyr::from_str(&stdout).unwrap();
            assert_eq!(list["kind"], "ResourceList");
            if status != 0 {
                assert_eq!(list["items"], Json::Array(vec![]));
            }
            insta::assert_snapshot!(format!(
                "exit status: {status}\n--- stderr\n{}--- stdout\n{stdout}",
                text(&output.stderr),
            ));
        });
    });
}

/// The orchestrators' annotations, which `render` knows nothing of.
const ORCHESTRATOR_ANNOTATIONS: [&str; 4] = [
    "config.kubernetes.io/index",
    "config.kubernetes.io/path",
    "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/path",
];

fn without_orchestrator_annotations(mut object: Json) -> Json {
    if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
        for key in ORCHESTRATOR_ANNOTATIONS {
            annotations.remove(key);
        }
        if annotations.is_empty() {
            object["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("annotations");
        }
    }
    object
}

fn json_stream(bytes: &[u8]) -> Vec<Json> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `render` with these flags over YAML text on stdin, as JSON documents.
fn render(input: &str, flags: &[&str]) -> Vec<Json> {
    let output = assert_cmd::Command::new(binary())
        .arg("render")
        .args(flags)
        .args(["-o", "json"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    json_stream(&output.stdout)
}

#[test]
fn the_items_are_what_render_prints_in_place_of_the_managers() {
    let input =
        std::fs::read_to_string(common::repo_path("testdata/krm/transformer.yaml")).unwrap();
    let list: Json = serde_saphyr::from_str(&input).unwrap();
    let items: Vec<Json> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .map(without_orchestrator_annotations)
        .collect();
    let manifests = rollouts_render::emit::stream(&items, rollouts_render::Format::Yaml);
    let expected = render(&manifests, &["-n", "argo-rollouts", "--no-aggregate-roles"]);

    let output = run_fn(&input);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let out: Json = serde_saphyr::from_str(&text(&output.stdout)).unwrap();
    let printed: Vec<Json> = out["items"].as_array().unwrap().clone();
    let stripped: Vec<Json> = printed
        .iter()
        .cloned()
        .map(without_orchestrator_annotations)
        .collect();
    assert_eq!(stripped, expected, "same objects, same order");

    // Where each object goes: the Rollout stays in rollout.yaml, untouched; the manager's
    // objects and the ConfigMap after it fill rm.yaml in output order.
    let placement: Vec<(String, String, String)> = printed
        .iter()
        .map(|o| {
            let annotations = &o["metadata"]["annotations"];
            for (internal, legacy) in [
                (ORCHESTRATOR_ANNOTATIONS[2], ORCHESTRATOR_ANNOTATIONS[0]),
                (ORCHESTRATOR_ANNOTATIONS[3], ORCHESTRATOR_ANNOTATIONS[1]),
            ] {
                assert_eq!(
                    annotations[internal], annotations[legacy],
                    "kyaml keeps both"
                );
            }
            (
                o["kind"].as_str().unwrap().to_owned(),
                annotations[ORCHESTRATOR_ANNOTATIONS[3]]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                annotations[ORCHESTRATOR_ANNOTATIONS[2]]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    let expected_placement: Vec<(String, String, String)> = [
        ("Rollout", "rollout.yaml", "0"),
        ("ServiceAccount", "rm.yaml", "0"),
        ("ClusterRole", "rm.yaml", "1"),
        ("ClusterRoleBinding", "rm.yaml", "2"),
        ("Secret", "rm.yaml", "3"),
        ("ConfigMap", "rm.yaml", "4"),
        ("Deployment", "rm.yaml", "5"),
        ("Service", "rm.yaml", "6"),
        ("NetworkPolicy", "rm.yaml", "7"),
        ("ConfigMap", "rm.yaml", "8"),
    ]
    .iter()
    .map(|(k, p, i)| ((*k).to_owned(), (*p).to_owned(), (*i).to_owned()))
    .collect();
    assert_eq!(placement, expected_placement);
    assert_eq!(
        printed[0]["metadata"]["annotations"]["internal.config.kubernetes.io/seqindent"], "compact",
        "other orchestrator annotations pass through"
    );
}

#[test]
fn a_link_named_rollouts_render_fn_is_the_function() {
    let dir = TempDir::new("link");
    let link = dir.path().join("rollouts-render-fn");
    std::os::unix::fs::symlink(binary(), &link).unwrap();
    let input =
        std::fs::read_to_string(common::repo_path("testdata/krm/transformer.yaml")).unwrap();
    let by_link = assert_cmd::Command::new(&link)
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(by_link.status.code(), Some(0));
    assert_eq!(by_link.stdout, run_fn(&input).stdout);
}

// ---- the orchestrators ----

/// A directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("rollouts-render-krm-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies a fixture kustomization into `to`, with `function` in place of the container
/// function spec its files name (for the exec form).
fn copy_fixture(name: &str, to: &Path, function: Option<&str>) {
    let from = common::repo_path(&format!("tests/fixtures/krm/{name}"));
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if let Some(function) = function {
            text = text.replace(
                &format!("container:\n        image: {IMAGE}\n"),
                &format!("{function}\n"),
            );
        }
        std::fs::write(to.join(path.file_name().unwrap()), text).unwrap();
    }
}

fn skip(test: &str, reason: &str) {
    // Straight to stderr, past the test harness's capture, so the skip is seen.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
}

/// The objects of a YAML stream, keyed by kind, namespace and name (kustomize orders its
/// output by kind).
fn by_identity(objects: Vec<Json>) -> BTreeMap<(String, String, String), Json> {
    let mut map = BTreeMap::new();
    for object in objects {
        let key = (
            object["kind"].as_str().unwrap_or_default().to_owned(),
            object["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
        assert!(map.insert(key.clone(), object).is_none(), "{key:?} twice");
    }
    map
}

fn yaml_stream(bytes: &[u8]) -> Vec<Json> {
    serde_saphyr::from_multiple(&text(bytes)).unwrap()
}

/// What `render` prints for a fixture's manifests (everything but the kustomization and the
/// functionConfig), with `flags`.
fn render_fixture(name: &str, files: &[&str], flags: &[&str]) -> Vec<Json> {
    let manifests: Vec<String> = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(common::repo_path(&format!("tests/fixtures/krm/{name}/{f}")))
                .unwrap()
        })
        .collect();
    render(&manifests.join("---\n"), flags)
}

/// A `docker` for kustomize's container functions: checks that kustomize asks for the image
/// the function annotation names, with the isolation it promises, and runs what the image
/// runs. Its stderr is kustomize's (`-a STDERR`).
fn docker_stand_in(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        r#"#!/bin/sh
[ "$1" = run ] || {{ echo "docker stand-in: only 'run' is known, not '$1'" >&2; exit 64; }}
for last in "$@"; do :; done
[ "$last" = "{IMAGE}" ] || {{ echo "docker stand-in: unexpected image '$last'" >&2; exit 65; }}
case " $* " in *" --network none "*) ;; *) echo "docker stand-in: no --network none" >&2; exit 66;; esac
exec "{}" fn
"#,
        binary().display()
    );
    let docker = bin.join("docker");
    std::fs::write(&docker, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `kubectl kustomize --enable-alpha-plugins DIR` with the docker stand-in first on PATH;
/// `None` when there is no kubectl.
fn kubectl_kustomize(test: &str, dir: &Path) -> Option<Output> {
    let bin = docker_stand_in(dir);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    match Command::new("kubectl")
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir.join("app"))
        .env("PATH", path)
        .output()
    {
        Ok(output) => Some(output),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            skip(test, &format!("kubectl is not on PATH ({error})"));
            None
        }
        Err(error) => panic!("running kubectl: {error}"),
    }
}

fn app_dir(dir: &TempDir) -> PathBuf {
    let app = dir.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    app
}

#[test]
fn kubectl_kustomize_runs_the_function_as_a_generator() {
    let test = "kubectl_kustomize_runs_the_function_as_a_generator";
    let dir = TempDir::new("kubectl-generator");
    copy_fixture("generator", &app_dir(&dir), None);
    let Some(output) = kubectl_kustomize(test, dir.path()) else {
        return;
    };
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let expected = render_fixture(
        "generator",
        &["rolloutmanager.yaml"],
        &["--api-versions", "monitoring.coreos.com/v1"],
    );
    assert_eq!(
        by_identity(yaml_stream(&output.stdout)),
        by_identity(expected)
    );
}

#[test]
fn kubectl_kustomize_runs_the_function_as_a_transformer() {
    let test = "kubectl_kustomize_runs_the_function_as_a_transformer";
    let dir = TempDir::new("kubectl-transformer");
    copy_fixture("transformer", &app_dir(&dir), None);
    let Some(output) = kubectl_kustomize(test, dir.path()) else {
        return;
    };
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let expected = render_fixture(
        "transformer",
        &["rollout.yaml", "rolloutmanager.yaml"],
        &["-n", "argo-rollouts", "--no-aggregate-roles"],
    );
    assert_eq!(
        by_identity(yaml_stream(&output.stdout)),
        by_identity(expected)
    );
}

#[test]
fn kubectl_kustomize_runs_one_generator_per_manager() {
    let test = "kubectl_kustomize_runs_one_generator_per_manager";
    let dir = TempDir::new("kubectl-two-generators");
    copy_fixture("two-generators", &app_dir(&dir), None);
    let Some(output) = kubectl_kustomize(test, dir.path()) else {
        return;
    };
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    // `render` of both at once makes the aggregate ClusterRoles once, as the annotation on
    // the second generator asks kustomize's separate runs to.
    let expected = render_fixture("two-generators", &["team-a.yaml", "team-b.yaml"], &[]);
    assert_eq!(
        by_identity(yaml_stream(&output.stdout)),
        by_identity(expected)
    );
}

/// The message the invalid fixture's manager gets, as `render` would print it without a
/// position: kustomize's ResourceList does not carry the file's lines.
const INVALID_MESSAGE: &str = "RolloutManager argo-rollouts: error: spec.plugins.step[0].sha256: looks like a SHA-1 digest (40 hex characters), but the controller checks SHA-256 (64 lowercase hex characters) and would refuse the plugin
  hint: compute it with `sha256sum <plugin binary>`, or take it from the release's checksums file
";

/// kustomize's own last line about a failed function, without klog's time stamp.
fn kustomize_error_line(stderr: &str) -> &str {
    let last = stderr.lines().last().unwrap_or_default();
    last.split_once("\"command failed\" ")
        .map_or(last, |(_, error)| error)
}

#[test]
fn kubectl_kustomize_fails_on_an_invalid_manager_with_its_message() {
    let test = "kubectl_kustomize_fails_on_an_invalid_manager_with_its_message";
    let dir = TempDir::new("kubectl-invalid");
    copy_fixture("invalid", &app_dir(&dir), None);
    let Some(output) = kubectl_kustomize(test, dir.path()) else {
        return;
    };
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    // The function's stderr, then kustomize's own line.
    assert!(stderr.starts_with(INVALID_MESSAGE), "{stderr}");
    assert_eq!(
        kustomize_error_line(&stderr[INVALID_MESSAGE.len()..]),
        "err=\"couldn't execute function: exit status 1 \"",
        "{stderr}"
    );
}

/// The standalone kustomize to run exec functions with: `RR_KUSTOMIZE`, else `kustomize`
/// on PATH; `None` (and the skip said) without one.
fn standalone_kustomize(test: &str) -> Option<PathBuf> {
    let candidate = std::env::var_os("RR_KUSTOMIZE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("kustomize"));
    match Command::new(&candidate).arg("version").output() {
        Ok(output) if output.status.success() => Some(candidate),
        Ok(output) => panic!("{} version: {}", candidate.display(), text(&output.stderr)),
        Err(error) => {
            skip(
                test,
                &format!(
                    "no standalone kustomize ({}: {error}); set RR_KUSTOMIZE or put kustomize on PATH",
                    candidate.display()
                ),
            );
            None
        }
    }
}

fn exec_kustomize(kustomize: &Path, app: &Path) -> Output {
    Command::new(kustomize)
        .args(["build", "--enable-alpha-plugins", "--enable-exec"])
        .arg(app)
        .output()
        .unwrap()
}

/// The exec form, both ways of naming the function: a `rollouts-render-fn` link (kustomize
/// before v5.7 has no `args`) and `args: [fn]`.
#[test]
fn standalone_kustomize_runs_the_exec_function() {
    let test = "standalone_kustomize_runs_the_exec_function";
    let Some(kustomize) = standalone_kustomize(test) else {
        return;
    };
    let dir = TempDir::new("exec");
    let link = dir.path().join("rollouts-render-fn");
    std::os::unix::fs::symlink(binary(), &link).unwrap();
    let by_link = format!("exec:\n        path: {}", link.display());
    let with_args = format!(
        "exec:\n        path: {}\n        args: [fn]",
        binary().display()
    );
    for (fixture, files, flags) in [
        (
            "generator",
            &["rolloutmanager.yaml"][..],
            &["--api-versions", "monitoring.coreos.com/v1"][..],
        ),
        (
            "transformer",
            &["rollout.yaml", "rolloutmanager.yaml"][..],
            &["-n", "argo-rollouts", "--no-aggregate-roles"][..],
        ),
    ] {
        for function in [&by_link, &with_args] {
            let app = dir.path().join(format!("{fixture}-{}", function.len()));
            std::fs::create_dir_all(&app).unwrap();
            copy_fixture(fixture, &app, Some(function));
            let output = exec_kustomize(&kustomize, &app);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{fixture} {function}: {}",
                text(&output.stderr)
            );
            assert_eq!(
                by_identity(yaml_stream(&output.stdout)),
                by_identity(render_fixture(fixture, files, flags)),
                "{fixture} {function}"
            );
        }
    }

    let app = dir.path().join("invalid");
    std::fs::create_dir_all(&app).unwrap();
    copy_fixture("invalid", &app, Some(&with_args));
    let output = exec_kustomize(&kustomize, &app);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(stderr.starts_with(INVALID_MESSAGE), "{stderr}");
    assert_eq!(
        stderr[INVALID_MESSAGE.len()..].lines().last(),
        Some("Error: couldn't execute function: exit status 1 "),
        "{stderr}"
    );
}

/// kpt writes the items it gets back into the package: `-o stdout` shows them instead.
fn kpt_eval(test: &str, package: &Path, args: &[&str]) -> Option<Output> {
    match Command::new("kpt")
        .args(["fn", "eval"])
        .arg(package)
        .arg("--exec")
        .arg(format!("{} fn", binary().display()))
        .args(["-o", "stdout", "--"])
        .args(args)
        .output()
    {
        Ok(output) => Some(output),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            skip(test, &format!("kpt is not on PATH ({error})"));
            None
        }
        Err(error) => panic!("running kpt: {error}"),
    }
}

#[test]
fn kpt_evaluates_the_exec_function() {
    let test = "kpt_evaluates_the_exec_function";
    let dir = TempDir::new("kpt");
    let package = dir.path().join("package");
    std::fs::create_dir_all(&package).unwrap();
    for file in ["rollout.yaml", "rolloutmanager.yaml"] {
        std::fs::copy(
            common::repo_path(&format!("tests/fixtures/krm/transformer/{file}")),
            package.join(file),
        )
        .unwrap();
    }
    let Some(output) = kpt_eval(
        test,
        &package,
        &["namespace=argo-rollouts", "aggregate-roles=false"],
    ) else {
        return;
    };
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let list: Json = serde_saphyr::from_str(&text(&output.stdout)).unwrap();
    let items: Vec<Json> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .map(|mut item| {
            // kpt's own bookkeeping of the input's layout.
            if let Some(a) = item["metadata"]["annotations"].as_object_mut() {
                a.remove("internal.config.kubernetes.io/seqindent");
            }
            without_orchestrator_annotations(item)
        })
        .collect();
    assert_eq!(
        items,
        render_fixture(
            "transformer",
            &["rollout.yaml", "rolloutmanager.yaml"],
            &["-n", "argo-rollouts", "--no-aggregate-roles"]
        )
    );

    // Written out (`-o DIR`), the path and index annotations put the manager's objects into
    // its file, in render's order, and leave the Rollout in its own.
    let out = dir.path().join("out");
    let written = Command::new("kpt")
        .args(["fn", "eval"])
        .arg(&package)
        .arg("--exec")
        .arg(format!("{} fn", binary().display()))
        .arg("-o")
        .arg(&out)
        .args(["--", "namespace=argo-rollouts", "aggregate-roles=false"])
        .output()
        .unwrap();
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    let file = |name: &str| yaml_stream(&std::fs::read(out.join(name)).unwrap());
    let rendered = render_fixture(
        "transformer",
        &["rolloutmanager.yaml"],
        &["-n", "argo-rollouts", "--no-aggregate-roles"],
    );
    assert_eq!(file("rolloutmanager.yaml"), rendered);
    assert_eq!(
        file("rollout.yaml"),
        yaml_stream(
            &std::fs::read(common::repo_path(
                "tests/fixtures/krm/transformer/rollout.yaml"
            ))
            .unwrap()
        )
    );

    std::fs::copy(
        common::repo_path("tests/fixtures/krm/invalid/rolloutmanager.yaml"),
        package.join("rolloutmanager.yaml"),
    )
    .unwrap();
    let output = kpt_eval(test, &package, &["namespace=argo-rollouts"]).unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    // kpt prints the structured result with the object and field, then the function's stderr.
    assert!(
        stderr.contains("[error] argoproj.io/v1alpha1/RolloutManager/argo-rollouts spec.plugins.step[0].sha256: looks like a SHA-1 digest (40 hex characters)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"rolloutmanager.yaml: error: spec.plugins.step[0].sha256: looks like a SHA-1 digest (40 hex characters), but the controller checks SHA-256 (64 lowercase hex characters) and would refuse the plugin\""),
        "{stderr}"
    );
}
