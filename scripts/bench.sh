#!/usr/bin/env bash
# Whole-process timings of rollouts-render against the tool a user would otherwise run, on
# this machine. Run by hand (not in CI):
#
#   scripts/bench.sh            # prints a Markdown table and the ratios, measured in one run
#
# Needs hyperfine (installed from Debian's packages if missing), kubectl with kustomize, and
# Go (upstream's install.yaml is read from the argo-rollouts Go module; nothing is copied
# into the repository). Medians over at least 20 runs after 3 warm-up runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v hyperfine >/dev/null; then
	apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null
fi
command -v kubectl >/dev/null || { echo "bench: kubectl is needed for the kustomize peer" >&2; exit 2; }

(cd "$root" && cargo build --release --locked --quiet)
bin=$root/target/release/rollouts-render

# Upstream's own install manifests, from the argo-rollouts module (the version the renderer
# reproduces).
module=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json github.com/argoproj/argo-rollouts@v1.9.1 |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -f "$module/manifests/install.yaml" ] || { echo "bench: upstream install.yaml not found" >&2; exit 2; }

# 1. One full RolloutManager, and the peer: upstream's install plus a ConfigMap patch with the
#    same plugins, built by kustomize.
full=$root/examples/rolloutmanager.yaml
mkdir -p "$work/peer"
cp "$module/manifests/install.yaml" "$work/peer/install.yaml"
"$bin" render "$full" 2>/dev/null >"$work/full.out"
"$bin" render -o json "$full" 2>/dev/null | python3 -c '
import json, sys
# The rendered ConfigMap data, as a patch: both commands produce the same configuration.
text, decoder, at = sys.stdin.read(), json.JSONDecoder(), 0
while text[at:].strip():
    doc, end = decoder.raw_decode(text, text.index("{", at))
    at = end
    if doc["kind"] == "ConfigMap":
        patch = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": doc["metadata"]["name"]}, "data": doc["data"]}
        print(json.dumps(patch, indent=2))
' >"$work/peer/plugins-patch.yaml"
cat >"$work/peer/kustomization.yaml" <<'EOF'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: argo-rollouts
resources:
- install.yaml
patches:
- path: plugins-patch.yaml
EOF
kubectl kustomize "$work/peer" >"$work/peer.out"

# 2. Streams of 100 and 10,000 namespace-scoped RolloutManagers, each with a plugin and its
#    rules.
python3 - "$work" <<'PY'
import sys
def manager(i):
    return f"""apiVersion: argoproj.io/v1alpha1
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
"""
for n in (100, 10000):
    open(f"{sys.argv[1]}/stream-{n}.yaml", "w").write("---\n".join(manager(i) for i in range(n)))
PY
"$bin" render "$work/stream-100.yaml" >"$work/stream-100.out"
"$bin" render "$work/stream-10000.yaml" >"$work/stream-10000.out"

hyperfine -N --warmup 3 --min-runs 30 --style none --export-json "$work/single.json" \
	-n "rollouts-render render (1 full RolloutManager)" "$bin render $full" \
	-n "kubectl kustomize (upstream install + plugin ConfigMap patch)" "kubectl kustomize $work/peer" \
	-n "cat of the rendered output (floor)" "cat $work/full.out" >/dev/null
hyperfine -N --warmup 3 --min-runs 30 --style none --export-json "$work/stream.json" \
	-n "rollouts-render render (100 RolloutManagers)" "$bin render $work/stream-100.yaml" \
	-n "cat of the 100 rendered (floor)" "cat $work/stream-100.out" >/dev/null
hyperfine -N --warmup 1 --min-runs 10 --style none --export-json "$work/large.json" \
	-n "rollouts-render render (10,000 RolloutManagers)" "$bin render $work/stream-10000.yaml" \
	-n "cat of the 10,000 rendered (floor)" "cat $work/stream-10000.out" >/dev/null

rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rss_10k=$(rss "$bin" render "$work/stream-10000.yaml")
rss_1=$(rss "$bin" render "$full")
rss_peer=$(rss kubectl kustomize "$work/peer")

python3 - "$work" "$rss_1" "$rss_peer" "$rss_10k" <<'PY'
import json, os, sys
work, rss_1, rss_peer, rss_10k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def load(name):
    return {r["command"]: r for r in json.load(open(f"{work}/{name}.json"))["results"]}
single, stream, large = load("single"), load("stream"), load("large")
ms = lambda r: r["median"] * 1000
rows = [(name, ms(r), r) for d in (single, stream, large) for name, r in d.items()]
mem = {"rollouts-render render (1 full RolloutManager)": rss_1,
       "kubectl kustomize (upstream install + plugin ConfigMap patch)": rss_peer,
       "rollouts-render render (10,000 RolloutManagers)": rss_10k}
print("| command | median | min | max | peak RSS |")
print("|---|---:|---:|---:|---:|")
for name, median, r in rows:
    peak = f"{mem[name] / 1024:.1f} MiB" if name in mem else ""
    print(f"| {name} | {median:.1f} ms | {r['min']*1000:.1f} ms | {r['max']*1000:.1f} ms | {peak} |")
one = ms(single["rollouts-render render (1 full RolloutManager)"])
peer = ms(single["kubectl kustomize (upstream install + plugin ConfigMap patch)"])
t100 = ms(stream["rollouts-render render (100 RolloutManagers)"])
t10k = ms(large["rollouts-render render (10,000 RolloutManagers)"])
print()
print(f"- kustomize / rollouts-render, one RolloutManager: {peer / one:.1f}x")
print(f"- time per RolloutManager: {t100 / 100 * 1000:.0f} µs at 100, {t10k / 10000 * 1000:.0f} µs at 10,000 (ratio {(t10k / 10000) / (t100 / 100):.2f})")
print(f"- output of the full RolloutManager: {os.path.getsize(f'{work}/full.out')} bytes; of 10,000: {os.path.getsize(f'{work}/stream-10000.out') / 1e6:.1f} MB")
PY
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -sr)"
