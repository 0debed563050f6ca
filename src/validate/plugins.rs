//! Plugin rules: everything the Argo Rollouts controller would fail on at start-up (and
//! crash-loop), caught while rendering, plus what it would silently get wrong.
//!
//! The controller (utils/plugin/downloader.go) parses each location (see [`super::location`]),
//! downloads `http`/`https` or copies `file` locations, installs the binary at
//! `plugin-bin/<name>`, and compares a non-empty `sha256` case-sensitively with the SHA-256 of
//! what it downloaded.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::location::{Location, parse_location, resolve_file};
use super::{Checker, Hint, plugin_images};
use crate::input::located::{Located, Site};
use crate::model;
use crate::options::Options;
use crate::render::{catalog, tables};
use crate::spec::{Plugin, PluginKind, Plugins};

/// Validates and resolves the three plugin lists, sorted by name, with the OpenShift route
/// plugin added when asked for.
pub fn plugins(
    checker: &mut Checker,
    raw: model::Plugins,
    options: &Options,
    namespace_scoped: bool,
) -> Plugins {
    let mut resolved = Plugins::default();
    // Where each plugin name was written, and the entry it names.
    let mut seen: BTreeMap<String, (Site, Site)> = BTreeMap::new();
    let mut first_image: Option<Site> = None;
    let lists = [
        (PluginKind::TrafficRouter, raw.traffic_management),
        (PluginKind::MetricProvider, raw.metric),
        (PluginKind::Step, raw.step),
    ];
    for (kind, list) in lists {
        for entry in list.unwrap_or_default() {
            let context = Context {
                kind,
                options,
                namespace_scoped,
            };
            let entry_site = entry.site.clone();
            if first_image.is_none()
                && let Some(image) = &entry.image
            {
                first_image = Some(image.site.clone());
            }
            let Some((plugin, name_site)) = self::plugin(checker, &context, entry) else {
                continue;
            };
            if let Some((first, _)) = seen.get(&plugin.name) {
                let message = format!(
                    "the plugin `{}` is already configured at {}",
                    plugin.name, first.path
                );
                checker
                    .error(&name_site, message)
                    .with_hint("the controller installs every plugin at `plugin-bin/<name>`, so two entries with one name overwrite each other; remove one");
                continue;
            }
            seen.insert(plugin.name.clone(), (name_site, entry_site));
            resolved.list_mut(kind).push(plugin);
        }
    }
    // A traffic entry of this name is refused (reserved), so the added one is the only one.
    if let Some(location) = &options.openshift_route_plugin {
        // The option's parser judged the location itself; what depends on the plugin's name
        // and on the other options is judged here, like any plugin's.
        let option = "the location of --openshift-route-plugin";
        if let Ok(Location::File { path }) = parse_location(location)
            && let Some(problem) = file_target_problem(tables::OPENSHIFT_PLUGIN_NAME, &path)
        {
            checker.unlocated_error(format!("{option}: this file location {problem}"));
        }
        if !allowed_location(options, location) {
            checker
                .unlocated_error(format!("{option} is not allowed here"))
                .with_hint(allowed_hint(options));
        }
        resolved.traffic_router.push(Plugin {
            name: tables::OPENSHIFT_PLUGIN_NAME.to_owned(),
            location: location.clone(),
            sha256: String::new(),
            args: Vec::new(),
            disabled: false,
            headers_from: Vec::new(),
            rules: Vec::new(),
            image: None,
        });
    }
    for kind in PluginKind::ALL {
        resolved
            .list_mut(kind)
            .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    }
    check_known_plugins(checker, &resolved, &seen);
    if let Some(site) = first_image {
        plugin_images::check_delivery(checker, options, &site);
    }
    resolved
}

/// Warns when a well-known plugin lacks the permissions it needs in the controller's role
/// (the upstream rules plus every plugin's `rules`), with the rules to add.
fn check_known_plugins(
    checker: &mut Checker,
    plugins: &Plugins,
    sites: &BTreeMap<String, (Site, Site)>,
) {
    let extra: Vec<&PolicyRule> = plugins
        .all()
        .flat_map(|(_, plugin)| plugin.rules.iter())
        .collect();
    for (kind, plugin) in plugins.all() {
        let Some(known) = catalog::find(&plugin.name, kind) else {
            continue;
        };
        let missing = catalog::missing_rules(known, &extra);
        if missing.is_empty() {
            continue;
        }
        let Some((name, entry)) = sites.get(&plugin.name) else {
            continue;
        };
        checker
            .warning(
                name,
                format!(
                    "`{}` needs permissions the controller's role does not have: plugins run inside the controller, with its ServiceAccount",
                    plugin.name
                ),
            )
            .with_hint(format!(
                "add them to this plugin entry ({}), as its docs say ({}):\n{}",
                entry.path,
                known.project,
                catalog::rules_yaml(&missing, "      ")
            ));
    }
}

struct Context<'a> {
    kind: PluginKind,
    options: &'a Options,
    namespace_scoped: bool,
}

/// One plugin entry, resolved, and the site of its name.
fn plugin(
    checker: &mut Checker,
    cx: &Context<'_>,
    entry: Located<model::Plugin>,
) -> Option<(Plugin, Site)> {
    let site = entry.site;
    let raw = entry.inner;
    let name = match raw.name.filter(|name| !name.is_empty()) {
        None => {
            checker
                .error(&site, "a plugin needs a `name`")
                .with_hint("name it `<namespace>/<name>`, e.g. `argoproj-labs/gatewayAPI`");
            None
        }
        Some(name) => check_name(checker, cx, name),
    };
    // `location: ""` counts as written (as for the schema's "exactly one"), but not as a
    // location.
    let image_entry = raw.image.is_some() && raw.location.is_none();
    let (location, image) = match (raw.location, raw.image) {
        (Some(_), Some(image)) => {
            checker
                .error(&image.site, "a plugin has a `location` or an `image`, not both")
                .with_hint("remove `location`: the image delivers the binary, and the renderer writes its location");
            (None, None)
        }
        (location, None) => match location.filter(|location| !location.is_empty()) {
            None => {
                checker
                    .error(&site, "a plugin needs a `location` or an `image`")
                    .with_hint("give the `https://` or `file://` URL of the plugin binary, or the container `image` holding it");
                (None, None)
            }
            location => (location, None),
        },
        (None, image) => (None, image),
    };
    let parsed = location.as_ref().and_then(|location| {
        check_location(checker, cx, name.as_ref().map(|n| n.as_str()), location)
    });
    let image = image.and_then(|image| {
        plugin_images::check(
            checker,
            cx.options,
            name.as_ref().map(|n| n.as_str()),
            image,
        )
    });
    if image_entry {
        check_image_extras(checker, &raw.sha256, &raw.headers_from);
    } else {
        check_sha256(checker, cx, &site, raw.sha256.as_ref(), parsed.as_ref());
    }

    let disabled = raw.disabled.as_ref().is_some_and(|d| d.inner);
    if let Some(flag) = &raw.disabled
        && cx.kind != PluginKind::Step
    {
        checker
            .error(
                &flag.site,
                format!(
                    "`disabled` applies to step plugins only; the controller ignores it on a {}",
                    cx.kind.noun()
                ),
            )
            .with_hint("remove `disabled`, or remove the plugin entry to turn it off");
    }

    let headers_from: Vec<String> = raw
        .headers_from
        .iter()
        .flat_map(|headers| headers.iter())
        .filter_map(|header| {
            let name = header
                .secret_ref
                .as_ref()
                .and_then(|r| r.name.as_ref())
                .filter(|n| !n.is_empty());
            if name.is_none() {
                checker
                    .error(&header.site, "`headersFrom` entries need `secretRef.name`")
                    .with_hint("name the Secret (in the controller's namespace) whose entries become HTTP headers");
            }
            name.map(|name| name.inner.clone())
        })
        .collect();
    if let (Some(headers), Some(Location::File { .. })) = (&raw.headers_from, &parsed)
        && !headers_from.is_empty()
    {
        checker
            .warning(
                &headers.site,
                "`headersFrom` is only used to download http(s) locations; this one is a file",
            )
            .with_hint("remove `headersFrom`");
    }

    let rules = raw.rules.unwrap_or_default();
    for rule in &rules {
        check_rule(checker, cx, rule);
    }

    let name = name?;
    let (location, image) = match image {
        Some((image, location)) => (location, Some(image)),
        None => (location?.inner, None),
    };
    Some((
        Plugin {
            name: name.inner,
            location,
            sha256: raw.sha256.map(|s| s.inner).unwrap_or_default(),
            args: raw.args.unwrap_or_default(),
            disabled,
            headers_from,
            rules: rules.iter().map(|rule| rule.to_kube()).collect(),
            image,
        },
        name.site,
    ))
}

/// `sha256` and `headersFrom` belong to downloads; on an image plugin they would be written
/// to the ConfigMap and never used.
fn check_image_extras(
    checker: &mut Checker,
    sha256: &Option<Located<String>>,
    headers_from: &Option<Located<Vec<Located<model::HeadersFrom>>>>,
) {
    if let Some(sha256) = sha256.as_ref().filter(|s| !s.is_empty()) {
        checker
            .error(&sha256.site, "does not apply to an image plugin: the controller checks it only for downloads, and the image digest is the pin")
            .with_hint("remove `sha256`, and pin the image by digest in `image.reference` (`…@sha256:<digest>`)");
    }
    if let Some(headers) = headers_from.as_ref().filter(|h| !h.is_empty()) {
        checker
            .error(&headers.site, "does not apply to an image plugin: the headers are for downloads, and the kubelet pulls the image")
            .with_hint("remove `headersFrom`; the kubelet pulls with the node's registry credentials");
    }
}

/// `^([a-zA-Z0-9\-]+)\/{1}([a-zA-Z0-9_\-.]+)$`, the regexp the controller checks at start-up
/// (Argo Rollouts v1.9.1, utils/config/config.go).
pub(crate) fn is_plugin_name(name: &str) -> bool {
    let Some((namespace, plugin)) = name.split_once('/') else {
        return false;
    };
    !namespace.is_empty()
        && !plugin.is_empty()
        && namespace
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-')
        && plugin
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

fn check_name(
    checker: &mut Checker,
    cx: &Context<'_>,
    name: Located<String>,
) -> Option<Located<String>> {
    if !is_plugin_name(&name) {
        checker
            .error(&name.site, format!("`{}` is not a plugin name", name.inner))
            .with_hint("write `<namespace>/<name>`: letters, digits and '-' before the slash; letters, digits, '_', '.' and '-' after it (e.g. `argoproj-labs/gatewayAPI`)");
        return None;
    }
    if name.ends_with("/.") || name.ends_with("/..") {
        checker
            .error(
                &name.site,
                format!(
                    "`{}` would be installed at a directory of `plugin-bin/`, not in it",
                    name.inner
                ),
            )
            .with_hint("the part after the slash may not be `.` or `..`");
        return None;
    }
    if cx.kind == PluginKind::TrafficRouter && name.as_str() == tables::OPENSHIFT_PLUGIN_NAME {
        checker
            .error(&name.site, format!("`{}` is reserved: the operator adds it itself", name.inner))
            .with_hint("remove this entry and render with `--openshift-route-plugin` (or `--openshift-route-plugin=LOCATION`)");
        return None;
    }
    Some(name)
}

fn check_location(
    checker: &mut Checker,
    cx: &Context<'_>,
    name: Option<&str>,
    location: &Located<String>,
) -> Option<Location> {
    let site = &location.site;
    // Stricter than the controller, which would download `a b` as `a%20b`: a space in a
    // location is almost always a mistake, and is invisible in a review.
    if location.chars().any(char::is_whitespace) {
        checker
            .error(site, "a location may not contain spaces")
            .with_hint("percent-encode them, e.g. a space as %20");
        return None;
    }
    let parsed = match parse_location(location) {
        Ok(parsed) => parsed,
        Err((problem, hint)) => {
            checker.error(site, problem).with_hint(hint);
            return None;
        }
    };
    match &parsed {
        Location::File { path: file } => {
            if let Some(name) = name {
                check_file_target(checker, site, name, file);
            }
        }
        Location::Download { secure: false } => {
            checker
                .warning(
                    site,
                    "plain http: the download can be read and altered on the way",
                )
                .with_hint("use https, and pin the binary with `sha256`");
        }
        Location::Download { secure: true } => {}
    }
    if !allowed_location(cx.options, location) {
        checker
            .error(site, "this location is not allowed here")
            .with_hint(allowed_hint(cx.options));
    }
    Some(parsed)
}

/// `--allow-plugin-location`: none given, or the location starts with one of them.
fn allowed_location(options: &Options, location: &str) -> bool {
    let allowed = &options.allowed_plugin_locations;
    allowed.is_empty() || allowed.iter().any(|prefix| prefix.allows(location))
}

pub(super) fn allowed_hint(options: &Options) -> String {
    let prefixes: Vec<&str> = options
        .allowed_plugin_locations
        .iter()
        .filter(|prefix| !prefix.is_image_prefix())
        .map(|prefix| prefix.written.as_str())
        .collect();
    if prefixes.is_empty() {
        return "only image plugins are allowed (every --allow-plugin-location is an `oci://` prefix); add a URL prefix, or give this plugin an `image`".to_owned();
    }
    format!(
        "locations must start with one of: {} (--allow-plugin-location; compared with `..` resolved, scheme and host in any case)",
        prefixes.join(", ")
    )
}

/// The hint for an image reference outside every `oci://` prefix of `--allow-plugin-location`.
pub(super) fn allowed_image_hint(options: &Options) -> String {
    let prefixes: Vec<&str> = options
        .allowed_plugin_locations
        .iter()
        .filter(|prefix| prefix.is_image_prefix())
        .map(|prefix| prefix.written.as_str())
        .collect();
    if prefixes.is_empty() {
        return "no --allow-plugin-location is an `oci://` prefix, so no image plugin is allowed: add one such as `oci://registry.example.com/platform/`".to_owned();
    }
    format!(
        "image references must start with one of: {} (--allow-plugin-location; the registry compared in any case, Docker Hub names in full, as `docker.io/library/busybox`)",
        prefixes.join(", ")
    )
}

/// A `file:` location must name a file that exists when the controller starts: not its
/// working directory, not the plugin's own install path (the copy would truncate it), not
/// anything inside the emptyDir volumes the renderer mounts (`plugin-bin/` and `/tmp` are empty
/// at start), and not inside the mounts of image plugins (their layout is the renderer's).
fn check_file_target(checker: &mut Checker, site: &Site, name: &str, file: &str) {
    if let Some(problem) = file_target_problem(name, file) {
        checker
            .error(site, format!("this file location {problem}"))
            .with_hint(format!(
                "file paths are relative to `{}`; point at the binary shipped in the image or a mounted volume, outside `plugin-bin/` and `/tmp`",
                tables::CONTROLLER_WORKDIR
            ));
    }
}

/// What makes a file location useless for the plugin `name`, if anything.
fn file_target_problem(name: &str, file: &str) -> Option<String> {
    let resolved = resolve_file(file);
    let install_path = format!("{}/{name}", tables::PLUGIN_BIN_DIR);
    let inside = |dir: &str| {
        resolved == dir
            || resolved
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if resolved == tables::CONTROLLER_WORKDIR {
        Some("resolves to the controller's working directory, not a file".to_owned())
    } else if resolved == install_path {
        Some(format!(
            "is the plugin's own install path `{install_path}`: the controller would truncate it while copying it onto itself"
        ))
    } else if let Some((_, dir)) = tables::EMPTY_DIR_MOUNTS
        .into_iter()
        .find(|(_, dir)| inside(dir))
    {
        Some(format!(
            "resolves to `{resolved}`, inside the emptyDir volume mounted at `{dir}`: it is empty when the controller starts, so there is nothing to copy"
        ))
    } else if inside(tables::PLUGIN_IMAGES_DIR) {
        Some(format!(
            "resolves to `{resolved}`, inside `{}`, where the renderer mounts the images of image plugins: give this plugin an `image` instead",
            tables::PLUGIN_IMAGES_DIR
        ))
    } else {
        None
    }
}

fn check_sha256(
    checker: &mut Checker,
    cx: &Context<'_>,
    entry: &Site,
    sha256: Option<&Located<String>>,
    parsed: Option<&Location>,
) {
    let digest = sha256.map_or("", |s| s.as_str());
    let is_hex = |s: &str| s.bytes().all(|c| c.is_ascii_hexdigit());
    if let Some(sha256) = sha256.filter(|s| !s.is_empty()) {
        if digest.len() == 64 && is_hex(digest) && digest.bytes().any(|c| c.is_ascii_uppercase()) {
            checker
                .error(
                    &sha256.site,
                    "must be lower case: the controller compares digests case-sensitively",
                )
                .with_hint(format!("write `{}`", digest.to_ascii_lowercase()));
        } else if digest.len() == 40 && is_hex(digest) {
            checker
                .error(&sha256.site, "looks like a SHA-1 digest (40 hex characters), but the controller checks SHA-256 (64 lowercase hex characters) and would refuse the plugin")
                .with_hint("compute it with `sha256sum <plugin binary>`, or take it from the release's checksums file");
        } else if !(digest.len() == 64 && is_hex(digest)) {
            let message = match digest.split_once(':') {
                Some(("sha256", _)) => "must be the bare digest, without a `sha256:` prefix",
                _ => "must be a SHA-256 digest: 64 lowercase hex characters",
            };
            checker
                .error(&sha256.site, message)
                .with_hint("compute it with `sha256sum <plugin binary>`");
        }
    }
    match (parsed, sha256.filter(|s| !s.is_empty())) {
        (Some(Location::File { .. }), Some(sha256)) => {
            checker
                .warning(&sha256.site, "is never checked for file locations")
                .with_hint("remove it, or pin the file some other way (an image digest)");
        }
        (Some(Location::Download { .. }), None) => {
            // An empty digest is pointed at; a missing one at its entry.
            let site = sha256.map_or(entry, |s| &s.site);
            let message = "no `sha256`: the controller will run whatever the location serves";
            let hint = "pin the binary: `sha256: <sha256sum of the binary>`";
            if cx.options.require_sha256 {
                checker
                    .error(site, message)
                    .with_hint(format!("{hint} (required by --require-sha256)"));
            } else {
                checker.warning(site, message).with_hint(hint);
            }
        }
        _ => {}
    }
}

/// The parts of RBAC validation a plugin's rules would fail at the API server.
fn check_rule(checker: &mut Checker, cx: &Context<'_>, rule: &Located<model::kube::PolicyRule>) {
    let present =
        |list: &Option<Vec<Located<String>>>| list.as_ref().is_some_and(|l| !l.is_empty());
    if !present(&rule.verbs) {
        checker
            .error(&rule.site, "a rule needs `verbs`")
            .with_hint("list what the plugin may do, e.g. `verbs: [get, list, update, patch]`");
    }
    let resources = present(&rule.resources);
    let urls = rule
        .non_resource_urls
        .as_ref()
        .filter(|urls| !urls.is_empty());
    if !resources && urls.is_none() {
        checker
            .error(
                &rule.site,
                "a rule needs `resources` (or `nonResourceURLs`)",
            )
            .with_hint("e.g. `apiGroups: [gateway.networking.k8s.io]`, `resources: [httproutes]`");
    }
    if resources && !present(&rule.api_groups) {
        checker
            .error(&rule.site, "a rule with `resources` needs `apiGroups`")
            .with_hint("use `apiGroups: [\"\"]` for the core group");
    }
    if let Some(urls) = urls
        && cx.namespace_scoped
    {
        checker
            .error(&urls.site, "`nonResourceURLs` are only allowed in a ClusterRole, and a namespace-scoped controller gets a Role")
            .with_hint("remove them, or make the RolloutManager cluster-scoped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_follow_the_controller_regex() {
        for ok in [
            "argoproj-labs/gatewayAPI",
            "a/b",
            "-/x.y_z-1",
            "step/e2e-test",
        ] {
            assert!(is_plugin_name(ok), "{ok}");
        }
        for bad in ["gatewayAPI", "a/b/c", "a_b/c", "/b", "a/", "a/b c", "a/ü"] {
            assert!(!is_plugin_name(bad), "{bad}");
        }
    }
}
