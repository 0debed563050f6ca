//! The command line: raw flags as clap parses them, and their resolution into [`Options`].

use std::path::PathBuf;

pub mod params;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::input::source::{DEFAULT_MAX_INPUT_BYTES, ReadOptions};
use crate::options::{Format, Options};
use crate::render::tables;

/// Render Argo Rollouts RolloutManager resources into plain Kubernetes manifests.
#[derive(Debug, Parser)]
#[command(name = "rollouts-render", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render every RolloutManager of the input; other objects pass through in place.
    Render(RenderArgs),
    /// Run every check of `render`, write nothing to stdout.
    Validate(RenderArgs),
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
    /// Read an argo-rollouts-config ConfigMap (alone or in a whole install) and print a
    /// RolloutManager whose plugins reproduce it.
    Import(ImportArgs),
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
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files or directories to read; none, or `-`, reads standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Name of the RolloutManager to write.
    #[arg(long, value_name = "NAME", default_value = "argo-rollouts")]
    pub name: String,

    /// Read directories recursively.
    #[arg(short, long)]
    pub recursive: bool,
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The application directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub path: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutputFormat {
    Yaml,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PullPolicy {
    #[value(name = "Always")]
    Always,
    #[value(name = "IfNotPresent")]
    IfNotPresent,
    #[value(name = "Never")]
    Never,
}

impl PullPolicy {
    fn as_str(self) -> &'static str {
        match self {
            Self::Always => "Always",
            Self::IfNotPresent => "IfNotPresent",
            Self::Never => "Never",
        }
    }
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Files or directories to read; none, or `-`, reads standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Output format: a YAML stream, or a stream of pretty JSON objects.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Yaml)]
    pub output: OutputFormat,

    /// Namespace for RolloutManagers without `metadata.namespace`.
    #[arg(short, long, value_name = "NS")]
    pub namespace: Option<String>,

    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,

    /// Require a sha256 on every http(s) plugin.
    #[arg(long)]
    pub require_sha256: bool,

    /// Every plugin location must start with one of these prefixes (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub allow_plugin_location: Vec<String>,

    /// Controller image when the spec sets none (the operator's ARGO_ROLLOUTS_IMAGE).
    #[arg(long, value_name = "IMAGE")]
    pub rollouts_image: Option<String>,

    /// Image pull policy when the spec sets none (the operator's IMAGE_PULL_POLICY).
    #[arg(long, value_enum, value_name = "POLICY")]
    pub image_pull_policy: Option<PullPolicy>,

    /// Add the OpenShift route traffic plugin, as the operator always does.
    #[arg(
        long,
        value_name = "LOCATION",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = tables::OPENSHIFT_PLUGIN_LOCATION
    )]
    pub openshift_route_plugin: Option<String>,

    /// API versions of the target cluster, comma-separated (like Argo CD's KUBE_API_VERSIONS).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub api_versions: Vec<String>,

    /// Leave out the three cluster-wide aggregate ClusterRoles.
    #[arg(long)]
    pub no_aggregate_roles: bool,

    /// Succeed even when the input holds no RolloutManager.
    #[arg(long)]
    pub allow_empty: bool,

    /// Read directories recursively.
    #[arg(short, long)]
    pub recursive: bool,

    /// Refuse input larger than this many bytes in total.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_INPUT_BYTES)]
    pub max_input_bytes: u64,
}

impl RenderArgs {
    /// Checks what clap cannot and builds the options of the run.
    pub fn options(&self) -> Result<Options, String> {
        if let Some(image) = &self.rollouts_image
            && (image.is_empty() || image.contains(char::is_whitespace))
        {
            return Err(format!(
                "--rollouts-image: `{image}` is not an image reference"
            ));
        }
        Ok(Options {
            namespace: self.namespace.clone(),
            rollouts_image: self.rollouts_image.clone(),
            image_pull_policy: self.image_pull_policy.map(|p| p.as_str().to_owned()),
            openshift_route_plugin: self.openshift_route_plugin.clone(),
            api_versions: self
                .api_versions
                .iter()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect(),
            aggregate_roles: !self.no_aggregate_roles,
            strict: self.strict,
            require_sha256: self.require_sha256,
            allowed_plugin_locations: self.allow_plugin_location.clone(),
            allow_empty: self.allow_empty,
            format: match self.output {
                OutputFormat::Yaml => Format::Yaml,
                OutputFormat::Json => Format::Json,
            },
        })
    }

    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            recursive: self.recursive,
            max_bytes: self.max_input_bytes,
        }
    }
}
