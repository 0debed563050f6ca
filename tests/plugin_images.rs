//! Plugins delivered in images: a changed image rolls the controller in both delivery modes,
//! the names of volumes and init containers are valid and depend on the plugin alone, and the
//! ConfigMap location points where the pod puts the binary.

mod common;

use rollouts_render::Options;
use rollouts_render::input::source::Source;
use rollouts_render::options::{DeliveryChoice, ImageDelivery};
use serde_json::Value as Json;

const DIGEST_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const DIGEST_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A manager with one image plugin of `kind` (`trafficManagement`, `metric`, `step`) and
/// the given extra plugin entries.
fn manager(kind: &str, reference: &str, path: &str, extra: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
  namespace: argo-rollouts
spec:
  plugins:
    {kind}:
    - name: example/plugin
      image:
        reference: {reference}
        path: {path}
{extra}"
    )
}

fn options(delivery: ImageDelivery) -> Options {
    Options {
        plugin_image_delivery: DeliveryChoice::Given(delivery),
        ..Options::default()
    }
}

fn render(text: &str, delivery: ImageDelivery) -> Vec<Json> {
    let stream = common::render_sources(
        &[Source::new("rm.yaml", text.to_owned())],
        &options(delivery),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    common::yaml12_documents(&stream)
}

fn find<'a>(documents: &'a [Json], kind: &str) -> &'a Json {
    documents.iter().find(|d| d["kind"] == kind).unwrap()
}

fn template(documents: &[Json]) -> Json {
    find(documents, "Deployment")["spec"]["template"].clone()
}

const KINDS: [&str; 3] = ["trafficManagement", "metric", "step"];
const MODES: [ImageDelivery; 2] = [ImageDelivery::Volume, ImageDelivery::InitContainer];

#[test]
fn a_changed_image_changes_the_pod_template() {
    for kind in KINDS {
        for mode in MODES {
            let a = render(
                &manager(
                    kind,
                    &format!("registry.example.com/p@sha256:{DIGEST_A}"),
                    "/plugin",
                    "",
                ),
                mode,
            );
            let b = render(
                &manager(
                    kind,
                    &format!("registry.example.com/p@sha256:{DIGEST_B}"),
                    "/plugin",
                    "",
                ),
                mode,
            );
            let tagged = render(
                &manager(kind, "registry.example.com/p:v2", "/plugin", ""),
                mode,
            );
            assert_ne!(template(&a), template(&b), "{kind} {mode:?}");
            assert_ne!(template(&a), template(&tagged), "{kind} {mode:?}");
            // Nothing but the reference changed.
            assert_eq!(
                find(&a, "ConfigMap"),
                find(&b, "ConfigMap"),
                "{kind} {mode:?}"
            );
            let moved = render(
                &manager(
                    kind,
                    &format!("registry.example.com/p@sha256:{DIGEST_A}"),
                    "/bin/plugin",
                    "",
                ),
                mode,
            );
            assert_ne!(template(&a), template(&moved), "{kind} {mode:?}");
        }
    }
}

#[test]
fn the_mode_changes_the_pod_template_and_the_location() {
    let text = manager(
        "step",
        &format!("registry.example.com/p@sha256:{DIGEST_A}"),
        "/bin/p",
        "",
    );
    let volume = render(&text, ImageDelivery::Volume);
    let init = render(&text, ImageDelivery::InitContainer);
    assert_ne!(template(&volume), template(&init));
    // The location changes with the mode, so the checksum does.
    let annotation = |docs: &[Json]| {
        template(docs)["metadata"]["annotations"]["checksum/argo-rollouts-config"].clone()
    };
    assert_ne!(annotation(&volume), annotation(&init));
}

fn volume_names(documents: &[Json]) -> Vec<String> {
    template(documents)["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_owned())
        .collect()
}

fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

#[test]
fn names_are_valid_and_depend_on_the_plugin_alone() {
    let reference = format!("registry.example.com/p@sha256:{DIGEST_A}");
    let long = format!("{}/{}", "N".repeat(60), "x._-".repeat(20));
    let other = format!(
        "    - name: {long}\n      image:\n        reference: {reference}\n        path: /p\n    - name: example/Plugin\n      image:\n        reference: {reference}\n        path: /p\n"
    );
    for mode in MODES {
        let alone = render(&manager("metric", &reference, "/p", ""), mode);
        let with_others = render(&manager("metric", &reference, "/p", &other), mode);
        let alone_names = volume_names(&alone);
        let names = volume_names(&with_others);
        assert_eq!(alone_names.len(), 3);
        assert_eq!(names.len(), 5);
        // The plugin's volume keeps its name when other plugins come.
        assert!(names.contains(&alone_names[2]), "{names:?}");
        for name in &names {
            assert!(is_dns1123_label(name), "{name}");
        }
        let unique: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        let spec = &template(&with_others)["spec"];
        if mode == ImageDelivery::InitContainer {
            for container in spec["initContainers"].as_array().unwrap() {
                let name = container["name"].as_str().unwrap();
                assert!(is_dns1123_label(name), "{name}");
                assert!(names.iter().any(|n| n == name));
            }
        } else {
            assert!(spec.get("initContainers").is_none());
        }
    }
}

/// The location in the ConfigMap names the file where the pod puts it: inside the volume at
/// the image's path, or the copy the init container makes.
#[test]
fn the_location_points_into_the_mount() {
    let text = manager(
        "trafficManagement",
        &format!(
            "ghcr.io/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi@sha256:{DIGEST_A}"
        ),
        "/bin/rollouts-plugin-trafficrouter-gatewayapi",
        "",
    );
    for mode in MODES {
        let documents = render(&text, mode);
        let list = find(&documents, "ConfigMap")["data"]["trafficRouterPlugins"]
            .as_str()
            .unwrap()
            .to_owned();
        let entries: Vec<Json> = serde_saphyr::from_str(&list).unwrap();
        let location = entries[0]["location"].as_str().unwrap();
        let relative = location.strip_prefix("file://").unwrap();
        let spec = &template(&documents)["spec"];
        let mount = &spec["containers"][0]["volumeMounts"][2];
        assert_eq!(mount["readOnly"], true);
        let mount_path = mount["mountPath"].as_str().unwrap();
        let file = format!("/home/argo-rollouts/{relative}");
        assert!(
            file.starts_with(&format!("{mount_path}/")),
            "{file} {mount_path}"
        );
        match mode {
            ImageDelivery::Volume => {
                assert_eq!(
                    file,
                    format!("{mount_path}/bin/rollouts-plugin-trafficrouter-gatewayapi")
                );
                let volume = &spec["volumes"][2];
                assert_eq!(volume["name"], mount["name"]);
                assert_eq!(
                    volume["image"]["reference"],
                    format!(
                        "ghcr.io/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi@sha256:{DIGEST_A}"
                    )
                );
            }
            ImageDelivery::InitContainer => {
                let init = &spec["initContainers"][0];
                assert_eq!(
                    init["command"],
                    serde_json::json!([
                        "cp",
                        "/bin/rollouts-plugin-trafficrouter-gatewayapi",
                        file
                    ])
                );
                assert_eq!(init["volumeMounts"][0]["mountPath"], mount_path);
                assert_eq!(init["volumeMounts"][0]["name"], mount["name"]);
                assert!(spec["volumes"][2]["emptyDir"].is_object());
                assert_eq!(init["securityContext"]["runAsUser"], 999);
            }
        }
    }
}
