package drain

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

// Two runs of one process over two nodes whose pods share a budget that allows one
// disruption: with one ledger the second run does not ask while the first run's eviction
// holds the allowance (its status not moved yet); with a ledger each, both ask.
func TestRunsSharingALedgerAskABudgetOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared bool
		want   int32
	}{
		{name: "one ledger: one request", shared: true, want: 1},
		{name: "a ledger each: both ask", shared: false, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p1, p2 := testPod("p1", "n1"), testPod("p2", "n2")
			p1.UID, p2.UID = "u1", "u2"
			client := kubefake.New(testNode("n1"), testNode("n2"), p1, p2, testPDB(1))
			client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				// The fake does not filter by spec.nodeName: each run lists its node's pods.
				fs := a.(k8stesting.ListAction).GetListRestrictions().Fields
				obj, err := client.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), a.GetNamespace())
				if err != nil || fs == nil || fs.Empty() {
					return err != nil, obj, err
				}
				list := obj.(*corev1.PodList)
				var keep []corev1.Pod
				for _, p := range list.Items {
					if fs.Matches(fields.Set{"spec.nodeName": p.Spec.NodeName}) {
						keep = append(keep, p)
					}
				}
				list.Items = keep
				return true, list, nil
			})
			var asked atomic.Int32
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "eviction" {
					return false, nil, nil
				}
				asked.Add(1)
				return true, nil, nil // accepted; the pod stays (terminating) and the status does not move
			})
			clk := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
			ledger := NewLedger()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{}, 2)
			for _, node := range []string{"n1", "n2"} {
				events := make(chan event.Event, 1000)
				cfg := Config{Client: client, Events: events, Clock: clk, Workers: 2, Ledger: ledger}
				if !tc.shared {
					cfg.Ledger = nil
				}
				eng, err := NewEngine(cfg)
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					_, _ = eng.Run(ctx, []string{node})
					done <- struct{}{}
				}()
			}
			deadline := time.Now().Add(5 * time.Second)
			for asked.Load() < tc.want && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			settle()
			if n := asked.Load(); n != tc.want {
				t.Errorf("%d eviction requests, want %d", n, tc.want)
			}
			cancel()
			<-done
			<-done
		})
	}
}

// A pod already terminating when the run finds it (evicted by a leader that handed over)
// is not asked again: the run waits for it to be gone and counts it evicted.
func TestTerminatingPodIsNotAskedAgain(t *testing.T) {
	p := testPod("p", "n1")
	now := metav1.NewTime(time.Unix(1_000_000, 0).Add(30 * time.Second))
	p.DeletionTimestamp = &now
	p.Finalizers = []string{"kwok.x-k8s.io/fake"} // the fake keeps it until told
	h := newHarness(t, nil, testNode("n1"), p, testPDB(1))
	h.start("n1")
	h.next(event.EventNodeCordoned)
	settle()
	if n := h.evictions.Load(); n != 0 {
		t.Fatalf("%d eviction requests for a pod already terminating, want 0", n)
	}
	if err := h.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "ns", "p"); err != nil {
		t.Fatal(err)
	}
	ev := h.next(event.EventPodEvicted)
	if ev.Pod != "ns/p" {
		t.Errorf("evicted %q, want ns/p", ev.Pod)
	}
	if err := <-h.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := h.evictions.Load(); n != 0 {
		t.Errorf("%d eviction requests, want 0", n)
	}
}
