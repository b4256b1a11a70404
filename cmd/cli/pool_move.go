package cli

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// PoolMoveOptions is "pool move": the drain's flags plus --to, --from and
// --allow-missing-handler.
type PoolMoveOptions struct {
	DrainOptions
	To                  string
	From                []string
	AllowMissingHandler bool
}

// NewCmdPoolMove builds "kubectl maintenance pool move".
func NewCmdPoolMove(c *Common) *cobra.Command {
	o := &PoolMoveOptions{DrainOptions: NewDrainOptions(c)}
	o.rollingCommand = true
	cmd := &cobra.Command{
		Use:   "move NODE... --to POOL [--from POOL]",
		Short: "Move nodes to another pool, rolling: cordon, PDB-aware drain, relabel and retaint, uncordon",
		Long: `Move nodes to pool --to in a sliding window, as drain --pool: a node starts while fewer
than the source pool's maxUnavailable of its other members count (the nodes this tool has
in progress, by any run, and NotReady members; members cordoned by someone else, or
drained and left cordoned, do not count), and at most the target's maxUnavailable nodes
move at once. Per node: cordon, drain without violating any PodDisruptionBudget (the drain
command's engine, flags, events and exit codes), then one patch that removes exactly what
the old pools applied (and their role labels), adds the new pool's and uncordons it (only
a cordon this tool made) as soon as it is drained; the next node starts then.

Without --from the node leaves every pool a NodePool or its ownership record covers;
other node-role.kubernetes.io/* labels (e.g. worker) stay. A node already in the target
pool is done. Before anything changes, the move stops if the target's RuntimeClass
handler is missing from a node's status.runtimeHandlers (unless --allow-missing-handler).
Before the relabel, a pod still on the node that the target's NoExecute taints would
remove (the taint manager deletes without any budget check) stops the move; DaemonSet
and mirror pods such a taint removes are named. --pod-selector is refused: a move must
empty the node.

Each step is recorded on the node: interrupted anywhere (Ctrl-C, kill -9, an API error),
running the same command again finishes from where it stopped. --dry-run prints the
plan and the exact label and taint change per node.

` + ExitCodesHelp,
		Example: `  kubectl maintenance pool move node-1 node-2 --to green --ignore-daemonsets
  kubectl maintenance pool move node-1 --from blue --to green --dry-run`,
		ValidArgsFunction: completion.Nodes(c.Client),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes.Names = args
			o.maxParallelSet = cmd.Flags().Changed("max-parallel-nodes")
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.validateServerSide(o.DryRun); err != nil {
				return err
			}
			if o.ServerSide {
				if len(o.From) > 0 || o.AllowMissingHandler {
					return UsageErrorf("--from and --allow-missing-handler don't go with --server-side (a Maintenance's move leaves every pool and needs the handler)")
				}
				spec := o.maintenanceSpec(mntv1.ActionMove)
				spec.To = o.To
				return o.runServerSide(cmd.Context(), o.ServerSideFlags, spec)
			}
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs, pc)
		},
	}
	o.addFlags(cmd)
	o.addServerSideFlags(cmd)
	cmd.Flags().StringVar(&o.To, "to", o.To, "the pool to move the nodes to")
	cmd.Flags().StringSliceVar(&o.From, "from", o.From, "the pool(s) the nodes leave (default: every pool a NodePool or the node's ownership record covers)")
	cmd.Flags().BoolVar(&o.AllowMissingHandler, "allow-missing-handler", false, "move nodes that don't list the target pool's RuntimeClass handler (a warning instead of a stop)")
	_ = cmd.RegisterFlagCompletionFunc("to", completion.Pools(c.PoolClient))
	_ = cmd.RegisterFlagCompletionFunc("from", completion.Pools(c.PoolClient))
	return cmd
}

// Validate checks every flag without calling the API: the drain's flags and the
// engine's own rules (the same checks as drain), --to, the nodes, and --pod-selector,
// which a move refuses.
func (o *PoolMoveOptions) Validate() error {
	if o.To == "" {
		return UsageErrorf("--to POOL is required")
	}
	var err error
	if o.To, err = kubeargs.PoolArg(o.To); err != nil {
		return err
	}
	if o.From, err = poolArgs(o.From); err != nil {
		return err
	}
	if len(o.Nodes.Names) == 0 {
		return UsageErrorf("name the nodes to move (NODE...)")
	}
	if o.Settings.PodSelector != "" {
		return UsageErrorf("--pod-selector is not supported by pool move: a move must empty the node (pods left behind would be deleted by the new pool's NoExecute taints without any budget check)")
	}
	// The drain's flags, and the drain settings' one validation (negative --timeout,
	// --grace-period below -1, ...), its messages naming the flags.
	return o.DrainOptions.Validate()
}

// Run plans the move through the operations layer (changing nothing on bad input or a
// missing permission),
// prints the plan, then carries it out, printing its events.
func (o *PoolMoveOptions) Run(ctx context.Context, cs kubernetes.Interface, pc client.Client) error {
	op, err := o.operator(ctx, cs, false)
	if err != nil {
		return err
	}
	op.Pools = pc
	req := o.request(operation.Move)
	req.To, req.From, req.AllowMissingHandler = o.To, o.From, o.AllowMissingHandler
	plan, err := op.Plan(ctx, req) // resolves the nodes and asks for the permissions
	if err != nil {
		return WithExitCode(ExitCode(err), err)
	}
	for _, mv := range plan.Move.Moves {
		render.MovePlan(o.ErrOut, mv, o.DryRun)
	}
	req.Moves, req.Resolved = plan.Move, plan.Resolved // carried out as planned: no node read again
	p := o.eventPrinter()
	sum, err := progress.Run(ctx, o.useProgressView(), p, func(events chan<- event.Event) (operation.Summary, error) {
		return op.Run(ctx, req, events)
	})
	p.Summary(sum.Summary, err, ExitCode(err))
	return err
}
