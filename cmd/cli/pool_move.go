package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// PoolMoveOptions is "pool move": the drain's flags plus --to and --from.
type PoolMoveOptions struct {
	DrainOptions
	To   string
	From []string
}

// NewCmdPoolMove builds "kubectl maintenance pool move".
func NewCmdPoolMove(c *Common) *cobra.Command {
	o := &PoolMoveOptions{DrainOptions: DrainOptions{Common: c, GracePeriod: -1, ChunkSize: drain.DefaultChunkSize,
		DryRun: "none", MaxParallelNodes: drain.DefaultMaxParallelNodes}}
	cmd := &cobra.Command{
		Use:   "move NODE... --to POOL [--from POOL]",
		Short: "Move nodes to another pool: cordon, PDB-aware drain, relabel and retaint, uncordon",
		Long: `Move nodes to pool --to: cordon, drain them without violating any PodDisruptionBudget
(the drain command's engine, flags, events and exit codes), remove the old pools' role
label, labels and taints (exactly what they applied), add the new pool's, and uncordon
(only a node this tool cordoned). Without --from the node leaves every pool it is in.

Each step is recorded on the node: interrupted anywhere (Ctrl-C, kill -9, an API error),
running the same command again finishes from where it stopped. --dry-run prints the
plan and the exact label and taint change per node.`,
		Example: `  kubectl maintenance pool move node-1 node-2 --to green --ignore-daemonsets
  kubectl maintenance pool move node-1 --from blue --to green --dry-run`,
		ValidArgsFunction: completeNodes(c),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes.Names = args
			o.maxParallelSet = cmd.Flags().Changed("max-parallel-nodes")
			if o.To == "" {
				return UsageErrorf("--to POOL is required")
			}
			if len(args) == 0 {
				return UsageErrorf("name the nodes to move (NODE...)")
			}
			if err := o.Validate(); err != nil {
				return err
			}
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs, pc)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.To, "to", o.To, "the pool to move the nodes to")
	cmd.Flags().StringSliceVar(&o.From, "from", o.From, "the pool(s) the nodes leave (default: every pool they are in)")
	_ = cmd.RegisterFlagCompletionFunc("to", completePools(c))
	_ = cmd.RegisterFlagCompletionFunc("from", completePools(c))
	return cmd
}

// Run plans the move (changing nothing on bad input), then carries it out.
func (o *PoolMoveOptions) Run(ctx context.Context, cs kubernetes.Interface, pc client.Client) error {
	names, _, err := o.Nodes.Resolve(ctx, cs, o.Common)
	if err != nil {
		return err
	}
	if err := o.preflight(ctx, cs, names); err != nil {
		return err
	}
	m := &nodepool.Mover{Kube: cs, Pools: pc}
	moves, target, err := m.Plan(ctx, names, o.To, o.From)
	if err != nil {
		return WithExitCode(ExitCode(err), err)
	}
	if !o.maxParallelSet {
		o.MaxParallelNodes = target.MaxUnavailableOrDefault()
	}
	for _, mv := range moves {
		from := strings.Join(mv.From, ",")
		if from == "" {
			from = "<no pool>"
		}
		resume := ""
		if mv.Resume {
			resume = " (resuming)"
		}
		fmt.Fprintf(o.ErrOut, "move node/%s: %s -> %s%s%s\n", mv.Node, from, mv.To, resume, dryRunSuffix(o.DryRun))
		for _, d := range mv.Diff {
			fmt.Fprintf(o.ErrOut, "  %s\n", d)
		}
	}
	d := o.drainer(cs)
	if o.DryRun != "none" {
		sum, err := d.Run(ctx, names)
		d.printer.Summary(sum, err, ExitCode(err))
		return err
	}
	err = m.Run(ctx, moves, target, d)
	if err == nil {
		for _, mv := range moves {
			for _, w := range mv.Warnings {
				d.printer.Event(drain.Event{Type: drain.EventWarning, Node: mv.Node, Message: w, Time: time.Now()})
			}
			d.printer.Event(drain.Event{Type: EventNodeMoved, Node: mv.Node, Message: mv.To, Time: time.Now()})
			switch mv.Uncordon {
			case drain.Uncordoned:
				d.printer.Event(drain.Event{Type: EventNodeUncordoned, Node: mv.Node, Time: time.Now()})
			case drain.LeftCordoned:
				d.printer.Event(drain.Event{Type: EventNodeUncordoned, Node: mv.Node, Reason: "LeftCordoned", Time: time.Now(),
					Message: "left cordoned: it was cordoned before the move"})
			}
		}
	}
	d.printer.Summary(d.last, err, ExitCode(err))
	return err
}

// Events of a pool move beyond the drain's (NDJSON types).
const (
	// EventNodeMoved: the node now carries the target pool's labels and taints (Message).
	EventNodeMoved drain.EventType = "node.moved"
	// EventNodeUncordoned: the node is schedulable again (or, with Reason LeftCordoned,
	// stays cordoned because it was before the move).
	EventNodeUncordoned drain.EventType = "node.uncordoned"
)

func newCmdPoolSync(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "sync",
		Short: "Apply every pool to its nodes and RuntimeClass once (what the controller does on every change)",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, pc, err := poolClients(c)
			if err != nil {
				return err
			}
			r := &nodepool.Reconciler{Client: pc, Kube: cs}
			n, err := r.SyncAll(cmd.Context())
			if nodepool.IsNotInstalled(err) {
				return nodepool.ErrNotInstalled
			}
			fmt.Fprintf(c.Out, "%d pool(s) synced\n", n)
			return err
		},
	}
}

// syncOne applies one pool to its nodes and says how it went.
func syncOne(ctx context.Context, c *Common, cs kubernetes.Interface, pc client.Client, name string) error {
	r := &nodepool.Reconciler{Client: pc, Kube: cs}
	_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	if err != nil {
		return err
	}
	p, err := nodepool.GetPool(ctx, pc, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "nodepool.maintenance.kubectl-maintenance.io/%s synced: %d node(s)\n", name, p.Status.Nodes)
	return nil
}

func newCmdPoolController(c *Common) *cobra.Command {
	var leaderElect bool
	var leaderNamespace, probeAddr, metricsAddr string
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the pool reconciler as a long-running controller (with leader election), e.g. in-cluster (see config/)",
		Args:  noArgsUsage,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.RESTConfig()
			if err != nil {
				return err
			}
			cs, err := c.Client()
			if err != nil {
				return err
			}
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Scheme:                  Scheme(),
				LeaderElection:          leaderElect,
				LeaderElectionID:        "kubectl-maintenance-nodepools",
				LeaderElectionNamespace: leaderNamespace,
				HealthProbeBindAddress:  probeAddr,
				Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
			})
			if err != nil {
				return fmt.Errorf("create controller manager: %w", err)
			}
			if err := (&nodepool.Reconciler{Client: mgr.GetClient(), Kube: cs}).SetupWithManager(mgr); err != nil {
				return fmt.Errorf("set up the pool controller: %w", err)
			}
			if probeAddr != "0" {
				_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
				_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
			}
			fmt.Fprintln(c.ErrOut, "pool controller running; Ctrl-C to stop")
			return mgr.Start(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&leaderElect, "leader-elect", true, "elect a leader so that only one replica reconciles")
	cmd.Flags().StringVar(&leaderNamespace, "leader-election-namespace", "kube-system", "namespace of the leader election Lease")
	cmd.Flags().StringVar(&probeAddr, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" to disable)`)
	cmd.Flags().StringVar(&metricsAddr, "metrics-bind-address", "0", `address of the metrics endpoint ("0" to disable)`)
	return cmd
}
