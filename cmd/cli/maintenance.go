package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// newCmdFollow builds "follow NAME": print a Maintenance's progress until it ends, with the
// exit code of the same local run.
func newCmdFollow(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "follow NAME",
		Short: "Follow a Maintenance until it ends: the lines and the exit code of the same local run",
		Long:  "Follow a Maintenance until it ends: the lines and the exit code of the same local run. Ctrl-C detaches (the object runs on).\n\n" + ExitCodesHelp,
		Args:  exactlyOne("maintenance"),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			return c.follow(cmd.Context(), mc, args[0])
		},
	}
}

func exactlyOne(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return UsageErrorf("give exactly one %s name, got %d", what, len(args))
		}
		return nil
	}
}

// newCmdCancel builds "cancel NAME": delete the Maintenance; the controller stops its run
// (a finalizer) and the nodes keep their state.
func newCmdCancel(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel NAME",
		Short: "Cancel a Maintenance: its run stops, its nodes stay cordoned with their state (uncordon them to undo)",
		Args:  exactlyOne("maintenance"),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			if err := maintenance.Cancel(cmd.Context(), mc, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(c.Out, "maintenance.maintenance.kubectl-maintenance.io/%s cancelled\n", args[0])
			return nil
		},
	}
}

// newCmdPause builds "pause" (paused true) and "resume" (paused false).
func newCmdPause(c *Common, pause bool) *cobra.Command {
	var all bool
	use, verb := "resume (NAME | --all)", "resumed"
	short := "Resume paused Maintenances: the run continues from the nodes' records"
	if pause {
		use, verb = "pause (NAME | --all)", "paused"
		short = "Pause Maintenances: no new eviction and no new node until resumed (nodes keep their state)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return UsageErrorf("give one Maintenance name or --all")
			}
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			return maintenance.SetPaused(cmd.Context(), mc, args, all, pause, func(name string) {
				fmt.Fprintf(c.Out, "maintenance.maintenance.kubectl-maintenance.io/%s %s\n", name, verb)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every Maintenance not finished")
	return cmd
}

// newCmdGet builds "get [NAME...]": Maintenances with kubectl's printers.
func newCmdGet(c *Common) *cobra.Command {
	pf := genericclioptions.NewPrintFlags("").WithTypeSetter(Scheme())
	var watch bool
	cmd := &cobra.Command{
		Use:     "get [NAME...]",
		Aliases: []string{"list"},
		Short:   "List Maintenances (-o wide|json|yaml|name|jsonpath=..., --watch)",
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			out := ptrOr(pf.OutputFormat)
			var p printers.ResourcePrinter
			if out != "" && out != "wide" {
				if p, err = pf.ToPrinter(); err != nil {
					return WithExitCode(ExitUsage, err)
				}
			}
			ctx := cmd.Context()
			for first := true; ; first = false {
				list, err := maintenance.Get(ctx, mc, args)
				if err != nil {
					return err
				}
				if out == "" || out == "wide" {
					p = printers.NewTablePrinter(printers.PrintOptions{Wide: out == "wide", NoHeaders: !first})
				}
				if err := printMaintenances(c, p, out, list); err != nil {
					return err
				}
				if !watch {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(2 * time.Second):
				}
			}
		},
	}
	pf.AddFlags(cmd)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "list again every 2 seconds")
	return cmd
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func printMaintenances(c *Common, p printers.ResourcePrinter, out string, list *mntv1.MaintenanceList) error {
	if out != "" && out != "wide" {
		list.SetGroupVersionKind(mntv1.GroupVersion.WithKind("MaintenanceList"))
		for i := range list.Items {
			list.Items[i].SetGroupVersionKind(mntv1.GroupVersion.WithKind("Maintenance"))
		}
		if out == "name" || len(list.Items) != 1 {
			return p.PrintObj(list, c.Out)
		}
		return p.PrintObj(&list.Items[0], c.Out)
	}
	return p.PrintObj(render.MaintenanceTable(list, time.Now()), c.Out)
}
