#!/usr/bin/env bash
# Conformance checks: rollouts-render's output against the upstream code that
# consumes it (Go tests in this directory) and against the Kubernetes OpenAPI
# schemas (kubernetes-validate, Python). Quiet on success; non-zero on any
# failure. See README.md.
#
#   run.sh                      build (or take $RR_BIN), render testdata/ and
#                               snapshots/, run every check
#   run.sh --check FILE [--input RM.yaml] [--json FILE.json]
#          [--namespace NS] [--openshift[=LOCATION]]
#                               run the stream checks on a YAML file made
#                               elsewhere (e.g. a copy with a planted defect);
#                               --input etc. describe how it was rendered
#
# Env: RR_BIN (binary to test; default: cargo build --release at the repo
# root), RR_VENV (Python venv, default conformance/.venv), GOMODCACHE/GOCACHE
# (Go's defaults under $HOME are kept between runs), RR_OPERATOR_DIR (the
# argo-rollouts-manager module's files, instead of `go mod download`),
# RR_OPERATOR_REFERENCE (the reference copy used when the download fails).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || dirname "$here")
venv=${RR_VENV:-$here/.venv}
kv_version=1.37.0 # kubernetes-validate: schemas up to Kubernetes 1.37

die() { echo "conformance: $*" >&2; exit 2; }

check_file="" check_input="" check_json="" check_openshift="" check_namespace=""
while [ $# -gt 0 ]; do
	case $1 in
	--check) check_file=$(realpath "${2:?--check FILE}"); shift 2 ;;
	--input) check_input=$(realpath "${2:?--input FILE}"); shift 2 ;;
	--json) check_json=$(realpath "${2:?--json FILE}"); shift 2 ;;
	--namespace) check_namespace=${2:?--namespace NS}; shift 2 ;;
	--openshift) check_openshift=1; shift ;;
	--openshift=*) check_openshift=${1#--openshift=}; shift ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done

command -v go >/dev/null || die "go not found (Go 1.24+ is needed)"
command -v python3 >/dev/null || die "python3 not found"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The Python validator lives in a venv so the machine's Python stays clean.
ensure_venv() {
	if "$venv/bin/python" -c 'import kubernetes_validate' 2>/dev/null; then
		return
	fi
	if ! python3 -m venv "$venv" >"$work/venv.log" 2>&1; then
		# Debian's python3 without ensurepip: the python3-venv package adds it.
		command -v apt-get >/dev/null || { cat "$work/venv.log" >&2; die "python3 -m venv failed"; }
		{ apt-get update -qq && apt-get install -y -qq python3-venv; } >>"$work/venv.log" 2>&1 ||
			{ cat "$work/venv.log" >&2; die "cannot install python3-venv"; }
		rm -rf "$venv"
		python3 -m venv "$venv" >>"$work/venv.log" 2>&1 || { cat "$work/venv.log" >&2; die "python3 -m venv failed"; }
	fi
	"$venv/bin/python" -m pip install -q --disable-pip-version-check "kubernetes-validate==$kv_version" \
		>>"$work/venv.log" 2>&1 || { cat "$work/venv.log" >&2; die "pip install kubernetes-validate failed"; }
}

# go test prints only "ok …" per package on success, everything on failure.
# -count=1: results must not come from the test cache, which does not know
# that the binary under test changed.
go_test() {
	(cd "$here" && nice -n 10 go test -count=1 "$@")
}

status=0
ensure_venv

if [ -n "$check_file" ]; then
	RR_CHECK_FILE=$check_file RR_CHECK_INPUT=$check_input RR_CHECK_JSON=$check_json \
		RR_CHECK_OPENSHIFT=$check_openshift RR_CHECK_NAMESPACE=$check_namespace go_test -run '^TestCheckFile$' . || status=1
	"$venv/bin/python" "$here/python/validate.py" "$check_file" || status=1
	exit $status
fi

if [ -z "${RR_BIN:-}" ]; then
	command -v cargo >/dev/null || die "cargo not found; set RR_BIN to a rollouts-render binary"
	(cd "$root" && nice -n 10 cargo build --release --quiet) >"$work/cargo.log" 2>&1 ||
		{ cat "$work/cargo.log" >&2; die "cargo build --release failed"; }
	RR_BIN=$root/target/release/rollouts-render
fi
[ -x "$RR_BIN" ] || die "RR_BIN=$RR_BIN is not an executable"
export RR_BIN=$(realpath "$RR_BIN") RR_REPO_ROOT=$root RR_DUMP_DIR=$work/rendered RR_NOTES=$work/notes

# The CRD tests read the argo-rollouts-manager operator's CRD and examples
# from its Go module (`go mod download`, outside this module's build list).
# Where the module proxy refuses that module, they fall back to the
# workspace's reference copy of the same release (shared/reference/ beside
# the repository), laid out here as in the module; the tests check each
# file's pinned SHA-256 either way and the fallback is reported below.
operator_ref=${RR_OPERATOR_REFERENCE:-$root/../shared/reference/argo-rollouts-manager}
if [ -z "${RR_OPERATOR_DIR:-}" ] && [ -f "$operator_ref/rolloutmanagers-crd.yaml" ]; then
	fb=$work/operator
	mkdir -p "$fb/config/crd/bases" "$fb/config/samples" "$fb/examples"
	cp "$operator_ref/rolloutmanagers-crd.yaml" "$fb/config/crd/bases/argoproj.io_rolloutmanagers.yaml"
	for f in "$operator_ref"/examples-*.yaml; do
		[ -e "$f" ] || continue
		name=${f##*/examples-}
		case $name in
		argoproj.io_*) cp "$f" "$fb/config/samples/$name" ;; # kubebuilder's sample
		*) cp "$f" "$fb/examples/$name" ;;
		esac
	done
	export RR_OPERATOR_FALLBACK_DIR=$fb
fi

# The conformance tests are this directory's package; e2e/ (same module) has its own run.sh,
# and argocd/ and differential/ are modules of their own.
go_test . || status=1

# The rules ported from Go, judged by Go's own functions: net/url with the Go release the
# Argo Rollouts v1.9.1 controller was built with (GOTOOLCHAIN fetches it through the module
# proxy), apimachinery's quantity and name validators, yaml.v2. Counts go to the notes.
(cd "$here/differential" && GOTOOLCHAIN=go1.24.13 nice -n 10 go test -count=1 .) || status=1
if [ -s "$RR_NOTES" ]; then
	sed 's/^/conformance: note: /' "$RR_NOTES" >&2
fi

if compgen -G "$RR_DUMP_DIR/*.yaml" >/dev/null; then
	"$venv/bin/python" "$here/python/validate.py" "$RR_DUMP_DIR"/*.yaml || status=1
else
	echo "conformance: nothing rendered, kubernetes-validate not run" >&2
	status=1
fi
exit $status
