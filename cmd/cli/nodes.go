package cli

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
)

// NodesOptions is the "nodes" command: nodes with their pools and pod counts.
type NodesOptions struct {
	*Common
	// Selector restricts the nodes by label.
	Selector string
	Output   *OutputFlags
	// Now is the clock for the AGE column.
	Now func() time.Time
}

// NewCmdNodes builds "kubectl maintenance nodes".
func NewCmdNodes(c *Common) *cobra.Command {
	o := &NodesOptions{Common: c, Output: NewOutputFlags(true), Now: time.Now}
	cmd := &cobra.Command{
		Use:   "nodes [-l SELECTOR] [-o FORMAT]",
		Short: "List nodes with their pools, scheduling state and pod counts",
		Long: `List nodes with their pools, scheduling state and the pods running on them (every pod
not finished, DaemonSet pods included, as kubectl describe node counts them; the dashboard's
PODS column is the same). -o takes kubectl's formats: wide, json, yaml, name, jsonpath=...,
custom-columns=..., go-template=...; --no-headers drops the header.`,
		Example: `  kubectl maintenance nodes -l node-role.kubernetes.io/blue
  kubectl maintenance nodes -o custom-columns=NAME:.metadata.name,UNSCHEDULABLE:.spec.unschedulable
  kubectl maintenance nodes -o name`,
		Args: noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateListing(o.Output, o.Selector); err != nil {
				return err
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector of the nodes to list")
	o.Output.AddFlags(cmd)
	return cmd
}

// Run lists the nodes.
func (o *NodesOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	perNode := map[string]int{}
	if o.Output.IsTable() {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
		if err != nil {
			return fmt.Errorf("list pods: %w", err)
		}
		for i := range pods.Items {
			if source.Running(&pods.Items[i]) {
				perNode[pods.Items[i].Spec.NodeName]++
			}
		}
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	objs := make([]runtime.Object, 0, len(nodes.Items))
	for i := range nodes.Items {
		n := &nodes.Items[i]
		n.APIVersion, n.Kind = "v1", "Node"
		n.ManagedFields = nil
		objs = append(objs, n)
	}
	return o.Output.Print(o.Out, render.NodesTable(nodes.Items, perNode, o.Now()), asList(objs, false))
}
