//! The RolloutManager as written (`argoproj.io/v1alpha1`), decoded strictly.
//!
//! Field names and meaning follow the argo-rollouts-manager operator's CRD; the extensions of
//! this project (`plugins.step`, and per plugin `args`, `disabled`, `headersFrom`, `rules`) are
//! marked. Every field is optional here so that one decoding pass sees the whole document;
//! required fields are enforced by [`crate::validate`], which reports all of them at once.
//! Embedded Kubernetes types are k8s-openapi's, so their fields are checked too.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements, Toleration};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::IgnoredAny;

pub const API_VERSION: &str = "argoproj.io/v1alpha1";
pub const KIND: &str = "RolloutManager";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutManager {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub metadata: Option<ObjectMeta>,
    pub spec: Option<RolloutManagerSpec>,
    /// Written by the operator on live objects; accepted and ignored.
    pub status: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutManagerSpec {
    /// Environment of the controller container.
    pub env: Option<Vec<EnvVar>>,
    /// Arguments appended to the controller's own.
    pub extra_command_args: Option<Vec<String>>,
    /// Controller image repository.
    pub image: Option<String>,
    /// Image tag, or a digest (`sha256:…`).
    pub version: Option<String>,
    pub image_pull_policy: Option<String>,
    pub node_placement: Option<NodePlacement>,
    /// Run the controller with `--namespaced` and a Role instead of a ClusterRole.
    pub namespace_scoped: Option<bool>,
    pub additional_metadata: Option<AdditionalMetadata>,
    pub controller_resources: Option<ResourceRequirements>,
    pub skip_notification_secret_deployment: Option<bool>,
    pub ha: Option<HighAvailability>,
    pub network_policy: Option<NetworkPolicy>,
    pub plugins: Option<Plugins>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    pub node_selector: Option<BTreeMap<String, String>>,
    pub tolerations: Option<Vec<Toleration>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdditionalMetadata {
    pub labels: Option<BTreeMap<String, String>>,
    pub annotations: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HighAvailability {
    pub enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    pub enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plugins {
    /// Traffic router plugins (`trafficRouterPlugins` in the ConfigMap).
    pub traffic_management: Option<Vec<Plugin>>,
    /// Metric provider plugins (`metricProviderPlugins`).
    pub metric: Option<Vec<Plugin>>,
    /// Extension: step plugins (`stepPlugins`, Argo Rollouts v1.8+).
    pub step: Option<Vec<Plugin>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plugin {
    /// `<namespace>/<name>`; the controller installs the binary at `plugin-bin/<name>`.
    pub name: Option<String>,
    /// `https://`, `http://` or `file://` URL of the plugin binary.
    pub location: Option<String>,
    /// SHA-256 of the binary, checked by the controller for http(s) locations.
    pub sha256: Option<String>,
    /// Extension: arguments the controller passes to the plugin process.
    pub args: Option<Vec<String>>,
    /// Extension: skip this step plugin (step plugins only).
    pub disabled: Option<bool>,
    /// Extension: Secrets whose keys and values become HTTP headers of the download.
    pub headers_from: Option<Vec<HeadersFrom>>,
    /// Extension: RBAC rules the plugin needs, appended to the controller's role.
    pub rules: Option<Vec<PolicyRule>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadersFrom {
    pub secret_ref: Option<SecretRef>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    pub name: Option<String>,
}
