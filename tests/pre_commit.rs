//! The `rollouts-render-validate` hook of `.pre-commit-hooks.yaml`, run by the real
//! pre-commit in a temporary Git repository: a valid commit passes, an invalid one is refused
//! with the located message, and files without a RolloutManager are not judged.
//!
//! pre-commit builds the hook from a repository (`language: rust`: `cargo install`), so the
//! test makes one from this working tree's sources. The build goes to `target/pre-commit/`
//! (`CARGO_TARGET_DIR`, kept between runs), unoptimised: the hook's wiring is under test here,
//! not the release profile, whose fat LTO made this one build cost over two minutes in CI.
//! The pre-commit used is `RR_PRE_COMMIT`, else `pre-commit` on PATH; without one the test is
//! skipped and says so (`.ci/run` installs pre-commit from PyPI and runs this test).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "rollouts-render-pre-commit-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap()
}

fn git_ok(dir: &Path, args: &[&str]) -> String {
    let output = git(dir, args);
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A Git repository holding what pre-commit needs to build the hook: the crate's sources
/// as they are in this working tree, and `.pre-commit-hooks.yaml`.
fn hook_repository(at: &Path) -> String {
    std::fs::create_dir_all(at).unwrap();
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        ".pre-commit-hooks.yaml",
        "LICENSE",
    ] {
        std::fs::copy(common::repo_path(file), at.join(file)).unwrap();
    }
    for dir in ["src", "benches"] {
        copy_tree(&common::repo_path(dir), &at.join(dir));
    }
    git_ok(at, &["init", "-q"]);
    git_ok(at, &["add", "-A"]);
    git_ok(at, &["commit", "-q", "-m", "hooks"]);
    git_ok(at, &["rev-parse", "HEAD"]).trim().to_owned()
}

fn pre_commit() -> Option<PathBuf> {
    let candidate = std::env::var_os("RR_PRE_COMMIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("pre-commit"));
    match Command::new(&candidate).arg("--version").output() {
        Ok(output) if output.status.success() => Some(candidate),
        Ok(output) => panic!(
            "{} --version: {}",
            candidate.display(),
            text(&output.stderr)
        ),
        Err(error) => {
            // Straight to stderr, past the test harness's capture, so the skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED the_hook_refuses_an_invalid_commit_and_passes_a_valid_one: no pre-commit ({}: {error}); set RR_PRE_COMMIT or put pre-commit on PATH",
                candidate.display()
            );
            None
        }
    }
}

const VALID: &str = "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    metric:
    - name: argoproj-labs/sample-prometheus
      location: https://github.com/argoproj-labs/rollouts-plugin-metric-sample-prometheus/releases/download/v0.0.4/metric-plugin-linux-amd64
      sha256: d00ce783dc0eb30ac2e203bdfdac5300a4b47695267a7fa57474e0a4a7376afe
";

/// Files pre-commit passes to the hook that are no RolloutManager, and none of them a
/// Kubernetes object: were they judged, `validate` would refuse them.
const UNRELATED: [(&str, &str); 2] = [
    (
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
    ),
    ("charts/values.yaml", "controller:\n  replicas: 2\n"),
];

#[test]
fn the_hook_refuses_an_invalid_commit_and_passes_a_valid_one() {
    let Some(pre_commit) = pre_commit() else {
        return;
    };
    let dir = TempDir::new("hook");
    let rev = hook_repository(&dir.0.join("hooks"));
    let work = dir.0.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git_ok(&work, &["init", "-q"]);
    std::fs::write(
        work.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {}\n  rev: {rev}\n  hooks:\n  - id: rollouts-render-validate\n",
            dir.0.join("hooks").display()
        ),
    )
    .unwrap();
    // pre-commit's own cache stays inside the test's directory; the cargo build it runs goes
    // to a target directory of its own under the project's, kept, so that a second run builds
    // only the crate (its sources are at a new path each run). `cargo install` builds the
    // release profile: here without optimisation and LTO, which costs a fraction of the time
    // and runs the same code.
    let run_env = |command: &mut Command| {
        command
            .env("PRE_COMMIT_HOME", dir.0.join("cache"))
            .env("CARGO_TARGET_DIR", common::repo_path("target/pre-commit"))
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
            .env_remove("NO_COLOR")
            .env("PRE_COMMIT_COLOR", "never");
    };
    let mut install = Command::new(&pre_commit);
    install.current_dir(&work).arg("install");
    run_env(&mut install);
    let installed = install.output().unwrap();
    assert!(installed.status.success(), "{}", text(&installed.stderr));

    let commit = |message: &str| {
        let mut command = Command::new("git");
        command
            .current_dir(&work)
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args(["-c", "commit.gpgsign=false", "commit", "-q", "-m", message]);
        run_env(&mut command);
        command.output().unwrap()
    };

    // A valid manager, beside files that are no Kubernetes manifests at all.
    std::fs::create_dir_all(work.join("apps/rollouts")).unwrap();
    std::fs::write(work.join("apps/rollouts/rolloutmanager.yaml"), VALID).unwrap();
    for (file, content) in UNRELATED {
        let path = work.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    git_ok(&work, &["add", "-A"]);
    let passed = commit("a valid RolloutManager");
    assert_eq!(
        passed.status.code(),
        Some(0),
        "{}{}",
        text(&passed.stdout),
        text(&passed.stderr)
    );
    assert_eq!(git_ok(&work, &["rev-list", "--count", "HEAD"]).trim(), "1");

    // A SHA-1 digest where the controller checks SHA-256: refused, with the message at its
    // line and column.
    std::fs::write(
        work.join("apps/rollouts/rolloutmanager.yaml"),
        VALID.replace(
            "d00ce783dc0eb30ac2e203bdfdac5300a4b47695267a7fa57474e0a4a7376afe",
            "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        ),
    )
    .unwrap();
    git_ok(&work, &["add", "-A"]);
    let refused = commit("a broken RolloutManager");
    assert_eq!(refused.status.code(), Some(1));
    let output = text(&refused.stdout) + &text(&refused.stderr);
    let message = "apps/rollouts/rolloutmanager.yaml:10:15: error: spec.plugins.metric[0].sha256: looks like a SHA-1 digest (40 hex characters), but the controller checks SHA-256 (64 lowercase hex characters) and would refuse the plugin\n  hint: compute it with `sha256sum <plugin binary>`, or take it from the release's checksums file\n";
    // pre-commit's frame around the hook's output: its name, the verdict, the hook id and
    // exit code, then what the hook printed.
    let expected = format!(
        "rollouts-render validate.................................................Failed\n- hook id: rollouts-render-validate\n- exit code: 1\n\n{message}\n"
    );
    assert!(output.ends_with(&expected), "{output}");
    assert_eq!(
        git_ok(&work, &["rev-list", "--count", "HEAD"]).trim(),
        "1",
        "no commit was made"
    );
}
