package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// poolSyncOptions is "pool sync": one pass of the reconciler, or with --rollout a
// PDB-aware rollout of a pool's new NoExecute taints (the drain's flags apply to it).
type poolSyncOptions struct {
	DrainOptions
	Rollout bool
}

func newCmdPoolSync(c *Common) *cobra.Command {
	o := &poolSyncOptions{DrainOptions: NewDrainOptions(c)}
	cmd := &cobra.Command{
		Use:   "sync [POOL...] [--rollout]",
		Short: "Apply pools to their nodes and RuntimeClass once; --rollout rolls a new NoExecute taint out node by node",
		Long: `Apply the pools (every pool when none is named) to their nodes and RuntimeClass once:
what the controller does on every change.

A NoExecute taint is held back from a node that still runs pods that don't tolerate it
(the taint manager would delete them without any PodDisruptionBudget check). --rollout
rolls it out: node by node, at most the pool's maxUnavailable at a time, each node first
cordoned and drained through the drain engine (budgets respected, the drain's flags and
exit codes), then tainted and uncordoned. DaemonSet and mirror pods the taint removes are
named, not blockers. The pool's RolloutProgressing condition shows the progress and the
budget it waits on.

` + ExitCodesHelp,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completion.Pools(c.PoolClient)(cmd, args, s)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := poolArgs(args)
			if err != nil {
				return err
			}
			if o.Rollout && len(args) != 1 {
				return UsageErrorf("--rollout takes exactly one pool, got %d", len(args))
			}
			if o.Rollout {
				o.Nodes.Pool = args[0]
				if o.Settings.PodSelector != "" {
					return UsageErrorf("--pod-selector is not supported by a rollout: pods left on a node would be deleted by the NoExecute taint without any budget check")
				}
				if err := o.Validate(); err != nil {
					return err
				}
			}
			op, err := poolOperator(cmd.Context(), c)
			if err != nil {
				return err
			}
			if o.Rollout {
				return o.rollOut(cmd.Context(), op)
			}
			n, err := op.SyncPools(cmd.Context(), args)
			if errors.Is(err, nodepool.ErrNotInstalled) {
				return err
			}
			fmt.Fprintf(c.Out, "%d pool(s) synced\n", n)
			return err
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.Rollout, "rollout", false, "roll the pool's new NoExecute taints out node by node, draining each node of the pods they would remove first")
	return cmd
}

// rollOut rolls the pool's new NoExecute taints out through the operations layer,
// printing the events of the drains and of the rollout's steps.
func (o *poolSyncOptions) rollOut(ctx context.Context, op *operation.Operator) error {
	req := o.request(operation.Drain)
	printer := o.eventPrinter()
	var res *operation.RolloutResult
	sum, err := progress.Run(ctx, o.useProgressView(), printer, func(events chan<- event.Event) (operation.Summary, error) {
		var sum operation.Summary
		var err error
		res, sum, err = op.Rollout(ctx, req, events)
		return sum, err
	})
	if err == nil {
		fmt.Fprintf(o.ErrOut, "rollout of pool %s: %d node(s) tainted, %d drained first", req.Pool, len(res.Nodes), len(res.Drained))
		if len(res.Removed) > 0 {
			fmt.Fprintf(o.ErrOut, "; DaemonSet/mirror pods removed by the taint: %s", strings.Join(res.Removed, ", "))
		}
		fmt.Fprintln(o.ErrOut)
	}
	printer.Summary(sum.Summary, err, ExitCode(err))
	return err
}

// syncOne applies one pool to its nodes and says how it went.
func syncOne(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, name string) error {
	op := &operation.Operator{Kube: cs, Pools: pc, Logger: klog.FromContext(ctx)}
	p, err := op.SyncPool(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s synced: %d node(s)\n", name, p.Status.Nodes)
	return nil
}
