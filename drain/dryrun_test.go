package drain

import (
	"context"
	"errors"
	"testing"

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
		name      string
		onBlocked OnBlocked
		wantErr   any
		wantEvent event.Type
	}{
		{"wait: left pending", OnBlockedWait, new(*WouldWaitError), ""},
		{"skip: said blocked", OnBlockedSkip, new(*SkippedError), event.EventNodeBlocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			never := testPDB(0)
			never.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			cs := kubefake.New(testNode("n1"), testPod("web-1", "n1"), never)
			events := make(chan event.Event, 100)
			eng, err := NewEngine(Config{Client: cs, Events: events, Settings: Settings{DryRun: DryRunClient, Policy: Policy{OnBlocked: tc.onBlocked}}})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := eng.Run(context.Background(), []string{"n1"})
			close(events)
			switch target := tc.wantErr.(type) {
			case **WouldWaitError:
				if !errors.As(err, target) {
					t.Fatalf("error %v, want a WouldWaitError", err)
				}
			case **SkippedError:
				if !errors.As(err, target) {
					t.Fatalf("error %v, want a SkippedError", err)
				}
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
			if tc.wantEvent != "" && !seen[tc.wantEvent] {
				t.Errorf("no %s event", tc.wantEvent)
			}
			for _, a := range cs.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
					t.Errorf("a client dry run sent %s %s", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}
