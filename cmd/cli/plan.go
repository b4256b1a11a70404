package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/planverdict"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// PlanOptions is the "plan" command: the drain's preflight, changing nothing.
type PlanOptions struct {
	DrainOptions
	// Printer is -o: the default is the human plan; json, yaml, jsonpath, custom-columns
	// and go-template print the plan as a DrainPlan object, name prints node/NAME per node.
	Printer *OutputFlags
}

// NewCmdPlan builds "kubectl maintenance plan".
func NewCmdPlan(c *Common) *cobra.Command {
	drainCmd := NewCmdDrain(c)
	o := &PlanOptions{Printer: NewOutputFlags(false)}
	cmd := &cobra.Command{
		Use:   "plan (NODE... | -l SELECTOR)",
		Short: "Show what a drain would do and what will block it, changing nothing",
		Long: `Show, per node, the pods a drain would evict, in which wave (wave 1 goes at once,
wave 2 once the first wave's replacements are Ready, ...), which pods wait on which
PodDisruptionBudget and why, which can never go (a budget that never allows a disruption,
a pod under two budgets, replacements with nowhere to run), and kubectl's warnings
(DaemonSet, emptyDir and unmanaged pods). Takes the same flags as drain.

Exit code 0 when every node can be drained (under --on-blocked=force or skip, also when
the policy ends every pod that can never go: it would be forced, or its node given up),
3 when something can never drain as things stand, 2 for bad input.`,
		Example: `  kubectl maintenance plan node-1 --ignore-daemonsets
  kubectl maintenance plan -l node-role.kubernetes.io/blue --ignore-daemonsets -o json`,
		ValidArgsFunction: completion.Nodes(c.Client),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes.Names = args
			if err := o.Printer.Validate(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			cs, err := o.Client()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cs)
		},
	}
	// plan shares drain's flags and their values (minus what only a drain does).
	o.DrainOptions = NewDrainOptions(c)
	f := cmd.Flags()
	o.Nodes.AddFlags(cmd, c)
	s := &o.Settings // the flags bind to the drain's settings, as drain's do
	f.BoolVar(&s.Force, "force", false, drainCmd.Flags().Lookup("force").Usage)
	f.BoolVar(&s.IgnoreDaemonSets, "ignore-daemonsets", false, drainCmd.Flags().Lookup("ignore-daemonsets").Usage)
	f.BoolVar(&s.DeleteEmptyDirData, "delete-emptydir-data", false, drainCmd.Flags().Lookup("delete-emptydir-data").Usage)
	f.StringVar(&s.PodSelector, "pod-selector", "", drainCmd.Flags().Lookup("pod-selector").Usage)
	f.Int64Var(&s.ChunkSize, "chunk-size", s.ChunkSize, drainCmd.Flags().Lookup("chunk-size").Usage)
	o.addDoNotDisruptFlag(f, s)
	o.addSurgeFlags(cmd)
	addPlanForceFlags(f, drainCmd, s) // what --on-blocked=force would force (drain_force.go)
	o.Printer.AddFlags(cmd)
	o.planOnly = true // Windows (planned maintenance): plan says the window
	o.addWindowFlags(cmd, false)
	return cmd
}

// Run computes and prints the plan.
func (o *PlanOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	req := o.request(operation.Drain)
	op, err := o.operator(ctx, cs, req.Pool != "")
	if err != nil {
		return err
	}
	p, err := op.Plan(ctx, req)
	if err != nil {
		if drain.IsUsage(err) || ExitCode(err) == ExitUsage {
			return WithExitCode(ExitUsage, err)
		}
		return fmt.Errorf("plan: %w", err)
	}
	plan := p.Drain
	if o.Printer.IsTable() {
		render.Plan(o.Out, plan)
		if line := render.WindowLine(o.schedule(), o.clock()); line != "" {
			fmt.Fprintln(o.Out, line)
		}
	} else if err := o.printObject(plan); err != nil {
		return err
	}
	return planverdict.Check(plan, o.Settings.OnBlocked)
}

// printObject prints the plan in one of kubectl's object formats: a DrainPlan object with
// the same fields as the JSON plan had, or, for -o name, node/NAME per node.
func (o *PlanOptions) printObject(plan *event.Plan) error {
	if o.Printer.Format == "name" {
		var nodes []runtime.Object
		for _, n := range plan.Nodes {
			nodes = append(nodes, nodeObject(n.Name))
		}
		return o.Printer.Print(o.Out, nil, asList(nodes, false))
	}
	u, err := render.PlanObject(plan)
	if err != nil {
		return err
	}
	return o.Printer.Print(o.Out, nil, u)
}
