package mnttest

import (
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Drain order groups from a Maintenance's spec.drain.order, run by the controller: the
// pods of group -5 are all gone before any pod of group 0 is asked to leave, and those
// before group 10's (read from a watch of the pods: each pod's deletion start and end);
// the API server refuses an order on a Skip rule.
func TestMaintenanceDrainOrder(t *testing.T) {
	e := newEnv(t, "a")
	e.AddNodes()
	for app, n := range map[string]int32{"first": 2, "web": 1, "last": 1} {
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, n, e.Here(fixture.PodOptions{})); err != nil {
			t.Fatal(err)
		}
	}
	rank := map[string]int{}
	for app, r := range map[string]int{"first": 0, "web": 1, "last": 2} {
		for _, p := range e.Ready(app, map[string]int{"first": 2, "web": 1, "last": 1}[app]) {
			rank[p.Name] = r
		}
	}
	mc := mclient(t)
	bad := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS + "-bad"}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain,
		Nodes: []string{e.Nodes[0]}, Drain: mntv1.DrainSettings{Order: []mntv1.DrainOrderRule{{Behavior: "Skip", Order: ptr.To[int32](3)}}}}}
	if err := mc.Create(e.Ctx, bad); err == nil || !strings.Contains(err.Error(), "order applies to behavior Drain only") {
		t.Fatalf("an order on a Skip rule: %v, want the API server to refuse it", err)
	}

	l, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.C.CoreV1().Pods(e.NS).Watch(e.Ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seq []string // "start NAME" (deletion started), "gone NAME"
	started := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if _, known := rank[p.Name]; !known {
				continue
			}
			mu.Lock()
			if (p.DeletionTimestamp != nil || ev.Type == watch.Deleted) && !started[p.Name] {
				started[p.Name] = true
				seq = append(seq, "start "+p.Name)
			}
			if ev.Type == watch.Deleted {
				seq = append(seq, "gone "+p.Name)
			}
			mu.Unlock()
		}
	}()
	g := e.Guard()
	startController(e)
	name := e.NS + "-order"
	create(e, mc, name, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.Nodes[0]},
		Drain: mntv1.DrainSettings{Order: []mntv1.DrainOrderRule{
			{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "first"}}, Order: ptr.To[int32](-5)},
			{Name: "last", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "last"}}, Order: ptr.To[int32](10)},
		}}})
	m, _ := waitFor(e, mc, name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s, want Succeeded", m.Status.Phase)
	}
	w.Stop()
	<-done
	mu.Lock()
	defer mu.Unlock()
	goneOf := map[int]int{} // rank -> pods gone so far
	for _, s := range seq {
		what, pod, _ := strings.Cut(s, " ")
		r := rank[pod]
		if what == "gone" {
			goneOf[r]++
			continue
		}
		for earlier := 0; earlier < r; earlier++ {
			want := map[int]int{0: 2, 1: 1}[earlier]
			if goneOf[earlier] < want {
				t.Errorf("pod %s (group %d) was asked to leave while %d pod(s) of group %d were still there: %v", pod, r, want-goneOf[earlier], earlier, seq)
			}
		}
	}
	if len(started) != 4 || g.Deleted != 4 {
		t.Errorf("%d pods left, %d through the Eviction API; want 4 (%v)", len(started), g.Deleted, seq)
	}
}
