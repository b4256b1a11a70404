package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/runmetrics"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// DrainOptions is the "drain" command. Its flags are kubectl drain's, with the same names,
// meanings and defaults, plus --max-parallel-nodes and -o json.
type DrainOptions struct {
	*Common
	Nodes NodeSelection
	// DrainRuleOptions: --ignore-do-not-disrupt, --wait-interval (drain_rules.go).
	DrainRuleOptions

	// Settings are the drain's settings, the one type every front end fills: the flags
	// bind to its fields, Validate checks them once (Settings.Validate, its messages
	// naming the flags), and the run and the Maintenance spec are made from it.
	Settings drain.Settings

	DisableEviction bool
	// DryRun is --dry-run as given (kubectl's true and false too); Validate normalizes
	// it into Settings.DryRun.
	DryRun string
	Output string
	// Progress is auto (the live progress view when stdin and stdout are terminals and
	// no -o is given), tty (always that view) or plain (kubectl-style lines).
	Progress string
	// IncludeDisrupting drains nodes Karpenter is already disrupting too (drain only).
	IncludeDisrupting bool

	PolicyFlags     // --on-blocked, --blocked-after, --not-after (drain_policy.go)
	ServerSideFlags // --server-side, --detach, --name (serverside.go)
	surgeOptions    // --surge (drain_surge.go)
	metricsFlags    // --metrics-bind-address (drain_metrics.go)

	// Windows (planned maintenance).
	WindowFlags // --start, --end, --window, --on-window-close (drain_window.go)

	// maxParallelSet is true when --max-parallel-nodes was given (it then overrides a
	// pool's maxUnavailable).
	maxParallelSet bool
}

// NewDrainOptions returns the drain settings every command starts from (drain, plan,
// pool move, pool sync, the dashboard): kubectl drain's defaults, set in this one place.
func NewDrainOptions(c *Common) DrainOptions {
	s := drain.DefaultSettings()
	return DrainOptions{Common: c, Settings: s, DryRun: string(s.DryRun)}
}

// NewCmdDrain builds "kubectl maintenance drain".
func NewCmdDrain(c *Common) *cobra.Command {
	do := NewDrainOptions(c)
	o := &do
	cmd := &cobra.Command{
		Use:   "drain (NODE... | -l SELECTOR | --pool POOL)",
		Short: "Cordon nodes and evict their pods without ever violating a PodDisruptionBudget",
		Long: `Cordon the nodes, then evict their pods through the Eviction API only, as far as the
PodDisruptionBudgets allow. A refused eviction waits for the blocking budget's status to
change (a watch) and never retries on a blind timer. Nodes drain in parallel, up to
--max-parallel-nodes; across nodes no budget is asked for more than it has.

Before anything is touched, kubectl's own checks run on every node (DaemonSet, mirror,
emptyDir, unmanaged and completed pods); if one fails, nothing is changed (exit 3).
The nodes record their state in annotations, so an interrupted drain is finished by
running the same command again, and "uncordon" restores a node as it was.

` + ExitCodesHelp,
		Example: `  kubectl maintenance drain node-1 --ignore-daemonsets
  kubectl maintenance drain -l pool=blue --ignore-daemonsets --timeout 10m -o json
  kubectl maintenance drain node-1 node-2 --dry-run=server
  kubectl maintenance drain --pool blue --ignore-daemonsets   # maxUnavailable of the pool at a time`,
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
			if err := o.validateMetrics(o.ServerSide); err != nil {
				return err
			}
			if o.ServerSide {
				spec := o.maintenanceSpec(mntv1.ActionDrain)
				o.windowInto(&spec) // Windows (planned maintenance).
				return o.runServerSide(cmd.Context(), o.ServerSideFlags, spec)
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			if err := o.beforeLocalRun(cmd.Context()); err != nil { // Windows (planned maintenance).
				return err
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	o.Nodes.AddFlags(cmd, c)
	o.addFlags(cmd)
	o.addServerSideFlags(cmd)
	o.addWindowFlags(cmd, true)
	o.addMetricsFlag(cmd)
	cmd.Flags().BoolVar(&o.IncludeDisrupting, "include-disrupting", o.IncludeDisrupting, "also drain nodes Karpenter is already disrupting (taint karpenter.sh/disrupted); without it they are left to Karpenter, untouched, and the drain exits 3")
	return cmd
}

// addFlags adds kubectl drain's flags, plus --max-parallel-nodes and -o.
func (o *DrainOptions) addFlags(cmd *cobra.Command) {
	f, s := cmd.Flags(), &o.Settings
	f.BoolVar(&s.Force, "force", s.Force, "continue even if there are pods that do not declare a controller")
	f.BoolVar(&s.IgnoreDaemonSets, "ignore-daemonsets", s.IgnoreDaemonSets, "ignore DaemonSet-managed pods")
	f.BoolVar(&s.DeleteEmptyDirData, "delete-emptydir-data", s.DeleteEmptyDirData, "continue even if there are pods using emptyDir (local data that will be deleted when the node is drained)")
	f.IntVar(&s.GracePeriodSeconds, "grace-period", s.GracePeriodSeconds, "period of time in seconds given to each pod to terminate gracefully; -1 uses the pod's own value")
	f.DurationVar(&s.Timeout, "timeout", s.Timeout, "the length of time to wait before giving up (exit 124), zero means infinite")
	f.StringVar(&s.PodSelector, "pod-selector", s.PodSelector, "label selector to filter pods on the node")
	f.BoolVar(&o.DisableEviction, "disable-eviction", o.DisableEviction, "not supported: this tool never bypasses PodDisruptionBudgets (use kubectl drain --disable-eviction)")
	f.IntVar(&s.SkipWaitForDeleteTimeoutSeconds, "skip-wait-for-delete-timeout", s.SkipWaitForDeleteTimeoutSeconds, "if a pod's DeletionTimestamp is older than N seconds, skip waiting for it")
	f.BoolVar(&s.WaitForVolumeDetach, "wait-for-volume-detach", s.WaitForVolumeDetach, "once a node's pods are gone, wait until the volumes of the pods it removed are detached from it (no VolumeAttachment left) before the node is drained")
	f.DurationVar(&s.Settle, "settle", s.Settle, "a node is drained at the earliest this long after its cordon, after a last look at its pods (a pod bound late is evicted too); 0: no settle")
	f.BoolVar(&s.ClearHolds, "clear-disruption-holds", s.ClearHolds, "remove from a budget the drain waits on the status.disruptedPods entry the disruption controller keeps for 2 minutes against a replacement with the same name (a StatefulSet's pod); needs update on poddisruptionbudgets/status")
	f.Int64Var(&s.ChunkSize, "chunk-size", s.ChunkSize, "return large lists in chunks rather than all at once")
	addDryRunFlag(cmd, &o.DryRun, `"none", "client" (print what would happen) or "server" (send every change with dryRun=All)`)
	f.IntVar(&s.MaxParallelNodes, "max-parallel-nodes", s.MaxParallelNodes, "how many nodes drain at once (the whole batch is cordoned first, before any eviction)")
	f.StringVarP(&o.Output, "output", "o", o.Output, `output format: "" (kubectl-style lines) or "json" (NDJSON events on stdout)`)
	f.StringVar(&o.Progress, "progress", "auto", `"auto" (a live progress view in a terminal, plain lines otherwise), "tty" or "plain"`)
	o.addRuleFlags(f, s)
	o.addPolicyFlags(cmd, s)
	o.addSurgeFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("progress", completion.FixedChoices("auto", "tty", "plain"))
	_ = cmd.RegisterFlagCompletionFunc("output", completion.FixedChoices("json"))
}

// Validate checks the flags without calling the API.
func (o *DrainOptions) Validate() error {
	if o.DisableEviction {
		return UsageErrorf("--disable-eviction is not supported: kubectl maintenance never bypasses PodDisruptionBudgets; use kubectl drain --disable-eviction if you must")
	}
	if err := validateOutput(o.Output); err != nil {
		return err
	}
	if err := o.validateRules(&o.Settings); err != nil {
		return err
	}
	switch o.Progress {
	case "", "auto", "plain":
	case "tty":
		if o.Output != "" {
			return UsageErrorf("--progress=tty and -o %s don't go together", o.Output)
		}
	default:
		return UsageErrorf(`invalid --progress %q: must be "auto", "tty" or "plain"`, o.Progress)
	}
	// A rule of the flag, not of the setting (so not Settings.Validate's): the flag's 0
	// is no "default", while the setting's 0 is (a pool's maxUnavailable, the spec's
	// unset), so Settings.Validate must let 0 through.
	if o.Settings.MaxParallelNodes < 1 {
		return UsageErrorf("--max-parallel-nodes must be at least 1, got %d", o.Settings.MaxParallelNodes)
	}
	if err := normalizeDryRun(o.ErrOut, &o.DryRun); err != nil {
		return err
	}
	o.Settings.DryRun = drain.DryRun(o.DryRun)
	o.pool = o.Nodes.Pool
	if err := o.readPolicy(&o.Settings); err != nil {
		return err
	}
	// Windows (planned maintenance).
	if err := o.validateWindow(o.clock(), !o.ServerSide, o.NotAfter); err != nil {
		return err
	}
	if t := o.localNotAfter(); !t.IsZero() {
		o.Settings.NotAfter = t // a local run's --end is its --not-after
	}
	// The settings' one validation, its messages naming the flags.
	if err := flagsError(o.Settings.Validate()); err != nil {
		return err
	}
	return o.Nodes.Validate()
}

func validateOutput(o string) error {
	if o != "" && o != "json" {
		return UsageErrorf(`invalid --output %q: must be "json" (or empty for kubectl-style lines)`, o)
	}
	return nil
}

// Run drains the selected nodes through the operations layer (which resolves them, asks
// for the permissions and records who runs it), printing its events. The members of a
// pool drain rolling, a sliding window of the pool's maxUnavailable (unless
// --max-parallel-nodes is given).
func (o *DrainOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	req := o.request(operation.Drain)
	op, err := o.operator(ctx, cs, req.Pool != "")
	if err != nil {
		return err
	}
	req.IncludeDisrupting = o.IncludeDisrupting // else nodes Karpenter disrupts are left to it (exit 3)
	p := o.eventPrinter()
	run, stopMetrics, err := runmetrics.Observed(o.MetricsAddr, func(events chan<- event.Event) (operation.Summary, error) {
		return op.Run(ctx, req, events)
	})
	if err != nil {
		return err
	}
	defer stopMetrics()
	sum, err := progress.Run(ctx, o.useProgressView(), p, run)
	if drain.IsUsage(err) || ExitCode(err) == ExitUsage {
		// Bad input: one line (printed by the caller), no summary; nothing was changed.
		return WithExitCode(ExitUsage, err)
	}
	var denied *access.Denied
	if errors.As(err, &denied) {
		return err // the permission preflight's one line; nothing was changed
	}
	p.Summary(sum.Summary, err, ExitCode(err))
	return err
}
