package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// StatusOptions is the "status" command: every node this tool has touched, from the
// cluster alone (the nodes' state label and annotations, and their cordon's owner).
type StatusOptions struct {
	*Common
	Names    []string
	Selector string
	Output   *OutputFlags
	// Watch follows changes until interrupted.
	Watch bool
	// Interval is how often a watch looks at the pods left (a pod leaving does not
	// change the node object).
	Interval time.Duration
	// Now is the clock for the SINCE column.
	Now func() time.Time
}

// NewCmdStatus builds "kubectl maintenance status".
func NewCmdStatus(c *Common) *cobra.Command {
	o := &StatusOptions{Common: c, Output: NewOutputFlags(true), Interval: 2 * time.Second, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "status [NODE...] [-l SELECTOR] [-o wide|json|yaml] [--watch]",
		Short: "Show every node this tool has touched: its state, since when, who started it, and the pods left",
		Long: `Show, from the cluster alone, every node kubectl maintenance has touched: those carrying
its state label (kubectl-maintenance.io/state) or annotations, or a cordon it made. For
each: the state (cordoned, draining, drained, blocked, or moving during a pool move),
since when, the command and the user that started it, and the pods left to evict with
what blocks each (the drain's own plan, computed read-only). --watch follows the nodes
(a watch, and a look at their pods every few seconds) until Ctrl-C: run it in a second
shell to follow a drain running elsewhere. The state is also a node label:
  kubectl get nodes -L kubectl-maintenance.io/state`,
		Example: `  kubectl maintenance status
  kubectl maintenance status -o wide
  kubectl maintenance status node-1 -o json
  kubectl maintenance status --watch`,
		ValidArgsFunction: completion.Nodes(c.Client),
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := kubeargs.NodeArgs(args) // NAME, node/NAME, nodes/NAME, as kubectl
			if err != nil {
				return err
			}
			o.Names = names
			if err := validateListing(o.Output, o.Selector); err != nil {
				return err
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			if o.Watch {
				return o.RunWatch(cmd.Context(), cs)
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "label selector of the nodes to look at")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "after the list, print a node again each time its state or its pods left change, until Ctrl-C")
	o.Output.AddFlags(cmd)
	return cmd
}

// Run prints the status of the touched nodes once (the operations layer's read model).
func (o *StatusOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	st, err := o.operator(ctx, cs).Status(ctx, operation.StatusRequest{Names: o.Names, Selector: o.Selector})
	if err != nil {
		if drain.IsUsage(err) {
			return WithExitCode(ExitUsage, err)
		}
		return err
	}
	return o.print(st, o.Output.NoHeaders)
}

func (o *StatusOptions) operator(ctx context.Context, cs kubernetes.Interface) *operation.Operator {
	return &operation.Operator{Kube: cs, Logger: klog.FromContext(ctx)}
}

// print writes the statuses: a table (wide adds the command, the cordon's owner and every
// blocker) or kubectl's object formats.
func (o *StatusOptions) print(st []operation.NodeStatus, noHeaders bool) error {
	saved := o.Output.NoHeaders
	o.Output.NoHeaders = noHeaders
	defer func() { o.Output.NoHeaders = saved }()
	if o.Output.IsTable() {
		if len(st) == 0 && !noHeaders {
			fmt.Fprintln(o.ErrOut, "No nodes touched by kubectl maintenance.")
			return nil
		}
		return o.Output.Print(o.Out, render.StatusTable(st, o.Output.Format == "wide", o.Now()), nil)
	}
	objs := make([]runtime.Object, 0, len(st))
	for _, s := range st {
		if o.Output.Format == "name" { // node/NAME, as plan -o name: input to every command
			objs = append(objs, nodeObject(s.Name))
			continue
		}
		u, err := render.StatusObject(s)
		if err != nil {
			return err
		}
		objs = append(objs, u)
	}
	if o.Watch {
		for _, u := range objs {
			if err := o.Output.Print(o.Out, nil, u); err != nil {
				return err
			}
		}
		return nil
	}
	return o.Output.Print(o.Out, nil, asList(objs, len(o.Names) == 1))
}

// RunWatch prints the touched nodes, then each node again when its state or its pods
// left change (a node no longer touched is printed once with state <none>), until ctx
// ends: a printer over the operations layer's WatchStatus.
func (o *StatusOptions) RunWatch(ctx context.Context, cs kubernetes.Interface) error {
	last := map[string]string{}
	looked, headerDone := false, false
	return o.operator(ctx, cs).WatchStatus(ctx, operation.StatusRequest{Names: o.Names, Selector: o.Selector}, o.Interval, func(st []operation.NodeStatus) error {
		changed := render.StatusChanges(st, last)
		if len(changed) == 0 && looked {
			return nil
		}
		// A watch's later rows come without the header, as kubectl get -w prints them.
		if err := o.print(changed, o.Output.NoHeaders || headerDone); err != nil {
			return err
		}
		looked, headerDone = true, headerDone || len(changed) > 0
		return nil
	})
}
