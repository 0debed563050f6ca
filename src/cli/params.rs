//! The Argo CD plugin parameters: one table that `generate` reads, `plugin.yaml` announces and
//! the README documents (tests keep all three and the `render` flags in step).
//!
//! Each parameter is a long option of `render`. In an Application it is given either as a
//! plugin parameter (`ARGOCD_APP_PARAMETERS`) or as a plugin env entry, which Argo CD passes
//! as `ARGOCD_ENV_<NAME>` (upper case, `-` as `_`). Parameters win over env entries. What was
//! given becomes `--<name>=<value>` arguments for the same parser `render` uses
//! ([`super::OptionArgs`]), so a value means, and is checked, exactly as on the command line.

use std::collections::BTreeMap;
use std::fmt;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use serde_json::{Value as Json, json};

use super::OptionArgs;
use crate::diag::{Diagnostic, FieldPath, closest};
use crate::options::{DeliveryChoice, Options, PullPolicy};

/// The value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    String,
    /// A list of strings (in env form: comma-separated).
    Array,
    /// One of the listed strings.
    Choice(&'static [&'static str]),
}

#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub title: &'static str,
    pub tooltip: &'static str,
    pub kind: Kind,
    /// The default announced to the Argo CD UI, if any, and what `generate` uses when the
    /// parameter is not given (so the UI's default is what happens).
    pub default: Option<&'static str>,
}

impl Param {
    /// The name of the env entry Argo CD passes for this parameter.
    pub fn env_name(&self) -> String {
        format!(
            "ARGOCD_ENV_{}",
            self.name.to_ascii_uppercase().replace('-', "_")
        )
    }

    /// The `render` flag this parameter stands for.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }
}

pub const PARAMS: [Param; 10] = [
    Param {
        name: "namespace",
        title: "Namespace",
        tooltip: "Namespace for RolloutManagers without metadata.namespace. Default: the Application's destination namespace.",
        kind: Kind::String,
        default: None,
    },
    Param {
        name: "strict",
        title: "Strict",
        tooltip: "Treat warnings (missing sha256 or image digest, plain http, plugins nobody configures) as errors.",
        kind: Kind::Bool,
        default: Some("false"),
    },
    Param {
        name: "require-sha256",
        title: "Require sha256",
        tooltip: "Every plugin must be pinned: an http(s) plugin with a sha256, an image plugin with a digest.",
        kind: Kind::Bool,
        default: Some("false"),
    },
    Param {
        name: "allow-plugin-location",
        title: "Allowed plugin locations",
        tooltip: "Every plugin location must start with one of these prefixes.",
        kind: Kind::Array,
        default: None,
    },
    Param {
        name: "openshift-route-plugin",
        title: "OpenShift route plugin",
        tooltip: "Add the argoproj-labs/openshift traffic plugin: true for the operator's release, or its location.",
        kind: Kind::String,
        default: Some("false"),
    },
    Param {
        name: "rollouts-image",
        title: "Controller image",
        tooltip: "Controller image when a RolloutManager sets neither image nor version.",
        kind: Kind::String,
        default: None,
    },
    Param {
        name: "image-pull-policy",
        title: "Image pull policy",
        tooltip: "Pull policy when a RolloutManager sets none.",
        kind: Kind::Choice(&PullPolicy::NAMES),
        default: Some(PullPolicy::IfNotPresent.as_str()),
    },
    Param {
        name: "plugin-image-delivery",
        title: "Plugin image delivery",
        tooltip: "How plugins given as an image reach the controller: volume (image volumes, Kubernetes 1.35+), init-container (cp in the plugin image), or auto: volume, unless KUBE_VERSION is older than 1.35.",
        kind: Kind::Choice(&DeliveryChoice::NAMES),
        default: Some("auto"),
    },
    Param {
        name: "aggregate-roles",
        title: "Aggregate ClusterRoles",
        tooltip: "Render the cluster-wide aggregate-to-admin/edit/view ClusterRoles; set false in all but one Application.",
        kind: Kind::Bool,
        default: Some("true"),
    },
    Param {
        name: "warnings-annotation",
        title: "Warnings annotation",
        tooltip: "Record the warnings of a successful render in the rollouts-render/warnings annotation of the argo-rollouts-config ConfigMap (Argo CD shows stderr only on failure).",
        kind: Kind::Bool,
        default: Some("true"),
    },
];

/// One parameter value as given, before interpretation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Given {
    String(String),
    Array(Vec<String>),
    Map,
}

/// Where a value of the plugin environment came from, as messages name it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin {
    Parameter(&'static Param),
    EnvEntry(&'static Param),
    /// Neither was given: the default `plugin.yaml` announces.
    Default(&'static Param),
    /// `ARGOCD_APP_NAMESPACE`, the Application's destination namespace.
    AppNamespace,
    /// `KUBE_API_VERSIONS`.
    ApiVersions,
    /// `KUBE_VERSION`.
    KubeVersion,
    /// A field of a KRM function's `functionConfig`; its diagnostics carry the field path.
    FunctionConfig(&'static Param, ConfigField),
}

/// Where a KRM function's `functionConfig` holds a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConfigField {
    /// `data.<name>` of a ConfigMap (kpt's `fn eval -- name=value` writes one).
    Data,
    /// The annotation `rollouts-render/<name>` of a RolloutManager used as the
    /// functionConfig (kustomize's generator form).
    Annotation,
}

/// The annotation prefix of parameters on a RolloutManager used as a functionConfig.
pub const ANNOTATION_PREFIX: &str = "rollouts-render/";

impl ConfigField {
    /// The field path of a parameter in the functionConfig.
    pub(crate) fn path(self, param: &Param) -> FieldPath {
        match self {
            Self::Data => FieldPath::from("data").key(param.name),
            Self::Annotation => FieldPath::from("metadata.annotations")
                .key(&format!("{ANNOTATION_PREFIX}{}", param.name)),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parameter(param) => write!(f, "parameter `{}`", param.name),
            Self::EnvEntry(param) => write!(
                f,
                "env entry `{}` ({})",
                param.env_name().trim_start_matches("ARGOCD_ENV_"),
                param.env_name()
            ),
            Self::Default(param) => write!(f, "the default of parameter `{}`", param.name),
            Self::AppNamespace => f.write_str("ARGOCD_APP_NAMESPACE"),
            Self::ApiVersions => f.write_str("KUBE_API_VERSIONS"),
            Self::KubeVersion => f.write_str("KUBE_VERSION"),
            Self::FunctionConfig(param, field) => {
                write!(f, "functionConfig `{}`", field.path(param))
            }
        }
    }
}

/// The parser `render` uses, without a program name or subcommand.
#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct ParameterArgs {
    #[command(flatten)]
    options: OptionArgs,
}

/// Reads the options of a `generate` run from the plugin environment (`env`: the process
/// environment, passed in so this stays a pure function). Unknown parameters are warnings;
/// any value that `render` would refuse is an error naming where it came from, and then there
/// are no options.
pub fn options(env: &BTreeMap<String, String>) -> (Option<Options>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let args = arguments(env, &mut diagnostics);
    let options = parse(&args, &mut diagnostics);
    (options, diagnostics)
}

/// Parses `--<name>=<value>` arguments with the parser `render` uses. Every bad value is
/// reported, naming where it came from; any error (already in `diagnostics` or found here)
/// means no options.
pub(crate) fn parse(
    args: &[(String, Origin)],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Options> {
    // Each argument alone first, so that every bad value is reported, not only the first.
    for (arg, origin) in args {
        if let Err(error) = ParameterArgs::try_parse_from([arg]) {
            diagnostics.push(parameter_error(*origin, &error));
        }
    }
    if diagnostics.iter().any(Diagnostic::is_error) {
        return None;
    }
    match ParameterArgs::try_parse_from(args.iter().map(|(arg, _)| arg)) {
        Ok(parsed) => Some(parsed.options.options()),
        Err(error) => {
            diagnostics.push(Diagnostic::error(describe(&error)));
            None
        }
    }
}

/// The parameter of this name among `params`; unknown names are reported with the closest
/// one.
pub(crate) fn find(params: &'static [Param], name: &str) -> Result<&'static Param, Diagnostic> {
    params.iter().find(|p| p.name == name).ok_or_else(|| {
        let mut error = Diagnostic::error(format!("unknown parameter `{name}`"));
        if let Some(suggestion) = closest(name, params.iter().map(|p| p.name)) {
            error = error.hint(format!("did you mean `{suggestion}`?"));
        } else {
            error = error.hint(format!(
                "the parameters: {}",
                params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            ));
        }
        error
    })
}

/// A value given for a parameter as its `render` arguments: a list becomes one argument per
/// item (callers split env-style comma lists with [`split_list`] first).
pub(crate) fn push_given(
    param: &'static Param,
    given: &Given,
    origin: Origin,
    args: &mut Vec<(String, Origin)>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut push = |value: &str| args.push((format!("{}={value}", param.flag()), origin));
    match given {
        Given::String(value) => push(value),
        Given::Array(items) if param.kind == Kind::Array => {
            for item in items {
                push(item);
            }
        }
        Given::Array(_) => diagnostics.push(shape_error(
            origin,
            param,
            "expects a single value, not a list",
        )),
        Given::Map => diagnostics.push(shape_error(
            origin,
            param,
            "expects a single value, not a map",
        )),
    }
}

/// A comma-separated list as env entries give it.
pub(crate) fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The plugin environment as `render` arguments, each with its origin: for each parameter
/// the plugin parameter, else the env entry, else the default `plugin.yaml` announces; the
/// namespace, else the Application's destination namespace; the cluster's API versions and
/// Kubernetes version.
fn arguments(
    env: &BTreeMap<String, String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(String, Origin)> {
    let mut given: BTreeMap<&'static str, (Given, Origin)> = BTreeMap::new();
    for param in &PARAMS {
        if let Some(value) = env.get(&param.env_name()) {
            let value = match param.kind {
                Kind::Array => Given::Array(split_list(value)),
                _ => Given::String(value.clone()),
            };
            given.insert(param.name, (value, Origin::EnvEntry(param)));
        }
    }
    match env.get("ARGOCD_APP_PARAMETERS").map(|s| s.trim()) {
        None | Some("" | "null") => {}
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Null) => {}
            Ok(Json::Array(entries)) => {
                for entry in entries {
                    if let Some((param, value)) = read_parameter(&entry, diagnostics) {
                        given.insert(param.name, (value, Origin::Parameter(param)));
                    }
                }
            }
            _ => diagnostics.push(Diagnostic::error(
                "ARGOCD_APP_PARAMETERS is not a JSON list of parameters",
            )),
        },
    }

    let mut args = Vec::new();
    for param in &PARAMS {
        match given.get(param.name) {
            Some((value, origin)) => push_given(param, value, *origin, &mut args, diagnostics),
            None if param.name == "namespace" => {
                if let Some(namespace) = env.get("ARGOCD_APP_NAMESPACE").filter(|ns| !ns.is_empty())
                {
                    args.push((
                        format!("{}={namespace}", param.flag()),
                        Origin::AppNamespace,
                    ));
                }
            }
            None => {
                if let Some(default) = param.default {
                    args.push((
                        format!("{}={default}", param.flag()),
                        Origin::Default(param),
                    ));
                }
            }
        }
    }
    if let Some(versions) = env.get("KUBE_API_VERSIONS").filter(|v| !v.is_empty()) {
        args.push((format!("--api-versions={versions}"), Origin::ApiVersions));
    }
    if let Some(version) = env.get("KUBE_VERSION").filter(|v| !v.is_empty()) {
        args.push((format!("--kube-version={version}"), Origin::KubeVersion));
    }
    args
}

fn read_parameter(
    entry: &Json,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(&'static Param, Given)> {
    let Some(name) = entry.get("name").and_then(Json::as_str) else {
        diagnostics.push(Diagnostic::error(
            "ARGOCD_APP_PARAMETERS has an entry without a name",
        ));
        return None;
    };
    let Some(param) = PARAMS.iter().find(|p| p.name == name) else {
        let mut warning = Diagnostic::warning(format!("unknown parameter `{name}` is ignored"));
        if let Some(suggestion) = closest(name, PARAMS.iter().map(|p| p.name)) {
            warning = warning.hint(format!("did you mean `{suggestion}`?"));
        }
        diagnostics.push(warning);
        return None;
    };
    let value = if let Some(s) = entry.get("string").and_then(Json::as_str) {
        Given::String(s.to_owned())
    } else if let Some(items) = entry.get("array").and_then(Json::as_array) {
        Given::Array(
            items
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect(),
        )
    } else if entry.get("map").is_some() {
        Given::Map
    } else {
        Given::String(String::new())
    };
    Some((param, value))
}

fn hint(param: &Param) -> String {
    format!(
        "see the parameters of the rollouts-render plugin ({})",
        param.title
    )
}

fn shape_error(origin: Origin, param: &Param, problem: &str) -> Diagnostic {
    match origin {
        Origin::FunctionConfig(param, field) => Diagnostic::error(problem)
            .path(field.path(param))
            .hint(function_hint(param)),
        _ => Diagnostic::error(format!("{origin}: {problem}")).hint(hint(param)),
    }
}

fn function_hint(param: &Param) -> String {
    format!(
        "`{}` takes what the flag `{}` of `rollouts-render render` takes",
        param.name,
        param.flag()
    )
}

fn parameter_error(origin: Origin, error: &clap::Error) -> Diagnostic {
    if let Origin::FunctionConfig(param, field) = origin {
        // The field path says where; the caller says in which object.
        return Diagnostic::error(describe(error))
            .path(field.path(param))
            .hint(function_hint(param));
    }
    let diagnostic = Diagnostic::error(format!("{origin}: {}", describe(error)));
    match origin {
        Origin::Parameter(param) | Origin::EnvEntry(param) | Origin::Default(param) => {
            diagnostic.hint(hint(param))
        }
        Origin::AppNamespace => diagnostic
            .hint("set the `namespace` parameter, or the Application's destination namespace"),
        Origin::ApiVersions | Origin::KubeVersion | Origin::FunctionConfig(..) => diagnostic,
    }
}

/// A clap error in the words `render` uses for it on the command line ("invalid value …: …"),
/// without clap's layout.
fn describe(error: &clap::Error) -> String {
    if error.kind() == ErrorKind::ValueValidation
        && let Some(ContextValue::String(value)) = error.get(ContextKind::InvalidValue)
        && let Some(reason) = std::error::Error::source(error)
    {
        return format!("invalid value `{value}`: {reason}");
    }
    let text = error.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

/// The `ConfigManagementPlugin` Argo CD reads, announcing every parameter of the table.
pub fn plugin_yaml() -> Json {
    let parameters: Vec<Json> = PARAMS
        .iter()
        .map(|param| {
            let mut announced = json!({
                "name": param.name,
                "title": param.title,
                "tooltip": param.tooltip,
                "required": false,
            });
            match param.kind {
                Kind::Array => announced["itemType"] = json!("string"),
                Kind::Choice(_) | Kind::Bool | Kind::String => {}
            }
            if let Some(default) = param.default {
                announced["string"] = json!(default);
            }
            if param.kind == Kind::Array {
                announced["collectionType"] = json!("array");
            }
            announced
        })
        .collect();
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": "rollouts-render"},
        "spec": {
            "generate": {"command": [BINARY_PATH, "generate"]},
            "discover": {"find": {"command": [BINARY_PATH, "discover"]}},
            "parameters": {"static": parameters},
        },
    })
}

/// `plugin.yaml` as committed at the repository root and baked into the image.
pub fn plugin_yaml_text() -> String {
    format!(
        "# Generated from src/params.rs by `rollouts-render plugin-yaml`; do not edit.\n{}",
        crate::emit::yaml(&plugin_yaml())
    )
}

/// Where the image installs the binary.
pub const BINARY_PATH: &str = "/usr/local/bin/rollouts-render";

/// The README's parameter table.
pub fn markdown_table() -> String {
    let mut table =
        String::from("| parameter | env entry | value | meaning |\n|---|---|---|---|\n");
    for param in &PARAMS {
        let value = match param.kind {
            Kind::Bool => format!(
                "`true`/`false` (default `{}`)",
                param.default.unwrap_or("false")
            ),
            Kind::String => match param.default {
                Some(default) => format!("string (default `{default}`)"),
                None => "string".to_owned(),
            },
            Kind::Array => "list (env: comma-separated)".to_owned(),
            Kind::Choice(choices) => format!("one of `{}`", choices.join("`, `")),
        };
        table.push_str(&format!(
            "| `{}` | `{}` | {} | {} (`{}`) |\n",
            param.name,
            param.env_name(),
            value,
            param.tooltip,
            param.flag()
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Namespace;
    use crate::render::tables;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn messages(diagnostics: &[Diagnostic]) -> Vec<String> {
        diagnostics.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn unset_null_and_empty_parameters_give_the_defaults() {
        for parameters in [None, Some(""), Some("null"), Some("[]")] {
            let mut pairs = vec![("ARGOCD_APP_NAMESPACE", "apps")];
            if let Some(p) = parameters {
                pairs.push(("ARGOCD_APP_PARAMETERS", p));
            }
            let (options, diagnostics) = options(&env(&pairs));
            assert!(diagnostics.is_empty());
            assert_eq!(
                options,
                Some(Options {
                    namespace: Some(Namespace::parse("apps").unwrap()),
                    image_pull_policy: Some(PullPolicy::IfNotPresent),
                    warnings_annotation: true,
                    ..Options::default()
                })
            );
        }
    }

    /// What the Argo CD UI shows as a parameter's default is what happens when it is not sent.
    #[test]
    fn announced_defaults_are_what_generate_uses() {
        let (none_sent, _) = options(&env(&[]));
        let defaults: Vec<String> = PARAMS
            .iter()
            .filter_map(|p| {
                p.default
                    .map(|d| format!(r#"{{"name":"{}","string":"{d}"}}"#, p.name))
            })
            .collect();
        let parameters = format!("[{}]", defaults.join(","));
        let (all_sent, diagnostics) = options(&env(&[("ARGOCD_APP_PARAMETERS", &parameters)]));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(none_sent, all_sent);
        assert!(none_sent.unwrap().warnings_annotation);
    }

    #[test]
    fn parameters_override_env_entries() {
        let (options, diagnostics) = options(&env(&[
            ("ARGOCD_ENV_STRICT", "false"),
            ("ARGOCD_ENV_REQUIRE_SHA256", "true"),
            ("ARGOCD_ENV_ALLOW_PLUGIN_LOCATION", "https://a/, file:///b/"),
            ("ARGOCD_ENV_NAMESPACE", "from-env"),
            ("ARGOCD_APP_NAMESPACE", "destination"),
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"strict","string":"true"},{"name":"image-pull-policy","string":"Always"},{"name":"aggregate-roles","string":"false"}]"#,
            ),
            ("KUBE_API_VERSIONS", "v1,monitoring.coreos.com/v1"),
        ]));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let options = options.unwrap();
        assert!(options.strict && options.require_sha256 && !options.aggregate_roles);
        let written: Vec<&str> = options
            .allowed_plugin_locations
            .iter()
            .map(|prefix| prefix.written.as_str())
            .collect();
        assert_eq!(written, ["https://a/", "file:///b/"]);
        assert_eq!(options.image_pull_policy, Some(PullPolicy::Always));
        assert_eq!(options.namespace.as_ref().unwrap().as_str(), "from-env");
        assert!(options.has_api_version("monitoring.coreos.com/v1"));
    }

    #[test]
    fn unknown_parameters_warn_and_bad_values_fail_naming_their_origin() {
        let (options, diagnostics) = options(&env(&[
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"strcit","string":"true"},{"name":"require-sha256","string":"yes"},{"name":"namespace","array":["a"]},{"name":"image-pull-policy","string":"Sometimes"}]"#,
            ),
            ("ARGOCD_ENV_ROLLOUTS_IMAGE", ""),
        ]));
        assert_eq!(options, None);
        assert_eq!(
            messages(&diagnostics),
            [
                "warning: unknown parameter `strcit` is ignored\n  hint: did you mean `strict`?",
                "error: parameter `namespace`: expects a single value, not a list\n  hint: see the parameters of the rollouts-render plugin (Namespace)",
                "error: parameter `require-sha256`: invalid value `yes`: expects `true` or `false`\n  hint: see the parameters of the rollouts-render plugin (Require sha256)",
                "error: env entry `ROLLOUTS_IMAGE` (ARGOCD_ENV_ROLLOUTS_IMAGE): invalid value ``: not an image reference: it must be non-empty, without spaces\n  hint: see the parameters of the rollouts-render plugin (Controller image)",
                "error: parameter `image-pull-policy`: invalid value `Sometimes`: not an image pull policy (use Always, IfNotPresent, Never)\n  hint: see the parameters of the rollouts-render plugin (Image pull policy)",
            ]
        );
    }

    #[test]
    fn the_cluster_version_decides_the_plugin_image_delivery() {
        use crate::options::ImageDelivery;
        let delivery = |pairs: &[(&str, &str)]| options(&env(pairs)).0.unwrap().image_delivery();
        assert_eq!(delivery(&[]), ImageDelivery::Volume);
        assert_eq!(delivery(&[("KUBE_VERSION", "1.35")]), ImageDelivery::Volume);
        assert_eq!(
            delivery(&[("KUBE_VERSION", "1.34")]),
            ImageDelivery::InitContainer
        );
        assert_eq!(delivery(&[("KUBE_VERSION", "")]), ImageDelivery::Volume);
        assert_eq!(
            delivery(&[
                ("KUBE_VERSION", "1.34"),
                (
                    "ARGOCD_APP_PARAMETERS",
                    r#"[{"name":"plugin-image-delivery","string":"volume"}]"#
                )
            ]),
            ImageDelivery::Volume
        );
        assert_eq!(
            delivery(&[
                ("KUBE_VERSION", "1.36"),
                ("ARGOCD_ENV_PLUGIN_IMAGE_DELIVERY", "init-container")
            ]),
            ImageDelivery::InitContainer
        );
        let (options, diagnostics) = options(&env(&[("KUBE_VERSION", "one")]));
        assert_eq!(options, None);
        assert_eq!(
            messages(&diagnostics),
            [
                "error: KUBE_VERSION: invalid value `one`: not a Kubernetes version (write it like `1.34` or `v1.34.2`)"
            ]
        );
    }

    #[test]
    fn the_destination_namespace_is_checked_like_the_parameter() {
        let (options, diagnostics) = options(&env(&[("ARGOCD_APP_NAMESPACE", "Bad_NS!")]));
        assert_eq!(options, None);
        assert_eq!(
            messages(&diagnostics),
            [
                "error: ARGOCD_APP_NAMESPACE: invalid value `Bad_NS!`: not a valid namespace: it must consist of lower case letters, digits or '-', and start and end with a letter or digit\n  hint: set the `namespace` parameter, or the Application's destination namespace"
            ]
        );
    }

    #[test]
    fn the_openshift_plugin_takes_true_false_or_a_location() {
        let location = |value: &str| {
            options(&env(&[("ARGOCD_ENV_OPENSHIFT_ROUTE_PLUGIN", value)]))
                .0
                .unwrap()
                .openshift_route_plugin
        };
        assert_eq!(
            location("true").as_deref(),
            Some(tables::OPENSHIFT_PLUGIN_LOCATION)
        );
        assert_eq!(location("false"), None);
        assert_eq!(location("https://x/p").as_deref(), Some("https://x/p"));
    }
}
