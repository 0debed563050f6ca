#!/usr/bin/env bash
# End-to-end run: builds the local cluster's programs (../tools/build.sh) and
# rollouts-render (cargo; skipped when ROLLOUTS_RENDER names a binary), then
# runs this Go module's tests against them. Extra arguments go to `go test`
# (for example: -run TestStepPlugin).
# Works from a clean clone; needs only Go, cargo and the module proxy.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tools="$here/../tools"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export E2E_BIN="${E2E_BIN:-$tools/bin}"

t0=$SECONDS
bash "$tools/build.sh"

if [ -z "${ROLLOUTS_RENDER:-}" ] && [ -f "$repo/Cargo.toml" ]; then
	t1=$SECONDS
	locked=()
	[ -f "$repo/Cargo.lock" ] && locked=(--locked)
	(cd "$repo" && nice -n 10 cargo build --release "${locked[@]}" --bin rollouts-render)
	echo "build: rollouts-render $((SECONDS - t1))s" >&2
	export ROLLOUTS_RENDER="$repo/target/release/rollouts-render"
fi

# kubectl runs the README's terminal commands (apply --server-side -k, delete
# --cascade=orphan): the one on PATH, else built from the conformance module,
# which the control plane is built from too (as .ci/run does).
if [ -z "${E2E_KUBECTL:-}" ]; then
	E2E_KUBECTL="$(command -v kubectl || true)"
	if [ -z "$E2E_KUBECTL" ]; then
		(cd "$here/.." && nice -n 10 go build -buildvcs=false -ldflags "-s -w" \
			-o "$E2E_BIN/kubectl" k8s.io/kubernetes/cmd/kubectl)
		E2E_KUBECTL="$E2E_BIN/kubectl"
	fi
fi
export E2E_KUBECTL
"$E2E_KUBECTL" version --client >&2

export TEST_ASSET_KUBE_APISERVER="$E2E_BIN/kube-apiserver"
export TEST_ASSET_ETCD="$E2E_BIN/etcd"
# The RolloutManagers the tests render (file://plugins/<binary> locations).
export E2E_TESTDATA="$repo/testdata/e2e"

# CRDs and upstream's install manifests come from the pinned modules in the
# module cache (read-only there; nothing is copied into the repo). `go mod
# download` fetches a module of the build list if needed and prints where it is.
moddir() { (cd "$1" && go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
rollouts_v1_9="$(moddir "$here/.." github.com/argoproj/argo-rollouts)"
rollouts_v1_10="$(GOTOOLCHAIN=go1.26.10 moddir "$tools/argo-rollouts-v1.10" github.com/argoproj/argo-rollouts)"
gateway_dir="$(moddir "$here" sigs.k8s.io/gateway-api)"
# Modules no tools module builds: downloaded outside any module (nothing is
# added to a go.mod). Argo CD's Application CRD checks deploy/application.yaml;
# the prometheus-operator's ServiceMonitor CRD takes the rendered ServiceMonitor.
download() {
	local tmp dir
	tmp="$(mktemp -d)"
	dir="$(cd "$tmp" && GOFLAGS= go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	rmdir "$tmp"
	echo "$dir"
}
argocd_dir="$(download github.com/argoproj/argo-cd/v3@v3.2.5)"
promop_dir="$(download github.com/prometheus-operator/prometheus-operator@v0.85.0)"
for d in "$rollouts_v1_9" "$rollouts_v1_10" "$gateway_dir" "$argocd_dir" "$promop_dir"; do
	[ -d "$d" ] || { echo "run.sh: module directories not found" >&2; exit 2; }
done
# Each release's controller and plugins are in $E2E_BIN/<version>/ (build.sh).
export E2E_ROLLOUTS_MODULES="$rollouts_v1_9:$rollouts_v1_10"
# CRDs every test cluster gets besides the release's own.
export E2E_CRD_DIRS="$gateway_dir/config/crd/standard"
export E2E_ARGOCD_CRDS="$argocd_dir/manifests/crds"
export E2E_SERVICEMONITOR_CRD="$promop_dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"

echo "build: all $((SECONDS - t0))s" >&2
cd "$here"
# Every test has its own control plane and controllers and calls t.Parallel:
# most of a test's time is spent waiting for the controller (leases, requeues),
# so a few share the two cores. E2E_PARALLEL=1 runs them one at a time.
nice -n 10 go test -buildvcs=false -count=1 -timeout 40m -parallel "${E2E_PARALLEL:-3}" -v ./... "$@"
