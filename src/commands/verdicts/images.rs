//! The rules of image plugins with a Go counterpart: image references as the kubelet reads
//! them (`reference.ParseNormalizedNamed` of github.com/distribution/reference), and the
//! Kubernetes version as Argo CD reads the cluster's (`version.ParseGeneric`), with their
//! corpus generators.

use serde_json::{Value as Json, json};

use super::accept;
use super::corpus::{Rng, random_string};
use crate::options::KubeVersion;
use crate::validate::image;

/// The verdict of `image-reference` or `kube-version` on `input`.
pub(super) fn verdict(rule: &str, input: &str) -> Option<Json> {
    Some(match rule {
        "image-reference" => match image::parse(input) {
            Ok(reference) => {
                let mut verdict = json!({"accept": true, "name": reference.name()});
                if let Some(tag) = reference.tag {
                    verdict["tag"] = json!(tag);
                }
                if let Some(digest) = reference.digest {
                    verdict["digest"] = json!(digest);
                }
                verdict
            }
            Err(_) => accept(false),
        },
        "kube-version" => match KubeVersion::parse(input) {
            Ok(version) => json!({
                "accept": true,
                "major": version.major.to_string(),
                "minor": version.minor.to_string(),
            }),
            Err(_) => accept(false),
        },
        _ => return None,
    })
}

/// An image reference: registry, path components, tag and digest, each mostly valid and
/// sometimes broken at an edge (case, separators, lengths, digest algorithm and size), so
/// that about half the corpus is accepted.
pub(super) fn image_reference(rng: &mut Rng) -> String {
    let host = match rng.below(10) {
        0 | 1 => String::new(),
        2 => "localhost/".to_owned(),
        3 => format!(
            "{}/",
            rng.pick(&["[::1]", "[fe80::1]", "[::1]:5000", "[]", "[::1", "[::1]x"])
        ),
        4 => format!(
            "{}{}/",
            rng.pick(&[
                "Registry.Example",
                "REG",
                "a_b.c",
                "-x.io",
                "x-.io",
                "index.docker.io",
                "a..b",
                "Up"
            ]),
            rng.pick(&["", "", ":5000", ":", ":x"])
        ),
        _ => format!(
            "{}{}/",
            rng.pick(&[
                "ghcr.io",
                "quay.io",
                "registry.example.com",
                "10.0.0.1",
                "docker.io",
                "my-registry.local",
                "r:5000"
            ]),
            rng.pick(&["", "", "", ":5000", ":443"])
        ),
    };
    let components = 1 + rng.below(3);
    let path: Vec<String> = (0..components)
        .map(|_| match rng.below(12) {
            0 => "p".repeat(120 + rng.below(20)),
            1 => random_string(
                rng,
                &[
                    "a", "z", "0", "-", "--", ".", "_", "__", "___", "A", "é", " ", "..",
                ],
                6,
            ),
            _ => {
                let mut component = random_string(rng, &["a", "b", "z", "0", "9"], 5);
                if component.is_empty() {
                    component.push('x');
                }
                if rng.chance(40) {
                    component.push_str(rng.pick(&[".", "_", "__", "-", "--"]));
                    component.push_str(rng.pick(&["x", "plugin", "1", "v2"]));
                }
                component
            }
        })
        .collect();
    let tag = match rng.below(10) {
        0..=3 => String::new(),
        4 => format!(
            ":{}",
            random_string(rng, &["v", "1", ".", "-", "_", "A", ":", "/", "+"], 6)
        ),
        5 => format!(":{}", "t".repeat(125 + rng.below(6))),
        _ => format!(
            ":{}",
            rng.pick(&["v1.2.3", "latest", "1", "V_1", "0.15.0-rc.1", "_x"])
        ),
    };
    let digest = match rng.below(10) {
        0..=4 => String::new(),
        5 | 6 => format!(
            "@{}:{}",
            rng.pick(&[
                "sha256",
                "sha256",
                "sha512",
                "sha384",
                "md5",
                "SHA256",
                "sha256+b64",
                "1sha",
                ""
            ]),
            rng.pick(&["0", "a", "f", "F", "g"]).repeat(
                rng.pick(&["32", "64", "64", "96", "128", "63", "65"])
                    .parse()
                    .unwrap_or(64)
            )
        ),
        _ => format!("@sha256:{}", "0123456789abcdef".repeat(4)),
    };
    let mut s = format!("{host}{}{tag}{digest}", path.join("/"));
    if rng.chance(2) {
        s = "0123456789abcdef".repeat(4);
    }
    if rng.chance(4) {
        let at = rng.below(s.chars().count() + 1);
        let at = s.char_indices().nth(at).map_or(s.len(), |(i, _)| i);
        s.insert_str(at, rng.pick(&["@", ":", "/", " ", "\n"]));
    }
    s
}

pub(super) fn kube_version(rng: &mut Rng) -> String {
    let numbers = if rng.chance(60) {
        format!(
            "{}.{}{}",
            rng.pick(&["1", "1", "1", "2", "0", "01"]),
            rng.pick(&["29", "30", "33", "34", "35", "36", "035", "0"]),
            rng.pick(&["", "", ".2", ".10", "."])
        )
    } else {
        random_string(rng, &["1", "0", "3", "5", "9", ".", "."], 7)
    };
    format!(
        "{}{numbers}{}{}",
        rng.pick(&["", "", "", "v", " ", "\t", "\n", "V", "vv"]),
        rng.pick(&[
            "",
            "",
            "",
            "+",
            "-gke.100",
            ".x",
            "\n",
            " ",
            "99999999999999999999"
        ]),
        rng.pick(&["", "", "", "", "a", "\n1"]),
    )
}
