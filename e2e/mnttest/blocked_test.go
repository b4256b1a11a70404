package mnttest

import (
	"context"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 34.1, as a Maintenance: policy onBlocked skip, blockedAfter 15s, three nodes under
// a binding budget, kube-controller-manager killed 2 s after the Maintenance is created and
// restarted 40 s later. Its budget's status is not current meanwhile: no node is given up,
// and the Maintenance succeeds once the controller-manager is back. Not parallel: every
// other test's budgets would freeze too.
func TestMaintenanceControllerManagerKilledUnderSkip(t *testing.T) {
	e := newEnv(t, "ou-0", "ou-1", "ou-2", "sp-0", "sp-1")
	t.Cleanup(func() {
		if pid, _ := shared.PID(cluster.ControllerManager); pid == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := shared.Restart(ctx, cluster.ControllerManager); err != nil {
				t.Errorf("restart kube-controller-manager after the test: %v", err)
			}
		}
	})
	e.AddNodes(0, 1, 2)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "w", 6, e.Here(fixture.PodOptions{ReadyDelay: 2 * time.Second, SpreadByHostname: true})); err != nil {
		t.Fatal(err)
	}
	e.Ready("w", 6)
	e.PDB("w", fixture.PDBSpec{App: "w", MinAvailable: fixture.Int(5)}, 1)
	e.AddNodes(3, 4)
	e.Guard()
	mc := mclient(t)
	startController(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1, 2), Reason: "issue 34",
		Policy: mntv1.Policy{OnBlocked: "skip", BlockedAfter: mntv1.DurationOf(15 * time.Second)}})
	time.Sleep(2 * time.Second)
	if err := shared.Kill(cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Second)
	if err := shared.Restart(e.Ctx, cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("phases seen: %v; nodes: %s; counts %+v", seen, nodeStates(m), m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded: no node given up over a controller-manager outage", m.Status.Phase, m.Status.Message)
	}
	if c := m.Status.Counts; c.NodesDrained != 3 || c.PodsPending != 0 {
		t.Errorf("counts %+v, want 3 nodes drained, no pod left", c)
	}
}
