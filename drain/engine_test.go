package drain

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
)

func testNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// testNodes returns n Ready nodes named by format (e.g. "n%02d") and their names.
func testNodes(format string, n int) ([]runtime.Object, []string) {
	var objs []runtime.Object
	var names []string
	for i := range n {
		name := fmt.Sprintf(format, i)
		names = append(names, name)
		objs = append(objs, testNode(name))
	}
	return objs, names
}

func testPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + "name", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func testPDB(allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3},
	}
}

// harness runs an engine over a fake clientset whose eviction answers are scripted.
type harness struct {
	t         *testing.T
	client    *fake.Clientset
	clock     *testingclock.FakeClock
	events    chan event.Event
	evictions atomic.Int32
	done      chan error
}

// newHarness scripts the eviction subresource: answers[i] is the error of the i-th
// eviction (nil: accepted, and the pod is deleted from the tracker).
func newHarness(t *testing.T, answers []error, objs ...runtime.Object) *harness {
	h := &harness{t: t, client: kubefake.New(objs...), clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0)),
		events: make(chan event.Event, 100), done: make(chan error, 1)}
	h.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		n := int(h.evictions.Add(1)) - 1
		var err error
		if n < len(answers) {
			err = answers[n]
		}
		if err == nil {
			ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
			_ = h.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
		}
		return true, nil, err
	})
	return h
}

func (h *harness) start(nodes ...string) {
	eng, err := NewEngine(Config{Client: h.client, Events: h.events, Clock: h.clock, Workers: 2})
	if err != nil {
		h.t.Fatal(err)
	}
	go func() {
		_, err := eng.Run(context.Background(), nodes)
		h.done <- err
	}()
}

// next waits for the next event of type typ (skipping others).
func (h *harness) next(typ event.Type) event.Event {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-h.events:
			if ev.Type == typ {
				return ev
			}
		case err := <-h.done:
			// The engine may end before its last buffered events are read.
			for {
				select {
				case ev := <-h.events:
					if ev.Type == typ {
						h.done <- err
						return ev
					}
					continue
				default:
				}
				break
			}
			h.t.Fatalf("engine ended waiting for %s: %v", typ, err)
		case <-timeout:
			h.t.Fatalf("no %s event", typ)
		}
	}
}

// settle gives the engine's goroutines (informer handlers, queue) real time to act on
// what just happened; used only before asserting that something did NOT happen.
func settle() { time.Sleep(300 * time.Millisecond) }

func TestRefusedEvictionWaitsForTheBudgetAndRetryAfter(t *testing.T) {
	stale := refusal(10, "The disruption budget web is still being processed by the server.")
	h := newHarness(t, []error{stale, nil}, testNode("n1"), testPod("p", "n1"), testPDB(1))
	h.start("n1")

	blocked := h.next(event.EventEvictionBlocked)
	if blocked.PDB != "ns/web" || blocked.RetryAfter != 10*time.Second {
		t.Fatalf("blocked event = %+v, want pdb ns/web and retry after 10s", blocked)
	}
	// Time passes, but the budget does not change: no retry.
	h.clock.Step(time.Minute)
	settle()
	if n := h.evictions.Load(); n != 1 {
		t.Fatalf("%d eviction requests without any budget change, want 1", n)
	}
	// The budget's status changes: the pod is woken, but not before Retry-After (10 s
	// from the refusal, which the minute above already covers) and its backoff.
	p := testPDB(1)
	p.Status.CurrentHealthy = 3
	p.ResourceVersion = "2"
	if _, err := h.client.PolicyV1().PodDisruptionBudgets("ns").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settle()
	h.clock.Step(time.Second) // past the per-pod backoff (200 ms after one refusal)
	h.next(event.EventPodEvicted)
	if err := <-h.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := h.evictions.Load(); n != 2 {
		t.Errorf("%d eviction requests, want 2", n)
	}
}

func TestRetryAfterHoldsBackAWokenPod(t *testing.T) {
	stale := refusal(10, "The disruption budget web is still being processed by the server.")
	h := newHarness(t, []error{stale, nil}, testNode("n1"), testPod("p", "n1"), testPDB(1))
	h.start("n1")
	h.next(event.EventEvictionBlocked)
	// The budget changes at once; Retry-After (10 s) has not passed.
	p := testPDB(1)
	p.ResourceVersion = "2"
	if _, err := h.client.PolicyV1().PodDisruptionBudgets("ns").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	settle()
	h.clock.Step(9 * time.Second)
	settle()
	if n := h.evictions.Load(); n != 1 {
		t.Fatalf("retried %d times before Retry-After passed", n-1)
	}
	h.clock.Step(2 * time.Second)
	h.next(event.EventPodEvicted)
	if err := <-h.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestExhaustedBudgetIsNotAskedAtAll(t *testing.T) {
	h := newHarness(t, nil, testNode("n1"), testPod("p", "n1"), testPDB(0))
	h.start("n1")
	ev := h.next(event.EventEvictionBlocked)
	if ev.Reason != "Exhausted" || ev.PDB != "ns/web" {
		t.Fatalf("blocked = %+v, want Exhausted on ns/web", ev)
	}
	settle()
	if n := h.evictions.Load(); n != 0 {
		t.Fatalf("%d eviction requests against a budget that allows 0, want 0", n)
	}
	p := testPDB(1)
	p.ResourceVersion = "2"
	if _, err := h.client.PolicyV1().PodDisruptionBudgets("ns").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.next(event.EventPodEvicted)
	if err := <-h.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestMultipleBudgetsAreNotRetriedInALoop(t *testing.T) {
	second := testPDB(1)
	second.Name = "web2"
	h := newHarness(t, []error{multiple(), multiple(), multiple()}, testNode("n1"), testPod("p", "n1"), testPDB(1), second)
	h.start("n1")
	ev := h.next(event.EventEvictionBlocked)
	if ev.Reason != "MultiplePDBs" || ev.PDB != "ns/web,ns/web2" {
		t.Fatalf("blocked = %+v, want MultiplePDBs naming both", ev)
	}
	for range 5 {
		h.clock.Step(time.Minute)
	}
	settle()
	if n := h.evictions.Load(); n > 1 {
		t.Fatalf("%d eviction requests for a pod under two budgets with nothing changed, want at most 1", n)
	}
}
