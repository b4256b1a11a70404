package drain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// The policy's defaults (its validation is Settings.Validate's: settings_test.go).
func TestPolicyDefaults(t *testing.T) {
	tests := map[string]struct {
		in        Policy
		wantOn    OnBlocked
		wantAfter time.Duration
	}{
		"the zero value waits, with the default blocked-after": {in: Policy{}, wantOn: OnBlockedWait, wantAfter: DefaultBlockedAfter},
		"skip keeps its blocked-after":                         {in: Policy{OnBlocked: OnBlockedSkip, BlockedAfter: 10 * time.Second}, wantOn: OnBlockedSkip, wantAfter: 10 * time.Second},
		"fail is accepted":                                     {in: Policy{OnBlocked: OnBlockedFail}, wantOn: OnBlockedFail, wantAfter: DefaultBlockedAfter},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := tc.in
			err := Settings{Policy: p}.Validate()
			p.fillPolicy()
			if err != nil || p.OnBlocked != tc.wantOn || p.BlockedAfter != tc.wantAfter {
				t.Errorf("Validate, fillPolicy = %v, policy %+v; want %s after %s", err, p, tc.wantOn, tc.wantAfter)
			}
		})
	}
}

func TestNodeBlockedDecision(t *testing.T) {
	now := time.Unix(1000, 0)
	parked := pendingPod{parked: true}
	tests := map[string]struct {
		movedAt time.Time
		pods    []pendingPod
		want    bool
	}{
		"every pod parked past blocked-after":               {now.Add(-11 * time.Second), []pendingPod{parked, parked}, true},
		"exactly blocked-after counts":                      {now.Add(-10 * time.Second), []pendingPod{parked}, true},
		"not for long enough":                               {now.Add(-9 * time.Second), []pendingPod{parked}, false},
		"a pod still terminating is progress":               {now.Add(-time.Hour), []pendingPod{parked, {terminating: true}}, false},
		"a pod queued or backing off is not blocked":        {now.Add(-time.Hour), []pendingPod{parked, {}}, false},
		"a critical pod held back behind a blocked one":     {now.Add(-time.Hour), []pendingPod{parked, {heldBack: true}}, true},
		"only held-back pods: nothing waits on a budget":    {now.Add(-time.Hour), []pendingPod{{heldBack: true}}, false},
		"a node whose drain has not moved yet is not timed": {time.Time{}, []pendingPod{parked}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := nodeBlocked(now, tc.movedAt, 10*time.Second, tc.pods); got != tc.want {
				t.Errorf("nodeBlocked = %v, want %v", got, tc.want)
			}
		})
	}
}

// --on-blocked=skip: the node whose pod a budget holds is given up after blocked-after (in
// state blocked, with a Warning Event naming the budget), and the run ends with a
// SkippedError naming it. (The fake clientset ignores field selectors, so every node
// would see every pod: the other nodes going on is the e2e test's.)
func TestSkipGivesUpTheBlockedNode(t *testing.T) {
	budget := testPDB(0) // maxUnavailable 1, none allowed now: its replacement is not Ready
	budget.Spec.Selector.MatchLabels = map[string]string{"app": "held"}
	// A status its pods agree with (one Ready pod, counted): current, so it blocks.
	budget.Status.CurrentHealthy, budget.Status.DesiredHealthy, budget.Status.ExpectedPods = 1, 1, 2
	held := podOn("held", "n1", "u1")
	held.Labels = map[string]string{"app": "held"}
	g := newRig(t, Config{RecordEvents: true, Settings: Settings{Policy: Policy{OnBlocked: OnBlockedSkip, BlockedAfter: 10 * time.Second}},
		Origin: noderecord.Run{Command: "kubectl maintenance drain n1 n2", User: "jane"}},
		testNode("n1"), held, budget)
	g.start("n1")
	<-g.run
	ev := g.next(event.EventNodeBlocked, 2*time.Second)
	if ev.Node != "n1" || ev.PDB != "ns/web" || !strings.Contains(ev.Message, "needs 1 healthy pods, has 1, allows 0") {
		t.Errorf("node.blocked = %+v", ev)
	}
	res := g.finishStepping(time.Second)
	var se *SkippedError
	if !errors.As(res.err, &se) || len(se.Nodes) != 1 || se.Nodes[0].Node != "n1" || !se.Blocked() {
		t.Fatalf("Run = %v, want a SkippedError naming n1", res.err)
	}
	if res.sum.NodesDrained != 0 || len(res.sum.Skipped) != 1 || len(res.sum.PendingBlocks) != 0 {
		t.Errorf("summary %+v", res.sum)
	}
	n1, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if !n1.Spec.Unschedulable || n1.Labels[noderecord.LabelState] != noderecord.StateBlocked || n1.Annotations[noderecord.AnnotationDrain] != noderecord.StateBlocked ||
		!strings.Contains(n1.Annotations[noderecord.AnnotationBlocked], "ns/web") || n1.Annotations[noderecord.AnnotationUser] != "jane" {
		t.Errorf("n1 after skip: unschedulable %v labels %v annotations %v", n1.Spec.Unschedulable, n1.Labels, n1.Annotations)
	}
	// The fake clientset does not honour generateName, so read the requests, not the store.
	found := false
	for _, a := range g.client.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetResource().Resource == "events" {
			e, ok := c.GetObject().(*eventsv1.Event)
			found = found || (ok && e.Reason == "DrainSkipped" && e.Regarding.Name == "n1" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, "ns/web"))
		}
	}
	if !found {
		t.Errorf("no DrainSkipped Warning Event on n1 naming the budget")
	}
}

// --on-blocked=fail with a budget that never allows a disruption: nothing is cordoned.
func TestFailStopsBeforeAnythingIsCordoned(t *testing.T) {
	budget := testPDB(0)
	budget.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	g := newRig(t, Config{Settings: Settings{Policy: Policy{OnBlocked: OnBlockedFail}}}, testNode("n1"), testNode("n2"),
		podOn("p1", "n1", "u1"), podOn("p2", "n2", "u2"), budget)
	g.start("n1", "n2")
	res := g.finish()
	var se *StoppedError
	if !errors.As(res.err, &se) || !se.BeforeCordon || !strings.Contains(se.Error(), "never allows a disruption") {
		t.Fatalf("Run = %v, want a StoppedError before the cordon", res.err)
	}
	for _, a := range g.client.Actions() {
		if a.GetVerb() == "patch" || a.GetSubresource() == "eviction" {
			t.Errorf("changed something: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// --not-after in the past: nothing is cordoned and every node is listed as not started.
func TestNotAfterPassedStartsNothing(t *testing.T) {
	g := newRig(t, Config{}, testNode("n1"), podOn("p1", "n1", "u1"))
	g.eng.cfg.NotAfter = g.clock.Now().Add(-time.Second)
	g.start("n1")
	res := g.finish()
	var ne *NotStartedError
	if !errors.As(res.err, &ne) || len(ne.Nodes) != 1 || ne.Nodes[0] != "n1" || len(res.sum.NotStarted) != 1 {
		t.Fatalf("Run = %v (summary %+v), want n1 not started", res.err, res.sum)
	}
	for _, a := range g.client.Actions() {
		if a.GetVerb() == "patch" {
			t.Errorf("patched a node")
		}
	}
}

// --not-after passing while the first node drains (one at a time): the second node is
// not started, and the cordon this run made on it is undone.
func TestNotAfterStopsTheNextNodeAndUndoesItsCordon(t *testing.T) {
	budget := testPDB(0)
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}}, testNode("n1"), testNode("n2"), podOn("p1", "n1", "u1"), budget)
	g.eng.cfg.NotAfter = g.clock.Now().Add(time.Minute)
	g.start("n1", "n2")
	r := <-g.run
	g.next(event.EventEvictionBlocked, 0) // n1 started and waits on its budget
	ev := g.next(event.EventNodeNotStarted, 10*time.Second)
	if ev.Node != "n2" || ev.Reason != "NotAfter" {
		t.Errorf("not started event %+v", ev)
	}
	// The budget allows one now: n1 finishes.
	ok := budget.DeepCopy()
	ok.ResourceVersion = "2"
	ok.Status.DisruptionsAllowed = 1
	updatePDB(t, g, ok)
	_ = r
	res := g.finish()
	var ne *NotStartedError
	if !errors.As(res.err, &ne) || len(ne.Nodes) != 1 || ne.Nodes[0] != "n2" || res.sum.NodesDrained != 1 {
		t.Fatalf("Run = %v, summary %+v; want n1 drained, n2 not started", res.err, res.sum)
	}
	n2, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n2", metav1.GetOptions{})
	if n2.Spec.Unschedulable || noderecord.Touched(n2) {
		t.Errorf("n2 not restored: unschedulable %v labels %v annotations %v", n2.Spec.Unschedulable, n2.Labels, n2.Annotations)
	}
}

// A run paused at the instant --not-after passes (a controller's onWindowClose Stop fires
// with the engine's own deadline): the node not started yet is not started and its cordon
// undone, whichever of the two the run saw first; the node in progress stays as a pause
// leaves it (cordoned, held).
func TestPausedAtNotAfterLetsTheUnstartedNodesGo(t *testing.T) {
	budget := testPDB(0)
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1}}, testNode("n1"), testNode("n2"), podOn("p1", "n1", "u1"), budget)
	g.eng.cfg.NotAfter = g.clock.Now().Add(time.Minute)
	// The pause must win: the engine's timers never fire here, only its clock moves.
	g.eng.cfg.Clock = silentTimers{g.clock}
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	go func() {
		sum, err := g.eng.Run(ctx, []string{"n1", "n2"})
		close(g.events)
		g.done <- result{sum, err}
	}()
	<-g.run
	g.next(event.EventEvictionBlocked, 0) // n1 started and waits on its budget; n2 waits for a slot
	g.clock.Step(time.Minute)             // --not-after passes (its timer has not fired yet) ...
	cancel(ErrPaused)                     // ... and the run is paused at that instant
	res := g.finish()
	if len(res.sum.NotStarted) != 1 || res.sum.NotStarted[0] != "n2" {
		t.Fatalf("Run = %v, summary %+v; want n2 not started", res.err, res.sum)
	}
	n2, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n2", metav1.GetOptions{})
	if n2.Spec.Unschedulable || noderecord.Touched(n2) {
		t.Errorf("n2 not restored: unschedulable %v labels %v annotations %v", n2.Spec.Unschedulable, n2.Labels, n2.Annotations)
	}
	n1, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if !n1.Spec.Unschedulable || !noderecord.Touched(n1) {
		t.Errorf("n1, paused in progress: unschedulable %v labels %v; want cordoned with its record", n1.Spec.Unschedulable, n1.Labels)
	}
}

// --on-blocked=fail, a budget that comes to never allow a disruption during the run: the
// node waiting on it fails, the next node does not start, and the run ends blocked.
func TestFailMetDuringTheRunStopsNewNodes(t *testing.T) {
	budget := testPDB(0)
	budget.ResourceVersion = "1"
	g := newRig(t, Config{Settings: Settings{MaxParallelNodes: 1, Policy: Policy{OnBlocked: OnBlockedFail}}}, testNode("n1"), testNode("n2"), testNode("spare"), podOn("p1", "n1", "u1"), budget)
	g.start("n1", "n2")
	<-g.run
	g.next(event.EventEvictionBlocked, 0)
	never := budget.DeepCopy()
	never.ResourceVersion, never.Generation, never.Status.ObservedGeneration = "2", 2, 2
	never.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
	updatePDB(t, g, never) // the run may end at once: no quiesce (its queue shuts down)
	if ev := g.next(event.EventNodeFailed, 0); ev.Node != "n1" || !strings.Contains(ev.Message, "--on-blocked=fail") {
		t.Errorf("node.failed = %+v", ev)
	}
	if ev := g.next(event.EventNodeNotStarted, 0); ev.Node != "n2" || ev.Reason != "OnBlockedFail" {
		t.Errorf("node.not_started = %+v", ev)
	}
	res := g.finish()
	var se *StoppedError
	if !errors.As(res.err, &se) || se.BeforeCordon || len(res.sum.NotStarted) != 1 {
		t.Fatalf("Run = %v (summary %+v), want a StoppedError during the run with n2 not started", res.err, res.sum)
	}
	n2, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n2", metav1.GetOptions{})
	if n2.Spec.Unschedulable {
		t.Error("n2, not started, is still cordoned")
	}
	// n1 stays cordoned, in state blocked with why (not "draining": nothing drains it).
	n1, _ := g.client.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	if !n1.Spec.Unschedulable || n1.Labels[noderecord.LabelState] != noderecord.StateBlocked || !strings.Contains(n1.Annotations[noderecord.AnnotationBlocked], "--on-blocked=fail") {
		t.Errorf("n1: unschedulable %v, state %q, blocked %q; want cordoned, %q, saying --on-blocked=fail",
			n1.Spec.Unschedulable, n1.Labels[noderecord.LabelState], n1.Annotations[noderecord.AnnotationBlocked], noderecord.StateBlocked)
	}
}

// silentTimers is a fake clock whose timers never fire: a timer's instant has come (Now
// says so) but its channel has not been read yet.
type silentTimers struct{ *testingclock.FakeClock }

// NewTimer returns a timer that never fires.
func (c silentTimers) NewTimer(time.Duration) clock.Timer { return silentTimer{} }

type silentTimer struct{}

func (silentTimer) C() <-chan time.Time      { return nil }
func (silentTimer) Stop() bool               { return true }
func (silentTimer) Reset(time.Duration) bool { return true }
