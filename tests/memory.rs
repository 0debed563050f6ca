//! The memory bound the README states ("Limits"): the worst input shapes the limits let
//! through stay under it, and slightly more of each is refused. Peak memory is measured as the
//! kernel records it for the child process (`wait4`'s maximum resident set size).

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};

/// The README's bound: the Argo CD sidecar's limit is 256 MiB (deploy/), and this leaves room
/// for the rest of the process and the sidecar's other work.
const BOUND_KIB: i64 = 192 * 1024;

const MIB: usize = 1024 * 1024;

const MANAGER: &str = "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: r\n  namespace: n\n";
const CONFIG_MAP: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\n";

/// Each shape at a size `n`: the largest accepted one is measured, and about a tenth more is
/// refused, so the limits (not the machine) are what hold memory down.
struct Shape {
    name: &'static str,
    accepted: usize,
    refused: usize,
    build: fn(usize) -> String,
}

const SHAPES: [Shape; 8] = [
    Shape {
        name: "many small documents",
        accepted: 70_000,
        refused: 78_000,
        build: |n| {
            let docs: String = (0..n)
                .map(|i| {
                    format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a{i}}}\n")
                })
                .collect();
            format!("{MANAGER}{docs}")
        },
    },
    Shape {
        name: "one long string",
        accepted: 16 * MIB - 200,
        refused: 16 * MIB + 200,
        build: |n| format!("{MANAGER}{CONFIG_MAP}data:\n  k: {}\n", "x".repeat(n)),
    },
    Shape {
        name: "many strings",
        accepted: 16_000,
        refused: 17_000,
        build: |n| {
            let entries: String = (0..n)
                .map(|i| format!("  k{i:05}: {}\n", "x".repeat(1000)))
                .collect();
            format!("{MANAGER}{CONFIG_MAP}data:\n{entries}")
        },
    },
    Shape {
        name: "a long flow list of tiny nodes",
        accepted: 670_000,
        refused: 740_000,
        build: |n| format!("{MANAGER}{CONFIG_MAP}list: [{}1]\n", "1,".repeat(n)),
    },
    Shape {
        name: "a mapping of many tiny entries",
        accepted: 315_000,
        refused: 350_000,
        build: |n| {
            let entries: String = (0..n).map(|i| format!("  k{i}: v\n")).collect();
            format!("{MANAGER}{CONFIG_MAP}data:\n{entries}")
        },
    },
    Shape {
        name: "aliases of a list",
        accepted: 640,
        refused: 710,
        build: |n| {
            let list = vec!["lol"; 1000].join(",");
            let aliases = vec!["*a"; n].join(",");
            format!("{MANAGER}{CONFIG_MAP}x: &a [{list}]\ny: [{aliases}]\n")
        },
    },
    Shape {
        name: "aliases of a long string",
        accepted: 30,
        refused: 33,
        build: |n| {
            let aliases = vec!["*a"; n].join(",");
            format!(
                "{MANAGER}{CONFIG_MAP}x: &a {}\ny: [{aliases}]\n",
                "y".repeat(MIB)
            )
        },
    },
    Shape {
        name: "deep nesting",
        accepted: 1_750,
        refused: 1_950,
        build: |n| {
            let nested = format!("{}v{}", "{k: ".repeat(190), "}".repeat(190));
            let docs: String = (0..n)
                .map(|j| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: d{j}}}\nx: {nested}\n"))
                .collect();
            format!("{MANAGER}{docs}")
        },
    },
];

/// Renders `input` as a file (so the child reads it as users' files are read): the exit
/// status and the peak resident set size in KiB.
// The child is waited on with `wait4`, which also gives its peak memory.
#[allow(clippy::zombie_processes)]
fn render_peak(dir: &Path, name: &str, input: &str) -> (i32, i64) {
    let path = dir.join(name.replace(' ', "-") + ".yaml");
    std::fs::write(&path, input).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rollouts-render"))
        .arg("render")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: plain system call on our own child, with valid pointers to owned locals; the
    // `Child` is not waited on again.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    std::fs::remove_file(&path).unwrap();
    assert!(libc::WIFEXITED(status), "{name}: the renderer did not exit");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn the_worst_accepted_shapes_stay_under_the_stated_bound() {
    let dir = std::env::temp_dir().join(format!("rollouts-render-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = Vec::new();
    for shape in &SHAPES {
        let (status, peak) = render_peak(&dir, shape.name, &(shape.build)(shape.accepted));
        assert_eq!(
            status, 0,
            "{}: the largest accepted size was refused",
            shape.name
        );
        report.push(format!("{}: {} MiB", shape.name, peak / 1024));
        assert!(
            peak < BOUND_KIB,
            "{}: peak {peak} KiB is over the bound of {BOUND_KIB} KiB",
            shape.name
        );
        let (status, _) = render_peak(&dir, shape.name, &(shape.build)(shape.refused));
        assert_eq!(status, 1, "{}: a tenth more was not refused", shape.name);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Shown with --nocapture: the measurement behind the README's numbers.
    println!("{}", report.join("\n"));
}
