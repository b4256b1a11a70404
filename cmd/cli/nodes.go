package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashsource"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// NodesOptions is the "nodes" command: nodes with their pools and pod counts.
type NodesOptions struct {
	*Common
	// Selector restricts the nodes by label.
	Selector string
}

// NewCmdNodes builds "kubectl maintenance nodes".
func NewCmdNodes(c *Common) *cobra.Command {
	o := &NodesOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "nodes [-l SELECTOR]",
		Short: "List nodes with their pools, scheduling state and pod counts",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := o.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector of the nodes to list")
	return cmd
}

// Run lists the nodes.
func (o *NodesOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	perNode := map[string]int{}
	for i := range pods.Items {
		perNode[pods.Items[i].Spec.NodeName]++
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	w := tabwriter.NewWriter(o.Out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATUS\tPOOLS\tPODS\tAGE")
	for i := range nodes.Items {
		n := &nodes.Items[i]
		pools := strings.Join(nodepool.PoolsOf(n), ",")
		if pools == "" {
			pools = "<none>"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", n.Name, dashsource.NodeStatus(n), pools, perNode[n.Name],
			duration.HumanDuration(time.Since(n.CreationTimestamp.Time)))
	}
	return w.Flush()
}
