//! A plugin location as the Argo Rollouts controller reads it.
//!
//! The controller (utils/plugin/downloader.go, v1.9.1) parses each location with Go's
//! `net/url.ParseRequestURI` ([`super::go_url`]), downloads `http`/`https` locations with
//! `http.DefaultClient`, and copies `file` ones from host + path, made absolute against its
//! working directory. Any other scheme is fatal at start-up.

use super::go_url;
use crate::render::tables;

/// A location as the controller reads it.
#[derive(Debug, PartialEq, Eq)]
pub enum Location {
    Download {
        secure: bool,
    },
    /// The path the controller copies from: host + path, percent-decoded, as written.
    File {
        path: String,
    },
}

/// What the controller makes of a location, or why it would crash-loop on it. Errors come
/// with a hint.
pub fn parse_location(location: &str) -> Result<Location, (String, String)> {
    let fail = |problem: String, hint: &str| Err((problem, hint.to_owned()));
    let url = match go_url::parse_request_uri(location) {
        Ok(url) => url,
        Err(_) if !location.contains(':') => {
            return fail(
                "the location has no scheme".to_owned(),
                "write `https://…` for a download or `file://…` for a file in the controller's image or volumes",
            );
        }
        Err(error) => {
            return fail(
                format!(
                    "the controller cannot parse this location (Go's url.ParseRequestURI: {error})"
                ),
                "write `https://host/path` or `file:///path`, percent-encoding what a URL cannot hold",
            );
        }
    };
    match url.scheme.as_str() {
        "http" | "https" => match go_url::http_request_problem(location) {
            None => Ok(Location::Download {
                secure: url.scheme == "https",
            }),
            Some(problem) => fail(
                format!("the controller cannot download this location ({problem})"),
                "write `https://host/path`",
            ),
        },
        "file" => {
            let mut path = url.host;
            path.extend(url.path);
            Ok(Location::File {
                path: go_url::go_lossy(&path),
            })
        }
        "" => fail(
            "the location has no scheme".to_owned(),
            "write `https://…` for a download or `file://…` for a file in the controller's image or volumes",
        ),
        scheme => fail(
            format!(
                "the scheme `{scheme}` is not supported: the controller only downloads http(s) and copies file locations"
            ),
            "use `https://…` or `file://…`",
        ),
    }
}

/// A location in one canonical spelling, for comparing a location with an allowed prefix:
/// the scheme and host in lower case, the scheme's default port left out, user information
/// dropped, the path percent-decoded and its dot segments resolved (as the server that
/// answers the download, or the file system, resolves `..` and `%2e%2e`), then `?query`.
/// File locations become `file://` and their absolute path. `None` when the controller
/// could not read the location at all.
pub fn normalized(location: &str) -> Option<String> {
    let url = go_url::parse_request_uri(location).ok()?;
    match url.scheme.as_str() {
        "http" | "https" => {
            let host = go_url::go_lossy(&url.host).to_ascii_lowercase();
            let default_port = if url.scheme == "https" { ":443" } else { ":80" };
            let host = host.strip_suffix(default_port).unwrap_or(&host);
            let host = host.strip_suffix(':').unwrap_or(host);
            let mut path = remove_dot_segments(&go_url::go_lossy(&url.path));
            if path.is_empty() {
                path.push('/');
            }
            let query = if url.raw_query.is_empty() {
                String::new()
            } else {
                format!("?{}", go_url::go_lossy(&url.raw_query))
            };
            Some(format!("{}://{host}{path}{query}", url.scheme))
        }
        "file" => {
            let mut path = url.host;
            path.extend(url.path);
            let written = go_url::go_lossy(&path);
            let mut resolved = resolve_file(&written);
            // A prefix naming a directory keeps its slash.
            if written.ends_with('/') && !resolved.ends_with('/') {
                resolved.push('/');
            }
            Some(format!("file://{resolved}"))
        }
        _ => None,
    }
}

/// RFC 3986 section 5.2.4, on an absolute path: `.` and `..` segments resolved, a trailing
/// slash kept.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." | ".." if i == last => {
                if *segment == ".." {
                    out.pop();
                }
                out.push("");
            }
            "." => {}
            ".." => {
                out.pop();
            }
            "" if i == 0 => {}
            segment => out.push(segment),
        }
    }
    format!("/{}", out.join("/"))
}

/// Resolves a file location against the controller's working directory, as `filepath.Abs`.
pub fn resolve_file(path: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Opaque: no host, no path: the working directory.
        assert_eq!(
            parse_location("file:x"),
            Ok(Location::File { path: "".into() })
        );
        for bad in [
            "plugin-bin/x",
            "ftp://h/x",
            "https:///x",
            "https://h:x/p",
            "https://h/a%zz",
            "https://h%20x/p",
            "s3://b/k",
        ] {
            assert!(parse_location(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn normalized_locations_resolve_what_the_server_resolves() {
        let n = |s: &str| normalized(s).unwrap();
        assert_eq!(
            n("HTTPS://GitHub.com:443/argoproj-labs/x"),
            "https://github.com/argoproj-labs/x"
        );
        assert_eq!(
            n("https://github.com/argoproj-labs/../attacker/p"),
            "https://github.com/attacker/p"
        );
        assert_eq!(
            n("https://github.com/argoproj-labs/%2e%2e/attacker/p"),
            "https://github.com/attacker/p"
        );
        assert_eq!(
            n("https://github.com@evil.example/argoproj-labs/p"),
            "https://evil.example/argoproj-labs/p"
        );
        assert_eq!(n("https://h/a/./b/"), "https://h/a/b/");
        assert_eq!(n("https://h"), "https://h/");
        assert_eq!(n("file://plugins/../x"), "file:///home/argo-rollouts/x");
        assert_eq!(n("file:///opt/plugins/"), "file:///opt/plugins/");
        assert_eq!(normalized("ftp://h/x"), None);
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
