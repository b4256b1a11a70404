package drain

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// A budget's status that still lists a pod gone StaleAfter ago is stale, except for a
// StatefulSet's pod: it comes back under its name, and the disruption controller keeps its
// entry (counting the new pod as disrupted) until the entry expires, 2 minutes after the
// eviction; only past that is the status stale.
func TestStaleStatusAndPodsRecreatedUnderTheirName(t *testing.T) {
	for _, c := range []struct {
		name  string
		owner string
		gone  time.Duration
		stale bool
	}{
		{"ReplicaSet pod, gone 20s", "ReplicaSet", 20 * time.Second, false},
		{"ReplicaSet pod, gone 40s", "ReplicaSet", 40 * time.Second, true},
		{"StatefulSet pod, gone 40s", "StatefulSet", 40 * time.Second, false},
		{"StatefulSet pod, gone 2m", "StatefulSet", 2 * time.Minute, false},
		{"StatefulSet pod, gone 3m", "StatefulSet", 3 * time.Minute, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
			eng, err := NewEngine(Config{Client: kubefake.New(), Events: make(chan event.Event, 1), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			r := newRun(eng, &preflight{plan: &event.Plan{}})
			p := testPod("db-0", "n1")
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: c.owner, Name: "db", UID: "ctl", Controller: ptr.To(true)}}
			r.pods["ns/db-0"] = &podState{pod: p, key: "ns/db-0", node: "n1", phase: finished}
			r.budgets.watch.goneAt["ns/db-0"] = clock.Now().Add(-c.gone)
			budget := testPDB(1)
			budget.Status.DisruptedPods = map[string]metav1.Time{"db-0": metav1.NewTime(clock.Now().Add(-c.gone))}
			if got := r.budgets.watch.listsGoneLocked(budget); got != c.stale {
				t.Errorf("stale = %v, want %v", got, c.stale)
			}
		})
	}
}
