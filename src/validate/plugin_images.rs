//! Plugins delivered in container images (`image` instead of `location`): the rules of the
//! image entry, and where the pod puts the binary.
//!
//! Each image plugin gets a pod volume, mounted read-only in the controller container at
//! `plugin-images/<volume>` under its working directory: the image itself (an image volume),
//! or an emptyDir that an init container from the image fills with `cp`. The ConfigMap entry
//! is then an ordinary `file:` location there, which the controller copies into `plugin-bin/`
//! at start-up like any other; nothing is downloaded.

use sha2::{Digest, Sha256};

use super::image;
use super::{Checker, Hint};
use crate::input::located::{Located, Site};
use crate::model;
use crate::options::{ImageDelivery, Options, PullPolicy};
use crate::render::tables;
use crate::spec::PluginImage;

/// The image entry of the plugin `name` (when the name was valid), resolved, and the
/// ConfigMap location of its binary. Every problem is reported; `None` on an error.
pub(super) fn check(
    checker: &mut Checker,
    options: &Options,
    name: Option<&str>,
    image: Located<model::PluginImage>,
) -> Option<(PluginImage, String)> {
    let site = image.site;
    let raw = image.inner;
    let reference = match raw.reference {
        Some(reference) if reference.is_empty() => {
            checker
                .error(
                    &reference.site,
                    "may not be empty: it is the image holding the plugin binary",
                )
                .with_hint(
                    "name the image, pinned by its digest: `registry/repository@sha256:<64 hex>`",
                );
            None
        }
        None => {
            checker
                .error(&site, "an image plugin needs a `reference`")
                .with_hint("name the image holding the plugin binary, pinned by its digest: `registry/repository@sha256:<64 hex>`");
            None
        }
        Some(reference) => check_reference(checker, options, reference),
    };
    let path = match raw.path {
        None => {
            checker
                .error(
                    &site,
                    "an image plugin needs the `path` of its binary in the image",
                )
                .with_hint(PATH_HINT);
            None
        }
        Some(path) => check_path(checker, path),
    };
    let pull_policy = match raw.pull_policy {
        None => None,
        Some(policy) => match PullPolicy::parse(&policy) {
            Ok(policy) => Some(policy),
            Err(problem) => {
                checker
                    .error(&policy.site, format!("`{}` is {problem}", policy.inner))
                    .with_hint("leave it out for Kubernetes' default: `IfNotPresent` for an image pinned by digest or tag, `Always` for `:latest`");
                return None;
            }
        },
    };
    let (reference, path, name) = (reference?, path?, name?);
    let volume = volume_name(name);
    let location = location(options.image_delivery(), &volume, &path);
    Some((
        PluginImage {
            reference,
            path,
            pull_policy,
            mount_path: format!("{}/{volume}", tables::PLUGIN_IMAGES_DIR),
            volume,
        },
        location,
    ))
}

const PATH_HINT: &str = "write the path from the image's root, e.g. `/bin/rollouts-plugin-trafficrouter-gatewayapi` (look it up with `crane export <image> - | tar -t`, or in the image's Dockerfile)";

fn check_reference(
    checker: &mut Checker,
    options: &Options,
    reference: Located<String>,
) -> Option<String> {
    let parsed = match image::parse(&reference) {
        Ok(parsed) => parsed,
        Err(problem) => {
            checker
                .error(
                    &reference.site,
                    format!("the kubelet refuses this image reference: {problem}"),
                )
                .with_hint("write `registry/repository@sha256:<64 hex>` (or `:tag`), repository in lower case");
            return None;
        }
    };
    let allowed = &options.allowed_plugin_locations;
    if !allowed.is_empty() && !allowed.iter().any(|prefix| prefix.allows_image(&parsed)) {
        checker
            .error(&reference.site, "this image is not allowed here")
            .with_hint(super::plugins::allowed_image_hint(options));
    }
    if parsed.digest.is_none() {
        let message = "no digest: the kubelet runs whatever the tag points to when the pod starts, and a moved tag does not roll the controller";
        let hint =
            "pin the image: `<repository>@sha256:<digest>` (`crane digest <image>` prints it)";
        if options.require_sha256 {
            checker
                .error(&reference.site, message)
                .with_hint(format!("{hint} (required by --require-sha256)"));
        } else {
            checker.warning(&reference.site, message).with_hint(hint);
        }
    }
    Some(reference.inner)
}

fn check_path(checker: &mut Checker, path: Located<String>) -> Option<String> {
    let problem = if path.is_empty() {
        Some("may not be empty: it is the path of the plugin binary in the image")
    } else if !path.starts_with('/') {
        Some("must be absolute: the path of the plugin binary from the image's root")
    } else if path.ends_with('/') {
        Some("names a directory; give the path of the plugin binary itself")
    } else if path.split('/').any(|segment| segment == "..") {
        Some("may not contain `..`: the binary must be inside the image")
    } else if path.chars().any(char::is_control) {
        Some("may not contain control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => {
            checker.error(&path.site, problem).with_hint(PATH_HINT);
            None
        }
        None => Some(path.inner),
    }
}

/// The volume (and init container) name of an image plugin: `plugin-`, the plugin name in
/// lower case with every other character a `-`, and the first 8 hex digits of the SHA-256 of
/// the exact name, so that names differing only in case or punctuation get different volumes.
/// A DNS-1123 label (at most 63 characters) that depends on the plugin's name alone, so adding
/// or removing another plugin renames nothing.
pub fn volume_name(plugin: &str) -> String {
    let hash: String = Sha256::digest(plugin.as_bytes())[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut slug = String::new();
    for c in plugin.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let room = 63 - tables::PLUGIN_IMAGE_VOLUME_PREFIX.len() - 1 - hash.len();
    slug.truncate(room);
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        format!("{}{hash}", tables::PLUGIN_IMAGE_VOLUME_PREFIX)
    } else {
        format!("{}{slug}-{hash}", tables::PLUGIN_IMAGE_VOLUME_PREFIX)
    }
}

/// The ConfigMap location of an image plugin's binary, relative to the controller's working
/// directory as every path the renderer mounts: in its image volume at `path`, or where its
/// init container copied it.
pub fn location(delivery: ImageDelivery, volume: &str, path: &str) -> String {
    let relative = tables::PLUGIN_IMAGES_DIR
        .strip_prefix(tables::CONTROLLER_WORKDIR)
        .and_then(|dir| dir.strip_prefix('/'))
        .expect("plugin images are mounted under the working directory");
    let file = match delivery {
        ImageDelivery::Volume => path.to_owned(),
        ImageDelivery::InitContainer => format!("/{}", tables::PLUGIN_IMAGE_FILE),
    };
    format!("file://{relative}/{volume}{}", percent_encode(&file))
}

/// Every byte but the unreserved ones and `/` as `%XX`, so that Go's `url.ParseRequestURI`
/// gives back the path exactly.
fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// What the cluster's version (when known) says of the delivery mode given, reported at the
/// first image plugin entry of the manager.
pub(super) fn check_delivery(checker: &mut Checker, options: &Options, first_image: &Site) {
    let (Some(version), crate::options::DeliveryChoice::Given(ImageDelivery::Volume)) =
        (&options.kube_version, options.plugin_image_delivery)
    else {
        return;
    };
    if !version.knows_image_volumes() {
        checker
            .error(
                first_image,
                format!("Kubernetes {version} has no image volumes (`volumes[].image` came in 1.31): the API server would drop the volume, and the controller would not find the plugin"),
            )
            .with_hint("deliver image plugins with `--plugin-image-delivery init-container` (or `auto`, which does for this version)");
    } else if !version.has_image_volumes() {
        checker
            .warning(
                first_image,
                format!("Kubernetes {version} keeps image volumes only with the `ImageVolume` feature gate on (off by default before 1.35): without it the API server drops the volume silently, and the controller fails on the missing plugin"),
            )
            .with_hint("check the API server's and kubelet's feature gates and that the container runtime supports image volumes, or use `--plugin-image-delivery init-container`");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::location::{Location, parse_location, resolve_file};
    use crate::validate::syntax;

    #[test]
    fn volume_names_are_stable_dns_labels() {
        assert_eq!(
            volume_name("argoproj-labs/gatewayAPI"),
            volume_name("argoproj-labs/gatewayAPI")
        );
        assert!(
            volume_name("argoproj-labs/gatewayAPI").starts_with("plugin-argoproj-labs-gatewayapi-")
        );
        assert_ne!(volume_name("a/B"), volume_name("a/b"));
        assert_ne!(volume_name("a/b_c"), volume_name("a/b.c"));
        let long = format!("{}/{}", "n".repeat(40), "x".repeat(80));
        for name in [
            "a/b",
            "-/_",
            "step/e2e-test",
            "x/--..__",
            long.as_str(),
            "A-/-.",
        ] {
            let volume = volume_name(name);
            assert_eq!(syntax::dns1123_label(&volume), None, "{name}: {volume}");
        }
        assert_eq!(volume_name(&long).len(), 63);
    }

    #[test]
    fn locations_resolve_into_the_mount() {
        for path in [
            "/bin/p",
            "/home/argo-rollouts/plugin",
            "/a b/%41/ü/?#x",
            "/x;y=z",
        ] {
            let location = location(ImageDelivery::Volume, "plugin-v-1", path);
            let Ok(Location::File { path: file }) = parse_location(&location) else {
                panic!("{location} does not parse");
            };
            assert_eq!(
                resolve_file(&file),
                format!("{}/plugin-v-1{path}", tables::PLUGIN_IMAGES_DIR),
                "{location}"
            );
        }
        assert_eq!(
            location(ImageDelivery::InitContainer, "plugin-v-1", "/bin/p"),
            "file://plugin-images/plugin-v-1/plugin"
        );
    }
}
