//! Resolved options of one run: what the command line (or the Argo CD plugin environment, see
//! [`crate::cli::params`]) asked for, already parsed and checked by [`crate::cli`]. The stages
//! read options only from here, as typed values.

use std::fmt;

use crate::validate::{image, location, syntax};

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

/// How plugins given as an `image` reach the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageDelivery {
    /// A Kubernetes image volume (`volumes[].image`) mounted read-only in the controller.
    Volume,
    /// An init container from the plugin image copies the binary (`cp`) into an emptyDir.
    InitContainer,
}

impl ImageDelivery {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Volume => "volume",
            Self::InitContainer => "init-container",
        }
    }
}

/// `--plugin-image-delivery` as given: a mode, or `auto`, which decides by the cluster's
/// version ([`Options::image_delivery`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeliveryChoice {
    #[default]
    Auto,
    Given(ImageDelivery),
}

impl DeliveryChoice {
    pub const NAMES: [&'static str; 3] = [
        "auto",
        ImageDelivery::Volume.as_str(),
        ImageDelivery::InitContainer.as_str(),
    ];

    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            "volume" => Ok(Self::Given(ImageDelivery::Volume)),
            "init-container" => Ok(Self::Given(ImageDelivery::InitContainer)),
            _ => Err(format!(
                "not a plugin image delivery (use {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// A Kubernetes version as Argo CD passes it in `KUBE_VERSION`, read as Argo CD reads the
/// cluster's (apimachinery's `version.ParseGeneric`: `[v]MAJOR.MINOR[.…]` and any suffix, such
/// as `1.34`, `v1.34.2` or `1.30+`; `conformance/differential` compares it with Go).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeVersion {
    pub major: u64,
    pub minor: u64,
}

impl KubeVersion {
    /// The first release whose API server keeps image volumes without a feature gate
    /// (`ImageVolume`: alpha in 1.31, beta and off by default in 1.33 and 1.34, on from 1.35).
    pub const IMAGE_VOLUMES_ON: (u64, u64) = (1, 35);
    /// The first release whose API knows `volumes[].image` at all.
    pub const IMAGE_VOLUMES_KNOWN: (u64, u64) = (1, 31);

    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let invalid = || "not a Kubernetes version (write it like `1.34` or `v1.34.2`)".to_owned();
        // `^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`, Go's RE2: `\s` is ASCII white space, `.`
        // anything but a newline.
        let s = text.trim_start_matches(['\t', '\n', '\x0c', '\r', ' ']);
        let s = s.strip_prefix('v').unwrap_or(s);
        let bytes = s.as_bytes();
        let digits = |from: usize| {
            bytes[from..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count()
        };
        let mut end = digits(0);
        if end == 0 {
            return Err(invalid());
        }
        while bytes.get(end) == Some(&b'.') && digits(end + 1) > 0 {
            end += 1 + digits(end + 1);
        }
        if s[end..].contains('\n') {
            return Err(invalid());
        }
        let components: Vec<&str> = s[..end].split('.').collect();
        if components.len() < 2 || (components[0].starts_with('0') && components[0] != "0") {
            return Err(invalid());
        }
        let numbers: Option<Vec<u64>> = components.iter().map(|c| c.parse().ok()).collect();
        match numbers.as_deref() {
            Some([major, minor, ..]) => Ok(Self {
                major: *major,
                minor: *minor,
            }),
            _ => Err(invalid()),
        }
    }

    fn at_least(&self, (major, minor): (u64, u64)) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// Whether the API server keeps image volumes without a feature gate.
    pub fn has_image_volumes(&self) -> bool {
        self.at_least(Self::IMAGE_VOLUMES_ON)
    }

    /// Whether the API knows `volumes[].image` (behind the `ImageVolume` feature gate).
    pub fn knows_image_volumes(&self) -> bool {
        self.at_least(Self::IMAGE_VOLUMES_KNOWN)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A prefix every plugin location must start with (`--allow-plugin-location`), compared in
/// normalised form: scheme and host case, default ports, user information and dot segments
/// (also percent-encoded ones) cannot get a location past it. An `oci://` prefix is compared
/// with the references of image plugins instead, normalised as the kubelet normalises them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedLocation {
    /// As written, for messages.
    pub written: String,
    pub normalized: String,
}

/// The scheme of `--allow-plugin-location` prefixes for image references.
pub const OCI_PREFIX: &str = "oci://";

impl AllowedLocation {
    /// The error says what `text` is not (see [`PullPolicy::parse`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let oci = text
            .get(..OCI_PREFIX.len())
            .filter(|scheme| scheme.eq_ignore_ascii_case(OCI_PREFIX))
            .map(|_| &text[OCI_PREFIX.len()..]);
        let normalized = match oci {
            Some(rest) if !rest.is_empty() && !rest.contains(char::is_whitespace) => {
                Some(oci_form(rest))
            }
            Some(_) => None,
            None => location::normalized(text),
        };
        match normalized {
            Some(normalized) => Ok(Self {
                written: text.to_owned(),
                normalized,
            }),
            None => Err(
                "not a location prefix: write an https://, http:// or file:// URL, such as `https://github.com/argoproj-labs/`, or oci:// and an image repository prefix, such as `oci://ghcr.io/argoproj-labs/`"
                    .to_owned(),
            ),
        }
    }

    /// Whether `location` starts with this prefix, both normalised.
    pub fn allows(&self, location: &str) -> bool {
        location::normalized(location).is_some_and(|l| l.starts_with(&self.normalized))
    }

    /// Whether this is an `oci://` prefix, for image references.
    pub fn is_image_prefix(&self) -> bool {
        self.normalized.starts_with(OCI_PREFIX)
    }

    /// Whether the image reference starts with this prefix (an `oci://` one), both
    /// normalised: the registry in lower case, Docker Hub names in full
    /// (`docker.io/library/busybox`).
    pub fn allows_image(&self, reference: &image::Reference) -> bool {
        let mut full = reference.name();
        if let Some(tag) = &reference.tag {
            full = format!("{full}:{tag}");
        }
        if let Some(digest) = &reference.digest {
            full = format!("{full}@{digest}");
        }
        oci_form(&full).starts_with(&self.normalized)
    }
}

/// `oci://` and the reference, its registry (the first component) in lower case.
fn oci_form(reference: &str) -> String {
    let (registry, rest) = reference.split_at(reference.find('/').unwrap_or(reference.len()));
    format!("{OCI_PREFIX}{}{rest}", registry.to_ascii_lowercase())
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
    /// How image plugins reach the controller.
    pub plugin_image_delivery: DeliveryChoice,
    /// The target cluster's Kubernetes version, when known (Argo CD's `KUBE_VERSION`).
    pub kube_version: Option<KubeVersion>,
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
            plugin_image_delivery: DeliveryChoice::Auto,
            kube_version: None,
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

    /// How image plugins reach the controller: the mode given, or for `auto` image volumes
    /// unless the cluster is known to be older than 1.35 (every Kubernetes release still
    /// maintained upstream has them on by default; older clusters get the init container).
    pub fn image_delivery(&self) -> ImageDelivery {
        match (self.plugin_image_delivery, &self.kube_version) {
            (DeliveryChoice::Given(mode), _) => mode,
            (DeliveryChoice::Auto, Some(version)) if !version.has_image_volumes() => {
                ImageDelivery::InitContainer
            }
            (DeliveryChoice::Auto, _) => ImageDelivery::Volume,
        }
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
    fn kube_versions_read_as_argo_cd_reads_them() {
        let v = |s: &str| KubeVersion::parse(s).map(|v| (v.major, v.minor));
        assert_eq!(v("1.34"), Ok((1, 34)));
        assert_eq!(v("v1.35.1"), Ok((1, 35)));
        assert_eq!(v(" 1.30+"), Ok((1, 30)));
        assert_eq!(v("1.033"), Ok((1, 33)));
        for bad in [
            "",
            "1",
            "v",
            "01.34",
            "1.x",
            "1.34\n",
            "1.99999999999999999999",
        ] {
            assert!(KubeVersion::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn auto_delivery_follows_the_cluster_version() {
        let delivery = |choice: &str, version: Option<&str>| {
            Options {
                plugin_image_delivery: DeliveryChoice::parse(choice).unwrap(),
                kube_version: version.map(|v| KubeVersion::parse(v).unwrap()),
                ..Options::default()
            }
            .image_delivery()
        };
        assert_eq!(delivery("auto", None), ImageDelivery::Volume);
        assert_eq!(delivery("auto", Some("1.35")), ImageDelivery::Volume);
        assert_eq!(delivery("auto", Some("2.0")), ImageDelivery::Volume);
        assert_eq!(delivery("auto", Some("1.34")), ImageDelivery::InitContainer);
        assert_eq!(delivery("volume", Some("1.30")), ImageDelivery::Volume);
        assert_eq!(
            delivery("init-container", None),
            ImageDelivery::InitContainer
        );
    }

    #[test]
    fn oci_prefixes_allow_image_references_only() {
        let prefix = AllowedLocation::parse("OCI://GHCR.io/argoproj-labs/").unwrap();
        let allowed = |r: &str| prefix.allows_image(&image::parse(r).unwrap());
        assert!(allowed("ghcr.io/argoproj-labs/plugin:v1"));
        assert!(allowed("Ghcr.IO/argoproj-labs/plugin"));
        assert!(!allowed("ghcr.io/argoproj-labs-evil/plugin"));
        assert!(!prefix.allows("https://ghcr.io/argoproj-labs/plugin"));
        let hub = AllowedLocation::parse("oci://docker.io/library/").unwrap();
        assert!(hub.allows_image(&image::parse("busybox").unwrap()));
        let https = AllowedLocation::parse("https://ghcr.io/").unwrap();
        assert!(!https.allows_image(&image::parse("ghcr.io/x").unwrap()));
        for bad in ["oci://", "oci://a b"] {
            assert!(AllowedLocation::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn namespaces_are_dns_labels() {
        assert!(Namespace::parse("argo-rollouts").is_ok());
        for bad in ["", "Bad_NS!", "-a", &"a".repeat(64)] {
            assert!(Namespace::parse(bad).is_err(), "{bad}");
        }
    }
}
