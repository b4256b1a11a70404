package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/kubeargs"
	"github.com/kubectl-maintenance/kubectl-maintenance/cmd/cli/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard"
	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
)

// DashboardOptions is "kubectl maintenance dashboard".
type DashboardOptions struct {
	*Common
	// LogFile takes the client's logs (-v) while the dashboard owns the screen.
	LogFile string
	// clusterFlags are the cluster flags given (kubeargs.ClusterFlags), for the commands it prints.
	clusterFlags []string
}

// NewCmdDashboard builds "kubectl maintenance dashboard" (alias ui).
func NewCmdDashboard(c *Common) *cobra.Command {
	o := &DashboardOptions{Common: c}
	cmd := &cobra.Command{
		Use:     "dashboard",
		Aliases: []string{"ui"},
		Short:   "Interactive terminal dashboard: nodes, pools, PDB budgets, live drain progress; act on selected nodes",
		Long: `An interactive dashboard (needs a terminal). Views: 1 Nodes, 2 Pools, 3 PDBs, 4 Progress,
5 Events (tab cycles). On Nodes: space selects, a selects all visible, / filters; then
c cordon, u uncordon, d drain, m move to a pool. Every action shows its plan first and asks
for confirmation; drain options can be set in the dialog. Several actions may run at once
(a node is in at most one); on Progress, x cancels the action of the node under the cursor,
and p, r, x pause, resume and cancel a Maintenance. Enter (d on Progress and Events) opens
the detail of the node, budget or Maintenance under the cursor: its whole wait, the
budget's numbers, its Events; Enter follows a link in it, esc goes back. The Events view
shows the Events of the object under the cursor of the view left. q quits, asking first while actions run: they are stopped, the nodes keep their state, and
the command prints what is left and how to finish it, then exits 130.

The dashboard starts at once: until the watches have listed, and whenever the API server
cannot be reached or a permission is missing, the status line says so in one line.
Data comes from watches, live.`,
		Args: noArgsUsage,
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.LogFile, "log-file", "", "write client logs (-v) to this file while the dashboard owns the screen (default: discarded)")
	return cmd
}

// Complete reads the cluster flags given.
func (o *DashboardOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.clusterFlags = kubeargs.ClusterFlags(cmd)
	return nil
}

// Validate checks that stdin and stdout are terminals.
func (o *DashboardOptions) Validate() error {
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return UsageErrorf("the dashboard needs a terminal (stdin and stdout); use plan, drain and -o json in scripts")
	}
	return nil
}

// Run shows the dashboard until the user quits.
func (o *DashboardOptions) Run(ctx context.Context) error {
	return runDashboard(ctx, o.Common, o.LogFile, o.clusterFlags)
}

func runDashboard(parent context.Context, c *Common, logFile string, flags []string) error {
	cs, err := c.Client()
	if err != nil {
		return err
	}
	pc, err := c.PoolClient()
	if err != nil {
		return err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	ec, err := c.EventClient()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	// klog must not write to the screen the dashboard owns: client-go's reflectors log
	// every failed watch there. Their errors reach the status line through source.
	restore, err := progress.LogTo(logFile, c.ErrOut)
	if err != nil {
		return err
	}
	defer restore()

	_, noColor := os.LookupEnv("NO_COLOR")
	res, runErr := dashboard.Run(parent, dashboard.Config{Kube: cs, EventKube: ec, Pools: pc, Dynamic: dyn, Server: cfg.Host,
		User: c.fallbackUser(), Request: dashboardRequest(c), In: c.In, Out: c.Out, NoColor: noColor, ClusterFlags: flags})
	for _, line := range res.Stopped {
		fmt.Fprintf(c.ErrOut, "stopped: %s\n", line)
	}
	switch {
	case res.Interrupted:
		return WithExitCode(ExitInterrupted, errors.New("interrupted: the dashboard stopped the actions that were running (above: what is left and how to finish)"))
	case runErr != nil && parent.Err() == nil:
		return runErr
	}
	return parent.Err()
}

// DashboardBackend is the dashboard's Backend on the cluster c's flags point at, without
// a terminal and without the watches (Snapshots delivers nothing): what a test drives the
// dashboard's actions through. wait waits for the actions once ctx is cancelled.
func DashboardBackend(ctx context.Context, c *Common) (b tui.Backend, wait func(), err error) {
	cs, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	pc, err := c.PoolClient()
	if err != nil {
		return nil, nil, err
	}
	b, wait = dashboard.Backend(ctx, dashboard.Config{Kube: cs, Pools: pc, User: c.fallbackUser(), Request: dashboardRequest(c)})
	return b, wait, nil
}

// dashboardRequest builds the dashboard's requests as the drain command builds its own,
// from the dialog's settings (which start from drain.DefaultSettings, as the commands').
func dashboardRequest(c *Common) dashboard.RequestFunc {
	return func(action operation.Action, settings drain.Settings, nodes []string) operation.Request {
		d := NewDrainOptions(c)
		d.Settings = settings // the dialog fills the drain's settings
		d.Nodes.Names = nodes
		return d.request(action)
	}
}
