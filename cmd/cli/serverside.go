package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/access"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// ServerSideFlags are --server-side, --detach and --name: create a Maintenance instead of
// running locally.
type ServerSideFlags struct {
	ServerSide bool
	Detach     bool
	Name       string
}

func (f *ServerSideFlags) addServerSideFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.ServerSide, "server-side", false, "create a Maintenance object that the in-cluster controller runs (kubectl maintenance controller), and follow it")
	cmd.Flags().BoolVar(&f.Detach, "detach", false, "with --server-side: return once the Maintenance is created")
	cmd.Flags().StringVar(&f.Name, "name", "", "with --server-side: the Maintenance's name (default: generated)")
}

func (f *ServerSideFlags) validateServerSide(dryRun string) error {
	if !f.ServerSide && (f.Detach || f.Name != "") {
		return UsageErrorf("--detach and --name go with --server-side")
	}
	if f.ServerSide && dryRun != "" && dryRun != "none" {
		return UsageErrorf("--server-side and --dry-run don't go together: use --dry-run alone to see the plan")
	}
	return nil
}

// maintenanceSpec turns the drain flags into a Maintenance's spec.
func (o *DrainOptions) maintenanceSpec(action mntv1.Action) mntv1.MaintenanceSpec {
	s := mntv1.MaintenanceSpec{Action: action, Nodes: o.Nodes.Names, Selector: o.Nodes.Selector, Pool: o.Nodes.Pool,
		Drain: mntv1.DrainSettings{Force: o.Force, IgnoreDaemonSets: o.IgnoreDaemonSets, DeleteEmptyDirData: o.DeleteEmptyDirData,
			GracePeriodSeconds: ptr.To(int32(o.GracePeriod)), PodSelector: o.PodSelector,
			SkipWaitForDeleteTimeoutSeconds: int32(o.SkipWaitForDeleteTimeout), ChunkSize: ptr.To(o.ChunkSize),
			IgnoreDoNotDisrupt: o.IgnoreDoNotDisrupt, IncludeDisrupting: o.IncludeDisrupting},
		Policy: mntv1.Policy{OnBlocked: o.OnBlocked, Surge: o.Surge},
	}
	if o.Timeout > 0 {
		s.Drain.Timeout = &metav1.Duration{Duration: o.Timeout}
	}
	if o.BlockedAfter > 0 {
		s.Policy.BlockedAfter = &metav1.Duration{Duration: o.BlockedAfter}
	}
	if !o.notAfter.IsZero() {
		s.Policy.NotAfter = &metav1.Time{Time: o.notAfter}
	}
	if o.Soak > 0 {
		s.Policy.Soak = &metav1.Duration{Duration: o.Soak}
	}
	if o.maxParallelSet {
		s.Policy.MaxParallelNodes = int32(o.MaxParallelNodes)
	}
	return s
}

// runServerSide creates the Maintenance and follows it (unless --detach). The object
// names its requester (the API server's answer to who the user is), which the controller
// records on the nodes.
func (c *Common) runServerSide(ctx context.Context, f ServerSideFlags, spec mntv1.MaintenanceSpec) error {
	mc, err := c.PoolClient()
	if err != nil {
		return err
	}
	cs, _ := c.Client() // nil: the requester stays unknown
	m, err := maintenance.Create(ctx, mc, f.Name, spec, access.WhoAmI(ctx, cs, ""))
	if apierrors.IsInvalid(err) {
		return WithExitCode(ExitUsage, err)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "maintenance.maintenance.kubectl-maintenance.io/%s created\n", m.Name)
	if f.Detach {
		fmt.Fprintf(c.ErrOut, "follow it with `kubectl maintenance follow %s`; cancel it with `kubectl maintenance cancel %s`\n", m.Name, m.Name)
		return nil
	}
	return c.follow(ctx, mc, m.Name)
}

// follow prints the object's progress as lines until it ends, and returns the exit code
// the CLI gives the same outcome. Ctrl-C detaches: the object runs on.
func (c *Common) follow(ctx context.Context, mc client.Client, name string) error {
	cs, _ := c.Client() // only to say why no controller took the object up
	f := &maintenance.Follower{Client: mc, Kube: cs,
		Changed: func(ch maintenance.NodeChange) { render.MaintenanceChange(c.Out, c.ErrOut, ch) },
		NotTakenUp: func(why string) {
			fmt.Fprintf(c.ErrOut, "Warning: no controller took maintenance/%s up within %s: %s\n", name, maintenance.PickupTimeout, why)
		}}
	m, err := f.Follow(ctx, name)
	if ctx.Err() != nil && err == ctx.Err() {
		fmt.Fprintf(c.ErrOut, "detached: maintenance/%s runs on in the cluster; follow it again with `kubectl maintenance follow %s`, cancel it with `kubectl maintenance cancel %s`\n", name, name, name)
	}
	if err != nil {
		return err
	}
	code := phaseExitCode(m)
	if code != ExitOK {
		err = WithExitCode(code, fmt.Errorf("maintenance/%s %s: %s", m.Name, m.Status.Phase, m.Status.Message))
	}
	if m.Spec.Action == mntv1.ActionDrain || m.Spec.Action == mntv1.ActionMove {
		(&render.Human{Out: c.Out, ErrOut: c.ErrOut}).Summary(maintenance.Summary(m), err, code)
	}
	return err
}

// phaseExitCode is the exit code of a finished Maintenance: the local run's for the same
// outcome.
func phaseExitCode(m *mntv1.Maintenance) int {
	switch m.Status.Phase {
	case mntv1.PhaseSucceeded:
		return ExitOK
	case mntv1.PhaseBlocked:
		return ExitBlocked
	case mntv1.PhaseDeadlinePassed:
		return ExitNotStarted
	case mntv1.PhaseTimedOut:
		return ExitTimeout
	}
	for _, cond := range m.Status.Conditions {
		if cond.Type == mntv1.ConditionProgressing && cond.Reason == maintenance.ReasonInvalid {
			return ExitUsage
		}
	}
	return ExitError
}
