//! Hostile input never panics or hangs and never produces partial output: it ends in exit
//! status 1 with a located diagnostic (or 2 when the operating system refuses a read).

mod common;

use std::path::PathBuf;
use std::process::Output;

use assert_cmd::Command;
use proptest::prelude::*;
use rollouts_render::{Options, Source, pipeline};

fn render_stdin(input: impl Into<Vec<u8>>) -> Output {
    Command::cargo_bin("rollouts-render")
        .unwrap()
        .arg("render")
        .write_stdin(input.into())
        .output()
        .unwrap()
}

fn assert_rejected(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in:\n{stderr}"
    );
    assert!(stderr.starts_with("<stdin>:"), "not located:\n{stderr}");
}

const HEADER: &str = "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: n\n";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rollouts-render-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn deep_nesting() {
    assert_rejected(&render_stdin("[".repeat(100_000)), "invalid YAML");
    let block: String = (0..100_000)
        .map(|i| format!("{}k:\n", " ".repeat(i % 300)))
        .collect();
    assert_rejected(&render_stdin(block), "invalid YAML");
}

#[test]
fn alias_bomb() {
    let mut input = String::from(HEADER);
    input.push_str(
        "  annotations:\n    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..12 {
        input.push_str(&format!(
            "    a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    assert_rejected(&render_stdin(input), "alias bomb");
}

#[test]
fn a_huge_document_hits_the_input_cap() {
    let dir = temp_dir("huge");
    let path = dir.join("huge.yaml");
    let mut input = String::from(HEADER);
    input.push_str("spec:\n  extraCommandArgs:\n");
    let line = format!("  - {}\n", "x".repeat(1000));
    input.push_str(&line.repeat(100 * 1024 * 1024 / line.len()));
    std::fs::write(&path, input).unwrap();
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .args(["render", path.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("larger than the limit of --max-input-bytes")
    );
}

#[test]
fn bytes_that_are_not_yaml_text() {
    assert_rejected(
        &render_stdin(b"apiVersion: v1\nkind: \xc3\x28\n".to_vec()),
        "not valid UTF-8",
    );
    assert_rejected(
        &render_stdin(b"apiVersion: v1\nkind: a\0b\n".to_vec()),
        "invalid YAML",
    );
    assert_rejected(
        &render_stdin("apiVersion: v1\nkind: X\nmetadata:\n\tname: x\n"),
        "invalid YAML",
    );
}

#[test]
fn shapes_that_are_not_objects() {
    assert_rejected(
        &render_stdin(r#"[{"apiVersion": "v1", "kind": "Namespace"}]"#),
        "found a list",
    );
    assert_rejected(&render_stdin("just a string\n"), "found a scalar");
    assert_rejected(
        &render_stdin(format!("{HEADER}  ? [a, b]\n  : c\n")),
        "mapping keys must be strings",
    );
    assert_rejected(
        &render_stdin(format!("{HEADER}spec: !!binary aGVsbG8=\n")),
        "unsupported YAML tag",
    );
    assert_rejected(
        &render_stdin("apiVersion: v1\nkind: ConfigMap\nmetadata: !custom {name: x}\n"),
        "unsupported YAML tag",
    );
}

#[test]
fn unreadable_inputs_are_io_errors() {
    let dir = temp_dir("unreadable");
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("missing"), dir.join("dangling.yaml")).unwrap();
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .args(["render", dir.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}

#[test]
fn an_empty_directory_is_named_in_the_error() {
    let dir = temp_dir("empty");
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .args(["render", dir.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!("no RolloutManager found in {}", dir.display())),
        "{stderr}"
    );
}

/// A mutation of a valid file: bytes deleted, inserted or replaced, lines duplicated,
/// indentation changed.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, String),
    Replace(usize, char),
    DuplicateLine(usize),
    Indent(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let fragments = prop::sample::select(vec![
        ":", " ", "\n", "- ", "{", "}", "[", "]", "\"", "'", "&a ", "*a", "<<: ", "!!str ", "#",
        "\t", "~", "yes", "0x1", "---\n", "? ",
    ]);
    prop_oneof![
        (any::<usize>(), 1..20usize).prop_map(|(at, len)| Mutation::Delete(at, len)),
        (any::<usize>(), fragments.prop_map(str::to_owned))
            .prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Mutation::Replace(at, c)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), 0..6usize).prop_map(|(line, width)| Mutation::Indent(line, width)),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| i % (chars.len() + 1);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    match mutation {
        Mutation::Delete(i, len) => {
            let start = at(*i);
            let end = (start + len).min(chars.len());
            chars[..start].iter().chain(&chars[end..]).collect()
        }
        Mutation::Insert(i, s) => {
            let start = at(*i);
            chars[..start].iter().collect::<String>()
                + s
                + &chars[start..].iter().collect::<String>()
        }
        Mutation::Replace(i, c) => {
            let mut chars = chars.clone();
            if !chars.is_empty() {
                let index = i % chars.len();
                chars[index] = *c;
            }
            chars.into_iter().collect()
        }
        Mutation::DuplicateLine(i) => {
            if !lines.is_empty() {
                let index = i % lines.len();
                lines.insert(index, lines[index].clone());
            }
            lines.join("\n")
        }
        Mutation::Indent(i, width) => {
            if !lines.is_empty() {
                let index = i % lines.len();
                let trimmed = lines[index].trim_start().to_owned();
                lines[index] = format!("{}{trimmed}", " ".repeat(*width));
            }
            lines.join("\n")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the mutation, the pipeline either renders (and what it renders parses back) or
    /// reports at least one error; it never panics, and an error never comes with output.
    #[test]
    fn mutated_valid_files_never_panic(
        case in prop::sample::select(common::cases("testdata")),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut text = std::fs::read_to_string(&case).unwrap();
        for m in &mutations {
            text = apply(&text, m);
        }
        let options = Options { namespace: Some("fallback".into()), ..Options::default() };
        let inputs = vec![Source::new("mutated.yaml", text)].into();
        match pipeline::render(&inputs, &options) {
            Ok(rendered) => {
                prop_assert!(!rendered.warnings.has_errors());
                let documents: Vec<_> = rendered.documents().collect();
                let out = rollouts_render::emit::stream(&documents, options.format);
                let back: Result<Vec<serde_json::Value>, _> = serde_saphyr::from_multiple(&out);
                prop_assert!(back.is_ok(), "output does not parse back:\n{out}");
            }
            Err(diagnostics) => prop_assert!(diagnostics.has_errors()),
        }
    }
}
