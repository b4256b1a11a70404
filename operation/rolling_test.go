package operation

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// A pool's rolling drain admits a node while the run's nodes in progress and the members
// out of service outside the run stay under maxUnavailable; else it waits, saying on what.
func TestPoolRoomAdmits(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	tests := []struct {
		name    string
		limit   int32
		objs    []runtime.Object
		node    string
		running int
		admit   bool   // within the test's short wait
		said    string // in the wait's warning
	}{
		{name: "room: nothing out of service", limit: 1, node: "b1",
			objs: []runtime.Object{node("b1", false, blue), node("b2", false, blue)}, admit: true},
		{name: "room: one draining here, maxUnavailable 2", limit: 2, node: "b2", running: 1,
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue)}, admit: true},
		{name: "full: a member outside the run is cordoned", limit: 1, node: "b1",
			objs: []runtime.Object{node("b1", false, blue), node("x", true, blue)}, said: "1 node(s) out of service (x, 0 draining here)"},
		{name: "full: one outside plus one draining here, maxUnavailable 2", limit: 2, node: "b2", running: 1,
			objs: []runtime.Object{node("b1", true, blue), node("b2", false, blue), node("x", true, blue)}, said: "2 node(s) out of service (x, 1 draining here)"},
		{name: "a member out of service itself takes nothing more", limit: 1, node: "b1",
			objs: []runtime.Object{node("b1", true, blue), node("x", true, blue)}, admit: true},
		{name: "a node of another pool does not count", limit: 1, node: "b1",
			objs: []runtime.Object{node("b1", false, blue), node("g", true, map[string]string{nodepool.RoleLabel("green"): ""})}, admit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.objs...)
			room := &poolRoom{kube: cs, pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"},
				Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To(tt.limit)}}, run: map[string]bool{"b1": true, "b2": true}}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			var said []event.Event
			err := room.Admit(ctx, tt.node, tt.running, func(ev event.Event) { said = append(said, ev) })
			if got := err == nil; got != tt.admit {
				t.Fatalf("admitted %v (err %v), want %v", got, err, tt.admit)
			}
			if tt.admit {
				if len(said) != 0 {
					t.Errorf("said %v while admitting at once", said)
				}
				return
			}
			if len(said) != 1 || said[0].Reason != "PoolBudget" || said[0].Node != tt.node || !strings.Contains(said[0].Message, tt.said) {
				t.Errorf("said %+v, want one PoolBudget warning on %s containing %q", said, tt.node, tt.said)
			}
		})
	}
}

// A wait ends at the change that makes room: the member outside the run is uncordoned.
func TestPoolRoomWakesWhenAMemberComesBack(t *testing.T) {
	blue := map[string]string{nodepool.RoleLabel("blue"): ""}
	cs := fake.NewClientset(node("b1", false, blue), node("x", true, blue))
	room := &poolRoom{kube: cs, pool: &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}, run: map[string]bool{"b1": true}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admitted := make(chan error, 1)
	go func() { admitted <- room.Admit(ctx, "b1", 0, func(event.Event) {}) }()
	x := node("x", false, blue)
	for {
		// Written again until the wait sees it (its watch may start after a write).
		if _, err := cs.CoreV1().Nodes().Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-admitted:
			if err != nil {
				t.Fatalf("admit: %v", err)
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
