package drain

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/internal/kubefake"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// newConcernRun is a run that is never started, over plan and a store of budgets, for
// the tests of one concern's methods: no informer, no worker, no outbox.
func newConcernRun(t *testing.T, cfg Config, plan *event.Plan) (*run, *testingclock.FakeClock) {
	t.Helper()
	clock := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	cfg.Client, cfg.Clock = kubefake.New(), clock
	if cfg.Events == nil {
		cfg.Events = make(chan event.Event, 100)
	}
	eng, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plan == nil {
		plan = &event.Plan{}
	}
	r := newRun(eng, &preflight{plan: plan})
	r.budgets.book.pdbs = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return r, clock
}

// downNodes is an Admitter whose look found the named nodes out of service.
type downNodes map[string]bool

func (d downNodes) Room(context.Context, Admission) (string, error) { return "", nil }
func (d downNodes) Wait(ctx context.Context) error                  { <-ctx.Done(); return ctx.Err() }
func (d downNodes) Unavailable(node string) bool                    { return d[node] }

// A rolling drain starts next the first node out of service, else the first in plan
// order whose pods no budget holds back, else the one with the fewest held.
func TestRollerNext(t *testing.T) {
	open, shut := &pdb.Budget{PDB: namedPDB("open", 1)}, &pdb.Budget{PDB: namedPDB("shut", 0)}
	node := func(name string, cordoned bool, budgets ...*pdb.Budget) event.NodePlan {
		np := event.NodePlan{Name: name, AlreadyCordoned: cordoned}
		for _, b := range budgets {
			np.Steps = append(np.Steps, pdb.Step{Decision: pdb.Decision{Budgets: []*pdb.Budget{b}}})
		}
		return np
	}
	for _, tc := range []struct {
		name   string
		nodes  []event.NodePlan
		down   downNodes
		parked string // a pod of the run waits on this budget
		want   string
	}{
		{name: "the first whose pods nothing holds", nodes: []event.NodePlan{node("n1", false, shut), node("n2", false, open), node("n3", false)}, want: "n2"},
		{name: "one cordoned before the run goes first", nodes: []event.NodePlan{node("n1", false, open), node("n2", true, shut)}, want: "n2"},
		{name: "one the pool finds out of service goes first", nodes: []event.NodePlan{node("n1", false), node("n2", false, shut)}, down: downNodes{"n2": true}, want: "n2"},
		{name: "every node held: the fewest held", nodes: []event.NodePlan{node("n1", false, shut, shut), node("n2", false, shut)}, want: "n2"},
		{name: "a budget this run's pods wait on holds too", nodes: []event.NodePlan{node("n1", false, open), node("n2", false)}, parked: "ns/open", want: "n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newConcernRun(t, Config{Rolling: tc.down}, &event.Plan{Nodes: tc.nodes})
			for _, b := range []*pdb.Budget{open, shut} {
				if err := r.budgets.book.pdbs.Add(b.PDB); err != nil {
					t.Fatal(err)
				}
			}
			if tc.parked != "" {
				r.budgets.book.parked[tc.parked] = map[string]*podState{"ns/x": {key: "ns/x"}}
			}
			pending := make([]int, len(tc.nodes))
			for i := range pending {
				pending[i] = i
			}
			if got := tc.nodes[r.roller.nextLocked(pending)].Name; got != tc.want {
				t.Errorf("next = %s, want %s", got, tc.want)
			}
		})
	}
}

// A node's wait is an outage, not a budget's verdict, while the API server does not
// answer or a budget one of its waiting pods is parked on has a status not current.
func TestBlockedClockOutage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		apiDown    bool
		parkedOn   []string
		phase      podPhase
		notCurrent map[string]bool
		want       bool
	}{
		{name: "the API server does not answer", apiDown: true, want: true},
		{name: "a budget the pod waits on is not current", parkedOn: []string{"ns/web"}, notCurrent: map[string]bool{"ns/web": true}, want: true},
		{name: "another budget is not current", parkedOn: []string{"ns/web"}, notCurrent: map[string]bool{"ns/db": true}},
		{name: "the pod is finished", parkedOn: []string{"ns/web"}, phase: finished, notCurrent: map[string]bool{"ns/web": true}},
		{name: "every budget current", parkedOn: []string{"ns/web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newConcernRun(t, Config{}, nil)
			r.pol.apiDown = tc.apiDown
			ns := &nodeState{name: "n1", byUID: map[types.UID]*podState{"u-a": {key: "ns/web-a", phase: tc.phase, parkedOn: tc.parkedOn}}}
			if got := r.budgets.blocked.outageLocked(ns, tc.notCurrent); got != tc.want {
				t.Errorf("outage = %v, want %v", got, tc.want)
			}
		})
	}
}

// The warning of an evicted pod still terminating says since when, and its finalizers
// when it has any; the pod's wait is remembered to be said again.
func TestWaitDiagStuck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		finalizers []string
		wantCause  string
	}{
		{name: "no finalizer: the kubelet", wantCause: "pod ns/web-a was evicted 1m0s ago and is still there"},
		{name: "a finalizer: named", finalizers: []string{"example.com/keep"},
			wantCause: "pod ns/web-a was evicted 1m0s ago and is still there: it has finalizers example.com/keep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, clock := newConcernRun(t, Config{}, nil)
			st := &podState{key: "ns/web-a", acceptedAt: clock.Now()}
			clock.Step(time.Minute)
			cur := testPod("web-a", "n1")
			cur.Finalizers = tc.finalizers
			ev := r.budgets.diag.stuckLocked(st, cur, event.Event{Message: "still terminating"})
			if ev.Cause != tc.wantCause {
				t.Errorf("cause %q, want %q", ev.Cause, tc.wantCause)
			}
			if ev.Remedy == "" {
				t.Error("no remedy")
			}
			if w := r.budgets.diag.stuck[st.key]; w == nil || !w.since.Equal(st.acceptedAt) || !w.said.Equal(clock.Now()) {
				t.Errorf("wait remembered as %+v", w)
			}
		})
	}
}

// The run's error when nodes failed wraps the first step's error, so that its kind
// reaches the caller; without one it counts the failed nodes.
func TestNodeStepsResult(t *testing.T) {
	first, second := errors.New("first step failed"), errors.New("second step failed")
	for _, tc := range []struct {
		name     string
		errs     []error
		wantMsg  string
		wantWrap error
	}{
		{name: "no step failed", wantMsg: "1 of 2 nodes failed to drain"},
		{name: "the first step's error is kept", errs: []error{first, second}, wantMsg: "1 of 2 nodes failed: first step failed", wantWrap: first},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newConcernRun(t, Config{}, &event.Plan{Nodes: []event.NodePlan{{Name: "n1"}, {Name: "n2"}}})
			r.sum.NodesFailed = 1
			for _, err := range tc.errs {
				if r.steps.firstErr == nil { // as failedLocked keeps it, without failing a node
					r.steps.firstErr = err
				}
			}
			err := r.steps.resultLocked()
			if err.Error() != tc.wantMsg {
				t.Errorf("error %q, want %q", err, tc.wantMsg)
			}
			if tc.wantWrap != nil && !errors.Is(err, tc.wantWrap) {
				t.Errorf("error %v does not wrap %v", err, tc.wantWrap)
			}
		})
	}
}
