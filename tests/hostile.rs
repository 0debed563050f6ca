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

/// Refused with exactly this stderr (every message names `<stdin>` and a position), exit
/// status 1 and nothing on stdout.
fn assert_rejected(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(stderr, expected);
}

const HEADER: &str = "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: n\n";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rollouts-render-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn deep_nesting() {
    assert_rejected(
        &render_stdin("[".repeat(100_000)),
        "<stdin>:1:201: error: invalid YAML: recursion limit exceeded\n",
    );
    let block: String = (0..100_000)
        .map(|i| format!("{}k:\n", " ".repeat(i % 300)))
        .collect();
    assert_rejected(
        &render_stdin(block),
        "<stdin>:201:201: error: invalid YAML: recursion limit exceeded\n",
    );
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
    assert_rejected(
        &render_stdin(input),
        "<stdin>:12:34: error: the input expands to more than 32 MiB of YAML (aliases counted as often as they are used); refusing to read further\n  hint: this looks like an alias bomb; write the values out instead of nesting aliases, or render fewer files at once\n",
    );
}

/// The budget is the run's, not each file's: files that are each well within it are refused
/// together once they add up past it (and the files after are not read).
#[test]
fn aliases_over_many_files_share_one_budget() {
    let dir = temp_dir("alias-files");
    let list = vec!["lol"; 1000].join(", ");
    let aliases = vec!["*a"; 50].join(", ");
    for i in 0..16 {
        let text = format!(
            "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\nx: &a [{list}]\ny: [{aliases}]\n",
            if i == 0 { HEADER } else { "" }
        );
        std::fs::write(dir.join(format!("{i:02}.yaml")), text).unwrap();
    }
    let single = Command::cargo_bin("rollouts-render")
        .unwrap()
        .args(["render", "--allow-empty"])
        .arg(dir.join("15.yaml"))
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(0), "one file alone is accepted");
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .arg("render")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.contains("09.yaml:6:") && stderr.contains("expands to more than 32 MiB of YAML"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
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
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "{}: error: the input is larger than the limit of --max-input-bytes\n  hint: split the input, or raise the limit with `--max-input-bytes`\n",
            path.display()
        )
    );
}

#[test]
fn bytes_that_are_not_yaml_text() {
    assert_rejected(
        &render_stdin(b"apiVersion: v1\nkind: \xc3\x28\n".to_vec()),
        "<stdin>:2:7: error: the input is not valid UTF-8\n  hint: save the file as UTF-8\n",
    );
    assert_rejected(
        &render_stdin(b"apiVersion: v1\nkind: a\0b\n".to_vec()),
        "<stdin>:2:8: error: invalid YAML: unexpected character: `\\u{0}'\n",
    );
    assert_rejected(
        &render_stdin("apiVersion: v1\nkind: X\nmetadata:\n\tname: x\n"),
        "<stdin>:4:2: error: invalid YAML: tabs disallowed within this context (block indentation)\n",
    );
}

#[test]
fn shapes_that_are_not_objects() {
    assert_rejected(
        &render_stdin(r#"[{"apiVersion": "v1", "kind": "Namespace"}]"#),
        "<stdin>:1:1: error: expected a Kubernetes object (a mapping with `apiVersion` and `kind`), found a list\n",
    );
    assert_rejected(
        &render_stdin("just a string\n"),
        "<stdin>:1:1: error: expected a Kubernetes object (a mapping with `apiVersion` and `kind`), found a scalar\n",
    );
    assert_rejected(
        &render_stdin(format!("{HEADER}  ? [a, b]\n  : c\n")),
        "<stdin>:6:5: error: a list as a key: Kubernetes' YAML reader refuses the document\n  hint: keys are strings\n",
    );
    assert_rejected(
        &render_stdin(format!("{HEADER}spec: !!binary aGVsbG8=\n")),
        "<stdin>:6:16: error: spec: unsupported YAML tag `!!binary`: Kubernetes would decode it from base64; write the value it should get, without the tag\n",
    );
    assert_rejected(
        &render_stdin("apiVersion: v1\nkind: ConfigMap\nmetadata: !custom {name: x}\n"),
        "<stdin>:3:19: error: metadata: unsupported YAML tag `!custom`: Kubernetes would ignore the tag and read the value as if it had none; write the value it should get, without the tag\n",
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
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: {}: No such file or directory (os error 2)\n",
            dir.join("dangling.yaml").display()
        )
    );
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
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: no RolloutManager found in {}\n  hint: an empty render would make Argo CD prune the installation; pass --allow-empty if that is really meant\n",
            dir.display()
        )
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

    /// Whatever the mutation, the pipeline never panics, and gives the same answer twice: it
    /// renders (and what it renders parses back), or every error it reports says where in the
    /// file it is (only "no RolloutManager" is about the input as a whole).
    #[test]
    fn mutated_valid_files_never_panic(
        case in prop::sample::select(common::cases("testdata")),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut text = std::fs::read_to_string(&case).unwrap();
        for m in &mutations {
            text = apply(&text, m);
        }
        let options = Options { namespace: rollouts_render::options::Namespace::parse("fallback").ok(), ..Options::default() };
        let inputs = vec![Source::new("mutated.yaml", text)].into();
        let first = pipeline::render(&inputs, &options);
        match &first {
            Ok(rendered) => {
                let documents: Vec<_> = rendered.documents().collect();
                let out = rollouts_render::emit::stream(&documents, options.format);
                let back: Result<Vec<serde_json::Value>, _> = serde_saphyr::from_multiple(&out);
                prop_assert!(back.is_ok(), "output does not parse back:\n{out}");
            }
            Err(diagnostics) => {
                for error in diagnostics.iter().filter(|d| d.is_error()) {
                    let located = error
                        .location
                        .as_ref()
                        .is_some_and(|l| &*l.source == "mutated.yaml" && l.pos.is_some());
                    prop_assert!(
                        located || error.message.starts_with("no RolloutManager found in"),
                        "an error without a position: {error}"
                    );
                }
            }
        }
        let second = pipeline::render(&inputs, &options);
        match (&first, &second) {
            (Ok(a), Ok(b)) => prop_assert_eq!(
                a.documents().collect::<Vec<_>>(),
                b.documents().collect::<Vec<_>>()
            ),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "two runs disagree on success"),
        }
    }
}

/// A directory is read like a user expects: a FIFO named like a manifest is skipped with a
/// warning (reading it would block forever), and a dangling link that is not a manifest is
/// not looked at.
#[cfg(unix)]
#[test]
fn special_files_in_a_directory_are_skipped() {
    let dir = temp_dir("special");
    std::fs::write(dir.join("rm.yaml"), HEADER).unwrap();
    let fifo = dir.join("x.yaml");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink(dir.join("missing"), dir.join("notes.txt")).unwrap();
    let output = Command::cargo_bin("rollouts-render")
        .unwrap()
        .args(["render", dir.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!output.stdout.is_empty());
    assert_eq!(
        stderr,
        format!(
            "warning: {}: not read: not a regular file (a FIFO, socket or device), which could block the read\n  hint: name it on the command line to read it anyway\n",
            fifo.display()
        )
    );
}

/// A huge value is not echoed whole (Argo CD keeps stderr in the Application's status): the
/// message keeps the location and the start of the value.
#[test]
fn huge_values_are_not_echoed_whole() {
    let value = "v".repeat(1 << 20);
    let input = format!("{HEADER}spec:\n  additionalMetadata:\n    labels:\n      team: {value}\n");
    let output = render_stdin(input);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.len() < 1000, "{} bytes of stderr", stderr.len());
    assert!(
        stderr.starts_with("<stdin>:9:13: error: spec.additionalMetadata.labels.team: "),
        "{stderr}"
    );
    assert!(stderr.contains("vvvv…` (1048576 bytes)"), "{stderr}");
}
