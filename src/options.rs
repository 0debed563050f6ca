//! Resolved options of one run: what the command line (or the Argo CD plugin environment, see
//! [`crate::cli::params`]) asked for, already parsed and checked by [`crate::cli`]. The stages
//! read options only from here, as typed values.

use std::fmt;

use crate::validate::{location, syntax};

/// How the output is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Yaml,
    Json,
}

/// A container image pull policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PullPolicy {
    Always,
    #[default]
    IfNotPresent,
    Never,
}

impl PullPolicy {
    pub const ALL: [PullPolicy; 3] = [Self::Always, Self::IfNotPresent, Self::Never];
    /// The names of [`Self::ALL`], as the API server spells them.
    pub const NAMES: [&'static str; 3] = [
        Self::Always.as_str(),
        Self::IfNotPresent.as_str(),
        Self::Never.as_str(),
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Always => "Always",
            Self::IfNotPresent => "IfNotPresent",
            Self::Never => "Never",
        }
    }

    /// The policies as a list for messages: `Always, IfNotPresent, Never`.
    pub fn choices() -> String {
        Self::NAMES.join(", ")
    }

    /// Reads a policy as the API server does (case-sensitively). The error says what `text` is
    /// not, for "`text` is …" and "invalid value 'text': …" messages.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|policy| policy.as_str() == text)
            .ok_or_else(|| format!("not an image pull policy (use {})", Self::choices()))
    }
}

impl fmt::Display for PullPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A namespace name the API server accepts (`ValidateNamespaceName`: a DNS-1123 label).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace(String);

impl Namespace {
    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        match syntax::dns1123_label(text) {
            None => Ok(Self(text.to_owned())),
            Some(problem) => Err(format!("not a valid namespace: it {problem}")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A container image reference given as an option (`--rollouts-image`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageReference(String);

impl ImageReference {
    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() || text.contains(char::is_whitespace) {
            return Err("not an image reference: it must be non-empty, without spaces".into());
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A prefix every plugin location must start with (`--allow-plugin-location`), compared in
/// normalised form: scheme and host case, default ports, user information and dot segments
/// (also percent-encoded ones) cannot get a location past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedLocation {
    /// As written, for messages.
    pub written: String,
    pub normalized: String,
}

impl AllowedLocation {
    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        match location::normalized(text) {
            Some(normalized) => Ok(Self {
                written: text.to_owned(),
                normalized,
            }),
            None => Err(
                "not a location prefix: write an https://, http:// or file:// URL, such as `https://github.com/argoproj-labs/`"
                    .to_owned(),
            ),
        }
    }

    /// Whether `location` starts with this prefix, both normalised.
    pub fn allows(&self, location: &str) -> bool {
        location::normalized(location).is_some_and(|l| l.starts_with(&self.normalized))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Namespace for RolloutManagers without `metadata.namespace`.
    pub namespace: Option<Namespace>,
    /// The operator's `ARGO_ROLLOUTS_IMAGE`: default controller image.
    pub rollouts_image: Option<ImageReference>,
    /// The operator's `IMAGE_PULL_POLICY`: default pull policy.
    pub image_pull_policy: Option<PullPolicy>,
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
    pub allowed_plugin_locations: Vec<AllowedLocation>,
    /// Input without any RolloutManager is not an error.
    pub allow_empty: bool,
    /// Record the warnings in an annotation of the output (see [`crate::render::warnings`]).
    pub warnings_annotation: bool,
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
            warnings_annotation: false,
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

    /// The pull policy for a manager that sets none.
    pub fn default_pull_policy(&self) -> PullPolicy {
        self.image_pull_policy.unwrap_or_default()
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

    #[test]
    fn pull_policies_are_read_case_sensitively() {
        assert_eq!(PullPolicy::parse("Always"), Ok(PullPolicy::Always));
        assert_eq!(
            PullPolicy::parse("always"),
            Err("not an image pull policy (use Always, IfNotPresent, Never)".into())
        );
        assert_eq!(PullPolicy::default(), PullPolicy::IfNotPresent);
    }

    #[test]
    fn namespaces_are_dns_labels() {
        assert!(Namespace::parse("argo-rollouts").is_ok());
        for bad in ["", "Bad_NS!", "-a", &"a".repeat(64)] {
            assert!(Namespace::parse(bad).is_err(), "{bad}");
        }
    }
}
