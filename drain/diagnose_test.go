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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// A budget exhausted because a replacement cannot be scheduled: the wait names the
// replacement and the scheduler's message as soon as its pods are listed, and is said
// again every WaitInterval with how long it has lasted (the fake clock drives both).
func TestWaitNamesTheReplacementAndIsSaidAgain(t *testing.T) {
	budget := testPDB(0)
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
	repl := podOn("web-new", "", "u-new")
	repl.Status.Phase = corev1.PodPending
	repl.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector."}}
	g := newRig(t, Config{WaitInterval: 20 * time.Second}, testNode("n1"), podOn("web-old", "n1", "u-old"), repl, budget)
	onlyNodePods(g.client)
	g.start("n1")
	first := blockedWith(g, string(pdb.Exhausted), 0)
	if first.Pod != "ns/web-old" || first.Cause == "" || first.Remedy == "" || first.Waited != 0 {
		t.Fatalf("first wait = %+v", first)
	}
	// The next tick lists the budget's pods: the cause changes, the wait is said again.
	named := blockedWith(g, string(pdb.Exhausted), time.Second)
	for _, want := range []string{"ns/web-new is unschedulable: 0/3 nodes are available: 1 node(s) were unschedulable", "pdb ns/web"} {
		if !strings.Contains(named.Cause, want) {
			t.Errorf("cause %q lacks %q", named.Cause, want)
		}
	}
	if !strings.Contains(named.Remedy, "uncordon") {
		t.Errorf("remedy = %q", named.Remedy)
	}
	// Nothing changes: said again after WaitInterval, then again after another.
	a := blockedWith(g, string(pdb.Exhausted), time.Second)
	b := blockedWith(g, string(pdb.Exhausted), time.Second)
	if a.Waited < 20*time.Second || b.Waited-a.Waited != 20*time.Second {
		t.Errorf("said again after %s then %s; want every 20s", a.Waited, b.Waited)
	}
	if a.Cause != named.Cause {
		t.Errorf("repeat cause %q, want %q", a.Cause, named.Cause)
	}
	g.cancel()
	res := g.finish()
	var found bool
	for _, bl := range res.sum.PendingBlocks {
		found = found || (bl.Pod == "ns/web-old" && strings.Contains(bl.Cause, "web-new"))
	}
	if !found {
		t.Errorf("summary blockers %+v lack the cause", res.sum.PendingBlocks)
	}
}

// An earlier run's eviction record is named with when it expires.
func TestWaitNamesAnEarlierRunsEvictionRecord(t *testing.T) {
	budget := testPDB(0)
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
	budget.Status.DisruptedPods = map[string]metav1.Time{"web-b": {Time: time.Unix(1_000_000, 0).Add(-30 * time.Second)}}
	g := newRig(t, Config{}, testNode("n1"), podOn("web-a", "n1", "u-a"), podOn("web-b", "n2", "u-b"), budget)
	onlyNodePods(g.client)
	g.start("n1")
	blockedWith(g, string(pdb.Exhausted), 0)
	ev := blockedWith(g, string(pdb.Exhausted), time.Second)
	if !strings.Contains(ev.Cause, "eviction record of an earlier, interrupted run") || !strings.Contains(ev.Cause, "ns/web-b") ||
		!strings.Contains(ev.Cause, time.Unix(1_000_000, 0).Add(90*time.Second).UTC().Format("at 15:04:05Z")) {
		t.Errorf("cause = %q", ev.Cause)
	}
	g.cancel()
	g.finish()
}

// A budget that never allows is said with its remedy at once (no List needed).
func TestNeverAllowsSaysItsRemedy(t *testing.T) {
	budget := testPDB(0)
	budget.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	g := newRig(t, Config{}, testNode("n1"), podOn("web-a", "n1", "u-a"), budget)
	onlyNodePods(g.client)
	g.start("n1")
	ev := blockedWith(g, string(pdb.Never), 0)
	if !strings.Contains(ev.Cause, "maxUnavailable 0") || !strings.Contains(ev.Remedy, "--surge") || !strings.Contains(ev.Remedy, "--on-blocked=skip") {
		t.Errorf("wait = %+v", ev)
	}
	g.cancel()
	g.finish()
}

// While the API server does not answer the Lists, the wait is still said every
// WaitInterval, with the cause last known.
func TestWaitLinesGoOnWhileListsFail(t *testing.T) {
	budget := testPDB(0)
	g := newRig(t, Config{WaitInterval: 10 * time.Second}, testNode("n1"), podOn("web-a", "n1", "u-a"), budget)
	onlyNodePods(g.client)
	g.client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if _, ok := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("spec.nodeName"); ok {
			return false, nil, nil
		}
		return true, nil, errors.New("connection refused")
	})
	g.start("n1")
	first := blockedWith(g, string(pdb.Exhausted), 0)
	a := blockedWith(g, string(pdb.Exhausted), time.Second)
	b := blockedWith(g, string(pdb.Exhausted), time.Second)
	if a.Waited != 10*time.Second || b.Waited != 20*time.Second || a.Cause != first.Cause || a.Cause == "" {
		t.Errorf("waits said after %s and %s with causes %q, %q; want every 10s with %q", a.Waited, b.Waited, a.Cause, b.Cause, first.Cause)
	}
	g.cancel()
	g.finish()
}

// An evicted pod that stays (a finalizer) is said with its finalizer, and said again.
func TestStuckTerminatingIsSaidWithItsFinalizersAndAgain(t *testing.T) {
	p := podOn("web-a", "n1", "u-a")
	p.Finalizers = []string{"example.com/protect"}
	g := newRig(t, Config{WaitInterval: 10 * time.Second}, testNode("n1"), p)
	onlyNodePods(g.client)
	g.answer = func(int, *policyv1.Eviction) error { return nil } // accepted, the pod stays
	g.start("n1")
	first := g.warning("StuckTerminating", 5*time.Second)
	if !strings.Contains(first.Message, "finalizers example.com/protect") || !strings.Contains(first.Remedy, "finalizer") {
		t.Errorf("first = %+v", first)
	}
	again := g.warning("StuckTerminating", time.Second)
	if again.Waited < 10*time.Second || !strings.Contains(again.Message, "example.com/protect") {
		t.Errorf("again = %+v", again)
	}
	g.cancel()
	g.finish()
}

// The plan explains a budget that allows nothing now: its pod waits on a replacement the
// scheduler cannot place, named with its message.
func TestPlanExplainsAnExhaustedBudget(t *testing.T) {
	budget := testPDB(0)
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
	repl := podOn("web-new", "", "u-new")
	repl.Status.Phase = corev1.PodPending
	repl.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 node(s) were unschedulable."}}
	g := newRig(t, Config{}, testNode("n1"), testNode("n2"), podOn("web-old", "n1", "u-old"), repl, budget)
	onlyNodePods(g.client)
	plan, err := g.eng.Plan(context.Background(), []string{"n1"})
	if err != nil {
		t.Fatal(err)
	}
	steps := plan.Nodes[0].Steps
	if len(steps) != 1 || !strings.Contains(steps[0].Cause, "ns/web-new is unschedulable: 0/3 nodes are available") || !strings.Contains(steps[0].Remedy, "uncordon") {
		t.Fatalf("steps = %+v", steps)
	}
	if bs := plan.Blocked(); len(bs) == 1 && bs[0].Cause != steps[0].Cause {
		t.Errorf("blocker cause %q, want the step's", bs[0].Cause)
	}
}

// A budget held by a replacement that is only starting: the wait is routine (no cause or
// remedy for a person), and listing the budget's pods does not say it again; once it has
// lasted StaleAfter, it is said again with its cause.
func TestRoutineWaitIsSaidOnceThenWithItsCauseOnceItLasts(t *testing.T) {
	budget := testPDB(0)
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
	repl := podOn("web-new", "n2", "u-new")
	repl.Status.Conditions = nil // Running, not Ready yet
	g := newRig(t, Config{WaitInterval: 10 * time.Minute}, testNode("n1"), podOn("web-old", "n1", "u-old"), repl, budget)
	onlyNodePods(g.client)
	g.start("n1")
	first := blockedWith(g, string(pdb.Exhausted), 0)
	if !first.Routine || first.Cause == "" {
		t.Fatalf("first wait = %+v, want routine, with its cause kept for machine output", first)
	}
	lasted := blockedWith(g, string(pdb.Exhausted), time.Second)
	if lasted.Routine || lasted.CauseKind != "ReplacementsNotReady" || lasted.Waited < 30*time.Second || !strings.Contains(lasted.Cause, "ns/web-new is not Ready") {
		t.Errorf("said again = %+v; want, after 30s and not before, the replacement not Ready as its cause", lasted)
	}
	g.cancel()
	g.finish()
}

// The reservation this run holds on a budget is named in the wait.
func TestWaitNamesTheDrainsOwnEvictionsInFlight(t *testing.T) {
	budget := testPDB(1)
	g := newRig(t, Config{WaitInterval: 10 * time.Minute}, testNode("n1"), podOn("web-a", "n1", "u-a"), podOn("web-b", "n1", "u-b"), budget)
	onlyNodePods(g.client)
	g.answer = func(int, *policyv1.Eviction) error { return nil } // accepted; the status never shows it
	g.start("n1")
	w := blockedWith(g, string(pdb.Exhausted), 0)
	if !strings.HasSuffix(w.Message, "allows 1: 1 taken by this drain's evictions in flight") || !w.Routine {
		t.Errorf("wait = %+v; want the reservation named, routine", w)
	}
	g.cancel()
	g.finish()
}
