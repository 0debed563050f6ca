//! The controller's `env`, as the API server validates a container's environment
//! (k8s.io/kubernetes v1.34 `ValidateEnv`, `validateEnvVarValueFrom` and the selectors'
//! rules, with `ConvertDownwardAPIFieldLabel`).

use super::{Checker, Hint, quantity, syntax};
use crate::input::located::{Located, Site};
use crate::model::kube::{EnvVar, KeySelector, ObjectFieldSelector, ResourceFieldSelector};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KubeQuantity;

/// `validEnvDownwardAPIFieldPathExpressions`: what a container's env may read of its pod.
const FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validContainerResourceFieldPathExpressions`.
const RESOURCES: [&str; 6] = [
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
];

/// The divisors the API server accepts, by `Quantity.String()`.
const CPU_DIVISORS: [&str; 2] = ["1m", "1"];
const MEMORY_DIVISORS: [&str; 13] = [
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

pub fn check(checker: &mut Checker, env: &[Located<EnvVar>]) {
    for var in env {
        match &var.name {
            Some(name) if !name.is_empty() => {
                if let Some(problem) = syntax::env_var_name(name) {
                    checker.error(
                        &name.site,
                        format!(
                            "`{}` is not a valid environment variable name: it {problem}",
                            name.inner
                        ),
                    );
                } else if syntax::strict_env_var_name(name).is_some() {
                    checker
                        .warning(
                            &name.site,
                            format!(
                                "`{}` is a valid environment variable name from Kubernetes 1.32 on; older API servers refuse it",
                                name.inner
                            ),
                        )
                        .with_hint("on Kubernetes 1.31 or older, use letters, digits, '_', '-' and '.', not starting with a digit");
                }
            }
            _ => {
                checker
                    .error(&var.site, "an environment variable needs a `name`")
                    .with_hint("add `name: VARIABLE_NAME`");
            }
        }
        if let Some(from) = &var.value_from {
            value_from(checker, var, from);
        }
    }
}

fn value_from(
    checker: &mut Checker,
    var: &Located<EnvVar>,
    from: &Located<crate::model::kube::EnvVarSource>,
) {
    let sources = [
        from.field_ref.is_some(),
        from.resource_field_ref.is_some(),
        from.config_map_key_ref.is_some(),
        from.secret_key_ref.is_some(),
    ]
    .into_iter()
    .filter(|set| *set)
    .count();
    if sources == 0 {
        checker
            .error(
                &from.site,
                "`valueFrom` must name one of `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            )
            .with_hint("or write the value with `value`");
    } else if var.value.as_ref().is_some_and(|v| !v.is_empty()) {
        checker
            .error(&var.site, "`value` and `valueFrom` cannot both be set")
            .with_hint("keep one of them");
    } else if sources > 1 {
        checker
            .error(&from.site, "`valueFrom` may name only one source")
            .with_hint(
                "keep one of `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef`",
            );
    }
    if let Some(field) = &from.field_ref {
        field_ref(checker, field);
    }
    if let Some(resource) = &from.resource_field_ref {
        resource_field_ref(checker, resource);
    }
    for (selector, kind) in [
        (&from.config_map_key_ref, "ConfigMap"),
        (&from.secret_key_ref, "Secret"),
    ] {
        if let Some(selector) = selector {
            key_selector(checker, selector, kind);
        }
    }
}

/// `SplitMaybeSubscriptedPath`: `metadata.labels['key']` is the path and the subscript.
fn split_subscript(path: &str) -> Option<(&str, &str)> {
    let inner = path.strip_suffix("']")?;
    let (path, subscript) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, subscript))
}

fn field_ref(checker: &mut Checker, field: &Located<ObjectFieldSelector>) {
    // The API server defaults an empty apiVersion to v1 before it validates.
    if let Some(version) = field.api_version.as_ref().filter(|v| !v.is_empty())
        && version.as_str() != "v1"
    {
        checker
            .error(
                &version.site,
                format!("`{}` is not a version of the downward API", version.inner),
            )
            .with_hint("write `apiVersion: v1`, or leave it out");
        return;
    }
    let Some(path) = field.field_path.as_ref().filter(|p| !p.is_empty()) else {
        checker
            .error(&field.site, "`fieldRef` needs a `fieldPath`")
            .with_hint(format!("one of: {}", FIELD_PATHS.join(", ")));
        return;
    };
    if let Some((prefix, subscript)) = split_subscript(path) {
        let key = match prefix {
            "metadata.annotations" => syntax::go_to_lower(subscript),
            "metadata.labels" => subscript.to_owned(),
            _ => {
                checker.error(
                    &path.site,
                    format!("`{prefix}` cannot take a subscript such as `['{subscript}']`"),
                );
                return;
            }
        };
        if let Some(problem) = syntax::qualified_name(&key) {
            checker.error(
                &path.site,
                format!("`{subscript}` is not a valid key: {problem}"),
            );
        }
        return;
    }
    // `spec.host` is the old name of `spec.nodeName`, which the API server still converts.
    let path_value = if path.as_str() == "spec.host" {
        "spec.nodeName"
    } else {
        path.as_str()
    };
    if !FIELD_PATHS.contains(&path_value) {
        checker
            .error(
                &path.site,
                format!("`{}` is not a field a container's env can read", path.inner),
            )
            .with_hint(format!(
                "one of: {}, or metadata.labels['<key>'], metadata.annotations['<key>']",
                FIELD_PATHS.join(", ")
            ));
    }
}

fn resource_field_ref(checker: &mut Checker, reference: &Located<ResourceFieldSelector>) {
    let Some(resource) = reference.resource.as_ref().filter(|r| !r.is_empty()) else {
        checker
            .error(&reference.site, "`resourceFieldRef` needs a `resource`")
            .with_hint(format!("one of: {}", RESOURCES.join(", ")));
        return;
    };
    let huge_pages =
        resource.starts_with("requests.hugepages-") || resource.starts_with("limits.hugepages-");
    if !RESOURCES.contains(&resource.as_str()) && !huge_pages {
        checker
            .error(
                &resource.site,
                format!(
                    "`{}` is not a resource a container's env can read",
                    resource.inner
                ),
            )
            .with_hint(format!("one of: {}", RESOURCES.join(", ")));
        return;
    }
    let Some(divisor) = &reference.divisor else {
        return;
    };
    let Some(quantity) = super::resources::manager_quantity(checker, divisor) else {
        return;
    };
    if quantity.is_zero() {
        return;
    }
    let stored = quantity.stored;
    let allowed: &[&str] = match resource.as_str() {
        "limits.cpu" | "requests.cpu" => &CPU_DIVISORS,
        _ => &MEMORY_DIVISORS,
    };
    if !allowed.contains(&stored.as_str()) {
        checker
            .error(
                &divisor.site,
                format!(
                    "`{}` is not a divisor of `{}`",
                    divisor.text(),
                    resource.inner
                ),
            )
            .with_hint(format!("use one of: {}", allowed.join(", ")));
    }
}

/// `configMapKeyRef` and `secretKeyRef`: a valid object name and key.
fn key_selector(checker: &mut Checker, selector: &Located<KeySelector>, kind: &str) {
    match &selector.name {
        Some(name) => {
            if let Some(problem) = syntax::dns1123_subdomain(name) {
                checker.error(
                    &name.site,
                    format!("`{}` is not a valid {kind} name: it {problem}", name.inner),
                );
            }
        }
        None => {
            checker
                .error(
                    &selector.site,
                    format!("the reference needs the {kind}'s `name`"),
                )
                .with_hint(format!("name the {kind} in the controller's namespace"));
        }
    }
    let site: &Site = selector
        .key
        .as_ref()
        .map_or(&selector.site, |key| &key.site);
    match selector.key.as_ref().filter(|k| !k.is_empty()) {
        Some(key) => {
            if let Some(problem) = config_map_key(key) {
                checker.error(
                    site,
                    format!("`{}` is not a valid key: it {problem}", key.inner),
                );
            }
        }
        None => {
            checker
                .error(site, format!("the reference needs the {kind}'s `key`"))
                .with_hint("name the entry whose value the variable takes");
        }
    }
}

/// `IsConfigMapKey`.
pub fn config_map_key(key: &str) -> Option<String> {
    if key.is_empty() {
        return Some("must not be empty".to_owned());
    }
    if key.len() > 253 {
        return Some(format!(
            "must be no more than 253 characters (it has {})",
            key.len()
        ));
    }
    if !key
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        return Some("must consist of letters, digits, '-', '_' or '.'".to_owned());
    }
    (key == "." || key == ".." || key.starts_with(".."))
        .then(|| "must not be '.' or '..', or start with '..'".to_owned())
}

/// Writes a valid divisor in the form the API server stores (`1.0` as `1`), as the resources.
pub fn store_divisor(var: &mut k8s_openapi::api::core::v1::EnvVar) {
    let divisor = var
        .value_from
        .as_mut()
        .and_then(|from| from.resource_field_ref.as_mut())
        .and_then(|reference| reference.divisor.as_mut());
    if let Some(divisor) = divisor
        && let Ok(parsed) = quantity::parse(&divisor.0)
    {
        *divisor = KubeQuantity(parsed.stored);
    }
}
