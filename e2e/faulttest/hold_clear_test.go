package faulttest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 44, test 4: the opt-in remedy. The same hold as TestADisruptionControllerHoldIsNamedAndWaitedOut
// (a StatefulSet pod evicted while kube-controller-manager is stopped, its replacement
// Ready before the controller starts again); a drain of the other pod's node with
// --clear-disruption-holds removes the stale disruptedPods entry once it is 30 s old and
// the replacement 10 s (the margins of drain/holdclear.go), says so, and evicts at once,
// a minute and more before the hold's end. A watch of the StatefulSet's pods finds
// at every moment at least one Ready and not deleting (2 pods, maxUnavailable 1): the
// remedy never takes the workload below its budget. Not parallel: every budget freezes
// while the controller is down.
func TestTheOptInRemedyClearsAHoldWithoutGoingBelowTheBudget(t *testing.T) {
	e, victim, target := dbOnTwoNodes(t)
	until := holdOnPurpose(t, e, victim)

	// The watch of the StatefulSet's pods, from now to the drain's end.
	pods := e.C.CoreV1().Pods(e.NS)
	list, err := pods.List(e.Ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(e.Ctx, metav1.ListOptions{LabelSelector: "app=db", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	available := map[string]bool{}
	for i := range list.Items {
		available[list.Items[i].Name] = fixture.PodReady(&list.Items[i]) && list.Items[i].DeletionTimestamp == nil
	}
	count := func() int {
		n := 0
		for _, ok := range available {
			if ok {
				n++
			}
		}
		return n
	}
	least, events := count(), 0
	var watched sync.WaitGroup
	watched.Add(1)
	go func() {
		defer watched.Done()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			events++
			available[p.Name] = ev.Type != watch.Deleted && fixture.PodReady(p) && p.DeletionTimestamp == nil
			least = min(least, count())
		}
	}()

	var mu sync.Mutex
	var sent time.Time // the target's first eviction request
	began := time.Now()
	r := start(t, e.Ctx, shared.Kubeconfig, func(l line) {
		if strings.Contains(l.Text, `"type":"pod.eviction_started"`) && strings.Contains(l.Text, target.Name) {
			mu.Lock()
			if sent.IsZero() {
				sent = time.Now()
			}
			mu.Unlock()
		}
	}, "drain", e.Nodes[0], "-o", "json", "--timeout", "4m", "--clear-disruption-holds")
	res := r.wait()
	w.Stop()
	watched.Wait()
	if res.Code != 0 {
		t.Fatalf("drain: exit %d, want 0", res.Code)
	}
	cleared := false
	for _, l := range strings.Split(res.Stdout, "\n") {
		var ev struct{ Type, Reason, Message, PDB string }
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		if ev.Type == "warning" && ev.Reason == drain.ReasonHoldCleared && strings.Contains(ev.Message, victim.Name) {
			cleared = true
		}
		if ev.Reason == drain.ReasonHoldNotCleared {
			t.Errorf("the run could not clear the hold: %s", l)
		}
	}
	if !cleared {
		t.Errorf("no %s warning naming %s", drain.ReasonHoldCleared, victim.Name)
	}
	b, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Get(e.Ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := b.Status.DisruptedPods[victim.Name]; ok && !at.After(began) {
		t.Errorf("the stale entry of %s (%s) is still there", victim.Name, at.Time.UTC().Format(time.TimeOnly))
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("FIGURE issue44-test4: hold until %s; the drain began %s before it, evicted %s after it began, and ended after %s; least available db pods %d (%d pod events watched)",
		until.UTC().Format(time.TimeOnly), until.Sub(began).Round(time.Second), sent.Sub(began).Round(100*time.Millisecond), res.Elapsed.Round(100*time.Millisecond), least, events)
	if sent.IsZero() || !sent.Before(until.Add(-time.Minute)) {
		t.Errorf("the eviction of %s was sent at %s, want more than a minute before the hold's end %s", target.Name, sent.UTC().Format(time.TimeOnly), until.UTC().Format(time.TimeOnly))
	}
	if least < 1 {
		t.Errorf("at some moment %d db pods were available, below the budget's 1 (2 pods, maxUnavailable 1)", least)
	}
}
