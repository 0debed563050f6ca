//! Validation: from a decoded RolloutManager to a resolved [`Manager`], or diagnostics.
//!
//! Every check runs and every problem is reported, each pointing at the value it is about.
//! Defaults are applied here, in one place, so rendering is a plain function of the result.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::diag::{Diagnostic, FieldPath};
use crate::model::{self, RolloutManager};
use crate::options::Options;
use crate::spec::{Manager, Plugin, PluginKind, Plugins};
use crate::tables;
use crate::yaml::Document;

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

    fn locate(&self, diagnostic: Diagnostic, path: &FieldPath) -> Diagnostic {
        diagnostic
            .at(self.document.location(self.document.root.locate(path)))
            .path(path.clone())
    }

    pub fn error(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        let diagnostic = self.locate(Diagnostic::error(message), path);
        self.diagnostics.push(diagnostic);
        self.diagnostics.last_mut().expect("just pushed")
    }

    pub fn warning(&mut self, path: &FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        let diagnostic = self.locate(Diagnostic::warning(message), path);
        self.diagnostics.push(diagnostic);
        self.diagnostics.last_mut().expect("just pushed")
    }

    fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

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
    if name.is_none() {
        checker
            .error(
                &FieldPath::from("metadata.name"),
                "a RolloutManager needs a name",
            )
            .with_hint("set `metadata.name`");
    }
    let namespace = metadata
        .namespace
        .filter(|ns| !ns.is_empty())
        .or_else(|| options.namespace.clone());
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

    let env = collapse_env(spec.env.unwrap_or_default());

    let node_placement = spec.node_placement.unwrap_or_default();
    let mut node_selector = BTreeMap::from([("kubernetes.io/os".to_owned(), "linux".to_owned())]);
    node_selector.extend(node_placement.node_selector.unwrap_or_default());

    let additional = spec.additional_metadata.unwrap_or_default();

    let plugins = plugins(
        checker,
        spec.plugins.unwrap_or_default(),
        options.openshift_route_plugin.as_deref(),
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
        tolerations: node_placement.tolerations,
        labels: additional.labels.unwrap_or_default(),
        annotations: additional.annotations.unwrap_or_default(),
        resources: spec.controller_resources.unwrap_or_else(default_resources),
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
    let own: Vec<String> = args.clone();
    for (index, arg) in extra.iter().enumerate() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        if flag.starts_with("--") && own.iter().any(|a| a == flag) {
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

/// Duplicate names collapse to the last one written; the result is sorted by name, as the
/// operator does.
fn collapse_env(env: Vec<EnvVar>) -> Vec<EnvVar> {
    let by_name: BTreeMap<String, EnvVar> =
        env.into_iter().map(|var| (var.name.clone(), var)).collect();
    by_name.into_values().collect()
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

fn plugins(checker: &mut Checker<'_>, raw: model::Plugins, openshift: Option<&str>) -> Plugins {
    let mut resolved = Plugins::default();
    let mut seen: BTreeMap<String, FieldPath> = BTreeMap::new();
    let lists = [
        (PluginKind::TrafficRouter, raw.traffic_management),
        (PluginKind::MetricProvider, raw.metric),
        (PluginKind::Step, raw.step),
    ];
    for (kind, list) in lists {
        let list_path = FieldPath::from("spec.plugins").key(kind.spec_field());
        for (index, plugin) in list.unwrap_or_default().into_iter().enumerate() {
            let path = list_path.index(index);
            if let Some(plugin) = self::plugin(checker, &path, plugin) {
                if let Some(first) = seen.get(&plugin.name) {
                    let message = format!(
                        "the plugin `{}` is already configured at {first}",
                        plugin.name
                    );
                    checker
                        .error(&path.key("name"), message)
                        .with_hint("the controller installs every plugin at `plugin-bin/<name>`, so two entries with one name overwrite each other; remove one");
                    continue;
                }
                seen.insert(plugin.name.clone(), path.key("name"));
                resolved.list_mut(kind).push(plugin);
            }
        }
    }
    if let Some(location) = openshift {
        resolved.traffic_router.push(Plugin {
            name: tables::OPENSHIFT_PLUGIN_NAME.to_owned(),
            location: location.to_owned(),
            sha256: String::new(),
            args: Vec::new(),
            disabled: false,
            headers_from: Vec::new(),
            rules: Vec::new(),
        });
    }
    for kind in PluginKind::ALL {
        resolved
            .list_mut(kind)
            .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    }
    resolved
}

fn plugin(checker: &mut Checker<'_>, path: &FieldPath, raw: model::Plugin) -> Option<Plugin> {
    let name = raw.name.filter(|name| !name.is_empty());
    if name.is_none() {
        checker
            .error(path, "a plugin needs a `name`")
            .with_hint("name it `<namespace>/<name>`, e.g. `argoproj-labs/gatewayAPI`");
    }
    let location = raw.location.filter(|location| !location.is_empty());
    if location.is_none() {
        checker
            .error(path, "a plugin needs a `location`")
            .with_hint("give the `https://` or `file://` URL of the plugin binary");
    }
    let headers_from = raw
        .headers_from
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .filter_map(|(index, header)| {
            let name = header.secret_ref.and_then(|r| r.name).filter(|n| !n.is_empty());
            if name.is_none() {
                checker
                    .error(
                        &path.key("headersFrom").index(index),
                        "`headersFrom` entries need `secretRef.name`",
                    )
                    .with_hint("name the Secret (in the controller's namespace) whose entries become HTTP headers");
            }
            name
        })
        .collect();
    Some(Plugin {
        name: name?,
        location: location?,
        sha256: raw.sha256.unwrap_or_default(),
        args: raw.args.unwrap_or_default(),
        disabled: raw.disabled.unwrap_or(false),
        headers_from,
        rules: raw.rules.unwrap_or_default(),
    })
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
