package drain

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// A dry run of a node whose pod no eviction can move (a budget of maxUnavailable 0) says
// what plan says: the node is not drained, its pod is left, and the run ends blocked;
// under --on-blocked=skip the node is said blocked. Nothing is sent in a client dry run.
func TestDryRunOfANodeThatWouldNeverDrain(t *testing.T) {
	tests := []struct {
		name         string
		onBlocked    OnBlocked
		doNotDisrupt bool // the pod is held by karpenter.sh/do-not-disrupt, no budget
		wantGivenUp  bool
	}{
		{"wait: left pending", OnBlockedWait, false, false},
		{"skip: given up", OnBlockedSkip, false, true},
		{"skip, no budget holds it: left pending, as the real run", OnBlockedSkip, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			never := testPDB(0)
			never.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			pod := testPod("web-1", "n1")
			objs := []runtime.Object{testNode("n1"), pod}
			if tc.doNotDisrupt {
				pod.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "true"}
			} else {
				objs = append(objs, never)
			}
			cs := kubefake.New(objs...)
			events := make(chan event.Event, 100)
			eng, err := NewEngine(Config{Client: cs, Events: events, Settings: Settings{DryRun: DryRunClient, Policy: Policy{OnBlocked: tc.onBlocked}}})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := eng.Run(context.Background(), []string{"n1"})
			close(events)
			var would *WouldBlockError
			if !errors.As(err, &would) || len(would.Nodes) != 1 {
				t.Fatalf("error %v, want a WouldBlockError of the node", err)
			}
			if would.Nodes[0].GivenUp != tc.wantGivenUp {
				t.Errorf("given up %v, want %v (%v)", would.Nodes[0].GivenUp, tc.wantGivenUp, err)
			}
			var blocked interface{ Blocked() bool }
			if !errors.As(err, &blocked) || !blocked.Blocked() {
				t.Errorf("error %v is not blocked by policy (exit 3)", err)
			}
			if sum.NodesDrained != 0 || sum.PodsPending != 1 || sum.PodsEvicted != 0 {
				t.Errorf("summary drained %d, pods pending %d, evicted %d; want 0, 1, 0", sum.NodesDrained, sum.PodsPending, sum.PodsEvicted)
			}
			seen := map[event.Type]bool{}
			for ev := range events {
				seen[ev.Type] = true
			}
			if seen[event.EventNodeDrained] {
				t.Error("the dry run said the node drained")
			}
			if seen[event.EventNodeBlocked] != tc.wantGivenUp {
				t.Errorf("node.blocked said: %v, want %v", seen[event.EventNodeBlocked], tc.wantGivenUp)
			}
			for _, a := range cs.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
					t.Errorf("a client dry run sent %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}
