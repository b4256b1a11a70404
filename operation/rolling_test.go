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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// A pool's rolling drain lets a node start while the members out of service (the run's
// nodes in progress, any other member cordoned or NotReady, except the run's nodes
// drained or given up) are fewer than maxUnavailable; else it says what it waits on.
func TestPoolRoom(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	tests := []struct {
		name  string
		limit int32
		objs  []runtime.Object
		adm   drain.Admission
		wait  string // "" when it may start
	}{
		{name: "room: nothing out of service", limit: 1, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), node("b2", false, blue)}},
		{name: "room: one in progress, maxUnavailable 2", limit: 2, adm: drain.Admission{Node: "b2", Running: []string{"b1"}},
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue)}},
		{name: "full: a member outside the run is cordoned", limit: 1, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), node("x", true, blue)}, wait: "1 node(s) out of service (x)"},
		{name: "full: one outside plus one in progress, maxUnavailable 2", limit: 2, adm: drain.Admission{Node: "b2", Running: []string{"b1"}},
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue), node("x", true, blue)}, wait: "2 node(s) out of service (b1, x)"},
		{name: "full: a pending member of the run is NotReady", limit: 1, adm: drain.Admission{Node: "b2"},
			objs: []runtime.Object{notReady(node("b1", false, blue)), node("b2", false, blue)}, wait: "1 node(s) out of service (b1)"},
		{name: "full: a failed member of the run is still cordoned", limit: 1, adm: drain.Admission{Node: "b2"},
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue)}, wait: "(b1)"},
		{name: "room: a drained member of the run no longer counts", limit: 1, adm: drain.Admission{Node: "b2", Done: []string{"b1"}},
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue)}},
		{name: "a member out of service itself takes nothing more", limit: 1, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", true, blue), node("x", true, blue)}},
		{name: "a node of another pool does not count", limit: 1, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), node("g", true, map[string]string{nodepool.RoleLabel("green"): ""})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			room := &poolRoom{kube: fake.NewClientset(tt.objs...), pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"},
				Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To(tt.limit)}}}
			wait, err := room.Room(context.Background(), tt.adm)
			if err != nil {
				t.Fatal(err)
			}
			if (wait == "") != (tt.wait == "") || !strings.Contains(wait, tt.wait) {
				t.Errorf("Room = %q, want %q", wait, tt.wait)
			}
		})
	}
}

func notReady(n *corev1.Node) *corev1.Node {
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	return n
}

// Wait returns at the change that can make room: the member outside the run is uncordoned.
func TestPoolRoomWaitsForAChange(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	cs := fake.NewClientset(node("b1", false, blue), node("x", true, blue))
	room := &poolRoom{kube: cs, pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if wait, err := room.Room(ctx, drain.Admission{Node: "b1"}); err != nil || wait == "" {
		t.Fatalf("Room = %q, %v; want a wait", wait, err)
	}
	woken := make(chan error, 1)
	go func() { woken <- room.Wait(ctx) }()
	x := node("x", false, blue)
	for {
		// Written again until the wait sees it (the fake's watch may start after a write).
		if _, err := cs.CoreV1().Nodes().Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-woken:
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if wait, err := room.Room(ctx, drain.Admission{Node: "b1"}); err != nil || wait != "" {
				t.Errorf("after the change Room = %q, %v; want room", wait, err)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
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
// cordoned and maxUnavailable 2, one node drains at a time, and the second starts when
// the first is drained (its count is looked at afresh, not kept from when it asked).
func TestPoolDrainStartsTheNextNodeWhenOneFinishes(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	op := cluster(t, node("b1", false, blue), node("b2", false, blue), node("x", true, blue), pod("p1", "b1"), pod("p2", "b2"))
	events := make(chan event.Event, 1000)
	eng, err := drain.NewEngine(drain.Config{Client: op.Kube, Events: events, MaxParallelNodes: 2,
		Rolling: &poolRoom{kube: op.Kube, pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"},
			Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](2)}}}})
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
	if len(waits) != 1 || !strings.HasPrefix(waits[0], "b2: ") || !strings.Contains(waits[0], "(b1, x)") {
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
	eng, err := drain.NewEngine(drain.Config{Client: op.Kube, Events: events, MaxParallelNodes: 1,
		Rolling: &poolRoom{kube: op.Kube, pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"},
			Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To[int32](1)}}}})
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
