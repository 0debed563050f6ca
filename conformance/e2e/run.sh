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

export TEST_ASSET_KUBE_APISERVER="$E2E_BIN/kube-apiserver"
export TEST_ASSET_ETCD="$E2E_BIN/etcd"
export E2E_ROLLOUTS_CONTROLLER="$E2E_BIN/rollouts-controller"
export E2E_PLUGIN_DIR="$E2E_BIN/plugins"
# The RolloutManagers the tests render (file://plugins/<binary> locations).
export E2E_TESTDATA="$repo/testdata/e2e"

# CRDs and upstream's install.yaml come from the pinned modules in the module
# cache (read-only there; nothing is copied into the repo). `go mod download`
# fetches a module of the build list if needed and prints where it is.
moddir() { (cd "$1" && go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'); }
rollouts_dir="$(moddir "$tools/argo-rollouts" github.com/argoproj/argo-rollouts)"
gateway_dir="$(moddir "$here" sigs.k8s.io/gateway-api)"
[ -d "$rollouts_dir" ] && [ -d "$gateway_dir" ] || { echo "run.sh: module directories not found" >&2; exit 2; }
export E2E_CRD_DIRS="$rollouts_dir/manifests/crds:$gateway_dir/config/crd/standard"
export E2E_UPSTREAM_INSTALL="$rollouts_dir/manifests/install.yaml"

echo "build: all $((SECONDS - t0))s" >&2
cd "$here"
nice -n 10 go test -buildvcs=false -count=1 -timeout 40m -v ./... "$@"
