//! Resolved options of one run: what the command line (or the Argo CD plugin environment)
//! asked for, already parsed and checked. The core reads options only from here.

/// How the output is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Yaml,
    Json,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Namespace for RolloutManagers without `metadata.namespace`.
    pub namespace: Option<String>,
    /// The operator's `ARGO_ROLLOUTS_IMAGE`: default controller image.
    pub rollouts_image: Option<String>,
    /// The operator's `IMAGE_PULL_POLICY`: default pull policy.
    pub image_pull_policy: Option<String>,
    /// Location of the OpenShift route plugin to add, if any.
    pub openshift_route_plugin: Option<String>,
    /// API versions of the target cluster (`group/version` or `group/version/Kind`).
    pub api_versions: Vec<String>,
    /// Write the three cluster-wide aggregate ClusterRoles.
    pub aggregate_roles: bool,
    /// Warnings are errors.
    pub strict: bool,
    /// http(s) plugins must carry a sha256.
    pub require_sha256: bool,
    /// When not empty, every plugin location must start with one of these.
    pub allowed_plugin_locations: Vec<String>,
    /// Input without any RolloutManager is not an error.
    pub allow_empty: bool,
    pub format: Format,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: None,
            rollouts_image: None,
            image_pull_policy: None,
            openshift_route_plugin: None,
            api_versions: Vec::new(),
            aggregate_roles: true,
            strict: false,
            require_sha256: false,
            allowed_plugin_locations: Vec::new(),
            allow_empty: false,
            format: Format::Yaml,
        }
    }
}

impl Options {
    /// Whether the cluster serves `group/version` (Argo CD lists both `group/version` and
    /// `group/version/Kind` entries in `KUBE_API_VERSIONS`).
    pub fn has_api_version(&self, group_version: &str) -> bool {
        self.api_versions.iter().any(|entry| {
            entry == group_version
                || entry
                    .strip_prefix(group_version)
                    .is_some_and(|kind| kind.starts_with('/'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_match_group_version_or_group_version_kind() {
        let options = Options {
            api_versions: vec![
                "apps/v1".into(),
                "monitoring.coreos.com/v1/ServiceMonitor".into(),
            ],
            ..Options::default()
        };
        assert!(options.has_api_version("monitoring.coreos.com/v1"));
        assert!(options.has_api_version("apps/v1"));
        assert!(!options.has_api_version("monitoring.coreos.com/v1alpha1"));
        assert!(!options.has_api_version("apps/v"));
    }
}
