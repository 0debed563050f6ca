#!/usr/bin/env bash
# The plugin under the real Argo CD (v3.2.11, built from its Go module): builds the sidecar
# image from the static release binary and the repository's plugin.yaml (scripts/image.sh),
# builds argocd-cmp-server and this module's tests, then runs the tests, which start the
# cmp-server as the sidecar container would (chrooted into the image's file system, as its
# user, with deploy/'s volumes) and drive it with the repo-server's own code. See README.md.
#
#   run.sh                 build everything (cargo and go), then test
#   RR_BIN=PATH run.sh     test this static rollouts-render instead of building one
#   run.sh -run TestImage  extra arguments go to the test binary (-run, -v is always on)
#
# Needs root (a private mount namespace and chroot), Go, cargo without RR_BIN, python3 (for
# scripts/image.sh) and the Go module proxy. Go's module and build caches (GOMODCACHE,
# GOCACHE, by default under $HOME) make a repeat run cheap. Prints "build: NAME Ns" lines.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# Static: the cmp-server runs inside the image's file system, which has no C library; the
# test binary is built with the same setting so that both share every compiled package.
export CGO_ENABLED=0

die() { echo "argocd: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root: the sidecar runs in a private mount namespace, chrooted"
command -v go >/dev/null || die "go not found"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t0=$SECONDS
step() { echo "build: $1 $(($SECONDS - $2))s" >&2; }

if [ -z "${RR_BIN:-}" ]; then
	t=$SECONDS
	# The image's binary: glibc linked statically, as the Dockerfile's build stage does.
	(cd "$root" && RUSTFLAGS="-C target-feature=+crt-static" nice -n 10 cargo build --release --locked \
		--quiet --target x86_64-unknown-linux-gnu --bin rollouts-render)
	RR_BIN=$root/target/x86_64-unknown-linux-gnu/release/rollouts-render
	step rollouts-render "$t"
fi

t=$SECONDS
"$root/scripts/image.sh" "$RR_BIN" "$work/image"
step image "$t"

t=$SECONDS
(cd "$here" && nice -n 10 go build -buildvcs=false -o "$work/argocd-cmp-server" ./cmpserver)
step argocd-cmp-server "$t"
t=$SECONDS
(cd "$here" && nice -n 10 go test -buildvcs=false -c -o "$work/argocd.test" .)
step tests "$t"
step all "$t0"

cd "$work"
RR_CMP_SERVER=$work/argocd-cmp-server RR_IMAGE_DIR=$work/image RR_REPO_ROOT=$root \
	RR_SIDECAR_LOG=$work/sidecar.log ./argocd.test -test.v -test.count=1 -test.timeout=20m "$@" || {
	status=$?
	echo "argocd: the cmp-server's log, last 40 lines:" >&2
	tail -n 40 "$work/sidecar.log" | cut -c1-400 >&2
	exit $status
}
