# The Argo CD config management plugin sidecar, and the KRM function image: a static
# rollouts-render and its plugin.yaml.
#   docker build -t <registry>/rollouts-render:<version> .
# The sidecar's entrypoint is Argo CD's own argocd-cmp-server, shared with it through the
# `var-files` volume (see deploy/).

FROM rust:1.95-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
# Cargo.toml declares the benchmark target: without its file cargo refuses the manifest.
COPY benches ./benches
# musl links statically: the binary needs nothing from the final image.
RUN cargo build --release --locked --bin rollouts-render \
 && cp target/release/rollouts-render /rollouts-render

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /rollouts-render /usr/local/bin/rollouts-render
COPY plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
# Argo CD requires the sidecar to run as the argocd user.
USER 999:999
WORKDIR /home/argocd
ENTRYPOINT ["/usr/local/bin/rollouts-render"]
# Without arguments the image is the KRM function (kustomize and kpt run container functions
# with none); the Argo CD sidecar sets its own command.
CMD ["fn"]
