//! Container image references as the kubelet reads them before it pulls: a port of
//! `reference.ParseNormalizedNamed` of github.com/distribution/reference v0.6.0, which the
//! kubelet calls on every image it is asked for (k8s.io/kubernetes v1.34
//! pkg/util/parsers.ParseImageName, from pkg/kubelet/images) and containerd's CRI plugin calls
//! again (`ParseDockerRef`). A reference it refuses never starts: the pod waits with
//! `InvalidImageName`. The API server checks nothing of an image volume's reference but that it
//! is set (on Pods only), so this is the only check before the cluster.
//!
//! `conformance/differential` compares [`parse`] with the Go function (rule `image-reference`).

/// A reference the kubelet accepts, normalized as it normalizes it: Docker Hub names get
/// `docker.io/` and, for one-component names, `library/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The registry host (and port) as written, or `docker.io`; empty in the one case Go
    /// leaves it empty (a first component that looks like a host to the normalizer but not to
    /// the grammar, such as `a_b.c/x`).
    pub domain: String,
    /// The repository path.
    pub path: String,
    pub tag: Option<String>,
    /// `algorithm:hex`.
    pub digest: Option<String>,
}

impl Reference {
    /// `Named.Name()`: the domain and path.
    pub fn name(&self) -> String {
        if self.domain.is_empty() {
            self.path.clone()
        } else {
            format!("{}/{}", self.domain, self.path)
        }
    }
}

/// Go's `RepositoryNameTotalLengthMax`: the limit on the path (the domain does not count).
pub const MAX_PATH_LENGTH: usize = 255;

const DEFAULT_DOMAIN: &str = "docker.io";
const LEGACY_DEFAULT_DOMAIN: &str = "index.docker.io";
const OFFICIAL_REPO_PREFIX: &str = "library/";

/// Reads `text` as `ParseNormalizedNamed` does. The error completes "the kubelet refuses
/// this image reference: …".
pub fn parse(text: &str) -> Result<Reference, String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("an image reference may not contain white space".to_owned());
    }
    if is_identifier(text) {
        return Err(
            "a bare 64-character hex string is an image ID, not a reference to pull".to_owned(),
        );
    }
    let (domain, remainder) = split_docker_domain(text);
    let remote = remainder
        .split_once(':')
        .map_or(remainder.as_str(), |(r, _)| r);
    if remote.to_lowercase() != remote {
        // Go names `remote` itself; the repository alone reads better.
        let repository = remote.split_once('@').map_or(remote, |(r, _)| r);
        return Err(format!(
            "the repository name `{repository}` must be lower case"
        ));
    }
    let reference = parse_reference(&format!("{domain}/{remainder}"))?;
    // Go checks the digest's algorithm and length only once the whole reference matched.
    if let Some(digest) = &reference.digest {
        check_digest(digest)?;
    }
    Ok(reference)
}

/// `^[a-f0-9]{64}$`
fn is_identifier(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// `splitDockerDomain`: what the normalizer takes for the registry, before the grammar sees
/// the reference.
fn split_docker_domain(name: &str) -> (String, String) {
    let Some((maybe_domain, maybe_remote)) = name.split_once('/') else {
        return (
            DEFAULT_DOMAIN.to_owned(),
            format!("{OFFICIAL_REPO_PREFIX}{name}"),
        );
    };
    let (domain, mut remote) = if maybe_domain == "localhost" {
        (maybe_domain.to_owned(), maybe_remote.to_owned())
    } else if maybe_domain == LEGACY_DEFAULT_DOMAIN {
        (DEFAULT_DOMAIN.to_owned(), maybe_remote.to_owned())
    } else if maybe_domain.contains(['.', ':']) || maybe_domain.to_lowercase() != maybe_domain {
        (maybe_domain.to_owned(), maybe_remote.to_owned())
    } else {
        (DEFAULT_DOMAIN.to_owned(), name.to_owned())
    };
    if domain == DEFAULT_DOMAIN && !remote.contains('/') {
        remote = format!("{OFFICIAL_REPO_PREFIX}{remote}");
    }
    (domain, remote)
}

/// `reference.Parse`: the grammar `name[:tag][@digest]`, with the name split into domain and
/// path as Go's regexp splits it (the optional domain is taken whenever the rest is a path).
fn parse_reference(s: &str) -> Result<Reference, String> {
    let invalid = || {
        if s.is_empty() {
            "an image reference may not be empty".to_owned()
        } else {
            "not an image reference: write `registry/repository[:tag][@sha256:<64 hex>]`, lower case, without spaces".to_owned()
        }
    };
    let (rest, digest) = match s.split_once('@') {
        Some((rest, digest)) => {
            if !is_digest_pattern(digest) {
                return Err(digest_problem(digest));
            }
            (rest, Some(digest.to_owned()))
        }
        None => (s, None),
    };
    // A tag holds neither `/` nor `:`, and a name holds `:` only in a `host:port/` prefix, so
    // the tag, if any, is what follows the last `:` when no `/` follows it.
    let (name, tag) = match rest.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => {
            if !is_tag(tag) {
                return Err(tag_problem(tag));
            }
            (name, Some(tag.to_owned()))
        }
        _ => (rest, None),
    };
    let (domain, path) = split_name(name).ok_or_else(invalid)?;
    if path.len() > MAX_PATH_LENGTH {
        return Err(format!(
            "the repository path must be at most {MAX_PATH_LENGTH} characters (it has {})",
            path.len()
        ));
    }
    Ok(Reference {
        domain: domain.to_owned(),
        path: path.to_owned(),
        tag,
        digest,
    })
}

/// Why a digest does not match the grammar, as specifically as it can be said.
fn digest_problem(digest: &str) -> String {
    if let Some((_, hex)) = digest.split_once(':')
        && !hex.is_empty()
        && hex.bytes().all(|c| c.is_ascii_hexdigit())
        && let Err(problem) = check_digest(digest)
    {
        return problem;
    }
    format!("the digest `{digest}` is not `sha256:<64 hex>`")
}

/// Why a tag does not match `[\w][\w.-]{0,127}`.
fn tag_problem(tag: &str) -> String {
    if tag.is_empty() {
        "the tag after `:` is empty".to_owned()
    } else if tag.len() > 128 {
        format!(
            "a tag has at most 128 characters (this one has {})",
            tag.len()
        )
    } else {
        format!(
            "the tag `{tag}` may hold only letters, digits, `_`, `.` and `-`, and may not start with `.` or `-`"
        )
    }
}

/// `(?:(domainAndPort)/)?(remoteName)`, preferring the domain as Go's leftmost-first regexp
/// does.
fn split_name(name: &str) -> Option<(&str, &str)> {
    if let Some((first, rest)) = name.split_once('/')
        && is_domain_and_port(first)
        && is_remote_name(rest)
    {
        return Some((first, rest));
    }
    is_remote_name(name).then_some(("", name))
}

/// `pathComponent(/pathComponent)*`
fn is_remote_name(s: &str) -> bool {
    s.split('/').all(is_path_component)
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`: lower-case alphanumeric runs joined by one
/// `.`, one `_`, two `_`, or any number of `-`.
fn is_path_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let separator = &s[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|c| c == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// `(?:domainName|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
fn is_domain_and_port(s: &str) -> bool {
    let (host, port) = if s.starts_with('[') {
        match s.find(']') {
            Some(end) => (&s[..=end], &s[end + 1..]),
            None => return false,
        }
    } else {
        s.split_at(s.find(':').unwrap_or(s.len()))
    };
    let port_ok = port.is_empty()
        || (port.len() > 1
            && port.starts_with(':')
            && port[1..].bytes().all(|c| c.is_ascii_digit()));
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner.strip_suffix(']').is_some_and(|inner| {
            !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_hexdigit() || c == b':')
        })
    } else {
        !host.is_empty() && host.split('.').all(is_domain_component)
    };
    port_ok && host_ok
}

/// `[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`
fn is_domain_component(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// `[\w][\w.-]{0,127}`
fn is_tag(s: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && word(b[0])
        && b.iter().all(|c| word(*c) || matches!(c, b'.' | b'-'))
}

/// `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
fn is_digest_pattern(s: &str) -> bool {
    let Some((algorithm, hex)) = s.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|part| {
        let b = part.as_bytes();
        !b.is_empty() && b[0].is_ascii_alphabetic() && b.iter().all(u8::is_ascii_alphanumeric)
    });
    algorithm_ok && hex.len() >= 32 && hex.bytes().all(|c| c.is_ascii_hexdigit())
}

/// go-digest v1.0.0 `Digest.Validate`, with SHA-256, SHA-384 and SHA-512 available (the
/// kubelet links them in): the algorithm must be one of them, the hex lower case and exactly
/// as long as its hash.
fn check_digest(digest: &str) -> Result<(), String> {
    let (algorithm, hex) = digest.split_once(':').unwrap_or((digest, ""));
    let length = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => {
            return Err(format!(
                "the digest algorithm `{algorithm}` is not one the kubelet knows (sha256, sha384, sha512)"
            ));
        }
    };
    if hex.len() != length {
        return Err(format!(
            "a {algorithm} digest has {length} hex characters (this one has {})",
            hex.len()
        ));
    }
    if hex.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err("the digest must be lower-case hex".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> String {
        parse(s).unwrap().name()
    }

    #[test]
    fn docker_hub_names_are_normalized() {
        assert_eq!(name("busybox"), "docker.io/library/busybox");
        assert_eq!(name("me/tool"), "docker.io/me/tool");
        assert_eq!(name("index.docker.io/busybox"), "docker.io/library/busybox");
        assert_eq!(name("localhost/x"), "localhost/x");
        assert_eq!(name("registry:5000/x"), "registry:5000/x");
        assert_eq!(name("[::1]:5000/x/y"), "[::1]:5000/x/y");
        assert_eq!(name("Registry.Example/x"), "Registry.Example/x");
        // Looks like a host to the normalizer, not to the grammar: Go keeps it as a path.
        assert_eq!(name("a_b.c/x"), "a_b.c/x");
    }

    #[test]
    fn tags_and_digests_are_split_off() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let r = parse(&format!("ghcr.io/o/p:v1.2@{digest}")).unwrap();
        assert_eq!(r.tag.as_deref(), Some("v1.2"));
        assert_eq!(r.digest.as_deref(), Some(digest.as_str()));
        let r = parse("registry:5000/x").unwrap();
        assert_eq!((r.tag, r.digest), (None, None));
    }

    #[test]
    fn what_the_kubelet_refuses() {
        for bad in [
            "",
            "Busybox",
            "ghcr.io/Org/p",
            "ghcr.io/o/p:",
            "ghcr.io/o/p:-x",
            &format!("ghcr.io/o/p:{}", "t".repeat(129)),
            "ghcr.io/o/p@sha256:abc",
            &format!("ghcr.io/o/p@sha256:{}", "A".repeat(64)),
            &format!("ghcr.io/o/p@md5:{}", "a".repeat(32)),
            &format!("ghcr.io/o/p@sha256:{}", "a".repeat(63)),
            "ghcr.io/o/p q",
            "ghcr.io//p",
            "ghcr.io/o/p/",
            "ghcr.io/o..p",
            "ghcr.io/o___p",
            &"a".repeat(64),
            &format!("x/{}", "a".repeat(255)),
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(&format!("x/{}", "a".repeat(253))).is_ok());
    }
}
