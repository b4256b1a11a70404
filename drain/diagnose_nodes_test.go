package drain

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// The node of pods stuck terminating is read once per DiagnoseInterval, however many of
// its pods and budgets are listed meanwhile; a NotReady node is known to each List.
func TestStuckPodsNodeIsReadOncePerInterval(t *testing.T) {
	g := newBudgetsRig(t, Config{DiagnoseInterval: 10 * time.Second}, namedPDB("web", 0), namedPDB("api", 0))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}}
	c := fake.NewClientset(node)
	g.bs.cfg.Client = c
	for _, name := range []string{"a", "b", "c"} {
		p := podOn(name, "n1", types.UID("u-"+name))
		p.DeletionTimestamp = &metav1.Time{Time: g.clock.Now().Add(-time.Minute)}
		g.host.listed = append(g.host.listed, p)
	}
	gets := func() int {
		n := 0
		for _, a := range c.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
				n++
			}
		}
		return n
	}
	for i, step := range []struct {
		advance  time.Duration
		wantGets int
	}{
		{0, 1},                // the first List reads n1
		{time.Second, 1},      // the other budget, a moment later: known
		{5 * time.Second, 1},  // still within the interval
		{10 * time.Second, 2}, // past it: read again
	} {
		g.clock.Step(step.advance)
		for _, key := range []string{"ns/web", "ns/api"} {
			g.bs.lock()
			if g.bs.diag.selected == nil {
				g.bs.diag.selected = map[string]*selection{}
			}
			g.bs.diag.selected[key] = &selection{listing: true} // as toListLocked leaves it
			g.bs.unlock()
			g.bs.diag.list(context.Background(), key)
			g.bs.lock()
			notReady := g.bs.diag.selected[key].notReady["n1"]
			g.bs.unlock()
			if !notReady {
				t.Errorf("step %d, %s: n1 not known NotReady", i, key)
			}
		}
		if got := gets(); got != step.wantGets {
			t.Errorf("step %d: %d reads of n1, want %d", i, got, step.wantGets)
		}
	}
}
