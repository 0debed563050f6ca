//! Kubernetes syntax rules the API server enforces on what we write: names, label keys and
//! values, annotations, environment variable names (k8s.io/apimachinery v0.34
//! pkg/util/validation; `conformance/differential` compares each with it). Each check returns `None`
//! when the value is valid, or what is wrong, in the API server's terms.

/// `metadata.namespace` and other DNS-1123 labels: at most 63 characters of `a-z0-9-`,
/// starting and ending alphanumeric.
pub fn dns1123_label(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".to_owned());
    }
    if s.len() > 63 {
        return Some(format!(
            "must be no more than 63 characters (it has {})",
            s.len()
        ));
    }
    (!is_dns_label(s)).then(|| {
        "must consist of lower case letters, digits or '-', and start and end with a letter or digit"
            .to_owned()
    })
}

/// Object names and label key prefixes: DNS-1123 subdomains of at most 253 characters.
pub fn dns1123_subdomain(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some(format!(
            "must be no more than 253 characters (it has {})",
            s.len()
        ));
    }
    (s.is_empty() || !s.split('.').all(is_dns_label)).then(|| {
        "must consist of lower case letters, digits, '-' or '.', and start and end with a letter or digit"
            .to_owned()
    })
}

fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of label keys, and label values.
fn is_label_word(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Label and annotation keys: an optional DNS subdomain prefix and `/`, then a name of at most
/// 63 characters.
pub fn qualified_name(s: &str) -> Option<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some("the prefix before '/' must not be empty".to_owned());
        }
        if let Some(problem) = dns1123_subdomain(prefix) {
            return Some(format!("the prefix `{prefix}` {problem}"));
        }
    }
    if name.is_empty() {
        return Some("the name part must not be empty".to_owned());
    }
    if name.len() > 63 {
        return Some(format!(
            "the name part must be no more than 63 characters (it has {})",
            name.len()
        ));
    }
    (!is_label_word(name)).then(|| {
        "the name part must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit"
            .to_owned()
    })
}

/// Label values: empty, or at most 63 characters like the name part of a key.
pub fn label_value(s: &str) -> Option<String> {
    if s.len() > 63 {
        return Some(format!(
            "must be no more than 63 characters (it has {})",
            s.len()
        ));
    }
    (!s.is_empty() && !is_label_word(s)).then(|| {
        "must be empty, or consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit"
            .to_owned()
    })
}

/// Annotation keys: qualified names after Go's `strings.ToLower`, as `ValidateAnnotations`
/// checks them (apimachinery v0.34.2).
pub fn annotation_key(s: &str) -> Option<String> {
    qualified_name(&go_to_lower(s))
}

/// Go's `strings.ToLower`: each rune's simple lower case (`unicode.ToLower`), which is the
/// first of Rust's full mapping (they differ only where Unicode's special casing turns one
/// rune into several: `İ` is `i` in Go).
pub fn go_to_lower(s: &str) -> String {
    s.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// The API server's limit on all annotations of one object together.
pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// Environment variable names: printable ASCII without `=`.
pub fn env_var_name(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".to_owned());
    }
    (!s.bytes().all(|c| (0x20..0x7f).contains(&c) && c != b'='))
        .then(|| "must consist of printable ASCII characters other than '='".to_owned())
}

/// The environment variable name rule of Kubernetes before 1.32 (`IsEnvVarName`:
/// `[-._a-zA-Z][-._a-zA-Z0-9]*`, and not `.`, `..` or starting with `..`).
pub fn strict_env_var_name(s: &str) -> Option<String> {
    let valid = s.starts_with(|c: char| c.is_ascii_alphabetic() || matches!(c, '-' | '.' | '_'))
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if !valid {
        return Some(
            "must consist of letters, digits, '_', '-' or '.', and not start with a digit"
                .to_owned(),
        );
    }
    (s == "." || s.starts_with(".."))
        .then(|| "must not be '.' or '..', or start with '..'".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(dns1123_label("argo-rollouts"), None);
        assert!(dns1123_label("Argo").is_some());
        assert!(dns1123_label("-a").is_some());
        assert!(dns1123_label(&"a".repeat(64)).is_some());
        assert_eq!(dns1123_subdomain("a.b-c.d"), None);
        assert!(dns1123_subdomain("a..b").is_some());
    }

    #[test]
    fn label_keys_and_values() {
        for key in ["app.kubernetes.io/name", "team", "a_b.C-1", "example.com/x"] {
            assert_eq!(qualified_name(key), None, "{key}");
        }
        for key in [
            "",
            "/x",
            "x/",
            "Example.com/x",
            "a/b/c",
            "-x",
            "x_",
            &"a".repeat(64),
        ] {
            assert!(qualified_name(key).is_some(), "{key}");
        }
        assert_eq!(label_value(""), None);
        assert_eq!(label_value("v1.2_x-y"), None);
        assert!(label_value("a b").is_some());
        assert!(label_value("a/b").is_some());
        assert_eq!(annotation_key("Example.com/Key"), None);
    }

    #[test]
    fn env_names() {
        assert_eq!(env_var_name("HTTP_PROXY"), None);
        assert_eq!(env_var_name("my.var-1"), None);
        assert!(env_var_name("A=B").is_some());
        assert!(env_var_name("").is_some());
        assert!(env_var_name("tab\there").is_some());
    }
}
