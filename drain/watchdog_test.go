package drain

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A budget's status is stale when it lists in disruptedPods a pod this run saw gone
// StaleAfter ago or more (a StatefulSet's pod, which comes back under its name, the
// disruption controller's own timeout later).
func TestBudgetWatchGoneListed(t *testing.T) {
	const staleAfter = 30 * time.Second
	for _, tc := range []struct {
		name        string
		listed      bool // the status lists ns/web-a in disruptedPods
		seenGone    bool
		goneFor     time.Duration
		statefulSet bool
		want        string
	}{
		{name: "listed, gone StaleAfter ago", listed: true, seenGone: true, goneFor: staleAfter, want: "ns/web-a"},
		{name: "listed, gone a moment ago", listed: true, seenGone: true, goneFor: time.Second},
		{name: "listed, not seen gone", listed: true},
		{name: "gone long ago, no longer listed", seenGone: true, goneFor: time.Hour},
		{name: "a StatefulSet's pod within the controller's timeout", listed: true, seenGone: true, statefulSet: true, goneFor: staleAfter},
		{name: "a StatefulSet's pod past it", listed: true, seenGone: true, statefulSet: true, goneFor: staleAfter + disruptedPodTimeout, want: "ns/web-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, clock := newConcernRun(t, Config{StaleAfter: staleAfter}, nil)
			pod := podOn("web-a", "n1", "u-a")
			if tc.statefulSet {
				pod.OwnerReferences = []metav1.OwnerReference{{Kind: "StatefulSet", Name: "web", Controller: new(true)}}
			}
			r.pods["ns/web-a"] = &podState{pod: pod, key: "ns/web-a", node: "n1", phase: finished}
			p := testPDB(0)
			if tc.listed {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-a": metav1.NewTime(clock.Now())}
			}
			if tc.seenGone {
				r.budgets.watch.goneAt["ns/web-a"] = clock.Now()
			}
			clock.Step(tc.goneFor)
			got, d := r.budgets.watch.goneListedLocked(p)
			if got != tc.want {
				t.Errorf("gone and listed: %q, want %q", got, tc.want)
			}
			if r.budgets.watch.listsGoneLocked(p) != (tc.want != "") {
				t.Errorf("listsGoneLocked disagrees with goneListedLocked")
			}
			if got != "" && d != tc.goneFor {
				t.Errorf("gone for %v, want %v", d, tc.goneFor)
			}
		})
	}
}
