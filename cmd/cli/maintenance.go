package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/completion"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/render"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// FollowOptions is "follow NAME": print a Maintenance's progress until it ends, with the
// exit code of the same local run.
type FollowOptions struct {
	*Common
	Name string
	// Output is "" (kubectl-style lines) or "json" (NDJSON events).
	Output string
}

// Complete takes the name.
func (o *FollowOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = args[0]
	return nil
}

// Validate checks -o.
func (o *FollowOptions) Validate() error { return validateOutput(o.Output) }

// Run follows the object until it ends.
func (o *FollowOptions) Run(ctx context.Context) error {
	mc, err := o.PoolClient()
	if err != nil {
		return err
	}
	return o.follow(ctx, mc, o.Name, o.Output)
}

func newCmdFollow(c *Common) *cobra.Command {
	o := &FollowOptions{Common: c}
	cmd := &cobra.Command{
		Use:   "follow NAME",
		Short: "Follow a Maintenance until it ends: the lines and the exit code of the same local run",
		Long: "Follow a Maintenance until it ends: the lines and the exit code of the same local run. Ctrl-C detaches (the object runs on).\n" +
			"A name that does not exist is an error (exit 2); an object deleted while followed (cancelled) ends the follow with exit 1.\n\n" +
			followedEventsHelp + "\n\n" + ExitCodesHelp,
		Example: `  kubectl maintenance follow drain-x7k2p
  kubectl maintenance follow drain-x7k2p -o json | jq -c 'select(.type == "summary")'`,
		Args: exactlyOne("maintenance"),
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", `output format: "" (kubectl-style lines) or "json" (NDJSON events on stdout)`)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.FixedChoices("json"))
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

// CancelOptions is "cancel NAME": delete the Maintenance; the controller stops its run
// (a finalizer) and the nodes keep their state.
type CancelOptions struct {
	*Common
	Name string
}

// Complete takes the name.
func (o *CancelOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = args[0]
	return nil
}

// Validate has nothing to check (the name is the API server's to find).
func (o *CancelOptions) Validate() error { return nil }

// Run cancels the Maintenance.
func (o *CancelOptions) Run(ctx context.Context) error {
	mc, err := o.PoolClient()
	if err != nil {
		return err
	}
	if err := maintenance.Cancel(ctx, mc, o.Name); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "maintenance.maintenance.kubectl-maintenance.io/%s cancelled\n", o.Name)
	return nil
}

func newCmdCancel(c *Common) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel NAME",
		Short: "Cancel a Maintenance: its run stops, its nodes stay cordoned with their state (uncordon them to undo)",
		Args:  exactlyOne("maintenance"),
		RunE:  runE(&CancelOptions{Common: c}),
	}
}

// PauseOptions is "pause" (Pause true) and "resume" (Pause false).
type PauseOptions struct {
	*Common
	Names []string
	// All is every Maintenance not finished.
	All   bool
	Pause bool
}

// Complete takes the names.
func (o *PauseOptions) Complete(_ *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks that names or --all, not both, were given.
func (o *PauseOptions) Validate() error {
	if o.All == (len(o.Names) > 0) {
		return UsageErrorf("give one Maintenance name or --all")
	}
	return nil
}

// Run pauses or resumes the Maintenances, one line each.
func (o *PauseOptions) Run(ctx context.Context) error {
	mc, err := o.PoolClient()
	if err != nil {
		return err
	}
	verb := "resumed"
	if o.Pause {
		verb = "paused"
	}
	return maintenance.SetPaused(ctx, mc, o.Names, o.All, o.Pause, func(name string) {
		fmt.Fprintf(o.Out, "maintenance.maintenance.kubectl-maintenance.io/%s %s\n", name, verb)
	})
}

func newCmdPause(c *Common, pause bool) *cobra.Command {
	o := &PauseOptions{Common: c, Pause: pause}
	use := "resume (NAME | --all)"
	short := "Resume paused Maintenances: the run continues from the nodes' records"
	if pause {
		use = "pause (NAME | --all)"
		short = "Pause Maintenances: no new eviction and no new node until resumed (nodes keep their state)"
	}
	cmd := &cobra.Command{Use: use, Short: short, RunE: runE(o)}
	cmd.Flags().BoolVar(&o.All, "all", false, "every Maintenance not finished")
	return cmd
}

// GetOptions is "get [NAME... | -l SELECTOR]": Maintenances with kubectl's printers.
// As kubectl get: without a name (or with several) -o json|yaml print a v1 List, even of
// one object; one name prints the object; -o name prints kind.group/name per object.
type GetOptions struct {
	*Common
	Names    []string
	Selector string
	Output   *OutputFlags
	// Watch lists again every 2 seconds.
	Watch bool
}

// Complete takes the names.
func (o *GetOptions) Complete(_ *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks -o and the selector, and that names and a selector are not both given.
func (o *GetOptions) Validate() error {
	if err := validateListing(o.Output, o.Selector); err != nil {
		return err
	}
	if o.Selector != "" && len(o.Names) > 0 {
		return UsageErrorf("name cannot be provided when a selector is specified")
	}
	return nil
}

// Run lists the Maintenances, again every 2 seconds with --watch.
func (o *GetOptions) Run(ctx context.Context) error {
	mc, err := o.PoolClient()
	if err != nil {
		return err
	}
	out := o.Output
	headers := out.NoHeaders
	defer func() { out.NoHeaders = headers }()
	for first := true; ; first = false {
		list, err := getMaintenances(ctx, mc, o.Names, o.Selector)
		if err != nil {
			return err
		}
		out.NoHeaders = headers || !first
		if err := printMaintenances(o.Common, out, list, len(o.Names) == 1, first); err != nil {
			return err
		}
		if !o.Watch {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func newCmdGet(c *Common) *cobra.Command {
	o := &GetOptions{Common: c, Output: NewOutputFlags(true)}
	cmd := &cobra.Command{
		Use:     "get [NAME... | -l SELECTOR]",
		Aliases: []string{"list"},
		Short:   "List Maintenances (-o wide|json|yaml|name|jsonpath=..., -l, --watch)",
		Example: `  kubectl maintenance get
  kubectl maintenance get -o name
  kubectl maintenance get -l team=infra -o jsonpath='{.items[*].metadata.name}'`,
		RunE: runE(o),
	}
	o.Output.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "label selector (kubectl's syntax: -l key=value,key2!=value2)")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "list again every 2 seconds")
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
