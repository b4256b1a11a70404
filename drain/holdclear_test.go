package drain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The remedy removes an entry only when the pod that now has its name was created in a
// later second and is not deleting, with the budget's resourceVersion as read, and
// touches no other entry; a refused update comes back as the server's error.
func TestClearStaleEntry(t *testing.T) {
	entry := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name        string
		noEntry     bool
		pod         bool
		created     time.Duration // the pod's creation after the entry
		age         time.Duration // the entry's age at the clear (0: 40 s)
		deleting    bool
		refuse      error // the status update's answer
		wantCleared bool
		wantUpdate  bool
		wantErr     func(error) bool
	}{
		{name: "a replacement created after the entry: removed", pod: true, created: 3 * time.Second, wantCleared: true, wantUpdate: true},
		{name: "created in the entry's second: the evicted pod, kept", pod: true, created: 500 * time.Millisecond},
		{name: "created before the entry: an eviction in flight, kept", pod: true, created: -time.Minute},
		{name: "the replacement deleting: kept (the controller drops it)", pod: true, created: 3 * time.Second, deleting: true},
		{name: "no pod by that name: kept (the controller drops it)"},
		{name: "no entry: nothing to do", noEntry: true, pod: true, created: 3 * time.Second},
		{name: "an entry 20 s old: too young, kept (an eviction may still be carried out)", pod: true, created: 3 * time.Second, age: 20 * time.Second},
		{name: "a replacement 5 s old: too young, kept (the controller may not have seen it)", pod: true, created: 35 * time.Second},
		{name: "someone wrote the budget meanwhile: a conflict", pod: true, created: 3 * time.Second, wantUpdate: true,
			refuse: apierrors.NewConflict(policyv1.Resource("poddisruptionbudgets"), "db", errors.New("the object has been modified")), wantErr: apierrors.IsConflict},
		{name: "not allowed: forbidden", pod: true, created: 3 * time.Second, wantUpdate: true,
			refuse: apierrors.NewForbidden(policyv1.Resource("poddisruptionbudgets/status"), "db", errors.New("no")), wantErr: apierrors.IsForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", ResourceVersion: "42"},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{"other-1": {Time: entry}}}}
			if !tc.noEntry {
				b.Status.DisruptedPods["db-0"] = metav1.Time{Time: entry}
			}
			objs := []runtime.Object{b}
			if tc.pod {
				p := podOn("db-0", "n2", "u-new")
				p.CreationTimestamp = metav1.Time{Time: entry.Add(tc.created)}
				if tc.deleting {
					p.DeletionTimestamp = &metav1.Time{Time: entry.Add(tc.created + time.Second)}
				}
				objs = append(objs, p)
			}
			c := fake.NewClientset(objs...)
			var updated *policyv1.PodDisruptionBudget
			c.PrependReactor("update", "poddisruptionbudgets", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "status" {
					t.Errorf("update of %q, want the status", a.GetSubresource())
				}
				updated = a.(k8stesting.UpdateAction).GetObject().(*policyv1.PodDisruptionBudget)
				if tc.refuse != nil {
					return true, nil, tc.refuse
				}
				return false, nil, nil
			})
			age := tc.age
			if age == 0 {
				age = 40 * time.Second
			}
			at, _, cleared, err := clearStaleEntry(context.Background(), c, "ns", "db", "db-0", entry.Add(age))
			switch {
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Fatalf("error %v, want the server's refusal", err)
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			}
			if cleared != tc.wantCleared {
				t.Errorf("cleared %v, want %v", cleared, tc.wantCleared)
			}
			if (updated != nil) != tc.wantUpdate {
				t.Fatalf("status updated: %v, want %v", updated != nil, tc.wantUpdate)
			}
			if !tc.noEntry && !at.Equal(entry) {
				t.Errorf("entry time %s, want %s", at, entry)
			}
			if updated == nil {
				return
			}
			if updated.ResourceVersion != "42" {
				t.Errorf("update with resourceVersion %q, want the one read (42): unguarded", updated.ResourceVersion)
			}
			if _, ok := updated.Status.DisruptedPods["db-0"]; ok {
				t.Error("db-0's entry still in the update")
			}
			if _, ok := updated.Status.DisruptedPods["other-1"]; !ok {
				t.Error("another pod's entry removed")
			}
		})
	}
}

// With ClearHolds, a hold the run sees is removed once its entry is clearAfterEntry old
// (not before: the clock must move), said as ReasonHoldCleared; a
// refused update is said once as ReasonHoldNotCleared, after which the run tries no
// more; without ClearHolds, and in a dry run, the budget is never written.
func TestAHoldSeenIsClearedOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name       string
		clear      bool
		dryRun     DryRun
		refuse     bool
		wantWrites int
		wantReason string
	}{
		{name: "off: the hold is waited out", wantWrites: 0},
		{name: "on: removed", clear: true, wantWrites: 1, wantReason: ReasonHoldCleared},
		{name: "on, in a dry run: nothing written", clear: true, dryRun: DryRunServer, wantWrites: 0},
		{name: "on, forbidden: said once, tried once (the second hold is waited out)", clear: true, refuse: true, wantWrites: 1, wantReason: ReasonHoldNotCleared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			cfg.ClearHolds, cfg.DryRun = tc.clear, DryRunNone
			if tc.dryRun != "" {
				cfg.DryRun = tc.dryRun
			}
			budget := namedPDB("web", 0)
			g := newBudgetsRig(t, cfg, budget)
			now := g.clock.Now()
			budget.Status.DisruptedPods = map[string]metav1.Time{"db-0": {Time: now.Add(-20 * time.Second)}, "db-1": {Time: now.Add(-20 * time.Second)}}
			holds := []*corev1.Pod{}
			for _, name := range []string{"db-0", "db-1"} {
				p := podOn(name, "n2", types.UID("u-new-"+name))
				p.CreationTimestamp = metav1.Time{Time: now.Add(-15 * time.Second)}
				holds = append(holds, p)
			}
			objs := []runtime.Object{budget}
			for _, p := range holds {
				objs = append(objs, p)
			}
			c := fake.NewClientset(objs...)
			writes := 0
			c.PrependReactor("update", "poddisruptionbudgets", func(a k8stesting.Action) (bool, runtime.Object, error) {
				writes++
				if tc.refuse {
					return true, nil, apierrors.NewForbidden(policyv1.Resource("poddisruptionbudgets/status"), "web", errors.New("no"))
				}
				return false, nil, nil
			})
			g.bs.cfg.Client = c
			b := g.bs.budgetLocked("ns/web")
			b.PDB.Status.DisruptedPods = budget.Status.DisruptedPods
			// db-0's hold first, then db-1's too. A clear waits until the entry is
			// clearAfterEntry old (10 s more here) on the run's clock, then tries once.
			for _, seen := range [][]*corev1.Pod{holds[:1], holds} {
				g.bs.lock()
				g.bs.diag.sawHoldsLocked(b, seen)
				g.bs.unlock()
				started := tc.clear && tc.dryRun == "" // and not refused before
				for deadline := time.Now().Add(2 * time.Second); started && !g.clock.HasWaiters() && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				g.clock.Step(15 * time.Second)
				g.bs.wg.Wait()
			}
			wantWrites := tc.wantWrites
			if tc.wantWrites > 0 && !tc.refuse {
				wantWrites = 2 // each hold's entry
			}
			if writes != wantWrites {
				t.Errorf("%d status writes, want %d", writes, wantWrites)
			}
			said := g.said(ReasonHoldCleared, ReasonHoldNotCleared)
			if tc.wantReason == "" {
				if len(said) != 0 {
					t.Fatalf("said %+v, want nothing", said)
				}
				return
			}
			if len(said) != wantWrites || said[0].Reason != tc.wantReason || said[0].PDB != "ns/web" || !strings.Contains(said[0].Message, "db-0") {
				t.Errorf("said %+v, want %d %s naming ns/web and db-0", said, wantWrites, tc.wantReason)
			}
		})
	}
}
