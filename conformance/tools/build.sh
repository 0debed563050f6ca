#!/usr/bin/env bash
# Builds the local e2e cluster's programs from pinned Go modules (there is no
# container engine, and release binaries cannot be downloaded):
#   $E2E_BIN/kube-apiserver, $E2E_BIN/etcd          (../go.mod, the conformance module)
#   $E2E_BIN/v1.9.1/rollouts-controller             (../go.mod)
#   $E2E_BIN/v1.9.1/plugins/{metrics-plugin-sample,step-plugin-e2e,trafficrouter-plugin-sample}
#   $E2E_BIN/v1.10.2/...: the same from v1.10.2      (argo-rollouts-v1.10/go.mod)
#   $E2E_BIN/v*/plugins/gatewayapi-standin          (our own, built once; see its doc comment)
# The v1.9.1 programs come from the conformance module's build list, which its
# tests and the e2e tests use too: without -trimpath, as `go test` builds, so
# that every package they share is compiled once (see ../go.mod).
# Idempotent: Go's build cache (GOCACHE) and module cache (GOMODCACHE) make a
# repeat run cheap; keep both between CI runs if the CI can.
# Prints one "build: NAME Ns" line per step to stderr for timing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${E2E_BIN:-$here/bin}"
mkdir -p "$bin/v1.9.1/plugins" "$bin/v1.10.2/plugins"

# The conformance module's go line needs Go 1.24.9: the local toolchain. v1.10.2
# needs Go 1.26.10, which the go command fetches through the module proxy once
# (into the module cache).
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
go_v1_10=go1.26.10
# Builds share 2 cores with everything else on the machine.
nice_go() { nice -n 10 go "$@"; }

step() {
	local name="$1" dir="$2"
	shift 2
	local t0=$SECONDS
	(cd "$here/$dir" && nice_go build -buildvcs=false "$@")
	echo "build: $name $((SECONDS - t0))s" >&2
}
# The controller stamps its version from this variable (an unstamped build says v99.99.99).
stamp() { echo "-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=$1"; }
plugins=(
	github.com/argoproj/argo-rollouts/test/cmd/metrics-plugin-sample
	github.com/argoproj/argo-rollouts/test/cmd/step-plugin-e2e
	github.com/argoproj/argo-rollouts/test/cmd/trafficrouter-plugin-sample
)

# kube-apiserver: stamp the version, since the controller (and clients)
# parse /version's major/minor and an unstamped build reports v0.0.0-master.
k8s_version=v1.34.2
step kube-apiserver .. \
	-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean" \
	-o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
# etcd at the version k8s.io/kubernetes v1.34.2 itself requires (3.6.4).
step etcd .. -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3

step rollouts-controller-v1.9.1 .. -ldflags "$(stamp 1.9.1)" \
	-o "$bin/v1.9.1/rollouts-controller" github.com/argoproj/argo-rollouts/cmd/rollouts-controller
step plugins-v1.9.1 .. -ldflags "-s -w" -o "$bin/v1.9.1/plugins/" "${plugins[@]}" ./tools/gatewayapi-standin

GOTOOLCHAIN=$go_v1_10 step rollouts-controller-v1.10.2 argo-rollouts-v1.10 -ldflags "$(stamp 1.10.2)" \
	-o "$bin/v1.10.2/rollouts-controller" github.com/argoproj/argo-rollouts/cmd/rollouts-controller
GOTOOLCHAIN=$go_v1_10 step plugins-v1.10.2 argo-rollouts-v1.10 -ldflags "-s -w" -o "$bin/v1.10.2/plugins/" "${plugins[@]}"
# The stand-in implements the plugin RPC interface, which v1.10.2 left unchanged: one
# binary serves both, as a third-party plugin built against an older release does.
cp -f "$bin/v1.9.1/plugins/gatewayapi-standin" "$bin/v1.10.2/plugins/gatewayapi-standin"
