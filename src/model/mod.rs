//! The RolloutManager as written (`argoproj.io/v1alpha1`), decoded strictly.
//!
//! Field names and meaning follow the argo-rollouts-manager operator's CRD; the extensions of
//! this project (`plugins.step`, and per plugin `args`, `disabled`, `headersFrom`, `rules`,
//! `image`) are marked. Every field is optional here so that one decoding pass sees the whole document;
//! required fields are enforced by [`crate::validate`], which reports all of them at once.
//! Every value validation looks at is [`Located`]; embedded Kubernetes types are mirrored in
//! [`kube`] for that, with their schemas taken from k8s-openapi. [`uses`] reads the plugins
//! that Rollouts and analysis templates of the input name.

pub mod kube;
pub mod uses;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::input::located::Located;
use kube::{EnvVar, ObjectMeta, PolicyRule, ResourceRequirements, StringMap, Toleration};

/// Schemas of the embedded Kubernetes types, as k8s-openapi describes them.
mod schema {
    pub use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements, Toleration};
    pub use k8s_openapi::api::rbac::v1::PolicyRule;
    pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
}

pub const API_VERSION: &str = "argoproj.io/v1alpha1";
pub const KIND: &str = "RolloutManager";

/// A RolloutManager: the Argo Rollouts controller of one namespace (or of the cluster), as
/// rendered by rollouts-render.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "RolloutManager")]
#[expect(
    dead_code,
    reason = "apiVersion and kind were read before decoding; status is accepted, never used"
)]
pub struct RolloutManager {
    #[schemars(required, extend("enum" = [API_VERSION]))]
    pub api_version: Option<String>,
    #[schemars(required, extend("enum" = [KIND]))]
    pub kind: Option<String>,
    /// `name` is required; `namespace` may come from `--namespace` or the Argo CD
    /// Application's destination namespace.
    #[schemars(required, with = "Option<schema::ObjectMeta>")]
    pub metadata: Option<Located<ObjectMeta>>,
    /// What to install. Empty (`{}`) means every default of the operator.
    pub spec: Option<Located<RolloutManagerSpec>>,
    /// Written by the operator on live objects; accepted and ignored.
    #[schemars(with = "Option<serde_json::Value>")]
    pub status: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutManagerSpec {
    /// Environment of the controller container. Duplicate names keep the last one.
    #[schemars(with = "Option<Vec<schema::EnvVar>>")]
    pub env: Option<Vec<Located<EnvVar>>>,
    /// Arguments appended to the controller's own (`--namespaced`, `--leader-elect true`,
    /// which may not be repeated here).
    #[schemars(with = "Option<Vec<String>>")]
    pub extra_command_args: Option<Vec<Located<String>>>,
    /// Controller image repository. Default: `quay.io/argoproj/argo-rollouts`.
    #[schemars(with = "Option<String>")]
    pub image: Option<Located<String>>,
    /// Image tag, or a digest (`sha256:…`). Default: `v1.9.1`.
    #[schemars(with = "Option<String>")]
    pub version: Option<Located<String>>,
    /// Pull policy of the controller image. Default: `IfNotPresent`.
    #[schemars(with = "Option<String>", extend("enum" = ["Always", "IfNotPresent", "Never"]))]
    pub image_pull_policy: Option<Located<String>>,
    /// Where the controller pods may run.
    pub node_placement: Option<NodePlacement>,
    /// Run the controller with `--namespaced` and a Role instead of a ClusterRole.
    #[schemars(with = "Option<bool>")]
    pub namespace_scoped: Option<Located<bool>>,
    /// Labels and annotations added to every object and the pod template (the Deployment's
    /// selector stays `app.kubernetes.io/name: argo-rollouts`).
    pub additional_metadata: Option<AdditionalMetadata>,
    /// Resources of the controller container. Default: `limits: {ephemeral-storage: 1Gi}`.
    #[schemars(with = "Option<schema::ResourceRequirements>")]
    pub controller_resources: Option<ResourceRequirements>,
    /// Do not render the notification Secret.
    pub skip_notification_secret_deployment: Option<bool>,
    /// High availability: two replicas with leader election.
    #[schemars(with = "Option<HighAvailability>")]
    pub ha: Option<Located<HighAvailability>>,
    /// The NetworkPolicy admitting traffic to the health and metrics ports.
    pub network_policy: Option<NetworkPolicy>,
    /// Plugins the controller downloads at start-up.
    pub plugins: Option<Plugins>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePlacement {
    /// Merged with `kubernetes.io/os: linux`.
    #[schemars(with = "Option<BTreeMap<String, String>>")]
    pub node_selector: Option<StringMap>,
    #[schemars(with = "Option<Vec<schema::Toleration>>")]
    pub tolerations: Option<Vec<Located<Toleration>>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdditionalMetadata {
    #[schemars(with = "Option<BTreeMap<String, String>>")]
    pub labels: Option<StringMap>,
    #[schemars(with = "Option<BTreeMap<String, String>>")]
    pub annotations: Option<Located<StringMap>>,
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
    #[schemars(with = "Option<Vec<Plugin>>")]
    pub traffic_management: Option<Vec<Located<Plugin>>>,
    /// Metric provider plugins (`metricProviderPlugins`).
    #[schemars(with = "Option<Vec<Plugin>>")]
    pub metric: Option<Vec<Located<Plugin>>>,
    /// Extension: step plugins (`stepPlugins`, Argo Rollouts v1.8+).
    #[schemars(with = "Option<Vec<Plugin>>")]
    pub step: Option<Vec<Located<Plugin>>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{"required": ["location"]}, {"required": ["image"]}]))]
pub struct Plugin {
    /// `<namespace>/<name>`; the controller installs the binary at `plugin-bin/<name>`.
    #[schemars(
        required,
        with = "Option<String>",
        regex(pattern = r"^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$")
    )]
    pub name: Option<Located<String>>,
    /// `https://`, `http://` or `file://` URL of the plugin binary (`file:` paths are relative
    /// to the controller's working directory, `/home/argo-rollouts`). Exactly one of
    /// `location` and `image` is required.
    #[schemars(
        with = "Option<String>",
        regex(pattern = r"^([hH][tT][tT][pP][sS]?|[fF][iI][lL][eE]):/")
    )]
    pub location: Option<Located<String>>,
    /// Extension: the plugin binary in a container image, delivered to the controller by an
    /// image volume or an init container (`--plugin-image-delivery`), so that nothing is
    /// downloaded when the controller starts. Instead of `location`; the image digest is the
    /// pin (`sha256` does not apply).
    #[schemars(with = "Option<PluginImage>")]
    pub image: Option<Located<PluginImage>>,
    /// SHA-256 of the binary (64 lowercase hex characters), checked by the controller for
    /// http(s) locations.
    #[schemars(with = "Option<String>", regex(pattern = r"^([0-9a-f]{64})?$"))]
    pub sha256: Option<Located<String>>,
    /// Extension: arguments the controller passes to the plugin process.
    pub args: Option<Vec<String>>,
    /// Extension: skip this step plugin (step plugins only).
    #[schemars(with = "Option<bool>")]
    pub disabled: Option<Located<bool>>,
    /// Extension: Secrets whose keys and values become HTTP headers of the download.
    #[schemars(with = "Option<Vec<HeadersFrom>>")]
    pub headers_from: Option<Located<Vec<Located<HeadersFrom>>>>,
    /// Extension: RBAC rules the plugin needs, appended to the controller's role.
    #[schemars(with = "Option<Vec<schema::PolicyRule>>")]
    pub rules: Option<Vec<Located<PolicyRule>>>,
}

/// A plugin binary in a container image.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginImage {
    /// The image, as for any container: `registry/repository[:tag]@sha256:<64 hex>`. Pin it
    /// with its digest.
    #[schemars(required, with = "Option<String>")]
    pub reference: Option<Located<String>>,
    /// Absolute path of the plugin binary inside the image, e.g.
    /// `/bin/rollouts-plugin-trafficrouter-gatewayapi`.
    #[schemars(required, with = "Option<String>", regex(pattern = "^/"))]
    pub path: Option<Located<String>>,
    /// Pull policy of the image. Default: Kubernetes' own (`Always` for `:latest` or no tag,
    /// else `IfNotPresent`).
    #[schemars(with = "Option<String>", extend("enum" = ["Always", "IfNotPresent", "Never"]))]
    pub pull_policy: Option<Located<String>>,
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
    #[schemars(required, with = "Option<String>")]
    pub name: Option<Located<String>>,
}
