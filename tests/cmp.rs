//! The Argo CD config management plugin: `generate` run the way argocd-cmp-server runs it
//! (in the application's directory of a copied repository, stdin closed, the plugin
//! environment), plugin.yaml, and the deploy/ overlay.

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rollouts_render::cli::params::{self, PARAMS};
use serde_json::Value as Json;

const MANAGER: &str = "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    metric:
    - name: argoproj-labs/sample-prometheus
      location: https://github.com/argoproj-labs/rollouts-plugin-metric-sample-prometheus/releases/download/v0.0.4/metric-plugin-linux-amd64
";

/// A manager with a plugin delivered in an image, whose output depends on the delivery mode.
const IMAGE_MANAGER: &str = "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    step:
    - name: example/step
      image:
        reference: registry.example.com/step-plugin@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
        path: /step-plugin
";

const ROLLOUT: &str = "apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  strategy:
    canary:
      steps:
      - setWeight: 20
";

/// A repository checkout as the CMP server unpacks it, with the application in `apps/rollouts`.
struct Repo {
    root: PathBuf,
}

impl Repo {
    fn new(name: &str, files: &[(&str, &str)]) -> Self {
        let root =
            std::env::temp_dir().join(format!("rollouts-render-cmp-{name}-{}", std::process::id()));
        let app = root.join("apps/rollouts");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(root.join("README.md"), "not part of the application\n").unwrap();
        for (file, text) in files {
            std::fs::write(app.join(file), text).unwrap();
        }
        Self { root }
    }

    fn app(&self) -> PathBuf {
        self.root.join("apps/rollouts")
    }

    /// Runs a subcommand in the application directory with exactly the given environment.
    fn run(&self, subcommand: &str, env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("rollouts-render"));
        command
            .arg(subcommand)
            .current_dir(self.app())
            .env_clear()
            .envs([
                ("ARGOCD_APP_NAME", "argo-rollouts"),
                ("ARGOCD_APP_NAMESPACE", "argo-rollouts"),
                (
                    "ARGOCD_APP_REVISION",
                    "0123456789abcdef0123456789abcdef01234567",
                ),
                ("ARGOCD_APP_SOURCE_PATH", "apps/rollouts"),
                (
                    "ARGOCD_APP_SOURCE_REPO_URL",
                    "https://git.example.com/platform.git",
                ),
                ("KUBE_VERSION", "1.33.2"),
            ])
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        command.output().unwrap()
    }
}

impl Drop for Repo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `render` run in the application directory on `.`, so that files are named as `generate`
/// names them (`rm.yaml`).
fn render_in(app: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("rollouts-render"));
    command.current_dir(app).arg("render");
    command
}

/// What `render` prints for the same application with the given flags, and with
/// `--warnings-annotation` unless they say otherwise: the plugin turns it on by default.
fn render(app: &Path, flags: &[&str]) -> String {
    let mut command = render_in(app);
    if !flags.iter().any(|f| f.starts_with("--warnings-annotation")) {
        command.arg("--warnings-annotation");
    }
    let output = command.args(flags).arg(".").output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn assert_plain(stderr: &[u8]) {
    assert!(!stderr.contains(&0x1b), "escape bytes in stderr");
}

#[test]
fn generate_renders_the_application_directory_like_render() {
    let repo = Repo::new("same", &[("rm.yaml", MANAGER), ("rollout.yaml", ROLLOUT)]);
    let expected = render(&repo.app(), &["--namespace", "argo-rollouts"]);
    for parameters in [None, Some("null"), Some("[]"), Some("")] {
        let mut env = vec![];
        if let Some(p) = parameters {
            env.push(("ARGOCD_APP_PARAMETERS", p));
        }
        let output = repo.run("generate", &env);
        assert_eq!(output.status.code(), Some(0), "{parameters:?}");
        assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
        assert_plain(&output.stderr);
        // The metric plugin has no sha256: one warning, and nothing else.
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            "rm.yaml:8:7: warning: spec.plugins.metric[0]: no `sha256`: the controller will run whatever the location serves\n  hint: pin the binary: `sha256: <sha256sum of the binary>`\n"
        );
    }
}

#[test]
fn kube_api_versions_decide_the_service_monitor() {
    let repo = Repo::new("monitor", &[("rm.yaml", MANAGER)]);
    let with = repo.run(
        "generate",
        &[(
            "KUBE_API_VERSIONS",
            "v1,apps/v1,monitoring.coreos.com/v1,monitoring.coreos.com/v1/ServiceMonitor",
        )],
    );
    let without = repo.run("generate", &[("KUBE_API_VERSIONS", "v1,apps/v1")]);
    assert!(String::from_utf8_lossy(&with.stdout).contains("kind: ServiceMonitor"));
    assert!(!String::from_utf8_lossy(&without.stdout).contains("kind: ServiceMonitor"));
    assert_eq!(
        String::from_utf8(with.stdout).unwrap(),
        render(
            &repo.app(),
            &[
                "-n",
                "argo-rollouts",
                "--api-versions",
                "monitoring.coreos.com/v1"
            ]
        )
    );
}

/// Argo CD's `KUBE_VERSION` chooses how image plugins are delivered (image volumes are on by
/// default from Kubernetes 1.35), unless the parameter or env entry says otherwise.
#[test]
fn kube_version_decides_the_plugin_image_delivery() {
    let repo = Repo::new("kube-version", &[("rm.yaml", IMAGE_MANAGER)]);
    let volume = render(
        &repo.app(),
        &["-n", "argo-rollouts", "--plugin-image-delivery", "volume"],
    );
    let init = render(
        &repo.app(),
        &[
            "-n",
            "argo-rollouts",
            "--plugin-image-delivery",
            "init-container",
        ],
    );
    // Asked for on 1.34: a warning, which `generate` records in the output.
    let volume_on_134 = render(
        &repo.app(),
        &[
            "-n",
            "argo-rollouts",
            "--plugin-image-delivery",
            "volume",
            "--kube-version",
            "1.34",
            "--warnings-annotation",
        ],
    );
    assert!(
        volume_on_134.contains("rollouts-render/warnings: |-\n"),
        "{volume_on_134}"
    );
    assert_ne!(volume, init);
    assert!(volume.contains("      - image:\n"), "{volume}");
    assert!(init.contains("initContainers:"), "{init}");
    let cases: &[(&[(&str, &str)], &str)] = &[
        // Argo CD always passes KUBE_VERSION (`Repo::run` gives 1.33.2); empty means unknown.
        (&[], &init),
        (&[("KUBE_VERSION", "")], &volume),
        (&[("KUBE_VERSION", "1.35")], &volume),
        (&[("KUBE_VERSION", "v1.36.2")], &volume),
        (&[("KUBE_VERSION", "1.34")], &init),
        (&[("KUBE_VERSION", "v1.30.14-eks-1234")], &init),
        (
            &[
                ("KUBE_VERSION", "1.34"),
                (
                    "ARGOCD_APP_PARAMETERS",
                    r#"[{"name":"plugin-image-delivery","string":"volume"}]"#,
                ),
            ],
            &volume_on_134,
        ),
        (
            &[
                ("KUBE_VERSION", "1.36"),
                ("ARGOCD_ENV_PLUGIN_IMAGE_DELIVERY", "init-container"),
            ],
            &init,
        ),
    ];
    for (env, expected) in cases {
        let mut env = env.to_vec();
        env.push(("ARGOCD_APP_NAMESPACE", "argo-rollouts"));
        let output = repo.run("generate", &env);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{env:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            *expected,
            "{env:?}"
        );
    }
    // A volume forced onto a 1.34 cluster is a warning: it needs the ImageVolume gate there.
    let output = repo.run(
        "generate",
        &[
            ("ARGOCD_APP_NAMESPACE", "argo-rollouts"),
            ("KUBE_VERSION", "1.34"),
            ("ARGOCD_ENV_PLUGIN_IMAGE_DELIVERY", "volume"),
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("warning: spec.plugins.step[0].image: Kubernetes 1.34 keeps image volumes only with the `ImageVolume` feature gate on"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every parameter plugin.yaml announces, given as a parameter and as an env entry, has the
/// effect of its `render` flag.
#[test]
fn every_announced_parameter_is_honoured() {
    let repo = Repo::new(
        "params",
        &[
            ("rm.yaml", MANAGER),
            (
                "image.yaml",
                &IMAGE_MANAGER.replace(
                    "name: argo-rollouts",
                    "name: argo-rollouts\n  namespace: images",
                ),
            ),
        ],
    );
    // (parameter, JSON value as the Application gives it, env form, equivalent flags)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "namespace",
            r#""string":"team-a""#,
            "team-a",
            &["-n", "team-a"],
        ),
        ("strict", r#""string":"true""#, "true", &["--strict"]),
        (
            "require-sha256",
            r#""string":"true""#,
            "true",
            &["--require-sha256"],
        ),
        (
            "allow-plugin-location",
            r#""array":["https://example.com/"]"#,
            "https://example.com/",
            &["--allow-plugin-location", "https://example.com/"],
        ),
        (
            "openshift-route-plugin",
            r#""string":"true""#,
            "true",
            &["--openshift-route-plugin"],
        ),
        (
            "rollouts-image",
            r#""string":"registry.example.com/argo-rollouts:v1.9.1""#,
            "registry.example.com/argo-rollouts:v1.9.1",
            &[
                "--rollouts-image",
                "registry.example.com/argo-rollouts:v1.9.1",
            ],
        ),
        (
            "image-pull-policy",
            r#""string":"Always""#,
            "Always",
            &["--image-pull-policy", "Always"],
        ),
        (
            "plugin-image-delivery",
            r#""string":"init-container""#,
            "init-container",
            &["--plugin-image-delivery", "init-container"],
        ),
        (
            "aggregate-roles",
            r#""string":"false""#,
            "false",
            &["--no-aggregate-roles"],
        ),
        (
            "warnings-annotation",
            r#""string":"false""#,
            "false",
            &["--warnings-annotation=false"],
        ),
    ];
    let covered: BTreeSet<&str> = cases.iter().map(|c| c.0).collect();
    let announced: BTreeSet<&str> = PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(covered, announced, "every parameter needs a case here");

    for (name, value, env_value, flags) in cases {
        let param = PARAMS.iter().find(|p| p.name == *name).unwrap();
        let mut render_args = flags.to_vec();
        if !flags.contains(&"-n") {
            render_args.extend(["-n", "argo-rollouts"]);
        }
        if *name != "warnings-annotation" {
            render_args.push("--warnings-annotation");
        }
        let expected = render_in(&repo.app())
            .args(&render_args)
            .arg(".")
            .output()
            .unwrap();
        let parameters = format!(r#"[{{"name":"{name}",{value}}}]"#);
        let env_name = param.env_name();
        for env in [
            vec![("ARGOCD_APP_PARAMETERS", parameters.as_str())],
            vec![(env_name.as_str(), *env_value)],
        ] {
            let output = repo.run("generate", &env);
            assert_eq!(
                output.status.code(),
                expected.status.code(),
                "{name} via {env:?}"
            );
            assert_eq!(output.stdout, expected.stdout, "{name} via {env:?}");
            assert_plain(&output.stderr);
        }
    }
}

#[test]
fn parameters_win_over_env_entries_and_unknown_ones_warn() {
    let repo = Repo::new("precedence", &[("rm.yaml", MANAGER)]);
    let output = repo.run(
        "generate",
        &[
            ("ARGOCD_ENV_IMAGE_PULL_POLICY", "Never"),
            ("ARGOCD_ENV_WARNINGS_ANNOTATION", "true"),
            ("ARGOCD_APP_PARAMETERS", r#"[{"name":"image-pull-policy","string":"Always"},{"name":"helm-values","map":{"a":"b"}},{"name":"warnings-annotation","string":"false"}]"#),
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        render(
            &repo.app(),
            &[
                "-n",
                "argo-rollouts",
                "--image-pull-policy",
                "Always",
                "--warnings-annotation=false"
            ]
        )
    );
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "warning: unknown parameter `helm-values` is ignored\nrm.yaml:8:7: warning: spec.plugins.metric[0]: no `sha256`: the controller will run whatever the location serves\n  hint: pin the binary: `sha256: <sha256sum of the binary>`\n"
    );
}

#[test]
fn bad_parameters_fail_without_output() {
    let repo = Repo::new("bad-param", &[("rm.yaml", MANAGER)]);
    let output = repo.run("generate", &[("ARGOCD_ENV_STRICT", "yes please")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: env entry `STRICT` (ARGOCD_ENV_STRICT): invalid value `yes please`: expects `true` or `false`\n  hint: see the parameters of the rollouts-render plugin (Strict)\n"
    );
}

/// A value `render` refuses on the command line is refused as a parameter, an env entry or
/// the destination namespace, with the same words after the name of where it came from.
#[test]
fn values_render_refuses_are_refused_wherever_they_come_from() {
    let repo = Repo::new("same-words", &[("rm.yaml", MANAGER)]);
    let cases: &[(&str, &str, &str, &str)] = &[
        // (parameter, value, render flag, the reason in both messages)
        (
            "namespace",
            "Bad_NS!",
            "--namespace",
            "not a valid namespace: it must consist of lower case letters, digits or '-', and start and end with a letter or digit",
        ),
        (
            "namespace",
            "",
            "--namespace",
            "not a valid namespace: it must not be empty",
        ),
        (
            "image-pull-policy",
            "Sometimes",
            "--image-pull-policy",
            "not an image pull policy (use Always, IfNotPresent, Never)",
        ),
        (
            "rollouts-image",
            "",
            "--rollouts-image",
            "not an image reference: it must be non-empty, without spaces",
        ),
        (
            "openshift-route-plugin",
            "off",
            "--openshift-route-plugin",
            "not a location, and the only booleans are `true` (the operator's release) and `false` (no plugin)",
        ),
    ];
    for (name, value, flag, reason) in cases {
        let cli = Command::new(assert_cmd::cargo::cargo_bin("rollouts-render"))
            .args(["render", &format!("{flag}={value}")])
            .arg(repo.app())
            .output()
            .unwrap();
        assert_eq!(cli.status.code(), Some(2), "{flag}={value}");
        assert!(cli.stdout.is_empty());
        let stderr = String::from_utf8(cli.stderr).unwrap();
        assert!(
            stderr.starts_with(&format!("error: invalid value '{value}' for '{flag}")),
            "{stderr}"
        );
        assert!(stderr.contains(&format!("': {reason}\n")), "{stderr}");

        let parameters = format!(r#"[{{"name":"{name}","string":"{value}"}}]"#);
        let output = repo.run("generate", &[("ARGOCD_APP_PARAMETERS", &parameters)]);
        assert_eq!(output.status.code(), Some(1));
        assert!(output.stdout.is_empty());
        let title = PARAMS.iter().find(|p| p.name == *name).unwrap().title;
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            format!(
                "error: parameter `{name}`: invalid value `{value}`: {reason}\n  hint: see the parameters of the rollouts-render plugin ({title})\n"
            )
        );
    }
    let output = repo.run("generate", &[("ARGOCD_APP_NAMESPACE", "Bad_NS!")]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: ARGOCD_APP_NAMESPACE: invalid value `Bad_NS!`: {}\n  hint: set the `namespace` parameter, or the Application's destination namespace\n",
            cases[0].3
        )
    );
}

#[test]
fn no_rolloutmanager_fails_and_names_the_directory() {
    let repo = Repo::new("empty", &[("rollout.yaml", ROLLOUT)]);
    let output = repo.run("generate", &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: no RolloutManager found in the application directory `apps/rollouts`\n  hint: an empty render would make Argo CD prune the installation; pass --allow-empty if that is really meant\n"
    );
}

#[test]
fn stderr_never_shows_env_values_or_secret_data() {
    let manager = "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  env:
  - name: API_TOKEN
    value: hunter2-env-value
  imagePullPolicy: Sometimes
";
    let secret = "apiVersion: v1
kind: Secret
metadata:
  name: token
stringData:
  token: !!int hunter2-secret-value
";
    let repo = Repo::new("secrets", &[("rm.yaml", manager), ("secret.yaml", secret)]);
    let output = repo.run("generate", &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "rm.yaml:9:20: error: spec.imagePullPolicy: `Sometimes` is not an image pull policy (use Always, IfNotPresent, Never)\nsecret.yaml:6:16: error: stringData.token: the value is not a valid `!!int`, and Kubernetes' YAML reader refuses the document\n"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn stderr_stays_short() {
    let mut manager = String::from(
        "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\nspec:\n  additionalMetadata:\n    labels:\n",
    );
    for i in 0..50 {
        manager.push_str(&format!("      bad{i}: \"not valid\"\n"));
    }
    let repo = Repo::new("short", &[("rm.yaml", &manager)]);
    let output = repo.run("generate", &[]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr.matches("error:").count(),
        rollouts_render::commands::generate::CMP_MAX_DIAGNOSTICS
    );
    assert!(stderr.ends_with(
        "… and 30 more; run `rollouts-render validate` on the directory to see them all\n"
    ));
}

/// The ConfigMap of a warned render, as Argo CD receives it from `generate`.
fn config_map(stdout: &[u8]) -> Json {
    let docs: Vec<Json> =
        serde_saphyr::from_multiple(std::str::from_utf8(stdout).unwrap()).unwrap();
    docs.into_iter()
        .find(|d| d["kind"] == "ConfigMap")
        .expect("a ConfigMap")
}

const UNPINNED_WARNING: &str = "rm.yaml: warning: spec.plugins.metric[0]: no `sha256`: the controller will run whatever the location serves\n  hint: pin the binary: `sha256: <sha256sum of the binary>`";

/// On success Argo CD shows no stderr, so `generate` records the warnings in the ConfigMap's
/// `rollouts-render/warnings` annotation by default: every warning it printed (its own
/// parameter warnings too), without positions, and nothing the controller runs changes.
#[test]
fn warnings_of_a_successful_generate_are_recorded_on_the_config_map() {
    let repo = Repo::new("noted", &[("rm.yaml", MANAGER)]);
    let output = repo.run(
        "generate",
        &[(
            "ARGOCD_APP_PARAMETERS",
            r#"[{"name":"strcit","string":"true"}]"#,
        )],
    );
    assert_eq!(output.status.code(), Some(0));
    let annotations = &config_map(&output.stdout)["metadata"]["annotations"];
    assert_eq!(
        annotations["rollouts-render/warnings"],
        format!(
            "warning: unknown parameter `strcit` is ignored\n  hint: did you mean `strict`?\n{UNPINNED_WARNING}"
        )
    );

    // Turned off, the output is `render`'s without the option; only the ConfigMap differs.
    let off = repo.run("generate", &[("ARGOCD_ENV_WARNINGS_ANNOTATION", "false")]);
    let plain = render_in(&repo.app())
        .args(["-n", "argo-rollouts", "."])
        .output()
        .unwrap();
    assert_eq!(off.stdout, plain.stdout);
    assert!(
        config_map(&off.stdout)["metadata"]
            .get("annotations")
            .is_none()
    );
    let on = repo.run("generate", &[]);
    let docs = |out: &[u8]| -> Vec<Json> {
        serde_saphyr::from_multiple(std::str::from_utf8(out).unwrap()).unwrap()
    };
    for (with, without) in docs(&on.stdout).iter().zip(docs(&off.stdout)) {
        if with["kind"] != "ConfigMap" {
            assert_eq!(*with, without, "only the ConfigMap may differ");
        }
    }
}

/// Moving a warned plugin down the file keeps the annotation, so Argo CD shows no diff for
/// an edit that changes nothing; a manager without warnings has no annotation at all.
#[test]
fn the_warnings_annotation_is_stable_and_absent_without_warnings() {
    let moved = format!("# a comment\n\n{MANAGER}");
    let a = Repo::new("stable-a", &[("rm.yaml", MANAGER)]);
    let b = Repo::new("stable-b", &[("rm.yaml", &moved)]);
    let note = |repo: &Repo| {
        let output = repo.run("generate", &[]);
        assert_eq!(output.status.code(), Some(0));
        config_map(&output.stdout)["metadata"]["annotations"]["rollouts-render/warnings"].clone()
    };
    assert_eq!(note(&a), UNPINNED_WARNING);
    assert_eq!(note(&a), note(&b));

    let pinned = MANAGER.replace(
        "metric-plugin-linux-amd64\n",
        &format!(
            "metric-plugin-linux-amd64\n      sha256: {}\n",
            "a".repeat(64)
        ),
    );
    let clean = Repo::new("stable-clean", &[("rm.yaml", &pinned)]);
    let output = clean.run("generate", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        config_map(&output.stdout)["metadata"]
            .get("annotations")
            .is_none()
    );
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        render(&clean.app(), &["-n", "argo-rollouts"])
    );
}

#[test]
fn discovery_matches_only_directories_with_a_rolloutmanager() {
    let with = Repo::new(
        "discover-yes",
        &[("rm.yaml", MANAGER), ("rollout.yaml", ROLLOUT)],
    );
    let output = with.run("discover", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "./rm.yaml\n");
    let without = Repo::new("discover-no", &[("rollout.yaml", ROLLOUT)]);
    let output = without.run("discover", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    // A broken RolloutManager is still discovered, so that generate can say what is wrong.
    let broken = Repo::new(
        "discover-broken",
        &[("rm.yaml", "kind: RolloutManager\nspec: [\n")],
    );
    assert!(!broken.run("discover", &[]).stdout.is_empty());
}

#[test]
fn plugin_yaml_is_generated_from_the_parameter_table() {
    let committed = std::fs::read_to_string(common::repo_path("plugin.yaml")).unwrap();
    assert_eq!(
        committed,
        params::plugin_yaml_text(),
        "run `cargo run -- plugin-yaml > plugin.yaml`"
    );
    let plugin: Json = serde_saphyr::from_str(&committed).unwrap();
    assert_eq!(plugin["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(plugin["kind"], "ConfigManagementPlugin");
    assert_eq!(plugin["metadata"]["name"], "rollouts-render");
    assert!(
        plugin["spec"].get("version").is_none(),
        "a version would rename the plugin"
    );
    let generate = plugin["spec"]["generate"]["command"].as_array().unwrap();
    assert!(generate[0].as_str().unwrap().starts_with('/'));
    assert_eq!(generate[1], "generate");
    assert_eq!(plugin["spec"]["discover"]["find"]["command"][1], "discover");
    let names: Vec<&str> = plugin["spec"]["parameters"]["static"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PARAMS.iter().map(|p| p.name).collect::<Vec<_>>());
    for param in plugin["spec"]["parameters"]["static"].as_array().unwrap() {
        assert!(param["title"].is_string() && param["tooltip"].is_string());
    }
}

#[test]
fn every_parameter_is_a_render_flag() {
    use clap::CommandFactory;
    let cli = rollouts_render::cli::Cli::command();
    let render = cli.find_subcommand("render").unwrap();
    let flags: BTreeSet<String> = render
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    for param in &PARAMS {
        assert!(
            flags.contains(&param.flag()),
            "{} has no flag {}",
            param.name,
            param.flag()
        );
    }
}

#[test]
fn the_readme_documents_every_parameter() {
    let readme = std::fs::read_to_string(common::repo_path("README.md")).unwrap();
    let table = params::markdown_table();
    assert!(
        readme.contains(&table),
        "the README needs this parameter table:\n{table}"
    );
}

/// `kubectl kustomize` of a directory; `None`, with the reason printed, when there is no
/// kubectl (a fresh clone needs only Rust; `.ci/run` installs kubectl so the test runs there).
fn kustomize(dir: &Path) -> Option<Vec<Json>> {
    let output = match Command::new("kubectl")
        .args(["kustomize", dir.to_str().unwrap()])
        .output()
    {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            // Straight to stderr, past the test harness's capture, so the skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED the_deploy_component_adds_the_sidecar_to_the_repo_server: kubectl is not on PATH ({error}); it needs kubectl's kustomize"
            );
            return None;
        }
        Err(error) => panic!("running kubectl: {error}"),
    };
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap())
}

#[test]
fn the_deploy_component_adds_the_sidecar_to_the_repo_server() {
    let Some(objects) = kustomize(&common::repo_path("tests/fixtures/argocd")) else {
        return;
    };
    assert_eq!(objects.len(), 1);
    let spec = &objects[0]["spec"]["template"]["spec"];
    let containers = spec["containers"].as_array().unwrap();
    assert_eq!(
        containers.len(),
        2,
        "the repo-server keeps its own container"
    );
    let sidecar = containers
        .iter()
        .find(|c| c["name"] == "rollouts-render")
        .unwrap();
    assert_eq!(
        sidecar["command"],
        serde_json::json!(["/var/run/argocd/argocd-cmp-server"])
    );
    assert_eq!(
        sidecar["image"],
        "registry.example.com/platform/rollouts-render:0.1.0"
    );
    assert_eq!(sidecar["securityContext"]["runAsUser"], 999);
    assert_eq!(sidecar["securityContext"]["runAsNonRoot"], true);
    let mounts: Vec<(String, String)> = sidecar["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_owned(),
                m["mountPath"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        mounts,
        [
            ("var-files".to_owned(), "/var/run/argocd".to_owned()),
            (
                "plugins".to_owned(),
                "/home/argocd/cmp-server/plugins".to_owned()
            ),
            ("rollouts-render-tmp".to_owned(), "/tmp".to_owned()),
        ]
    );
    let volumes = spec["volumes"].as_array().unwrap();
    let tmp = volumes
        .iter()
        .find(|v| v["name"] == "rollouts-render-tmp")
        .unwrap();
    assert!(tmp["emptyDir"].is_object());
    for shared in ["var-files", "plugins", "tmp"] {
        assert!(volumes.iter().any(|v| v["name"] == shared), "{shared} kept");
    }
}

/// The controller image tag rendered for a RolloutManager that sets no version.
fn default_version() -> String {
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata: {name: r, namespace: n}\nspec: {}\n";
    let out = common::render_sources(
        &[rollouts_render::input::source::Source::new(
            "default.yaml",
            text.to_owned(),
        )],
        &common::case_options(text),
    )
    .unwrap();
    let docs = common::yaml12_documents(&out);
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap();
    image.rsplit_once(':').unwrap().1.to_owned()
}

#[test]
fn every_file_under_deploy_is_valid_and_uses_the_plugin_as_announced() {
    let names: BTreeSet<&str> = PARAMS.iter().map(|p| p.name).collect();
    let default_version = default_version();
    let mut pending = vec![common::repo_path("deploy")];
    let mut checked = 0;
    let mut crd_sources = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let docs: Vec<Json> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for doc in docs {
                checked += 1;
                let kind = doc["kind"].as_str().unwrap_or_default();
                let spec = match kind {
                    "Application" => &doc["spec"],
                    "ApplicationSet" => &doc["spec"]["template"]["spec"],
                    _ => continue,
                };
                // One source, or several (`sources`) of which exactly one is the plugin's.
                let sources: Vec<&Json> = match spec["sources"].as_array() {
                    Some(list) => list.iter().collect(),
                    None => vec![&spec["source"]],
                };
                let (plugin, others): (Vec<&Json>, Vec<&Json>) =
                    sources.into_iter().partition(|s| s.get("plugin").is_some());
                assert_eq!(plugin.len(), 1, "{}: one plugin source", path.display());
                let source = plugin[0];
                assert_eq!(
                    source["plugin"]["name"],
                    "rollouts-render",
                    "{}",
                    path.display()
                );
                for parameter in source["plugin"]["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let name = parameter["name"].as_str().unwrap();
                    assert!(
                        names.contains(name),
                        "{}: unknown parameter {name}",
                        path.display()
                    );
                }
                // The other source is upstream's CRDs at the tag of the default controller
                // version, applied server-side (from v1.10 they exceed client-side apply's
                // annotation limit). The e2e stage syncs this Application for real.
                for crds in others {
                    crd_sources += 1;
                    assert_eq!(
                        crds["repoURL"],
                        "https://github.com/argoproj/argo-rollouts.git",
                        "{}",
                        path.display()
                    );
                    assert_eq!(crds["path"], "manifests/crds", "{}", path.display());
                    assert_eq!(
                        crds["targetRevision"].as_str(),
                        Some(default_version.as_str()),
                        "{}: the CRDs' tag must be the rendered controller version",
                        path.display()
                    );
                    let options = spec["syncPolicy"]["syncOptions"].as_array().unwrap();
                    assert!(
                        options.iter().any(|o| o == "ServerSideApply=true"),
                        "{}: ServerSideApply=true",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(checked >= 5);
    assert!(crd_sources >= 1, "deploy/ installs the CRDs somewhere");
}

/// In Argo CD the input limit is fixed (the sidecar's memory is sized for it): the message
/// says so and does not offer an option the plugin user cannot pass.
#[test]
fn an_application_over_the_input_limit_is_refused_without_offering_the_option() {
    let big = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  k: {}\n",
        "x".repeat(17 << 20)
    );
    let repo = Repo::new("too-large", &[("big.yaml", big.as_str())]);
    let output = repo.run("generate", &[("ARGOCD_APP_NAMESPACE", "argo-rollouts")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "big.yaml: error: the application's manifests are larger than the plugin's limit of 16 MiB, which keeps the sidecar within its memory\n  hint: split the application into smaller ones\n"
    );
}
