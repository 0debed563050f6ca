#!/usr/bin/env bash
# Builds the plugin sidecar's OCI image from files alone, with no container engine: the final
# stage of the Dockerfile, read instruction by instruction, applied with crane (go-containerregistry,
# built from the Go module proxy) to an empty base. The Dockerfile stays the one description of
# the image: an instruction this script does not know fails the build instead of being skipped.
#
#   scripts/image.sh BINARY OUT_DIR
#
# BINARY stands for what the Dockerfile's build stage produces (a static rollouts-render).
# OUT_DIR receives:
#   oci/          the image as an OCI image layout (what `crane push`/`skopeo copy` take)
#   rootfs/       its file system, unpacked (what the sidecar's container sees)
#   config.json   its config (user, working directory, entrypoint, cmd, env)
#   digest        its manifest digest
#   size          compressed size of layers + config + manifest, in bytes (what a pull moves)
# Env: CRANE (a crane binary; default: built into conformance/tools/bin).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
binary=$(realpath "${1:?usage: image.sh BINARY OUT_DIR}")
out=${2:?usage: image.sh BINARY OUT_DIR}
crane_version=v0.22.1

die() { echo "image: $*" >&2; exit 2; }

if [ -z "${CRANE:-}" ]; then
	CRANE=$root/conformance/tools/bin/crane
	if ! "$CRANE" version 2>/dev/null | grep -qx "$crane_version"; then
		mkdir -p "$(dirname "$CRANE")"
		GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN=$(dirname "$CRANE") GOFLAGS=-mod=mod \
			nice -n 10 go install "github.com/google/go-containerregistry/cmd/crane@$crane_version"
	fi
fi

work=$(mktemp -d)
registry_pid=""
cleanup() {
	[ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# The final stage: everything after the last FROM.
stage=$(awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$root/Dockerfile")
[ "$(printf '%s' "$stage" | head -n1)" = "FROM scratch" ] ||
	die "the Dockerfile's final stage must start FROM scratch (a static binary needs no base)"

layer=$work/layer
mkdir -p "$layer"
user="" workdir="" entrypoint="" cmd=""
env_args=()
while IFS= read -r line; do
	case $line in
	"" | "#"* | "FROM scratch") ;;
	"COPY --from=build /rollouts-render "*)
		dest=${line#COPY --from=build /rollouts-render }
		install -D -m 0755 "$binary" "$layer$dest" ;;
	"COPY --from="*) die "unsupported: $line (only the build stage's /rollouts-render)" ;;
	"COPY "*)
		set -- ${line#COPY }
		[ $# -eq 2 ] || die "unsupported: $line (one source, one destination)"
		mode=0644
		[ -x "$root/$1" ] && mode=0755
		install -D -m "$mode" "$root/$1" "$layer$2" ;;
	"USER "*) user=${line#USER } ;;
	"WORKDIR "*) workdir=${line#WORKDIR }; mkdir -p "$layer$workdir" ;;
	"ENV "*) env_args+=(--env "${line#ENV }") ;;
	"ENTRYPOINT ["*"]")
		entrypoint=$(printf '%s' "${line#ENTRYPOINT }" | sed 's/^\[//; s/\]$//; s/"//g; s/, */,/g') ;;
	"CMD ["*"]")
		cmd=$(printf '%s' "${line#CMD }" | sed 's/^\[//; s/\]$//; s/"//g; s/, */,/g') ;;
	*) die "unsupported instruction in the Dockerfile's final stage: $line" ;;
	esac
done <<<"$stage"
[ -n "$user" ] && [ -n "$workdir" ] && [ -n "$entrypoint" ] ||
	die "the final stage needs USER, WORKDIR and ENTRYPOINT"

# Root-owned, fixed times, sorted: the same files give the same layer, and so the same digest.
find "$layer" -type d -exec chmod 0755 {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
	-C "$layer" -cf "$work/layer.tar" $(cd "$layer" && ls -A)

# crane mutate works on a registry: crane's own, in memory, on loopback, for this build only.
port_file=$work/port
"$CRANE" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log" | head -n1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "${port:-}" ] || { cat "$work/registry.log" >&2; die "crane registry did not start"; }
ref=127.0.0.1:$port/rollouts-render:build
# Quiet on success; crane's log on failure.
crane() { "$CRANE" "$@" 2>>"$work/crane.log" || { cat "$work/crane.log" >&2; die "crane $1 failed"; }; }

crane append --oci-empty-base --platform linux/amd64 -f "$work/layer.tar" -t "$ref" >/dev/null
cmd_args=()
[ -z "$cmd" ] || cmd_args=(--cmd "$cmd")
crane mutate "$ref" --set-platform linux/amd64 --user "$user" --workdir "$workdir" \
	--entrypoint "$entrypoint" "${cmd_args[@]}" "${env_args[@]}" -t "$ref" >/dev/null

rm -rf "$out"
mkdir -p "$out/rootfs"
crane pull --format oci "$ref" "$out/oci"
crane config "$ref" >"$out/config.json"
crane digest "$ref" >"$out/digest"
crane export "$ref" "$work/fs.tar"
tar -x -C "$out/rootfs" -f "$work/fs.tar"
crane manifest "$ref" >"$work/manifest.json"
python3 - "$work/manifest.json" >"$out/size" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
print(sum(l["size"] for l in m["layers"]) + m["config"]["size"] + len(open(sys.argv[1], "rb").read()))
EOF
echo "image: $(cat "$out/digest"), $(cat "$out/size") bytes compressed" >&2
