package bench

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// holds: an eviction whose disruptedPods entry outlasts termination + readiness, and the
// hold-free limit that replays it as the run's median instead.
func TestHoldsAndTheHoldFreeLimit(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	listing := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	o := &observer{start: t0,
		evicted: map[string]time.Time{"db-0/u1": at(0), "db-1/u2": at(10), "web-x/u3": at(0)},
		appOf:   map[string]string{"db-0": "db", "db-1": "db", "web-x": "web"},
		statuses: map[string][]pdbPoint{
			// db-0's entry stays 120 s (a hold); db-1's goes 0.5 s after its eviction.
			"db": {{at: at(-1), allowed: 1, expected: 3, desired: 2},
				{at: at(0), allowed: 0, expected: 3, desired: 2, current: 2, disrupted: listing("db-0")},
				{at: at(120), allowed: 1, expected: 3, desired: 2, current: 3},
				{at: at(10), allowed: 0, expected: 3, desired: 2, current: 2, disrupted: listing("db-1")},
				{at: at(10.5), allowed: 0, expected: 3, desired: 2, current: 2},
				{at: at(13), allowed: 1, expected: 3, desired: 2, current: 3}},
			"web": {{at: at(0), allowed: 0, expected: 3, desired: 2, current: 2, disrupted: listing("web-x")},
				{at: at(0.2), allowed: 0, expected: 3, desired: 2, current: 2},
				{at: at(3), allowed: 1, expected: 3, desired: 2, current: 3}}},
	}
	// The statuses in time order, as the watch records them.
	pts := o.statuses["db"]
	pts[2], pts[3], pts[4], pts[5] = pts[3], pts[4], pts[5], pts[2]
	holds := o.holds(3 * time.Second)
	if len(holds) != 1 || !holds["db-0/u1"] {
		t.Fatalf("holds %v, want db-0/u1 only", holds)
	}
	replayed, free := o.tcOf(), o.tcWithout(holds)
	if got := replayed("db", 0); got != 13*time.Second {
		t.Errorf("replayed recovery after db-0 %s, want 13s (the budget allowed one again 13 s after it)", got)
	}
	if got, median := free("db", 0), o.tc(); got != median {
		t.Errorf("hold-free recovery after db-0 %s, want the run's median %s", got, median)
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

// replacedEntries: only an entry whose pod is a Ready replacement, created at or after the
// entry, is cleared; the pod evicted (older), one still terminating or not Ready, and an
// entry without a pod are left to the disruption controller.
func TestReplacedEntries(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC))
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
		{"created in the eviction's second", pod("db-0", at.Time, true, false), []string{"db-0"}},
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
