package operation

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
)

func notReady(n *corev1.Node) *corev1.Node {
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	return n
}

// blueWindow is pool blue's window (maxUnavailable limit) over the run's nodes.
func blueWindow(op *Operator, limit int32, run ...string) *roll.Window {
	w := &roll.Window{Kube: op.Kube, Pools: map[string]*v1alpha1.NodePool{"blue": {ObjectMeta: metav1.ObjectMeta{Name: "blue"},
		Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To(limit)}}}, Of: map[string][]string{}}
	for _, n := range run {
		w.Of[n] = []string{"blue"}
	}
	return w
}

// --not-after already passed: a pool's drain and a move start nothing, and every node,
// not only the first batch's, is listed as not started.
func TestNotAfterListsEveryNodeNotStarted(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	names := []string{"b1", "b2", "b3"}
	for _, tt := range []struct {
		name string
		req  Request
	}{
		{name: "drain --pool", req: Request{Action: Drain, Pool: "blue"}},
		{name: "pool move", req: Request{Action: Move, Nodes: names, To: "green"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := cluster(t, node("b1", false, blue), node("b2", false, blue), node("b3", false, blue))
			tt.req.Drain.NotAfter = time.Now().Add(-time.Minute)
			_, sum, err := run(t, op, context.Background(), tt.req)
			var late *drain.NotStartedError
			if !errors.As(err, &late) {
				t.Fatalf("Run = %v, want a NotStartedError", err)
			}
			if got := slices.Sorted(slices.Values(late.Nodes)); !slices.Equal(got, names) {
				t.Errorf("the error lists %v as not started, want %v", got, names)
			}
			if got := slices.Sorted(slices.Values(sum.NotStarted)); !slices.Equal(got, names) {
				t.Errorf("the summary lists %v as not started, want %v", got, names)
			}
			for _, n := range names {
				if get(t, op, n).Spec.Unschedulable {
					t.Errorf("%s was cordoned", n)
				}
			}
		})
	}
}

// A pool's rolling drain goes on as its nodes finish: with a member outside the run
// NotReady and maxUnavailable 2, one node drains at a time, and the second starts when
// the first is drained (its count is looked at afresh, not kept from when it asked).
func TestPoolDrainStartsTheNextNodeWhenOneFinishes(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	op := cluster(t, node("b1", false, blue), node("b2", false, blue), notReady(node("x", false, blue)), pod("p1", "b1"), pod("p2", "b2"))
	events := make(chan event.Event, 1000)
	eng, err := drain.NewEngine(drain.Config{Client: op.Kube, Events: events, Settings: drain.Settings{MaxParallelNodes: 2},
		Rolling: blueWindow(op, 2, "b1", "b2")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sum, err := eng.Run(ctx, []string{"b1", "b2"})
	close(events)
	if err != nil || sum.NodesDrained != 2 {
		t.Fatalf("Run = %+v, %v; want both nodes drained", sum, err)
	}
	var waits []string
	for ev := range events {
		if ev.Reason == drain.ReasonRoom {
			waits = append(waits, ev.Node+": "+ev.Message)
		}
	}
	if len(waits) != 1 || !strings.HasPrefix(waits[0], "b2: ") || !strings.Contains(waits[0], "b1: in progress; x: NotReady") {
		t.Errorf("waits %q, want one for b2 naming b1 and x", waits)
	}
}

// A member of the run out of service (NotReady) starts first, whatever the order given:
// with maxUnavailable 1 it already takes the pool's one slot, so b2 can start only after
// it is drained (a window that asked for b2 first would wait for room that never comes).
func TestPoolDrainStartsAMemberOutOfServiceFirst(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	op := cluster(t, node("b2", false, blue), notReady(node("b1", false, blue)))
	events := make(chan event.Event, 1000)
	eng, err := drain.NewEngine(drain.Config{Client: op.Kube, Events: events, Settings: drain.Settings{MaxParallelNodes: 1},
		Rolling: blueWindow(op, 1, "b1", "b2")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sum, err := eng.Run(ctx, []string{"b2", "b1"})
	close(events)
	if err != nil || sum.NodesDrained != 2 {
		t.Fatalf("Run = %+v, %v; want both nodes drained", sum, err)
	}
	var cordoned []string
	for ev := range events {
		if ev.Type == event.EventNodeCordoned {
			cordoned = append(cordoned, ev.Node)
		}
	}
	if want := []string{"b1", "b2"}; !slices.Equal(cordoned, want) {
		t.Errorf("cordoned %v, want %v (the NotReady member first)", cordoned, want)
	}
}
