//! The command line, and the one place where text becomes [`Options`].
//!
//! [`OptionArgs`] declares every option of a run with the parser of its value, so a bad value is
//! refused by clap before anything is read. The Argo CD plugin's parameters and env entries do
//! not have a parser of their own: [`params`] turns them into arguments for this same
//! [`OptionArgs`] (as ripgrep turns its config file into arguments), so an option means the
//! same, and is checked the same, wherever it comes from.

pub mod params;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use crate::input::source::{DEFAULT_MAX_INPUT_BYTES, ReadOptions};
use crate::options::{
    AllowedLocation, DeliveryChoice, Format, ImageReference, KubeVersion, Namespace, Options,
    PullPolicy,
};
use crate::render::tables;
use crate::validate::location;

/// Render Argo Rollouts RolloutManager resources into plain Kubernetes manifests.
#[derive(Debug, Parser)]
#[command(name = "rollouts-render", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The name under which the binary runs as `rollouts-render fn`: kustomize before v5.7 runs an
/// exec function by its path alone, without arguments, so a link by this name stands for
/// `rollouts-render fn`.
pub const FN_PROGRAM_NAME: &str = "rollouts-render-fn";

/// The command line as the parser should see it: run as [`FN_PROGRAM_NAME`], the program is
/// `rollouts-render fn` with the same arguments.
pub fn arguments(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    let is_fn = args
        .first()
        .and_then(|program| Path::new(program).file_stem())
        .is_some_and(|stem| stem == FN_PROGRAM_NAME);
    if is_fn {
        args.insert(1, OsString::from("fn"));
    }
    args
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render every RolloutManager of the input; other objects pass through in place.
    Render(RenderArgs),
    /// Run every check of `render`, write nothing to stdout.
    Validate(ValidateArgs),
    /// Argo CD config management plugin: render the application directory. Options come from
    /// ARGOCD_APP_PARAMETERS and ARGOCD_ENV_*, the namespace from ARGOCD_APP_NAMESPACE and the
    /// cluster's API versions from KUBE_API_VERSIONS; standard input is never read.
    Generate(DirArgs),
    /// Argo CD plugin discovery: print the files of the directory that hold a RolloutManager.
    Discover(DirArgs),
    /// Print the JSON Schema of the RolloutManager, for editors (yaml-language-server).
    Schema,
    /// Print a CustomResourceDefinition of the extended RolloutManager.
    Crd,
    /// Read an argo-rollouts-config ConfigMap (alone or in a whole install), or the argo-helm
    /// chart's values (`--helm-values`), and print a RolloutManager whose plugins reproduce it.
    Import(ImportArgs),
    /// KRM function (kustomize, kpt): read a ResourceList on stdin, replace each RolloutManager
    /// of its items by the objects `render` makes of it, write the ResourceList to stdout.
    /// Options come from the functionConfig: a ConfigMap whose data are the plugin parameters
    /// (`namespace`, `strict`, ...), or a RolloutManager (kustomize's generator form).
    #[command(name = "fn")]
    Fn(FnArgs),
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    #[command(hide = true)]
    Man,
    /// Print the ConfigManagementPlugin (plugin.yaml) that announces this plugin to Argo CD.
    #[command(hide = true)]
    PluginYaml,
    /// For conformance/differential only: the answers of the rules ported from Go.
    #[command(name = "__verdicts", hide = true)]
    Verdicts(VerdictArgs),
}

#[derive(Debug, Args)]
pub struct VerdictArgs {
    /// Judge a generated corpus instead of the queries on stdin.
    #[arg(long)]
    pub generate: bool,
    /// Seed of the generated corpus.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Inputs per rule in the generated corpus.
    #[arg(long, default_value_t = 3000)]
    pub per_rule: usize,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files or directories to read; none, or `-`, reads standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Read the values file of the argo-helm `argo-rollouts` chart (`-` for standard input)
    /// instead of a ConfigMap, and say what was carried, what was not, and what changes.
    #[arg(long, value_name = "PATH", conflicts_with = "paths")]
    pub helm_values: Option<PathBuf>,

    /// Name of the RolloutManager to write.
    #[arg(long, value_name = "NAME", default_value = "argo-rollouts")]
    pub name: String,

    /// Read directories recursively.
    #[arg(short, long)]
    pub recursive: bool,
}

impl ImportArgs {
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            recursive: self.recursive,
            ..ReadOptions::default()
        }
    }
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub render: RenderArgs,

    /// Judge each file that holds a RolloutManager on its own and skip every other file (what
    /// the pre-commit hook runs: pre-commit passes every staged YAML file).
    #[arg(long)]
    pub manager_files: bool,
}

#[derive(Debug, Args)]
pub struct FnArgs {
    /// Refuse a ResourceList larger than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    pub max_input_bytes: u64,
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The application directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub path: PathBuf,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Files or directories to read; none, or `-`, reads standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub options: OptionArgs,

    /// Read directories recursively.
    #[arg(short, long)]
    pub recursive: bool,

    /// Refuse input larger than this many bytes in total.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    pub max_input_bytes: u64,
}

impl RenderArgs {
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            recursive: self.recursive,
            max_bytes: self.max_input_bytes,
            fixed_limit: false,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutputFormat {
    Yaml,
    Json,
}

/// `--openshift-route-plugin`: off, or the location to add the plugin from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenShiftPlugin {
    Off,
    At(String),
}

/// The options of a run. Plugin parameters are parsed by this same struct (see [`params`]).
#[derive(Debug, Args)]
pub struct OptionArgs {
    /// Output format: a YAML stream, or a stream of pretty JSON objects.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Yaml)]
    pub output: OutputFormat,

    /// Namespace for RolloutManagers without `metadata.namespace`.
    #[arg(short, long, value_name = "NS", value_parser = namespace)]
    pub namespace: Option<Namespace>,

    /// Treat warnings as errors.
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = boolean
    )]
    pub strict: bool,

    /// Every plugin must be pinned: an http(s) plugin by its sha256, an image plugin by its
    /// digest.
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = boolean
    )]
    pub require_sha256: bool,

    /// Every plugin location must start with one of these prefixes (repeatable). Both are
    /// compared normalised: scheme and host case, default ports, user information, and dot
    /// segments, also percent-encoded, resolved. `oci://REGISTRY/REPOSITORY` prefixes allow
    /// image plugins.
    #[arg(long, value_name = "PREFIX", value_parser = allowed_location)]
    pub allow_plugin_location: Vec<AllowedLocation>,

    /// Controller image when the spec sets none (the operator's ARGO_ROLLOUTS_IMAGE).
    #[arg(long, value_name = "IMAGE", value_parser = image)]
    pub rollouts_image: Option<ImageReference>,

    /// Image pull policy when the spec sets none (the operator's IMAGE_PULL_POLICY): Always,
    /// IfNotPresent or Never.
    #[arg(long, value_name = "POLICY", value_parser = pull_policy)]
    pub image_pull_policy: Option<PullPolicy>,

    /// Add the OpenShift route traffic plugin, as the operator always does (`false`: leave it
    /// out; a location: take the plugin from there).
    #[arg(
        long,
        value_name = "LOCATION",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = openshift_plugin
    )]
    pub openshift_route_plugin: Option<OpenShiftPlugin>,

    /// How plugins given as an `image` reach the controller: `volume` (an image volume;
    /// Kubernetes 1.35+, or 1.33+ with the ImageVolume feature gate), `init-container` (an init
    /// container runs `cp` in the plugin image), or `auto`: `volume`, unless --kube-version is
    /// older than 1.35.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = delivery)]
    pub plugin_image_delivery: DeliveryChoice,

    /// Kubernetes version of the target cluster, like Argo CD's KUBE_VERSION (`1.34`,
    /// `v1.34.2`); decides `--plugin-image-delivery auto`.
    #[arg(long, value_name = "VERSION", value_parser = kube_version)]
    pub kube_version: Option<KubeVersion>,

    /// API versions of the target cluster, comma-separated (like Argo CD's KUBE_API_VERSIONS).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub api_versions: Vec<String>,

    /// Render the three cluster-wide aggregate ClusterRoles (default true).
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = boolean,
        overrides_with = "no_aggregate_roles"
    )]
    pub aggregate_roles: bool,

    /// Leave out the three cluster-wide aggregate ClusterRoles (`--aggregate-roles=false`).
    #[arg(long, overrides_with = "aggregate_roles")]
    pub no_aggregate_roles: bool,

    /// Succeed even when the input holds no RolloutManager.
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = boolean
    )]
    pub allow_empty: bool,

    /// Record the warnings in the `rollouts-render/warnings` annotation of the (first)
    /// argo-rollouts-config ConfigMap: for Argo CD, which shows stderr only on failure (the
    /// plugin's default is true).
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = boolean
    )]
    pub warnings_annotation: bool,
}

impl OptionArgs {
    /// The options of the run: every value was checked by its parser already.
    pub fn options(&self) -> Options {
        Options {
            namespace: self.namespace.clone(),
            rollouts_image: self.rollouts_image.clone(),
            image_pull_policy: self.image_pull_policy,
            openshift_route_plugin: match &self.openshift_route_plugin {
                Some(OpenShiftPlugin::At(location)) => Some(location.clone()),
                Some(OpenShiftPlugin::Off) | None => None,
            },
            api_versions: self
                .api_versions
                .iter()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect(),
            aggregate_roles: self.aggregate_roles && !self.no_aggregate_roles,
            strict: self.strict,
            require_sha256: self.require_sha256,
            allowed_plugin_locations: self.allow_plugin_location.clone(),
            allow_empty: self.allow_empty,
            warnings_annotation: self.warnings_annotation,
            plugin_image_delivery: self.plugin_image_delivery,
            kube_version: self.kube_version.clone(),
            format: match self.output {
                OutputFormat::Yaml => Format::Yaml,
                OutputFormat::Json => Format::Json,
            },
        }
    }
}

// Value parsers. Their errors complete "invalid value 'X' for '--flag': …".

fn namespace(text: &str) -> Result<Namespace, String> {
    Namespace::parse(text)
}

fn image(text: &str) -> Result<ImageReference, String> {
    ImageReference::parse(text)
}

fn pull_policy(text: &str) -> Result<PullPolicy, String> {
    PullPolicy::parse(text)
}

fn delivery(text: &str) -> Result<DeliveryChoice, String> {
    DeliveryChoice::parse(text)
}

fn kube_version(text: &str) -> Result<KubeVersion, String> {
    KubeVersion::parse(text)
}

fn boolean(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err("expects `true` or `false`".to_owned()),
    }
}

fn allowed_location(text: &str) -> Result<AllowedLocation, String> {
    AllowedLocation::parse(text)
}

/// `true`, `false`, or a location the controller can read (the rules that depend on the
/// plugin's name and on other options follow in validation).
fn openshift_plugin(text: &str) -> Result<OpenShiftPlugin, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(OpenShiftPlugin::At(
            tables::OPENSHIFT_PLUGIN_LOCATION.to_owned(),
        )),
        "false" => Ok(OpenShiftPlugin::Off),
        "yes" | "no" | "on" | "off" | "y" | "n" | "1" | "0" => Err(
            "not a location, and the only booleans are `true` (the operator's release) and `false` (no plugin)"
                .to_owned(),
        ),
        _ if text.chars().any(char::is_whitespace) => {
            Err("not a location: a location may not contain spaces".to_owned())
        }
        _ => match location::parse_location(text) {
            Ok(_) => Ok(OpenShiftPlugin::At(text.to_owned())),
            Err((problem, _)) => Err(format!(
                "not a location the controller can read: {problem}; or write `true` or `false`"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        let argv = ["rollouts-render", "render"].iter().chain(args);
        match Cli::try_parse_from(argv)
            .map_err(|e| e.to_string())?
            .command
        {
            Command::Render(args) => Ok(args.options.options()),
            _ => unreachable!("render was parsed"),
        }
    }

    #[test]
    fn booleans_take_an_optional_value() {
        assert!(parse(&["--strict"]).unwrap().strict);
        assert!(!parse(&["--strict=false"]).unwrap().strict);
        assert!(!parse(&[]).unwrap().strict);
        assert!(parse(&["--strict", "rm.yaml"]).unwrap().strict);
        assert!(parse(&["--strict=maybe"]).is_err());
    }

    #[test]
    fn the_last_word_on_aggregate_roles_wins() {
        assert!(parse(&[]).unwrap().aggregate_roles);
        assert!(!parse(&["--no-aggregate-roles"]).unwrap().aggregate_roles);
        assert!(!parse(&["--aggregate-roles=false"]).unwrap().aggregate_roles);
        assert!(
            parse(&["--no-aggregate-roles", "--aggregate-roles"])
                .unwrap()
                .aggregate_roles
        );
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        let error = parse(&["-n", "Bad_NS!"]).unwrap_err();
        assert!(
            error.starts_with("error: invalid value 'Bad_NS!' for '--namespace <NS>': not a valid namespace: it must consist of lower case letters"),
            "{error}"
        );
        assert!(
            parse(&["-n", ""])
                .unwrap_err()
                .contains("not a valid namespace: it must not be empty")
        );
        assert!(parse(&["--rollouts-image", ""]).is_err());
        assert!(parse(&["--image-pull-policy", "Sometimes"]).is_err());
    }

    #[test]
    fn the_openshift_plugin_takes_true_false_or_a_location() {
        let location = |arg: &str| parse(&[arg]).unwrap().openshift_route_plugin;
        assert_eq!(
            location("--openshift-route-plugin").as_deref(),
            Some(tables::OPENSHIFT_PLUGIN_LOCATION)
        );
        assert_eq!(location("--openshift-route-plugin=false"), None);
        assert_eq!(
            location("--openshift-route-plugin=https://x/p").as_deref(),
            Some("https://x/p")
        );
        for refused in ["no", "off", "ftp://x", "plugin-bin/x", "https://h x/p"] {
            assert!(
                parse(&[&format!("--openshift-route-plugin={refused}")]).is_err(),
                "{refused}"
            );
        }
    }
}
