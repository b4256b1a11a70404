package roll

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/ownership"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

var blue = map[string]string{nodepool.RoleLabel("blue"): ""}

func node(name string, unschedulable bool, labels map[string]string) *corev1.Node {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{}}, Spec: corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func notReady(n *corev1.Node) *corev1.Node {
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	return n
}

// ours gives the node this tool's cordon (managedFields) and state.
func ours(n *corev1.Node, state string) *corev1.Node {
	n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: noderecord.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:unschedulable":{}}}`)}}
	if state != "" {
		n.Labels[noderecord.LabelState] = state
		n.Annotations[noderecord.AnnotationDrain] = state
	}
	return n
}

func moving(n *corev1.Node) *corev1.Node {
	n.Annotations[nodepool.MoveAnnotation] = `{"from":["blue"],"to":"green","step":"draining"}`
	return n
}

func window(cs *fake.Clientset, limit int32, run ...string) *Window {
	w := &Window{Kube: cs, Pools: map[string]*v1alpha1.NodePool{"blue": {ObjectMeta: metav1.ObjectMeta{Name: "blue"},
		Spec: v1alpha1.NodePoolSpec{MaxUnavailable: ptr.To(limit)}}}, Of: map[string][]string{}}
	for _, n := range run {
		w.Of[n] = []string{"blue"}
	}
	return w
}

// The window's one rule: counted are the run's nodes in progress, members in progress by
// another run (their record) and NotReady members; not counted, and named, are members
// cordoned by someone else and members this tool left cordoned.
func TestWindowRoom(t *testing.T) {
	tests := []struct {
		name  string
		limit int32
		run   []string
		objs  []runtime.Object
		adm   drain.Admission
		wait  []string // substrings of the wait line; nil when the node may start
	}{
		{name: "room: nothing out of service", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), node("b2", false, blue)}},
		{name: "room: one in progress, maxUnavailable 2", limit: 2, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2", Running: []string{"b1"}},
			objs: []runtime.Object{ours(node("b1", true, blue), noderecord.StateDraining), node("b2", false, blue)}},
		{name: "full: one of the run in progress", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2", Running: []string{"b1"}},
			objs: []runtime.Object{ours(node("b1", true, blue), noderecord.StateDraining), node("b2", false, blue)}, wait: []string{"1 node(s) out of service (b1: in progress)"}},
		{name: "room: a foreign cordon does not count", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), node("x", true, blue)}},
		{name: "room: a member drained earlier and left cordoned does not count", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), ours(node("d", true, blue), noderecord.StateDrained)}},
		{name: "room: a member given up (blocked) does not count", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), ours(node("d", true, blue), noderecord.StateBlocked)}},
		{name: "room: a member this tool cordoned does not count", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), ours(node("c", true, blue), "")}},
		{name: "full: another run's drain counts", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), ours(node("o", true, blue), noderecord.StateDraining)}, wait: []string{"(o: in progress by another run)"}},
		{name: "full: another run's move counts", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), moving(ours(node("o", true, blue), noderecord.StateDrained))}, wait: []string{"(o: in progress by another run)"}},
		{name: "full: the wait line names what it does not count", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2", Running: []string{"b1"}},
			objs: []runtime.Object{ours(node("b1", true, blue), noderecord.StateDraining), node("b2", false, blue), node("x", true, blue), ours(node("d", true, blue), noderecord.StateDrained)},
			wait: []string{"(b1: in progress)", "not counted: d: drained, left cordoned; x: cordoned by someone else"}},
		{name: "full: a NotReady member counts", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), notReady(node("x", false, blue))}, wait: []string{"(x: NotReady)"}},
		{name: "full: a pending member of the run that is NotReady counts", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2"},
			objs: []runtime.Object{notReady(node("b1", false, blue)), node("b2", false, blue)}, wait: []string{"(b1: NotReady)"}},
		{name: "room: a pending member of the run with a record of a killed run does not count", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2"},
			objs: []runtime.Object{moving(node("b1", false, blue)), node("b2", false, blue)}},
		{name: "room: a member drained by this run no longer counts", limit: 1, run: []string{"b1", "b2"}, adm: drain.Admission{Node: "b2", Done: []string{"b1"}},
			objs: []runtime.Object{ours(node("b1", true, blue), noderecord.StateDrained), node("b2", false, blue)}},
		{name: "a node out of service itself takes nothing more", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", true, blue), notReady(node("x", false, blue))}},
		{name: "a node of another pool does not count", limit: 1, run: []string{"b1"}, adm: drain.Admission{Node: "b1"},
			objs: []runtime.Object{node("b1", false, blue), notReady(node("g", false, map[string]string{nodepool.RoleLabel("green"): ""}))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := window(kubefake.New(tt.objs...), tt.limit, tt.run...)
			wait, err := w.Room(context.Background(), tt.adm)
			if err != nil {
				t.Fatal(err)
			}
			if (wait == "") != (tt.wait == nil) {
				t.Fatalf("Room = %q, want a wait: %v", wait, tt.wait != nil)
			}
			for _, s := range tt.wait {
				if !strings.Contains(wait, s) {
					t.Errorf("Room = %q, want it to contain %q", wait, s)
				}
			}
		})
	}
}

// Wait returns at the change that can make room: the NotReady member becomes Ready.
func TestWindowWaitsForAChange(t *testing.T) {
	cs := kubefake.New(node("b1", false, blue), notReady(node("x", false, blue)))
	w := window(cs, 1, "b1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if wait, err := w.Room(ctx, drain.Admission{Node: "b1"}); err != nil || wait == "" {
		t.Fatalf("Room = %q, %v; want a wait", wait, err)
	}
	woken := make(chan error, 1)
	go func() { woken <- w.Wait(ctx) }()
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
			if wait, err := w.Room(ctx, drain.Admission{Node: "b1"}); err != nil || wait != "" {
				t.Errorf("after the change Room = %q, %v; want room", wait, err)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestOwnedPoolsLeavesUnownedRoleLabels(t *testing.T) {
	n := node("n1", false, map[string]string{nodepool.RoleLabel("blue"): "", nodepool.RoleLabel("worker"): "", nodepool.RoleLabel("gone"): ""})
	n.Annotations[ownership.RecordAnnotation("gone")] = `{}`
	owned, kept := ownedPools(n, map[string]*v1alpha1.NodePool{"blue": {ObjectMeta: metav1.ObjectMeta{Name: "blue"}}})
	if strings.Join(owned, ",") != "blue,gone" || strings.Join(kept, ",") != nodepool.RoleLabel("worker") {
		t.Errorf("owned %v kept %v; want blue,gone owned (a NodePool, a record) and worker kept", owned, kept)
	}
}
