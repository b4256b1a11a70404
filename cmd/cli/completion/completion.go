// Package completion owns the shell completion of kubectl-maintenance: the values a flag
// or an argument completes to (fixed choices, the cluster's nodes and NodePools), the
// "completion kubectl" script for completion through kubectl, and the usage errors of
// the completion command itself.
package completion

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/exitcode"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// KubectlScript is the file kubectl (1.26+) runs to complete a plugin's
// arguments when it is on PATH as kubectl_complete-maintenance.
const KubectlScript = `#!/usr/bin/env sh
kubectl maintenance __complete "$@"
`

// AddKubectl adds "completion kubectl" beside cobra's bash, zsh, fish and powershell
// scripts; args checks its positional arguments.
func AddKubectl(root *cobra.Command, args cobra.PositionalArgs) {
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
			Args: args,
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, err := fmt.Fprint(cmd.OutOrStdout(), KubectlScript)
				return err
			},
		})
	}
}

// ShellArgs makes an argument given to a shell's completion command a usage error
// (cobra's own check is exit 1): each shell's command takes args.
func ShellArgs(completion *cobra.Command, args cobra.PositionalArgs) {
	for _, sh := range completion.Commands() {
		sh.Args = args
	}
}

// ShellArg is the completion command's RunE: an unknown shell given to completion is a
// usage error that lists the shells, instead of the help and exit 0.
func ShellArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	var shells []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			shells = append(shells, c.Name())
		}
	}
	return exitcode.UsageErrorf("no completion for %q: the shells are %s. See '%s --help' for usage.", args[0], strings.Join(shells, ", "), cmd.CommandPath())
}

// FixedChoices completes a flag's value to choices.
func FixedChoices(choices ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return choices, cobra.ShellCompDirectiveNoFileComp
	}
}

// Pools completes NodePool names from the cluster the client from newClient points at.
func Pools(newClient func() (client.Client, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		pc, err := newClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := &v1alpha1.NodePoolList{}
		if err := pc.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for i := range list.Items {
			out = append(out, list.Items[i].Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Nodes completes node names (not already given) from the cluster the clientset from
// newClient points at.
func Nodes(newClient func() (kubernetes.Interface, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cs, err := newClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := cs.CoreV1().Nodes().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		var out []cobra.Completion
		for i := range list.Items {
			if n := list.Items[i].Name; !given[n] {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
