package drain

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// partRun is the run as a part sees it, faked: it records what the part asks of it.
// It implements every part's face (paceRun, stepsRun, surgeRun), so each part is tested
// alone, with a core and no engine or run.
type partRun struct {
	nodes   map[string]*nodeState
	budgets map[string]*pdb.Budget
	planned []string
	failed  int
	added   []string
	parked  []string
	fails   []string
}

func (f *partRun) add(key string)                        { f.added = append(f.added, key) }
func (f *partRun) budgetLocked(key string) *pdb.Budget   { return f.budgets[key] }
func (f *partRun) nodeLocked(name string) *nodeState     { return f.nodes[name] }
func (f *partRun) failedOfLocked() (failed, planned int) { return f.failed, len(f.planned) }
func (f *partRun) context() context.Context              { return context.Background() }
func (f *partRun) plannedNodes() []string                { return f.planned }
func (f *partRun) failNodeLocked(ns *nodeState, msg string) {
	f.failed++
	f.fails = append(f.fails, ns.name+": "+msg)
}
func (f *partRun) parkLocked(st *podState, _ []*pdb.Budget, reason, _ string) {
	f.parked = append(f.parked, st.key+" "+reason)
}

// testCore is a core on a fake clock whose events are collected in *evs.
func testCore(evs *[]event.Event) *core {
	cfg := &Config{Clock: testingclock.NewFakeClock(time.Unix(1_000_000, 0)), Logger: klog.Background()}
	c := newCore(cfg, func(ev event.Event) { *evs = append(*evs, ev) })
	return &c
}

func TestNodeStepsAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		errs  []error // one failed step per node, in order
		want  string
		wraps error
	}{
		"no step failed":           {want: "0 of 3 nodes failed to drain"},
		"a step's error is kept":   {errs: []error{errBlockedTest}, want: "1 of 3 nodes failed: blocked by policy", wraps: errBlockedTest},
		"the first of two is kept": {errs: []error{errBlockedTest, errors.New("second")}, want: "2 of 3 nodes failed: blocked by policy", wraps: errBlockedTest},
	} {
		t.Run(name, func(t *testing.T) {
			f := &partRun{planned: []string{"n1", "n2", "n3"}, nodes: map[string]*nodeState{}}
			var evs []event.Event
			steps := newNodeSteps(testCore(&evs), f)
			for i, err := range tc.errs {
				steps.failedLocked(&nodeState{name: f.planned[i]}, err)
			}
			err := steps.resultLocked()
			if err.Error() != tc.want || (tc.wraps != nil && !errors.Is(err, tc.wraps)) {
				t.Errorf("resultLocked = %v, want %q wrapping %v", err, tc.want, tc.wraps)
			}
			if len(f.fails) != len(tc.errs) {
				t.Errorf("nodes failed %q, want %d", f.fails, len(tc.errs))
			}
		})
	}
}

var errBlockedTest = errors.New("blocked by policy")

func TestPacingAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		changes    []paceChange
		wantEvents []string
	}{
		"nothing changed says nothing":   {},
		"a change is a pacing event":     {changes: []paceChange{{from: paceOpen, to: paceAll, rate: 1, budget: "ns/web"}}, wantEvents: []string{"drain.pacing PacingAll"}},
		"pacing that lasts is a warning": {changes: []paceChange{{from: paceAll, to: paceAll, lasts: true}}, wantEvents: []string{"warning EvictionsPaced"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := &partRun{}
			var evs []event.Event
			pc := newPacing(testCore(&evs), f, 0)
			pc.sayLocked(tc.changes)
			var got []string
			for _, ev := range evs {
				got = append(got, string(ev.Type)+" "+ev.Reason)
			}
			if !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %q, want %q", got, tc.wantEvents)
			}
		})
	}
	// A decision that takes no budget's allowance is never paced.
	pc := newPacing(testCore(new([]event.Event)), &partRun{}, 0)
	if d := pc.turnLocked(&podState{key: "ns/web-a"}, &corev1.Pod{}, pdb.Decision{}); d != 0 {
		t.Errorf("turnLocked without a budget = %v, want 0", d)
	}
}

func TestSurgerAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		outcome outcome
		surged  bool
	}{
		"no surge: an answer restores nothing":      {outcome: accepted},
		"a surge not yet answered restores nothing": {outcome: refusedByPDB, surged: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := &partRun{planned: []string{"n1"}}
			var evs []event.Event
			sg := newSurger(testCore(&evs), f)
			sg.resumeSurges(context.Background()) // no Config.Surge: nothing to resume, nothing asked
			st := &podState{key: "ns/web-a", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}}
			if tc.surged {
				sg.byUID = map[string]*surgeState{"u1": {}}
			}
			sg.surgeAnsweredLocked(st, tc.outcome)
			if len(evs) != 0 || len(f.added) != 0 || len(f.parked) != 0 {
				t.Errorf("events %v, added %q, parked %q; want none", evs, f.added, f.parked)
			}
			if ss := sg.byUID["u1"]; ss != nil && ss.restoring {
				t.Error("a restore started")
			}
		})
	}
}
