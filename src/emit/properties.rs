//! Property tests over open-ended input: strings survive the round trip through our YAML
//! under both YAML 1.1 (Kubernetes) and YAML 1.2 readers, and the checksum annotation changes
//! exactly when the ConfigMap data does.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use proptest::prelude::*;
use serde_json::Value as Json;

use crate::diag::Diagnostics;
use crate::emit;
use crate::input::{yaml, yaml11};
use crate::options::{Format, PullPolicy};
use crate::render::{self, Extras};
use crate::spec::{Manager, Plugin, Plugins};

fn plugin(name: &str, location: &str, sha256: &str) -> Plugin {
    Plugin {
        name: name.into(),
        location: location.into(),
        sha256: sha256.into(),
        args: Vec::new(),
        disabled: false,
        headers_from: Vec::new(),
        rules: Vec::new(),
        image: None,
    }
}

fn manager() -> Manager {
    Manager {
        name: "argo-rollouts".into(),
        namespace: "argo-rollouts".into(),
        namespace_scoped: false,
        high_availability: false,
        image: "quay.io/argoproj/argo-rollouts:v1.9.1".into(),
        image_pull_policy: PullPolicy::IfNotPresent,
        args: Vec::new(),
        env: Vec::new(),
        node_selector: BTreeMap::new(),
        tolerations: None,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        resources: ResourceRequirements::default(),
        notification_secret: true,
        network_policy: true,
        plugins: Plugins::default(),
        image_delivery: crate::options::ImageDelivery::Volume,
    }
}

/// Reads a YAML stream the way Kubernetes does: YAML 1.1 scalar resolution.
fn read_yaml11(text: &str) -> Vec<Json> {
    let mut diagnostics = Diagnostics::default();
    let documents = yaml::parse(&Arc::from("out"), text, &mut diagnostics)
        .unwrap_or_else(|e| panic!("our output does not parse: {e}\n{text}"));
    documents
        .iter()
        .map(|d| yaml11::to_json(d, &mut diagnostics).expect("converts"))
        .collect()
}

/// Reads a YAML stream with serde-saphyr (YAML 1.2).
fn read_yaml12(text: &str) -> Vec<Json> {
    serde_saphyr::from_multiple(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn find<'a>(documents: &'a [Json], kind: &str) -> &'a Json {
    documents
        .iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

/// Strings built to hit YAML's corners: 1.1 look-alikes, indicators, whitespace at the edges,
/// line breaks and tabs, Unicode line separators, control characters, and anything else.
fn tricky_string() -> impl Strategy<Value = String> {
    let lookalikes = prop::sample::select(vec![
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "Y",
        "NO",
        "true",
        "~",
        "null",
        "",
        "1_000",
        "0b101",
        "0o17",
        "0x1f",
        "0755",
        "08",
        ".5",
        "1e3",
        "-.inf",
        ".nan",
        "2001-12-14",
        "1:20",
        "<<",
        "=",
        "- a",
        "? a",
        ": a",
        "a: b",
        "a #b",
        "#a",
        "&a",
        "*a",
        "!a",
        "%a",
        "@a",
        "`a",
        "|",
        ">",
        "'",
        "\"",
        "---",
        "...",
        "[a]",
        "{a: b}",
        "\t",
        "\ta\nb",
        "\n\ta",
        "a\n\tb",
        " a",
        "a ",
        "a\n",
        "\na",
        " \na",
        "a\n ",
        "a\r\nb",
        "\u{85}",
        "\u{2028}",
        "\u{feff}x",
        "\u{1}",
    ])
    .prop_map(str::to_owned);
    let pieces = prop::collection::vec(
        prop_oneof![
            4 => "[a-z0-9 ]{0,6}",
            2 => prop::sample::select(vec![" ", "\n", "\t", ":", "#", "-", "'", "\"", "\\", "{", "[", ",", "\r", "\u{85}", "\u{2028}", "é", "😀", "\u{0}"]).prop_map(str::to_owned),
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat());
    prop_oneof![3 => lookalikes, 5 => pieces, 2 => any::<String>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn strings_read_back_unchanged_under_yaml_1_1_and_1_2(value in tricky_string()) {
        let mut manager = manager();
        manager.labels.insert("label".into(), value.clone());
        manager.annotations.insert("annotation".into(), value.clone());
        manager.env.push(EnvVar { name: "VALUE".into(), value: Some(value.clone()), ..EnvVar::default() });
        let mut step = plugin("step/s", "file:///opt/plugins/s", "");
        step.args = vec![value.clone()];
        manager.plugins.step.push(step);

        let output = emit::stream(&render::manager(&manager, Extras::default()), Format::Yaml);
        for documents in [read_yaml11(&output), read_yaml12(&output)] {
            let account = find(&documents, "ServiceAccount");
            prop_assert_eq!(&account["metadata"]["labels"]["label"], &Json::from(value.clone()));
            prop_assert_eq!(&account["metadata"]["annotations"]["annotation"], &Json::from(value.clone()));
            let deployment = find(&documents, "Deployment");
            prop_assert_eq!(
                &deployment["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
                &Json::from(value.clone())
            );
            let steps = find(&documents, "ConfigMap")["data"]["stepPlugins"].as_str().unwrap().to_owned();
            for list in [read_yaml11(&steps), read_yaml12(&steps)] {
                prop_assert_eq!(&list[0][0]["args"][0], &Json::from(value.clone()));
            }
        }
    }

    #[test]
    fn the_checksum_changes_exactly_when_the_config_map_data_does(
        a in plugin_lists(), b in plugin_lists(),
        label_a in "[a-z]{0,3}", label_b in "[a-z]{0,3}", ha in any::<bool>(),
    ) {
        let mut first = manager();
        first.plugins = a;
        first.labels.insert("x".into(), label_a);
        let mut second = manager();
        second.plugins = b;
        second.labels.insert("x".into(), label_b);
        second.high_availability = ha;
        let data_a = render::config_data(&first);
        let data_b = render::config_data(&second);
        prop_assert_eq!(
            data_a == data_b,
            render::config_checksum(&data_a) == render::config_checksum(&data_b)
        );
    }
}

/// Small plugin lists over a small alphabet, so equal and unequal pairs both come up.
fn plugin_lists() -> impl Strategy<Value = Plugins> {
    let entry = (
        "[ab]",
        "[xy]",
        prop::sample::select(vec!["", "0", "1"]),
        any::<bool>(),
    );
    prop::collection::vec(entry, 0..3).prop_map(|entries| {
        let mut plugins = Plugins::default();
        for (name, location, sha256, step) in entries {
            let item = plugin(&format!("ns/{name}"), &format!("file://{location}"), sha256);
            if step {
                plugins.step.push(item);
            } else {
                plugins.metric_provider.push(item);
            }
        }
        plugins
    })
}
