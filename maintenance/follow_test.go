package maintenance

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// A follower reports a node when it is new, when its state changes and when it has a
// blocker it did not have; a read that changes nothing reports nothing.
func TestFollowerReportsChangesOnly(t *testing.T) {
	var got []NodeChange
	f := &Follower{Changed: func(ch NodeChange) { got = append(got, ch) }, prev: map[string]v1alpha1.NodeStatus{}}
	read := func(nodes ...v1alpha1.NodeStatus) []NodeChange {
		got = nil
		f.changes(&v1alpha1.Maintenance{Status: v1alpha1.MaintenanceStatus{Nodes: nodes}})
		return got
	}
	b1 := v1alpha1.Blocker{Pod: "ns/a", Message: "waits"}
	b2 := v1alpha1.Blocker{Pod: "ns/b", Message: "waits"}
	if ch := read(v1alpha1.NodeStatus{Name: "n1", State: NodeDraining}); len(ch) != 1 || !ch[0].StateChanged {
		t.Errorf("a new node: %+v, want one state change", ch)
	}
	if ch := read(v1alpha1.NodeStatus{Name: "n1", State: NodeDraining}); len(ch) != 0 {
		t.Errorf("nothing changed: %+v, want no change", ch)
	}
	if ch := read(v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, Blockers: []v1alpha1.Blocker{b1}}); len(ch) != 1 || ch[0].StateChanged || !reflect.DeepEqual(ch[0].Blockers, []v1alpha1.Blocker{b1}) {
		t.Errorf("a new blocker: %+v, want the blocker alone", ch)
	}
	if ch := read(v1alpha1.NodeStatus{Name: "n1", State: NodeDrained, Blockers: []v1alpha1.Blocker{b1, b2}}); len(ch) != 1 || !ch[0].StateChanged || !reflect.DeepEqual(ch[0].Blockers, []v1alpha1.Blocker{b2}) {
		t.Errorf("a state change and a new blocker: %+v, want both, the old blocker not again", ch)
	}
}

// A finished Maintenance's summary: its counts and elapsed time, and the nodes a re-run
// would take up (failed, or not finished for its action: a cordoned node is finished in a
// Cordon, not in a drain that ended before its first eviction).
func TestSummaryOfAFinishedMaintenance(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(90 * time.Second))
	tests := []struct {
		action  v1alpha1.Action
		pending []string
	}{
		{v1alpha1.ActionDrain, []string{"n2", "n3"}},
		{v1alpha1.ActionCordon, []string{"n2"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.action), func(t *testing.T) {
			m := &v1alpha1.Maintenance{Spec: v1alpha1.MaintenanceSpec{Action: tc.action},
				Status: v1alpha1.MaintenanceStatus{StartTime: &start, CompletionTime: &end,
					Counts: v1alpha1.Counts{NodesDrained: 1, NodesFailed: 1, PodsEvicted: 3},
					Nodes:  []v1alpha1.NodeStatus{{Name: "n1", State: NodeDrained}, {Name: "n2", State: NodeFailed}, {Name: "n3", State: NodeCordoned}}}}
			sum := Summary(m)
			if sum.Elapsed != 90*time.Second || sum.NodesDrained != 1 || sum.NodesFailed != 1 || sum.PodsEvicted != 3 || !reflect.DeepEqual(sum.PendingNodes, tc.pending) {
				t.Errorf("summary %+v, want 90s, 1 drained, 1 failed, 3 evicted, %v pending", sum, tc.pending)
			}
		})
	}
}

// A follower says each new wait for held nodes once: not again while it lasts, again when
// it names another holder.
func TestFollowerSaysEachWaitOnce(t *testing.T) {
	var said []string
	f := &Follower{Waiting: func(msg string) { said = append(said, msg) }}
	read := func(status metav1.ConditionStatus, msg string) {
		m := &v1alpha1.Maintenance{}
		if status != "" {
			m.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionWaitingForNodes, Status: status, Message: msg}}
		}
		f.waits(m)
	}
	read("", "")
	read(metav1.ConditionTrue, "node n1 is held by run abc by jane")
	read(metav1.ConditionTrue, "node n1 is held by run abc by jane")
	read(metav1.ConditionFalse, "no other run holds the nodes")
	read(metav1.ConditionTrue, "node n1 is held by run abc by jane")
	read(metav1.ConditionTrue, "node n1 is held by run def by joe")
	want := []string{"node n1 is held by run abc by jane", "node n1 is held by run abc by jane", "node n1 is held by run def by joe"}
	if !reflect.DeepEqual(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
}
