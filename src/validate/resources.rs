//! `controllerResources`, as the API server validates a container's resources
//! (k8s.io/kubernetes v1.34 `validateResourceRequirements` with `validateContainerResourceName`,
//! `ValidateResourceQuantityValue` and the helpers they use), and the quantities in the form
//! the API server stores ([`super::quantity`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ResourceClaim, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KubeQuantity;

use super::quantity::{self, Quantity, QuantityError};
use super::{Checker, Hint, syntax};
use crate::input::located::Located;
use crate::model::kube::{self, QuantityMap, QuantityValue};

/// Resources a container may name without a domain (`standardContainerResources`).
const CONTAINER_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];
const HUGE_PAGES_PREFIX: &str = "hugepages-";

/// `IsNativeResource`: no domain, or the `kubernetes.io/` one.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`.
fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && syntax::qualified_name(&format!("requests.{name}")).is_none()
}

/// `IsOvercommitAllowed`: a request may be below its limit.
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !name.starts_with(HUGE_PAGES_PREFIX)
}

/// What is wrong with a resource name in a container, in the API server's words.
fn name_problem(name: &str) -> Option<String> {
    if let Some(problem) = syntax::qualified_name(name) {
        return Some(format!("is not a valid resource name: {problem}"));
    }
    if !name.contains('/') {
        if !CONTAINER_RESOURCES.contains(&name) && !name.starts_with(HUGE_PAGES_PREFIX) {
            return Some(format!(
                "is not a resource of a container: use {}, or a `hugepages-<size>`",
                CONTAINER_RESOURCES.join(", ")
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        return Some("does not follow the extended resource name standard".to_owned());
    }
    None
}

/// The huge page size of a `hugepages-<size>` name (`HugePageSizeFromResourceName`).
fn huge_page_size(name: &str) -> Option<Quantity> {
    let size = quantity::parse(name.strip_prefix(HUGE_PAGES_PREFIX)?).ok()?;
    (!size.is_negative() && !size.is_zero()).then_some(size)
}

/// Checks the requirements and resolves them with every quantity in the stored form.
pub fn resources(checker: &mut Checker, raw: &kube::ResourceRequirements) -> ResourceRequirements {
    let limits = raw.limits.as_ref().map(|list| quantities(checker, list));
    let requests = raw.requests.as_ref().map(|list| quantities(checker, list));
    let mut uses_cpu_or_memory = false;
    let mut uses_huge_pages = false;
    for list in [&limits, &requests].into_iter().flatten() {
        for (name, _) in list.values() {
            uses_cpu_or_memory |= matches!(name.as_str(), "cpu" | "memory");
            uses_huge_pages |= name.starts_with(HUGE_PAGES_PREFIX);
        }
    }
    if let Some(requests) = &requests {
        for (name, (key, request)) in requests {
            let limit = limits.as_ref().and_then(|l| l.get(name)).map(|(_, q)| q);
            match limit {
                Some(limit) if !overcommit_allowed(name) && request.cmp_amount(limit).is_ne() => {
                    checker
                        .error(
                            &key.site,
                            format!(
                                "the request of `{name}` is {}, its limit {}: they must be equal",
                                request.stored, limit.stored
                            ),
                        )
                        .with_hint("huge pages and extended resources cannot be overcommitted");
                }
                Some(limit) if request.cmp_amount(limit).is_gt() => {
                    checker
                        .error(
                            &key.site,
                            format!(
                                "the request of `{name}` is {}, above its limit of {}",
                                request.stored, limit.stored
                            ),
                        )
                        .with_hint("raise the limit, or lower the request");
                }
                None if !overcommit_allowed(name) && !has_raw_limit(raw, name) => {
                    checker
                        .error(
                            &key.site,
                            format!("`{name}` needs a limit, equal to its request"),
                        )
                        .with_hint("huge pages and extended resources cannot be overcommitted");
                }
                _ => {}
            }
        }
    }
    if uses_huge_pages && !uses_cpu_or_memory {
        checker
            .error(
                &first_site(raw),
                "huge pages need a `cpu` or `memory` request or limit",
            )
            .with_hint("add `memory` to the limits");
    }
    if let Some(claims) = raw.claims.as_ref().filter(|claims| !claims.is_empty()) {
        checker
            .error(
                &claims.site,
                "claims name the pod's resource claims, and the controller's pod has none",
            )
            .with_hint("remove `claims`");
    }
    let plain = |list: Option<BTreeMap<String, (Located<String>, Quantity)>>| {
        list.map(|list| {
            list.into_iter()
                .map(|(name, (_, quantity))| (name, KubeQuantity(quantity.stored)))
                .collect()
        })
    };
    ResourceRequirements {
        claims: raw.claims.as_ref().map(|claims| {
            claims
                .inner
                .iter()
                .map(|claim| ResourceClaim {
                    name: claim.name.clone().unwrap_or_default(),
                    request: claim.request.clone(),
                })
                .collect()
        }),
        limits: plain(limits),
        requests: plain(requests),
    }
}

/// Whether a limit was written for `name` (a refused one has been reported already).
fn has_raw_limit(raw: &kube::ResourceRequirements, name: &str) -> bool {
    raw.limits
        .as_ref()
        .is_some_and(|limits| limits.keys().any(|key| key.as_str() == name))
}

fn first_site(raw: &kube::ResourceRequirements) -> crate::input::located::Site {
    raw.limits
        .as_ref()
        .or(raw.requests.as_ref())
        .map(|list| list.site.clone())
        .unwrap_or_default()
}

/// Each quantity of a list checked and parsed; the valid ones by resource name.
fn quantities(
    checker: &mut Checker,
    list: &Located<QuantityMap>,
) -> BTreeMap<String, (Located<String>, Quantity)> {
    let mut parsed = BTreeMap::new();
    for (name, value) in list.iter() {
        if let Some(problem) = name_problem(name) {
            checker.error(&name.site, format!("`{}` {problem}", name.inner));
        }
        let Some(quantity) = manager_quantity(checker, value) else {
            continue;
        };
        if quantity.is_negative() {
            checker
                .error(&value.site, format!("`{}` is negative", value.inner))
                .with_hint("resources are amounts: write 0 or more");
            continue;
        }
        if is_extended(name) && !quantity.is_whole() {
            checker
                .error(
                    &value.site,
                    format!(
                        "`{}` must be a whole number for an extended resource",
                        value.inner
                    ),
                )
                .with_hint("extended resources are counted, not measured");
            continue;
        }
        if matches!(name.as_str(), "memory" | "ephemeral-storage") && !quantity.is_whole() {
            // The API server only warns ("fractional byte value"); a pod with a
            // memory limit of a tenth of a byte never runs, so it is an error here.
            let hint = if value.text().ends_with('m') {
                "`m` means a thousandth: for megabytes write `M` or `Mi`, like `128Mi`"
            } else {
                "bytes are whole: write a whole number, like `128Mi` or `1G`"
            };
            checker
                .error(
                    &value.site,
                    format!(
                        "`{}` is a fractional number of bytes, and `{}` is counted in bytes",
                        value.text(),
                        name.inner
                    ),
                )
                .with_hint(hint);
            continue;
        }
        if name.starts_with(HUGE_PAGES_PREFIX) {
            match huge_page_size(name) {
                Some(size) if quantity.is_multiple_of(&size) => {}
                _ => {
                    checker
                        .error(
                            &value.site,
                            format!(
                                "`{}` is not a whole number of `{}` pages",
                                value.inner, name.inner
                            ),
                        )
                        .with_hint("use a multiple of the page size, like `2Mi` pages: `4Mi`");
                    continue;
                }
            }
        }
        parsed.insert(name.inner.clone(), (name.clone(), quantity));
    }
    parsed
}

/// A quantity of a RolloutManager, read as the API server reads it there and in the
/// Deployment: the CRD's types and pattern, then `ParseQuantity`. Reports what is wrong.
pub fn manager_quantity(checker: &mut Checker, value: &Located<QuantityValue>) -> Option<Quantity> {
    let text = match &value.inner {
        QuantityValue::Text(text) | QuantityValue::Integer(text) => text,
        QuantityValue::Number(number) => {
            checker
                .error(
                    &value.site,
                    format!(
                        "`{number}` is a YAML number, and the RolloutManager CRD takes a quantity as a string or an integer"
                    ),
                )
                .with_hint(format!("quote it: `\"{number}\"`"));
            return None;
        }
        QuantityValue::Other(other) => {
            checker
                .error(&value.site, format!("expected a quantity, found `{other}`"))
                .with_hint("write a number with an optional suffix, like `500m` or `128Mi`");
            return None;
        }
    };
    if text.trim() != text && quantity::parse(text.trim()).is_ok() {
        // The API server would take it in a Deployment (it trims); the CRD's pattern does not.
        checker
            .error(
                &value.site,
                format!("`{text}` has white space around it, which the RolloutManager CRD's pattern refuses"),
            )
            .with_hint(format!("write `{}`", text.trim()));
        return None;
    }
    let parsed = quantity::parse(text);
    let quantity = match parsed {
        Ok(quantity) if quantity::matches_crd_pattern(text) => quantity,
        Ok(_) => {
            // `m`, `+` or `.` parse as zero; the CRD's pattern wants digits.
            checker
                .error(&value.site, format!("`{text}` has no number in it"))
                .with_hint("write a number with an optional suffix, like `500m`");
            return None;
        }
        Err(error) => {
            let why = match error {
                QuantityError::Suffix => " (the suffix is not one the API server knows)",
                QuantityError::Format | QuantityError::Numeric => "",
            };
            checker
                .error(&value.site, format!("`{text}` is not a quantity{why}"))
                .with_hint(
                    "write a number with an optional suffix, like `500m`, `2`, `128Mi` or `1Gi`",
                );
            return None;
        }
    };
    if !quantity.stored_means_the_same() {
        checker
            .error(
                &value.site,
                format!(
                    "the API server would store `{text}` as `{}`, another amount",
                    quantity.stored
                ),
            )
            .with_hint("write it with an exponent, like `1e21`: Go drops an exponent that has no SI suffix");
        return None;
    }
    Some(quantity)
}
