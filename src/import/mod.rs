//! `import`: from an existing `argo-rollouts-config` ConfigMap to a RolloutManager; from the
//! argo-helm chart's values in [`helm`].
//!
//! The plugin lists are read the way the controller reads them (sigs.k8s.io/yaml into
//! `[]PluginItem`: YAML 1.1, field names matched case-insensitively, unknown keys dropped), so
//! whatever works in a cluster imports; everything the controller would silently drop or
//! reject is reported. The RolloutManager written is then validated like any other input, so
//! what `import` prints, `render` accepts, and renders back to the same plugin lists.

use serde_json::{Map, Value as Json, json};

use crate::diag::{Diagnostic, Diagnostics, FieldPath};
use crate::input::source::{Inputs, Source};
use crate::input::yaml::{self, Document, Node};
use crate::input::yaml11;
use crate::options::{Namespace, Options};
use crate::render::tables;
use crate::spec::PluginKind;
use crate::{model, pipeline};

pub(crate) mod helm;
mod images;

/// The key the operator once wrote metric plugins under; the controller never read it.
pub const LEGACY_METRIC_KEY: &str = "metricPlugins";

/// RolloutManagers reproducing every `argo-rollouts-config` of the input, and warnings.
#[derive(Debug)]
pub struct Imported {
    pub documents: Vec<Json>,
    pub warnings: Diagnostics,
}

pub fn import(inputs: &Inputs, name: &str) -> Result<Imported, Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    let mut documents = Vec::new();
    for source in &inputs.sources {
        match yaml::parse(&source.name, &source.text, &mut diagnostics) {
            Ok(parsed) => documents.extend(parsed),
            Err(error) => diagnostics.push(error),
        }
    }
    let deployments: Vec<images::Deployment> = documents
        .iter()
        .filter(|document| is_controller_deployment(&document.root))
        .filter_map(|document| {
            let mut ignored = Diagnostics::default();
            let object = yaml11::to_json(document, &mut ignored)?;
            Some(images::Deployment {
                namespace: object["metadata"]["namespace"].as_str().map(str::to_owned),
                object,
            })
        })
        .collect();
    let mut managers = Vec::new();
    for document in &documents {
        if is_rollouts_config(&document.root) {
            managers.push(manager_from(document, name, &deployments, &mut diagnostics));
        }
    }
    if managers.is_empty() && !diagnostics.has_errors() {
        diagnostics.push(
            Diagnostic::error(format!(
                "no ConfigMap named `{}` found in {}",
                tables::CONFIG_MAP_NAME,
                inputs.names.join(", ")
            ))
            .hint("export it with `kubectl get configmap argo-rollouts-config -n <namespace> -o yaml`"),
        );
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }

    if !check_written(&managers, &mut diagnostics) {
        return Err(diagnostics);
    }
    Ok(Imported {
        documents: managers,
        warnings: diagnostics,
    })
}

/// Strict on what is written: it must pass every check of `render`. Its warnings (and
/// errors) are added to `diagnostics`, at `<stdout>` lines; false on any error.
pub(crate) fn check_written(managers: &[Json], diagnostics: &mut Diagnostics) -> bool {
    let text = crate::emit::stream(managers, crate::Format::Yaml);
    let check = Inputs::from(vec![Source::new("<stdout>", text)]);
    let options = Options {
        namespace: Some(Namespace::parse("default").expect("a valid namespace")),
        allow_empty: true,
        ..Options::default()
    };
    match pipeline::render(&check, &options) {
        Ok(rendered) => {
            diagnostics.extend(rendered.warnings);
            true
        }
        Err(errors) => {
            diagnostics.extend(errors);
            false
        }
    }
}

fn is_rollouts_config(root: &Node) -> bool {
    root.get("kind").and_then(Node::scalar) == Some("ConfigMap")
        && root
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::scalar)
            == Some(tables::CONFIG_MAP_NAME)
}

/// The controller's Deployment (`argo-rollouts`), which may deliver plugins in images.
fn is_controller_deployment(root: &Node) -> bool {
    root.get("kind").and_then(Node::scalar) == Some("Deployment")
        && root
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::scalar)
            == Some(tables::RESOURCE_NAME)
}

/// The Deployment beside a ConfigMap of `namespace`: the one of the same namespace, or the
/// only one of the input when either namespace is not written.
fn deployment_for<'a>(
    deployments: &'a [images::Deployment],
    namespace: Option<&str>,
) -> Option<&'a Json> {
    let same = deployments
        .iter()
        .find(|d| d.namespace.is_some() && d.namespace.as_deref() == namespace);
    match (same, deployments) {
        (Some(d), _) => Some(&d.object),
        (None, [only]) if only.namespace.is_none() || namespace.is_none() => Some(&only.object),
        _ => None,
    }
}

/// Where a diagnostic about one data key of the ConfigMap points.
struct Site<'a> {
    document: &'a Document,
    path: FieldPath,
}

impl Site<'_> {
    fn diagnostic(&self, diagnostic: Diagnostic) -> Diagnostic {
        let pos = self.document.root.locate_key(&self.path);
        diagnostic
            .at(self.document.location(pos))
            .path(self.path.clone())
    }
}

fn manager_from(
    document: &Document,
    name: &str,
    deployments: &[images::Deployment],
    diagnostics: &mut Diagnostics,
) -> Json {
    let namespace = document
        .root
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Node::scalar)
        .filter(|ns| !ns.is_empty());
    let mut lists: Vec<(PluginKind, Vec<Json>)> = PluginKind::ALL
        .iter()
        .map(|kind| (*kind, Vec::new()))
        .collect();
    let data = yaml11::to_json(document, diagnostics)
        .and_then(|object| object.get("data").cloned())
        .unwrap_or(Json::Null);
    let Json::Object(data) = data else {
        return manager_json(name, namespace, lists);
    };
    for (key, value) in &data {
        let site = Site {
            document,
            path: FieldPath::from("data").key(key),
        };
        let kind = match key.as_str() {
            tables::TRAFFIC_ROUTER_PLUGINS_KEY => PluginKind::TrafficRouter,
            tables::METRIC_PROVIDER_PLUGINS_KEY => PluginKind::MetricProvider,
            tables::STEP_PLUGINS_KEY => PluginKind::Step,
            LEGACY_METRIC_KEY => {
                diagnostics.push(site.diagnostic(
                    Diagnostic::warning(format!(
                        "`{LEGACY_METRIC_KEY}` is a key older operators wrote and the controller never read; its plugins are imported as metric plugins"
                    ))
                    .hint("these plugins become active once rendered: check they are still wanted"),
                ));
                PluginKind::MetricProvider
            }
            _ => {
                diagnostics.push(site.diagnostic(
                    Diagnostic::warning("is not a plugin list; the controller does not read it, and it is not imported")
                        .hint("keys read by the controller: trafficRouterPlugins, metricProviderPlugins, stepPlugins"),
                ));
                continue;
            }
        };
        let Some(text) = value.as_str() else {
            diagnostics
                .push(site.diagnostic(Diagnostic::error("ConfigMap data values must be strings")));
            continue;
        };
        for mut plugin in read_list(&site, text, kind, diagnostics) {
            if let Json::Object(fields) = &mut plugin
                && let Some(diagnostic) =
                    images::recover(fields, deployment_for(deployments, namespace))
            {
                diagnostics.push(site.diagnostic(diagnostic));
            }
            let list = &mut lists
                .iter_mut()
                .find(|(k, _)| *k == kind)
                .expect("every kind")
                .1;
            let name = plugin["name"].clone();
            if list.iter().any(|p| p["name"] == name) {
                diagnostics.push(site.diagnostic(Diagnostic::warning(format!(
                    "the plugin {name} is listed twice; the first entry is kept"
                ))));
                continue;
            }
            list.push(plugin);
        }
    }
    manager_json(name, namespace, lists)
}

fn manager_json(name: &str, namespace: Option<&str>, lists: Vec<(PluginKind, Vec<Json>)>) -> Json {
    let mut metadata = json!({"name": name});
    if let Some(namespace) = namespace {
        metadata["namespace"] = json!(namespace);
    }
    let mut plugins = Map::new();
    for (kind, mut list) in lists {
        if !list.is_empty() {
            list.sort_by(|a, b| {
                let name = |p: &Json| p["name"].as_str().unwrap_or_default().to_owned();
                name(a).cmp(&name(b))
            });
            plugins.insert(kind.spec_field().to_owned(), Json::Array(list));
        }
    }
    let spec = if plugins.is_empty() {
        json!({})
    } else {
        json!({"plugins": plugins})
    };
    json!({
        "apiVersion": model::API_VERSION,
        "kind": model::KIND,
        "metadata": metadata,
        "spec": spec,
    })
}

/// Parses one plugin list as the controller does, into RolloutManager plugin entries.
fn read_list(
    site: &Site<'_>,
    text: &str,
    kind: PluginKind,
    diagnostics: &mut Diagnostics,
) -> Vec<Json> {
    let source = std::sync::Arc::from(format!("{}:{}", site.document.source, site.path));
    let mut inner = Diagnostics::default();
    let parsed = match yaml::parse(&source, text, &mut inner) {
        Ok(documents) => documents,
        Err(error) => {
            diagnostics.push(site.diagnostic(Diagnostic::error(format!(
                "the controller cannot read this list: {}",
                error.message
            ))));
            return Vec::new();
        }
    };
    let Some(document) = parsed.first() else {
        return Vec::new();
    };
    let Some(Json::Array(items)) = yaml11::to_json(document, &mut inner) else {
        diagnostics.push(site.diagnostic(Diagnostic::error(
            "the controller cannot read this value: it is not a list of plugins",
        )));
        return Vec::new();
    };
    let plugins = read_entries(&items, kind, &mut |index, problem| {
        let diagnostic = match problem {
            Problem::NotAMapping => Diagnostic::error(format!(
                "entry {index} is not a mapping; the controller cannot read this list"
            )),
            Problem::UnknownKey(key) => Diagnostic::warning(format!(
                "entry {index}: the controller drops the unknown key `{key}`; it is not imported"
            )),
            Problem::BadType(key) => Diagnostic::error(format!(
                "entry {index}: `{key}` has a type the controller cannot read"
            )),
            Problem::Missing(fields) => Diagnostic::error(format!(
                "entry {index} has no {}; the controller fails at start-up on it",
                fields.join(" and ")
            )),
            Problem::OpenShift(location) => openshift_warning(&location),
        };
        diagnostics.push(site.diagnostic(diagnostic));
    });
    // Problems inside the value are reported at its key: positions inside the string would
    // not point anywhere in the file.
    for diagnostic in inner {
        diagnostics.push(site.diagnostic(diagnostic));
    }
    plugins
}

/// What is wrong with one entry of a plugin list, as the controller reads it.
pub(crate) enum Problem {
    /// The entry is not a mapping: the controller fails on the whole list.
    NotAMapping,
    /// A key the controller drops (it reads only `PluginItem`'s fields).
    UnknownKey(String),
    /// A field with a value of the wrong type: the controller fails on the whole list.
    BadType(String),
    /// Required fields the entry lacks: the controller fails at start-up.
    Missing(Vec<&'static str>),
    /// The traffic plugin the operator adds itself, from this location: left to
    /// `--openshift-route-plugin`.
    OpenShift(String),
}

/// The warning about the operator's own OpenShift plugin, which is not imported.
pub(crate) fn openshift_warning(location: &str) -> Diagnostic {
    let flag = if location == tables::OPENSHIFT_PLUGIN_LOCATION {
        "--openshift-route-plugin".to_owned()
    } else {
        format!("--openshift-route-plugin={location}")
    };
    Diagnostic::warning(format!(
        "`{}` is not imported: the operator adds it itself",
        tables::OPENSHIFT_PLUGIN_NAME
    ))
    .hint(format!("render with `{flag}` to keep it"))
}

/// The plugin entries of a list as the controller reads them (sigs.k8s.io/yaml into
/// `[]PluginItem`: field names matched case-insensitively, unknown keys dropped), as
/// RolloutManager plugin entries. Each problem is reported with the index of its entry; an
/// entry the controller would fail on is left out.
pub(crate) fn read_entries(
    items: &[Json],
    kind: PluginKind,
    report: &mut dyn FnMut(usize, Problem),
) -> Vec<Json> {
    let mut plugins = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Json::Object(fields) = item else {
            report(index, Problem::NotAMapping);
            continue;
        };
        let mut plugin = Map::new();
        for (key, value) in fields {
            // encoding/json matches field names case-insensitively.
            let field = [
                "name",
                "location",
                "sha256",
                "args",
                "disabled",
                "headersFrom",
            ]
            .into_iter()
            .find(|f| f.eq_ignore_ascii_case(key));
            let Some(field) = field else {
                report(index, Problem::UnknownKey(key.clone()));
                continue;
            };
            let valid = match field {
                "name" | "location" | "sha256" => value.is_string(),
                "args" => value
                    .as_array()
                    .is_some_and(|a| a.iter().all(Json::is_string)),
                "disabled" => value.is_boolean(),
                _ => value.as_array().is_some_and(|headers| {
                    headers.iter().all(|h| h["secretRef"]["name"].is_string())
                }),
            };
            if !valid && !value.is_null() {
                report(index, Problem::BadType(key.clone()));
                continue;
            }
            let keep = match field {
                "sha256" => value.as_str().is_some_and(|s| !s.is_empty()),
                "disabled" => value.as_bool() == Some(true),
                "args" | "headersFrom" => value.as_array().is_some_and(|a| !a.is_empty()),
                _ => !value.is_null(),
            };
            if keep {
                plugin.insert(field.to_owned(), value.clone());
            }
        }
        let missing: Vec<&'static str> = ["name", "location"]
            .into_iter()
            .filter(|field| !plugin.contains_key(*field))
            .collect();
        if !missing.is_empty() {
            report(index, Problem::Missing(missing));
            continue;
        }
        if kind == PluginKind::TrafficRouter
            && plugin.get("name").and_then(Json::as_str) == Some(tables::OPENSHIFT_PLUGIN_NAME)
        {
            let location = plugin
                .get("location")
                .and_then(Json::as_str)
                .unwrap_or_default();
            report(index, Problem::OpenShift(location.to_owned()));
            continue;
        }
        plugins.push(Json::Object(plugin));
    }
    plugins
}
