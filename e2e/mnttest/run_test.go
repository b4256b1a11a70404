package mnttest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Test 1: a Maintenance drains three nodes under binding budgets: Running, then
// Succeeded, every node Drained, the counts right.
func TestMaintenanceDrainsThreeNodes(t *testing.T) {
	e := threeNodesOfWeb(t)
	mc := mclient(t)
	startController(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1, 2), Reason: "test 1"})
	drainingSeen := false // DrainInProgress True on some node while the object runs
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool {
		for _, n := range names(e, 0, 1, 2) {
			drainingSeen = drainingSeen || nodeCondition(e, n, "DrainInProgress").Status == corev1.ConditionTrue
		}
		return m.Status.Phase.Done()
	})
	t.Logf("phases seen: %v; nodes: %s; counts %+v", seen, nodeStates(m), m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if !drainingSeen {
		t.Errorf("no node had the condition DrainInProgress True while the Maintenance ran")
	}
	ran := false
	for _, p := range seen {
		ran = ran || p == mntv1.PhaseRunning
	}
	if !ran {
		t.Errorf("phase Running never seen: %v", seen)
	}
	if c := m.Status.Counts; c.NodesDrained != 3 || c.PodsEvicted != 6 || c.NodesPending != 0 || c.NodesFailed != 0 || c.Evictions < 6 {
		t.Errorf("counts %+v, want 3 nodes drained, 6 pods evicted, at least 6 eviction requests", c)
	}
	if len(m.Status.Nodes) != 3 {
		t.Fatalf("status lists %d nodes, want 3", len(m.Status.Nodes))
	}
	for _, n := range m.Status.Nodes {
		if n.State != maintenance.NodeDrained || n.PodsLeft != 0 || len(n.Blockers) != 0 || n.Since == nil {
			t.Errorf("node status %+v, want Drained, no pods left, since set", n)
		}
		node := e.Node(n.Name)
		if !node.Spec.Unschedulable || node.Annotations[noderecord.AnnotationDrain] != noderecord.StateDrained || node.Annotations[noderecord.AnnotationCommand] != maintenance.Origin(e.NS) {
			t.Errorf("node %s: unschedulable=%v annotations=%v", n.Name, node.Spec.Unschedulable, node.Annotations)
		}
		if left := e.PodsOn(n.Name); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n.Name)
		}
	}
	if m.Status.StartTime == nil || m.Status.CompletionTime == nil || m.Status.ObservedGeneration != m.Generation {
		t.Errorf("status times/generation: %+v", m.Status)
	}
	// The Node conditions (KEP-5683): Drained naming the Maintenance, then cleared by a
	// later uncordon.
	for _, n := range names(e, 0, 1, 2) {
		if c := nodeCondition(e, n, "Drained"); c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, maintenance.Origin(e.NS)) {
			t.Errorf("node %s: condition Drained %+v, want True naming %s", n, c, maintenance.Origin(e.NS))
		}
		if c := nodeCondition(e, n, "DrainInProgress"); c.Status != corev1.ConditionFalse {
			t.Errorf("node %s: condition DrainInProgress %+v, want False", n, c)
		}
	}
	if r := e.Run(append([]string{"uncordon"}, names(e, 0, 1, 2)...)...); r.Code != 0 {
		t.Fatalf("uncordon: exit %d", r.Code)
	}
	for _, n := range names(e, 0, 1, 2) {
		if c := nodeCondition(e, n, "Drained"); c.Status != corev1.ConditionFalse || c.Reason != "Uncordoned" {
			t.Errorf("node %s after uncordon: condition Drained %+v, want False (Uncordoned)", n, c)
		}
	}
}

// nodeCondition is node's condition of type typ (empty when it has none).
func nodeCondition(e *fixture.Env, node string, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range e.Node(node).Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// slowDrainWithController is slowDrain of nodes a and b, guarded (no budget violated), with
// the controller running and a client for Maintenances.
func slowDrainWithController(t *testing.T) (*fixture.Env, client.Client) {
	e := slowDrain(t, "a", "b")
	e.Guard()
	mc := mclient(t)
	startController(e)
	return e, mc
}

// slowDrain sets up n nodes whose pods drain one at a time with a slow readiness, so
// that a run lasts long enough to pause or delete it mid-way.
func slowDrain(t *testing.T, nodes ...string) *fixture.Env {
	e := newEnv(t, append(nodes, "spare")...)
	idx := make([]int, len(nodes))
	for i := range nodes {
		idx[i] = i
	}
	e.AddNodes(idx...)
	slow := e.Here(fixture.PodOptions{ReadyDelay: 4 * time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", int32(4*len(nodes)), slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4*len(nodes))
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(len(nodes))
	return e
}

// Test 3: paused mid-run, no eviction request while paused, then resumed to the end.
func TestMaintenancePauseResume(t *testing.T) {
	e, mc := slowDrainWithController(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	waitFor(e, mc, e.NS, "an eviction", func(m *mntv1.Maintenance) bool { return m.Status.Counts.PodsEvicted >= 1 })
	patch(e, mc, e.NS, `{"spec":{"paused":true}}`)
	m, _ := waitFor(e, mc, e.NS, "Paused", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhasePaused })
	before := evictions(e)
	t.Logf("paused: %s; %v eviction requests so far", nodeStates(m), before)
	time.Sleep(8 * time.Second) // a window in which a running drain would evict (a pod every ~4 s)
	if after := evictions(e); after != before {
		t.Errorf("%v eviction requests while paused", after-before)
	}
	for _, n := range names(e, 0, 1) {
		if !e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s not cordoned while paused", n)
		}
	}
	patch(e, mc, e.NS, `{"spec":{"paused":false}}`)
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("after resume: phases %v, %s, counts %+v", seen, nodeStates(m), m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded || m.Status.Counts.NodesDrained != 2 {
		t.Errorf("phase %s (%s), counts %+v; want Succeeded, 2 nodes drained", m.Status.Phase, m.Status.Message, m.Status.Counts)
	}
	for _, n := range names(e, 0, 1) {
		if left := e.PodsOn(n); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n)
		}
	}
}

// Test 3 (delete): deleting a Maintenance mid-run stops its run; its nodes stay cordoned
// with their state; no eviction after the object is gone.
func TestMaintenanceDeleteStopsRun(t *testing.T) {
	e, mc := slowDrainWithController(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	waitFor(e, mc, e.NS, "an eviction", func(m *mntv1.Maintenance) bool { return m.Status.Counts.PodsEvicted >= 1 })
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS}}
	if err := mc.Delete(e.Ctx, m); err != nil {
		t.Fatal(err)
	}
	waitGone(e, mc, e.NS)
	before := evictions(e)
	time.Sleep(8 * time.Second)
	if after := evictions(e); after != before {
		t.Errorf("%v eviction requests after the delete", after-before)
	}
	left := 0
	for _, n := range names(e, 0, 1) {
		node := e.Node(n)
		left += len(e.PodsOn(n))
		if !node.Spec.Unschedulable || node.Labels[noderecord.LabelState] == "" {
			t.Errorf("node %s after the delete: unschedulable=%v state=%q", n, node.Spec.Unschedulable, node.Labels[noderecord.LabelState])
		}
	}
	if left == 0 {
		t.Errorf("every pod left before the delete: the test did not delete mid-run")
	}
}

func patch(e *fixture.Env, mc client.Client, name, body string) {
	e.T.Helper()
	m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := mc.Patch(e.Ctx, m, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		e.T.Fatal(err)
	}
}

func waitGone(e *fixture.Env, mc client.Client, name string) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Minute)
	defer cancel()
	for {
		m := &mntv1.Maintenance{}
		if err := mc.Get(ctx, types.NamespacedName{Name: name}, m); client.IgnoreNotFound(err) == nil && err != nil {
			return
		}
		select {
		case <-ctx.Done():
			e.T.Fatalf("maintenance/%s still there", name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
