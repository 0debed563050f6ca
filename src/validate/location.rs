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
