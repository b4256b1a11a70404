package cli

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// NodeSelection is how a command names its nodes: NODE... or -l/--selector, not both.
type NodeSelection struct {
	Names    []string
	Selector string
	// Pool selects the members of a NodePool (node-role.kubernetes.io/<pool>).
	Pool string
}

// AddFlags adds -l/--selector and --pool (whose values complete from the cluster's pools).
func (s *NodeSelection) AddFlags(cmd *cobra.Command, c *Common) {
	cmd.Flags().StringVarP(&s.Selector, "selector", "l", s.Selector, "label selector of the nodes (instead of NODE names)")
	cmd.Flags().StringVar(&s.Pool, "pool", s.Pool, "every node of this NodePool (instead of NODE names)")
	_ = cmd.RegisterFlagCompletionFunc("pool", completePools(c))
}

// completePools completes NodePool names from the cluster the flags point at.
func completePools(c *Common) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		pc, err := c.PoolClient()
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

// Validate checks the selection without calling the API.
func (s *NodeSelection) Validate() error {
	given := 0
	for _, g := range []bool{len(s.Names) > 0, s.Selector != "", s.Pool != ""} {
		if g {
			given++
		}
	}
	switch {
	case given > 1:
		return UsageErrorf("give node names, --selector or --pool, only one of them")
	case given == 0:
		return UsageErrorf("no nodes given: name them (NODE...), or use --selector or --pool")
	}
	names, err := kubeargs.NodeArgs(s.Names) // NAME, node/NAME, nodes/NAME, as kubectl
	if err != nil {
		return err
	}
	s.Names = names
	if s.Pool != "" {
		if s.Pool, err = kubeargs.PoolArg(s.Pool); err != nil {
			return err
		}
	}
	return ValidateSelector("--selector", s.Selector)
}

// ValidateSelector checks a label selector flag without calling the API: a bad one is a
// usage error (exit 2) naming the flag.
func ValidateSelector(flag, sel string) error {
	if _, err := labels.Parse(sel); err != nil {
		return UsageErrorf("invalid %s %q: %v", flag, sel, err)
	}
	return nil
}

// into sets req's nodes from the selection: the operations layer resolves them once
// (an unknown node, a selector that matches nothing or an empty pool is a usage error,
// found before anything is changed).
func (s *NodeSelection) into(req *operation.Request) {
	req.Nodes, req.Selector, req.Pool = s.Names, s.Selector, s.Pool
}

// completeNodes completes node names from the cluster the flags point at.
func completeNodes(c *Common) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cs, err := c.Client()
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
