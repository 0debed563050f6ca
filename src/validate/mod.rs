//! Validation: from a decoded RolloutManager to a resolved [`Manager`], or diagnostics.
//!
//! Every check runs and every problem is reported, each pointing at the value it is about.
//! Defaults are applied here, in one place, so rendering is a plain function of the result.
//! Plugin rules are in `plugins`, Kubernetes syntax rules in [`syntax`], rules across
//! documents in [`stream`].

mod plugins;
pub mod stream;
pub mod syntax;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::diag::{Diagnostic, FieldPath};
use crate::input::yaml::Document;
use crate::model::{self, RolloutManager};
use crate::options::Options;
use crate::render::tables;
use crate::spec::Manager;

/// Collects diagnostics about one document, locating each by its field path.
pub struct Checker<'a> {
    pub document: &'a Document,
    pub diagnostics: Vec<Diagnostic>,
}

impl<'a> Checker<'a> {
    pub fn new(document: &'a Document) -> Self {
        Self {
            document,
            diagnostics: Vec::new(),
        }
    }

    fn push(&mut self, diagnostic: Diagnostic, path: &FieldPath, at_key: bool) -> &mut Diagnostic {
        let root = &self.document.root;
        let pos = if at_key {
            root.locate_key(path)
        } else {
            root.locate(path)
        };
        self.diagnostics.push(
            diagnostic
                .at(self.document.location(pos))
                .path(path.clone()),
        );
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// An error about the value at `path`.
    pub fn error(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::error(message), path, false)
    }

    /// An error about the map key that ends `path` (a label name, say).
    pub fn key_error(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::error(message), path, true)
    }

    pub fn warning(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::warning(message), path, false)
    }

    pub fn key_warning(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::warning(message), path, true)
    }

    fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// `checker.error(..).with_hint(..)` without moving the diagnostic out.
trait Hint {
    fn with_hint(&mut self, hint: impl Into<String>);
}

impl Hint for Diagnostic {
    fn with_hint(&mut self, hint: impl Into<String>) {
        self.hint = Some(hint.into());
    }
}

/// Validates one RolloutManager and resolves it. Diagnostics (warnings too) go to `checker`;
/// `None` when there was an error.
pub fn manager(
    checker: &mut Checker<'_>,
    raw: RolloutManager,
    options: &Options,
) -> Option<Manager> {
    let metadata = raw.metadata.unwrap_or_default();
    let name = metadata.name.filter(|name| !name.is_empty());
    match &name {
        None => checker
            .error(
                &FieldPath::from("metadata.name"),
                "a RolloutManager needs a name",
            )
            .with_hint("set `metadata.name`"),
        Some(name) => {
            if let Some(problem) = syntax::dns1123_subdomain(name) {
                checker
                    .error(
                        &FieldPath::from("metadata.name"),
                        format!("`{name}` is not a valid name: it {problem}"),
                    )
                    .with_hint("use a name like `argo-rollouts`");
            }
        }
    }
    let namespace = match metadata.namespace.filter(|ns| !ns.is_empty()) {
        Some(namespace) => {
            if let Some(problem) = syntax::dns1123_label(&namespace) {
                checker
                    .error(
                        &FieldPath::from("metadata.namespace"),
                        format!("`{namespace}` is not a valid namespace: it {problem}"),
                    )
                    .with_hint("use a namespace name like `argo-rollouts`");
            }
            Some(namespace)
        }
        None => options.namespace.clone(),
    };
    if namespace.is_none() {
        checker
            .error(
                &FieldPath::from("metadata"),
                "no namespace: the RolloutManager has no `metadata.namespace` and none was given",
            )
            .with_hint("set `metadata.namespace`, or pass `--namespace NS`");
    }
    let spec = raw.spec.unwrap_or_default();
    let spec_path = FieldPath::from("spec");

    let namespace_scoped = spec.namespace_scoped.unwrap_or(false);
    let high_availability = match spec.ha {
        Some(model::HighAvailability {
            enabled: Some(enabled),
        }) => enabled,
        Some(model::HighAvailability { enabled: None }) => {
            checker
                .error(&spec_path.key("ha"), "`ha` needs `enabled`")
                .with_hint("write `ha: {enabled: true}`, or remove `ha`");
            false
        }
        None => false,
    };

    let image_pull_policy = match spec.image_pull_policy.filter(|p| !p.is_empty()) {
        Some(policy) if tables::IMAGE_PULL_POLICIES.contains(&policy.as_str()) => policy,
        Some(policy) => {
            checker
                .error(
                    &spec_path.key("imagePullPolicy"),
                    format!("`{policy}` is not an image pull policy"),
                )
                .with_hint(format!(
                    "use one of: {}",
                    tables::IMAGE_PULL_POLICIES.join(", ")
                ));
            policy
        }
        None => options
            .image_pull_policy
            .clone()
            .unwrap_or_else(|| tables::DEFAULT_IMAGE_PULL_POLICY.to_owned()),
    };

    for field in ["image", "version"] {
        let value = if field == "image" {
            &spec.image
        } else {
            &spec.version
        };
        if let Some(value) = value
            && value.contains(char::is_whitespace)
        {
            checker
                .error(
                    &spec_path.key(field),
                    format!("`{value}` contains whitespace"),
                )
                .with_hint("an image reference has no spaces");
        }
    }
    let image = controller_image(
        spec.image.as_deref().filter(|s| !s.is_empty()),
        spec.version.as_deref().filter(|s| !s.is_empty()),
        options.rollouts_image.as_deref(),
    );

    let args = controller_args(
        checker,
        namespace_scoped,
        high_availability,
        spec.extra_command_args.unwrap_or_default(),
    );

    let env = spec.env.unwrap_or_default();
    check_env(checker, &env);
    let env = collapse_env(env);

    let node_placement = spec.node_placement.unwrap_or_default();
    let node_selector_path = FieldPath::from("spec.nodePlacement.nodeSelector");
    let extra_selector = node_placement.node_selector.unwrap_or_default();
    check_labels(checker, &node_selector_path, &extra_selector);
    let mut node_selector = BTreeMap::from([("kubernetes.io/os".to_owned(), "linux".to_owned())]);
    node_selector.extend(extra_selector);
    let tolerations = node_placement.tolerations;
    for (index, toleration) in tolerations.iter().flatten().enumerate() {
        check_toleration(
            checker,
            &FieldPath::from("spec.nodePlacement.tolerations").index(index),
            toleration,
        );
    }

    let additional = spec.additional_metadata.unwrap_or_default();
    let labels = additional.labels.unwrap_or_default();
    let annotations = additional.annotations.unwrap_or_default();
    check_additional_metadata(checker, &labels, &annotations);

    let resources = spec.controller_resources.unwrap_or_else(default_resources);
    check_resources(checker, &resources);

    let plugins = plugins::plugins(
        checker,
        spec.plugins.unwrap_or_default(),
        options,
        namespace_scoped,
    );

    if checker.has_errors() {
        return None;
    }
    Some(Manager {
        name: name?,
        namespace: namespace?,
        namespace_scoped,
        high_availability,
        image,
        image_pull_policy,
        args,
        env,
        node_selector,
        tolerations,
        labels,
        annotations,
        resources,
        notification_secret: !spec.skip_notification_secret_deployment.unwrap_or(false),
        network_policy: spec
            .network_policy
            .and_then(|policy| policy.enabled)
            .unwrap_or(true),
        plugins,
    })
}

/// The operator's image rule: `image` (default or the `--rollouts-image` repository) joined
/// with `version` (default tag); a version containing `:` is a digest. `--rollouts-image` is
/// used verbatim when the spec sets neither.
pub fn controller_image(
    image: Option<&str>,
    version: Option<&str>,
    default: Option<&str>,
) -> String {
    if let (None, None, Some(default)) = (image, version, default) {
        return default.to_owned();
    }
    let image = image
        .map(str::to_owned)
        .or_else(|| default.map(|d| image_repository(d).to_owned()))
        .unwrap_or_else(|| tables::DEFAULT_IMAGE.to_owned());
    let version = version.unwrap_or(tables::DEFAULT_VERSION);
    if version.contains(':') {
        format!("{image}@{version}")
    } else {
        format!("{image}:{version}")
    }
}

/// An image reference without its tag or digest.
pub fn image_repository(reference: &str) -> &str {
    let without_digest = reference
        .split_once('@')
        .map_or(reference, |(name, _)| name);
    match without_digest.rfind(':') {
        Some(colon) if !without_digest[colon..].contains('/') => &without_digest[..colon],
        _ => without_digest,
    }
}

fn controller_args(
    checker: &mut Checker<'_>,
    namespace_scoped: bool,
    high_availability: bool,
    extra: Vec<String>,
) -> Vec<String> {
    let mut args = Vec::new();
    if namespace_scoped {
        args.push(tables::NAMESPACED_ARG.to_owned());
    }
    if high_availability {
        args.push(tables::LEADER_ELECT_ARG.to_owned());
        args.push("true".to_owned());
    }
    for (index, arg) in extra.iter().enumerate() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        if flag.starts_with("--") && args.iter().any(|a| a == flag) {
            checker
                .error(
                    &FieldPath::from("spec.extraCommandArgs").index(index),
                    format!("`{flag}` is already set by the renderer"),
                )
                .with_hint(match flag {
                    tables::NAMESPACED_ARG => "remove it: `namespaceScoped: true` adds it",
                    _ => "remove it: `ha.enabled: true` adds `--leader-elect true`",
                });
        }
    }
    args.extend(extra);
    args
}

fn check_env(checker: &mut Checker<'_>, env: &[EnvVar]) {
    for (index, var) in env.iter().enumerate() {
        if let Some(problem) = syntax::env_var_name(&var.name) {
            checker.error(
                &FieldPath::from("spec.env").index(index).key("name"),
                format!(
                    "`{}` is not a valid environment variable name: it {problem}",
                    var.name
                ),
            );
        }
        if var.value.as_deref().is_some_and(|v| !v.is_empty()) && var.value_from.is_some() {
            checker
                .error(
                    &FieldPath::from("spec.env").index(index),
                    "`value` and `valueFrom` cannot both be set",
                )
                .with_hint("keep one of them");
        }
    }
}

/// Duplicate names collapse to the last one written; the result is sorted by name, as the
/// operator does.
fn collapse_env(env: Vec<EnvVar>) -> Vec<EnvVar> {
    let by_name: BTreeMap<String, EnvVar> =
        env.into_iter().map(|var| (var.name.clone(), var)).collect();
    by_name.into_values().collect()
}

/// Label keys and values as the API server validates them.
fn check_labels(checker: &mut Checker<'_>, path: &FieldPath, labels: &BTreeMap<String, String>) {
    for (key, value) in labels {
        let entry = path.key(key);
        if let Some(problem) = syntax::qualified_name(key) {
            checker
                .key_error(
                    &entry,
                    format!("`{key}` is not a valid label key: {problem}"),
                )
                .with_hint("label keys look like `team` or `example.com/team`");
        }
        if let Some(problem) = syntax::label_value(value) {
            checker
                .error(
                    &entry,
                    format!("`{value}` is not a valid label value: it {problem}"),
                )
                .with_hint("put free text in an annotation instead");
        }
    }
}

fn check_additional_metadata(
    checker: &mut Checker<'_>,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
) {
    let labels_path = FieldPath::from("spec.additionalMetadata.labels");
    check_labels(checker, &labels_path, labels);
    if let Some(value) = labels.get(tables::SELECTOR_KEY) {
        checker
            .key_warning(
                &labels_path.key(tables::SELECTOR_KEY),
                format!("relabels every object and the controller pods `{}: {value}`, but the metrics Service and the NetworkPolicy still select `{}`", tables::SELECTOR_KEY, tables::RESOURCE_NAME),
            )
            .with_hint("use another label key");
    }
    let annotations_path = FieldPath::from("spec.additionalMetadata.annotations");
    let mut total = 0;
    for (key, value) in annotations {
        total += key.len() + value.len();
        if let Some(problem) = syntax::annotation_key(key) {
            checker
                .key_error(
                    &annotations_path.key(key),
                    format!("`{key}` is not a valid annotation key: {problem}"),
                )
                .with_hint("annotation keys look like `description` or `example.com/owner`");
        }
    }
    if total > syntax::MAX_ANNOTATIONS_BYTES {
        checker.error(
            &annotations_path,
            format!(
                "the annotations take {total} bytes; the API server accepts at most {} per object",
                syntax::MAX_ANNOTATIONS_BYTES
            ),
        );
    }
    if annotations.contains_key(tables::CHECKSUM_ANNOTATION) {
        checker
            .key_warning(
                &annotations_path.key(tables::CHECKSUM_ANNOTATION),
                "is replaced on the pod template by the checksum of the ConfigMap",
            )
            .with_hint("remove it");
    }
}

fn check_toleration(checker: &mut Checker<'_>, path: &FieldPath, toleration: &Toleration) {
    let operator = toleration.operator.as_deref().unwrap_or("Equal");
    if !matches!(operator, "Equal" | "Exists") {
        checker
            .error(
                &path.key("operator"),
                format!("`{operator}` is not a toleration operator"),
            )
            .with_hint("use `Equal` or `Exists`");
    }
    if operator == "Exists" && toleration.value.as_deref().is_some_and(|v| !v.is_empty()) {
        checker
            .error(
                &path.key("value"),
                "a toleration with operator `Exists` cannot have a value",
            )
            .with_hint("remove `value`, or use operator `Equal`");
    }
    if let Some(effect) = toleration.effect.as_deref()
        && !matches!(effect, "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute")
    {
        checker
            .error(
                &path.key("effect"),
                format!("`{effect}` is not a taint effect"),
            )
            .with_hint("use `NoSchedule`, `PreferNoSchedule` or `NoExecute`");
    }
    if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty())
        && let Some(problem) = syntax::qualified_name(key)
    {
        checker.error(
            &path.key("key"),
            format!("`{key}` is not a valid taint key: {problem}"),
        );
    }
    if toleration.key.as_deref().is_none_or(str::is_empty) && operator != "Exists" {
        checker
            .error(
                path,
                "a toleration without a key must use operator `Exists`",
            )
            .with_hint("add `operator: Exists`, or a `key`");
    }
    if toleration.toleration_seconds.is_some() && toleration.effect.as_deref() != Some("NoExecute")
    {
        checker
            .error(
                &path.key("tolerationSeconds"),
                "`tolerationSeconds` only applies to the `NoExecute` effect",
            )
            .with_hint("set `effect: NoExecute`, or remove `tolerationSeconds`");
    }
}

fn check_resources(checker: &mut Checker<'_>, resources: &ResourceRequirements) {
    let path = FieldPath::from("spec.controllerResources");
    for (field, list) in [
        ("limits", &resources.limits),
        ("requests", &resources.requests),
    ] {
        for (name, Quantity(value)) in list.iter().flatten() {
            if let Some(problem) = syntax::quantity(value) {
                checker.error(&path.key(field).key(name), format!("`{value}` {problem}"));
            }
        }
    }
}

fn default_resources() -> ResourceRequirements {
    ResourceRequirements {
        limits: Some(BTreeMap::from([(
            "ephemeral-storage".to_owned(),
            Quantity("1Gi".to_owned()),
        )])),
        ..ResourceRequirements::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_follows_the_operator() {
        assert_eq!(
            controller_image(None, None, None),
            "quay.io/argoproj/argo-rollouts:v1.9.1"
        );
        assert_eq!(
            controller_image(Some("quay.io/me/rollouts"), Some("sha256:abc"), None),
            "quay.io/me/rollouts@sha256:abc"
        );
        assert_eq!(
            controller_image(None, None, Some("registry:5000/r/ar:v9")),
            "registry:5000/r/ar:v9"
        );
        assert_eq!(
            controller_image(None, Some("v1.8.0"), Some("registry:5000/r/ar:v9")),
            "registry:5000/r/ar:v1.8.0"
        );
        assert_eq!(
            controller_image(None, Some("v1.8.0"), Some("r/ar@sha256:abc")),
            "r/ar:v1.8.0"
        );
        assert_eq!(
            controller_image(Some("mine/ar"), None, Some("r/ar:v9")),
            "mine/ar:v1.9.1"
        );
    }

    #[test]
    fn env_keeps_the_last_of_each_name_sorted() {
        let var = |name: &str, value: &str| EnvVar {
            name: name.into(),
            value: Some(value.into()),
            ..EnvVar::default()
        };
        let env = collapse_env(vec![var("B", "1"), var("A", "2"), var("B", "3")]);
        assert_eq!(env, vec![var("A", "2"), var("B", "3")]);
    }
}
