package mnttest

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 30, test 5: a paused Maintenance keeps its nodes past the heartbeat's expiry: a
// plain uncordon is refused naming it, a CLI drain waits naming it; resume finishes from
// the records.
func TestPausedMaintenanceKeepsItsNodes(t *testing.T) {
	e, mc := slowDrainWithController(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
	waitFor(e, mc, e.NS, "an eviction", func(m *mntv1.Maintenance) bool { return m.Status.Counts.PodsEvicted >= 1 })
	patch(e, mc, e.NS, `{"spec":{"paused":true}}`)
	m, _ := waitFor(e, mc, e.NS, "Paused", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhasePaused })
	id := maintenance.RunID(m)
	// Past the heartbeat's expiry: a hold nobody renewed would be taken for dead by now.
	time.Sleep(noderecord.HeartbeatExpiry + 5*time.Second)
	node := e.Node(e.Nodes[0])
	rec := noderecord.Read(node, "")
	if !node.Spec.Unschedulable || rec.State != noderecord.StateDraining || rec.Run.ID != id || time.Since(rec.Heartbeat) > noderecord.HeartbeatExpiry {
		t.Fatalf("paused node: unschedulable=%v state=%q run=%q heartbeat %s ago; want cordoned, draining, held by %s, a live heartbeat",
			node.Spec.Unschedulable, rec.State, rec.Run.ID, time.Since(rec.Heartbeat).Round(time.Second), id)
	}
	r := e.Run("uncordon", e.Nodes[0])
	if r.Code == 0 || !strings.Contains(r.Stderr, "maintenance/"+e.NS) {
		t.Errorf("uncordon of a paused Maintenance's node: exit %d, stderr %q; want refused naming maintenance/%s", r.Code, r.Stderr, e.NS)
	}
	if !e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Fatalf("the node was uncordoned")
	}
	r = e.Run("drain", e.Nodes[0], "--timeout", "8s")
	if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "maintenance/"+e.NS) {
		t.Errorf("a CLI drain of the paused node: exit %d; want it to wait naming maintenance/%s", r.Code, e.NS)
	}
	// Its timeout names what it still waited for: the node and its holder, not "nothing".
	timedOut := ""
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(l, "error: drain timed out") {
			timedOut = l
		}
	}
	if !strings.Contains(timedOut, "is held by") || !strings.Contains(timedOut, "maintenance/"+e.NS) {
		t.Errorf("the timeout's line %q does not name the node's holder maintenance/%s", timedOut, e.NS)
	}
	patch(e, mc, e.NS, `{"spec":{"paused":false}}`)
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("after resume: phases %v, %s, counts %+v", seen, nodeStates(m), m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 0 {
		t.Errorf("%d pods left on the node", len(left))
	}
}
