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
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::IgnoredAny;

pub const API_VERSION: &str = "argoproj.io/v1alpha1";
pub const KIND: &str = "RolloutManager";

/// A RolloutManager: the Argo Rollouts controller of one namespace (or of the cluster), as
/// rendered by rollouts-render.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "RolloutManager")]
pub struct RolloutManager {
    #[schemars(required, extend("enum" = [API_VERSION]))]
    pub api_version: Option<String>,
    #[schemars(required, extend("enum" = [KIND]))]
    pub kind: Option<String>,
    /// `name` is required; `namespace` may come from `--namespace` or the Argo CD
    /// Application's destination namespace.
    #[schemars(required)]
    pub metadata: Option<ObjectMeta>,
    /// What to install. Empty (`{}`) means every default of the operator.
    pub spec: Option<RolloutManagerSpec>,
    /// Written by the operator on live objects; accepted and ignored.
    #[schemars(with = "Option<serde_json::Value>")]
    pub status: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutManagerSpec {
    /// Environment of the controller container. Duplicate names keep the last one.
    pub env: Option<Vec<EnvVar>>,
    /// Arguments appended to the controller's own (`--namespaced`, `--leader-elect true`,
    /// which may not be repeated here).
    pub extra_command_args: Option<Vec<String>>,
    /// Controller image repository. Default: `quay.io/argoproj/argo-rollouts`.
    pub image: Option<String>,
    /// Image tag, or a digest (`sha256:…`). Default: `v1.9.1`.
    pub version: Option<String>,
    /// Pull policy of the controller image. Default: `IfNotPresent`.
    #[schemars(extend("enum" = ["Always", "IfNotPresent", "Never"]))]
    pub image_pull_policy: Option<String>,
    /// Where the controller pods may run.
    pub node_placement: Option<NodePlacement>,
    /// Run the controller with `--namespaced` and a Role instead of a ClusterRole.
    pub namespace_scoped: Option<bool>,
    /// Labels and annotations added to every object, the pod template and the Deployment's
    /// selector.
    pub additional_metadata: Option<AdditionalMetadata>,
    /// Resources of the controller container. Default: `limits: {ephemeral-storage: 1Gi}`.
    pub controller_resources: Option<ResourceRequirements>,
    /// Do not render the notification Secret.
    pub skip_notification_secret_deployment: Option<bool>,
    /// High availability: two replicas with leader election.
    pub ha: Option<HighAvailability>,
    /// The NetworkPolicy admitting traffic to the health and metrics ports.
    pub network_policy: Option<NetworkPolicy>,
    /// Plugins the controller downloads at start-up.
    pub plugins: Option<Plugins>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    /// Merged with `kubernetes.io/os: linux`.
    pub node_selector: Option<BTreeMap<String, String>>,
    pub tolerations: Option<Vec<Toleration>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdditionalMetadata {
    pub labels: Option<BTreeMap<String, String>>,
    pub annotations: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HighAvailability {
    #[schemars(required)]
    pub enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicy {
    /// `false` leaves the NetworkPolicy out. Default: `true`.
    pub enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plugins {
    /// Traffic router plugins (`trafficRouterPlugins` in the ConfigMap).
    pub traffic_management: Option<Vec<Plugin>>,
    /// Metric provider plugins (`metricProviderPlugins`).
    pub metric: Option<Vec<Plugin>>,
    /// Extension: step plugins (`stepPlugins`, Argo Rollouts v1.8+).
    pub step: Option<Vec<Plugin>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plugin {
    /// `<namespace>/<name>`; the controller installs the binary at `plugin-bin/<name>`.
    #[schemars(required, regex(pattern = r"^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$"))]
    pub name: Option<String>,
    /// `https://`, `http://` or `file://` URL of the plugin binary (`file:` paths are relative
    /// to the controller's working directory, `/home/argo-rollouts`).
    #[schemars(
        required,
        regex(pattern = r"^([hH][tT][tT][pP][sS]?|[fF][iI][lL][eE]):/")
    )]
    pub location: Option<String>,
    /// SHA-256 of the binary (64 lowercase hex characters), checked by the controller for
    /// http(s) locations.
    #[schemars(regex(pattern = r"^([0-9a-f]{64})?$"))]
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

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadersFrom {
    #[schemars(required)]
    pub secret_ref: Option<SecretRef>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// A Secret in the controller's namespace.
    #[schemars(required)]
    pub name: Option<String>,
}
