package drain

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// rollFake is the run as the roller sees it (rollHost), faked: it records what the roller
// asks of it. Its nodes drain at once (drainNode finishes them).
type rollFake struct {
	c          *core
	nodes      map[string]*nodeState
	budgets    map[string]*pdb.Budget
	parked     map[string]int
	stop       string          // mayStartLocked's reason ("": a node may start)
	startFails map[string]bool // nodes whose Before step or cordon fails

	roll       *rolling
	notStarted []string
	fails      []string
	started    []string
	drained    []string
}

func (f *rollFake) nodeLocked(name string) *nodeState        { return f.nodes[name] }
func (f *rollFake) nodesLocked() map[string]*nodeState       { return f.nodes }
func (f *rollFake) budgetLocked(key string) *pdb.Budget      { return f.budgets[key] }
func (f *rollFake) parkedOnLocked(key string) int            { return f.parked[key] }
func (f *rollFake) rollingLocked(w *rolling)                 { f.roll = w }
func (f *rollFake) deadline() (<-chan time.Time, func())     { return nil, func() {} }
func (f *rollFake) mayStartLocked() (reason, msg string)     { return f.stop, f.stop }
func (f *rollFake) failNodeLocked(ns *nodeState, msg string) { f.finishLocked(ns, true, msg) }
func (f *rollFake) finishLocked(ns *nodeState, failed bool, msg string) {
	ns.finished, ns.failed = true, failed
	if failed {
		f.fails = append(f.fails, ns.name+": "+msg)
	}
}

func (f *rollFake) notStartedLocked(nodes []event.NodePlan, _, _ string) {
	for _, np := range nodes {
		f.notStarted = append(f.notStarted, np.Name)
		f.nodes[np.Name].finished = true
	}
}

func (f *rollFake) startNode(_ context.Context, name string) bool {
	f.c.lock()
	defer f.c.unlock()
	f.started = append(f.started, name)
	if f.startFails[name] {
		f.failNodeLocked(f.nodes[name], "before failed")
		return false
	}
	return true
}

func (f *rollFake) drainNode(_ context.Context, ns *nodeState) {
	f.c.lock()
	defer f.c.unlock()
	f.drained = append(f.drained, ns.name)
	f.finishLocked(ns, false, "")
}

// rollPlan is a plan of nodes named as given; a node named with a budget's key after it
// ("n1 ns/shut") has a pod under that budget, one with "!" ("n2!") was cordoned before
// the run.
func rollPlan(nodes ...[]string) []event.NodePlan {
	var plan []event.NodePlan
	for _, n := range nodes {
		np := event.NodePlan{Name: n[0]}
		if last := len(np.Name) - 1; np.Name[last] == '!' {
			np.Name, np.AlreadyCordoned = np.Name[:last], true
		}
		for _, key := range n[1:] {
			b := &pdb.Budget{PDB: namedPDB(key[len("ns/"):], 1)}
			np.Steps = append(np.Steps, pdb.Step{Decision: pdb.Decision{Budgets: []*pdb.Budget{b}}})
		}
		plan = append(plan, np)
	}
	return plan
}

// newRollAlone is a roller of plan on a core with a fake clock and a fake run.
func newRollAlone(plan []event.NodePlan, cfg func(*Config)) (*roller, *rollFake, *[]event.Event) {
	evs := new([]event.Event)
	var mu sync.Mutex
	c := testCore(evs)
	post := c.post
	c.post = func(ev event.Event) { mu.Lock(); defer mu.Unlock(); post(ev) }
	c.cfg.MaxParallelNodes = 1
	c.cfg.Rolling = downNodes{}
	if cfg != nil {
		cfg(c.cfg)
	}
	f := &rollFake{c: c, nodes: map[string]*nodeState{}, budgets: map[string]*pdb.Budget{}, parked: map[string]int{}}
	for _, np := range plan {
		f.nodes[np.Name] = &nodeState{name: np.Name, plan: np}
	}
	ro := newRoller(c, f, plan, map[string]*corev1.Node{})
	return &ro, f, evs
}

func allPending(plan []event.NodePlan) []int {
	pending := make([]int, len(plan))
	for i := range pending {
		pending[i] = i
	}
	return pending
}

// The node a rolling drain starts next: the first out of service (cordoned before the run,
// or down in the pool), else the first in plan order none of whose pods a budget holds
// (one that allows no disruption, or that pods of the run wait on), else the fewest held.
func TestRollerNextAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		plan    []event.NodePlan
		down    downNodes
		allowed map[string]int32 // the budgets as last seen (unseen: unknown)
		parked  map[string]int
		pending []int // nil: all
		want    string
	}{
		"plan order when nothing holds":      {plan: rollPlan([]string{"n1", "ns/a"}, []string{"n2"}), want: "n1"},
		"cordoned before the run goes first": {plan: rollPlan([]string{"n1"}, []string{"n2!"}), want: "n2"},
		"down in the pool goes first":        {plan: rollPlan([]string{"n1"}, []string{"n2"}), down: downNodes{"n2": true}, want: "n2"},
		"out of service goes first even held": {plan: rollPlan([]string{"n1"}, []string{"n2", "ns/shut"}),
			allowed: map[string]int32{"ns/shut": 0}, down: downNodes{"n2": true}, want: "n2"},
		"a shut budget holds": {plan: rollPlan([]string{"n1", "ns/shut"}, []string{"n2", "ns/open"}),
			allowed: map[string]int32{"ns/shut": 0, "ns/open": 1}, want: "n2"},
		"an unknown budget does not hold": {plan: rollPlan([]string{"n1", "ns/new"}, []string{"n2"}), want: "n1"},
		"pods parked on a budget hold": {plan: rollPlan([]string{"n1", "ns/open"}, []string{"n2", "ns/other"}),
			allowed: map[string]int32{"ns/open": 1}, parked: map[string]int{"ns/open": 1}, want: "n2"},
		"every node held: the fewest held": {plan: rollPlan([]string{"n1", "ns/shut", "ns/shut"}, []string{"n2", "ns/shut"}, []string{"n3", "ns/shut", "ns/shut"}),
			allowed: map[string]int32{"ns/shut": 0}, want: "n2"},
		"a tie: the first in plan order": {plan: rollPlan([]string{"n1", "ns/shut"}, []string{"n2", "ns/shut"}),
			allowed: map[string]int32{"ns/shut": 0}, want: "n1"},
		"only the pending count": {plan: rollPlan([]string{"n1!"}, []string{"n2", "ns/shut"}, []string{"n3"}),
			allowed: map[string]int32{"ns/shut": 0}, pending: []int{1, 2}, want: "n3"},
	} {
		t.Run(name, func(t *testing.T) {
			ro, f, _ := newRollAlone(tc.plan, func(cfg *Config) { cfg.Rolling = tc.down })
			for key, allowed := range tc.allowed {
				p := namedPDB(key[len("ns/"):], allowed)
				f.budgets[key] = &pdb.Budget{PDB: p}
			}
			f.parked = tc.parked
			pending := tc.pending
			if pending == nil {
				pending = allPending(tc.plan)
			}
			ro.c.lock()
			got := tc.plan[ro.nextLocked(pending)].Name
			ro.c.unlock()
			if got != tc.want {
				t.Errorf("next = %s, want %s", got, tc.want)
			}
		})
	}
}

// stopLocked records every pending node as not started once no node may start (the run's
// --not-after passed, or --on-blocked=fail stopped it), and nothing otherwise.
func TestRollerStopAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		stop    string
		pending []int
		want    []string
	}{
		"a node may start":                 {},
		"--not-after passed":               {stop: "NotAfter", pending: []int{0, 1, 2}, want: []string{"n1", "n2", "n3"}},
		"--on-blocked=fail stopped it":     {stop: "OnBlockedFail", pending: []int{0, 1, 2}, want: []string{"n1", "n2", "n3"}},
		"only the pending, in their order": {stop: "NotAfter", pending: []int{2, 1}, want: []string{"n3", "n2"}},
	} {
		t.Run(name, func(t *testing.T) {
			plan := rollPlan([]string{"n1"}, []string{"n2"}, []string{"n3"})
			ro, f, _ := newRollAlone(plan, nil)
			f.stop = tc.stop
			pending := tc.pending
			if pending == nil {
				pending = allPending(plan)
			}
			ro.c.lock()
			stopped := ro.stopLocked(pending)
			ro.c.unlock()
			if stopped != (tc.stop != "") || !slices.Equal(f.notStarted, tc.want) {
				t.Errorf("stopLocked = %v, not started %q; want %v, %q", stopped, f.notStarted, tc.stop != "", tc.want)
			}
		})
	}
}

// drainedBefore is how long ago an earlier run drained the node, from the record the plan
// read on it; 0 for any other record, or none.
func TestRollerDrainedBeforeAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		state string
		ago   time.Duration // since, before now (0: no since recorded)
		want  time.Duration
	}{
		"no record":                  {},
		"drained 8 minutes ago":      {state: noderecord.StateDrained, ago: 8 * time.Minute, want: 8 * time.Minute},
		"selected pods drained":      {state: noderecord.StateSelectedDrained, ago: time.Minute, want: time.Minute},
		"drained, no since":          {state: noderecord.StateDrained},
		"draining is not drained":    {state: noderecord.StateDraining, ago: time.Minute},
		"failed is not drained":      {state: noderecord.StateFailed, ago: time.Minute},
		"a since ahead of the clock": {state: noderecord.StateDrained, ago: -time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			ro, _, _ := newRollAlone(rollPlan([]string{"n1"}), nil)
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{}}}
			if tc.state != "" {
				n.Annotations[noderecord.AnnotationDrain] = tc.state
			}
			if tc.ago != 0 {
				n.Annotations[noderecord.AnnotationSince] = ro.c.now().Add(-tc.ago).UTC().Format(time.RFC3339)
			}
			ro.known["n1"] = n
			if got := ro.drainedBefore("n1"); got != tc.want {
				t.Errorf("drainedBefore = %v, want %v", got, tc.want)
			}
			if got := ro.drainedBefore("other"); got != 0 {
				t.Errorf("drainedBefore of a node the plan did not read = %v, want 0", got)
			}
		})
	}
}

// An admission counts as running the nodes in progress and those soaking, as done those
// drained or given up; a failed node, or one not started, is neither.
func TestRollerAdmissionAlone(t *testing.T) {
	ro, f, _ := newRollAlone(rollPlan([]string{"n1"}, []string{"n2"}, []string{"n3"}, []string{"n4"}, []string{"n5"}), nil)
	f.nodes["n1"].cordoning = true
	f.nodes["n2"].cordoning, f.nodes["n2"].finished, f.nodes["n2"].soaking = true, true, true
	f.nodes["n3"].cordoning, f.nodes["n3"].finished = true, true
	f.nodes["n4"].cordoning, f.nodes["n4"].finished, f.nodes["n4"].failed = true, true, true
	a := ro.admission("n5")
	if a.Node != "n5" || !slices.Equal(a.Running, []string{"n1", "n2"}) || !slices.Equal(a.Done, []string{"n3"}) {
		t.Errorf("admission = %+v, want n5 running [n1 n2] done [n3]", a)
	}
}

// scriptedRoom answers Room from a script (its last answer for ever after) and wakes at
// once.
type scriptedRoom struct {
	mu    sync.Mutex
	waits []string
	err   error
	down  map[string]bool
}

func (s *scriptedRoom) Room(context.Context, Admission) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "", s.err
	}
	w := s.waits[0]
	if len(s.waits) > 1 {
		s.waits = s.waits[1:]
	}
	return w, nil
}
func (s *scriptedRoom) Wait(context.Context) error   { return nil }
func (s *scriptedRoom) Unavailable(node string) bool { return s.down[node] }

// admit says once per change what a node waits on and admits it once there is room; a
// lasting error fails the node; a pending member out of service sends the caller to pick
// again.
func TestRollerAdmitAlone(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodepools"}, "pool", nil)
	for name, tc := range map[string]struct {
		room     *scriptedRoom
		admitted bool
		said     []string
		fails    []string
	}{
		"room at once": {room: &scriptedRoom{waits: []string{""}}, admitted: true},
		"each change said once": {room: &scriptedRoom{waits: []string{"pool full", "pool full", "1 NotReady", ""}},
			admitted: true, said: []string{"pool full", "1 NotReady"}},
		"a lasting error fails the node":             {room: &scriptedRoom{err: forbidden}, fails: []string{"n1: may not start: " + forbidden.Error()}},
		"a pending member out of service goes first": {room: &scriptedRoom{waits: []string{"pool full"}, down: map[string]bool{"n2": true}}},
	} {
		t.Run(name, func(t *testing.T) {
			plan := rollPlan([]string{"n1"}, []string{"n2"})
			ro, f, evs := newRollAlone(plan, func(cfg *Config) { cfg.Rolling = tc.room })
			w := &rolling{freed: make(chan struct{}, 1), halt: make(chan struct{})}
			admitted := ro.admit(context.Background(), w, "n1", allPending(plan))
			ro.c.wg.Wait()
			var said []string
			for _, ev := range *evs {
				if ev.Reason == ReasonRoom && ev.Node == "n1" {
					said = append(said, ev.Message)
				}
			}
			if admitted != tc.admitted || !slices.Equal(said, tc.said) || !slices.Equal(f.fails, tc.fails) {
				t.Errorf("admitted %v, said %q, fails %q; want %v, %q, %q", admitted, said, f.fails, tc.admitted, tc.said, tc.fails)
			}
		})
	}
	// A halted run admits no node that waits.
	ro, _, _ := newRollAlone(rollPlan([]string{"n1"}), func(cfg *Config) { cfg.Rolling = &scriptedRoom{waits: []string{"pool full"}} })
	w := &rolling{freed: make(chan struct{}, 1), halt: make(chan struct{})}
	w.stop()
	if ro.admit(context.Background(), w, "n1", []int{0}) {
		t.Error("a halted run admitted a node")
	}
	ro.c.wg.Wait()
}

// drainRolling starts one node at a time in nextLocked's order, goes on past a node whose
// start fails, and starts none once no node may start.
func TestRollerDrainRollingAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		stop       string
		startFails map[string]bool
		cancelled  bool
		started    []string
		drained    []string
		notStarted []string
	}{
		"out of service, then free, then held":   {started: []string{"n3", "n2", "n1"}, drained: []string{"n3", "n2", "n1"}},
		"a start that fails":                     {startFails: map[string]bool{"n2": true}, started: []string{"n3", "n2", "n1"}, drained: []string{"n3", "n1"}},
		"no node may start":                      {stop: "NotAfter", notStarted: []string{"n1", "n2", "n3"}},
		"cancelled, past --not-after":            {stop: "NotAfter", cancelled: true, notStarted: []string{"n1", "n2", "n3"}},
		"cancelled: left as a pause leaves them": {cancelled: true},
	} {
		t.Run(name, func(t *testing.T) {
			plan := rollPlan([]string{"n1", "ns/shut"}, []string{"n2"}, []string{"n3"})
			ro, f, _ := newRollAlone(plan, func(cfg *Config) { cfg.Rolling = downNodes{"n3": true} })
			f.budgets["ns/shut"] = &pdb.Budget{PDB: namedPDB("shut", 0)}
			f.stop, f.startFails = tc.stop, tc.startFails
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			ro.drainRolling(ctx)
			ro.c.wg.Wait()
			if f.roll == nil {
				t.Error("the run was not handed the rolling drain's wake-ups")
			}
			if !slices.Equal(f.started, tc.started) || !slices.Equal(f.drained, tc.drained) || !slices.Equal(f.notStarted, tc.notStarted) {
				t.Errorf("started %q, drained %q, not started %q; want %q, %q, %q",
					f.started, f.drained, f.notStarted, tc.started, tc.drained, tc.notStarted)
			}
		})
	}
}

// A drained node keeps its slot for the soak while another node is still to start, for
// what is left of it after an earlier run's drain; none when no node waits.
func TestRollerSoakAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		waiting bool
		ago     time.Duration // an earlier run drained the node this long ago
		want    time.Duration // how long it soaks (0: not at all)
	}{
		"another node waits":         {waiting: true, want: 10 * time.Minute},
		"no node waits":              {},
		"drained 8 minutes before":   {waiting: true, ago: 8 * time.Minute, want: 2 * time.Minute},
		"drained longer than a soak": {waiting: true, ago: 11 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			ro, f, _ := newRollAlone(rollPlan([]string{"n1"}, []string{"n2"}), func(cfg *Config) { cfg.Soak = 10 * time.Minute })
			clock := ro.c.cfg.Clock.(*testingclock.FakeClock)
			if tc.ago > 0 {
				ro.known["n1"] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{
					noderecord.AnnotationDrain: noderecord.StateDrained,
					noderecord.AnnotationSince: clock.Now().Add(-tc.ago).UTC().Format(time.RFC3339)}}}
			}
			ns := f.nodes["n1"]
			ns.cordoning, ns.finished = true, true
			if !tc.waiting {
				f.nodes["n2"].finished = true
			}
			w := &rolling{freed: make(chan struct{}, 1), halt: make(chan struct{})}
			done := make(chan struct{})
			go func() { defer close(done); ro.soak(context.Background(), w, ns) }()
			if tc.want == 0 {
				<-done
				if ns.soaking {
					t.Error("still soaking")
				}
				return
			}
			deadline := time.Now().Add(5 * time.Second)
			for !clock.HasWaiters() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			ro.c.lock()
			soaking := ns.soaking
			ro.c.unlock()
			if !soaking {
				t.Error("not soaking")
			}
			clock.Step(tc.want - time.Second)
			select {
			case <-done:
				t.Fatalf("the soak ended before %v", tc.want)
			case <-time.After(50 * time.Millisecond):
			}
			clock.Step(time.Second)
			<-done
			if ns.soaking {
				t.Error("still soaking after the soak")
			}
		})
	}
}
