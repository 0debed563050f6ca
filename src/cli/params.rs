//! The Argo CD plugin parameters: one table that `generate` reads, `plugin.yaml` announces and
//! the README documents (tests keep all three and the `render` flags in step).
//!
//! Each parameter is a long option of `render`. In an Application it is given either as a
//! plugin parameter (`ARGOCD_APP_PARAMETERS`) or as a plugin env entry, which Argo CD passes
//! as `ARGOCD_ENV_<NAME>` (upper case, `-` as `_`). Parameters win over env entries.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use crate::diag::{Diagnostic, closest};
use crate::options::Options;
use crate::render::tables;

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
    /// The default announced to the Argo CD UI, if any.
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
        match self.name {
            "aggregate-roles" => "--no-aggregate-roles".to_owned(),
            name => format!("--{name}"),
        }
    }
}

pub const PARAMS: [Param; 8] = [
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
        tooltip: "Treat warnings (missing sha256, plain http, plugins nobody configures) as errors.",
        kind: Kind::Bool,
        default: Some("false"),
    },
    Param {
        name: "require-sha256",
        title: "Require sha256",
        tooltip: "Every http(s) plugin must be pinned with a sha256.",
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
        kind: Kind::Choice(&tables::IMAGE_PULL_POLICIES),
        default: Some(tables::DEFAULT_IMAGE_PULL_POLICY),
    },
    Param {
        name: "aggregate-roles",
        title: "Aggregate ClusterRoles",
        tooltip: "Render the cluster-wide aggregate-to-admin/edit/view ClusterRoles; set false in all but one Application.",
        kind: Kind::Bool,
        default: Some("true"),
    },
];

/// One parameter value as given, before interpretation.
#[derive(Clone, Debug, PartialEq)]
enum Given {
    String(String),
    Array(Vec<String>),
    Map,
}

/// Reads the options of a `generate` run from the plugin environment. Unknown parameters are
/// warnings; values of the wrong form are errors. `env` is the process environment (passed in,
/// so this stays a pure function).
pub fn options(env: &BTreeMap<String, String>) -> (Options, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut given: BTreeMap<&'static str, Given> = BTreeMap::new();

    // Env entries first, so that plugin parameters override them.
    for param in &PARAMS {
        if let Some(value) = env.get(&param.env_name()) {
            let value = match param.kind {
                Kind::Array => Given::Array(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|v| !v.is_empty())
                        .map(str::to_owned)
                        .collect(),
                ),
                _ => Given::String(value.clone()),
            };
            given.insert(param.name, value);
        }
    }
    match env.get("ARGOCD_APP_PARAMETERS").map(|s| s.trim()) {
        None | Some("" | "null") => {}
        Some(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Null) => {}
            Ok(Json::Array(entries)) => {
                for entry in entries {
                    read_parameter(&entry, &mut given, &mut diagnostics);
                }
            }
            _ => diagnostics.push(Diagnostic::error(
                "ARGOCD_APP_PARAMETERS is not a JSON list of parameters",
            )),
        },
    }

    let mut options = Options {
        namespace: env
            .get("ARGOCD_APP_NAMESPACE")
            .filter(|ns| !ns.is_empty())
            .cloned(),
        api_versions: env
            .get("KUBE_API_VERSIONS")
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        ..Options::default()
    };
    for param in &PARAMS {
        if let Some(value) = given.get(param.name)
            && let Err(problem) = apply(param, value, &mut options)
        {
            diagnostics.push(
                Diagnostic::error(format!("parameter `{}`: {problem}", param.name)).hint(format!(
                    "see the parameters of the rollouts-render plugin ({})",
                    param.title
                )),
            );
        }
    }
    (options, diagnostics)
}

fn read_parameter(
    entry: &Json,
    given: &mut BTreeMap<&'static str, Given>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(name) = entry.get("name").and_then(Json::as_str) else {
        diagnostics.push(Diagnostic::error(
            "ARGOCD_APP_PARAMETERS has an entry without a name",
        ));
        return;
    };
    let Some(param) = PARAMS.iter().find(|p| p.name == name) else {
        let mut warning = Diagnostic::warning(format!("unknown parameter `{name}` is ignored"));
        if let Some(suggestion) = closest(name, PARAMS.iter().map(|p| p.name)) {
            warning = warning.hint(format!("did you mean `{suggestion}`?"));
        }
        diagnostics.push(warning);
        return;
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
    given.insert(param.name, value);
}

fn apply(param: &Param, value: &Given, options: &mut Options) -> Result<(), String> {
    let text = match (param.kind, value) {
        (Kind::Array, Given::Array(items)) => {
            options.allowed_plugin_locations = items.clone();
            return Ok(());
        }
        (Kind::Array, Given::String(s)) => {
            options.allowed_plugin_locations = vec![s.clone()];
            return Ok(());
        }
        (_, Given::String(s)) => s.as_str(),
        (_, Given::Array(_)) => return Err("expects a single value, not a list".to_owned()),
        (_, Given::Map) => return Err("expects a single value, not a map".to_owned()),
    };
    let boolean = || match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("expects `true` or `false`, not `{text}`")),
    };
    let optional = || Some(text.to_owned()).filter(|s| !s.is_empty());
    match param.name {
        "namespace" => {
            if let Some(namespace) = optional() {
                options.namespace = Some(namespace);
            }
        }
        "strict" => options.strict = boolean()?,
        "require-sha256" => options.require_sha256 = boolean()?,
        "aggregate-roles" => options.aggregate_roles = boolean()?,
        "openshift-route-plugin" => {
            options.openshift_route_plugin = match text.to_ascii_lowercase().as_str() {
                "" | "false" => None,
                "true" => Some(tables::OPENSHIFT_PLUGIN_LOCATION.to_owned()),
                _ => Some(text.to_owned()),
            }
        }
        "rollouts-image" => {
            if text.contains(char::is_whitespace) {
                return Err(format!("`{text}` is not an image reference"));
            }
            options.rollouts_image = optional();
        }
        "image-pull-policy" => {
            if !text.is_empty() && !tables::IMAGE_PULL_POLICIES.contains(&text) {
                return Err(format!(
                    "`{text}` is not one of {}",
                    tables::IMAGE_PULL_POLICIES.join(", ")
                ));
            }
            options.image_pull_policy = optional();
        }
        other => return Err(format!("`{other}` is not handled")),
    }
    Ok(())
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

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
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
                Options {
                    namespace: Some("apps".into()),
                    ..Options::default()
                }
            );
        }
    }

    #[test]
    fn parameters_override_env_entries() {
        let (options, diagnostics) = options(&env(&[
            ("ARGOCD_ENV_STRICT", "false"),
            ("ARGOCD_ENV_REQUIRE_SHA256", "true"),
            ("ARGOCD_ENV_ALLOW_PLUGIN_LOCATION", "https://a/, file:///b/"),
            (
                "ARGOCD_APP_PARAMETERS",
                r#"[{"name":"strict","string":"true"},{"name":"image-pull-policy","string":"Always"},{"name":"aggregate-roles","string":"false"}]"#,
            ),
            ("KUBE_API_VERSIONS", "v1,monitoring.coreos.com/v1"),
        ]));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(options.strict && options.require_sha256 && !options.aggregate_roles);
        assert_eq!(
            options.allowed_plugin_locations,
            ["https://a/", "file:///b/"]
        );
        assert_eq!(options.image_pull_policy.as_deref(), Some("Always"));
        assert!(options.has_api_version("monitoring.coreos.com/v1"));
    }

    #[test]
    fn unknown_parameters_warn_and_bad_values_fail() {
        let (_, diagnostics) = options(&env(&[(
            "ARGOCD_APP_PARAMETERS",
            r#"[{"name":"strcit","string":"true"},{"name":"require-sha256","string":"yes"},{"name":"namespace","array":["a"]}]"#,
        )]));
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "warning: unknown parameter `strcit` is ignored\n  hint: did you mean `strict`?",
                "error: parameter `namespace`: expects a single value, not a list\n  hint: see the parameters of the rollouts-render plugin (Namespace)",
                "error: parameter `require-sha256`: expects `true` or `false`, not `yes`\n  hint: see the parameters of the rollouts-render plugin (Require sha256)",
            ]
        );
    }

    #[test]
    fn the_openshift_plugin_takes_true_or_a_location() {
        let location = |value: &str| {
            options(&env(&[("ARGOCD_ENV_OPENSHIFT_ROUTE_PLUGIN", value)]))
                .0
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
