package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// newCmdFollow builds "follow NAME": print a Maintenance's progress until it ends, with the
// exit code of the same local run.
func newCmdFollow(c *Common) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "follow NAME",
		Short: "Follow a Maintenance until it ends: the lines and the exit code of the same local run",
		Long: "Follow a Maintenance until it ends: the lines and the exit code of the same local run. Ctrl-C detaches (the object runs on).\n" +
			"A name that does not exist is an error (exit 2); an object deleted while followed (cancelled) ends the follow with exit 1.\n\n" +
			followedEventsHelp + "\n\n" + ExitCodesHelp,
		Example: `  kubectl maintenance follow drain-x7k2p
  kubectl maintenance follow drain-x7k2p -o json | jq -c 'select(.type == "summary")'`,
		Args: exactlyOne("maintenance"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output); err != nil {
				return err
			}
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			return c.follow(cmd.Context(), mc, args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", `output format: "" (kubectl-style lines) or "json" (NDJSON events on stdout)`)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedChoices("json"))
	return cmd
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

// newCmdGet builds "get [NAME... | -l SELECTOR]": Maintenances with kubectl's printers.
// As kubectl get: without a name (or with several) -o json|yaml print a v1 List, even of
// one object; one name prints the object; -o name prints kind.group/name per object.
func newCmdGet(c *Common) *cobra.Command {
	out := NewOutputFlags(true)
	var watch bool
	var selector string
	cmd := &cobra.Command{
		Use:     "get [NAME... | -l SELECTOR]",
		Aliases: []string{"list"},
		Short:   "List Maintenances (-o wide|json|yaml|name|jsonpath=..., -l, --watch)",
		Example: `  kubectl maintenance get
  kubectl maintenance get -o name
  kubectl maintenance get -l team=infra -o jsonpath='{.items[*].metadata.name}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateListing(out, selector); err != nil {
				return err
			}
			if selector != "" && len(args) > 0 {
				return UsageErrorf("name cannot be provided when a selector is specified")
			}
			mc, err := c.PoolClient()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			headers := out.NoHeaders
			defer func() { out.NoHeaders = headers }()
			for first := true; ; first = false {
				list, err := getMaintenances(ctx, mc, args, selector)
				if err != nil {
					return err
				}
				out.NoHeaders = headers || !first
				if err := printMaintenances(c, out, list, len(args) == 1, first); err != nil {
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
	out.AddFlags(cmd)
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector (kubectl's syntax: -l key=value,key2!=value2)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "list again every 2 seconds")
	return cmd
}

// getMaintenances reads the named Maintenances, or every one matching selector.
func getMaintenances(ctx context.Context, mc client.Reader, names []string, selector string) (*mntv1.MaintenanceList, error) {
	if selector == "" {
		return maintenance.Get(ctx, mc, names)
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, UsageErrorf("invalid --selector %q: %v", selector, err)
	}
	list := &mntv1.MaintenanceList{}
	if err := mc.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list maintenances: %w", err)
	}
	return list, nil
}

// printMaintenances prints list as the table, or in any other format as kubectl get
// does: one object alone when single (one name given), else a v1 List.
func printMaintenances(c *Common, out *OutputFlags, list *mntv1.MaintenanceList, single, first bool) error {
	if out.IsTable() && len(list.Items) == 0 {
		if first {
			fmt.Fprintln(c.ErrOut, "No resources found")
		}
		return nil
	}
	objs := make([]runtime.Object, 0, len(list.Items))
	for i := range list.Items {
		m := &list.Items[i]
		m.ManagedFields = nil // as kubectl get (--show-managed-fields=false)
		m.SetGroupVersionKind(mntv1.GroupVersion.WithKind("Maintenance"))
		objs = append(objs, m)
	}
	return out.Print(c.Out, render.MaintenanceTable(list, time.Now()), asList(objs, single))
}
