//! In-process benchmarks of the pipeline (criterion). Whole-process timings against peers are
//! in `scripts/bench.sh`.
//!
//! Run with `cargo bench --bench render`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rollouts_render::commands::{self as app, render::run};
use rollouts_render::{Format, Inputs, Options, Source, emit};
use serde_json::{Value as Json, json};

const EMPTY: &str = "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
  namespace: argo-rollouts
spec: {}
";

/// A namespace-scoped manager with one plugin and its rules, in namespace `team-<i>`.
fn manager(i: usize) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
  namespace: team-{i}
spec:
  namespaceScoped: true
  plugins:
    trafficManagement:
    - name: argoproj-labs/gatewayAPI
      location: https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi/releases/download/v0.4.0/gatewayapi-plugin-linux-amd64
      sha256: d00ce783dc0eb30ac2e203bdfdac5300a4b47695267a7fa57474e0a4a7376afe
      rules:
      - apiGroups: [gateway.networking.k8s.io]
        resources: [httproutes, grpcroutes, tcproutes, tlsroutes]
        verbs: [get, list, update, patch]
"
    )
}

fn stream(count: usize) -> String {
    (0..count).map(manager).collect::<Vec<_>>().join("---\n")
}

/// Validates and renders, writing into memory: everything `render` does but the process.
fn render(text: &str) -> usize {
    let inputs = Inputs::from(vec![Source::new("bench.yaml", text)]);
    let outcome = run(&inputs, &Options::default(), true);
    assert_eq!(outcome.status, app::SUCCESS);
    let mut out = Vec::with_capacity(64 * 1024);
    outcome.write_output(&mut out).unwrap();
    out.len()
}

fn single(c: &mut Criterion) {
    let full = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/rolloutmanager.yaml"
    ))
    .unwrap();
    let mut group = c.benchmark_group("one RolloutManager");
    group.bench_function("spec {}", |b| b.iter(|| render(black_box(EMPTY))));
    group.bench_function("full (examples/rolloutmanager.yaml)", |b| {
        b.iter(|| render(black_box(&full)))
    });
    group.finish();
}

fn streams(c: &mut Criterion) {
    let mut group = c.benchmark_group("one stream");
    for count in [100, 10_000] {
        let text = stream(count);
        group.throughput(Throughput::Elements(count as u64));
        if count > 1000 {
            group.sample_size(10);
        }
        group.bench_function(format!("{count} RolloutManagers"), |b| {
            b.iter(|| render(black_box(&text)))
        });
    }
    group.finish();
}

/// The emitter alone, on one large object: a ConfigMap of 5,000 entries with YAML 1.1
/// look-alikes, multi-line and long values.
fn emitter(c: &mut Criterion) {
    let data: serde_json::Map<String, Json> = (0..5000)
        .map(|i| {
            let value = match i % 4 {
                0 => json!("yes"),
                1 => json!(format!("line {i}\nsecond line\n")),
                2 => json!(format!("https://example.com/{}", "x".repeat(120))),
                _ => json!(format!("value-{i}")),
            };
            (format!("key-{i:05}"), value)
        })
        .collect();
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "large"}, "data": data});
    c.bench_function("emit a 5,000-entry ConfigMap", |b| {
        b.iter_batched(
            || object.clone(),
            |o| emit::stream(black_box(&[o]), Format::Yaml).len(),
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, single, streams, emitter);
criterion_main!(benches);
