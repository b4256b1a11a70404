package operation

import (
	"context"
	"errors"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// drainAll reads ch until it closes.
func drainAll(t *testing.T, ch <-chan event.Event) []event.Event {
	t.Helper()
	var out []event.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the operation never ended: %s", eventTypes(out))
		}
	}
}

// The dashboard's way: a drain blocked by the API server runs; an action on its node is
// refused, one on another node runs and ends; cancelling the drain ends it silently with
// its node cordoned, and the node is free again.
func TestRunsKeepsEachNodeInOneOperationAndCancelsOne(t *testing.T) {
	op := cluster(t, node("n1", false, nil), node("n2", false, nil), pod("a1", "n1"))
	refused := make(chan struct{}, 100)
	op.Kube.(*fake.Clientset).PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if _, ok := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction); !ok || a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		refused <- struct{}{}
		return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 1)
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	runs := op.Runs(ctx, nil)
	drainEvents, cancelDrain, err := runs.Start(Request{Action: Drain, Nodes: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	<-refused
	var busy *BusyError
	if _, _, err := runs.Start(Request{Action: Uncordon, Nodes: []string{"n2", "n1"}}); !errors.As(err, &busy) || busy.Error() != "n1 already in a running action" {
		t.Fatalf("an action on the draining node: %v, want it refused naming n1", err)
	}
	other, _, err := runs.Start(Request{Action: Cordon, Nodes: []string{"n2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(drainAll(t, other)); got != "node.cordoned" {
		t.Errorf("the cordon of n2 while n1 drains: %s", got)
	}
	cancelDrain()
	for _, ev := range drainAll(t, drainEvents) {
		if ev.Type == event.EventNodeDrained || ev.Type == event.EventNodeFailed {
			t.Errorf("the cancelled drain emitted %s %s", ev.Type, ev.Message)
		}
	}
	if !get(t, op, "n1").Spec.Unschedulable || len(pods(t, op)) != 1 {
		t.Error("the cancelled drain's node is not cordoned with its pod in place")
	}
	again, _, err := runs.Start(Request{Action: Uncordon, Nodes: []string{"n1"}})
	if err != nil {
		t.Fatalf("n1 is still busy after its drain ended: %v", err)
	}
	if got := eventTypes(drainAll(t, again)); got != "node.uncordoned" {
		t.Errorf("the uncordon of n1 after the cancel: %s", got)
	}
	stop()
	runs.Wait()
}
