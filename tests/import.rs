//! `import`: every case of `testdata/import/` against its snapshot (exit status, stderr,
//! stdout), and the round trip: rendering what `import` prints gives back the ConfigMap's
//! plugin lists, as data.

mod common;

use std::process::{Command, Output};

use serde_json::{Map, Value as Json};

fn rollouts_render(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("rollouts-render").unwrap();
    command.current_dir(env!("CARGO_MANIFEST_DIR")).args(args);
    if let Some(input) = stdin {
        command.write_stdin(input);
    }
    command.output().unwrap()
}

#[test]
fn import() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../testdata/import", "*.yaml", |path| {
            let relative = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
            let output = rollouts_render(&["import", relative.to_str().unwrap()], None);
            let status = output.status.code().unwrap();
            if status != 0 {
                assert!(output.stdout.is_empty());
            }
            insta::assert_snapshot!(format!(
                "exit status: {status}\n--- stderr\n{}--- stdout\n{}",
                String::from_utf8(output.stderr).unwrap(),
                String::from_utf8(output.stdout).unwrap()
            ));
        });
    });
}

/// A plugin list as the controller sees it: entries keyed by name, fields lower-cased, empty
/// and default values dropped.
fn plugins_as_data(list: &str) -> Vec<Json> {
    let documents = common::yaml12_documents(list);
    let mut entries: Vec<Json> = documents
        .first()
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|entry| {
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
        })
        .collect();
    entries.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
    entries
}

fn config_lists(data: &Json, include_legacy: bool) -> Vec<(String, Vec<Json>)> {
    let key_lists = [
        ("trafficRouterPlugins", vec!["trafficRouterPlugins"]),
        (
            "metricProviderPlugins",
            if include_legacy {
                vec!["metricProviderPlugins", "metricPlugins"]
            } else {
                vec!["metricProviderPlugins"]
            },
        ),
        ("stepPlugins", vec!["stepPlugins"]),
    ];
    key_lists
        .into_iter()
        .map(|(name, keys)| {
            let mut all: Vec<Json> = keys
                .iter()
                .flat_map(|k| data[*k].as_str().map(plugins_as_data).unwrap_or_default())
                .collect();
            all.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
            (name.to_owned(), all)
        })
        .collect()
}

#[test]
fn rendering_the_import_gives_back_the_plugin_lists() {
    let mut round_trips = 0;
    for path in common::cases("testdata/import") {
        let import = rollouts_render(&["import", path.to_str().unwrap()], None);
        if import.status.code() != Some(0) {
            continue;
        }
        let imported = String::from_utf8(import.stdout).unwrap();
        let stderr = String::from_utf8(import.stderr).unwrap();
        // Follow the import's own advice about the OpenShift plugin.
        let mut flags = vec!["render", "-n", "imported", "-o", "json"];
        if stderr.contains("render with `--openshift-route-plugin`") {
            flags.push("--openshift-route-plugin");
        }
        let rendered = rollouts_render(&flags, Some(&imported));
        assert_eq!(
            rendered.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&rendered.stderr)
        );
        let documents: Vec<Json> = serde_json::Deserializer::from_slice(&rendered.stdout)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        let after = documents.iter().find(|d| d["kind"] == "ConfigMap").unwrap();

        let original_text = std::fs::read_to_string(&path).unwrap();
        let original = common::yaml12_documents(&original_text)
            .into_iter()
            .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "argo-rollouts-config")
            .unwrap();
        // Plugins imported as images get the renderer's own location: inside its image
        // mounts, wherever the original layout had the file.
        let images: Vec<Json> = common::yaml12_documents(&imported)
            .iter()
            .flat_map(|m| {
                ["trafficManagement", "metric", "step"]
                    .into_iter()
                    .flat_map(|kind| {
                        m["spec"]["plugins"][kind]
                            .as_array()
                            .cloned()
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|p| p.get("image").is_some())
            .map(|p| p["name"].clone())
            .collect();
        let without_image_locations = |lists: Vec<(String, Vec<Json>)>, rendered: bool| {
            lists
                .into_iter()
                .map(|(key, entries)| {
                    let entries: Vec<Json> = entries
                        .into_iter()
                        .map(|mut entry| {
                            if images.contains(&entry["name"]) {
                                let location = entry["location"].as_str().unwrap().to_owned();
                                if rendered {
                                    assert!(
                                        location.starts_with("file://plugin-images/"),
                                        "{location}"
                                    );
                                }
                                entry["location"] = Json::from("(image)");
                            }
                            entry
                        })
                        .collect();
                    (key, entries)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            without_image_locations(config_lists(&after["data"], false), true),
            without_image_locations(config_lists(&original["data"], true), false),
            "{}",
            path.display()
        );
        round_trips += 1;
    }
    assert!(round_trips >= 5);
}

/// An installation rendered with image plugins, in either delivery mode, imports to a manager
/// that renders the same ConfigMap and Deployment again.
#[test]
fn rendered_image_plugins_import_back_to_the_same_pod() {
    for mode in ["volume", "init-container"] {
        let render = |stdin: Option<&str>| {
            let mut args = vec!["render", "--plugin-image-delivery", mode, "-o", "json"];
            if stdin.is_none() {
                args.push("testdata/plugin-images-volume.yaml");
            }
            let output = rollouts_render(&args, stdin);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let documents: Vec<Json> = serde_json::Deserializer::from_slice(&output.stdout)
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap();
            documents
                .into_iter()
                .filter(|d| d["kind"] == "ConfigMap" || d["kind"] == "Deployment")
                .collect::<Vec<_>>()
        };
        let installation = rollouts_render(
            &[
                "render",
                "--plugin-image-delivery",
                mode,
                "testdata/plugin-images-volume.yaml",
            ],
            None,
        );
        let imported = rollouts_render(
            &["import"],
            Some(&String::from_utf8(installation.stdout).unwrap()),
        );
        assert_eq!(
            imported.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&imported.stderr)
        );
        let imported = String::from_utf8(imported.stdout).unwrap();
        assert_eq!(imported.matches("image:").count(), 3, "{imported}");
        assert_eq!(render(Some(&imported)), render(None), "{mode}");
    }
}

#[test]
fn import_reads_standard_input() {
    let text =
        std::fs::read_to_string(common::repo_path("testdata/import/all-kinds.yaml")).unwrap();
    let from_stdin = rollouts_render(&["import"], Some(&text));
    let from_file = rollouts_render(&["import", "testdata/import/all-kinds.yaml"], None);
    assert_eq!(from_stdin.status.code(), Some(0));
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn completions_and_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(assert_cmd::cargo::cargo_bin("rollouts-render"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&output.stdout).contains("generate"));
    }
    let man = Command::new(assert_cmd::cargo::cargo_bin("rollouts-render"))
        .arg("man")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&man.stdout).starts_with(".ie \\n(.g .ds Aq"));
}
