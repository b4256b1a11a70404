package drain

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// frozenAfterItDroppedThePod starts a drain of n1 (p1, p2 under a budget allowing 1;
// p0 on n2) and plays a controller-manager that records p1's eviction, drops p1 from
// disruptedPods as it terminates, and then stops: p1 goes, its replacement p3 comes up
// Ready on n2, and the status goes on counting 2 healthy pods where there are 3.
// before, if given, runs before the drain starts (a reactor added later would race it).
func frozenAfterItDroppedThePod(t *testing.T, before ...func(*rig)) (*rig, *run, *policyv1.PodDisruptionBudget) {
	t.Helper()
	budget := testPDB(1)
	budget.ResourceVersion = "1"
	g := newRig(t, Config{Settings: Settings{Timeout: 5 * time.Minute}}, testNode("n1"), testNode("n2"),
		podOn("p0", "n2", "u0"), podOn("p1", "n1", "u1"), podOn("p2", "n1", "u2"), budget)
	onlyNodePods(g.client)
	for _, f := range before {
		f(g)
	}
	g.answer = func(int, *policyv1.Eviction) error { return nil }
	g.start("n1")
	r := <-g.run
	g.next(event.EventEvictionAccepted, 0)
	synced := budget.DeepCopy()
	synced.ResourceVersion = "2"
	synced.Status.DisruptionsAllowed, synced.Status.CurrentHealthy = 0, 2
	updatePDB(t, g, synced)
	g.quiesce(r, "2")
	if err := g.client.CoreV1().Pods("ns").Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.next(event.EventPodEvicted, 0)
	if _, err := g.client.CoreV1().Pods("ns").Create(context.Background(), podOn("p3", "n2", "u3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return g, r, synced
}

// The controller-manager stopped after it had dropped the evicted pod from
// disruptedPods: nothing there is left to call stale, but the status has stopped
// following its pods. Once that has lasted StaleAfter with no change of the status, the
// budget is called stale, its pods are not asked again, and --timeout names it.
func TestFrozenStatusThatDisagreesWithItsPodsIsStale(t *testing.T) {
	g, _, _ := frozenAfterItDroppedThePod(t)
	stale := g.warning("BudgetStatusStale", 10*time.Second)
	for _, want := range []string{"ns/web", "status is stale", "currentHealthy is 2 but 3", "kube-controller-manager"} {
		if !strings.Contains(stale.Message, want) {
			t.Errorf("stale warning %q lacks %q", stale.Message, want)
		}
	}
	res := g.finishStepping(10 * time.Second)
	var te *TimeoutError
	if !errors.As(res.err, &te) || !strings.Contains(te.Error(), "status is stale") {
		t.Fatalf("Run = %v, want a timeout naming the stale budget", res.err)
	}
	if n := g.evictions.Load(); n != 1 {
		t.Errorf("%d eviction requests, want 1 (never asked while stale)", n)
	}
}

// A busy controller-manager lags its pods too, but it goes on writing the status: a
// budget whose status changes every 20 s is never called stale, however long its
// disagreement lasts.
func TestStatusThatKeepsChangingIsNotStale(t *testing.T) {
	g, r, synced := frozenAfterItDroppedThePod(t)
	for i := 0; i < 8; i++ { // 160 s, well past StaleAfter (30 s)
		busy := synced.DeepCopy()
		busy.ResourceVersion = strconv.Itoa(3 + i)
		busy.Status.Conditions = []metav1.Condition{{Type: "Busy", Status: metav1.ConditionTrue, Reason: busy.ResourceVersion, LastTransitionTime: metav1.Now()}}
		updatePDB(t, g, busy)
		g.quiesce(r, busy.ResourceVersion)
		for step := 0; step < 4; step++ {
			g.clock.Step(5 * time.Second)
			time.Sleep(10 * time.Millisecond)
		}
	drainEvents:
		for {
			select {
			case ev := <-g.events:
				if ev.Reason == "BudgetStatusStale" {
					t.Fatalf("a budget whose status changes every 20 s was called stale: %s", ev.Message)
				}
			default:
				break drainEvents
			}
		}
	}
	g.cancel()
	<-g.done
}

// stepWithoutStale advances the fake clock by d in 5 s steps and fails the test on any
// BudgetStatusStale warning.
func stepWithoutStale(t *testing.T, g *rig, d time.Duration, why string) {
	t.Helper()
	for step := time.Duration(0); step < d; step += 5 * time.Second {
		g.clock.Step(5 * time.Second)
		time.Sleep(20 * time.Millisecond)
		for more := true; more; {
			select {
			case ev := <-g.events:
				if ev.Reason == "BudgetStatusStale" {
					t.Fatalf("%s: called stale: %s", why, ev.Message)
				}
			default:
				more = false
			}
		}
	}
}

// The status is right (p3 went NotReady, so a live controller-manager has nothing to
// write) but the budget's pod lists have failed since one that saw p3 Ready: an old list
// is never held against the status.
func TestAnOldListDoesNotMakeTheStatusStale(t *testing.T) {
	var failLists atomic.Bool
	g, _, _ := frozenAfterItDroppedThePod(t, func(g *rig) {
		g.client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if _, ok := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("spec.nodeName"); !ok && failLists.Load() {
				return true, nil, errors.New("context deadline exceeded")
			}
			return false, nil, nil
		})
	})
	stepWithoutStale(t, g, 15*time.Second, "before the lists fail")
	failLists.Store(true)
	notReady(t, g, "p3")
	stepWithoutStale(t, g, 90*time.Second, "lists failing, the status right")
	g.cancel()
	<-g.done
}

// A budget called stale from its pods is current after all once a fresh list of its pods
// agrees with the status (a controller-manager far behind that had nothing to write when
// it caught up): the flag goes, without a change of the status.
func TestStaleFromItsPodsClearsWhenAListAgrees(t *testing.T) {
	g, r, _ := frozenAfterItDroppedThePod(t)
	g.warning("BudgetStatusStale", 10*time.Second)
	notReady(t, g, "p3") // now 2 Ready, as the status says
	deadline := time.After(10 * time.Second)
	for {
		r.lock()
		stale := r.budgets.watch.stale["ns/web"].why
		r.unlock()
		if stale == "" {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("still stale after lists that agree with the status: %s", stale)
		case <-time.After(20 * time.Millisecond):
			g.clock.Step(5 * time.Second)
		case <-g.events:
		}
	}
	g.cancel()
	<-g.done
}

func notReady(t *testing.T, g *rig, name string) {
	t.Helper()
	p, err := g.client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	if _, err := g.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
