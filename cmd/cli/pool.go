package cli

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// NewCmdPool builds "kubectl maintenance pool" and its subcommands.
func NewCmdPool(c *Common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pool",
		Short: "Node pools: the NodePool resource, moving nodes between pools, syncing labels, taints and RuntimeClasses",
		Long: `A NodePool (maintenance.kubectl-maintenance.io/v1alpha1) is a cluster-scoped pool of nodes:
a node is in pool X when it carries node-role.kubernetes.io/X="". The pool puts its
labels and taints on its nodes, recording on each node exactly what it applied
(annotation nodepool.kubectl-maintenance.io/<pool>), so that leaving the pool removes
exactly that and nothing another owner set. A pool with spec.runtimeClass gets a
RuntimeClass named after it, so a pod picks the pool with runtimeClassName alone.`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdInstall(c, "install", "Install (or update) the NodePool and Maintenance CustomResourceDefinitions (as kubectl maintenance install); safe to run again"), newCmdPoolListPrinted(c), newCmdPoolGetPrinted(c), newCmdPoolApplyFiles(c),
		newCmdPoolDelete(c), NewCmdPoolMove(c), newCmdPoolSync(c), newCmdController(c, false))
	return cmd
}

// poolOperator is the operations layer on both clients (a pool command's).
func poolOperator(ctx context.Context, c *Common) (*operation.Operator, error) {
	cs, pc, err := poolClients(c)
	if err != nil {
		return nil, err
	}
	return &operation.Operator{Kube: cs, Pools: pc, Logger: klog.FromContext(ctx), User: c.fallbackUser()}, nil
}

// poolClients returns the clientset and the NodePool client.
func poolClients(c *Common) (kubernetes.Interface, client.Client, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	pc, err := c.PoolClient()
	return cs, pc, err
}

func exactlyOnePool(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return UsageErrorf("give exactly one pool name, got %d", len(args))
	}
	return nil
}
