//! The RolloutManager this project accepts, as a JSON Schema (for editors) and as a
//! CustomResourceDefinition (for clusters that want the object itself).
//!
//! Both are generated from [`crate::model`] with schemars, so they cannot drift from what the
//! decoder accepts; tests hold the committed `schema/rolloutmanager.json` to the generated one.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value as Json, json};

use crate::model::{self, RolloutManager};
use crate::validate::quantity;

/// The JSON Schema (draft 2020-12). Unknown fields are errors everywhere, embedded Kubernetes
/// types included, as they are for the decoder: every object with `properties` gets
/// `additionalProperties: false`.
pub fn json_schema() -> Json {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<RolloutManager>();
    let mut schema = serde_json::to_value(schema).expect("schemas serialize");
    if let Json::Object(root) = &mut schema {
        root.insert(
            "$id".into(),
            json!("https://rollouts-render.invalid/schema/rolloutmanager.json"),
        );
    }
    walk(&mut schema, &mut |node| {
        unwrap_description(node);
        if is_quantity(node) {
            node.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string", "pattern": quantity::CRD_PATTERN}]),
            );
        }
        if node.contains_key("properties") && !node.contains_key("additionalProperties") {
            node.insert("additionalProperties".into(), json!(false));
        }
        strip_null_from_required(node);
    });
    schema
}

/// The text of `schema/rolloutmanager.json`.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).expect("schemas serialize");
    text.push('\n');
    text
}

/// The schema k8s-openapi gives `resource.Quantity`: int-or-string, with no pattern.
fn is_quantity(node: &Map<String, Json>) -> bool {
    node.get("x-kubernetes-int-or-string") == Some(&json!(true))
        && node
            .get("description")
            .and_then(Json::as_str)
            .is_some_and(|d| d.starts_with("Quantity is a fixed-point representation"))
}

/// Doc comments wrap at 100 columns; descriptions read better as paragraphs.
fn unwrap_description(node: &mut Map<String, Json>) {
    if let Some(Json::String(text)) = node.get_mut("description") {
        let paragraphs: Vec<String> = text
            .split("\n\n")
            .map(|paragraph| {
                paragraph
                    .split('\n')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        *text = paragraphs.join("\n\n");
    }
}

/// A required field may not be null (the validator reports it missing).
fn strip_null_from_required(node: &mut Map<String, Json>) {
    let required: Vec<String> = node
        .get("required")
        .and_then(Json::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let Some(Json::Object(properties)) = node.get_mut("properties") else {
        return;
    };
    for name in required {
        if let Some(Json::Object(property)) = properties.get_mut(&name)
            && let Some(Json::Array(types)) = property.get_mut("type")
        {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let single = types[0].clone();
                property.insert("type".into(), single);
            }
        }
    }
}

/// Visits every object in a JSON tree, parents first.
fn walk(value: &mut Json, visit: &mut impl FnMut(&mut Map<String, Json>)) {
    match value {
        Json::Object(map) => {
            visit(map);
            for child in map.values_mut() {
                walk(child, visit);
            }
        }
        Json::Array(items) => {
            for item in items {
                walk(item, visit);
            }
        }
        _ => {}
    }
}

/// A structural CustomResourceDefinition for `rolloutmanagers.argoproj.io` with the extended
/// schema: every node typed, no references, no `additionalProperties: false` (the API server
/// prunes unknown fields instead), `metadata` left to the API server, `status` open.
pub fn crd() -> Json {
    let mut settings = SchemaSettings::openapi3();
    settings.inline_subschemas = true;
    let schema = settings
        .into_generator()
        .into_root_schema_for::<RolloutManager>();
    let mut schema = serde_json::to_value(schema).expect("schemas serialize");
    if let Json::Object(root) = &mut schema {
        for key in ["$schema", "title", "definitions", "components"] {
            root.remove(key);
        }
        root.insert("type".into(), json!("object"));
        if let Some(Json::Object(properties)) = root.get_mut("properties") {
            // The API server allows nothing on `metadata` but `name`/`generateName` rules.
            properties.insert("metadata".into(), json!({"type": "object"}));
            properties.insert(
                "status".into(),
                json!({
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "description": "Written by the argo-rollouts-manager operator; ignored by rollouts-render.",
                }),
            );
            for field in ["apiVersion", "kind"] {
                properties.insert(field.into(), json!({"type": "string"}));
            }
        }
        root.remove("required");
    }
    walk(&mut schema, &mut |node| {
        unwrap_description(node);
        if is_quantity(node) {
            // As controller-gen writes a `resource.Quantity` (and so the operator's CRD).
            node.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
            node.insert("pattern".into(), json!(quantity::CRD_PATTERN));
        }
        node.remove("nullable");
        node.remove("$schema");
        if node.get("default") == Some(&Json::Null) {
            node.remove("default");
        }
        if node.get("additionalProperties") == Some(&json!(false)) {
            node.remove("additionalProperties");
        }
        if let Some(Json::Array(types)) = node.get("type") {
            let concrete: Vec<&Json> = types.iter().filter(|t| *t != "null").collect();
            if let [single] = concrete.as_slice() {
                let single = (*single).clone();
                node.insert("type".into(), single);
            }
        }
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "rolloutmanagers.argoproj.io"},
        "spec": {
            "group": "argoproj.io",
            "names": {
                "kind": model::KIND,
                "listKind": "RolloutManagerList",
                "plural": "rolloutmanagers",
                "singular": "rolloutmanager",
            },
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}},
            }],
        },
    })
}
