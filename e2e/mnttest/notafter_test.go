package mnttest

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 39: a Cordon whose policy.notAfter has passed cordons nothing and ends
// DeadlinePassed, as a Drain does (it cordoned the node before).
func TestCordonPastNotAfterCordonsNothing(t *testing.T) {
	e := newEnv(t, "a")
	e.AddNodes(0)
	mc := mclient(t)
	startController(e)
	past := metav1.NewTime(time.Now().Add(-time.Minute))
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionCordon, Nodes: names(e, 0), Policy: mntv1.Policy{NotAfter: &past}})
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("phases %v: %s", seen, m.Status.Message)
	if m.Status.Phase != mntv1.PhaseDeadlinePassed {
		t.Errorf("phase %s (%s), want DeadlinePassed", m.Status.Phase, m.Status.Message)
	}
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Errorf("node %s cordoned by a Cordon whose notAfter had passed", e.Nodes[0])
	}
}
