//! Snapshot tests: every `testdata/*.yaml` renders to exactly `snapshots/render@<file>.snap`.

mod common;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(common::repo_path("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

#[test]
fn render() {
    settings().bind(|| {
        insta::glob!("../testdata", "*.yaml", |path| {
            let output = common::render_case(path)
                .unwrap_or_else(|errors| panic!("{} does not render:\n{errors}", path.display()));
            insta::assert_snapshot!(output);
        });
    });
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    for path in common::cases("testdata") {
        assert_eq!(
            common::render_case(&path),
            common::render_case(&path),
            "{}",
            path.display()
        );
    }
}

fn checksum(case: &str) -> String {
    let output = common::render_case(&common::repo_path(case)).expect("renders");
    let line = output
        .lines()
        .find(|line| {
            line.trim_start()
                .starts_with("checksum/argo-rollouts-config:")
        })
        .expect("checksum annotation");
    line.rsplit(' ').next().unwrap().to_owned()
}

#[test]
fn the_checksum_follows_plugin_changes_only() {
    let base = checksum("testdata/plugins-base.yaml");
    let added = checksum("testdata/plugins-added.yaml");
    let changed = checksum("testdata/plugins-changed.yaml");
    let removed = checksum("testdata/plugins-removed.yaml");
    assert_ne!(base, added);
    assert_ne!(base, changed);
    assert_ne!(added, changed);
    assert_ne!(base, removed);
    // No plugins is no plugins, whatever else the spec says.
    assert_eq!(removed, checksum("testdata/minimal.yaml"));
    assert_eq!(removed, checksum("testdata/ha.yaml"));
    assert_eq!(removed, checksum("testdata/additional-metadata.yaml"));
}
