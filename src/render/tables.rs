//! Constant tables: names, defaults, labels and RBAC rules of an Argo Rollouts installation,
//! as the argo-rollouts-manager operator creates it (controllers/default.go, resources.go).
//! Data only; [`mod@crate::render`] turns them into objects.

use k8s_openapi::api::rbac::v1::PolicyRule;

/// Name of the ServiceAccount, Role/ClusterRole, bindings, Deployment and container.
pub const RESOURCE_NAME: &str = "argo-rollouts";
pub const METRICS_SERVICE_NAME: &str = "argo-rollouts-metrics";
pub const NOTIFICATION_SECRET_NAME: &str = "argo-rollouts-notification-secret";
pub const CONFIG_MAP_NAME: &str = "argo-rollouts-config";
pub const NETWORK_POLICY_NAME: &str = "argo-rollouts-network-policy";

pub const DEFAULT_IMAGE: &str = "quay.io/argoproj/argo-rollouts";
pub const DEFAULT_VERSION: &str = "v1.9.1";

/// The label every object carries and the Service, NetworkPolicy and pod selector match on.
pub const SELECTOR_KEY: &str = "app.kubernetes.io/name";
/// Labels on every object unless a kind says otherwise.
pub const STANDARD_LABELS: [(&str, &str); 3] = [
    ("app.kubernetes.io/name", RESOURCE_NAME),
    ("app.kubernetes.io/part-of", RESOURCE_NAME),
    ("app.kubernetes.io/component", RESOURCE_NAME),
];
/// Labels forced on the metrics Service after the standard and additional ones.
pub const METRICS_SERVICE_LABELS: [(&str, &str); 2] = [
    ("app.kubernetes.io/name", METRICS_SERVICE_NAME),
    ("app.kubernetes.io/component", "server"),
];

/// Pod template annotation holding the SHA-256 of the ConfigMap data: the controller reads its
/// plugins only at start-up, so a plugin change must roll the pod.
pub const CHECKSUM_ANNOTATION: &str = "checksum/argo-rollouts-config";

/// The traffic router plugin the operator always adds; here only with `--openshift-route-plugin`.
pub const OPENSHIFT_PLUGIN_NAME: &str = "argoproj-labs/openshift";
pub const OPENSHIFT_PLUGIN_LOCATION: &str = "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-openshift/releases/download/commit-8d0b3c6c5c18341f9f019cf1015b56b0d0c6085b/rollouts-plugin-trafficrouter-openshift-linux-amd64";

/// The controller's working directory in its image; `file:` plugin paths are relative to it.
pub const CONTROLLER_WORKDIR: &str = "/home/argo-rollouts";
/// Where the controller installs plugins (`plugin-bin/<name>` under its working directory).
pub const PLUGIN_BIN_DIR: &str = "/home/argo-rollouts/plugin-bin";
/// Its scratch directory (the root file system is read-only).
pub const TMP_DIR: &str = "/tmp";
/// The emptyDir volumes of the controller pod and where they are mounted; both are empty when
/// the controller starts.
pub const EMPTY_DIR_MOUNTS: [(&str, &str); 2] = [("plugin-bin", PLUGIN_BIN_DIR), ("tmp", TMP_DIR)];

/// Where image plugins are mounted, one directory per plugin: under the working directory,
/// outside `plugin-bin/` and `/tmp`, so that the controller copies the binary from there into
/// `plugin-bin/` at start-up as it does for any `file:` plugin.
pub const PLUGIN_IMAGES_DIR: &str = "/home/argo-rollouts/plugin-images";
/// Image plugin volumes (and init containers) are named `plugin-<name>-<hash>`.
pub const PLUGIN_IMAGE_VOLUME_PREFIX: &str = "plugin-";
/// The file an init container copies an image plugin's binary to, in its volume.
pub const PLUGIN_IMAGE_FILE: &str = "plugin";
/// The copy an init container runs in the plugin image (found on the image's `PATH`).
pub const COPY_COMMAND: &str = "cp";
/// The user of the controller image (`USER 999`); init containers run as it, so that images
/// without a `USER` pass the pod's `runAsNonRoot` and the copy belongs to the controller.
pub const CONTROLLER_UID: i64 = 999;

/// ConfigMap keys the controller reads.
pub const TRAFFIC_ROUTER_PLUGINS_KEY: &str = "trafficRouterPlugins";
pub const METRIC_PROVIDER_PLUGINS_KEY: &str = "metricProviderPlugins";
pub const STEP_PLUGINS_KEY: &str = "stepPlugins";

/// Arguments the renderer itself sets on the controller.
pub const NAMESPACED_ARG: &str = "--namespaced";
pub const LEADER_ELECT_ARG: &str = "--leader-elect";

pub const HEALTHZ_PORT: i32 = 8080;
pub const METRICS_PORT: i32 = 8090;

/// An RBAC rule as data. `""` is the core API group.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub api_groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

impl Rule {
    /// The rule as the Kubernetes type.
    pub fn to_policy_rule(self) -> PolicyRule {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        PolicyRule {
            api_groups: Some(strings(self.api_groups)),
            resources: Some(strings(self.resources)),
            verbs: strings(self.verbs),
            ..PolicyRule::default()
        }
    }
}

/// The controller's Role/ClusterRole rules, in the operator's order. The 22 rules upstream's
/// install.yaml (v1.9.1) has are upstream's, verb for verb; where the operator differs the
/// README's "Deliberate differences" says so (ingresses: upstream adds `update`, which the
/// controller's ALB path calls; deployments and podtemplates: the operator adds `patch`,
/// which the controller never calls). The last rule, routes, is the operator's own, for its
/// OpenShift route plugin.
pub const CONTROLLER_RULES: [Rule; 23] = [
    Rule {
        api_groups: &["argoproj.io"],
        resources: &["rollouts", "rollouts/status", "rollouts/finalizers"],
        verbs: &["get", "list", "watch", "update", "patch"],
    },
    Rule {
        api_groups: &["argoproj.io"],
        resources: &[
            "analysisruns",
            "analysisruns/finalizers",
            "experiments",
            "experiments/finalizers",
        ],
        verbs: &[
            "create", "get", "list", "watch", "update", "patch", "delete",
        ],
    },
    Rule {
        api_groups: &["argoproj.io"],
        resources: &["analysistemplates", "clusteranalysistemplates"],
        verbs: &["get", "list", "watch"],
    },
    Rule {
        api_groups: &["apps"],
        resources: &["replicasets"],
        verbs: &[
            "create", "get", "list", "watch", "update", "patch", "delete",
        ],
    },
    Rule {
        api_groups: &["", "apps"],
        resources: &["deployments", "podtemplates"],
        verbs: &["get", "list", "watch", "update"],
    },
    Rule {
        api_groups: &[""],
        resources: &["services"],
        verbs: &["get", "list", "watch", "patch", "create", "delete"],
    },
    Rule {
        api_groups: &["coordination.k8s.io"],
        resources: &["leases"],
        verbs: &["create", "get", "update"],
    },
    Rule {
        api_groups: &[""],
        resources: &["secrets", "configmaps"],
        verbs: &["get", "list", "watch"],
    },
    Rule {
        api_groups: &[""],
        resources: &["pods"],
        verbs: &["list", "update", "watch"],
    },
    Rule {
        api_groups: &[""],
        resources: &["pods/eviction"],
        verbs: &["create"],
    },
    Rule {
        api_groups: &[""],
        resources: &["events"],
        verbs: &["create", "update", "patch"],
    },
    Rule {
        api_groups: &["networking.k8s.io", "extensions"],
        resources: &["ingresses"],
        verbs: &["create", "get", "list", "watch", "update", "patch"],
    },
    Rule {
        api_groups: &["batch"],
        resources: &["jobs"],
        verbs: &[
            "create", "get", "list", "watch", "update", "patch", "delete",
        ],
    },
    Rule {
        api_groups: &["networking.istio.io"],
        resources: &["virtualservices", "destinationrules"],
        verbs: &["watch", "get", "update", "patch", "list"],
    },
    Rule {
        api_groups: &["split.smi-spec.io"],
        resources: &["trafficsplits"],
        verbs: &["create", "watch", "get", "update", "patch"],
    },
    Rule {
        api_groups: &["getambassador.io", "x.getambassador.io"],
        resources: &["mappings", "ambassadormappings"],
        verbs: &["create", "watch", "get", "update", "list", "delete"],
    },
    Rule {
        api_groups: &[""],
        resources: &["endpoints"],
        verbs: &["get"],
    },
    Rule {
        api_groups: &["elbv2.k8s.aws", "eks.amazonaws.com"],
        resources: &["targetgroupbindings"],
        verbs: &["list", "get"],
    },
    Rule {
        api_groups: &["appmesh.k8s.aws"],
        resources: &["virtualservices"],
        verbs: &["watch", "get", "list"],
    },
    Rule {
        api_groups: &["appmesh.k8s.aws"],
        resources: &["virtualnodes", "virtualrouters"],
        verbs: &["watch", "get", "list", "update", "patch"],
    },
    Rule {
        api_groups: &["traefik.containo.us", "traefik.io"],
        resources: &["traefikservices"],
        verbs: &["watch", "get", "update"],
    },
    Rule {
        api_groups: &["apisix.apache.org"],
        resources: &["apisixroutes"],
        verbs: &["watch", "get", "update"],
    },
    Rule {
        api_groups: &["route.openshift.io"],
        resources: &["routes"],
        verbs: &["create", "watch", "get", "update", "patch", "list"],
    },
];

/// One of the cluster-wide ClusterRoles that extend the built-in admin, edit and view roles.
#[derive(Clone, Copy, Debug)]
pub struct AggregateRole {
    pub name: &'static str,
    /// `admin`, `edit` or `view`: the `rbac.authorization.k8s.io/aggregate-to-*` label.
    pub aggregate_to: &'static str,
    pub rule: Rule,
}

const AGGREGATE_WRITE_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const AGGREGATE_WRITE_RESOURCES: &[&str] = &[
    "rollouts",
    "rollouts/scale",
    "rollouts/status",
    "experiments",
    "analysistemplates",
    "clusteranalysistemplates",
    "analysisruns",
];

pub const AGGREGATE_ROLES: [AggregateRole; 3] = [
    AggregateRole {
        name: "argo-rollouts-aggregate-to-admin",
        aggregate_to: "admin",
        rule: Rule {
            api_groups: &["argoproj.io"],
            resources: AGGREGATE_WRITE_RESOURCES,
            verbs: AGGREGATE_WRITE_VERBS,
        },
    },
    AggregateRole {
        name: "argo-rollouts-aggregate-to-edit",
        aggregate_to: "edit",
        rule: Rule {
            api_groups: &["argoproj.io"],
            resources: AGGREGATE_WRITE_RESOURCES,
            verbs: AGGREGATE_WRITE_VERBS,
        },
    },
    AggregateRole {
        name: "argo-rollouts-aggregate-to-view",
        aggregate_to: "view",
        rule: Rule {
            api_groups: &["argoproj.io"],
            resources: &[
                "rollouts",
                "rollouts/scale",
                "experiments",
                "analysistemplates",
                "clusteranalysistemplates",
                "analysisruns",
            ],
            verbs: &["get", "list", "watch"],
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_tables_have_no_empty_or_repeated_entries() {
        let aggregate = AGGREGATE_ROLES.iter().map(|role| role.rule);
        for rule in CONTROLLER_RULES.iter().copied().chain(aggregate) {
            for list in [rule.api_groups, rule.resources, rule.verbs] {
                assert!(!list.is_empty());
                let mut sorted = list.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), list.len(), "{list:?}");
            }
        }
    }

    #[test]
    fn view_role_is_the_read_only_subset_of_edit() {
        let [_, edit, view] = AGGREGATE_ROLES;
        assert!(
            view.rule
                .resources
                .iter()
                .all(|r| edit.rule.resources.contains(r))
        );
        assert!(!view.rule.resources.contains(&"rollouts/status"));
        assert!(
            view.rule
                .verbs
                .iter()
                .all(|v| ["get", "list", "watch"].contains(v))
        );
    }

    #[test]
    fn the_openshift_plugin_location_is_a_pinned_https_url() {
        assert!(OPENSHIFT_PLUGIN_LOCATION.starts_with("https://"));
        assert!(OPENSHIFT_PLUGIN_LOCATION.contains("/commit-"));
    }
}
