//! The Kubernetes types a RolloutManager embeds, mirrored field for field with every value
//! [`Located`], so that validation can point at any of them.
//!
//! Each mirror has exactly the fields of the k8s-openapi type of the pinned API version (so
//! unknown fields are the same), decodes the same way (required strings may be missing and
//! default to empty, as k8s-openapi reads them), and converts to that type for rendering. The
//! JSON Schema uses the k8s-openapi types themselves (`#[schemars(with = …)]` in the model), so
//! editors see Kubernetes' own descriptions.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::rbac::v1 as rbac;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use serde::Deserialize;

use crate::input::located::Located;

/// A mapping of strings, each key and value located (labels, annotations, node selectors).
pub type StringMap = BTreeMap<Located<String>, Located<String>>;

/// Resource quantities by resource name (`limits`, `requests`).
pub type QuantityMap = BTreeMap<Located<String>, Located<QuantityValue>>;

/// A quantity as a RolloutManager holds it. Its CRD types quantities `x-kubernetes-int-or-string`
/// (with the operator's pattern for strings), and Kubernetes reads YAML 1.1 and sends JSON: a
/// plain `0x10` is the integer 16, `1e9` the number 1000000000 (an integer to the API server),
/// `0.5` a number the CRD refuses.
#[derive(Clone, Debug, PartialEq)]
pub enum QuantityValue {
    /// A string, as written.
    Text(String),
    /// An integer, in the decimal digits Go's `json.Marshal` writes for it.
    Integer(String),
    /// A number the CRD does not take as an integer (a fraction, or beyond 2^53), printed as
    /// Go's `json.Marshal` would (`0.5`, `1e+300` as `1e300`).
    Number(String),
    /// `true`, `null` and the like: never a quantity.
    Other(&'static str),
}

impl Default for QuantityValue {
    fn default() -> Self {
        QuantityValue::Text(String::new())
    }
}

impl<'de> Deserialize<'de> for QuantityValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = QuantityValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a quantity")
            }
            fn visit_str<E>(self, text: &str) -> Result<QuantityValue, E> {
                Ok(QuantityValue::Text(text.to_owned()))
            }
            fn visit_i64<E>(self, n: i64) -> Result<QuantityValue, E> {
                Ok(QuantityValue::Integer(n.to_string()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<QuantityValue, E> {
                // The API server decodes numbers beyond int64 as float64.
                Ok(match i64::try_from(n) {
                    Ok(n) => QuantityValue::Integer(n.to_string()),
                    Err(_) => QuantityValue::Number(n.to_string()),
                })
            }
            fn visit_f64<E>(self, f: f64) -> Result<QuantityValue, E> {
                // kube-openapi takes a float64 as an integer when it is integral within
                // ±2^53 (`swag.IsFloat64AJSONInteger`; its looser relative-error cases are
                // refused here); json.Marshal then writes its digits.
                const LIMIT: f64 = 9_007_199_254_740_992.0;
                Ok(if f.is_finite() && f.fract() == 0.0 && f.abs() <= LIMIT {
                    QuantityValue::Integer(format!("{}", f + 0.0))
                } else if f != 0.0 && !(1e-6..1e21).contains(&f.abs()) {
                    QuantityValue::Number(format!("{f:e}"))
                } else {
                    QuantityValue::Number(f.to_string())
                })
            }
            fn visit_bool<E>(self, b: bool) -> Result<QuantityValue, E> {
                Ok(QuantityValue::Other(if b { "true" } else { "false" }))
            }
            fn visit_unit<E>(self) -> Result<QuantityValue, E> {
                Ok(QuantityValue::Other("null"))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl std::fmt::Display for QuantityValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl QuantityValue {
    /// The text the quantity is parsed from: what the operator's Go types would see.
    pub fn text(&self) -> &str {
        match self {
            QuantityValue::Text(text)
            | QuantityValue::Integer(text)
            | QuantityValue::Number(text) => text,
            QuantityValue::Other(text) => text,
        }
    }
}

fn strings(list: &[Located<String>]) -> Vec<String> {
    list.iter().map(|item| item.inner.clone()).collect()
}

fn plain_map(map: &StringMap) -> BTreeMap<String, String> {
    map.iter()
        .map(|(key, value)| (key.inner.clone(), value.inner.clone()))
        .collect()
}

fn text(value: &Option<Located<String>>) -> Option<String> {
    value.as_ref().map(|v| v.inner.clone())
}

/// `metadata`: `name` and `namespace` are read; everything else the API server sets on a live
/// object (`kubectl get -o yaml`) is accepted and ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    dead_code,
    reason = "the fields besides name and namespace are checked, never used"
)]
pub struct ObjectMeta {
    pub name: Option<Located<String>>,
    pub namespace: Option<Located<String>>,
    pub annotations: Option<BTreeMap<String, String>>,
    pub labels: Option<BTreeMap<String, String>>,
    pub creation_timestamp: Option<meta::Time>,
    pub deletion_grace_period_seconds: Option<i64>,
    pub deletion_timestamp: Option<meta::Time>,
    pub finalizers: Option<Vec<String>>,
    pub generate_name: Option<String>,
    pub generation: Option<i64>,
    pub managed_fields: Option<Vec<meta::ManagedFieldsEntry>>,
    pub owner_references: Option<Vec<meta::OwnerReference>>,
    pub resource_version: Option<String>,
    pub self_link: Option<String>,
    pub uid: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: Option<Located<String>>,
    pub value: Option<Located<String>>,
    pub value_from: Option<Located<EnvVarSource>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    pub config_map_key_ref: Option<Located<KeySelector>>,
    pub field_ref: Option<Located<ObjectFieldSelector>>,
    pub resource_field_ref: Option<Located<ResourceFieldSelector>>,
    pub secret_key_ref: Option<Located<KeySelector>>,
}

/// `configMapKeyRef` and `secretKeyRef` have the same fields.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeySelector {
    pub key: Option<Located<String>>,
    pub name: Option<Located<String>>,
    pub optional: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectFieldSelector {
    pub api_version: Option<Located<String>>,
    pub field_path: Option<Located<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceFieldSelector {
    pub container_name: Option<Located<String>>,
    pub divisor: Option<Located<QuantityValue>>,
    pub resource: Option<Located<String>>,
}

impl EnvVar {
    pub fn to_kube(&self) -> core::EnvVar {
        core::EnvVar {
            name: text(&self.name).unwrap_or_default(),
            value: text(&self.value),
            value_from: self.value_from.as_ref().map(|from| from.to_kube()),
        }
    }
}

impl EnvVarSource {
    fn to_kube(&self) -> core::EnvVarSource {
        core::EnvVarSource {
            config_map_key_ref: self.config_map_key_ref.as_ref().map(|r| {
                core::ConfigMapKeySelector {
                    key: text(&r.key).unwrap_or_default(),
                    name: text(&r.name).unwrap_or_default(),
                    optional: r.optional,
                }
            }),
            field_ref: self.field_ref.as_ref().map(|r| core::ObjectFieldSelector {
                api_version: text(&r.api_version),
                field_path: text(&r.field_path).unwrap_or_default(),
            }),
            resource_field_ref: self.resource_field_ref.as_ref().map(|r| {
                core::ResourceFieldSelector {
                    container_name: text(&r.container_name),
                    divisor: r.divisor.as_ref().map(|d| Quantity(d.text().to_owned())),
                    resource: text(&r.resource).unwrap_or_default(),
                }
            }),
            secret_key_ref: self
                .secret_key_ref
                .as_ref()
                .map(|r| core::SecretKeySelector {
                    key: text(&r.key).unwrap_or_default(),
                    name: text(&r.name).unwrap_or_default(),
                    optional: r.optional,
                }),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    pub effect: Option<Located<String>>,
    pub key: Option<Located<String>>,
    pub operator: Option<Located<String>>,
    pub toleration_seconds: Option<Located<i64>>,
    pub value: Option<Located<String>>,
}

impl Toleration {
    pub fn to_kube(&self) -> core::Toleration {
        core::Toleration {
            effect: text(&self.effect),
            key: text(&self.key),
            operator: text(&self.operator),
            toleration_seconds: self.toleration_seconds.as_ref().map(|s| s.inner),
            value: text(&self.value),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirements {
    pub claims: Option<Located<Vec<ResourceClaim>>>,
    pub limits: Option<Located<QuantityMap>>,
    pub requests: Option<Located<QuantityMap>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaim {
    pub name: Option<String>,
    pub request: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    pub api_groups: Option<Vec<Located<String>>>,
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Option<Located<Vec<Located<String>>>>,
    pub resource_names: Option<Vec<Located<String>>>,
    pub resources: Option<Vec<Located<String>>>,
    pub verbs: Option<Vec<Located<String>>>,
}

impl PolicyRule {
    pub fn to_kube(&self) -> rbac::PolicyRule {
        rbac::PolicyRule {
            api_groups: self.api_groups.as_deref().map(strings),
            non_resource_urls: self.non_resource_urls.as_deref().map(|urls| strings(urls)),
            resource_names: self.resource_names.as_deref().map(strings),
            resources: self.resources.as_deref().map(strings),
            verbs: self.verbs.as_deref().map(strings).unwrap_or_default(),
        }
    }
}

/// The strings of a located map, for rendering.
pub fn string_map(map: &StringMap) -> BTreeMap<String, String> {
    plain_map(map)
}
