package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// CordonOptions is the "cordon" and "uncordon" commands.
type CordonOptions struct {
	*Common
	Nodes  NodeSelection
	DryRun string
	// Uncordon makes the nodes schedulable instead.
	Uncordon bool
	// Force uncordons a node even when it was cordoned before this tool drained it.
	Force bool
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
		ValidArgsFunction: completeNodes(c),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes.Names = args
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
	if uncordon {
		cmd.Use = "uncordon (NODE... | -l SELECTOR | --pool POOL)"
		cmd.Short = "Make nodes schedulable again, as they were before this tool touched them"
		cmd.Long = `Make nodes schedulable again and remove this tool's annotations. Only a cordon this
tool made is undone: whose cordon a node carries is read from its managedFields (the
field manager that owns spec.unschedulable; this tool writes as "kubectl-maintenance").
A node cordoned by anyone else, before, during or after a drain, stays cordoned unless
--force is given. Running it twice gives the same answer, and --dry-run=client and
--dry-run=server print what the real command does.`
		cmd.Flags().BoolVar(&o.Force, "force", o.Force, "uncordon even a node whose cordon someone else made")
	}
	o.Nodes.AddFlags(cmd, c)
	cmd.Flags().StringVar(&o.DryRun, "dry-run", o.DryRun, `"none", "client" or "server"`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	_ = cmd.RegisterFlagCompletionFunc("dry-run", fixedChoices("none", "client", "server"))
	return cmd
}

// Validate checks the flags without calling the API.
func (o *CordonOptions) Validate() error {
	switch o.DryRun {
	case "none", "client", "server":
	default:
		return UsageErrorf(`invalid --dry-run %q: must be "none", "client" or "server"`, o.DryRun)
	}
	return o.Nodes.Validate()
}

// Run cordons or uncordons every node, printing kubectl's lines.
func (o *CordonOptions) Run(ctx context.Context, cs kubernetes.Interface) error {
	names, _, err := o.Nodes.Resolve(ctx, cs, o.Common)
	if err != nil {
		return err
	}
	if err := o.preflight(ctx, cs); err != nil {
		return err
	}
	sfx := dryRunSuffix(o.DryRun)
	server := o.DryRun == "server"
	var failed []string
	for _, name := range names {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			failed = append(failed, fmt.Sprintf("get node %s: %s", name, oneLine(err.Error())))
			continue
		}
		if !o.Uncordon {
			already := node.Spec.Unschedulable
			if o.DryRun != "client" {
				if already, err = drain.Cordon(ctx, cs, node, server); err != nil {
					failed = append(failed, oneLine(err.Error()))
					continue
				}
			}
			if already {
				fmt.Fprintf(o.Out, "node/%s already cordoned%s\n", name, sfx)
			} else {
				fmt.Fprintf(o.Out, "node/%s cordoned%s\n", name, sfx)
			}
			continue
		}
		failed = append(failed, o.restoreSurges(ctx, cs, name)...)
		res := drain.DecideUncordon(node, o.Force)
		if o.DryRun != "client" {
			if res, err = drain.Uncordon(ctx, cs, node, o.Force, server); err != nil {
				failed = append(failed, oneLine(err.Error()))
				continue
			}
		}
		switch res {
		case drain.AlreadySchedulable:
			fmt.Fprintf(o.Out, "node/%s already uncordoned%s\n", name, sfx)
		case drain.LeftCordoned:
			by := strings.Join(drain.CordonedBy(node), ", ")
			if by == "" {
				by = "someone else"
			}
			fmt.Fprintf(o.Out, "node/%s left cordoned%s: its cordon was made by %s, not kubectl-maintenance (use --force to uncordon it anyway)\n", name, sfx, by)
		default:
			fmt.Fprintf(o.Out, "node/%s uncordoned%s\n", name, sfx)
		}
	}
	if len(failed) > 0 {
		// One line: the caller prints it as "error: ...".
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}
