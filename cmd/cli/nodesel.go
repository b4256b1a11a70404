package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
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
	_ = cmd.RegisterFlagCompletionFunc("pool", completion.Pools(c.PoolClient))
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
