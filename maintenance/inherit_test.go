package maintenance

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func stepPod(name string, evicted bool) pdb.Step {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if evicted {
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}}
	}
	return pdb.Step{Pod: p}
}

// A run that resumes an object (a new leader) completes the counts of the last status
// with what the earlier run did after writing it: each pod gone since, or found
// terminating, that the status did not show terminating took one request.
func TestTrackerInheritsTheCountsOfAnEarlierRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prev       *v1alpha1.NodeStatus // nil: a new object
		steps      []pdb.Step
		base       v1alpha1.Counts
		wantCounts v1alpha1.Counts // Evictions, PodsEvicted
	}{
		{name: "a new object inherits nothing",
			steps: []pdb.Step{stepPod("a", true), stepPod("b", false)}},
		{name: "pods gone after the last write were asked after it",
			prev:  &v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, PodsLeft: 4},
			steps: []pdb.Step{stepPod("c", false), stepPod("d", false)},
			base:  v1alpha1.Counts{Evictions: 1, PodsEvicted: 1}, wantCounts: v1alpha1.Counts{Evictions: 3, PodsEvicted: 3}},
		{name: "a pod shown terminating that is gone was asked before the write",
			prev: &v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, PodsLeft: 3,
				Blockers: []v1alpha1.Blocker{{Pod: "ns/a", Message: TerminatingBlocker}}},
			steps: []pdb.Step{stepPod("c", false), stepPod("d", false)},
			base:  v1alpha1.Counts{Evictions: 2, PodsEvicted: 1}, wantCounts: v1alpha1.Counts{Evictions: 2, PodsEvicted: 2}},
		{name: "a pod found terminating that the status did not show was asked after it",
			prev:  &v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, PodsLeft: 2},
			steps: []pdb.Step{stepPod("a", true), stepPod("b", false)},
			base:  v1alpha1.Counts{Evictions: 1, PodsEvicted: 1}, wantCounts: v1alpha1.Counts{Evictions: 2, PodsEvicted: 1}},
		{name: "a pod shown terminating and still terminating is not counted again",
			prev: &v1alpha1.NodeStatus{Name: "n1", State: NodeDraining, PodsLeft: 2,
				Blockers: []v1alpha1.Blocker{{Pod: "ns/a", Message: TerminatingBlocker}}},
			steps: []pdb.Step{stepPod("a", true), stepPod("b", false)},
			base:  v1alpha1.Counts{Evictions: 1}, wantCounts: v1alpha1.Counts{Evictions: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prev []v1alpha1.NodeStatus
			if tc.prev != nil {
				prev = []v1alpha1.NodeStatus{*tc.prev}
			}
			tr := newTracker(prev, []string{"n1"}, v1alpha1.ActionDrain)
			tr.apply(event.Event{Type: event.EventPlan, Time: time.Now(), Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "n1", Steps: tc.steps}}}})
			c := tr.counts(tc.base, nil)
			if c.Evictions != tc.wantCounts.Evictions || c.PodsEvicted != tc.wantCounts.PodsEvicted {
				t.Errorf("counts: %d requests, %d pods evicted; want %d, %d", c.Evictions, c.PodsEvicted, tc.wantCounts.Evictions, tc.wantCounts.PodsEvicted)
			}
			// The pods found terminating are shown so, for the next leader.
			for _, s := range tc.steps {
				if s.Pod.DeletionTimestamp == nil || tc.prev == nil {
					continue
				}
				found := false
				for _, b := range tr.nodes["n1"].Blockers {
					found = found || (b.Pod == "ns/"+s.Pod.Name && b.Message == TerminatingBlocker)
				}
				if !found {
					t.Errorf("pod %s not shown terminating", s.Pod.Name)
				}
			}
		})
	}
}

// The status counts the requests as they are sent, and the accepted pods as terminating.
func TestTrackerCountsRequestsAsSent(t *testing.T) {
	tr := newTracker(nil, []string{"n1"}, v1alpha1.ActionDrain)
	tr.apply(event.Event{Type: event.EventEvictionStarted, Node: "n1", Pod: "ns/a"})
	tr.apply(event.Event{Type: event.EventEvictionAccepted, Node: "n1", Pod: "ns/a"})
	if c := tr.counts(v1alpha1.Counts{}, nil); c.Evictions != 1 || c.PodsEvicted != 0 {
		t.Errorf("after one accepted request: %d requests, %d evicted; want 1, 0", c.Evictions, c.PodsEvicted)
	}
	if b := tr.nodes["n1"].Blockers; len(b) != 1 || b[0].Message != TerminatingBlocker {
		t.Errorf("blockers %+v, want the pod shown terminating", b)
	}
	tr.apply(event.Event{Type: event.EventPodEvicted, Node: "n1", Pod: "ns/a"})
	if c := tr.counts(v1alpha1.Counts{}, nil); c.Evictions != 1 || c.PodsEvicted != 1 || len(tr.nodes["n1"].Blockers) != 0 {
		t.Errorf("after the pod went: %+v, blockers %+v", c, tr.nodes["n1"].Blockers)
	}
}
