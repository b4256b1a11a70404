package bench

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// windowLimit: the closed form for one group, and the coupling of the groups of a
// sliding window through a budget whose replacement is not Ready yet when the next group
// starts.
func TestWindowLimit(t *testing.T) {
	const tc, term = 3 * time.Second, time.Second
	tcOf := func(app string, _ int) time.Duration {
		if app == "slow" {
			return 2 * tc
		}
		return tc
	}
	for _, c := range []struct {
		name    string
		allowed map[string]int32
		groups  []map[string]int
		width   int
		want    time.Duration
	}{
		{"no pods: nothing to wait for but nothing", nil, []map[string]int{{}}, 1, term},
		{"no budget: termination only", nil, []map[string]int{{"a": 5}}, 1, term},
		{"one budget, 5 pods, 1 at a time", map[string]int32{"a": 1}, []map[string]int{{"a": 5}}, 1, 4*tc + term},
		{"10%: 4 at a time", map[string]int32{"a": 4, "b": 1}, []map[string]int{{"a": 9, "b": 2}}, 1, 2*tc + term},
		{"one at a time, two nodes sharing a budget wait on T_c", map[string]int32{"a": 1}, []map[string]int{{"a": 1}, {"a": 1}}, 1, tc + term},
		{"T_c per budget", map[string]int32{"a": 1, "slow": 1}, []map[string]int{{"a": 2, "slow": 2}}, 1, 2*tc + term},
		{"one at a time, separate budgets", map[string]int32{"a": 1, "b": 1}, []map[string]int{{"a": 1}, {"b": 1}}, 1, 2 * term},
		// Width 2: the slow node holds one place while three quick ones pass through the other.
		{"a window passes a held node", map[string]int32{"slow": 1}, []map[string]int{{"slow": 2}, {}, {}, {}}, 2, 2*tc + term},
		{"the same one at a time", map[string]int32{"slow": 1}, []map[string]int{{"slow": 2}, {}, {}, {}}, 1, 2*tc + term + 3*term},
		{"every node at once is one group's closed form", map[string]int32{"a": 1}, []map[string]int{{"a": 1}, {"a": 1}, {"a": 1}}, 3, 2*tc + term},
	} {
		if got := windowLimit(c.allowed, c.groups, c.width, tcOf, term); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// runProc reports the child's own peak RSS, not the bench's (which a vfork would lend it).
func TestRunProcMeasuresTheChild(t *testing.T) {
	ballast := make([]byte, 200<<20) // the bench's own memory: 200 MiB resident
	for i := range ballast {
		ballast[i] = 1
	}
	p := runProc(t.Context(), "/bin/sh", []string{"-c", "sleep 0.3"})
	if p.code != 0 || p.rssMiB <= 0 || p.rssMiB > 50 {
		t.Errorf("sh: exit %d, peak RSS %.1f MiB; want 0 and a few MiB", p.code, p.rssMiB)
	}
	_ = ballast[len(ballast)-1]
}

// holds: a StatefulSet's pod replaced under its name while its entry stands is a hold
// this run caused (pdb.Holds), one whose entry the controller dropped first is none, and a
// hold older than the run is seen but not caused; the controller's writes are the
// statuses that add no entry; the hold-free limit replays the held eviction's recovery as
// the run's median.
func TestHoldsAndTheHoldFreeLimit(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	budget := func(name string, allowed, current int32, entries map[string]float64) *policyv1.PodDisruptionBudget {
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: current, DesiredHealthy: 2, ExpectedPods: 3}}
		for pod, s := range entries {
			if b.Status.DisruptedPods == nil {
				b.Status.DisruptedPods = map[string]metav1.Time{}
			}
			b.Status.DisruptedPods[pod] = metav1.NewTime(at(s))
		}
		return b
	}
	pod := func(name, uid string, created float64, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(at(created)),
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db", Controller: ptr.To(true)}}}}
		if deleting {
			p.DeletionTimestamp = &p.CreationTimestamp
		}
		return p
	}
	o := &observer{start: t0, statuses: map[string][]pdbPoint{}, hw: newHoldWatch(),
		evicted: map[string]time.Time{"db-0/u1": at(0), "db-1/u3": at(121), "web-x/u5": at(0)},
		appOf:   map[string]string{"db-0": "db", "db-1": "db", "web-x": "web", "old-0": "old"}}
	steps := []func(){
		// Where the watches start: every budget's status; "old" holds old-0 from before the run.
		func() { o.seePod(pod("old-0", "o2", -20, false), false, at(0)) },
		func() { o.recordAt(budget("old", 0, 2, map[string]float64{"old-0": -30}), at(0)) },
		func() { o.recordAt(budget("db", 1, 3, nil), at(0)) },
		func() { o.recordAt(budget("web", 1, 3, nil), at(0)) },
		// db-0 evicted; its replacement comes before the controller syncs: a hold.
		func() { o.recordAt(budget("db", 0, 3, map[string]float64{"db-0": 0}), at(0)) },
		func() { o.seePod(pod("db-0", "u1", -3600, true), false, at(0)) },
		func() { o.seePod(pod("db-0", "u1", -3600, true), true, at(5)) },
		func() { o.seePod(pod("db-0", "u2", 5, false), false, at(5)) },
		func() { o.recordAt(budget("db", 0, 2, map[string]float64{"db-0": 0}), at(6)) },
		func() { o.recordAt(budget("db", 1, 3, nil), at(120)) },
		// db-1 evicted; the controller drops its entry before the replacement: no hold.
		func() { o.recordAt(budget("db", 0, 3, map[string]float64{"db-1": 121}), at(121)) },
		func() { o.seePod(pod("db-1", "u3", -3600, true), false, at(121)) },
		func() { o.recordAt(budget("db", 0, 2, nil), at(121.5)) },
		func() { o.seePod(pod("db-1", "u3", -3600, true), true, at(122)) },
		func() { o.seePod(pod("db-1", "u4", 122, false), false, at(122)) },
		func() { o.recordAt(budget("db", 1, 3, nil), at(124)) },
		// web-x (a Deployment's pod: its replacement has another name).
		func() { o.recordAt(budget("web", 0, 3, map[string]float64{"web-x": 0}), at(0)) },
		func() { o.recordAt(budget("web", 0, 2, nil), at(0.2)) },
		func() { o.recordAt(budget("web", 1, 3, nil), at(3)) },
	}
	for _, step := range steps {
		step()
	}
	if seen, caused := o.holdCounts(); seen != 2 || caused != 1 {
		t.Errorf("holds seen %d, caused %d; want 2 (db-0's and old-0's) and 1 (db-0's)", seen, caused)
	}
	holds := o.heldEvictions()
	if len(holds) != 1 || !holds["db-0/u1"] {
		t.Fatalf("held evictions %v, want db-0/u1 only", holds)
	}
	want := []time.Time{at(6), at(120), at(121.5), at(124), at(0.2), at(3)}
	if got := o.controllerWrites(); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("controller writes at %v, want %v", got, want)
	}
	if got := o.coveredEvictions(); got != 3 {
		t.Errorf("budget-covered evictions %d, want 3", got)
	}
	replayed, free := o.tcOf(), o.tcWithout(holds)
	if got := replayed("db", 0); got != 120*time.Second {
		t.Errorf("replayed recovery after db-0 %s, want 120s (the budget allowed one again when the entry expired)", got)
	}
	if got, median := free("db", 0), o.tc(); got != median || median != 3*time.Second {
		t.Errorf("hold-free recovery after db-0 %s, want the run's median %s (3s)", got, median)
	}
}

func TestFleetToolsFilterEachPhase(t *testing.T) {
	tests := []struct {
		tools []string
		want  map[string][]string
	}{
		{nil, map[string][]string{"F2": {"ours"}, "F1": {"ours", "kubectl-par", "kubectl-seq"}, "F3": {"ours"}, "F4": {"ours", "kubectl-par"}}},
		{[]string{"ours"}, map[string][]string{"F2": {"ours"}, "F1": {"ours"}, "F3": {"ours"}, "F4": {"ours"}}},
		{[]string{"kubectl-par"}, map[string][]string{"F2": nil, "F1": {"kubectl-par"}, "F3": nil, "F4": {"kubectl-par"}}},
	}
	for _, tc := range tests {
		p := FleetProfile{Tools: tc.tools}
		for phase, want := range tc.want {
			if got := p.tools(phase); !slices.Equal(got, want) {
				t.Errorf("tools %v, phase %s: %v, want %v", tc.tools, phase, got, want)
			}
		}
	}
}

// replacedEntries: only an entry whose pod is a Ready replacement, created after the entry
// (a hold, pdb.Holds), is cleared; one created in the entry's second (taken as the pod
// evicted), the pod evicted (older), one still terminating or not Ready, and an entry
// without a pod are left to the disruption controller.
func TestReplacedEntries(t *testing.T) {
	at := metav1.NewTime(time.Now().Add(-10 * time.Second).Truncate(time.Second)) // an entry younger than DeletionTimeout
	pod := func(name string, created time.Time, ready, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(created)}}
		if ready {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if deleting {
			p.DeletionTimestamp = &at
		}
		return p
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{"a Ready replacement created after the eviction", pod("db-0", at.Add(3*time.Second), true, false), []string{"db-0"}},
		{"created in the eviction's second", pod("db-0", at.Time, true, false), nil},
		{"the evicted pod itself (older)", pod("db-0", at.Add(-time.Hour), true, false), nil},
		{"a replacement not Ready yet", pod("db-0", at.Add(3*time.Second), false, false), nil},
		{"a pod being deleted", pod("db-0", at.Add(3*time.Second), true, true), nil},
		{"no pod of that name", pod("db-1", at.Add(3*time.Second), true, false), nil},
	} {
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{"db-0": at}}}
		pods := map[string]*corev1.Pod{c.pod.Namespace + "/" + c.pod.Name: c.pod}
		if got := replacedEntries(b, pods); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
