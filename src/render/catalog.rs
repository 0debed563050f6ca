//! Well-known plugins and the RBAC each needs, from their own installation docs.
//!
//! Plugins run inside the controller with its ServiceAccount, so a traffic router that edits
//! HTTPRoutes needs those permissions in the controller's role. rollouts-render never grants
//! them on its own: when a known plugin is configured without them, validation warns with the
//! exact `rules` to add.

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::render::tables::{CONTROLLER_RULES, Rule};
use crate::spec::PluginKind;

#[derive(Clone, Copy, Debug)]
pub struct KnownPlugin {
    pub name: &'static str,
    pub kind: PluginKind,
    /// Where its installation docs are.
    pub project: &'static str,
    /// What it needs beyond nothing; rules the controller already has count as granted.
    pub rules: &'static [Rule],
}

pub const KNOWN_PLUGINS: [KnownPlugin; 4] = [
    KnownPlugin {
        name: "argoproj-labs/gatewayAPI",
        kind: PluginKind::TrafficRouter,
        project: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi",
        rules: &[
            Rule {
                api_groups: &[""],
                resources: &["services"],
                verbs: &["get"],
            },
            Rule {
                api_groups: &["gateway.networking.k8s.io"],
                resources: &["httproutes", "grpcroutes", "tcproutes", "tlsroutes"],
                verbs: &["get", "list", "update", "patch"],
            },
        ],
    },
    KnownPlugin {
        name: "argoproj-labs/contour",
        kind: PluginKind::TrafficRouter,
        project: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-contour",
        rules: &[Rule {
            api_groups: &["projectcontour.io"],
            resources: &["httpproxies"],
            verbs: &["get", "list", "watch", "update"],
        }],
    },
    KnownPlugin {
        name: "argoproj-labs/sample-prometheus",
        kind: PluginKind::MetricProvider,
        project: "https://github.com/argoproj-labs/rollouts-plugin-metric-sample-prometheus",
        // It queries Prometheus over HTTP; it reads nothing from the Kubernetes API.
        rules: &[],
    },
    KnownPlugin {
        name: "argoproj-labs/openshift",
        kind: PluginKind::TrafficRouter,
        project: "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-openshift",
        // Routes are in the controller's own rules already.
        rules: &[],
    },
];

pub fn find(name: &str, kind: PluginKind) -> Option<&'static KnownPlugin> {
    KNOWN_PLUGINS
        .iter()
        .find(|plugin| plugin.name == name && plugin.kind == kind)
}

/// One permission: an API group, a resource and a verb.
type Permission<'a> = (&'a str, &'a str, &'a str);

fn permissions(rule: &Rule) -> impl Iterator<Item = Permission<'static>> {
    let (groups, resources, verbs) = (rule.api_groups, rule.resources, rule.verbs);
    groups.iter().flat_map(move |g| {
        resources
            .iter()
            .flat_map(move |r| verbs.iter().map(move |v| (*g, *r, *v)))
    })
}

/// Whether lists of groups, resources and verbs grant a permission (`*` matches anything).
fn grants<'a, L: IntoIterator<Item = &'a str> + Clone>(
    groups: L,
    resources: L,
    verbs: L,
    (group, resource, verb): Permission<'_>,
) -> bool {
    let has = |list: L, wanted: &str| list.into_iter().any(|item| item == "*" || item == wanted);
    has(groups, group) && has(resources, resource) && has(verbs, verb)
}

fn strings(list: Option<&[String]>) -> impl Iterator<Item = &str> + Clone {
    list.into_iter().flatten().map(String::as_str)
}

/// Whether the controller's role (its upstream rules plus `extra`) grants a permission.
fn granted(extra: &[&PolicyRule], permission: Permission<'_>) -> bool {
    let upstream = CONTROLLER_RULES.iter().any(|rule| {
        grants(
            rule.api_groups.iter().copied(),
            rule.resources.iter().copied(),
            rule.verbs.iter().copied(),
            permission,
        )
    });
    upstream
        || extra.iter().any(|rule| {
            grants(
                strings(rule.api_groups.as_deref()),
                strings(rule.resources.as_deref()),
                strings(Some(&rule.verbs)),
                permission,
            )
        })
}

/// The needed rules of `plugin` that the controller's role (its upstream rules plus `extra`)
/// does not fully grant.
pub fn missing_rules(plugin: &KnownPlugin, extra: &[&PolicyRule]) -> Vec<Rule> {
    plugin
        .rules
        .iter()
        .filter(|rule| permissions(rule).any(|needed| !granted(extra, needed)))
        .copied()
        .collect()
}

/// Rules as YAML a user can paste under the plugin entry.
pub fn rules_yaml(rules: &[Rule], indent: &str) -> String {
    let list = |items: &[&str]| {
        let quoted: Vec<String> = items
            .iter()
            .map(|item| {
                if item.is_empty() {
                    "\"\"".to_owned()
                } else {
                    (*item).to_owned()
                }
            })
            .collect();
        format!("[{}]", quoted.join(", "))
    };
    let mut text = format!("{indent}rules:");
    for rule in rules {
        text.push_str(&format!(
            "\n{indent}- apiGroups: {}\n{indent}  resources: {}\n{indent}  verbs: {}",
            list(rule.api_groups),
            list(rule.resources),
            list(rule.verbs)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_rules_already_cover_services_get_but_not_routes() {
        let gateway = find("argoproj-labs/gatewayAPI", PluginKind::TrafficRouter).unwrap();
        let missing = missing_rules(gateway, &[]);
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].api_groups, ["gateway.networking.k8s.io"]);
        let given: Vec<PolicyRule> = gateway
            .rules
            .iter()
            .copied()
            .map(Rule::to_policy_rule)
            .collect();
        assert!(missing_rules(gateway, &given.iter().collect::<Vec<_>>()).is_empty());
    }

    #[test]
    fn wildcards_grant_everything_they_match() {
        let contour = find("argoproj-labs/contour", PluginKind::TrafficRouter).unwrap();
        let star = Rule {
            api_groups: &["projectcontour.io"],
            resources: &["*"],
            verbs: &["*"],
        }
        .to_policy_rule();
        assert!(missing_rules(contour, &[&star]).is_empty());
        assert_eq!(missing_rules(contour, &[]).len(), 1);
    }

    #[test]
    fn known_plugins_without_needs_never_warn() {
        for plugin in KNOWN_PLUGINS.iter().filter(|p| p.rules.is_empty()) {
            assert!(missing_rules(plugin, &[]).is_empty());
        }
    }

    #[test]
    fn rules_print_as_pasteable_yaml() {
        let contour = find("argoproj-labs/contour", PluginKind::TrafficRouter).unwrap();
        assert_eq!(
            rules_yaml(contour.rules, "  "),
            "  rules:\n  - apiGroups: [projectcontour.io]\n    resources: [httpproxies]\n    verbs: [get, list, watch, update]"
        );
    }
}
