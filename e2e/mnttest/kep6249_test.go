package mnttest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/operation"
)

// Issue 39, test 6 (KEP-6249: the kubelet sets DrainInProgress False when it starts): a
// DrainInProgress set False by someone else on a node the run still drains is True again
// within 5 s, and the run is not cancelled by it: it goes on to Succeed, every node drained.
func TestDrainInProgressSetFalseMidRunIsSetTrueAgain(t *testing.T) {
	e, mc := slowDrainWithController(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	var node string
	waitFor(e, mc, e.NS, "a node draining with DrainInProgress True", func(m *mntv1.Maintenance) bool {
		for _, n := range m.Status.Nodes {
			if n.State == maintenance.NodeDraining && n.PodsLeft > 1 && nodeCondition(e, n.Name, "DrainInProgress").Status == corev1.ConditionTrue {
				node = n.Name
				return true
			}
		}
		return false
	})
	kubelet := corev1.NodeCondition{Type: operation.ConditionDrainInProgress, Status: corev1.ConditionFalse, Reason: "KubeletStarted", Message: "set by the test as the kubelet of KEP-6249"}
	if err := operation.PatchNodeConditions(e.Ctx, e.C, node, time.Now(), kubelet); err != nil {
		t.Fatal(err)
	}
	setFalse := time.Now()
	if c := nodeCondition(e, node, "DrainInProgress"); c.Status != corev1.ConditionFalse {
		t.Fatalf("node %s: DrainInProgress %+v right after the patch, want False", node, c)
	}
	for nodeCondition(e, node, "DrainInProgress").Status != corev1.ConditionTrue {
		if time.Since(setFalse) > 10*time.Second {
			t.Fatalf("node %s: DrainInProgress still not True %s after it was set False", node, time.Since(setFalse).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
	back := time.Since(setFalse)
	t.Logf("FIGURE kep-6249: DrainInProgress True again %s after it was set False on %s", back.Round(100*time.Millisecond), node)
	if back > 5*time.Second {
		t.Errorf("DrainInProgress True again after %s, want within 5 s", back.Round(100*time.Millisecond))
	}
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded || m.Status.Counts.NodesDrained != 2 {
		t.Errorf("phase %s (%s), nodes %s: want Succeeded with both nodes drained", m.Status.Phase, m.Status.Message, nodeStates(m))
	}
	if c := nodeCondition(e, node, "DrainInProgress"); c.Status != corev1.ConditionFalse {
		t.Errorf("node %s after the run: DrainInProgress %+v, want False", node, c)
	}
}
