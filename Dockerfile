# The Argo CD config management plugin sidecar, and the KRM function image: a static
# rollouts-render and its plugin.yaml.
#   docker build -t <registry>/rollouts-render:<version> .
# The sidecar's entrypoint is Argo CD's own argocd-cmp-server, shared with it through the
# `var-files` volume (see deploy/).
#
# CI builds this same image without a container engine: scripts/image.sh reads the final
# stage below instruction by instruction (FROM scratch, COPY, USER, WORKDIR, ENV, ENTRYPOINT,
# CMD) and fails on any other, so this file stays the one description of the image.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
# Cargo.toml declares the benchmark target: without its file cargo refuses the manifest.
COPY benches ./benches
# glibc linked statically, as CI builds it (scripts/image.sh): the binary needs nothing from
# the final image. --target keeps build scripts and proc macros dynamic.
RUN RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked --target x86_64-unknown-linux-gnu --bin rollouts-render \
 && cp target/x86_64-unknown-linux-gnu/release/rollouts-render /rollouts-render

FROM scratch
COPY --from=build /rollouts-render /usr/local/bin/rollouts-render
COPY plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# Argo CD requires the sidecar to run as the argocd user.
USER 999:999
WORKDIR /home/argocd
ENTRYPOINT ["/usr/local/bin/rollouts-render"]
# Without arguments the image is the KRM function (kustomize and kpt run container functions
# with none); the Argo CD sidecar sets its own command.
CMD ["fn"]
