// Package argocd runs rollouts-render under the real argocd-cmp-server and
// drives it as argocd-repo-server does. See README.md and run.sh.
package argocd
