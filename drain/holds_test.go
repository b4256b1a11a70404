package drain

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
			said := g.said(ReasonHoldCaused, ReasonHoldSeen)
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

// A 409 after the server wrote the budget's entry (the UID precondition is checked after
// it) is a hold this run caused: the budget is read once the answer comes, and the hold
// said with its end. A 409 that left no entry says nothing.
func TestAConflictThatLeftAnEntryIsAHoldCaused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry bool // the server wrote p1's entry before refusing
	}{
		{name: "entry written: a hold caused", entry: true},
		{name: "no entry: nothing said"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := testPDB(1)
			g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), budget)
			g.answer = func(n int, ev *policyv1.Eviction) error {
				if n == 1 && tc.entry {
					b := budget.DeepCopy()
					b.Status.DisruptionsAllowed = 0
					b.Status.DisruptedPods = map[string]metav1.Time{"p1": {Time: g.clock.Now()}}
					if err := g.client.Tracker().Update(policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), b, b.Namespace); err != nil {
						return err
					}
				}
				return apierrors.NewConflict(corev1.Resource("pods"), ev.Name, errors.New("the UID in the precondition does not match"))
			}
			g.start("n1")
			blocked := g.next(event.EventEvictionBlocked, 0)
			if blocked.Reason != "Conflict" {
				t.Fatalf("first wait %+v, want the 409", blocked)
			}
			var caused *event.Event
			deadline := time.After(2 * time.Second)
		wait:
			for {
				select {
				case ev := <-g.events:
					if ev.Reason == ReasonHoldCaused {
						caused = &ev
						break wait
					}
				case <-deadline:
					break wait
				}
			}
			g.cancel()
			g.finish()
			if !tc.entry {
				if caused != nil {
					t.Errorf("said %+v after a 409 that left no entry", *caused)
				}
				return
			}
			if caused == nil {
				t.Fatal("no hold caused said after a 409 that left an entry")
			}
			if caused.Pod != "ns/p1" || caused.PDB != "ns/web" || caused.RetryAfter != 2*time.Minute || !strings.Contains(caused.Message, "409") {
				t.Errorf("said %+v", *caused)
			}
		})
	}
}
