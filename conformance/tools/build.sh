#!/usr/bin/env bash
# Builds the local e2e cluster's programs from pinned Go modules (there is no
# container engine, and release binaries cannot be downloaded):
#   $E2E_BIN/kube-apiserver, $E2E_BIN/etcd          (controlplane/go.mod)
#   $E2E_BIN/rollouts-controller                    (argo-rollouts/go.mod)
#   $E2E_BIN/plugins/{metrics-plugin-sample,step-plugin-e2e,trafficrouter-plugin-sample}
#   $E2E_BIN/plugins/gatewayapi-standin             (our own; see its doc comment)
# Idempotent: Go's build cache (GOCACHE) and module cache (GOMODCACHE) make a
# repeat run cheap; keep both between CI runs if the CI can.
# Prints one "build: NAME Ns" line per step to stderr for timing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${E2E_BIN:-$here/bin}"
mkdir -p "$bin/plugins"

# The go lines of the tools modules need at most Go 1.24.9; use the local
# toolchain, never download another.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
# Builds share 2 cores with everything else on the machine.
nice_go() { nice -n 10 go "$@"; }

step() {
	local name="$1" dir="$2"
	shift 2
	local t0=$SECONDS
	(cd "$here/$dir" && nice_go build -trimpath -buildvcs=false "$@")
	echo "build: $name $((SECONDS - t0))s" >&2
}

# kube-apiserver: stamp the version, since the controller (and clients)
# parse /version's major/minor and an unstamped build reports v0.0.0-master.
k8s_version=v1.34.1
step kube-apiserver controlplane \
	-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean" \
	-o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
# etcd at the version k8s.io/kubernetes v1.34.1 itself requires (3.6.4).
step etcd controlplane -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3

step rollouts-controller argo-rollouts \
	-ldflags "-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=1.9.1" \
	-o "$bin/rollouts-controller" github.com/argoproj/argo-rollouts/cmd/rollouts-controller
step plugins argo-rollouts -ldflags "-s -w" -o "$bin/plugins/" \
	github.com/argoproj/argo-rollouts/test/cmd/metrics-plugin-sample \
	github.com/argoproj/argo-rollouts/test/cmd/step-plugin-e2e \
	github.com/argoproj/argo-rollouts/test/cmd/trafficrouter-plugin-sample \
	./gatewayapi-standin
