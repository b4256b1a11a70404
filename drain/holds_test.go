package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// A hold (an entry whose name a replacement took) is said once when the budget's pods are
// listed, as caused when the entry is this run's eviction, with its end; an entry whose
// pod is the one evicted (still terminating) is no hold.
func TestHoldsAreSaidOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours       bool          // this run evicted the pod of the entry
		replaced   bool          // a pod of that name was created after the entry
		lists      int           // how many times the budget's pods are listed
		wantReason string        // "": nothing said
		wantAfter  time.Duration // RetryAfter: the hold's end from now
	}{
		{name: "our eviction, a replacement took the name: caused", ours: true, replaced: true, lists: 2, wantReason: ReasonHoldCaused, wantAfter: 100 * time.Second},
		{name: "someone else's eviction: seen", replaced: true, lists: 1, wantReason: ReasonHoldSeen, wantAfter: 100 * time.Second},
		{name: "the evicted pod still there: no hold", ours: true, lists: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newBudgetsRig(t, Config{}, namedPDB("web", 0))
			now := g.clock.Now()
			b := g.bs.budgetLocked("ns/web")
			b.PDB.Status.DisruptedPods = map[string]metav1.Time{"db-0": {Time: now.Add(-20 * time.Second)}}
			p := podOn("db-0", "n2", "u-new")
			p.CreationTimestamp = metav1.Time{Time: now.Add(-time.Hour)}
			if tc.replaced {
				p.CreationTimestamp = metav1.Time{Time: now.Add(-15 * time.Second)}
				p.OwnerReferences = []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db", Controller: new(true)}}
			}
			if tc.ours {
				g.host.pods["ns/db-0"] = &podState{key: "ns/db-0", attempts: 1, pod: podOn("db-0", "n1", "u-old")}
			}
			g.bs.lock()
			for range tc.lists {
				g.bs.diag.sawHoldsLocked(b, []*corev1.Pod{p})
			}
			g.bs.unlock()
			var said []event.Event
			for _, ev := range g.events {
				if ev.Reason == ReasonHoldCaused || ev.Reason == ReasonHoldSeen {
					said = append(said, ev)
				}
			}
			if tc.wantReason == "" {
				if len(said) != 0 {
					t.Fatalf("said %+v, want nothing", said)
				}
				return
			}
			if len(said) != 1 {
				t.Fatalf("said %d times (%+v), want once", len(said), said)
			}
			ev := said[0]
			if ev.Reason != tc.wantReason || ev.RetryAfter != tc.wantAfter || ev.Pod != "ns/db-0" || ev.PDB != "ns/web" {
				t.Errorf("said %+v, want reason %s, retry after %s, pod ns/db-0, pdb ns/web", ev, tc.wantReason, tc.wantAfter)
			}
			if !strings.Contains(ev.Message, "held by the disruption controller until") || !strings.Contains(ev.Message, "StatefulSet replacement") {
				t.Errorf("message %q", ev.Message)
			}
		})
	}
}
