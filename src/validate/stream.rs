//! Rules across the documents of one input: controllers that would fight over the same
//! Rollouts, and Rollouts or AnalysisTemplates that use a plugin no RolloutManager of the input
//! configures (the controller would only fail at reconcile time, with "plugin … not configured
//! in configmap").

use std::collections::HashMap;

use crate::diag::{Diagnostic, Diagnostics, FieldPath};
use crate::input::yaml::{Document, Node, Value};
use crate::spec::{Manager, PluginKind};

/// A rendered manager and the document it came from.
pub struct Site<'a> {
    pub manager: &'a Manager,
    pub document: &'a Document,
}

impl Site<'_> {
    fn location(&self, path: &str) -> crate::diag::Location {
        let path = FieldPath::from(path);
        self.document.location(self.document.root.locate(&path))
    }

    fn describe(&self) -> String {
        let pos = self.document.root.locate(&FieldPath::from("metadata"));
        format!(
            "`{}` ({}:{})",
            self.manager.name, self.document.source, pos.line
        )
    }
}

/// One controller per namespace, and a cluster-scoped controller only on its own.
pub fn check_managers(sites: &[Site<'_>], diagnostics: &mut Diagnostics) {
    let mut first_in_namespace: HashMap<&str, &Site<'_>> = HashMap::new();
    for site in sites {
        if let Some(first) = first_in_namespace.get(site.manager.namespace.as_str()) {
            diagnostics.push(
                Diagnostic::error(format!(
                    "a second RolloutManager in namespace `{}`; the first is {}",
                    site.manager.namespace,
                    first.describe()
                ))
                .at(site.location("metadata.namespace"))
                .path(FieldPath::from("metadata.namespace"))
                .hint("one namespace runs one Argo Rollouts controller; merge the two RolloutManagers"),
            );
            continue;
        }
        first_in_namespace.insert(&site.manager.namespace, site);
        if site.manager.namespace_scoped {
            continue;
        }
        if let Some(other) = sites.iter().find(|other| !std::ptr::eq(*other, site)) {
            diagnostics.push(
                Diagnostic::error(format!(
                    "this RolloutManager is cluster-scoped, so its controller watches every namespace, and {} is here too",
                    other.describe()
                ))
                .at(site.location("spec.namespaceScoped"))
                .path(FieldPath::from("spec.namespaceScoped"))
                .hint("two controllers would act on the same Rollouts: set `namespaceScoped: true` on all of them, or keep only one"),
            );
        }
    }
}

/// A plugin named by a Rollout or an analysis template.
#[derive(Clone, Debug)]
pub struct Reference<'a> {
    pub kind: PluginKind,
    pub name: String,
    pub document: &'a Document,
    pub path: FieldPath,
    /// Whether `path` ends at a map key naming the plugin (rather than at a `name:` value).
    pub at_key: bool,
}

/// The plugins a passthrough document uses.
pub fn references(document: &Document) -> Vec<Reference<'_>> {
    let root = &document.root;
    let kind = root.get("kind").and_then(Node::scalar).unwrap_or_default();
    let group = root
        .get("apiVersion")
        .and_then(Node::scalar)
        .and_then(|v| v.split_once('/'))
        .map_or("", |(group, _)| group);
    if group != "argoproj.io" {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut map_keys = |kind: PluginKind, path: FieldPath, node: Option<&Node>| {
        if let Some(Node {
            value: Value::Map(entries),
            ..
        }) = node
        {
            for entry in entries {
                if let Some(name) = entry.key.scalar() {
                    found.push(Reference {
                        kind,
                        name: name.to_owned(),
                        document,
                        path: path.key(name),
                        at_key: true,
                    });
                }
            }
        }
    };
    let get_path = |path: &[&str]| path.iter().try_fold(root, |node, key| node.get(key));
    match kind {
        "Rollout" => {
            let canary = FieldPath::from("spec.strategy.canary");
            map_keys(
                PluginKind::TrafficRouter,
                canary.key("trafficRouting").key("plugins"),
                get_path(&["spec", "strategy", "canary", "trafficRouting", "plugins"]),
            );
            if let Some(Node {
                value: Value::Seq(steps),
                ..
            }) = get_path(&["spec", "strategy", "canary", "steps"])
            {
                for (index, step) in steps.iter().enumerate() {
                    if let Some(name) = step
                        .get("plugin")
                        .and_then(|p| p.get("name"))
                        .and_then(Node::scalar)
                    {
                        found.push(Reference {
                            kind: PluginKind::Step,
                            name: name.to_owned(),
                            document,
                            path: canary.key("steps").index(index).key("plugin").key("name"),
                            at_key: false,
                        });
                    }
                }
            }
        }
        "AnalysisTemplate" | "ClusterAnalysisTemplate" => {
            if let Some(Node {
                value: Value::Seq(metrics),
                ..
            }) = get_path(&["spec", "metrics"])
            {
                for (index, metric) in metrics.iter().enumerate() {
                    map_keys(
                        PluginKind::MetricProvider,
                        FieldPath::from("spec.metrics")
                            .index(index)
                            .key("provider")
                            .key("plugin"),
                        metric.get("provider").and_then(|p| p.get("plugin")),
                    );
                }
            }
        }
        _ => {}
    }
    found
}

/// Warns about every reference to a plugin that no manager of the input configures.
pub fn check_references(
    managers: &[&Manager],
    references: &[Reference<'_>],
    diagnostics: &mut Diagnostics,
) {
    if managers.is_empty() {
        return;
    }
    let configured = |kind: PluginKind, name: &str| {
        managers
            .iter()
            .any(|m| m.plugins.list(kind).iter().any(|p| p.name == name))
    };
    for reference in references {
        if configured(reference.kind, &reference.name) {
            continue;
        }
        let elsewhere = PluginKind::ALL
            .into_iter()
            .find(|kind| configured(*kind, &reference.name));
        let hint = match elsewhere {
            Some(kind) => format!(
                "it is configured as a {}; a {} belongs in `spec.plugins.{}`",
                kind.noun(),
                reference.kind.noun(),
                reference.kind.spec_field()
            ),
            None => format!(
                "add it to `spec.plugins.{}` of the RolloutManager, or the controller fails with \"plugin {} not configured in configmap\"",
                reference.kind.spec_field(),
                reference.name
            ),
        };
        let root = &reference.document.root;
        let pos = if reference.at_key {
            root.locate_key(&reference.path)
        } else {
            root.locate(&reference.path)
        };
        diagnostics.push(
            Diagnostic::warning(format!(
                "uses the {} `{}`, which no RolloutManager of this input configures",
                reference.kind.noun(),
                reference.name
            ))
            .at(reference.document.location(pos))
            .path(reference.path.clone())
            .hint(hint),
        );
    }
}
