package drain

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// fakeSurger records the calls the engine makes; WaitReady returns at once.
type fakeSurger struct {
	mu      sync.Mutex
	calls   []string
	refuse  error
	pending []*surge.Target
	alive   bool
	// resumeOnly: a drain without --surge.
	resumeOnly bool
}

func (f *fakeSurger) Starts() bool { return !f.resumeOnly }

func (f *fakeSurger) call(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeSurger) Calls() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, " ")
}

func (f *fakeSurger) Check(_ context.Context, pod *corev1.Pod, _ *policyv1.PodDisruptionBudget) (*surge.Target, error) {
	f.call("check")
	if f.refuse != nil {
		return nil, f.refuse
	}
	return &surge.Target{Namespace: "ns", Name: "web", Replicas: 1, Pod: pod.Namespace + "/" + pod.Name, PodUID: string(pod.UID), Node: pod.Spec.NodeName}, nil
}

func (f *fakeSurger) Start(context.Context, *surge.Target, time.Time) (int32, error) {
	f.call("start")
	return 2, nil
}

func (f *fakeSurger) WaitReady(context.Context, *surge.Target) (string, string, error) {
	f.call("wait")
	return "ns/web-new", "n2", nil
}

func (f *fakeSurger) Restore(context.Context, string, string) (surge.Restored, error) {
	f.call("restore")
	return surge.Restored{Replicas: 1, Surged: 2}, nil
}

func (f *fakeSurger) Unwind(context.Context, string, string) (surge.Restored, []string, error) {
	f.call("unwind")
	return surge.Restored{Replicas: 1, Surged: 2}, nil, nil
}

func (f *fakeSurger) Pending(context.Context, []string) ([]*surge.Target, error) {
	f.call("pending")
	return f.pending, nil
}

func (f *fakeSurger) PodAlive(context.Context, *surge.Target) (bool, error) {
	f.call("alive")
	return f.alive, nil
}

// minAvailableOne is a budget of minAvailable 1 whose status says healthy of expected,
// allowing allowed.
func minAvailableOne(healthy, expected, allowed int32, rv string) *policyv1.PodDisruptionBudget {
	b := testPDB(allowed)
	b.ResourceVersion = rv
	b.Spec.MaxUnavailable, b.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(1))
	b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.ExpectedPods = healthy, 1, expected
	return b
}

// The drain's --surge hooks: a pod its budget never lets go is surged (checked in the
// plan, then started and waited for), evicted once the budget's status allows it, and
// its Deployment restored right after the eviction is answered (accepted, or the pod seen
// gone first); a refusal changes
// nothing; an interrupted surge is resumed at the start of the next run.
func TestSurgeHooks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		surger *fakeSurger
		budget *policyv1.PodDisruptionBudget
		pods   []runtime.Object
		opens  bool // the test opens the budget after pod.surge_ready
		// stopAt: the test interrupts the run at this event (a pod that waits for good)
		stopAt  event.Type
		calls   string
		events  []event.Type
		refused bool
		// onBlocked: only --on-blocked=fail refuses a run up front over a pod that
		// cannot be surged.
		onBlocked OnBlocked
	}{
		{name: "surged, evicted, restored", surger: &fakeSurger{}, budget: minAvailableOne(1, 1, 0, "1"),
			pods: []runtime.Object{podOn("web-1", "n1", "u1")}, opens: true,
			calls:  "check pending check start wait restore",
			events: []event.Type{event.EventSurgeStarted, event.EventSurgeReady, event.EventEvictionStarted, event.EventDeploymentRestored}},
		{name: "refused under --on-blocked=fail: nothing changed", surger: &fakeSurger{refuse: &surge.RefusedError{Pod: "ns/web-1", Reason: "no"}},
			budget: minAvailableOne(1, 1, 0, "1"), pods: []runtime.Object{podOn("web-1", "n1", "u1")},
			calls: "check", refused: true, onBlocked: OnBlockedFail},
		{name: "refused under wait: the pod waits like any blocked pod", surger: &fakeSurger{refuse: &surge.RefusedError{Pod: "ns/web-1", Reason: "no"}},
			budget: minAvailableOne(1, 1, 0, "1"), pods: []runtime.Object{podOn("web-1", "n1", "u1")},
			stopAt: event.EventEvictionBlocked, calls: "check pending check"},
		{name: "resumed, its pod gone: unwound at the start",
			surger: &fakeSurger{pending: []*surge.Target{{Namespace: "ns", Name: "web", Replicas: 1, Pod: "ns/web-0", PodUID: "u0", Node: "n1"}}},
			budget: minAvailableOne(1, 2, 1, "1"), calls: "pending alive unwind",
			events: []event.Type{event.EventDeploymentRestored, event.EventNodeDrained}},
		{name: "without --surge: a pod its budget never lets go waits, not surged", surger: &fakeSurger{resumeOnly: true},
			budget: minAvailableOne(1, 1, 0, "1"), pods: []runtime.Object{podOn("web-1", "n1", "u1")},
			stopAt: event.EventEvictionBlocked, calls: "pending"},
		{name: "without --surge: a surge an earlier run left is still finished", surger: func() *fakeSurger { f := alive(true); f.resumeOnly = true; return f }(),
			budget: minAvailableOne(2, 2, 1, "1"), pods: []runtime.Object{podOn("web-1", "n1", "u1")},
			calls:  "pending alive restore",
			events: []event.Type{event.EventSurgeStarted, event.EventEvictionStarted, event.EventDeploymentRestored}},
		{name: "resumed, its pod there: evicted, then restored", surger: alive(true),
			budget: minAvailableOne(2, 2, 1, "1"), pods: []runtime.Object{podOn("web-1", "n1", "u1")},
			calls:  "pending alive restore",
			events: []event.Type{event.EventSurgeStarted, event.EventEvictionStarted, event.EventDeploymentRestored}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := append([]runtime.Object{testNode("n1"), tc.budget}, tc.pods...)
			g := newRig(t, Config{Surge: tc.surger, Settings: Settings{Policy: Policy{OnBlocked: tc.onBlocked}}}, objs...)
			g.start("n1")
			var got []event.Type
			if tc.opens {
				g.next(event.EventSurgeReady, 0)
				got = append(got, event.EventSurgeStarted, event.EventSurgeReady)
				updatePDB(t, g, minAvailableOne(2, 2, 1, "2"))
			}
			if tc.stopAt != "" {
				g.next(tc.stopAt, 0)
				g.cancel()
			}
			for ev := range g.events {
				switch ev.Type {
				case event.EventSurgeStarted, event.EventSurgeReady, event.EventEvictionStarted, event.EventDeploymentRestored, event.EventNodeDrained:
					got = append(got, ev.Type)
				}
			}
			res := <-g.done
			if tc.refused {
				var pe *PreflightError
				if !errors.As(res.err, &pe) || !strings.Contains(res.err.Error(), "cannot be surged") {
					t.Errorf("Run = %v, want a PreflightError naming the refusal", res.err)
				}
				for _, a := range g.client.Actions() {
					if a.GetVerb() == "patch" || a.GetVerb() == "update" || a.GetSubresource() == "eviction" {
						t.Errorf("a refused surge changed something: %s %s", a.GetVerb(), a.GetResource().Resource)
					}
				}
			} else if res.err != nil && tc.stopAt == "" {
				t.Fatalf("Run: %v", res.err)
			}
			if c := tc.surger.Calls(); c != tc.calls {
				t.Errorf("calls %q, want %q", c, tc.calls)
			}
			i := 0 // tc.events must appear in got in this order
			for _, ev := range got {
				if i < len(tc.events) && ev == tc.events[i] {
					i++
				}
			}
			if i != len(tc.events) {
				t.Errorf("events %v, want %v among them in this order", got, tc.events)
			}
		})
	}
}

func alive(a bool) *fakeSurger {
	return &fakeSurger{alive: a, pending: []*surge.Target{{Namespace: "ns", Name: "web", Replicas: 1, Pod: "ns/web-1", PodUID: "u1", Node: "n1"}}}
}
