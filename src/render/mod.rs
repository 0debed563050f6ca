//! Rendering: a resolved [`Manager`] becomes the objects of one Argo Rollouts installation.
//!
//! A pure function: typed Kubernetes objects built field for field as the argo-rollouts-manager
//! operator builds them, in the order of [`manager`]. Nothing here reads files, the
//! environment or the clock.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Affinity, Capabilities, ConfigMap, Container, ContainerPort, EmptyDirVolumeSource,
    HTTPGetAction, ImageVolumeSource, PodAffinityTerm, PodAntiAffinity, PodSecurityContext,
    PodSpec, PodTemplateSpec, Probe, SeccompProfile, Secret, SecurityContext, Service,
    ServiceAccount, ServicePort, ServiceSpec, Volume, VolumeMount, WeightedPodAffinityTerm,
};
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;
use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};

pub mod catalog;
pub mod tables;
pub mod warnings;

use crate::emit;
use crate::options::ImageDelivery;
use crate::spec::{Manager, PluginImage, PluginKind};
use warnings::{WARNINGS_ANNOTATION, WarningsNote};

type Labels = BTreeMap<String, String>;

/// What to render besides each manager's own objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras<'a> {
    /// The three cluster-wide aggregate ClusterRoles (once per output stream), with these
    /// labels and annotations.
    pub aggregate_roles: Option<&'a SharedMetadata>,
    /// A ServiceMonitor (the cluster serves `monitoring.coreos.com/v1`).
    pub service_monitor: bool,
    /// The run's warnings, for the ConfigMap's annotation (once per output stream).
    pub warnings: Option<&'a WarningsNote>,
}

/// The `additionalMetadata` every manager of a stream has: the aggregate ClusterRoles belong
/// to all of them. (The operator gives them the union of every manager's, and where two set a
/// key differently it rewrites them on every reconcile; a stream renders the same whatever
/// order its managers come in.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedMetadata {
    pub labels: Labels,
    pub annotations: Labels,
}

impl SharedMetadata {
    /// The pairs all the managers have; empty when there are none.
    pub fn of<'a>(managers: impl IntoIterator<Item = &'a Manager>) -> Self {
        let common = |a: Option<Labels>, b: &Labels| match a {
            None => b.clone(),
            Some(a) => a.into_iter().filter(|(k, v)| b.get(k) == Some(v)).collect(),
        };
        let (mut labels, mut annotations) = (None, None);
        for manager in managers {
            labels = Some(common(labels, &manager.labels));
            annotations = Some(common(annotations, &manager.annotations));
        }
        Self {
            labels: labels.unwrap_or_default(),
            annotations: annotations.unwrap_or_default(),
        }
    }
}

/// The objects of one installation, in this order: ServiceAccount, Role or ClusterRole,
/// (aggregate ClusterRoles), RoleBinding or ClusterRoleBinding, notification Secret, ConfigMap,
/// Deployment, metrics Service, NetworkPolicy, (ServiceMonitor).
pub fn manager(manager: &Manager, extras: Extras<'_>) -> Vec<Json> {
    let mut objects = vec![to_json(&service_account(manager))];
    objects.push(controller_role(manager));
    if let Some(shared) = extras.aggregate_roles {
        objects.extend(aggregate_roles(shared).iter().map(to_json));
    }
    objects.push(controller_role_binding(manager));
    if manager.notification_secret {
        objects.push(to_json(&notification_secret(manager)));
    }
    let config_map = config_map(manager, extras.warnings);
    let checksum = config_checksum(config_map.data.as_ref().unwrap_or(&BTreeMap::new()));
    objects.push(to_json(&config_map));
    objects.push(to_json(&deployment(manager, &checksum)));
    objects.push(to_json(&metrics_service(manager)));
    if manager.network_policy {
        objects.push(to_json(&network_policy(manager)));
    }
    if extras.service_monitor {
        objects.push(service_monitor(manager));
    }
    objects
}

fn to_json<T: Serialize>(object: &T) -> Json {
    serde_json::to_value(object).expect("Kubernetes objects serialize to JSON")
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn non_empty(map: Labels) -> Option<Labels> {
    (!map.is_empty()).then_some(map)
}

/// Metadata of a namespaced object: standard labels, then `additionalMetadata` on top.
fn metadata(manager: &Manager, name: &str, namespaced: bool) -> ObjectMeta {
    let mut object_labels = labels(&tables::STANDARD_LABELS);
    object_labels.extend(manager.labels.clone());
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespaced.then(|| manager.namespace.clone()),
        labels: non_empty(object_labels),
        annotations: non_empty(manager.annotations.clone()),
        ..ObjectMeta::default()
    }
}

/// The upstream rules as JSON, converted once: every controller role starts with them.
fn upstream_rules() -> &'static [Json] {
    static RULES: OnceLock<Vec<Json>> = OnceLock::new();
    RULES.get_or_init(|| {
        tables::CONTROLLER_RULES
            .iter()
            .map(|rule| to_json(&rule.to_policy_rule()))
            .collect()
    })
}

/// The upstream rules, then each plugin's `rules` in ConfigMap order.
fn controller_rules(manager: &Manager) -> Json {
    let plugin_rules = manager
        .plugins
        .all()
        .flat_map(|(_, plugin)| plugin.rules.iter().map(to_json));
    Json::Array(
        upstream_rules()
            .iter()
            .cloned()
            .chain(plugin_rules)
            .collect(),
    )
}

fn service_account(manager: &Manager) -> ServiceAccount {
    ServiceAccount {
        metadata: metadata(manager, tables::RESOURCE_NAME, true),
        ..ServiceAccount::default()
    }
}

fn controller_role(manager: &Manager) -> Json {
    let mut role = if manager.namespace_scoped {
        to_json(&Role {
            metadata: metadata(manager, tables::RESOURCE_NAME, true),
            rules: None,
        })
    } else {
        to_json(&ClusterRole {
            metadata: metadata(manager, tables::RESOURCE_NAME, false),
            ..ClusterRole::default()
        })
    };
    role["rules"] = controller_rules(manager);
    role
}

fn aggregate_roles(shared: &SharedMetadata) -> Vec<ClusterRole> {
    tables::AGGREGATE_ROLES
        .iter()
        .map(|role| {
            let aggregate_label = format!(
                "rbac.authorization.k8s.io/aggregate-to-{}",
                role.aggregate_to
            );
            let mut role_labels = labels(&[
                ("app.kubernetes.io/component", "aggregate-cluster-role"),
                ("app.kubernetes.io/name", role.name),
                ("app.kubernetes.io/part-of", tables::RESOURCE_NAME),
                (&aggregate_label, "true"),
            ]);
            role_labels.extend(shared.labels.clone());
            ClusterRole {
                metadata: ObjectMeta {
                    name: Some(role.name.to_owned()),
                    labels: Some(role_labels),
                    annotations: non_empty(shared.annotations.clone()),
                    ..ObjectMeta::default()
                },
                rules: Some(vec![role.rule.to_policy_rule()]),
                ..ClusterRole::default()
            }
        })
        .collect()
}

fn controller_role_binding(manager: &Manager) -> Json {
    let subjects = Some(vec![Subject {
        kind: "ServiceAccount".to_owned(),
        name: tables::RESOURCE_NAME.to_owned(),
        namespace: Some(manager.namespace.clone()),
        ..Subject::default()
    }]);
    let role_ref = |kind: &str| RoleRef {
        api_group: "rbac.authorization.k8s.io".to_owned(),
        kind: kind.to_owned(),
        name: tables::RESOURCE_NAME.to_owned(),
    };
    if manager.namespace_scoped {
        to_json(&RoleBinding {
            metadata: metadata(manager, tables::RESOURCE_NAME, true),
            role_ref: role_ref("Role"),
            subjects,
        })
    } else {
        to_json(&ClusterRoleBinding {
            metadata: metadata(manager, tables::RESOURCE_NAME, false),
            role_ref: role_ref("ClusterRole"),
            subjects,
        })
    }
}

/// No `data` at all: users fill the Secret out of band and an apply must never wipe it.
fn notification_secret(manager: &Manager) -> Secret {
    Secret {
        metadata: metadata(manager, tables::NOTIFICATION_SECRET_NAME, true),
        type_: Some("Opaque".to_owned()),
        ..Secret::default()
    }
}

/// `trafficRouterPlugins` and `metricProviderPlugins` always, `stepPlugins` when there are any.
pub fn config_data(manager: &Manager) -> BTreeMap<String, String> {
    PluginKind::ALL
        .into_iter()
        .filter(|kind| *kind != PluginKind::Step || !manager.plugins.step.is_empty())
        .map(|kind| {
            (
                kind.config_key().to_owned(),
                emit::plugin_list(manager.plugins.list(kind)),
            )
        })
        .collect()
}

/// The warnings go into the metadata, never into `data`: the checksum covers only `data`.
fn config_map(manager: &Manager, warnings: Option<&WarningsNote>) -> ConfigMap {
    let mut metadata = metadata(manager, tables::CONFIG_MAP_NAME, true);
    if let Some(note) = warnings {
        metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(WARNINGS_ANNOTATION.to_owned(), note.text().to_owned());
    }
    ConfigMap {
        metadata,
        data: Some(config_data(manager)),
        ..ConfigMap::default()
    }
}

/// SHA-256 over the ConfigMap data, keys in sorted order, each key and value preceded by its
/// length (8 bytes, big-endian) so that no two different maps hash the same bytes.
pub fn config_checksum(data: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (key, value) in data {
        for part in [key, value] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn deployment(manager: &Manager, checksum: &str) -> Deployment {
    let mut pod_labels = labels(&[(tables::SELECTOR_KEY, tables::RESOURCE_NAME)]);
    pod_labels.extend(manager.labels.clone());
    let mut pod_annotations = manager.annotations.clone();
    pod_annotations.insert(tables::CHECKSUM_ANNOTATION.to_owned(), checksum.to_owned());
    // Only the name label, as upstream's install.yaml: a Deployment's selector can never
    // change, so it must not follow `additionalMetadata.labels` (the pods still carry them).
    let selector = || LabelSelector {
        match_labels: Some(labels(&[(tables::SELECTOR_KEY, tables::RESOURCE_NAME)])),
        ..LabelSelector::default()
    };
    let affinity = manager.high_availability.then(|| Affinity {
        pod_anti_affinity: Some(PodAntiAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                WeightedPodAffinityTerm {
                    weight: 100,
                    pod_affinity_term: PodAffinityTerm {
                        label_selector: Some(selector()),
                        topology_key: "topology.kubernetes.io/zone".to_owned(),
                        ..PodAffinityTerm::default()
                    },
                },
            ]),
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(selector()),
                topology_key: "kubernetes.io/hostname".to_owned(),
                ..PodAffinityTerm::default()
            }]),
        }),
        ..Affinity::default()
    });
    Deployment {
        metadata: metadata(manager, tables::RESOURCE_NAME, true),
        spec: Some(DeploymentSpec {
            replicas: Some(if manager.high_availability { 2 } else { 1 }),
            selector: selector(),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".to_owned()),
                ..DeploymentStrategy::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels.clone()),
                    annotations: Some(pod_annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    affinity,
                    containers: vec![controller_container(manager)],
                    node_selector: Some(manager.node_selector.clone()),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        ..PodSecurityContext::default()
                    }),
                    service_account_name: Some(tables::RESOURCE_NAME.to_owned()),
                    tolerations: manager.tolerations.clone(),
                    init_containers: plugin_init_containers(manager),
                    volumes: Some(volumes(manager)),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

fn controller_container(manager: &Manager) -> Container {
    let port = |name: &str, number: i32| ContainerPort {
        name: Some(name.to_owned()),
        container_port: number,
        ..ContainerPort::default()
    };
    Container {
        name: tables::RESOURCE_NAME.to_owned(),
        image: Some(manager.image.clone()),
        image_pull_policy: Some(manager.image_pull_policy.as_str().to_owned()),
        args: (!manager.args.is_empty()).then(|| manager.args.clone()),
        env: (!manager.env.is_empty()).then(|| manager.env.clone()),
        liveness_probe: Some(Probe {
            http_get: Some(HTTPGetAction {
                path: Some("/healthz".to_owned()),
                port: IntOrString::String("healthz".to_owned()),
                ..HTTPGetAction::default()
            }),
            initial_delay_seconds: Some(30),
            period_seconds: Some(20),
            success_threshold: Some(1),
            timeout_seconds: Some(10),
            failure_threshold: Some(3),
            ..Probe::default()
        }),
        ports: Some(vec![
            port("healthz", tables::HEALTHZ_PORT),
            port("metrics", tables::METRICS_PORT),
        ]),
        resources: Some(manager.resources.clone()),
        security_context: Some(container_security_context()),
        volume_mounts: Some(controller_mounts(manager)),
        ..Container::default()
    }
}

/// The controller's: no privilege escalation, no capabilities, read-only root, non-root.
fn container_security_context() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Capabilities::default()
        }),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".to_owned(),
            ..SeccompProfile::default()
        }),
        ..SecurityContext::default()
    }
}

/// `plugin-bin` and `tmp`, then one volume per image plugin (in ConfigMap order): the image
/// itself, or an emptyDir its init container fills.
fn volumes(manager: &Manager) -> Vec<Volume> {
    let empty_dir = |name: &str| Volume {
        name: name.to_owned(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Volume::default()
    };
    let mut volumes: Vec<Volume> = tables::EMPTY_DIR_MOUNTS
        .into_iter()
        .map(|(name, _)| empty_dir(name))
        .collect();
    for (_, image) in manager.plugins.images() {
        volumes.push(match manager.image_delivery {
            ImageDelivery::Volume => Volume {
                name: image.volume.clone(),
                image: Some(ImageVolumeSource {
                    reference: Some(image.reference.clone()),
                    pull_policy: pull_policy(image),
                }),
                ..Volume::default()
            },
            ImageDelivery::InitContainer => empty_dir(&image.volume),
        });
    }
    volumes
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

/// The emptyDirs, then each image plugin's volume, read-only: the controller only copies the
/// binary from there.
fn controller_mounts(manager: &Manager) -> Vec<VolumeMount> {
    let mut mounts: Vec<VolumeMount> = tables::EMPTY_DIR_MOUNTS
        .into_iter()
        .map(|(name, path)| mount(name, path, false))
        .collect();
    mounts.extend(
        manager
            .plugins
            .images()
            .map(|(_, image)| mount(&image.volume, &image.mount_path, true)),
    );
    mounts
}

fn pull_policy(image: &PluginImage) -> Option<String> {
    image.pull_policy.map(|policy| policy.as_str().to_owned())
}

/// With `init-container` delivery, one init container per image plugin: the plugin image,
/// running `cp <path> <its volume>/plugin` as the controller's user, as locked down as the
/// controller and with its resources (so the pod's effective request does not grow, and a
/// quota that admits the controller admits it). The image must have `cp` on its `PATH`.
fn plugin_init_containers(manager: &Manager) -> Option<Vec<Container>> {
    if manager.image_delivery != ImageDelivery::InitContainer {
        return None;
    }
    let containers: Vec<Container> = manager
        .plugins
        .images()
        .map(|(_, image)| Container {
            name: image.volume.clone(),
            image: Some(image.reference.clone()),
            image_pull_policy: pull_policy(image),
            command: Some(vec![
                tables::COPY_COMMAND.to_owned(),
                image.path.clone(),
                format!("{}/{}", image.mount_path, tables::PLUGIN_IMAGE_FILE),
            ]),
            resources: Some(manager.resources.clone()),
            security_context: Some(SecurityContext {
                run_as_user: Some(tables::CONTROLLER_UID),
                ..container_security_context()
            }),
            volume_mounts: Some(vec![mount(&image.volume, &image.mount_path, false)]),
            ..Container::default()
        })
        .collect();
    (!containers.is_empty()).then_some(containers)
}

fn metrics_service(manager: &Manager) -> Service {
    let mut meta = metadata(manager, tables::METRICS_SERVICE_NAME, true);
    let service_labels = meta.labels.get_or_insert_with(BTreeMap::new);
    service_labels.extend(labels(&tables::METRICS_SERVICE_LABELS));
    Service {
        metadata: meta,
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                name: Some("metrics".to_owned()),
                port: tables::METRICS_PORT,
                protocol: Some("TCP".to_owned()),
                target_port: Some(IntOrString::Int(tables::METRICS_PORT)),
                ..ServicePort::default()
            }]),
            selector: Some(labels(&[(tables::SELECTOR_KEY, tables::RESOURCE_NAME)])),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

fn network_policy(manager: &Manager) -> NetworkPolicy {
    let tcp_port = |number: i32| NetworkPolicyPort {
        protocol: Some("TCP".to_owned()),
        port: Some(IntOrString::Int(number)),
        ..NetworkPolicyPort::default()
    };
    NetworkPolicy {
        metadata: metadata(manager, tables::NETWORK_POLICY_NAME, true),
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(labels(&[(tables::SELECTOR_KEY, tables::RESOURCE_NAME)])),
                ..LabelSelector::default()
            }),
            policy_types: Some(vec!["Ingress".to_owned()]),
            ingress: Some(vec![NetworkPolicyIngressRule {
                ports: Some(vec![
                    tcp_port(tables::HEALTHZ_PORT),
                    tcp_port(tables::METRICS_PORT),
                ]),
                ..NetworkPolicyIngressRule::default()
            }]),
            ..NetworkPolicySpec::default()
        }),
    }
}

/// `monitoring.coreos.com/v1` is not part of Kubernetes, so it is built as data.
fn service_monitor(manager: &Manager) -> Json {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": tables::RESOURCE_NAME, "namespace": manager.namespace},
        "spec": {
            "selector": {"matchLabels": {tables::SELECTOR_KEY: tables::METRICS_SERVICE_NAME}},
            "endpoints": [{"port": "metrics"}],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The algorithm the README states, checked against values computed apart from this code
    /// (Python's hashlib over the same byte layout).
    #[test]
    fn checksum_known_answers() {
        let data = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            config_checksum(&data(&[])),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            config_checksum(&data(&[
                ("trafficRouterPlugins", "[]\n"),
                ("metricProviderPlugins", "[]\n")
            ])),
            "34794ba9dbd1724e7c86665e3d6433e49a10b6461269600a7233ced3ce6cf669"
        );
        assert_eq!(
            config_checksum(&data(&[("ab", "c")])),
            "601d5476e2ccfe2c87a2bba7a322659734a05749d5b5aa781f513e4912db0d5f"
        );
        assert_eq!(
            config_checksum(&data(&[("a", "bc")])),
            "3fafa1cf2f19a7c1129beb20cf0983f73a489a221fc0dd2f16d1be292d089205"
        );
    }

    /// The warnings annotation is ConfigMap metadata only: every other object, the ConfigMap
    /// data and so the pod template's checksum are the same with it and without it.
    #[test]
    fn warnings_change_only_the_config_map_annotations() {
        use crate::diag::{Diagnostic, Diagnostics};
        use crate::input::source::{Inputs, Source};
        let text = "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: ns\nspec:\n  additionalMetadata:\n    annotations:\n      team: a\n  plugins:\n    metric:\n    - name: a/b\n      location: https://example.com/b\n";
        let inputs = Inputs::from(vec![Source::new("rm.yaml", text.to_owned())]);
        let rendered =
            crate::pipeline::render(&inputs, &crate::options::Options::default()).unwrap();
        let mut diagnostics = Diagnostics::default();
        diagnostics.push(Diagnostic::warning("something"));
        let note = WarningsNote::new(&diagnostics).unwrap();
        let plain: Vec<Json> = rendered.documents().collect();
        let noted: Vec<Json> = rendered.documents_noting(Some(&note)).collect();
        assert_eq!(plain.len(), noted.len());
        let mut config_maps = 0;
        for (mut without, with) in plain.into_iter().zip(noted) {
            if without["kind"] == "ConfigMap" {
                config_maps += 1;
                without["metadata"]["annotations"][WARNINGS_ANNOTATION] =
                    json!("warning: something");
                assert_eq!(with["metadata"]["annotations"]["team"], "a");
            }
            assert_eq!(without, with);
        }
        assert_eq!(config_maps, 1);
    }

    #[test]
    fn checksum_separates_keys_from_values() {
        let a = BTreeMap::from([("ab".to_owned(), "c".to_owned())]);
        let b = BTreeMap::from([("a".to_owned(), "bc".to_owned())]);
        assert_ne!(config_checksum(&a), config_checksum(&b));
        assert_eq!(config_checksum(&a).len(), 64);
        assert_eq!(config_checksum(&a), config_checksum(&a.clone()));
    }
}
