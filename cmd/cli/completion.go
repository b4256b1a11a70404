package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// kubectlCompletionScript is the file kubectl (1.26+) runs to complete a plugin's
// arguments when it is on PATH as kubectl_complete-maintenance.
const kubectlCompletionScript = `#!/usr/bin/env sh
kubectl maintenance __complete "$@"
`

// addKubectlCompletion adds "completion kubectl" beside cobra's bash, zsh, fish and
// powershell scripts.
func addKubectlCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.AddCommand(&cobra.Command{
			Use:   "kubectl",
			Short: "Print the kubectl_complete-maintenance script, for completion through kubectl",
			Long: `Print the script kubectl runs to complete "kubectl maintenance ..." arguments:

  kubectl maintenance completion kubectl > kubectl_complete-maintenance
  chmod +x kubectl_complete-maintenance   # and put it on PATH`,
			Args: noArgsUsage,
			RunE: runE(&kubectlCompletionOptions{}),
		})
	}
}

// kubectlCompletionOptions is "completion kubectl": it prints the script.
type kubectlCompletionOptions struct{ out io.Writer }

// Complete takes the command's stdout.
func (o *kubectlCompletionOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.out = cmd.OutOrStdout()
	return nil
}

// Validate has nothing to check.
func (o *kubectlCompletionOptions) Validate() error { return nil }

// Run prints the script.
func (o *kubectlCompletionOptions) Run(context.Context) error {
	_, err := fmt.Fprint(o.out, kubectlCompletionScript)
	return err
}
