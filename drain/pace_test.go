package drain

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// lagStep is one thing the pacer sees, at an offset from the start (on a fake clock).
type lagStep struct {
	at     time.Duration
	accept []string // pods whose eviction is accepted (listed by the budget at once)
	gone   []string // pods gone
	clear  []string // pods the budget's status no longer lists
	tick   bool     // the periodic look
}

// burst accepts n pods named prefix-i at offset at.
func burst(at time.Duration, prefix string, n int) lagStep {
	s := lagStep{at: at}
	for i := range n {
		s.accept = append(s.accept, fmt.Sprintf("%s-%d", prefix, i))
	}
	return s
}

func names(prefix string, n int) []string { return burst(0, prefix, n).accept }

func TestPacerFollowsTheLagOfTheDisruptionController(t *testing.T) {
	tests := []struct {
		name    string
		history []lagStep
		// want: the mode at the end, and whether an allowed eviction of a StatefulSet pod
		// and of a Deployment pod waits (after the burst of wantBurst asks at one instant).
		wantMode          paceMode
		wantNamesDelayed  bool
		wantOthersDelayed bool
		wantCuts          int
	}{{
		name: "entries cleared before their pods are gone: no lag, nothing ever delayed",
		history: []lagStep{burst(0, "web", 30),
			{at: 200 * time.Millisecond, clear: names("web", 30)},
			{at: 2 * time.Second, gone: names("web", 30), tick: true},
			{at: 20 * time.Second, tick: true}},
		wantMode: paceOpen,
	}, {
		name: "entries outliving their pods by less than the margin are no signal",
		history: []lagStep{burst(0, "web", 30),
			{at: 2 * time.Second, gone: names("web", 30)},
			{at: 2500 * time.Millisecond, tick: true, clear: names("web", 30)}},
		wantMode: paceOpen,
	}, {
		name: "an entry that outlives its pod beyond the margin paces StatefulSets first",
		history: []lagStep{burst(0, "web", 40),
			{at: 2 * time.Second, gone: names("web", 40)},
			{at: 3500 * time.Millisecond, tick: true}},
		wantMode: paceNames, wantNamesDelayed: true, wantCuts: 1,
	}, {
		name: "signals from evictions sent before the cut cut once",
		history: []lagStep{burst(0, "web", 40),
			{at: 2 * time.Second, gone: names("web", 40)},
			{at: 3500 * time.Millisecond, tick: true},
			{at: 4500 * time.Millisecond, tick: true},
			{at: 5 * time.Second, clear: names("web", 40)}},
		wantMode: paceNames, wantNamesDelayed: true, wantCuts: 1,
	}, {
		name: "a signal from an eviction sent after the cut paces every eviction",
		history: []lagStep{burst(0, "web", 40),
			{at: 2 * time.Second, gone: names("web", 40)},
			{at: 3500 * time.Millisecond, tick: true},
			burst(4*time.Second, "db", 2),
			{at: 6 * time.Second, gone: names("db", 2)},
			{at: 7500 * time.Millisecond, tick: true}},
		wantMode: paceAll, wantNamesDelayed: true, wantOthersDelayed: true, wantCuts: 2,
	}, {
		name: "recovers when the lag falls: evictions cleared in time raise the rate back",
		history: append([]lagStep{burst(0, "web", 40),
			{at: 2 * time.Second, gone: names("web", 40)},
			{at: 3500 * time.Millisecond, tick: true},
			{at: 4 * time.Second, clear: names("web", 40)}},
			func() []lagStep { // one eviction a second, each cleared 100 ms later, for 30 s
				var out []lagStep
				for i := range 30 {
					at := 5*time.Second + time.Duration(i)*time.Second
					pod := fmt.Sprintf("ok-%d", i)
					out = append(out, lagStep{at: at, accept: []string{pod}}, lagStep{at: at + 100*time.Millisecond, clear: []string{pod}})
				}
				return out
			}()...),
		wantMode: paceOpen, wantCuts: 1,
	}, {
		name: "stops pacing once it delayed nothing for the window and nothing lags",
		history: []lagStep{burst(0, "web", 40),
			{at: 2 * time.Second, gone: names("web", 40)},
			{at: 3500 * time.Millisecond, tick: true},
			{at: 4 * time.Second, clear: names("web", 40)},
			{at: 15 * time.Second, tick: true}},
		wantMode: paceOpen, wantCuts: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
			start := clk.Now()
			p := newPacer(time.Second)
			status := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{}}}
			cuts := 0
			count := func(cs []paceChange) {
				for _, c := range cs {
					if !c.lasts && c.to != paceOpen {
						cuts++
					}
				}
			}
			for _, s := range tc.history {
				clk.SetTime(start.Add(s.at))
				now := clk.Now()
				for _, pod := range s.accept {
					// The API server lists the pod in the same write that allows the eviction.
					status.Status.DisruptedPods[pod] = metav1.NewTime(now)
					if d := p.delay("ns/"+pod, true, now); d > 0 && cuts == 0 {
						t.Fatalf("an allowed eviction of %s waited %s with no lag measured", pod, d)
					}
					p.acceptedEviction("ns/"+pod, pod, "ns/web", true, true, now)
				}
				for _, pod := range s.gone {
					p.gone("ns/"+pod, now)
				}
				for _, pod := range s.clear {
					delete(status.Status.DisruptedPods, pod)
				}
				if len(s.clear) > 0 {
					count(p.budgetSeen(status, now))
				}
				if s.tick {
					count(p.check(now))
				}
			}
			if p.mode != tc.wantMode {
				t.Errorf("mode %s, want %s", p.mode, tc.wantMode)
			}
			if cuts != tc.wantCuts {
				t.Errorf("%d cuts, want %d", cuts, tc.wantCuts)
			}
			now := clk.Now()
			delayed := func(keepsName bool) bool {
				waited := false
				for i := range 5 { // a burst at one instant: only a pace holds the later ones back
					waited = waited || p.delay(fmt.Sprintf("ns/burst-%v-%d", keepsName, i), keepsName, now) > 0
				}
				return waited
			}
			if got := delayed(false); got != tc.wantOthersDelayed {
				t.Errorf("an allowed eviction of a Deployment pod delayed: %v, want %v", got, tc.wantOthersDelayed)
			}
			if got := delayed(true); got != tc.wantNamesDelayed {
				t.Errorf("an allowed eviction of a StatefulSet pod delayed: %v, want %v", got, tc.wantNamesDelayed)
			}
			if tc.wantMode != paceOpen && p.rate < paceMinRate {
				t.Errorf("rate %.2f below the floor %.1f", p.rate, paceMinRate)
			}
		})
	}
}

// statefulPod is a StatefulSet's pod, under the "web" budget.
func statefulPod(name, node string) *corev1.Pod {
	p := testPod(name, node)
	p.UID = types.UID("uid-" + name)
	p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "StatefulSet", "web"
	return p
}

// TestPacingNeverDelaysAnAllowedEvictionWithoutLag drains StatefulSet pods whose budget
// allows them all: the pacer never speaks with no lag measured (the hold guard sends them
// one after another, each holdGate after the last when no status clears their entries).
func TestPacingNeverDelaysAnAllowedEvictionWithoutLag(t *testing.T) {
	pdb := testPDB(4)
	pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.ExpectedPods = 6, 2, 6
	objs := []runtime.Object{testNode("n1"), pdb}
	for i := range 4 {
		objs = append(objs, statefulPod(fmt.Sprintf("web-%d", i), "n1"))
	}
	g := newRig(t, Config{Workers: 4}, objs...)
	g.start("n1")
	var paced []event.Event
	// The fake status never lists the evictions, so the hold guard lets each StatefulSet
	// pod go holdGate after the one before (holdguard.go): the clock is stepped.
	var res result
	for done := false; !done; {
		select {
		case ev, ok := <-g.events:
			if !ok {
				res, done = <-g.done, true
				break
			}
			if ev.Type == event.EventPacing {
				paced = append(paced, ev)
			}
		case <-time.After(10 * time.Millisecond):
			g.clock.Step(100 * time.Millisecond)
		}
	}
	if res.err != nil || res.sum.NodesDrained != 1 || res.sum.PodsEvicted != 4 {
		t.Fatalf("drained %d nodes, evicted %d pods, err %v; want 1, 4, nil", res.sum.NodesDrained, res.sum.PodsEvicted, res.err)
	}
	if len(paced) > 0 {
		t.Errorf("the pacer spoke with no lag measured: %+v", paced)
	}
}

// TestPacingSlowsWhenAnEntryOutlivesItsPod: the fake API server lists each evicted pod in
// the budget's disruptedPods and no controller clears it; once the pods have been gone for
// more than the margin (the third pod waiting on the budget meanwhile), the run paces
// StatefulSet evictions and says so. A status that clears the entries lets the last go.
func TestPacingSlowsWhenAnEntryOutlivesItsPod(t *testing.T) {
	pdb := testPDB(2)
	pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.ExpectedPods = 6, 4, 6
	objs := []runtime.Object{testNode("n1"), pdb}
	for i := range 3 {
		objs = append(objs, statefulPod(fmt.Sprintf("web-%d", i), "n1"))
	}
	g := newRig(t, Config{}, objs...)
	g.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		// The tracker, not the client: the fake holds its lock while a reactor runs.
		pdbs := policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
		obj, err := g.client.Tracker().Get(pdbs, "ns", "web")
		if err != nil {
			return true, nil, err
		}
		cur := obj.(*policyv1.PodDisruptionBudget).DeepCopy()
		if cur.Status.DisruptionsAllowed <= 0 {
			// As the API server does: the run may ask (a status it judges stale), the
			// budget refuses.
			return true, nil, refusal(0, "web")
		}
		if cur.Status.DisruptedPods == nil {
			cur.Status.DisruptedPods = map[string]metav1.Time{}
		}
		cur.Status.DisruptedPods[ev.Name] = metav1.NewTime(g.clock.Now())
		cur.Status.DisruptionsAllowed--
		if err := g.client.Tracker().Update(pdbs, cur, "ns"); err != nil {
			return true, nil, err
		}
		return true, nil, g.client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), ev.Namespace, ev.Name)
	})
	g.start("n1")
	ev := g.next(event.EventPacing, 500*time.Millisecond)
	if ev.Reason != "PacingStatefulSets" || ev.PDB != "ns/web" || ev.Rate < paceMinRate {
		t.Errorf("pacing event %+v, want reason PacingStatefulSets on ns/web at %.0f/s or more", ev, paceMinRate)
	}
	// The controller catches up, and keeps up from now on: each step it clears the
	// entries and allows one more (the hold guard sends the third pod only once the
	// second's entry is cleared, so it may still be in flight now).
	var res result
	deadline := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case _, ok := <-g.events:
			if !ok {
				res, done = <-g.done, true
			}
			continue
		case <-deadline:
			t.Fatal("Run did not return")
		case <-time.After(10 * time.Millisecond):
		}
		cur, err := g.client.PolicyV1().PodDisruptionBudgets("ns").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cur.Status.DisruptedPods) > 0 || cur.Status.DisruptionsAllowed == 0 {
			cur.Status.DisruptedPods, cur.Status.DisruptionsAllowed = nil, 1
			updatePDB(t, g, cur)
		}
		g.clock.Step(500 * time.Millisecond)
	}
	if res.err != nil || res.sum.PodsEvicted != 3 {
		t.Fatalf("evicted %d pods, err %v; want 3, nil", res.sum.PodsEvicted, res.err)
	}
}

// While paced, an eviction of a pod that keeps its name waits while the controller is
// behind right now (an entry outliving its pod by more than the margin, the pod gone
// within paceWindow); other evictions only wait for their turns; unpaced, nothing waits.
func TestStatefulSetsWaitWhileTheControllerIsBehind(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	type entry struct {
		keepsName bool
		goneAgo   time.Duration // 0: not gone
		listed    bool
	}
	for _, tc := range []struct {
		name       string
		mode       paceMode
		entries    []entry
		wantNames  time.Duration
		wantOthers time.Duration
	}{
		{"not paced, no entry outlives its pod: nothing waits", paceOpen, []entry{{false, 500 * time.Millisecond, true}}, 0, 0},
		{"not paced, a Deployment's entry outlives its pod by 3 s: StatefulSets wait all the same", paceOpen, []entry{{false, 3 * time.Second, true}}, paceTick, 0},
		{"paced, no entry outlives its pod", paceAll, []entry{{false, 0, true}, {true, 500 * time.Millisecond, true}}, 0, 0},
		{"paced, a Deployment's entry outlives its pod by 3 s: StatefulSets wait", paceAll, []entry{{false, 3 * time.Second, true}}, paceTick, 0},
		{"paced, a StatefulSet's entry just met its replacement: StatefulSets wait", paceNames, []entry{{true, 2 * time.Second, true}}, paceTick, 0},
		{"paced, the only entry outliving its pod is a hold of 30 s ago: no longer a sign", paceAll, []entry{{true, 30 * time.Second, true}}, 0, 0},
		{"paced, an entry not seen listed yet is no sign", paceAll, []entry{{false, 3 * time.Second, false}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPacer(time.Second)
			p.mode, p.rate = tc.mode, 100
			p.turns.slower(p.rate, now)
			for i, e := range tc.entries {
				pod := fmt.Sprintf("ns/e%d", i)
				p.acceptedEviction(pod, fmt.Sprintf("e%d", i), "ns/web", e.keepsName, e.listed, now.Add(-time.Minute))
				if e.goneAgo > 0 {
					p.gone(pod, now.Add(-e.goneAgo))
				}
			}
			if got := p.delay("ns/db-0", true, now); got != tc.wantNames {
				t.Errorf("a StatefulSet's pod waits %s, want %s", got, tc.wantNames)
			}
			if got := p.delay("ns/web-abc", false, now.Add(time.Second)); got != tc.wantOthers { // a second on: not the 10 ms turn after the StatefulSet's
				t.Errorf("a Deployment's pod waits %s, want %s", got, tc.wantOthers)
			}
		})
	}
}

// Pacing does not stop while evictions of pods that keep their names were held back in the
// last two ticks: let go at once when the rate was back, they met holds that set F1's
// wall (2026-11-27 02:20). Held back no longer, pacing stops at the next cleared entry.
func TestPacingDoesNotStopOnStatefulSetsHeldBack(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	p := newPacer(time.Second)
	p.mode, p.rate, p.startRate, p.since, p.cutAt, p.lastsSaid = paceAll, 5, 5.1, now.Add(-time.Minute), now.Add(-time.Minute), true
	p.turns.slower(p.rate, now.Add(-time.Minute))
	status := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{}}}
	// The controller is behind: a Deployment's entry outlives its pod by 2 s.
	p.acceptedEviction("ns/web-a", "web-a", "ns/web", false, true, now.Add(-5*time.Second))
	p.gone("ns/web-a", now.Add(-2*time.Second))
	if d := p.delay("ns/db-0", true, now); d != paceTick {
		t.Fatalf("a StatefulSet's pod waits %s while the controller is behind, want %s", d, paceTick)
	}
	delete(p.followed, "ns/web-a") // (its hold is not what this test is about)
	clear := func(pod string, at time.Time) []paceChange {
		p.acceptedEviction("ns/"+pod, pod, "ns/web", false, true, at.Add(-500*time.Millisecond))
		return p.budgetSeen(status, at) // cleared in time: the rate rises past startRate
	}
	if cs := clear("web-b", now.Add(500*time.Millisecond)); len(cs) != 0 || p.mode != paceAll {
		t.Fatalf("pacing stopped with a StatefulSet's eviction held back 0.5 s ago: %+v", cs)
	}
	if cs := clear("web-c", now.Add(3*time.Second)); len(cs) != 1 || cs[0].to != paceOpen {
		t.Fatalf("nothing held back for 3 s and the rate back: %+v, want pacing stopped", cs)
	}
}

// The hold on pods that keep their names ends as soon as the budget's status no longer
// lists the entry that outlived its pod: the controller has caught up.
func TestStatefulSetsGoOnceTheEntryIsCleared(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	p := newPacer(time.Second)
	p.mode, p.rate, p.cutAt, p.lastsSaid = paceAll, 100, now, true
	p.turns.slower(p.rate, now)
	p.acceptedEviction("ns/web-a", "web-a", "ns/web", false, true, now.Add(-5*time.Second))
	p.gone("ns/web-a", now.Add(-3*time.Second))
	if d := p.delay("ns/db-0", true, now); d != paceTick {
		t.Fatalf("a StatefulSet's pod waits %s while an entry outlives its pod by 3 s, want %s", d, paceTick)
	}
	status := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	p.budgetSeen(status, now.Add(100*time.Millisecond)) // cleared (late: a cut, and its sample)
	if d := p.delay("ns/db-0", true, now.Add(200*time.Millisecond)); d == paceTick {
		t.Fatalf("a StatefulSet's pod still held back after the entry was cleared")
	}
}
