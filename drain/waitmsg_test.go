package drain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// A pod parks while the eviction before it is in flight ("allows 1: 1 taken by this
// drain's evictions in flight"); that eviction is answered, its pod goes, and its
// replacement cannot be scheduled. At --timeout the pod still waiting is said as the wait
// line would say it now: the budget's current numbers and the unschedulable replacement
// with the scheduler's reason, not the numbers it was parked on.
func TestFinalErrorSaysTheWaitAsItStandsNow(t *testing.T) {
	budget := testPDB(1)
	budget.ResourceVersion = "1"
	g := newRig(t, Config{Settings: Settings{Timeout: 2 * time.Minute}, WaitInterval: 10 * time.Second},
		testNode("n1"), testNode("n2"), podOn("web-a", "n1", "u-a"), podOn("web-b", "n1", "u-b"), podOn("web-c", "n2", "u-c"), budget)
	onlyNodePods(g.client)
	g.answer = func(int, *policyv1.Eviction) error { return nil } // accepted; the pod goes later
	g.start("n1")
	r := <-g.run
	parked := g.next(event.EventEvictionBlocked, 0)
	if !strings.Contains(parked.Message, "allows 1: 1 taken by this drain's evictions in flight") {
		t.Fatalf("parked on %q, want the eviction in flight named", parked.Message)
	}
	// The disruption controller counts web-a gone (its entry dropped), then web-a goes and
	// its replacement waits for a node.
	after := budget.DeepCopy()
	after.ResourceVersion, after.Status.CurrentHealthy, after.Status.DisruptionsAllowed = "2", 2, 0
	updatePDB(t, g, after)
	g.quiesce(r, "2") // seen before web-a goes: its going frees no room
	pods := g.client.CoreV1().Pods("ns")
	if err := pods.Delete(context.Background(), "web-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	repl := podOn("web-new", "", "u-new")
	repl.Status.Phase = corev1.PodPending
	repl.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/2 nodes are available: 1 node(s) had untolerated taint {example.com/reserved: yes}, 1 node(s) were unschedulable."}}
	if _, err := pods.Create(context.Background(), repl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	res := g.finishStepping(time.Second)
	var te *TimeoutError
	if !errors.As(res.err, &te) || len(te.Blockers) != 1 {
		t.Fatalf("Run = %v, want a TimeoutError with one pod still waiting", res.err)
	}
	t.Logf("final error: %s", te.Error())
	b := te.Blockers[0]
	for _, want := range []string{"pdb ns/web needs 2 healthy pods, has 2, allows 0", "ns/web-new", "untolerated taint {example.com/reserved: yes}"} {
		if !strings.Contains(b.Message, want) {
			t.Errorf("still waiting: %q\nwant it to say %q", b.Message, want)
		}
	}
	if strings.Contains(te.Error(), "in flight") || !strings.Contains(b.Cause, "ns/web-new") {
		t.Errorf("final error %q (cause %q): want the unschedulable replacement, not this drain's evictions in flight", te.Error(), b.Cause)
	}
	if res.sum.PodsPending != 1 || res.sum.LeftOn["n1"] != 1 {
		t.Errorf("summary: %d left, by node %v; want 1 on n1", res.sum.PodsPending, res.sum.LeftOn)
	}
}
