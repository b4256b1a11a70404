package drain

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// clockRig is a run with one node, n1, whose pod ns/web-a waits on budget ns/web under
// --on-blocked=skip --blocked-after 10s; its blocked clock is driven by calling the
// watcher's tick (checkLocked) directly. Effects queued under the lock (the give-up's
// writes) are dropped: the tests look at the decision.
type clockRig struct {
	t     *testing.T
	clock *testingclock.FakeClock
	r     *run
	ns    *nodeState
	pdbs  cache.Indexer
	extra []*corev1.Pod // listed with the budget's pods besides web-a
}

func newClockRig(t *testing.T, budget *policyv1.PodDisruptionBudget) *clockRig {
	t.Helper()
	clock := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	eng, err := NewEngine(Config{Client: kubefake.New(), Events: make(chan event.Event, 100), Clock: clock,
		Settings: Settings{Policy: Policy{OnBlocked: OnBlockedSkip, BlockedAfter: 10 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	eng.out = newOutbox(eng.cfg.Events)
	t.Cleanup(eng.out.close)
	r := newRun(eng, &preflight{plan: &event.Plan{}})
	r.budgets.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := r.budgets.book.pdbs.Add(budget); err != nil {
		t.Fatal(err)
	}
	pod := podOn("web-a", "n1", "u-a")
	st := &podState{pod: pod, key: "ns/web-a", node: "n1", phase: waiting}
	ns := &nodeState{name: "n1", started: true, remaining: 1, byUID: map[types.UID]*podState{pod.UID: st}, finishedCh: make(chan struct{})}
	ns.pol.movedAt = clock.Now()
	r.nodes["n1"], r.pods[st.key] = ns, st
	r.lock()
	r.budgets.parkLocked(st, []*pdb.Budget{r.budgets.book.budgetLocked("ns/web")}, string(pdb.Exhausted), "pdb ns/web needs 2 healthy pods, has 3, allows 1: 1 taken by this drain's evictions in flight")
	r.drop()
	return &clockRig{t: t, clock: clock, r: r, ns: ns, pdbs: r.budgets.book.pdbs}
}

// drop releases the lock without running the effects queued under it.
func (r *run) drop() {
	r.effects = nil
	r.mu.Unlock()
}

// tick advances the clock by d and runs the watcher's tick; it reports whether the node
// was given up. A List the watcher asked for is taken first, as waitLines takes it: the
// budget's pods are web-a and as many other Ready pods as its status counts healthy.
func (g *clockRig) tick(d time.Duration) bool {
	g.clock.Step(d)
	g.r.lock()
	defer g.r.drop()
	if sel := g.r.budgets.diag.selected["ns/web"]; sel != nil && sel.due {
		b := g.r.budgets.book.budgetLocked("ns/web")
		pods := append([]*corev1.Pod{g.r.pods["ns/web-a"].pod}, g.extra...)
		healthy := int32(0)
		for _, p := range pods {
			if _, disrupted := b.PDB.Status.DisruptedPods[p.Name]; !disrupted {
				healthy++
			}
		}
		for i := healthy; i < b.PDB.Status.CurrentHealthy; i++ {
			pods = append(pods, podOn(fmt.Sprintf("web-x%d", i), "n2", types.UID(fmt.Sprintf("u-x%d", i))))
		}
		sel.pods, sel.at, sel.due = pods, g.clock.Now(), false
	}
	g.r.budgets.blocked.checkLocked()
	return g.ns.pol.skipping
}

// setBudget replaces the budget in the informer's store, as a status change does.
func (g *clockRig) setBudget(p *policyv1.PodDisruptionBudget) {
	if err := g.pdbs.Update(p); err != nil {
		g.t.Fatal(err)
	}
	g.r.lock()
	defer g.r.drop()
	delete(g.r.budgets.book.index, p.Namespace)
	g.r.budgets.blocked.lookCurrentLocked(p.Namespace + "/" + p.Name)
}

// A node is given up only on BlockedAfter of a current status that blocks it. A status
// that still counts as disrupted a pod that is gone, or whose observedGeneration is behind
// its generation, or that the watchdog called stale, is not current from the moment it is
// seen (no StaleAfter): the node's clock stands still however long it lasts.
func TestNotCurrentStatusStopsTheBlockedClock(t *testing.T) {
	listed := func(b *policyv1.PodDisruptionBudget, name string, ago time.Duration, now time.Time) {
		b.Status.DisruptedPods = map[string]metav1.Time{name: metav1.NewTime(now.Add(-ago))}
	}
	tests := map[string]struct {
		budget    func(b *policyv1.PodDisruptionBudget, now time.Time)
		run       func(g *clockRig)
		each      func(g *clockRig) // before each tick
		wantGiven bool
	}{
		"a current status that blocks: given up after blocked-after": {
			wantGiven: true,
		},
		"disruptedPods lists a pod this run saw go a second ago": {
			budget: func(b *policyv1.PodDisruptionBudget, now time.Time) { listed(b, "web-old", 2*time.Second, now) },
			run:    func(g *clockRig) { g.r.budgets.watch.goneAt["ns/web-old"] = g.clock.Now().Add(-time.Second) },
		},
		"disruptedPods lists a pod the budget's pods, listed since, do not hold": {
			budget: func(b *policyv1.PodDisruptionBudget, now time.Time) { listed(b, "web-other", 5*time.Second, now) },
			run: func(g *clockRig) {
				g.r.budgets.diag.selected = map[string]*selection{"ns/web": {pods: []*corev1.Pod{g.r.pods["ns/web-a"].pod}, at: g.clock.Now()}}
			},
		},
		"disruptedPods lists a StatefulSet pod back under its name: current": {
			budget: func(b *policyv1.PodDisruptionBudget, now time.Time) { listed(b, "db-0", 5*time.Second, now) },
			run:    func(g *clockRig) { g.r.budgets.watch.goneAt["ns/db-0"] = g.clock.Now().Add(-4 * time.Second) },
			each: func(g *clockRig) { // listed afresh: the status agrees with its pods
				pods := []*corev1.Pod{g.r.pods["ns/web-a"].pod, podOn("web-b", "n2", "u-b"), podOn("db-0", "n2", "u-db-new")}
				g.r.budgets.diag.selected = map[string]*selection{"ns/web": {pods: pods, at: g.clock.Now()}}
			},
			wantGiven: true,
		},
		"disruptedPods lists a pod still on its node: current": {
			budget: func(b *policyv1.PodDisruptionBudget, now time.Time) { listed(b, "web-a", time.Second, now) },
			run:    func(g *clockRig) { g.r.budgets.watch.goneAt["ns/web-a"] = g.clock.Now() }, // an older pod of that name
			// web-a is tracked and not finished: the run's live view says it is there.
			wantGiven: true,
		},
		"a listed pod still among the budget's pods, on another node: current": {
			budget:    func(b *policyv1.PodDisruptionBudget, now time.Time) { listed(b, "web-elsewhere", time.Second, now) },
			run:       func(g *clockRig) { g.extra = []*corev1.Pod{podOn("web-elsewhere", "n3", "u-e")} },
			wantGiven: true,
		},
		"its pods, listed since its status last changed, disagree with it": {
			// 3 Ready pods, currentHealthy 2: a replacement Ready that it does not count.
			each: func(g *clockRig) {
				pods := []*corev1.Pod{g.r.pods["ns/web-a"].pod, podOn("web-b", "n2", "u-b"), podOn("web-c", "n2", "u-c")}
				g.r.budgets.diag.selected = map[string]*selection{"ns/web": {pods: pods, at: g.clock.Now()}}
			},
		},
		"its pods agree with it: current": {
			each: func(g *clockRig) {
				pods := []*corev1.Pod{g.r.pods["ns/web-a"].pod, podOn("web-b", "n2", "u-b")}
				g.r.budgets.diag.selected = map[string]*selection{"ns/web": {pods: pods, at: g.clock.Now()}}
			},
			wantGiven: true,
		},
		"observedGeneration behind generation": {
			budget: func(b *policyv1.PodDisruptionBudget, _ time.Time) { b.Generation = 2 },
		},
		"called stale by the watchdog": {
			run: func(g *clockRig) {
				g.r.budgets.watch.stale["ns/web"] = staleMark{why: "pdb ns/web: its status is stale"}
			},
		},
		"the API server does not answer": {
			run: func(g *clockRig) { g.r.pol.apiDown = true },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := testPDB(0)
			b.Status.CurrentHealthy = 2
			if tc.budget != nil {
				tc.budget(b, time.Unix(1_000_000, 0))
			}
			g := newClockRig(t, b)
			if tc.run != nil {
				tc.run(g)
			}
			given := false
			for range 30 { // a minute, in the watcher's ticks (blocked-after/5)
				if tc.each != nil {
					tc.each(g)
				}
				if given = g.tick(2 * time.Second); given {
					break
				}
			}
			if given != tc.wantGiven {
				t.Fatalf("given up after a minute = %v, want %v", given, tc.wantGiven)
			}
			if !given && !g.ns.pol.movedAt.Equal(g.clock.Now()) {
				t.Errorf("clock of a node waiting on a status not current: moved at %s, want now (%s)", g.ns.pol.movedAt, g.clock.Now())
			}
		})
	}
}

// When the status is current again, the node's clock starts from zero: it is given up
// BlockedAfter later, not at once for the time it waited before or during the outage.
func TestCurrentAgainRestartsTheBlockedClock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		current func(b *policyv1.PodDisruptionBudget) // the status once current again
		setup   func(g *clockRig, b *policyv1.PodDisruptionBudget)
	}{
		{"the gone pod dropped from disruptedPods",
			func(b *policyv1.PodDisruptionBudget) { b.Status.DisruptedPods = nil },
			func(g *clockRig, b *policyv1.PodDisruptionBudget) {
				b.Status.DisruptedPods = map[string]metav1.Time{"web-old": metav1.NewTime(g.clock.Now())}
				g.r.budgets.watch.goneAt["ns/web-old"] = g.clock.Now()
			}},
		{"observedGeneration caught up",
			func(b *policyv1.PodDisruptionBudget) { b.Status.ObservedGeneration = 2 },
			func(_ *clockRig, b *policyv1.PodDisruptionBudget) { b.Generation = 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testPDB(0)
			g := newClockRig(t, b)
			notCurrent := b.DeepCopy()
			notCurrent.ResourceVersion = "2"
			tc.setup(g, notCurrent)
			g.setBudget(notCurrent)
			for range 20 { // 40 s not current
				if g.tick(2 * time.Second) {
					t.Fatal("given up while the status was not current")
				}
			}
			current := notCurrent.DeepCopy()
			current.ResourceVersion = "3"
			tc.current(current)
			g.clock.Step(time.Second)
			g.setBudget(current)
			if !g.ns.pol.movedAt.Equal(g.clock.Now()) {
				t.Fatalf("current again at %s: clock from %s, want restarted", g.clock.Now(), g.ns.pol.movedAt)
			}
			if g.tick(9 * time.Second) {
				t.Fatal("given up 9 s after the status became current again (blocked-after 10s)")
			}
			// At 10 s it is blocked; its budget's pods were listed ahead of it (asked for
			// at the tick before, blocked by the next period), so it is given up then.
			if !g.tick(time.Second) {
				t.Fatal("not given up 10 s after the status became current again")
			}
		})
	}
}

// A node given up names each budget once, with the numbers it has now: not the numbers
// its pod was parked on (an eviction in flight then, answered since).
func TestGivenUpNodeSaysTheBudgetsCurrentNumbersOnce(t *testing.T) {
	b := testPDB(1)
	g := newClockRig(t, b) // parked on "has 3, allows 1: 1 taken by this drain's evictions in flight"
	now := b.DeepCopy()
	now.ResourceVersion, now.Status.CurrentHealthy, now.Status.DisruptionsAllowed = "2", 2, 0
	g.setBudget(now)
	g.r.lock()
	bn := g.r.blockedNodeLocked(g.ns)
	g.r.drop()
	want := "1 pod(s) blocked for 10s by pdb ns/web (needs 2 healthy pods, has 2, allows 0); pod ns/web-a waits on it"
	if bn.Reason != want {
		t.Errorf("reason\n %q\nwant\n %q", bn.Reason, want)
	}
	if len(bn.Blockers) != 1 || bn.Blockers[0].Message != "pdb ns/web needs 2 healthy pods, has 2, allows 0" {
		t.Errorf("blockers %+v, want the current numbers", bn.Blockers)
	}
}

// The numbers of a budget say what this run's evictions take of it: requests in flight and
// accepted evictions whose pods are still there; a pod already gone that the status still
// counts is the disruption controller's lag, not this drain's eviction in flight.
func TestNumbersTellInFlightFromTheControllersLag(t *testing.T) {
	tests := map[string]struct {
		setup func(g *clockRig, b *policyv1.PodDisruptionBudget)
		want  string
	}{
		"nothing of this run's": {
			want: "pdb ns/web needs 2 healthy pods, has 2, allows 0",
		},
		"a request in flight": {
			setup: func(g *clockRig, _ *policyv1.PodDisruptionBudget) {
				st := &podState{pod: podOn("web-b", "n1", "u-b"), key: "ns/web-b", node: "n1", phase: waiting, attempts: 1}
				g.r.pods[st.key] = st
				g.r.budgets.book.reserveLocked("ns/web", st)
			},
			want: "pdb ns/web needs 2 healthy pods, has 2, allows 0: 1 taken by this drain's evictions in flight",
		},
		"another run's request in flight": {
			setup: func(g *clockRig, _ *policyv1.PodDisruptionBudget) {
				g.r.budgets.book.ledger.hold("ns/web", "ns/db-a") // a run of another Maintenance
			},
			want: "pdb ns/web needs 2 healthy pods, has 2, allows 0: 1 taken by the evictions in flight of other runs of this process",
		},
		"an accepted eviction whose pod is terminating": {
			setup: func(g *clockRig, b *policyv1.PodDisruptionBudget) {
				g.r.pods["ns/web-b"] = &podState{pod: podOn("web-b", "n1", "u-b"), key: "ns/web-b", node: "n1", phase: terminating, attempts: 1}
				b.Status.DisruptedPods = map[string]metav1.Time{"web-b": metav1.NewTime(g.clock.Now())}
			},
			want: "pdb ns/web needs 2 healthy pods, has 2, allows 0: 1 taken by this drain's evictions in flight",
		},
		"an accepted eviction whose pod is gone": {
			setup: func(g *clockRig, b *policyv1.PodDisruptionBudget) {
				g.r.pods["ns/web-b"] = &podState{pod: podOn("web-b", "n1", "u-b"), key: "ns/web-b", node: "n1", phase: finished, attempts: 1}
				g.r.budgets.watch.goneAt["ns/web-b"] = g.clock.Now()
				b.Status.DisruptedPods = map[string]metav1.Time{"web-b": metav1.NewTime(g.clock.Now())}
			},
			want: "pdb ns/web needs 2 healthy pods, has 2, allows 0: 1 counted for pod(s) already gone (ns/web-b: the disruption controller has not caught up)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := testPDB(0)
			b.Status.CurrentHealthy = 2
			g := newClockRig(t, b)
			cur := b.DeepCopy()
			g.r.lock()
			if tc.setup != nil {
				tc.setup(g, cur)
			}
			g.r.drop()
			g.setBudget(cur)
			g.r.lock()
			got := g.r.budgets.book.numbersLocked(g.r.budgets.book.budgetLocked("ns/web"))
			g.r.drop()
			if got != tc.want {
				t.Errorf("numbers\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

// The pods on a node given up count as left, by node, with those still waiting on the
// nodes that did not finish.
func TestPodsLeftOnGivenUpNodesAreCounted(t *testing.T) {
	g := newClockRig(t, testPDB(0))
	g.r.sum.Skipped = []BlockedNode{{Node: "n1", Blockers: []event.Blocker{{Node: "n1", Pod: "ns/a"}, {Node: "n1", Pod: "ns/b"}}}}
	g.r.lock()
	total := g.r.leftLocked([]event.Blocker{{Node: "n2", Pod: "ns/c"}})
	g.r.drop()
	if total != 3 || g.r.sum.LeftOn["n1"] != 2 || g.r.sum.LeftOn["n2"] != 1 {
		t.Errorf("left %d, by node %v; want 3: n1 2, n2 1", total, g.r.sum.LeftOn)
	}
	sum := Summary{PodsPending: 3, LeftOn: map[string]int{"n1": 2, "n2": 1}}.Add(Summary{PodsPending: 1, LeftOn: map[string]int{"n2": 1}})
	if sum.PodsPending != 4 || sum.LeftOn["n2"] != 2 {
		t.Errorf("added: %+v", sum)
	}
}
