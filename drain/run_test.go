package drain

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// A budget allows 2: two evictions are accepted (their pods still terminating). An
// unrelated update of the PDB (a condition) must not free their reservations: no third
// request. Only evidence does: the status listing the pods in disruptedPods.
func TestReservationsAreReleasedByEvidenceOnly(t *testing.T) {
	budget := testPDB(2)
	budget.ResourceVersion = "1"
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), podOn("p2", "n1", "u2"), podOn("p3", "n1", "u3"), budget)
	g.answer = func(int, *policyv1.Eviction) error { return nil } // accepted; the pods keep terminating
	g.start("n1")
	r := <-g.run
	g.next(event.EventEvictionAccepted, 0)
	g.next(event.EventEvictionAccepted, 0)
	g.next(event.EventEvictionBlocked, 0)

	unrelated := budget.DeepCopy()
	unrelated.ResourceVersion = "2"
	unrelated.Status.Conditions = []metav1.Condition{{Type: "DisruptionAllowed", Status: metav1.ConditionTrue, Reason: "SufficientPods", LastTransitionTime: metav1.Now()}}
	updatePDB(t, g, unrelated)
	g.quiesce(r, "2")
	if n := g.evictions.Load(); n != 2 {
		t.Fatalf("%d eviction requests after an unrelated PDB update, want 2", n)
	}

	// The disruption controller confirms both evictions and a replacement became Ready:
	// allowed 1, nothing reserved any more, so exactly one more request.
	confirmed := unrelated.DeepCopy()
	confirmed.ResourceVersion = "3"
	confirmed.Status.DisruptionsAllowed = 1
	confirmed.Status.DisruptedPods = map[string]metav1.Time{"p1": metav1.Now(), "p2": metav1.Now()}
	updatePDB(t, g, confirmed)
	g.quiesce(r, "3")
	if n := g.evictions.Load(); n != 3 {
		t.Fatalf("%d eviction requests after the status confirmed both, want 3", n)
	}
	g.cancel()
	if res := g.finish(); !errors.As(res.err, new(*InterruptedError)) {
		t.Fatalf("Run = %v, want interrupted", res.err)
	}
}

// Interrupting at each step never panics (the events channel is closed right after Run
// returns, so a late send would), and Run reports the interrupt.
func TestInterruptAtEachStep(t *testing.T) {
	for _, step := range []event.Type{event.EventPlan, event.EventNodeCordoned, event.EventEvictionStarted, event.EventEvictionBlocked} {
		t.Run(string(step), func(t *testing.T) {
			g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}}, testNode("n1"), testNode("n2"), testNode("n3"),
				podOn("p1", "n1", "u1"), testPDB(0))
			if step == event.EventEvictionStarted {
				g = newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), testPDB(1))
				g.answer = func(int, *policyv1.Eviction) error { return nil }
			}
			nodes := []string{"n1", "n2", "n3"}
			if step == event.EventEvictionStarted {
				nodes = nodes[:1]
			}
			g.start(nodes...)
			g.next(step, 0)
			g.cancel()
			res := g.finish()
			if !errors.As(res.err, new(*InterruptedError)) {
				t.Fatalf("Run = %v, want interrupted", res.err)
			}
		})
	}
}

// Answers that can never succeed fail the node at once, with the server's reason.
func TestAnswersThatNeverSucceedFailTheNodeAtOnce(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for name, err := range map[string]error{
		"403 RBAC":    apierrors403(pods),
		"403 webhook": webhookDenial(),
		"400":         badRequest(),
		"422":         invalid(),
	} {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"))
			g.answer = func(int, *policyv1.Eviction) error { return err }
			g.start("n1")
			failed := g.next(event.EventNodeFailed, 0)
			if !strings.Contains(failed.Message, "ns/p1") {
				t.Errorf("node.failed = %q, want it to name the pod", failed.Message)
			}
			res := g.finish()
			if res.err == nil || res.sum.NodesFailed != 1 || g.evictions.Load() != 1 {
				t.Fatalf("Run = %v, %+v after %d requests; want one request and the node failed", res.err, res.sum, g.evictions.Load())
			}
		})
	}
}

// 409 proves nothing: the pod is asked again and reported evicted only when it is gone.
func TestConflictIsNotGone(t *testing.T) {
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"))
	g.answer = func(n int, ev *policyv1.Eviction) error {
		if n == 1 {
			return apierrors409()
		}
		return g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	}
	g.start("n1")
	if ev := g.next(event.EventEvictionBlocked, 0); ev.Reason != "Conflict" {
		t.Fatalf("first answer = %+v, want a Conflict wait", ev)
	}
	if ev := g.next(event.EventEvictionStarted, time.Second); ev.Attempt != 2 {
		t.Fatalf("second request = %+v, want attempt 2", ev)
	}
	g.next(event.EventPodEvicted, 0)
	if res := g.finish(); res.err != nil || res.sum.NodesDrained != 1 {
		t.Fatalf("Run = %v, %+v", res.err, res.sum)
	}
}

// A pod that appears on the node while it drains is evicted too (the live node, not the
// plan's snapshot).
func TestPodThatAppearsDuringTheDrainIsEvicted(t *testing.T) {
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"), testPDB(0))
	g.start("n1")
	g.next(event.EventEvictionBlocked, 0)
	late := podOn("late", "n1", "u-late")
	late.Labels = map[string]string{"app": "other"}
	if _, err := g.client.CoreV1().Pods("ns").Create(context.Background(), late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := g.next(event.EventPodEvicted, 0); ev.Pod != "ns/late"; ev = g.next(event.EventPodEvicted, 0) {
	}
	g.cancel()
	g.finish()
}

// A pod tolerating the cordon is evicted once; its replacement coming back is reported by
// name (ReturnedToNode) and not evicted again, and the node is drained.
func TestReplacementThatReturnsIsReportedNotEvictedAgain(t *testing.T) {
	p := podOn("p1", "n1", "u1")
	p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	g := newRig(t, Config{}, testNode("n1"), p)
	g.answer = func(_ int, ev *policyv1.Eviction) error {
		back := p.DeepCopy()
		back.Name, back.UID = "p1-back", "u-back"
		if err := g.client.Tracker().Create(corev1.SchemeGroupVersion.WithResource("pods"), back, "ns"); err != nil {
			return err
		}
		return g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	}
	g.start("n1")
	plan := g.next(event.EventWarning, 0)
	if !strings.Contains(plan.Message, "node.kubernetes.io/unschedulable") || !strings.Contains(plan.Message, "ns/p1") {
		t.Errorf("plan warning = %q, want it to name the tolerating pod", plan.Message)
	}
	back := g.warning("ReturnedToNode", 0)
	if !strings.Contains(back.Message, "ns/p1-back") || !strings.Contains(back.Message, "tolerates") {
		t.Errorf("warning = %q", back.Message)
	}
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || g.evictions.Load() != 1 {
		t.Fatalf("Run = %v after %d requests, want success after 1", res.err, g.evictions.Load())
	}
}

// A budget whose status still counts as disrupted a pod gone for StaleAfter is called
// stale, its pods are not asked again, and --timeout names it.
func TestStaleBudgetStatusIsSaidAndTimeoutNamesIt(t *testing.T) {
	budget := testPDB(1)
	budget.ResourceVersion = "1"
	g := newRig(t, Config{Settings: Settings{Timeout: 5 * time.Minute}}, testNode("n1"), podOn("p1", "n1", "u1"), podOn("p2", "n1", "u2"), budget)
	g.answer = func(int, *policyv1.Eviction) error { return nil }
	g.start("n1")
	r := <-g.run
	g.next(event.EventEvictionAccepted, 0)
	// The controller records the eviction, then stops (kube-controller-manager down).
	frozen := budget.DeepCopy()
	frozen.ResourceVersion = "2"
	frozen.Status.DisruptionsAllowed = 0
	frozen.Status.DisruptedPods = map[string]metav1.Time{"p1": metav1.Now()}
	updatePDB(t, g, frozen)
	g.quiesce(r, "2")
	if err := g.client.CoreV1().Pods("ns").Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.next(event.EventPodEvicted, 0)
	stale := g.warning("BudgetStatusStale", 10*time.Second)
	for _, want := range []string{"ns/web", "status is stale", "kube-controller-manager"} {
		if !strings.Contains(stale.Message, want) {
			t.Errorf("stale warning %q lacks %q", stale.Message, want)
		}
	}
	res := g.finishStepping(10 * time.Second)
	var te *TimeoutError
	if !errors.As(res.err, &te) || !strings.Contains(te.Error(), "ns/web") || !strings.Contains(te.Error(), "status is stale") {
		t.Fatalf("Run = %v, want a timeout naming the stale budget", res.err)
	}
	if n := g.evictions.Load(); n != 1 {
		t.Errorf("%d eviction requests, want 1 (never asked while stale)", n)
	}
}

// An unreachable API server is said once, and its return too.
func TestUnreachableAPIServerIsSaidOnceAndItsReturn(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	probe := func(context.Context) error {
		if down.Load() {
			return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		}
		return nil
	}
	g := newRig(t, Config{Probe: probe}, testNode("n1"), podOn("p1", "n1", "u1"), testPDB(0))
	g.start("n1")
	ev := g.warning("APIServerUnreachable", 10*time.Second)
	if !strings.Contains(ev.Message, "cannot reach the API server") {
		t.Errorf("warning = %q", ev.Message)
	}
	down.Store(false)
	if ev := g.warning("APIServerBack", 10*time.Second); !strings.Contains(ev.Message, "the API server answers again") {
		t.Errorf("warning = %q", ev.Message)
	}
	g.cancel()
	g.finish()
}

func apierrors403(gr schema.GroupResource) error {
	return apierrorsForbidden(gr)
}

// No API call is made while the engine holds its lock: every request checks that the lock
// can be taken (other goroutines hold it only for moments) while the call is in flight.
func TestNoAPICallUnderTheLock(t *testing.T) {
	budget := testPDB(1)
	g := newRig(t, Config{RecordEvents: true}, testNode("n1"), podOn("p1", "n1", "u1"), podOn("p2", "n1", "u2"), budget)
	var held atomic.Int32
	var r atomic.Pointer[run]
	check := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if rr := r.Load(); rr != nil {
			deadline := time.Now().Add(5 * time.Second)
			for !rr.mu.TryLock() {
				if time.Now().After(deadline) {
					held.Add(1)
					t.Errorf("%s %s/%s sent while the engine held its lock", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
					return false, nil, nil
				}
				time.Sleep(time.Millisecond)
			}
			rr.mu.Unlock()
		}
		return false, nil, nil
	}
	g.client.PrependReactor("*", "*", check)
	g.eng.hooks.started = func(rr *run) { r.Store(rr); g.run <- rr }
	g.start("n1")
	g.next(event.EventNodeDrained, 0)
	if res := g.finish(); res.err != nil || held.Load() != 0 {
		t.Fatalf("Run = %v; %d calls under the lock", res.err, held.Load())
	}
}

// A status change wakes only as many waiting pods as the budget has room for.
func TestStatusChangeWakesOnlyAsManyAsTheBudgetAllows(t *testing.T) {
	budget := testPDB(0)
	budget.ResourceVersion = "1"
	objs := []runtime.Object{testNode("n1"), budget}
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		objs = append(objs, podOn(n, "n1", types.UID("u-"+n)))
	}
	g := newRig(t, Config{}, objs...)
	g.answer = func(int, *policyv1.Eviction) error { return nil } // accepted; still terminating
	g.start("n1")
	r := <-g.run
	for range 5 {
		g.next(event.EventEvictionBlocked, 0)
	}
	two := budget.DeepCopy()
	two.ResourceVersion = "2"
	two.Status.DisruptionsAllowed = 2
	updatePDB(t, g, two)
	g.quiesce(r, "2")
	if n := g.evictions.Load(); n != 2 {
		t.Fatalf("%d eviction requests after the budget allowed 2, want 2", n)
	}
	r.lock()
	woken := 0
	for _, st := range r.pods {
		if st.wokenAt != (time.Time{}) || st.phase == terminating {
			woken++
		}
	}
	parked := len(r.budgets.book.parked["ns/web"])
	r.unlock()
	if woken != 2 || parked != 3 {
		t.Errorf("%d pods woken, %d still parked; want 2 and 3", woken, parked)
	}
	g.cancel()
	g.finish()
}
