// Package differential holds tests only: it runs Go's own functions (net/url
// as the Argo Rollouts downloader uses it, apimachinery's quantity and name
// validators, yaml.v2's scalar resolution and quoting) on the inputs of the
// rules rollouts-render re-implements, and fails on any disagreement with the
// release binary's answers. Entry point: run.sh in the parent directory.
package differential
