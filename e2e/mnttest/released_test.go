package mnttest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// quietAfterRelease is how long the eviction count must stay still once a node left its
// run (the 30 s), and settle how long the run may take to see it (2 s).
const (
	quietAfterRelease = 30 * time.Second
	settle            = 2 * time.Second
)

// releasedEnv is node a with four slow pods under a budget that allows one at a time, node
// b with two pods of its own, and a spare node: a drain of a and b waits on a's budget.
func releasedEnv(t *testing.T) *fixture.Env {
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0)
	slow := e.Here(fixture.PodOptions{ReadyDelay: 4 * time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	b := e.Here(fixture.PodOptions{})
	b.NodeSelector = map[string]string{"kubernetes.io/hostname": e.Nodes[1]}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "api", 2, b); err != nil {
		t.Fatal(err)
	}
	e.Ready("api", 2)
	e.AddNodes(2)
	e.Guard()
	return e
}

// quiet asserts that no eviction request reaches the API server for quietAfterRelease
// from settle after released.
func quiet(e *fixture.Env, released time.Time) {
	e.T.Helper()
	time.Sleep(time.Until(released.Add(settle)))
	from := evictions(e)
	time.Sleep(quietAfterRelease)
	if n := evictions(e) - from; n != 0 {
		e.T.Errorf("%v eviction requests in the %s after the node left the run (from %s after the uncordon), want 0", n, quietAfterRelease, settle)
	}
}

// Issue 30, test 1: `uncordon --force` of a node a Maintenance holds while it waits on a
// budget: the run stops every eviction on that node at once (none in the next 30 s), the
// object says the node was taken (state Released, a Warning Event) and finishes its other
// node.
func TestForcedUncordonReleasesAMaintenanceNode(t *testing.T) {
	e := releasedEnv(t)
	mc := mclient(t)
	startController(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	waitFor(e, mc, e.NS, "node a waiting on its budget", func(m *mntv1.Maintenance) bool {
		for _, n := range m.Status.Nodes {
			if n.Name == e.Nodes[0] && len(n.Blockers) > 0 {
				return true
			}
		}
		return false
	})
	if r := e.Run("uncordon", "--force", e.Nodes[0]); r.Code != 0 {
		t.Fatalf("uncordon --force: exit %d", r.Code)
	}
	released := time.Now()
	quiet(e, released)
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("phase %s (%s); nodes %s; counts %+v", m.Status.Phase, m.Status.Message, nodeStates(m), m.Status.Counts)
	for _, n := range m.Status.Nodes {
		switch n.Name {
		case e.Nodes[0]:
			if n.State != mntv1.NodeStateReleased || !strings.Contains(n.Message, "uncordoned by someone else") {
				t.Errorf("node a: state %s (%s), want Released saying it was uncordoned", n.State, n.Message)
			}
		case e.Nodes[1]:
			if n.State != mntv1.NodeStateDrained {
				t.Errorf("node b: state %s (%s), want Drained", n.State, n.Message)
			}
		}
	}
	if node := e.Node(e.Nodes[0]); node.Spec.Unschedulable {
		t.Errorf("node a was cordoned again after the forced uncordon")
	}
	evs, err := e.C.CoreV1().Events(metav1.NamespaceDefault).List(e.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + e.NS + ",reason=NodeReleased"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) == 0 || evs.Items[0].Type != corev1.EventTypeWarning {
		t.Errorf("no Warning Event NodeReleased on the Maintenance: %+v", evs.Items)
	}
}

// Issue 30, test 1 for a local CLI drain: the same forced uncordon ends that node of the
// drain at once; the drain finishes its other node and says which node left and why.
func TestForcedUncordonReleasesACLIDrainNode(t *testing.T) {
	e := releasedEnv(t)
	done := make(chan fixture.Result, 1)
	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Minute)
	defer cancel()
	go func() {
		done <- e.RunCtx(ctx, func(*exec.Cmd) {}, "drain", e.Nodes[0], e.Nodes[1], "-o", "json")
	}()
	// Wait until the drain waits on a's budget: a's record is the drain's and one pod left.
	deadline := time.Now().Add(time.Minute)
	for {
		n := e.Node(e.Nodes[0])
		if n.Spec.Unschedulable && len(e.PodsOn(e.Nodes[0])) < 4 && n.Labels["kubectl-maintenance.io/state"] == "draining" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the drain never started on node a")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := e.Run("uncordon", "--force", e.Nodes[0]); r.Code != 0 {
		t.Fatalf("uncordon --force: exit %d", r.Code)
	}
	quiet(e, time.Now())
	r := <-done
	if r.Code == 0 {
		t.Errorf("drain exit 0 with a node taken from it, want non-zero")
	}
	if !strings.Contains(r.Stdout, "left this run") || !strings.Contains(r.Stdout, "uncordoned by someone else") {
		t.Errorf("the drain's output does not say node a left it:\n%s", r.Stdout)
	}
	if left := e.PodsOn(e.Nodes[1]); len(left) != 0 {
		t.Errorf("%d pods left on node b, want its drain finished", len(left))
	}
}
