package operation

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// TestConditionsFollowTheEvents: each sequence of a run's events leaves the node with the
// KEP-5683 conditions it implies, and never touches another condition type.
func TestConditionsFollowTheEvents(t *testing.T) {
	ev := func(typ event.Type, reason string) event.Event {
		return event.Event{Type: typ, Node: "n1", Reason: reason, Message: string(typ)}
	}
	tests := []struct {
		name   string
		action Action
		before []corev1.NodeCondition
		events []event.Event
		want   map[corev1.NodeConditionType]corev1.ConditionStatus
	}{
		{"a drain that ends", Drain, nil,
			[]event.Event{ev(event.EventNodeCordoned, ""), ev(event.EventNodeDrained, "")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrainInProgress: "False", ConditionDrained: "True"}},
		{"a drain interrupted mid-way is no longer in progress", Drain, nil,
			[]event.Event{ev(event.EventNodeCordoned, "")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrainInProgress: "False", ConditionDrained: "False"}},
		{"a node given up as blocked", Drain, nil,
			[]event.Event{ev(event.EventNodeCordoned, ""), ev(event.EventNodeBlocked, "Blocked")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrainInProgress: "False", ConditionDrained: "False"}},
		{"a move sets MaintenanceInProgress and clears everything when moved", Move, nil,
			[]event.Event{ev(event.EventNodeCordoned, ""), ev(event.EventNodeDrained, ""), ev(event.EventNodeMoved, ""), ev(event.EventNodeUncordoned, "")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrainInProgress: "False", ConditionDrained: "False", ConditionMaintenanceInProgress: "False"}},
		{"an uncordon clears a drained node", Uncordon,
			[]corev1.NodeCondition{{Type: ConditionDrained, Status: "True"}, {Type: ConditionDrainInProgress, Status: "False"}},
			[]event.Event{ev(event.EventNodeUncordoned, "")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrainInProgress: "False", ConditionDrained: "False"}},
		{"an uncordon adds nothing to a node that never had them", Uncordon, nil,
			[]event.Event{ev(event.EventNodeUncordoned, "")},
			map[corev1.NodeConditionType]corev1.ConditionStatus{}},
		{"a node left cordoned keeps its conditions", Uncordon,
			[]corev1.NodeCondition{{Type: ConditionDrained, Status: "True"}},
			[]event.Event{ev(event.EventNodeUncordoned, ReasonLeftCordoned)},
			map[corev1.NodeConditionType]corev1.ConditionStatus{ConditionDrained: "True"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
				Status: corev1.NodeStatus{Conditions: append([]corev1.NodeCondition{{Type: corev1.NodeReady, Status: "True"}}, tc.before...)}}
			cs := kubefake.New(node)
			o := &Operator{Kube: cs}
			tap := o.newConditionTap(Request{Action: tc.action, To: "blue", Drain: drain.Settings{DryRun: drain.DryRunNone}, origin: noderecord.Run{Command: "kubectl maintenance drain n1"}})
			got := runTap(t, tap, tc.events)
			if len(got) != len(tc.events) {
				t.Errorf("%d event(s) forwarded, want %d", len(got), len(tc.events))
			}
			n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			have := map[corev1.NodeConditionType]corev1.ConditionStatus{}
			for _, c := range n.Status.Conditions {
				have[c.Type] = c.Status
			}
			if have[corev1.NodeReady] != "True" {
				t.Errorf("the Ready condition was touched: %v", n.Status.Conditions)
			}
			delete(have, corev1.NodeReady)
			if len(have) != len(tc.want) {
				t.Errorf("conditions %v, want %v", have, tc.want)
			}
			for typ, st := range tc.want {
				if have[typ] != st {
					t.Errorf("condition %s = %q, want %q (all: %v)", typ, have[typ], st, have)
				}
			}
		})
	}
}

// TestConditionsForbiddenWarnOnceAndTheRunGoesOn: a user who may not patch nodes/status
// gets one warning; every event still reaches the caller.
func TestConditionsForbiddenWarnOnceAndTheRunGoesOn(t *testing.T) {
	cs := kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}})
	cs.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, errForbidden()
		}
		return false, nil, nil
	})
	tap := (&Operator{Kube: cs}).newConditionTap(Request{Action: Drain, Drain: drain.Settings{DryRun: drain.DryRunNone}})
	var evs []event.Event
	for _, n := range []string{"n1", "n2"} {
		evs = append(evs, event.Event{Type: event.EventNodeCordoned, Node: n}, event.Event{Type: event.EventNodeDrained, Node: n})
	}
	got := runTap(t, tap, evs)
	warnings := 0
	for _, e := range got {
		if e.Type == event.EventWarning {
			warnings++
		}
	}
	if warnings != 1 || len(got) != len(evs)+1 {
		t.Errorf("%d warning(s) among %d event(s), want 1 among %d: %+v", warnings, len(got), len(evs)+1, got)
	}
}

// runTap sends evs through tap and returns what came out.
func runTap(t *testing.T, tap *conditionTap, evs []event.Event) []event.Event {
	t.Helper()
	in, out := make(chan event.Event), make(chan event.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tap.run(context.Background(), in, out)
	}()
	var got []event.Event
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for e := range out {
			got = append(got, e)
		}
	}()
	for _, e := range evs {
		in <- e
	}
	close(in)
	<-done
	close(out)
	<-collected
	return got
}

func errForbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("no"))
}
