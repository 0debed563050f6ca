//! Validation: from a decoded RolloutManager to a resolved [`Manager`], or diagnostics.
//!
//! Every check runs and every problem is reported, each at the [`Site`] of the value it is
//! about (every value of the model is [`Located`]: no path is written out here, so none can be
//! misspelt). Defaults are applied here, in one place, so rendering is a plain function of the
//! result. Plugin rules are in `plugins` (locations as the controller parses them in
//! [`location`]), Kubernetes syntax rules in [`syntax`], rules across documents in [`stream`].

pub(crate) mod env;
pub mod go_url;
pub mod image;
pub mod location;
pub mod plugin_images;
pub(crate) mod plugins;
pub mod quantity;
mod resources;
pub mod stream;
pub mod syntax;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::diag::Diagnostic;
use crate::input::located::{Located, Site};
use crate::model::RolloutManager;
use crate::model::kube::{self, StringMap, Toleration};
use crate::options::{Options, PullPolicy};
use crate::render::tables;
use crate::spec::Manager;

/// Collects the diagnostics of one document.
pub struct Checker {
    source: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Checker {
    pub fn new(source: Arc<str>) -> Self {
        Self {
            source,
            diagnostics: Vec::new(),
        }
    }

    fn push(&mut self, diagnostic: Diagnostic, site: &Site) -> &mut Diagnostic {
        let location = crate::diag::Location {
            source: self.source.clone(),
            pos: Some(site.pos),
        };
        self.diagnostics
            .push(diagnostic.at(location).path(site.path.clone()));
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// An error about the value at `site`.
    pub fn error(&mut self, site: &Site, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::error(message), site)
    }

    /// An error about an option rather than a value of the document.
    pub fn unlocated_error(&mut self, message: impl Into<String>) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::error(message));
        self.diagnostics.last_mut().expect("just pushed")
    }

    pub fn warning(&mut self, site: &Site, message: impl Into<String>) -> &mut Diagnostic {
        self.push(Diagnostic::warning(message), site)
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

/// A validated manager, and where the values that rules across documents talk about are.
#[derive(Debug)]
pub struct Checked {
    pub manager: Manager,
    pub origin: Origin,
}

/// Where a manager's identity was written, for diagnostics that involve several managers.
#[derive(Clone, Debug)]
pub struct Origin {
    pub source: Arc<str>,
    /// `metadata`, or the document when it has none.
    pub metadata: Site,
    /// `metadata.namespace`, when the namespace was written there (not taken from an option).
    pub namespace: Option<Site>,
    /// `spec.namespaceScoped` when written, else `spec`, else the document.
    pub scope: Site,
}

/// Validates one RolloutManager and resolves it. Diagnostics (warnings too) go to `checker`;
/// `None` when there was an error.
pub fn manager(
    checker: &mut Checker,
    raw: Located<RolloutManager>,
    options: &Options,
) -> Option<Checked> {
    let document = raw.site;
    let RolloutManager { metadata, spec, .. } = raw.inner;
    let metadata_site = metadata.as_ref().map_or(&document, |m| &m.site).clone();
    let metadata = metadata.map(|m| m.inner).unwrap_or_default();

    let name = metadata.name.filter(|name| !name.is_empty());
    match &name {
        None => checker
            .error(&metadata_site, "a RolloutManager needs a `name`")
            .with_hint("set `metadata.name`"),
        Some(name) => {
            if let Some(problem) = syntax::dns1123_subdomain(name) {
                checker
                    .error(
                        &name.site,
                        format!("`{}` is not a valid name: it {problem}", name.inner),
                    )
                    .with_hint("use a name like `argo-rollouts`");
            }
        }
    }
    let written_namespace = metadata.namespace.filter(|ns| !ns.is_empty());
    if let Some(namespace) = &written_namespace
        && let Err(problem) = crate::options::Namespace::parse(namespace)
    {
        checker
            .error(
                &namespace.site,
                format!("`{}` is {problem}", namespace.inner),
            )
            .with_hint("use a namespace name like `argo-rollouts`");
    }
    let namespace = match &written_namespace {
        Some(namespace) => Some(namespace.inner.clone()),
        None => options.namespace.as_ref().map(|ns| ns.as_str().to_owned()),
    };
    if namespace.is_none() {
        checker
            .error(
                &metadata_site,
                "no namespace: the RolloutManager has no `metadata.namespace` and none was given",
            )
            .with_hint("set `metadata.namespace`, or pass `--namespace NS`");
    }

    let spec_site = spec.as_ref().map_or(&document, |s| &s.site).clone();
    let spec = spec.map(|s| s.inner).unwrap_or_default();
    let scope = spec
        .namespace_scoped
        .as_ref()
        .map_or(&spec_site, |scoped| &scoped.site)
        .clone();
    let namespace_scoped = spec.namespace_scoped.as_ref().is_some_and(|s| s.inner);
    let high_availability = match &spec.ha {
        Some(ha) => match ha.enabled {
            Some(enabled) => enabled,
            None => {
                checker
                    .error(&ha.site, "`ha` needs `enabled`")
                    .with_hint("write `ha: {enabled: true}`, or remove `ha`");
                false
            }
        },
        None => false,
    };

    let image_pull_policy = match spec.image_pull_policy.as_ref().filter(|p| !p.is_empty()) {
        Some(policy) => match PullPolicy::parse(policy) {
            Ok(policy) => policy,
            Err(problem) => {
                checker.error(&policy.site, format!("`{}` is {problem}", policy.inner));
                PullPolicy::default()
            }
        },
        None => options.default_pull_policy(),
    };

    for value in [&spec.image, &spec.version].into_iter().flatten() {
        if value.contains(char::is_whitespace) {
            checker
                .error(
                    &value.site,
                    format!("`{}` contains whitespace", value.inner),
                )
                .with_hint("an image reference has no spaces");
        }
    }
    let image = controller_image(
        spec.image
            .as_deref()
            .map(String::as_str)
            .filter(|s| !s.is_empty()),
        spec.version
            .as_deref()
            .map(String::as_str)
            .filter(|s| !s.is_empty()),
        options.rollouts_image.as_ref().map(|i| i.as_str()),
    );

    let args = controller_args(
        checker,
        namespace_scoped,
        high_availability,
        spec.extra_command_args.unwrap_or_default(),
    );

    let env = spec.env.unwrap_or_default();
    env::check(checker, &env);
    let env = collapse_env(
        env.iter()
            .map(|var| {
                let mut var = var.to_kube();
                env::store_divisor(&mut var);
                var
            })
            .collect(),
    );

    let node_placement = spec.node_placement.unwrap_or_default();
    let extra_selector = node_placement.node_selector.unwrap_or_default();
    check_labels(checker, &extra_selector);
    let mut node_selector = BTreeMap::from([("kubernetes.io/os".to_owned(), "linux".to_owned())]);
    node_selector.extend(kube::string_map(&extra_selector));
    let tolerations = node_placement.tolerations;
    for toleration in tolerations.iter().flatten() {
        check_toleration(checker, toleration);
    }
    // An empty list is no list: the operator's objects omit it, and so does the API server.
    let tolerations = tolerations
        .filter(|list| !list.is_empty())
        .map(|list| list.iter().map(|toleration| toleration.to_kube()).collect());

    let additional = spec.additional_metadata.unwrap_or_default();
    let labels = additional.labels.unwrap_or_default();
    check_additional_labels(checker, &labels);
    let annotations = additional.annotations;
    if let Some(annotations) = &annotations {
        check_annotations(checker, annotations);
    }
    let annotations = annotations.map_or_else(BTreeMap::new, |a| kube::string_map(&a));

    let resources = match &spec.controller_resources {
        Some(resources) => resources::resources(checker, resources),
        None => default_resources(),
    };

    let plugins = plugins::plugins(
        checker,
        spec.plugins.unwrap_or_default(),
        options,
        namespace_scoped,
    );

    if checker.has_errors() {
        return None;
    }
    Some(Checked {
        manager: Manager {
            name: name?.inner,
            namespace: namespace?,
            namespace_scoped,
            high_availability,
            image,
            image_pull_policy,
            args,
            env,
            node_selector,
            tolerations,
            labels: kube::string_map(&labels),
            annotations,
            resources,
            notification_secret: !spec.skip_notification_secret_deployment.unwrap_or(false),
            network_policy: spec
                .network_policy
                .and_then(|policy| policy.enabled)
                .unwrap_or(true),
            plugins,
            image_delivery: options.image_delivery(),
        },
        origin: Origin {
            source: checker.source.clone(),
            metadata: metadata_site,
            namespace: written_namespace.map(|ns| ns.site),
            scope,
        },
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
    checker: &mut Checker,
    namespace_scoped: bool,
    high_availability: bool,
    extra: Vec<Located<String>>,
) -> Vec<String> {
    let mut args = Vec::new();
    if namespace_scoped {
        args.push(tables::NAMESPACED_ARG.to_owned());
    }
    if high_availability {
        args.push(tables::LEADER_ELECT_ARG.to_owned());
        args.push("true".to_owned());
    }
    for arg in &extra {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        if flag.starts_with("--") && args.iter().any(|a| a == flag) {
            checker
                .error(
                    &arg.site,
                    format!("`{flag}` is already set by the renderer"),
                )
                .with_hint(match flag {
                    tables::NAMESPACED_ARG => "remove it: `namespaceScoped: true` adds it",
                    _ => "remove it: `ha.enabled: true` adds `--leader-elect true`",
                });
        }
    }
    args.extend(extra.into_iter().map(|arg| arg.inner));
    args
}

/// Duplicate names collapse to the last one written; the result is sorted by name, as the
/// operator does.
fn collapse_env(env: Vec<EnvVar>) -> Vec<EnvVar> {
    let by_name: BTreeMap<String, EnvVar> =
        env.into_iter().map(|var| (var.name.clone(), var)).collect();
    by_name.into_values().collect()
}

/// Label keys and values as the API server validates them.
fn check_labels(checker: &mut Checker, labels: &StringMap) {
    for (key, value) in labels {
        if let Some(problem) = syntax::qualified_name(key) {
            checker
                .error(
                    &key.site,
                    format!("`{}` is not a valid label key: {problem}", key.inner),
                )
                .with_hint("label keys look like `team` or `example.com/team`");
        }
        if let Some(problem) = syntax::label_value(value) {
            checker
                .error(
                    &value.site,
                    format!("`{}` is not a valid label value: it {problem}", value.inner),
                )
                .with_hint("put free text in an annotation instead");
        }
    }
}

fn check_additional_labels(checker: &mut Checker, labels: &StringMap) {
    check_labels(checker, labels);
    if let Some((key, value)) = labels
        .iter()
        .find(|(key, _)| key.as_str() == tables::SELECTOR_KEY)
    {
        checker
            .warning(
                &key.site,
                format!(
                    "relabels every object and the controller pods `{}: {}`, but the metrics Service and the NetworkPolicy still select `{}`",
                    tables::SELECTOR_KEY,
                    value.inner,
                    tables::RESOURCE_NAME
                ),
            )
            .with_hint("use another label key");
    }
}

fn check_annotations(checker: &mut Checker, annotations: &Located<StringMap>) {
    let mut total = 0;
    for (key, value) in annotations.iter() {
        total += key.len() + value.len();
        if let Some(problem) = syntax::annotation_key(key) {
            checker
                .error(
                    &key.site,
                    format!("`{}` is not a valid annotation key: {problem}", key.inner),
                )
                .with_hint("annotation keys look like `description` or `example.com/owner`");
        }
        if key.as_str() == tables::CHECKSUM_ANNOTATION {
            checker
                .warning(
                    &key.site,
                    "is replaced on the pod template by the checksum of the ConfigMap",
                )
                .with_hint("remove it");
        }
    }
    // The pod template carries the checksum annotation besides these.
    let checksum = tables::CHECKSUM_ANNOTATION.len() + 64;
    let limit = syntax::MAX_ANNOTATIONS_BYTES - checksum;
    if total > limit {
        checker
            .error(
                &annotations.site,
                format!(
                    "the annotations take {total} bytes; with the {checksum} of the checksum annotation the pod template would exceed the {} bytes the API server accepts",
                    syntax::MAX_ANNOTATIONS_BYTES
                ),
            )
            .with_hint(format!("keep them to {limit} bytes at most (keys and values together)"));
    }
}

fn check_toleration(checker: &mut Checker, toleration: &Located<Toleration>) {
    let operator = toleration.operator.as_ref();
    // An empty operator means `Equal`, as for the API server.
    let operator_text = match operator.map(|o| o.as_str()) {
        None | Some("") => "Equal",
        Some(text) => text,
    };
    if let Some(operator) = operator
        && !matches!(operator_text, "Equal" | "Exists")
    {
        checker
            .error(
                &operator.site,
                format!("`{}` is not a toleration operator", operator.inner),
            )
            .with_hint("use `Equal` or `Exists`");
    }
    if operator_text == "Exists"
        && let Some(value) = toleration.value.as_ref().filter(|v| !v.is_empty())
    {
        checker
            .error(
                &value.site,
                "a toleration with operator `Exists` cannot have a value",
            )
            .with_hint("remove `value`, or use operator `Equal`");
    }
    if operator_text == "Equal"
        && let Some(value) = &toleration.value
        && let Some(problem) = syntax::label_value(value)
    {
        // The API server checks a toleration's value as a label value.
        checker.error(
            &value.site,
            format!(
                "`{}` is not a valid toleration value: {problem}",
                value.inner
            ),
        );
    }
    if let Some(effect) = &toleration.effect
        && !matches!(
            effect.as_str(),
            "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute"
        )
    {
        checker
            .error(
                &effect.site,
                format!("`{}` is not a taint effect", effect.inner),
            )
            .with_hint("use `NoSchedule`, `PreferNoSchedule` or `NoExecute`");
    }
    let key = toleration.key.as_ref().filter(|k| !k.is_empty());
    if let Some(key) = key
        && let Some(problem) = syntax::qualified_name(key)
    {
        checker.error(
            &key.site,
            format!("`{}` is not a valid taint key: {problem}", key.inner),
        );
    }
    if key.is_none() && operator_text != "Exists" {
        checker
            .error(
                &toleration.site,
                "a toleration without a key must use operator `Exists`",
            )
            .with_hint("add `operator: Exists`, or a `key`");
    }
    if let Some(seconds) = &toleration.toleration_seconds
        && toleration.effect.as_ref().map(|e| e.as_str()) != Some("NoExecute")
    {
        checker
            .error(
                &seconds.site,
                "`tolerationSeconds` only applies to the `NoExecute` effect",
            )
            .with_hint("set `effect: NoExecute`, or remove `tolerationSeconds`");
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
