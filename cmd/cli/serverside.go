package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
	"github.com/kubectl-maintenance/kubectl-maintenance/render"
)

// pickupTimeout is how long the CLI waits for a controller to take up a new object before
// saying why it might not.
const pickupTimeout = 30 * time.Second

// followInterval is how often a follower reads the object.
const followInterval = time.Second

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
			IgnoreDoNotDisrupt: o.IgnoreDoNotDisrupt},
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

// runServerSide creates the Maintenance and follows it (unless --detach).
func (c *Common) runServerSide(ctx context.Context, f ServerSideFlags, spec mntv1.MaintenanceSpec) error {
	mc, err := c.PoolClient()
	if err != nil {
		return err
	}
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: f.Name}, Spec: spec}
	if f.Name == "" {
		m.GenerateName = strings.ToLower(string(spec.Action)) + "-"
	}
	if err := mc.Create(ctx, m); err != nil {
		switch {
		case apierrors.IsInvalid(err):
			return WithExitCode(ExitUsage, fmt.Errorf("the API server refused the Maintenance: %w", err))
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return fmt.Errorf("the Maintenance API is not installed: run `kubectl maintenance install` (%w)", err)
		}
		return fmt.Errorf("create the Maintenance: %w", err)
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
	began := time.Now()
	said := false
	prev := map[string]mntv1.NodeStatus{}
	ticker := time.NewTicker(followInterval)
	defer ticker.Stop()
	for {
		m := &mntv1.Maintenance{}
		if err := mc.Get(context.WithoutCancel(ctx), types.NamespacedName{Name: name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("maintenance/%s was deleted: its run stopped, the nodes keep their state", name)
			}
			return fmt.Errorf("get maintenance/%s: %w", name, err)
		}
		c.printProgress(m, prev)
		if m.Status.Phase.Done() {
			return c.printEnd(m)
		}
		if m.Status.Phase == "" && !said && time.Since(began) >= pickupTimeout {
			said = true
			fmt.Fprintf(c.ErrOut, "Warning: no controller took maintenance/%s up within %s: %s\n", name, pickupTimeout, c.whyNoController(ctx))
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(c.ErrOut, "detached: maintenance/%s runs on in the cluster; follow it again with `kubectl maintenance follow %s`, cancel it with `kubectl maintenance cancel %s`\n", name, name, name)
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// printProgress prints what changed on each node since prev (and updates prev).
func (c *Common) printProgress(m *mntv1.Maintenance, prev map[string]mntv1.NodeStatus) {
	for _, n := range m.Status.Nodes {
		was, seen := prev[n.Name]
		prev[n.Name] = n
		if !seen || was.State != n.State {
			switch n.State {
			case maintenance.NodeCordoned:
				fmt.Fprintf(c.Out, "node/%s cordoned\n", n.Name)
			case maintenance.NodeDraining:
				fmt.Fprintf(c.Out, "node/%s draining (%d pod(s) left)\n", n.Name, n.PodsLeft)
			case maintenance.NodeDrained:
				fmt.Fprintf(c.Out, "node/%s drained\n", n.Name)
			case maintenance.NodeMoved:
				fmt.Fprintf(c.Out, "node/%s moved\n", n.Name)
			case maintenance.NodeUncordoned:
				fmt.Fprintf(c.Out, "node/%s uncordoned\n", n.Name)
			case maintenance.NodeFailed:
				fmt.Fprintf(c.ErrOut, "error: node/%s: %s\n", n.Name, n.Message)
			case maintenance.NodeBlocked:
				fmt.Fprintf(c.ErrOut, "node/%s given up, blocked (it stays cordoned): %s\n", n.Name, n.Message)
			case maintenance.NodeNotStarted:
				fmt.Fprintf(c.ErrOut, "node/%s not started\n", n.Name)
			}
		}
		for _, b := range n.Blockers {
			if !slices.Contains(was.Blockers, b) {
				line := fmt.Sprintf("node/%s: pod %s waits: %s", n.Name, b.Pod, b.Message)
				if b.Cause != "" {
					line += " (" + b.Cause + ")"
				}
				fmt.Fprintln(c.ErrOut, line)
			}
		}
	}
}

// printEnd prints the summary of a finished object and returns its exit code.
func (c *Common) printEnd(m *mntv1.Maintenance) error {
	s := m.Status
	var elapsed time.Duration
	if s.StartTime != nil && s.CompletionTime != nil {
		elapsed = s.CompletionTime.Sub(s.StartTime.Time)
	}
	sum := drain.Summary{NodesDrained: int(s.Counts.NodesDrained), NodesFailed: int(s.Counts.NodesFailed), NodesPending: int(s.Counts.NodesPending),
		PodsEvicted: int(s.Counts.PodsEvicted), PodsPending: int(s.Counts.PodsPending), Evictions: int(s.Counts.Evictions), Refusals: int(s.Counts.Refusals), Elapsed: elapsed}
	for _, n := range s.Nodes {
		switch n.State {
		case maintenance.NodeDrained, maintenance.NodeMoved, maintenance.NodeUncordoned, maintenance.NodeCordoned:
		default:
			sum.PendingNodes = append(sum.PendingNodes, n.Name)
		}
	}
	code := phaseExitCode(m)
	var err error
	if code != ExitOK {
		err = WithExitCode(code, fmt.Errorf("maintenance/%s %s: %s", m.Name, s.Phase, s.Message))
	}
	if m.Spec.Action == mntv1.ActionDrain || m.Spec.Action == mntv1.ActionMove {
		(&render.Human{Out: c.Out, ErrOut: c.ErrOut}).Summary(sum, err, code)
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

// whyNoController names the likely cause of an object no controller took up, from the
// controller's Lease.
func (c *Common) whyNoController(ctx context.Context) string {
	cs, err := c.Client()
	if err != nil {
		return "is `kubectl maintenance controller` running?"
	}
	l, err := cs.CoordinationV1().Leases("kube-system").Get(context.WithoutCancel(ctx), operation.ControllerLeaseID, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "no controller has run here (no Lease kube-system/kubectl-maintenance-controller): start `kubectl maintenance controller`, or apply config/rbac and config/manager"
	case apierrors.IsForbidden(err):
		return "is `kubectl maintenance controller` running? (you may not read its Lease in kube-system to tell)"
	case err != nil:
		return fmt.Sprintf("is `kubectl maintenance controller` running? (its Lease: %v)", err)
	}
	if stale(l) {
		return "the controller is not running: its Lease kube-system/kubectl-maintenance-controller was not renewed (last by " + ptr.Deref(l.Spec.HolderIdentity, "nobody") + ")"
	}
	return "the controller runs (" + ptr.Deref(l.Spec.HolderIdentity, "?") + ") but did not take it up: check its permissions (config/rbac) and its log"
}

func stale(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}
