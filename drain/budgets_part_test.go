package drain

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// fakeBudgetsHost is the node side as the budgets part sees it (budgetsHost), with no
// engine and no run: it records what the part asks of it.
type fakeBudgetsHost struct {
	pods   map[string]*podState
	nodes  map[string]*nodeState
	pol    runPolicy
	queued []string      // keys given to addAfter or backoffLocked, in order
	moved  []string      // nodes whose clocks were restarted
	gaveUp []string      // nodes given up
	listed []*corev1.Pod // what budgetPods answers
}

func (h *fakeBudgetsHost) context() context.Context                              { return context.Background() }
func (h *fakeBudgetsHost) podsLocked() map[string]*podState                      { return h.pods }
func (h *fakeBudgetsHost) nodesLocked() map[string]*nodeState                    { return h.nodes }
func (h *fakeBudgetsHost) policyLocked() *runPolicy                              { return &h.pol }
func (h *fakeBudgetsHost) addAfter(key string, _ time.Duration)                  { h.queued = append(h.queued, key) }
func (h *fakeBudgetsHost) backoffLocked(key string)                              { h.queued = append(h.queued, key) }
func (h *fakeBudgetsHost) giveUpLocked(ns *nodeState)                            { h.gaveUp = append(h.gaveUp, ns.name) }
func (h *fakeBudgetsHost) stopOnNeverLocked(*podState, string, string)           {}
func (h *fakeBudgetsHost) recordEvent(_, _, _, _ string)                         {}
func (h *fakeBudgetsHost) podIndexer() cache.Indexer                             { return nil }
func (h *fakeBudgetsHost) deadline() (<-chan time.Time, func())                  { return nil, func() {} }
func (h *fakeBudgetsHost) waitCompletedWhy(*corev1.Pod, string) (string, string) { return "", "" }
func (h *fakeBudgetsHost) doNotDisruptWhy(*corev1.Pod) (string, string)          { return "", "" }

func (h *fakeBudgetsHost) currentLocked(st *podState) (*corev1.Pod, bool) { return st.pod, true }

func (h *fakeBudgetsHost) movedLocked(node string) {
	h.moved = append(h.moved, node)
}

func (h *fakeBudgetsHost) budgetPods(context.Context, string, labels.Selector) ([]*corev1.Pod, error) {
	return h.listed, nil
}

// budgetsRig is a budgets part alone: a core on a fake clock, a fake host, an informer
// store of budgets, and the events it says.
type budgetsRig struct {
	clock  *testingclock.FakeClock
	host   *fakeBudgetsHost
	bs     *budgets
	events []event.Event
}

func newBudgetsRig(t *testing.T, cfg Config, pdbs ...*policyv1.PodDisruptionBudget) *budgetsRig {
	t.Helper()
	g := &budgetsRig{clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0)),
		host: &fakeBudgetsHost{pods: map[string]*podState{}, nodes: map[string]*nodeState{}}}
	cfg.Clock = g.clock
	c := newCore(&cfg, func(ev event.Event) { g.events = append(g.events, ev) })
	g.bs = newBudgets(&c, g.host, nil)
	g.bs.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pdbs {
		if err := g.bs.book.pdbs.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// park puts a pod of node n on the budgets keys, as a refused eviction does.
func (g *budgetsRig) park(key, node string, wave int, keys ...string) *podState {
	ns, _ := strings.CutPrefix(key, "ns/")
	st := &podState{key: key, node: node, wave: wave, phase: waiting, pod: podOn(ns, node, types.UID("u-"+ns))}
	g.host.pods[key] = st
	for _, k := range keys {
		if g.bs.book.parked[k] == nil {
			g.bs.book.parked[k] = map[string]*podState{}
		}
		g.bs.book.parked[k][key] = st
		st.parkedOn = append(st.parkedOn, k)
	}
	return st
}

// A budget's change wakes the pods waiting on it that it has room for, through the host's
// queue, and no pod waiting on another budget.
func TestBudgetsWakeTheRightWaiters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed int32
		wake    string // the budget that changed
		want    []string
	}{
		{name: "room for one: the first by wave", allowed: 1, wake: "ns/web", want: []string{"ns/b"}},
		{name: "room for two", allowed: 2, wake: "ns/web", want: []string{"ns/b", "ns/a"}},
		{name: "no room: no one", allowed: 0, wake: "ns/web", want: nil},
		{name: "another budget's pods stay", allowed: 2, wake: "ns/db", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newBudgetsRig(t, Config{}, namedPDB("web", tc.allowed), namedPDB("db", 0))
			g.park("ns/a", "n1", 1, "ns/web")
			g.park("ns/b", "n1", 0, "ns/web")
			g.park("ns/c", "n2", 0, "ns/db")
			g.bs.lock()
			g.bs.book.wakeBudgetLocked(tc.wake)
			g.bs.unlock()
			if !slices.Equal(g.host.queued, tc.want) {
				t.Errorf("queued %q, want %q", g.host.queued, tc.want)
			}
			for _, key := range tc.want {
				if st := g.host.pods[key]; st.parkedOn != nil || st.wokenAt != g.clock.Now() {
					t.Errorf("%s: parkedOn %q, wokenAt %v; want unparked, woken now", key, st.parkedOn, st.wokenAt)
				}
			}
		})
	}
}

// The blocked clock gives a node up after --blocked-after without progress (once its
// budget's pods were listed lately), not before; an outage restarts it instead.
func TestBudgetsBlockedClock(t *testing.T) {
	for _, tc := range []struct {
		name      string
		waited    time.Duration
		apiDown   bool
		listed    bool // the budget's pods were listed since it last changed
		wantGone  bool
		wantReset bool // the clock was restarted (movedAt now)
	}{
		{name: "blocked for --blocked-after: given up", waited: 10 * time.Second, listed: true, wantGone: true},
		{name: "not yet", waited: 9 * time.Second, listed: true},
		{name: "not listed lately: a List first", waited: 10 * time.Second},
		{name: "the API server is away: the clock restarts", waited: time.Minute, listed: true, apiDown: true, wantReset: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Listed a second ago: lately enough for the clock (two of its periods), too long
			// ago for the pods to be held against the status (two DiagnoseIntervals).
			cfg := Config{Settings: Settings{Policy: Policy{OnBlocked: OnBlockedSkip, BlockedAfter: 10 * time.Second}}}
			cfg.DiagnoseInterval = 100 * time.Millisecond
			g := newBudgetsRig(t, cfg, namedPDB("web", 0))
			st := g.park("ns/a", "n1", 0, "ns/web")
			now := g.clock.Now()
			ns := &nodeState{name: "n1", started: true, remaining: 1, byUID: map[types.UID]*podState{"u-a": st}}
			ns.pol.movedAt = now.Add(-tc.waited)
			g.host.nodes["n1"] = ns
			g.host.pol.apiDown = tc.apiDown
			if tc.listed {
				g.bs.diag.selected = map[string]*selection{"ns/web": {pods: []*corev1.Pod{}, at: now.Add(-time.Second)}}
			}
			g.bs.lock()
			g.bs.blocked.checkLocked()
			g.bs.unlock()
			if gone := slices.Contains(g.host.gaveUp, "n1"); gone != tc.wantGone {
				t.Errorf("given up %v, want %v", gone, tc.wantGone)
			}
			if reset := ns.pol.movedAt.Equal(now); reset != tc.wantReset {
				t.Errorf("clock restarted %v, want %v", reset, tc.wantReset)
			}
			if !tc.listed && !g.bs.diag.selected["ns/web"].due {
				t.Error("the budget's pods are not due for a List")
			}
		})
	}
}

// The API server answering again restarts the clocks of the nodes in progress only.
func TestBudgetsRestartClocks(t *testing.T) {
	g := newBudgetsRig(t, Config{})
	past := g.clock.Now().Add(-time.Minute)
	for name, ns := range map[string]*nodeState{
		"going":    {started: true},
		"done":     {started: true, finished: true},
		"waiting":  {},
		"no clock": {started: true},
	} {
		ns.name = name
		if name != "no clock" {
			ns.pol.movedAt = past
		}
		g.host.nodes[name] = ns
	}
	g.bs.lock()
	g.bs.blocked.restartClocksLocked()
	g.bs.unlock()
	if !slices.Equal(g.host.moved, []string{"going"}) {
		t.Errorf("restarted %q, want [going]", g.host.moved)
	}
}

// A budget whose status is not current says why, naming the budget; a budget found
// current again restarts the clocks of the nodes waiting on it.
func TestBudgetsNotCurrent(t *testing.T) {
	behind := namedPDB("web", 1)
	behind.Generation = 2
	g := newBudgetsRig(t, Config{}, behind, namedPDB("db", 1))
	g.park("ns/a", "n1", 0, "ns/web")
	g.park("ns/b", "n2", 0, "ns/db")
	g.bs.lock()
	defer g.bs.unlock()
	if why := g.bs.watch.notCurrentWhyLocked("ns/web"); !strings.HasPrefix(why, "pdb ns/web: status.observedGeneration 1 is behind generation 2") {
		t.Errorf("notCurrentWhy(ns/web) = %q", why)
	}
	if why := g.bs.watch.notCurrentWhyLocked("ns/db"); why != "" {
		t.Errorf("notCurrentWhy(ns/db) = %q, want current", why)
	}
	if !g.bs.blocked.lookCurrentLocked("ns/web") || !g.host.pol.notCurrent["ns/web"] {
		t.Fatal("ns/web not marked not current")
	}
	g.host.pol.notCurrent["ns/db"] = true // was not current, is now
	if g.bs.blocked.lookCurrentLocked("ns/db") || g.host.pol.notCurrent["ns/db"] {
		t.Error("ns/db still not current")
	}
	if !slices.Equal(g.host.moved, []string{"n2"}) {
		t.Errorf("restarted %q, want [n2]", g.host.moved)
	}
}

// The run's face to the part on a budget's change (pdbChanged): a stale status that
// changed is current again and its waiters are woken; one that did not change keeps
// them parked; pods waiting on another budget are not woken.
func TestBudgetsTakeInAChange(t *testing.T) {
	for _, tc := range []struct {
		name      string
		newRV     bool // the change carries a newer resourceVersion than the stale mark
		want      []string
		wantStale bool
	}{
		{name: "a newer status: current again, its waiter woken", newRV: true, want: []string{"ns/a"}},
		{name: "the same status: still stale, no one woken", wantStale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := namedPDB("web", 1)
			web.ResourceVersion = "1"
			g := newBudgetsRig(t, Config{}, web, namedPDB("db", 1))
			g.park("ns/a", "n1", 0, "ns/web")
			g.park("ns/c", "n2", 0, "ns/db")
			g.bs.watch.stale["ns/web"] = staleMark{why: "stale", rv: "1"}
			changed := web.DeepCopy()
			if tc.newRV {
				changed.ResourceVersion = "2"
			}
			if err := g.bs.book.pdbs.Update(changed); err != nil {
				t.Fatal(err)
			}
			g.bs.lock()
			g.bs.changedLocked(changed)
			g.bs.statusSeenLocked(changed, false)
			g.bs.takenInLocked(changed)
			g.bs.unlock()
			if !slices.Equal(g.host.queued, tc.want) {
				t.Errorf("queued %q, want %q", g.host.queued, tc.want)
			}
			if _, stale := g.bs.watch.stale["ns/web"]; stale != tc.wantStale {
				t.Errorf("stale %v, want %v", stale, tc.wantStale)
			}
			if !g.bs.watch.movedAt["ns/web"].Equal(g.clock.Now()) {
				t.Errorf("movedAt %v, want now", g.bs.watch.movedAt["ns/web"])
			}
		})
	}
}

// said are the events the part said with one of reasons, in order.
func (g *budgetsRig) said(reasons ...string) []event.Event {
	var out []event.Event
	for _, ev := range g.events {
		for _, r := range reasons {
			if ev.Reason == r {
				out = append(out, ev)
				break
			}
		}
	}
	return out
}
