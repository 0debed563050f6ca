// Command cmpserver is argocd-cmp-server as Argo CD v3.2.11 builds it into its
// one binary (cmd/main.go dispatches on the name argocd-cmp-server to this same
// cobra command), built alone: it links far less than the whole argocd binary.
package main

import (
	"os"

	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	command := cmpserver.NewCommand()
	command.SilenceErrors = true
	command.SilenceUsage = true
	if err := command.Execute(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}
