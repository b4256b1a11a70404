package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// PoolGetOptions is "pool list" and "pool get": pools as a table or in any of kubectl's
// output formats.
type PoolGetOptions struct {
	*Common
	Names  []string
	Output *OutputFlags
	Now    func() time.Time
}

func newCmdPoolListPrinted(c *Common) *cobra.Command {
	o := &PoolGetOptions{Common: c, Output: NewOutputFlags(true), Now: time.Now}
	cmd := &cobra.Command{
		Use:     "list [-o FORMAT]",
		Aliases: []string{"ls"},
		Short:   "List pools: nodes, nodes in maintenance, taints, RuntimeClass handler",
		Args:    noArgsUsage,
		RunE:    o.runE,
	}
	o.Output.AddFlags(cmd)
	return cmd
}

func newCmdPoolGetPrinted(c *Common) *cobra.Command {
	o := &PoolGetOptions{Common: c, Output: NewOutputFlags(true), Now: time.Now}
	cmd := &cobra.Command{
		Use:   "get [POOL...] [-o FORMAT]",
		Short: "Print pools (all, or the ones named) as a table, YAML, JSON or any kubectl output format",
		Long: `Print pools as kubectl get does: a table by default (-o wide adds the labels), or -o
json|yaml|name|jsonpath=...|custom-columns=...|go-template=.... With no name, every pool;
a name that does not exist is a usage error (exit 2) after the others are printed.`,
		Example: `  kubectl maintenance pool get blue -o yaml
  kubectl maintenance pool get blue green -o name
  kubectl maintenance pool get -o jsonpath='{.items[*].metadata.name}'`,
		ValidArgsFunction: completion.Pools(c.PoolClient),
		RunE:              o.runE,
	}
	o.Output.AddFlags(cmd)
	return cmd
}

func (o *PoolGetOptions) runE(cmd *cobra.Command, args []string) error {
	names, err := poolArgs(args)
	if err != nil {
		return err
	}
	o.Names = names
	if err := o.Output.Validate(); err != nil {
		return err
	}
	cs, pc, err := poolClients(o.Common)
	if err != nil {
		return err
	}
	return o.Run(cmd.Context(), cs, pc)
}

// Run prints the pools.
func (o *PoolGetOptions) Run(ctx context.Context, cs kubernetes.Interface, pc client.Client) error {
	pools, missing, err := nodepool.Get(ctx, pc, o.Names)
	if err != nil {
		return err
	}
	var nodes []corev1.Node
	if o.Output.IsTable() && len(pools) > 0 {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		nodes = list.Items
	}
	objs := make([]runtime.Object, 0, len(pools))
	for i := range pools {
		p := &pools[i]
		p.ManagedFields = nil
		p.APIVersion, p.Kind = v1alpha1.GroupVersion.String(), "NodePool"
		objs = append(objs, p)
	}
	if len(pools) > 0 || len(missing) == 0 {
		if len(pools) == 0 && o.Output.IsTable() {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else if err := o.Output.Print(o.Out, render.PoolsTable(pools, nodes, o.Now()), asList(objs, len(o.Names) == 1)); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return UsageErrorf("nodepool(s) not found: %s (kubectl maintenance pool list shows the pools)", strings.Join(missing, ", "))
	}
	return nil
}
