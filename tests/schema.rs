//! The JSON Schema and the CRD: generated from the model, current in the repository, accepting
//! every valid case and rejecting the invalid ones that are a matter of shape.

mod common;

use rollouts_render::schema;
use serde_json::Value as Json;

fn json_schema() -> jsonschema::Validator {
    let schema: Json = serde_json::from_str(
        &std::fs::read_to_string(common::repo_path("schema/rolloutmanager.json")).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

fn managers(path: &std::path::Path) -> Vec<Json> {
    let text = std::fs::read_to_string(path).unwrap();
    common::yaml12_documents(&text)
        .into_iter()
        .filter(|doc| doc["kind"] == "RolloutManager")
        .collect()
}

#[test]
fn the_committed_schema_is_current() {
    let committed =
        std::fs::read_to_string(common::repo_path("schema/rolloutmanager.json")).unwrap();
    assert_eq!(
        committed,
        schema::json_schema_text(),
        "run `cargo run -- schema > schema/rolloutmanager.json`"
    );
}

#[test]
fn every_valid_case_satisfies_the_schema() {
    let validator = json_schema();
    let mut checked = 0;
    for path in common::cases("testdata")
        .into_iter()
        .chain(std::iter::once(common::repo_path(
            "examples/rolloutmanager.yaml",
        )))
    {
        for manager in managers(&path) {
            let errors: Vec<String> = validator
                .iter_errors(&manager)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 20);
}

/// Invalid cases the schema can see (field names, types, patterns, enums, required fields);
/// the others need the validator's semantics (locations, duplicates, cross-document rules).
const SCHEMA_MATTERS: &[&str] = &[
    "unknown-fields.yaml",
    "unknown-field-in-kubernetes-type.yaml",
    "wrong-type.yaml",
    "wrong-api-version.yaml",
    "plugin-name-format.yaml",
    "plugin-location-scheme.yaml",
    "sha256-is-sha1.yaml",
    "sha256-upper-case.yaml",
    "sha256-shape.yaml",
    "image-pull-policy.yaml",
    "ha-without-enabled.yaml",
    "headers-from-without-name.yaml",
    "plugin-image-pull-policy.yaml",
    "plugin-image-or-location.yaml",
    "plugin-image-path.yaml",
];

#[test]
fn schema_matters_among_the_invalid_cases_fail_it() {
    let validator = json_schema();
    for name in SCHEMA_MATTERS {
        let path = common::repo_path(&format!("testdata/invalid/{name}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let documents: Vec<Json> = common::yaml12_documents(&text)
            .into_iter()
            .filter(|doc| {
                doc["kind"]
                    .as_str()
                    .is_some_and(|k| k.starts_with("RolloutManager"))
            })
            .collect();
        assert!(!documents.is_empty(), "{name}");
        for document in documents {
            assert!(!validator.is_valid(&document), "{name} passes the schema");
        }
    }
}

/// Every node typed (or marked int-or-string / preserve-unknown-fields), no references, no
/// `additionalProperties: false`, `properties` and `additionalProperties` never together.
fn assert_structural(node: &Json, path: &str) {
    let Json::Object(map) = node else {
        panic!("{path}: not an object");
    };
    assert!(!map.contains_key("$ref"), "{path}: $ref");
    assert!(
        map.get("additionalProperties") != Some(&Json::Bool(false)),
        "{path}: additionalProperties false"
    );
    assert!(
        !(map.contains_key("properties") && map.contains_key("additionalProperties")),
        "{path}: properties and additionalProperties"
    );
    let typed = map.get("type").is_some_and(Json::is_string)
        || map.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true))
        || map.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true));
    assert!(typed, "{path}: no single type");
    for (name, child) in map
        .get("properties")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        assert_structural(child, &format!("{path}.{name}"));
    }
    if let Some(items) = map.get("items") {
        assert_structural(items, &format!("{path}[]"));
    }
    if let Some(Json::Object(_)) = map.get("additionalProperties") {
        assert_structural(&map["additionalProperties"], &format!("{path}{{}}"));
    }
}

#[test]
fn the_crd_is_structural() {
    let crd = schema::crd();
    assert_eq!(crd["spec"]["group"], "argoproj.io");
    assert_eq!(crd["spec"]["names"]["plural"], "rolloutmanagers");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v1alpha1");
    assert_eq!(version["subresources"]["status"], serde_json::json!({}));
    assert_structural(&version["schema"]["openAPIV3Schema"], "");
}

#[test]
fn the_crd_accepts_every_valid_case() {
    let crd = schema::crd();
    let validator =
        jsonschema::validator_for(&crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
            .unwrap();
    for path in common::cases("testdata") {
        for manager in managers(&path) {
            assert!(validator.is_valid(&manager), "{}", path.display());
        }
    }
}
