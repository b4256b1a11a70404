package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// CordonOptions is the "cordon" and "uncordon" commands.
type CordonOptions struct {
	*Common
	Nodes  NodeSelection
	DryRun string
	// Uncordon makes the nodes schedulable instead.
	Uncordon bool
	// Force uncordons a node even when it was cordoned before this tool drained it.
	Force           bool
	ServerSideFlags // --server-side, --detach, --name (serverside.go)
}

// NewCmdCordon builds "kubectl maintenance cordon".
func NewCmdCordon(c *Common) *cobra.Command { return newCordonCmd(c, false) }

// NewCmdUncordon builds "kubectl maintenance uncordon".
func NewCmdUncordon(c *Common) *cobra.Command { return newCordonCmd(c, true) }

func newCordonCmd(c *Common, uncordon bool) *cobra.Command {
	o := &CordonOptions{Common: c, DryRun: "none", Uncordon: uncordon}
	cmd := &cobra.Command{
		Use:               "cordon (NODE... | -l SELECTOR | --pool POOL)",
		Short:             "Mark nodes unschedulable, recording that this tool did it",
		ValidArgsFunction: completion.Nodes(c.Client),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes.Names = args
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.validateServerSide(o.DryRun); err != nil {
				return err
			}
			if o.ServerSide {
				action := mntv1.ActionCordon
				if o.Uncordon {
					action = mntv1.ActionUncordon
				}
				return o.runServerSide(cmd.Context(), o.ServerSideFlags, mntv1.MaintenanceSpec{Action: action, Nodes: o.Nodes.Names,
					Selector: o.Nodes.Selector, Pool: o.Nodes.Pool, Drain: mntv1.DrainSettings{Force: o.Force}})
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	if uncordon {
		cmd.Use = "uncordon (NODE... | -l SELECTOR | --pool POOL)"
		cmd.Short = "Make nodes schedulable again, as they were before this tool touched them"
		cmd.Long = `Make nodes schedulable again and remove this tool's annotations. Only a cordon this
tool made is undone: whose cordon a node carries is read from its managedFields (the
field manager that owns spec.unschedulable; this tool writes as "kubectl-maintenance").
A node cordoned by anyone else, before, during or after a drain, stays cordoned unless
--force is given. Running it twice gives the same answer, and --dry-run=client and
--dry-run=server print what the real command does.`
		cmd.Flags().BoolVar(&o.Force, "force", o.Force, "uncordon even a node whose cordon someone else made, or that a live run is draining")
	}
	o.Nodes.AddFlags(cmd, c)
	o.addServerSideFlags(cmd)
	addDryRunFlag(cmd, &o.DryRun, `"none", "client" or "server"`)
	return cmd
}

// Validate checks the flags without calling the API.
func (o *CordonOptions) Validate() error {
	if err := normalizeDryRun(o.ErrOut, &o.DryRun); err != nil {
		return err
	}
	return o.Nodes.Validate()
}

// Run cordons or uncordons every node through the operations layer (which resolves the
// nodes, asks for the permissions and, for an uncordon, first restores what a --surge
// drain left), printing kubectl's lines; the nodes that failed make one error line.
func (o *CordonOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	// A cordon has no drain settings but its dry run (Validate normalized it).
	req := operation.Request{Action: operation.Cordon, Drain: drain.Settings{DryRun: drain.DryRun(o.DryRun)}, Force: o.Force, Command: noderecord.CommandLine(os.Args)}
	if o.Uncordon {
		req.Action = operation.Uncordon
	}
	o.Nodes.into(&req)
	op, err := o.operator(ctx, cs, o.Nodes.Pool != "")
	if err != nil {
		return err
	}
	_, err = progress.Run(ctx, false, render.Cordon{Out: o.Out}, func(events chan<- event.Event) (operation.Summary, error) {
		return op.Run(ctx, req, events)
	})
	return err
}
