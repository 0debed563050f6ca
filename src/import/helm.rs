//! `import --helm-values`: the values of the argo-helm `argo-rollouts` chart (read against
//! chart 2.41.0, app v1.9.0) to a RolloutManager, with a report of what was carried, what has
//! no RolloutManager field, and what changes in the output.
//!
//! The chart writes each plugin list into `argo-rollouts-config` with `toYaml`, unchecked, and
//! the controller reads it leniently; the entries are read here as the controller reads them
//! ([`super::read_entries`]), so the plugins render to the lists the chart's ConfigMap holds.
//! Values are read as Helm reads them (YAML 1.1 scalars). A value equal to the chart's default
//! is not mentioned; where the chart's default and rollouts-render's differ (two replicas, no
//! notification Secret, no NetworkPolicy), the chart's is carried.

use serde_json::{Map, Value as Json, json};

use super::{Problem, read_entries};
use crate::diag::{Diagnostic, Diagnostics, FieldPath, Location, Pos};
use crate::input::source::Inputs;
use crate::input::yaml::{self, Document};
use crate::input::yaml11;
use crate::model;
use crate::render::tables;
use crate::spec::PluginKind;

/// The chart version whose values this reads, and the controller version it runs by default.
pub const CHART_VERSION: &str = "2.41.0";
pub const CHART_APP_VERSION: &str = "v1.9.0";

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub location: Option<Location>,
    pub path: FieldPath,
    pub message: String,
}

impl Note {
    fn render(&self) -> String {
        let mut out = String::from("  ");
        if let Some(location) = &self.location {
            out.push_str(&location.source);
            if let Some(pos) = location.pos {
                out.push_str(&format!(":{}:{}", pos.line, pos.col));
            }
            out.push_str(": ");
        }
        if !self.path.is_root() {
            out.push_str(&format!("{}: ", self.path));
        }
        out.push_str(&self.message.replace('\n', "\n    "));
        out
    }
}

/// What the import did with the values.
#[derive(Debug, Default)]
pub struct Report {
    pub carried: Vec<Note>,
    pub not_carried: Vec<Note>,
    pub changes: Vec<Note>,
}

impl Report {
    /// The report as printed on stderr: three sections, each line at its value, in the
    /// order of the file (then the chart's defaults, which are in no line of it).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (title, notes) in [
            ("carried", &self.carried),
            ("not carried (no RolloutManager field)", &self.not_carried),
            ("what changes in the output", &self.changes),
        ] {
            if notes.is_empty() {
                continue;
            }
            out.push_str(&format!("{title}:\n"));
            let mut notes: Vec<&Note> = notes.iter().collect();
            notes.sort_by_key(|note| match note.location.as_ref().and_then(|l| l.pos) {
                Some(pos) => (0, pos),
                None => (1, Pos::default()),
            });
            for note in notes {
                out.push_str(&note.render());
                out.push('\n');
            }
        }
        out
    }
}

/// The RolloutManager, the report, and the warnings of checking it.
#[derive(Debug)]
pub struct HelmImport {
    pub document: Json,
    pub report: Report,
    pub warnings: Diagnostics,
}

/// The plugin names of the providers whose RBAC the chart grants beyond rollouts-render's
/// role (upstream install.yaml's), with those rules. Other providers' rules are in both.
fn provider_rules(provider: &str) -> Option<(&'static str, Json)> {
    match provider {
        "gatewayAPI" => Some((
            "argoproj-labs/gatewayAPI",
            json!([
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "update"]},
                {"apiGroups": ["gateway.networking.k8s.io"],
                 "resources": ["httproutes", "tcproutes", "tlsroutes", "udproutes", "grpcroutes"],
                 "verbs": ["get", "list", "watch", "update"]},
            ]),
        )),
        "contour" => Some((
            "argoproj-labs/contour",
            json!([{"apiGroups": ["projectcontour.io"], "resources": ["httpproxies"],
                    "verbs": ["get", "list", "watch", "update"]}]),
        )),
        "glooPlatform" => Some((
            "solo-io/glooplatform",
            json!([{"apiGroups": ["networking.gloo.solo.io"], "resources": ["routetables"],
                    "verbs": ["*"]}]),
        )),
        _ => None,
    }
}

/// The chart's providers whose rules rollouts-render's role always has.
const BASE_PROVIDERS: [&str; 7] = [
    "istio",
    "smi",
    "ambassador",
    "awsLoadBalancerController",
    "awsAppMesh",
    "traefik",
    "apisix",
];

/// Values with no RolloutManager field: path, the chart's default, and why.
const NOT_CARRIED: [(&str, &str, &str); 43] = [
    ("crdAnnotations", "{}", "rollouts-render renders no CRDs"),
    (
        "createClusterAggregateRoles",
        "true",
        "render with `--no-aggregate-roles` to leave the aggregate ClusterRoles out",
    ),
    (
        "nameOverride",
        "null",
        "object names are fixed: `argo-rollouts`",
    ),
    (
        "fullnameOverride",
        "null",
        "object names are fixed: `argo-rollouts`",
    ),
    (
        "apiVersionOverrides",
        "{\"ingress\":\"\"}",
        "only the dashboard's Ingress uses it",
    ),
    (
        "kubeVersionOverride",
        "\"\"",
        "nothing rendered depends on the Kubernetes version",
    ),
    (
        "extraObjects",
        "[]",
        "keep them as manifests beside the RolloutManager: `render` passes other objects through",
    ),
    (
        "global",
        "{\"deploymentAnnotations\":{},\"deploymentLabels\":{},\"revisionHistoryLimit\":10,\"dnsConfig\":{}}",
        "no field for Deployment annotations, labels, revisionHistoryLimit or dnsConfig",
    ),
    (
        "controller.component",
        "\"rollouts-controller\"",
        "the component label is `argo-rollouts`",
    ),
    (
        "controller.deploymentAnnotations",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "controller.deploymentLabels",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "controller.podAnnotations",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "controller.podLabels",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "podAnnotations",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "podLabels",
        "{}",
        "spec.additionalMetadata would put them on every object",
    ),
    (
        "controller.affinity",
        "{}",
        "with spec.ha the pods get rollouts-render's anti-affinity; no other affinity",
    ),
    (
        "controller.topologySpreadConstraints",
        "[]",
        "no field for topology spread",
    ),
    (
        "controller.terminationGracePeriodSeconds",
        "30",
        "no field; Kubernetes' default is 30 as well",
    ),
    ("controller.lifecycle", "{}", "no field for lifecycle hooks"),
    (
        "controller.priorityClassName",
        "\"\"",
        "no field for a priority class",
    ),
    (
        "controller.extraContainers",
        "[]",
        "no field for more containers",
    ),
    (
        "controller.initContainers",
        "[]",
        "no field for init containers",
    ),
    (
        "controller.volumes",
        "[]",
        "no field for more volumes (plugin binaries can come from `file://` locations in an image)",
    ),
    (
        "controller.volumeMounts",
        "[]",
        "no field for more volume mounts",
    ),
    (
        "controller.createClusterRole",
        "true",
        "the controller's ClusterRole (or Role) is always rendered",
    ),
    (
        "controller.containerPorts",
        "{\"metrics\":8090,\"healthz\":8080}",
        "the ports are fixed: metrics 8090, healthz 8080",
    ),
    (
        "controller.metrics.service",
        "{\"portName\":\"metrics\",\"port\":8090,\"annotations\":{}}",
        "the metrics Service is fixed: `argo-rollouts-metrics`, port 8090",
    ),
    (
        "controller.metrics.serviceMonitor",
        "{\"enabled\":false,\"namespace\":\"\",\"additionalLabels\":{},\"additionalAnnotations\":{},\"relabelings\":[],\"metricRelabelings\":[],\"tlsConfig\":{}}",
        "render with `--api-versions monitoring.coreos.com/v1` (Argo CD passes the cluster's) for a ServiceMonitor; it has no labels, relabelings or TLS",
    ),
    (
        "controller.livenessProbe",
        "{\"httpGet\":{\"path\":\"/healthz\",\"port\":\"healthz\"},\"initialDelaySeconds\":30,\"periodSeconds\":20,\"failureThreshold\":3,\"successThreshold\":1,\"timeoutSeconds\":10}",
        "the liveness probe is fixed (the chart's default)",
    ),
    (
        "controller.readinessProbe",
        "{\"httpGet\":{\"path\":\"/metrics\",\"port\":\"metrics\"},\"initialDelaySeconds\":15,\"periodSeconds\":5,\"failureThreshold\":3,\"successThreshold\":1,\"timeoutSeconds\":4}",
        "there is no readiness probe, as in upstream's install.yaml and the operator",
    ),
    (
        "controller.pdb",
        "{\"labels\":{},\"annotations\":{},\"enabled\":false,\"minAvailable\":null,\"maxUnavailable\":null}",
        "no PodDisruptionBudget is rendered; keep one as a manifest beside the RolloutManager",
    ),
    (
        "controller.createConfigmap",
        "true",
        "argo-rollouts-config is always rendered: it is what the RolloutManager is about",
    ),
    (
        "serviceAccount",
        "{\"create\":true,\"annotations\":{},\"name\":\"\"}",
        "the ServiceAccount `argo-rollouts` is always rendered, without annotations",
    ),
    (
        "podSecurityContext",
        "{\"runAsNonRoot\":true}",
        "the pod security context is fixed: runAsNonRoot",
    ),
    (
        "containerSecurityContext",
        "{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]},\"readOnlyRootFilesystem\":true,\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}",
        "the container security context is fixed (the chart's default, plus runAsNonRoot)",
    ),
    (
        "serviceAnnotations",
        "{}",
        "no field for Service annotations",
    ),
    ("imagePullSecrets", "[]", "no field for image pull Secrets"),
    (
        "dashboard",
        "",
        "rollouts-render renders no dashboard; run `kubectl argo rollouts dashboard`, or keep the chart for it alone",
    ),
    (
        "notifications.configmap",
        "{\"create\":true}",
        "no argo-rollouts-notification-configmap is rendered; keep it as a manifest beside the RolloutManager",
    ),
    (
        "notifications.notifiers",
        "{}",
        "no argo-rollouts-notification-configmap is rendered; keep it as a manifest beside the RolloutManager",
    ),
    (
        "notifications.templates",
        "{}",
        "no argo-rollouts-notification-configmap is rendered; keep it as a manifest beside the RolloutManager",
    ),
    (
        "notifications.triggers",
        "{}",
        "no argo-rollouts-notification-configmap is rendered; keep it as a manifest beside the RolloutManager",
    ),
    (
        "notifications.subscriptions",
        "[]",
        "no argo-rollouts-notification-configmap is rendered; keep it as a manifest beside the RolloutManager",
    ),
];

/// Every top-level value and `controller` value of the chart; anything else is reported as
/// unknown (a typo, or another chart version's).
const TOP_LEVEL: [&str; 23] = [
    "installCRDs",
    "keepCRDs",
    "clusterInstall",
    "createClusterAggregateRoles",
    "nameOverride",
    "fullnameOverride",
    "namespaceOverride",
    "apiVersionOverrides",
    "kubeVersionOverride",
    "extraObjects",
    "global",
    "controller",
    "serviceAccount",
    "crdAnnotations",
    "podAnnotations",
    "podSecurityContext",
    "containerSecurityContext",
    "serviceAnnotations",
    "podLabels",
    "imagePullSecrets",
    "providerRBAC",
    "dashboard",
    "notifications",
];

const CONTROLLER: [&str; 37] = [
    "component",
    "deploymentAnnotations",
    "deploymentLabels",
    "podAnnotations",
    "podLabels",
    "nodeSelector",
    "tolerations",
    "affinity",
    "logging",
    "topologySpreadConstraints",
    "terminationGracePeriodSeconds",
    "lifecycle",
    "priorityClassName",
    "replicas",
    "image",
    "awsVerifyTargetGroup",
    "awsTargetGroupBindingAPIVersion",
    "albTagKeyResourceID",
    "selfServiceNotification",
    "pprofAddress",
    "extraArgs",
    "extraEnv",
    "extraContainers",
    "initContainers",
    "resources",
    "createClusterRole",
    "containerPorts",
    "metrics",
    "livenessProbe",
    "readinessProbe",
    "pdb",
    "volumes",
    "volumeMounts",
    "metricProviderPlugins",
    "stepPlugins",
    "trafficRouterPlugins",
    "createConfigmap",
];

/// The plugin lists: values key, kind.
const PLUGIN_LISTS: [(&str, PluginKind); 3] = [
    ("trafficRouterPlugins", PluginKind::TrafficRouter),
    ("metricProviderPlugins", PluginKind::MetricProvider),
    ("stepPlugins", PluginKind::Step),
];

/// The values being read, and where each one is.
struct Values<'a> {
    document: &'a Document,
    data: Json,
}

impl Values<'_> {
    fn get(&self, path: &str) -> Option<&Json> {
        let mut value = &self.data;
        for key in path.split('.') {
            value = value.get(key)?;
        }
        (!value.is_null()).then_some(value)
    }

    fn str(&self, path: &str) -> Option<&str> {
        self.get(path)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
    }

    /// The location of a value, or of the file when the value is not in it (a chart default).
    fn location(&self, path: &FieldPath) -> Location {
        let exists = path
            .segments()
            .iter()
            .try_fold(&self.data, |value, segment| match segment {
                crate::diag::Segment::Key(key) => value.get(key),
                crate::diag::Segment::Index(index) => value.get(index),
            })
            .is_some();
        let pos: Option<Pos> = exists.then(|| self.document.root.locate(path));
        Location {
            source: self.document.source.clone(),
            pos,
        }
    }

    fn note(&self, path: &str, message: impl Into<String>) -> Note {
        let path = FieldPath::from(path);
        Note {
            location: Some(self.location(&path)),
            path,
            message: message.into(),
        }
    }

    fn diagnostic(&self, path: FieldPath, diagnostic: Diagnostic) -> Diagnostic {
        diagnostic.at(self.location(&path)).path(path)
    }
}

/// Reads one values file into a RolloutManager named `name`.
pub fn import(inputs: &Inputs, name: &str) -> Result<HelmImport, Diagnostics> {
    let mut diagnostics = Diagnostics::default();
    let mut documents = Vec::new();
    for source in &inputs.sources {
        match yaml::parse(&source.name, &source.text, &mut diagnostics) {
            Ok(parsed) => documents.extend(parsed),
            Err(error) => diagnostics.push(error),
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    if documents.len() > 1 {
        diagnostics.push(
            Diagnostic::error("a values file is one YAML document; this is a second one")
                .at(documents[1].location(documents[1].root.pos)),
        );
        return Err(diagnostics);
    }
    let Some(document) = documents.first() else {
        // An empty values file is the chart's defaults.
        let empty = Document {
            source: inputs
                .sources
                .first()
                .map(|s| s.name.clone())
                .unwrap_or_else(|| crate::input::source::STDIN_NAME.into()),
            root: yaml::Node {
                pos: Pos { line: 1, col: 1 },
                tag: None,
                value: yaml::Value::Map(Vec::new()),
            },
        };
        return finish(&empty, Json::Object(Map::new()), name, diagnostics);
    };
    let data = match yaml11::to_json(document, &mut diagnostics) {
        Some(data @ Json::Object(_)) => data,
        Some(_) => {
            diagnostics.push(
                Diagnostic::error(format!(
                    "expected the chart's values (a mapping), found {}",
                    document.root.describe()
                ))
                .at(document.location(document.root.pos)),
            );
            return Err(diagnostics);
        }
        None => return Err(diagnostics),
    };
    finish(document, data, name, diagnostics)
}

fn finish(
    document: &Document,
    data: Json,
    name: &str,
    mut diagnostics: Diagnostics,
) -> Result<HelmImport, Diagnostics> {
    let values = Values { document, data };
    let mut report = Report::default();
    let manager = manager_from(&values, name, &mut report, &mut diagnostics);
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    let mut checked = Diagnostics::default();
    if !super::check_written(std::slice::from_ref(&manager), &mut checked) {
        diagnostics.extend(checked);
        return Err(diagnostics);
    }
    diagnostics.extend(checked);
    Ok(HelmImport {
        document: manager,
        report,
        warnings: diagnostics,
    })
}

fn manager_from(
    values: &Values<'_>,
    name: &str,
    report: &mut Report,
    diagnostics: &mut Diagnostics,
) -> Json {
    unknown_keys(values, diagnostics);
    let mut spec = Map::new();
    let mut metadata = json!({ "name": name });

    if let Some(namespace) = values.str("namespaceOverride") {
        metadata["namespace"] = json!(namespace);
        report.carried.push(values.note(
            "namespaceOverride",
            format!("metadata.namespace: {namespace}"),
        ));
    } else {
        report.changes.push(Note {
            location: None,
            path: FieldPath::from("metadata.namespace"),
            message: "the release's namespace is not in the values: set it, or render with `-n` (Argo CD gives the Application's destination namespace)".into(),
        });
    }

    if values.get("clusterInstall") == Some(&json!(false)) {
        spec.insert("namespaceScoped".into(), json!(true));
        report.carried.push(values.note(
            "clusterInstall",
            "false → spec.namespaceScoped: true (a Role and RoleBinding, `--namespaced`)",
        ));
    }

    image(values, &mut spec, report);
    replicas(values, &mut spec, report);
    let mut args = controller_args(values, report);
    if let Some(extra) = values.get("controller.extraArgs") {
        match extra.as_array() {
            Some(items) if items.iter().all(Json::is_string) => {
                if !items.is_empty() {
                    args.extend(items.iter().cloned());
                    report.carried.push(values.note(
                        "controller.extraArgs",
                        "spec.extraCommandArgs",
                    ));
                }
            }
            _ => diagnostics.push(values.diagnostic(
                FieldPath::from("controller.extraArgs"),
                Diagnostic::error("expected a list of strings (the chart passes it to toYaml as the container's args)"),
            )),
        }
    }
    if !args.is_empty() {
        spec.insert("extraCommandArgs".into(), Json::Array(args));
    }
    if let Some(env) = values.get("controller.extraEnv").and_then(Json::as_array)
        && !env.is_empty()
    {
        spec.insert("env".into(), Json::Array(env.clone()));
        report
            .carried
            .push(values.note("controller.extraEnv", "spec.env"));
    }
    match values.get("controller.resources") {
        Some(resources) if resources.as_object().is_some_and(|r| !r.is_empty()) => {
            spec.insert("controllerResources".into(), resources.clone());
            report.carried.push(values.note(
                "controller.resources",
                "spec.controllerResources",
            ));
        }
        _ => report.changes.push(values.note(
            "controller.resources",
            "the chart sets no resources; rollouts-render's default is `limits: {ephemeral-storage: 1Gi}` (set spec.controllerResources to choose)",
        )),
    }
    node_placement(values, &mut spec, report);
    notifications(values, &mut spec, report);

    spec.insert("networkPolicy".into(), json!({"enabled": false}));
    report.carried.push(Note {
        location: None,
        path: FieldPath::root(),
        message: "the chart renders no NetworkPolicy → spec.networkPolicy.enabled: false (drop it for rollouts-render's, which admits ports 8080 and 8090 only)".into(),
    });

    let plugins = plugins(values, report, diagnostics);
    if !plugins.is_empty() {
        spec.insert("plugins".into(), Json::Object(plugins));
    }

    for (path, default, why) in NOT_CARRIED {
        let Some(value) = values.get(path) else {
            continue;
        };
        let differs = if path == "dashboard" {
            value.get("enabled") == Some(&json!(true))
        } else {
            let default: Json = serde_json::from_str(default).expect("a JSON default");
            !same_as_default(value, &default)
        };
        if differs {
            report.not_carried.push(values.note(path, why));
        }
    }
    if values.get("installCRDs") != Some(&json!(false)) {
        report.changes.push(values.note(
            "installCRDs",
            "the chart installs the Argo Rollouts CRDs; rollouts-render renders none: apply upstream's manifests/crds at the controller's version, server-side",
        ));
    }
    if values.get("controller.metrics.enabled") != Some(&json!(true)) {
        report.changes.push(values.note(
            "controller.metrics.enabled",
            "the metrics Service `argo-rollouts-metrics` is always rendered (the chart's default has none)",
        ));
    }
    report.changes.extend(always_changes());

    json!({
        "apiVersion": model::API_VERSION,
        "kind": model::KIND,
        "metadata": metadata,
        "spec": spec,
    })
}

/// A value equals the chart's default when it is the default, or (for a mapping) when each of
/// its keys holds the default's value; a key the default lacks is a difference.
fn same_as_default(value: &Json, default: &Json) -> bool {
    match (value, default) {
        (Json::Object(value), Json::Object(default)) => value.iter().all(|(key, v)| {
            default
                .get(key)
                .is_some_and(|d| same_as_default(v, d) || (v.is_null() && d.is_null()))
        }),
        _ => value == default,
    }
}

fn unknown_keys(values: &Values<'_>, diagnostics: &mut Diagnostics) {
    let warn = |path: FieldPath, key: &str, known: &[&str], diagnostics: &mut Diagnostics| {
        let mut warning = Diagnostic::warning(format!(
            "not a value of the argo-rollouts chart {CHART_VERSION}; ignored"
        ));
        if let Some(suggestion) = crate::diag::closest(key, known.iter().copied()) {
            warning = warning.hint(format!("did you mean `{suggestion}`?"));
        }
        diagnostics.push(values.diagnostic(path, warning));
    };
    if let Some(top) = values.data.as_object() {
        for key in top.keys() {
            if !TOP_LEVEL.contains(&key.as_str()) {
                warn(FieldPath::root().key(key), key, &TOP_LEVEL, diagnostics);
            }
        }
    }
    if let Some(controller) = values.get("controller").and_then(Json::as_object) {
        for key in controller.keys() {
            if !CONTROLLER.contains(&key.as_str()) {
                let path = FieldPath::from("controller").key(key);
                warn(path, key, &CONTROLLER, diagnostics);
            }
        }
    }
}

fn image(values: &Values<'_>, spec: &mut Map<String, Json>, report: &mut Report) {
    let registry = values.str("controller.image.registry").unwrap_or("quay.io");
    let repository = values
        .str("controller.image.repository")
        .unwrap_or("argoproj/argo-rollouts");
    let image = format!("{registry}/{repository}");
    if image != tables::DEFAULT_IMAGE {
        spec.insert("image".into(), json!(image));
        report.carried.push(values.note(
            "controller.image.repository",
            format!("controller.image.registry and .repository → spec.image: {image}"),
        ));
    }
    match values.str("controller.image.tag") {
        Some(tag) => {
            // `v1.9.0@sha256:…` pulls the digest; the tag before it is only a label.
            let version = tag.split_once('@').map_or(tag, |(_, digest)| digest);
            spec.insert("version".into(), json!(version));
            report.carried.push(values.note(
                "controller.image.tag",
                format!("spec.version: {version}"),
            ));
        }
        None => report.changes.push(values.note(
            "controller.image.tag",
            format!(
                "empty: the chart runs its appVersion ({CHART_APP_VERSION} in chart {CHART_VERSION}); rollouts-render's default is {} (set spec.version to keep the chart's)",
                tables::DEFAULT_VERSION
            ),
        )),
    }
    if let Some(policy) = values.str("controller.image.pullPolicy")
        && policy != "IfNotPresent"
    {
        spec.insert("imagePullPolicy".into(), json!(policy));
        report.carried.push(values.note(
            "controller.image.pullPolicy",
            format!("spec.imagePullPolicy: {policy}"),
        ));
    }
}

fn replicas(values: &Values<'_>, spec: &mut Map<String, Json>, report: &mut Report) {
    // The chart's default is two replicas, with leader election.
    let replicas = values
        .get("controller.replicas")
        .and_then(Json::as_i64)
        .unwrap_or(2);
    if replicas > 1 {
        spec.insert("ha".into(), json!({"enabled": true}));
        report.carried.push(values.note(
            "controller.replicas",
            format!("{replicas} → spec.ha.enabled: true (`--leader-elect`)"),
        ));
        report.changes.push(values.note(
            "controller.replicas",
            format!(
                "with spec.ha: {}2 replicas, with pod anti-affinity, preferred across zones and required across nodes (the chart sets none)",
                if replicas == 2 {
                    String::new()
                } else {
                    format!("{replicas} replicas become ")
                }
            ),
        ));
    } else if replicas < 1 {
        report.not_carried.push(values.note(
            "controller.replicas",
            "0: the controller always runs (1 replica, or 2 with spec.ha)",
        ));
    }
}

/// The controller arguments the chart makes of its own values.
fn controller_args(values: &Values<'_>, report: &mut Report) -> Vec<Json> {
    let mut args = Vec::new();
    let mut carry = |path: &str, arg: String, args: &mut Vec<Json>| {
        report
            .carried
            .push(values.note(path, format!("spec.extraCommandArgs: {arg}")));
        args.push(json!(arg));
    };
    for (path, flag, default) in [
        ("controller.logging.level", "--loglevel", "info"),
        ("controller.logging.format", "--logformat", "text"),
        ("controller.logging.kloglevel", "--kloglevel", "0"),
    ] {
        let value = values.get(path).map(|v| match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        });
        if let Some(value) = value.filter(|v| v != default && !v.is_empty()) {
            carry(path, format!("{flag}={value}"), &mut args);
        }
    }
    for (path, flag) in [
        (
            "controller.awsVerifyTargetGroup",
            "--aws-verify-target-group",
        ),
        (
            "controller.selfServiceNotification",
            "--self-service-notification-enabled",
        ),
    ] {
        if values.get(path) == Some(&json!(true)) {
            carry(path, flag.to_owned(), &mut args);
        }
    }
    for (path, flag) in [
        (
            "controller.awsTargetGroupBindingAPIVersion",
            "--aws-target-group-binding-api-version",
        ),
        (
            "controller.albTagKeyResourceID",
            "--alb-tag-key-resource-id",
        ),
        ("controller.pprofAddress", "--enable-pprof-address"),
    ] {
        if let Some(value) = values.str(path) {
            carry(path, format!("{flag}={value}"), &mut args);
        }
    }
    args
}

fn node_placement(values: &Values<'_>, spec: &mut Map<String, Json>, report: &mut Report) {
    let mut placement = Map::new();
    if let Some(selector) = values.get("controller.nodeSelector")
        && selector.as_object().is_some_and(|s| !s.is_empty())
    {
        placement.insert("nodeSelector".into(), selector.clone());
        report.carried.push(values.note(
            "controller.nodeSelector",
            "spec.nodePlacement.nodeSelector (with `kubernetes.io/os: linux` added, as always)",
        ));
    }
    if let Some(tolerations) = values.get("controller.tolerations")
        && tolerations.as_array().is_some_and(|t| !t.is_empty())
    {
        placement.insert("tolerations".into(), tolerations.clone());
        report
            .carried
            .push(values.note("controller.tolerations", "spec.nodePlacement.tolerations"));
    }
    if !placement.is_empty() {
        spec.insert("nodePlacement".into(), Json::Object(placement));
    }
}

fn notifications(values: &Values<'_>, spec: &mut Map<String, Json>, report: &mut Report) {
    if values.get("notifications.secret.create") == Some(&json!(true)) {
        let items = values
            .get("notifications.secret.items")
            .and_then(Json::as_object)
            .is_some_and(|i| !i.is_empty());
        if items {
            report.not_carried.push(values.note(
                "notifications.secret.items",
                "the notification Secret is rendered without data, so that an apply never wipes it: create its entries out of band",
            ));
        }
        if values
            .get("notifications.secret.annotations")
            .and_then(Json::as_object)
            .is_some_and(|a| !a.is_empty())
        {
            report.not_carried.push(values.note(
                "notifications.secret.annotations",
                "no field for the notification Secret's annotations",
            ));
        }
    } else {
        spec.insert("skipNotificationSecretDeployment".into(), json!(true));
        report.carried.push(values.note(
            "notifications.secret.create",
            "false → spec.skipNotificationSecretDeployment: true",
        ));
    }
}

fn plugins(
    values: &Values<'_>,
    report: &mut Report,
    diagnostics: &mut Diagnostics,
) -> Map<String, Json> {
    let mut lists: Vec<(PluginKind, Vec<Json>)> = Vec::new();
    for (key, kind) in PLUGIN_LISTS {
        let path = FieldPath::from("controller").key(key);
        let Some(value) = values.get(&format!("controller.{key}")) else {
            continue;
        };
        let Some(items) = value.as_array() else {
            diagnostics.push(values.diagnostic(
                path,
                Diagnostic::error(
                    "expected a list of plugins: the controller fails at start-up on anything else",
                ),
            ));
            continue;
        };
        let mut plugins = read_entries(items, kind, &mut |index, problem| {
            let at = path.index(index);
            let diagnostic = match problem {
                Problem::NotAMapping => values.diagnostic(
                    at,
                    Diagnostic::error("is not a mapping; the controller cannot read the list"),
                ),
                Problem::UnknownKey(key) => values.diagnostic(
                    at.key(&key),
                    Diagnostic::warning("the controller drops this key; it is not imported"),
                ),
                Problem::BadType(key) => values.diagnostic(
                    at.key(&key),
                    Diagnostic::error("has a type the controller cannot read"),
                ),
                Problem::Missing(fields) => values.diagnostic(
                    at,
                    Diagnostic::error(format!(
                        "has no {}; the controller fails at start-up on it",
                        fields.join(" and ")
                    )),
                ),
                Problem::OpenShift(location) => {
                    values.diagnostic(at, super::openshift_warning(&location))
                }
            };
            diagnostics.push(diagnostic);
        });
        // The controller installs every plugin at plugin-bin/<name>: the last one wins.
        let mut seen: Vec<Json> = Vec::new();
        plugins.retain(|plugin| {
            let name = plugin["name"].clone();
            if seen.contains(&name) {
                diagnostics.push(values.diagnostic(
                    path.clone(),
                    Diagnostic::warning(format!(
                        "the plugin {name} is listed twice; the first entry is kept"
                    )),
                ));
                return false;
            }
            seen.push(name);
            true
        });
        if !plugins.is_empty() {
            report.carried.push(values.note(
                &format!("controller.{key}"),
                format!(
                    "spec.plugins.{}: {} plugin{}",
                    kind.spec_field(),
                    plugins.len(),
                    if plugins.len() == 1 { "" } else { "s" }
                ),
            ));
            plugins.sort_by_key(|p| p["name"].as_str().unwrap_or_default().to_owned());
            lists.push((kind, plugins));
        }
    }
    provider_rbac(values, &mut lists, report);

    let mut map = Map::new();
    for (kind, plugins) in lists {
        map.insert(kind.spec_field().to_owned(), Json::Array(plugins));
    }
    map
}

/// The chart's provider RBAC. rollouts-render's role always holds the rules of the built-in
/// traffic providers; the rules the chart adds for plugins go to the plugin entry's `rules`
/// (the RolloutManager's place for the RBAC a plugin needs), and `additionalRules` to the first
/// plugin.
fn provider_rbac(values: &Values<'_>, lists: &mut [(PluginKind, Vec<Json>)], report: &mut Report) {
    let enabled = values.get("providerRBAC.enabled") != Some(&json!(false));
    let provider_on = |provider: &str| {
        enabled && values.get(&format!("providerRBAC.providers.{provider}")) != Some(&json!(false))
    };
    let off: Vec<&str> = BASE_PROVIDERS
        .into_iter()
        .filter(|p| !provider_on(p))
        .collect();
    if !off.is_empty() {
        report.changes.push(values.note(
            if enabled {
                "providerRBAC.providers"
            } else {
                "providerRBAC.enabled"
            },
            format!(
                "the controller's role keeps the rules for {} (rollouts-render's role is upstream install.yaml's)",
                off.join(", ")
            ),
        ));
    }
    for provider in ["gatewayAPI", "contour", "glooPlatform"] {
        if !provider_on(provider) {
            continue;
        }
        let (plugin_name, rules) = provider_rules(provider).expect("a plugin provider");
        let path = format!("providerRBAC.providers.{provider}");
        let plugin = lists
            .iter_mut()
            .flat_map(|(_, plugins)| plugins.iter_mut())
            .find(|p| p["name"] == plugin_name);
        match plugin {
            Some(plugin) => {
                append_rules(plugin, &rules);
                report.carried.push(values.note(
                    &path,
                    format!("the chart's rules for it → `rules` of the plugin {plugin_name}"),
                ));
            }
            None => report.not_carried.push(values.note(
                &path,
                format!("its rules serve the plugin `{plugin_name}`, which is not configured; nothing needs them"),
            )),
        }
    }
    if let Some(rules) = values
        .get("providerRBAC.additionalRules")
        .and_then(Json::as_array)
        .filter(|r| !r.is_empty())
    {
        let first = lists
            .iter_mut()
            .find_map(|(_, plugins)| plugins.first_mut());
        match first {
            Some(plugin) => {
                append_rules(plugin, &Json::Array(rules.clone()));
                report.carried.push(values.note(
                    "providerRBAC.additionalRules",
                    format!(
                        "`rules` of the plugin {} (every plugin's rules go to the controller's role)",
                        plugin["name"].as_str().unwrap_or_default()
                    ),
                ));
            }
            None => report.not_carried.push(values.note(
                "providerRBAC.additionalRules",
                "RBAC is added per plugin (`rules`), and no plugin is configured",
            )),
        }
    }
}

fn append_rules(plugin: &mut Json, rules: &Json) {
    let entry = plugin
        .as_object_mut()
        .expect("a plugin entry")
        .entry("rules")
        .or_insert_with(|| json!([]));
    if let (Some(list), Some(rules)) = (entry.as_array_mut(), rules.as_array()) {
        list.extend(rules.iter().cloned());
    }
}

/// What always differs from a chart install, whatever the values.
fn always_changes() -> Vec<Note> {
    let note = |path: &str, message: &str| Note {
        location: None,
        path: FieldPath::from(path),
        message: message.to_owned(),
    };
    vec![
        note(
            "metadata.name",
            "objects are named `argo-rollouts` (the Service `argo-rollouts-metrics`); the chart names them after the release (`<release>-argo-rollouts`, the release name when it holds `argo-rollouts`, or fullnameOverride). The ConfigMap `argo-rollouts-config` and the Secret `argo-rollouts-notification-secret` have the same names: uninstall the release before the first apply, or Helm deletes them later",
        ),
        note(
            "spec.selector",
            "the Deployment selects `app.kubernetes.io/name: argo-rollouts` only; the chart's selector also has `app.kubernetes.io/instance` and `app.kubernetes.io/component`. A selector never changes, so a chart Deployment of the same name must be deleted before the first apply",
        ),
        note(
            "metadata.labels",
            "objects carry `app.kubernetes.io/name`, `part-of` and `component: argo-rollouts`; not the chart's `helm.sh/chart`, `app.kubernetes.io/instance`, `version`, `managed-by` or `component: rollouts-controller`",
        ),
        note(
            "readinessProbe",
            "the controller has no readiness probe, as in upstream's install.yaml and the operator (the chart probes /metrics)",
        ),
        note(
            "checksum",
            "the pod template's `checksum/argo-rollouts-config` hashes the plugin lists only (the chart's `checksum/cm` hashes the whole ConfigMap template)",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value the report names is a value of the chart, and every default is JSON.
    #[test]
    fn the_tables_name_values_of_the_chart() {
        let known = |path: &str| {
            let mut parts = path.split('.');
            let top = parts.next().unwrap();
            assert!(TOP_LEVEL.contains(&top), "{path}");
            if top == "controller" {
                let key = parts.next().unwrap();
                assert!(CONTROLLER.contains(&key), "{path}");
            }
        };
        for (path, default, why) in NOT_CARRIED {
            known(path);
            assert!(!why.is_empty());
            if path != "dashboard" {
                serde_json::from_str::<Json>(default).unwrap_or_else(|e| panic!("{path}: {e}"));
            }
        }
        for (key, _) in PLUGIN_LISTS {
            known(&format!("controller.{key}"));
        }
        let mut sorted = TOP_LEVEL.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), TOP_LEVEL.len(), "no value twice");
        let mut sorted = CONTROLLER.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), CONTROLLER.len(), "no value twice");
    }

    #[test]
    fn a_value_equal_to_the_default_is_not_a_difference() {
        let default = json!({"create": true, "annotations": {}, "name": ""});
        assert!(same_as_default(&json!({"create": true}), &default));
        assert!(same_as_default(&json!({"annotations": {}}), &default));
        assert!(!same_as_default(&json!({"name": "rollouts"}), &default));
        assert!(!same_as_default(&json!({"nmae": ""}), &default));
        assert!(same_as_default(&json!([]), &json!([])));
        assert!(!same_as_default(&json!([{"name": "x"}]), &json!([])));
    }
}
