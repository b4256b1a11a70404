package cli

import (
	"context"
	"fmt"

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
		cmd.Long = `Make nodes schedulable again and remove this tool's annotations. A node that was
already cordoned (by someone else) before this tool drained it stays cordoned, unless
--force is given; a node this tool never touched is uncordoned as kubectl uncordon does.`
		cmd.Flags().BoolVar(&o.Force, "force", o.Force, "uncordon even a node that was cordoned before this tool drained it")
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
	var failed int
	for _, name := range names {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			fmt.Fprintf(o.ErrOut, "error: get node %s: %v\n", name, err)
			failed++
			continue
		}
		if !o.Uncordon {
			already := node.Spec.Unschedulable
			if o.DryRun != "client" {
				if already, err = drain.Cordon(ctx, cs, node, server); err != nil {
					fmt.Fprintf(o.ErrOut, "error: %v\n", err)
					failed++
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
		res := drain.Uncordoned
		if o.DryRun == "client" {
			if !node.Spec.Unschedulable {
				res = drain.AlreadySchedulable
			}
		} else if res, err = drain.Uncordon(ctx, cs, node, o.Force, server); err != nil {
			fmt.Fprintf(o.ErrOut, "error: %v\n", err)
			failed++
			continue
		}
		switch res {
		case drain.AlreadySchedulable:
			fmt.Fprintf(o.Out, "node/%s already uncordoned%s\n", name, sfx)
		case drain.LeftCordoned:
			fmt.Fprintf(o.Out, "node/%s left cordoned%s: it was cordoned before kubectl-maintenance drained it (use --force to uncordon it anyway)\n", name, sfx)
		default:
			fmt.Fprintf(o.Out, "node/%s uncordoned%s\n", name, sfx)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d nodes failed", failed, len(names))
	}
	return nil
}
