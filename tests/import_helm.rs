//! `import --helm-values`: every values file of `testdata/import/helm/` against its snapshot
//! (exit status, stderr with the report, stdout), and for each one that imports: the
//! RolloutManager passes `validate`, and rendering it gives the plugin lists the chart's
//! `argo-rollouts-config` would hold for those values (the chart writes each non-empty list
//! with `toYaml`; the controller reads it as data).

mod common;

use std::process::Output;

use serde_json::{Map, Value as Json};

fn rollouts_render(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("rollouts-render").unwrap();
    command.current_dir(env!("CARGO_MANIFEST_DIR")).args(args);
    if let Some(input) = stdin {
        command.write_stdin(input);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn import_helm() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../testdata/import/helm", "*.yaml", |path| {
            let relative = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
            let output = rollouts_render(
                &["import", "--helm-values", relative.to_str().unwrap()],
                None,
            );
            let status = output.status.code().unwrap();
            if status != 0 {
                assert!(output.stdout.is_empty());
            }
            insta::assert_snapshot!(format!(
                "exit status: {status}\n--- stderr\n{}--- stdout\n{}",
                text(&output.stderr),
                text(&output.stdout)
            ));
        });
    });
}

/// One plugin entry as the controller holds it: the `PluginItem` fields it knows (matched
/// in any case), empty values as absent.
fn entry_as_data(entry: &Json) -> Json {
    let mut normal = Map::new();
    for (key, value) in entry.as_object().unwrap() {
        let empty = value.is_null()
            || value == &Json::from("")
            || value == &Json::Bool(false)
            || value.as_array().is_some_and(Vec::is_empty);
        let known = [
            "name",
            "location",
            "sha256",
            "args",
            "disabled",
            "headersFrom",
        ]
        .into_iter()
        .find(|k| k.eq_ignore_ascii_case(key));
        if let (Some(known), false) = (known, empty) {
            normal.insert(known.to_owned(), value.clone());
        }
    }
    Json::Object(normal)
}

fn sorted_by_name(mut entries: Vec<Json>) -> Vec<Json> {
    entries.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
    entries
}

/// The lists the chart's ConfigMap holds for these values, as data: (key, entries).
fn chart_lists(values: &Json) -> Vec<(&'static str, Vec<Json>)> {
    [
        "trafficRouterPlugins",
        "metricProviderPlugins",
        "stepPlugins",
    ]
    .into_iter()
    .map(|key| {
        let entries = values["controller"][key]
            .as_array()
            .map(|list| list.iter().map(entry_as_data).collect())
            .unwrap_or_default();
        (key, sorted_by_name(entries))
    })
    .collect()
}

/// The lists of a rendered `argo-rollouts-config`, as data.
fn rendered_lists(config: &Json) -> Vec<(&'static str, Vec<Json>)> {
    [
        "trafficRouterPlugins",
        "metricProviderPlugins",
        "stepPlugins",
    ]
    .into_iter()
    .map(|key| {
        let entries = config["data"][key]
            .as_str()
            .map(|list| {
                common::yaml12_documents(list)
                    .first()
                    .and_then(Json::as_array)
                    .map(|l| l.iter().map(entry_as_data).collect())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        (key, sorted_by_name(entries))
    })
    .collect()
}

#[test]
fn the_import_validates_and_renders_the_charts_plugin_lists() {
    let mut checked = 0;
    for path in common::cases("testdata/import/helm") {
        let relative = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let import = rollouts_render(
            &["import", "--helm-values", relative.to_str().unwrap()],
            None,
        );
        if import.status.code() != Some(0) {
            continue;
        }
        let imported = text(&import.stdout);
        let validate = rollouts_render(&["validate", "-n", "imported"], Some(&imported));
        assert_eq!(
            validate.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            text(&validate.stderr)
        );

        // Follow the import's own advice about the OpenShift plugin.
        let mut flags = vec!["render", "-n", "imported", "-o", "json"];
        if text(&import.stderr).contains("render with `--openshift-route-plugin`") {
            flags.push("--openshift-route-plugin");
        }
        let rendered = rollouts_render(&flags, Some(&imported));
        assert_eq!(
            rendered.status.code(),
            Some(0),
            "{}",
            text(&rendered.stderr)
        );
        let documents: Vec<Json> = serde_json::Deserializer::from_slice(&rendered.stdout)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        let config = documents.iter().find(|d| d["kind"] == "ConfigMap").unwrap();

        let values = common::yaml12_documents(&std::fs::read_to_string(&path).unwrap())
            .into_iter()
            .next()
            .unwrap_or(Json::Null);
        assert_eq!(
            rendered_lists(config),
            chart_lists(&values),
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} values files imported");
}

#[test]
fn values_come_from_standard_input_too() {
    let text_in =
        std::fs::read_to_string(common::repo_path("testdata/import/helm/plugins.yaml")).unwrap();
    let from_stdin = rollouts_render(&["import", "--helm-values", "-"], Some(&text_in));
    let from_file = rollouts_render(
        &[
            "import",
            "--helm-values",
            "testdata/import/helm/plugins.yaml",
        ],
        None,
    );
    assert_eq!(from_stdin.status.code(), Some(0));
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn helm_values_and_configmap_paths_do_not_mix() {
    let output = rollouts_render(
        &[
            "import",
            "--helm-values",
            "testdata/import/helm/plugins.yaml",
            "testdata/import/all-kinds.yaml",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        text(&output.stderr).starts_with(
            "error: the argument '--helm-values <PATH>' cannot be used with '[PATH]...'"
        ),
        "{}",
        text(&output.stderr)
    );
}
