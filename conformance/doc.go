// Package conformance holds tests only: they run the rollouts-render binary
// and hand its output to the upstream Go code that consumes such manifests in
// production (Argo CD's manifest splitter, the Kubernetes API types and the
// API server's create-time validation, Argo Rollouts' config loader and plugin
// downloader), so "the output is valid" means "the real consumers accept it",
// not "our own re-implementation of their rules accepts it".
//
// Entry point: run.sh beside this file. See README.md.
package conformance
