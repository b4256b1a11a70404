package operation

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// KEP-6249: a DrainInProgress set False by someone else (the kubelet at its start) while
// the run still drains the node is set True again; once the node is drained the run's own
// False stays, and the run goes on as if nothing happened (no event lost or added). The
// False a previous run left, which the watch delivers before the run's own True, costs no
// write of its own.
func TestDrainInProgressSetFalseBySomeoneElseIsSetTrueAgain(t *testing.T) {
	// n1 carries this tool's record, as every node a run drains, and the False of a
	// previous run's end; n2 does not carry the record (never read).
	previous := corev1.NodeCondition{Type: ConditionDrainInProgress, Status: corev1.ConditionFalse, Reason: ReasonDrained,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}
	cs := kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{noderecord.LabelState: noderecord.StateDraining}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{previous}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}})
	tap := (&Operator{Kube: cs}).newConditionTap(Request{Action: Drain, Drain: drain.Settings{DryRun: drain.DryRunNone}})
	in, out := make(chan event.Event), make(chan event.Event, 10)
	ended := make(chan struct{})
	go func() { tap.run(context.Background(), in, out); close(ended) }()
	status := func() corev1.ConditionStatus {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == ConditionDrainInProgress {
				return c.Status
			}
		}
		return ""
	}
	waitStatus := func(want corev1.ConditionStatus, what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); status() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: DrainInProgress %q, want %q", what, status(), want)
			}
		}
	}
	in <- event.Event{Type: event.EventNodeCordoned, Node: "n1"}
	waitStatus(corev1.ConditionTrue, "cordoned")
	for i := range 2 {
		kubelet := corev1.NodeCondition{Type: ConditionDrainInProgress, Status: corev1.ConditionFalse, Reason: "KubeletStarted"}
		if err := PatchNodeConditions(context.Background(), cs, "n1", time.Now(), kubelet); err != nil {
			t.Fatal(err)
		}
		waitStatus(corev1.ConditionTrue, []string{"set False by the kubelet", "set False again"}[i])
	}
	in <- event.Event{Type: event.EventNodeDrained, Node: "n1"}
	close(in)
	<-ended
	if s := status(); s != corev1.ConditionFalse {
		t.Errorf("after the node drained: DrainInProgress %q, want False", s)
	}
	if len(out) != 2 {
		t.Errorf("%d events forwarded, want the 2 sent", len(out))
	}
	lists, writes := 0, 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" && a.GetResource().Resource == "nodes" {
			writes++
		}
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "nodes" {
			lists++
			if sel := l.GetListRestrictions().Labels.String(); sel != noderecord.LabelState {
				t.Errorf("nodes listed with selector %q, want the record's label %s", sel, noderecord.LabelState)
			}
		}
	}
	if lists == 0 {
		t.Error("the nodes were never listed")
	}
	// The cordon's True, the two corrections, the end's False (the test's own two
	// patches are made on the clientset too).
	if want := 1 + 2 + 1 + 2; writes != want {
		t.Errorf("%d writes of the node's status, want %d", writes, want)
	}
}

// A True the run could not write (the API server answered 500, at the cordon and at the
// first correction) is written again while the watch still shows the node otherwise:
// nothing else would change the node to tell.
func TestDrainInProgressNotWrittenIsWrittenAgain(t *testing.T) {
	cs := kubefake.New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{noderecord.LabelState: noderecord.StateDraining}}})
	failed := 0
	cs.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" || failed == 2 {
			return false, nil, nil
		}
		failed++
		return true, nil, apierrors.NewInternalError(errors.New("etcd leader changed"))
	})
	tap := (&Operator{Kube: cs}).newConditionTap(Request{Action: Drain, Drain: drain.Settings{DryRun: drain.DryRunNone}})
	in, out := make(chan event.Event), make(chan event.Event, 10)
	ended := make(chan struct{})
	go func() { tap.run(context.Background(), in, out); close(ended) }()
	in <- event.Event{Type: event.EventNodeCordoned, Node: "n1"}
	var got corev1.ConditionStatus
	for deadline := time.Now().Add(8 * time.Second); got != corev1.ConditionTrue && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == ConditionDrainInProgress {
				got = c.Status
			}
		}
	}
	close(in)
	<-ended
	if failed != 2 {
		t.Fatalf("%d writes refused, want the first two", failed)
	}
	if got != corev1.ConditionTrue {
		t.Errorf("after the cordon's write failed: DrainInProgress %q, want True written again", got)
	}
}
