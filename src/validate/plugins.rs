//! Plugin rules: everything the Argo Rollouts controller would fail on at start-up (and
//! crash-loop), caught while rendering, plus what it would silently get wrong.
//!
//! The controller (utils/plugin/downloader.go) parses each location with Go's
//! `url.ParseRequestURI`, downloads `http`/`https` or copies `file` locations (path = host +
//! path, relative to its working directory), installs the binary at `plugin-bin/<name>`, and
//! compares a non-empty `sha256` case-sensitively with the SHA-256 of what it downloaded.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::{Checker, Hint};
use crate::diag::FieldPath;
use crate::model;
use crate::options::Options;
use crate::render::{catalog, tables};
use crate::spec::{Plugin, PluginKind, Plugins};

/// Validates and resolves the three plugin lists, sorted by name, with the OpenShift route
/// plugin added when asked for.
pub fn plugins(
    checker: &mut Checker<'_>,
    raw: model::Plugins,
    options: &Options,
    namespace_scoped: bool,
) -> Plugins {
    let mut resolved = Plugins::default();
    let mut seen: BTreeMap<String, FieldPath> = BTreeMap::new();
    let lists = [
        (PluginKind::TrafficRouter, raw.traffic_management),
        (PluginKind::MetricProvider, raw.metric),
        (PluginKind::Step, raw.step),
    ];
    for (kind, list) in lists {
        let list_path = FieldPath::from("spec.plugins").key(kind.spec_field());
        for (index, plugin) in list.unwrap_or_default().into_iter().enumerate() {
            let path = list_path.index(index);
            let context = Context {
                kind,
                path: &path,
                options,
                namespace_scoped,
            };
            let Some(plugin) = self::plugin(checker, &context, plugin) else {
                continue;
            };
            if let Some(first) = seen.get(&plugin.name) {
                let message = format!(
                    "the plugin `{}` is already configured at {first}",
                    plugin.name
                );
                checker
                    .error(&path.key("name"), message)
                    .with_hint("the controller installs every plugin at `plugin-bin/<name>`, so two entries with one name overwrite each other; remove one");
                continue;
            }
            seen.insert(plugin.name.clone(), path.key("name"));
            resolved.list_mut(kind).push(plugin);
        }
    }
    if let Some(location) = &options.openshift_route_plugin {
        if let Some(path) = seen.get(tables::OPENSHIFT_PLUGIN_NAME) {
            checker
                .error(
                    path,
                    format!(
                        "`{}` is added by --openshift-route-plugin already",
                        tables::OPENSHIFT_PLUGIN_NAME
                    ),
                )
                .with_hint("remove this entry, or render without --openshift-route-plugin");
        }
        resolved.traffic_router.push(Plugin {
            name: tables::OPENSHIFT_PLUGIN_NAME.to_owned(),
            location: location.clone(),
            sha256: String::new(),
            args: Vec::new(),
            disabled: false,
            headers_from: Vec::new(),
            rules: Vec::new(),
        });
    }
    for kind in PluginKind::ALL {
        resolved
            .list_mut(kind)
            .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    }
    check_known_plugins(checker, &resolved, &seen);
    resolved
}

/// Warns when a well-known plugin lacks the permissions it needs in the controller's role
/// (the upstream rules plus every plugin's `rules`), with the rules to add.
fn check_known_plugins(
    checker: &mut Checker<'_>,
    plugins: &Plugins,
    paths: &BTreeMap<String, FieldPath>,
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
        let Some(path) = paths.get(&plugin.name) else {
            continue;
        };
        let entry = FieldPath::from_segments(&path.segments()[..path.segments().len() - 1]);
        checker
            .warning(
                path,
                format!(
                    "`{}` needs permissions the controller's role does not have: plugins run inside the controller, with its ServiceAccount",
                    plugin.name
                ),
            )
            .with_hint(format!(
                "add them to this plugin entry ({entry}), as its docs say ({}):\n{}",
                known.project,
                catalog::rules_yaml(&missing, "      ")
            ));
    }
}

struct Context<'a> {
    kind: PluginKind,
    path: &'a FieldPath,
    options: &'a Options,
    namespace_scoped: bool,
}

fn plugin(checker: &mut Checker<'_>, cx: &Context<'_>, raw: model::Plugin) -> Option<Plugin> {
    let path = cx.path;
    let name = match raw.name.filter(|name| !name.is_empty()) {
        None => {
            checker
                .error(path, "a plugin needs a `name`")
                .with_hint("name it `<namespace>/<name>`, e.g. `argoproj-labs/gatewayAPI`");
            None
        }
        Some(name) => check_name(checker, cx, name),
    };
    let location = match raw.location.filter(|location| !location.is_empty()) {
        None => {
            checker
                .error(path, "a plugin needs a `location`")
                .with_hint("give the `https://` or `file://` URL of the plugin binary");
            None
        }
        Some(location) => Some(location),
    };
    let parsed = location
        .as_deref()
        .and_then(|location| check_location(checker, cx, name.as_deref(), location));
    let sha256 = raw.sha256.unwrap_or_default();
    check_sha256(checker, cx, &sha256, parsed.as_ref());

    let disabled = raw.disabled.unwrap_or(false);
    if raw.disabled.is_some() && cx.kind != PluginKind::Step {
        checker
            .error(
                &path.key("disabled"),
                format!(
                    "`disabled` applies to step plugins only; the controller ignores it on a {}",
                    cx.kind.noun()
                ),
            )
            .with_hint("remove `disabled`, or remove the plugin entry to turn it off");
    }

    let headers_from: Vec<String> = raw
        .headers_from
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .filter_map(|(index, header)| {
            let name = header.secret_ref.and_then(|r| r.name).filter(|n| !n.is_empty());
            if name.is_none() {
                checker
                    .error(
                        &path.key("headersFrom").index(index),
                        "`headersFrom` entries need `secretRef.name`",
                    )
                    .with_hint("name the Secret (in the controller's namespace) whose entries become HTTP headers");
            }
            name
        })
        .collect();
    if !headers_from.is_empty() && matches!(parsed, Some(Location::File { .. })) {
        checker
            .warning(
                &path.key("headersFrom"),
                "`headersFrom` is only used to download http(s) locations; this one is a file",
            )
            .with_hint("remove `headersFrom`");
    }

    let rules = raw.rules.unwrap_or_default();
    for (index, rule) in rules.iter().enumerate() {
        check_rule(checker, cx, &path.key("rules").index(index), rule);
    }

    Some(Plugin {
        name: name?,
        location: location?,
        sha256,
        args: raw.args.unwrap_or_default(),
        disabled,
        headers_from,
        rules,
    })
}

/// `^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$`, checked by the controller at start-up.
fn is_plugin_name(name: &str) -> bool {
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

fn check_name(checker: &mut Checker<'_>, cx: &Context<'_>, name: String) -> Option<String> {
    let path = cx.path.key("name");
    if !is_plugin_name(&name) {
        checker
            .error(&path, format!("`{name}` is not a plugin name"))
            .with_hint("write `<namespace>/<name>`: letters, digits and '-' before the slash; letters, digits, '_', '.' and '-' after it (e.g. `argoproj-labs/gatewayAPI`)");
        return None;
    }
    if name.ends_with("/.") || name.ends_with("/..") {
        checker
            .error(
                &path,
                format!("`{name}` would be installed at a directory of `plugin-bin/`, not in it"),
            )
            .with_hint("the part after the slash may not be `.` or `..`");
        return None;
    }
    if cx.kind == PluginKind::TrafficRouter && name == tables::OPENSHIFT_PLUGIN_NAME {
        checker
            .error(&path, format!("`{name}` is reserved: the operator adds it itself"))
            .with_hint("remove this entry and render with `--openshift-route-plugin` (or `--openshift-route-plugin=LOCATION`)");
        return None;
    }
    Some(name)
}

fn check_location(
    checker: &mut Checker<'_>,
    cx: &Context<'_>,
    name: Option<&str>,
    location: &str,
) -> Option<Location> {
    let path = cx.path.key("location");
    let parsed = match parse_location(location) {
        Ok(parsed) => parsed,
        Err((problem, hint)) => {
            checker.error(&path, problem).with_hint(hint);
            return None;
        }
    };
    match &parsed {
        Location::File { path: file } => {
            if let Some(name) = name {
                check_file_target(checker, &path, name, file);
            }
        }
        Location::Download { secure: false } => {
            checker
                .warning(
                    &path,
                    "plain http: the download can be read and altered on the way",
                )
                .with_hint("use https, and pin the binary with `sha256`");
        }
        Location::Download { secure: true } => {}
    }
    let allowed = &cx.options.allowed_plugin_locations;
    if !allowed.is_empty()
        && !allowed
            .iter()
            .any(|prefix| location.starts_with(prefix.as_str()))
    {
        checker
            .error(&path, "this location is not allowed here")
            .with_hint(format!(
                "locations must start with one of: {} (--allow-plugin-location)",
                allowed.join(", ")
            ));
    }
    Some(parsed)
}

/// A location as the controller reads it.
#[derive(Debug, PartialEq, Eq)]
enum Location {
    Download {
        secure: bool,
    },
    /// The path the controller copies from: host + path, percent-decoded, as written.
    File {
        path: String,
    },
}

/// The checks of Go's `url.ParseRequestURI` that matter here, and the controller's scheme
/// rule. Errors come with a hint.
fn parse_location(location: &str) -> Result<Location, (String, String)> {
    let fail = |problem: &str, hint: &str| Err((problem.to_owned(), hint.to_owned()));
    if location
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return fail(
            "a location may not contain spaces or control characters",
            "percent-encode them, e.g. a space as %20",
        );
    }
    let scheme_end = location.find(':').filter(|&end| {
        let scheme = &location[..end];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let Some(scheme_end) = scheme_end else {
        return fail(
            "the location has no scheme",
            "write `https://…` for a download or `file://…` for a file in the controller's image or volumes",
        );
    };
    let scheme = location[..scheme_end].to_ascii_lowercase();
    let rest = &location[scheme_end + 1..];
    if !matches!(scheme.as_str(), "http" | "https" | "file") {
        return fail(
            &format!(
                "the scheme `{scheme}` is not supported: the controller only downloads http(s) and copies file locations"
            ),
            "use `https://…` or `file://…`",
        );
    }
    if !rest.starts_with('/') {
        return fail(
            "the controller cannot parse this location (Go's url.ParseRequestURI needs `//host/path` or `/path` after the scheme)",
            &format!("write `{scheme}://…`"),
        );
    }
    check_escapes(rest)?;
    let (host, path) = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let end = authority_and_path
                .find(['/', '?'])
                .unwrap_or(authority_and_path.len());
            (&authority_and_path[..end], &authority_and_path[end..])
        }
        None => ("", rest),
    };
    let host_part = host.rsplit_once('@').map_or(host, |(_, host)| host);
    if let Some(problem) = host_problem(host_part) {
        return fail(&problem, "check the host and port of the location");
    }
    if scheme == "file" {
        let path = path.split_once('?').map_or(path, |(path, _)| path);
        return Ok(Location::File {
            path: format!("{host}{}", percent_decode(path)),
        });
    }
    if host_part.is_empty() {
        return fail("the location has no host", "write `https://host/path`");
    }
    Ok(Location::Download {
        secure: scheme == "https",
    })
}

fn check_escapes(s: &str) -> Result<(), (String, String)> {
    let bytes = s.as_bytes();
    for (i, c) in bytes.iter().enumerate() {
        if *c == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return Err((
                "the location has an invalid percent escape".to_owned(),
                "write `%` as `%25`".to_owned(),
            ));
        }
    }
    Ok(())
}

fn host_problem(host: &str) -> Option<String> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((_, port)) => ("", port),
            None => return Some("the IPv6 host has no closing `]`".to_owned()),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, port),
            None => (host, ""),
        }
    };
    let port = port.strip_prefix(':').unwrap_or(port);
    if !port.bytes().all(|c| c.is_ascii_digit()) {
        return Some(format!("the port `{port}` is not a number"));
    }
    let valid = name.bytes().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'%'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            )
    });
    (!valid).then(|| format!("the host `{name}` has characters a host cannot have"))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |j: usize| (bytes.get(j).copied().map(char::from)).and_then(|c| c.to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Resolves a file location against the controller's working directory, as `filepath.Abs`.
fn resolve_file(path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{}/{path}", tables::CONTROLLER_WORKDIR)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

fn check_file_target(checker: &mut Checker<'_>, path: &FieldPath, name: &str, file: &str) {
    let resolved = resolve_file(file);
    let install_path = format!("{}/{name}", tables::PLUGIN_BIN_DIR);
    let namespace_dir = install_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let problem = if resolved == tables::CONTROLLER_WORKDIR {
        Some("resolves to the controller's working directory, not a file".to_owned())
    } else if resolved == install_path {
        Some(format!(
            "is the plugin's own install path `{install_path}`: the controller would truncate it while copying it onto itself"
        ))
    } else if resolved == tables::PLUGIN_BIN_DIR || resolved == namespace_dir {
        Some(format!(
            "resolves to the directory `{resolved}`, not a file"
        ))
    } else {
        None
    };
    if let Some(problem) = problem {
        checker
            .error(path, format!("this file location {problem}"))
            .with_hint(format!(
                "file paths are relative to `{}`; point at the binary shipped in the image or a mounted volume, outside `plugin-bin/`",
                tables::CONTROLLER_WORKDIR
            ));
    }
}

fn check_sha256(
    checker: &mut Checker<'_>,
    cx: &Context<'_>,
    sha256: &str,
    location: Option<&Location>,
) {
    let path = cx.path.key("sha256");
    let is_hex = |s: &str| s.bytes().all(|c| c.is_ascii_hexdigit());
    if !sha256.is_empty() {
        if sha256.len() == 64 && is_hex(sha256) && sha256.bytes().any(|c| c.is_ascii_uppercase()) {
            checker
                .error(
                    &path,
                    "must be lower case: the controller compares digests case-sensitively",
                )
                .with_hint(format!("write `{}`", sha256.to_ascii_lowercase()));
        } else if sha256.len() == 40 && is_hex(sha256) {
            checker
                .error(&path, "looks like a SHA-1 digest (40 hex characters), but the controller checks SHA-256 (64 lowercase hex characters) and would refuse the plugin")
                .with_hint("compute it with `sha256sum <plugin binary>`, or take it from the release's checksums file");
        } else if !(sha256.len() == 64 && is_hex(sha256)) {
            let message = match sha256.split_once(':') {
                Some(("sha256", _)) => "must be the bare digest, without a `sha256:` prefix",
                _ => "must be a SHA-256 digest: 64 lowercase hex characters",
            };
            checker
                .error(&path, message)
                .with_hint("compute it with `sha256sum <plugin binary>`");
        }
    }
    match location {
        Some(Location::File { .. }) if !sha256.is_empty() => {
            checker
                .warning(&path, "is never checked for file locations")
                .with_hint("remove it, or pin the file some other way (an image digest)");
        }
        Some(Location::Download { .. }) if sha256.is_empty() => {
            let message = "no `sha256`: the controller will run whatever the location serves";
            let hint = "pin the binary: `sha256: <sha256sum of the binary>`";
            if cx.options.require_sha256 {
                checker
                    .error(&path, message)
                    .with_hint(format!("{hint} (required by --require-sha256)"));
            } else {
                checker.warning(&path, message).with_hint(hint);
            }
        }
        _ => {}
    }
}

/// The parts of RBAC validation a plugin's rules would fail at the API server.
fn check_rule(checker: &mut Checker<'_>, cx: &Context<'_>, path: &FieldPath, rule: &PolicyRule) {
    let present = |list: &Option<Vec<String>>| list.as_ref().is_some_and(|l| !l.is_empty());
    if rule.verbs.is_empty() {
        checker
            .error(path, "a rule needs `verbs`")
            .with_hint("list what the plugin may do, e.g. `verbs: [get, list, update, patch]`");
    }
    let resources = present(&rule.resources);
    let urls = present(&rule.non_resource_urls);
    if !resources && !urls {
        checker
            .error(path, "a rule needs `resources` (or `nonResourceURLs`)")
            .with_hint("e.g. `apiGroups: [gateway.networking.k8s.io]`, `resources: [httproutes]`");
    }
    if resources && !present(&rule.api_groups) {
        checker
            .error(path, "a rule with `resources` needs `apiGroups`")
            .with_hint("use `apiGroups: [\"\"]` for the core group");
    }
    if urls && cx.namespace_scoped {
        checker
            .error(&path.key("nonResourceURLs"), "`nonResourceURLs` are only allowed in a ClusterRole, and a namespace-scoped controller gets a Role")
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

    #[test]
    fn locations_parse_as_the_controller_parses_them() {
        assert_eq!(
            parse_location("https://github.com/x/y/releases/download/v1/p"),
            Ok(Location::Download { secure: true })
        );
        assert_eq!(
            parse_location("HTTP://h:8080/p?q=1"),
            Ok(Location::Download { secure: false })
        );
        assert_eq!(
            parse_location("file://plugin-bin/x"),
            Ok(Location::File {
                path: "plugin-bin/x".into()
            })
        );
        assert_eq!(
            parse_location("file:///opt/plugins/my%20plugin"),
            Ok(Location::File {
                path: "/opt/plugins/my plugin".into()
            })
        );
        assert_eq!(
            parse_location("file:/abs"),
            Ok(Location::File {
                path: "/abs".into()
            })
        );
        for bad in [
            "plugin-bin/x",
            "ftp://h/x",
            "file:x",
            "https:///x",
            "https://h:x/p",
            "https://h/a%zz",
            "https://h/a b",
            "s3://b/k",
        ] {
            assert!(parse_location(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn file_locations_resolve_against_the_working_directory() {
        assert_eq!(
            resolve_file("plugin-bin/a/b"),
            "/home/argo-rollouts/plugin-bin/a/b"
        );
        assert_eq!(resolve_file("./x/../y"), "/home/argo-rollouts/y");
        assert_eq!(resolve_file(""), "/home/argo-rollouts");
        assert_eq!(resolve_file("/opt/p"), "/opt/p");
    }
}
