package mnttest

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Test 4: two Maintenances over overlapping nodes: the second waits with a condition
// naming the first, then finishes; never both Running.
func TestMaintenancesOverlapWait(t *testing.T) {
	e, mc := slowDrainWithController(t)
	first, second := e.NS+"-first", e.NS+"-second"
	create(e, mc, first, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	waitFor(e, mc, first, "Running", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhaseRunning })
	create(e, mc, second, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 1)})
	m, _ := waitFor(e, mc, second, "waiting", func(m *mntv1.Maintenance) bool {
		return meta.IsStatusConditionTrue(m.Status.Conditions, mntv1.ConditionWaitingForNodes)
	})
	c := meta.FindStatusCondition(m.Status.Conditions, mntv1.ConditionWaitingForNodes)
	if !strings.Contains(c.Message, "maintenance/"+first) || !strings.Contains(c.Message, e.Nodes[1]) {
		t.Errorf("WaitingForNodes says %q, want it to name maintenance/%s and node %s", c.Message, first, e.Nodes[1])
	}
	// Until the first ends, the second never runs.
	for {
		f, s := get(e, mc, first), get(e, mc, second)
		if s.Status.Phase == mntv1.PhaseRunning && !f.Status.Phase.Done() {
			t.Fatalf("both Running: first %s, second %s", f.Status.Phase, s.Status.Phase)
		}
		if f.Status.Phase.Done() {
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
