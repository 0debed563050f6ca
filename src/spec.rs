//! The resolved spec: one RolloutManager after validation, with defaults applied and every
//! value the renderer needs computed. Rendering sees only this, never the raw input.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements, Toleration};
use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::options::{ImageDelivery, PullPolicy};
use crate::render::tables;

/// The three plugin lists of `argo-rollouts-config`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PluginKind {
    TrafficRouter,
    MetricProvider,
    Step,
}

impl PluginKind {
    pub const ALL: [PluginKind; 3] = [Self::TrafficRouter, Self::MetricProvider, Self::Step];

    /// The field of `spec.plugins` holding this list.
    pub fn spec_field(self) -> &'static str {
        match self {
            Self::TrafficRouter => "trafficManagement",
            Self::MetricProvider => "metric",
            Self::Step => "step",
        }
    }

    /// The ConfigMap key the controller reads this list from.
    pub fn config_key(self) -> &'static str {
        match self {
            Self::TrafficRouter => tables::TRAFFIC_ROUTER_PLUGINS_KEY,
            Self::MetricProvider => tables::METRIC_PROVIDER_PLUGINS_KEY,
            Self::Step => tables::STEP_PLUGINS_KEY,
        }
    }

    /// A noun for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Self::TrafficRouter => "traffic router plugin",
            Self::MetricProvider => "metric provider plugin",
            Self::Step => "step plugin",
        }
    }
}

/// One plugin entry, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Plugin {
    pub name: String,
    /// As written, or for an image plugin the `file:` location of the binary where the pod
    /// delivers it.
    pub location: String,
    /// Empty when not given (the controller then skips the check).
    pub sha256: String,
    pub args: Vec<String>,
    pub disabled: bool,
    /// Names of the Secrets whose entries become download headers.
    pub headers_from: Vec<String>,
    pub rules: Vec<PolicyRule>,
    /// For a plugin delivered in a container image: how the pod gets it.
    pub image: Option<PluginImage>,
}

/// A plugin binary in a container image, and where the pod puts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginImage {
    pub reference: String,
    /// Absolute path of the binary inside the image.
    pub path: String,
    pub pull_policy: Option<PullPolicy>,
    /// The name of the pod volume (and, with an init container, of the container), a DNS-1123
    /// label derived from the plugin's name.
    pub volume: String,
    /// Where the controller container mounts the volume.
    pub mount_path: String,
}

/// The plugin lists, each sorted by name as the operator writes them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plugins {
    pub traffic_router: Vec<Plugin>,
    pub metric_provider: Vec<Plugin>,
    pub step: Vec<Plugin>,
}

impl Plugins {
    pub fn list(&self, kind: PluginKind) -> &[Plugin] {
        match kind {
            PluginKind::TrafficRouter => &self.traffic_router,
            PluginKind::MetricProvider => &self.metric_provider,
            PluginKind::Step => &self.step,
        }
    }

    pub fn list_mut(&mut self, kind: PluginKind) -> &mut Vec<Plugin> {
        match kind {
            PluginKind::TrafficRouter => &mut self.traffic_router,
            PluginKind::MetricProvider => &mut self.metric_provider,
            PluginKind::Step => &mut self.step,
        }
    }

    /// The plugins delivered in images, in ConfigMap order.
    pub fn images(&self) -> impl Iterator<Item = (&Plugin, &PluginImage)> {
        self.all()
            .filter_map(|(_, plugin)| plugin.image.as_ref().map(|image| (plugin, image)))
    }

    /// Every plugin, in ConfigMap order: traffic router, metric provider, step.
    pub fn all(&self) -> impl Iterator<Item = (PluginKind, &Plugin)> {
        PluginKind::ALL
            .into_iter()
            .flat_map(move |kind| self.list(kind).iter().map(move |plugin| (kind, plugin)))
    }
}

/// Everything needed to render one Argo Rollouts installation.
#[derive(Clone, Debug, PartialEq)]
pub struct Manager {
    /// `metadata.name` of the RolloutManager (used in messages only).
    pub name: String,
    pub namespace: String,
    pub namespace_scoped: bool,
    pub high_availability: bool,
    pub image: String,
    pub image_pull_policy: PullPolicy,
    /// Controller arguments: the renderer's own, then `extraCommandArgs`.
    pub args: Vec<String>,
    /// Sorted by name, one entry per name (the last one written wins).
    pub env: Vec<EnvVar>,
    /// `kubernetes.io/os: linux` plus `nodePlacement.nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Option<Vec<Toleration>>,
    /// `additionalMetadata`, laid over the standard labels of every object.
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub resources: ResourceRequirements,
    pub notification_secret: bool,
    pub network_policy: bool,
    pub plugins: Plugins,
    /// How image plugins reach the controller (when there are any).
    pub image_delivery: ImageDelivery,
}
