// Package e2e runs what rollouts-render renders against a real control plane
// and the real Argo Rollouts controller. See run.sh for how it is built and run.
package e2e
