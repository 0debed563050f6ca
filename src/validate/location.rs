//! A plugin location as the Argo Rollouts controller reads it.
//!
//! The controller (utils/plugin/downloader.go, v1.9.1) parses each location with Go's
//! `net/url.ParseRequestURI`, downloads `http`/`https` locations and copies `file` ones (the
//! path is host + path, relative to its working directory). This module is a port of the
//! parts of `ParseRequestURI` that decide whether a location is accepted, and of what the
//! controller then does with it.

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

/// The checks of Go's `url.ParseRequestURI` that matter here, and the controller's scheme
/// rule. Errors come with a hint.
pub fn parse_location(location: &str) -> Result<Location, (String, String)> {
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
