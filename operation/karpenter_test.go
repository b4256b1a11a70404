package operation

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Nodes Karpenter is already disrupting are left to it by a drain of every front end
// (CLI, dashboard, controller): a warning each, untouched, the others drained, and the run
// blocked by policy; IncludeDisrupting drains them too.
func TestDrainLeavesNodesKarpenterDisrupts(t *testing.T) {
	disrupted := func(name string) *corev1.Node {
		n := node(name, false, nil)
		n.Spec.Taints = []corev1.Taint{{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule}}
		return n
	}
	tests := []struct {
		name    string
		nodes   []string
		include bool
		left    []string // nodes left to Karpenter (nil: the run ends without error)
		drained []string
	}{
		{"the disrupted node is left, the other drained", []string{"k1", "n1"}, false, []string{"k1"}, []string{"n1"}},
		{"every node left: nothing drained", []string{"k1"}, false, []string{"k1"}, nil},
		{"IncludeDisrupting drains it too", []string{"k1", "n1"}, true, nil, []string{"k1", "n1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := cluster(t, disrupted("k1"), node("n1", false, nil), pod("p2", "n1")) // the fake ignores field selectors: no pod on k1
			evs, _, err := run(t, op, context.Background(), Request{Action: Drain, Nodes: tc.nodes, IncludeDisrupting: tc.include})
			var de *drain.DisruptingError
			switch {
			case tc.left == nil && err != nil:
				t.Fatalf("run: %v, want no error", err)
			case tc.left != nil && (!errors.As(err, &de) || !slices.Equal(de.Nodes, tc.left)):
				t.Fatalf("run: %v, want a DisruptingError of %v", err, tc.left)
			}
			var warned, drained []string
			for _, ev := range evs {
				switch {
				case ev.Type == event.EventWarning && ev.Reason == ReasonLeftToKarpenter:
					warned = append(warned, ev.Node)
				case ev.Type == event.EventNodeDrained:
					drained = append(drained, ev.Node)
				}
			}
			slices.Sort(drained) // nodes drain in parallel
			if !slices.Equal(warned, tc.left) || !slices.Equal(drained, tc.drained) {
				t.Errorf("warned %v, drained %v; want %v, %v", warned, drained, tc.left, tc.drained)
			}
			for _, n := range tc.left {
				if get(t, op, n).Spec.Unschedulable {
					t.Errorf("node %s left to Karpenter was cordoned", n)
				}
			}
		})
	}
}
