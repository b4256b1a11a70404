package mnttest

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// After a leader change, who holds a node is read from the node records: the first
// Maintenance's drain waits on a budget, its leader is killed (SIGKILL), and a second
// Maintenance over the same node, created once the other replica leads, waits naming
// the first and the node, never runs alongside it, and succeeds once the first ends.
func TestOverlapAfterLeaderChangeWaitsForTheRecordedHolder(t *testing.T) {
	e := newEnv(t, "a", "spare")
	e.AddNodes(0)
	const pods = 6
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
	leaderProc := runController(e, lease...)
	leader := waitHolder(e, "") // the only replica
	runController(e, lease...)
	first, second := e.NS+"-first", e.NS+"-second"
	create(e, mc, first, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	// Cordoned and evicting: the node's record names maintenance/<first>.
	waitFor(e, mc, first, "a wait on the budget", func(m *mntv1.Maintenance) bool {
		return len(m.Status.Nodes) == 1 && len(m.Status.Nodes[0].Blockers) > 0 && m.Status.Counts.PodsEvicted >= 1
	})
	if err := leaderProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitHolder(e, leader)
	if f := get(e, mc, first); f.Status.Phase.Done() {
		t.Fatalf("first ended (%s) before the second was made: the test proves nothing", f.Status.Phase)
	}
	create(e, mc, second, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	m, _ := waitFor(e, mc, second, "waiting", func(m *mntv1.Maintenance) bool {
		return meta.IsStatusConditionTrue(m.Status.Conditions, mntv1.ConditionWaitingForNodes)
	})
	c := meta.FindStatusCondition(m.Status.Conditions, mntv1.ConditionWaitingForNodes)
	if !strings.Contains(c.Message, "maintenance/"+first) || !strings.Contains(c.Message, e.Nodes[0]) {
		t.Errorf("WaitingForNodes says %q, want it to name maintenance/%s and node %s", c.Message, first, e.Nodes[0])
	}
	// Until the first ends, the second never runs.
	for {
		f, s := get(e, mc, first), get(e, mc, second)
		if s.Status.Phase == mntv1.PhaseRunning && !f.Status.Phase.Done() {
			t.Fatalf("both Running: first %s, second %s", f.Status.Phase, s.Status.Phase)
		}
		if f.Status.Phase.Done() {
			if f.Status.Phase != mntv1.PhaseSucceeded {
				t.Errorf("first: phase %s (%s), want Succeeded", f.Status.Phase, f.Status.Message)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	m, seen := waitFor(e, mc, second, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("second: phase %s (%s), want Succeeded; phases %v", m.Status.Phase, m.Status.Message, seen)
	}
	if meta.IsStatusConditionTrue(m.Status.Conditions, mntv1.ConditionWaitingForNodes) {
		t.Errorf("second still says it waits")
	}
}
