package mnttest

import (
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Test 2: two replicas; the leader is killed (SIGKILL) while its run waits on a budget;
// the other takes over and finishes; eviction requests stay within pods + nodes.
func TestMaintenanceFailover(t *testing.T) {
	e := newEnv(t, "a", "spare")
	e.AddNodes(0)
	const pods = 4
	slow := e.Here(fixture.PodOptions{ReadyDelay: 5 * time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", pods, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", pods)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	e.Guard()
	mc := mclient(t)
	lease := []string{"--leader-elect", "--leader-election-namespace=" + e.NS, "--leader-election-lease-duration=6s",
		"--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s"}
	first := runController(e, lease...)
	leader := waitHolder(e, "") // the only replica
	runController(e, lease...)
	base := evictions(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	waitFor(e, mc, e.NS, "a wait on the budget", func(m *mntv1.Maintenance) bool {
		return len(m.Status.Nodes) == 1 && len(m.Status.Nodes[0].Blockers) > 0 && m.Status.Counts.PodsEvicted >= 1
	})
	killed := time.Now()
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitHolder(e, leader)
	takeover := time.Now()
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	done := time.Now()
	n := evictions(e) - base
	t.Logf("FIGURE test2: killed at 0, takeover after %s, finished after %s; %v eviction requests for %d pods on 1 node; status %s counts %+v",
		takeover.Sub(killed).Round(100*time.Millisecond), done.Sub(killed).Round(100*time.Millisecond), n, pods, m.Status.Phase, m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if n > pods+1 {
		t.Errorf("%v eviction requests, want at most %d (pods + nodes)", n, pods+1)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the node", len(left))
	}
}

// waitHolder waits until the controller's Lease in the test's namespace has a holder other
// than not, and returns it.
func waitHolder(e *fixture.Env, not string) string {
	e.T.Helper()
	for {
		l, err := e.C.CoordinationV1().Leases(e.NS).Get(e.Ctx, "kubectl-maintenance-controller", metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != not {
			return *l.Spec.HolderIdentity
		}
		select {
		case <-e.Ctx.Done():
			e.T.Fatalf("no new holder of the Lease (not %q): %v", not, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
