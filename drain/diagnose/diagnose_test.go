package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

var now = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func pod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n2"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func notReadyPod(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}

func unschedulable(p *corev1.Pod) {
	p.Spec.NodeName = ""
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/6 nodes are available: 3 node(s) were unschedulable, 3 node(s) didn't match Pod's node affinity/selector."}}
}

func waiting(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		notReadyPod(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.example/web:nope", RestartCount: 7,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
}

func terminating(ago time.Duration, finalizers ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: now.Add(-ago)}
		p.Finalizers = finalizers
	}
}

func budget(name string, mods ...func(*policyv1.PodDisruptionBudget)) *pdb.Budget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 3},
	}
	for _, m := range mods {
		m(p)
	}
	return pdb.NewIndex([]*policyv1.PodDisruptionBudget{p}).Get("ns/" + name)
}

func TestDiagnose(t *testing.T) {
	waiter := pod("web-0")
	cases := []struct {
		name string
		in   Input
		kind Kind
		want []string // in Cause
		fix  string   // in Remedy
	}{
		{name: "unschedulable replacement names the pod and the scheduler's message",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{waiter, pod("web-1"), pod("web-2", unschedulable)}},
			kind: ReplacementsNotReady, want: []string{"ns/web-2 is unschedulable: 0/6 nodes are available: 3 node(s) were unschedulable", "pdb ns/web needs 2"},
			fix: "uncordon a node"},
		{name: "image pull",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2", waiting("ImagePullBackOff"))}},
			kind: ReplacementsNotReady, want: []string{"ns/web-2 cannot pull image registry.example/web:nope (ImagePullBackOff)"}, fix: "image"},
		{name: "crash loop",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2", waiting("CrashLoopBackOff"))}},
			kind: ReplacementsNotReady, want: []string{"ns/web-2 is in a crash loop (container app restarted 7 times)"}, fix: "kubectl logs --previous"},
		{name: "not ready yet",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2", notReadyPod)}},
			kind: ReplacementsNotReady, want: []string{"ns/web-2 is not Ready (Running on node n2)"}, fix: "readiness probes"},
		{name: "the most actionable remedy wins",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{pod("web-1", notReadyPod), pod("web-2", unschedulable)}},
			kind: ReplacementsNotReady, want: []string{"ns/web-1 is not Ready", "ns/web-2 is unschedulable"}, fix: "uncordon"},
		{name: "never allows: maxUnavailable 0",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			})}},
			kind: Never, want: []string{"maxUnavailable 0"}, fix: "neither scaling up nor --surge does"},
		{name: "never allows: minAvailable 100%",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptr.To(intstr.FromString("100%"))
			})}},
			kind: Never, want: []string{"minAvailable 100%"}, fix: "neither scaling up nor --surge does"},
		{name: "never allows: minAvailable = expected",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(3))
				p.Status.DesiredHealthy, p.Status.CurrentHealthy = 3, 3
			})}},
			kind: Never, want: []string{"needs 3 healthy pods and expects only 3"}, fix: "drain with --surge"},
		{name: "two budgets name both",
			in:   Input{Pod: waiter, Budgets: []*pdb.Budget{budget("a"), budget("b")}},
			kind: Overlap, want: []string{"pod ns/web-0 is selected by pdb ns/a and pdb ns/b"}, fix: "remove the overlap"},
		{name: "observedGeneration behind for longer than 30s",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 })},
				StaleFor: 45 * time.Second},
			kind: StaleStatus, want: []string{"stale for 45s", "observedGeneration 1 is behind generation 2"}, fix: "kube-controller-manager"},
		{name: "observedGeneration behind for a moment is not stale",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 })},
				StaleFor: 5 * time.Second},
			kind: Exhausted, want: []string{"pdb ns/web needs 2"}, fix: "wait"},
		{name: "disruptedPods lists a gone pod",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-gone": {Time: now.Add(-time.Minute)}}
			})}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}, StaleFor: time.Minute},
			kind: StaleStatus, want: []string{"disruptedPods still lists ns/web-gone"}, fix: "kube-controller-manager"},
		{name: "currentHealthy disagrees with the Ready pods",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) { p.Status.CurrentHealthy = 1 })},
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3")}, StaleFor: 31 * time.Second},
			kind: StaleStatus, want: []string{"currentHealthy is 1 but 3 of the pods it selects are Ready"}},
		{name: "the caller's own stale finding wins",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, StaleWhy: "pdb ns/web: its status is stale: gone for 40s"},
			kind: StaleStatus, want: []string{"gone for 40s"}},
		{name: "an earlier run's eviction record, and when it expires",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-1": {Time: now.Add(-50 * time.Second)}}
			})}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3")}},
			kind: EvictionRecord, want: []string{"counts ns/web-1 as disrupted", "at 09:01:10Z (in 1m10s)"}, fix: "expires by itself"},
		{name: "this run's own eviction record is expected",
			in: Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
				p.Status.DisruptedPods = map[string]metav1.Time{"web-1": {Time: now.Add(-5 * time.Second)}}
			})}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3")}, Ours: func(k string) bool { return k == "ns/web-1" }},
			kind: Exhausted},
		{name: "a pod stuck terminating on its finalizers",
			in: Input{Budgets: []*pdb.Budget{budget("web")},
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2", terminating(3*time.Minute, "example.com/protect"))}},
			kind: StuckTerminating, want: []string{"ns/web-2 (past its grace period by 3m0s, finalizers example.com/protect)"}, fix: "finalizer"},
		{name: "a pod stuck terminating on a NotReady node",
			in: Input{Budgets: []*pdb.Budget{budget("web")}, NodeNotReady: func(n string) bool { return n == "n2" },
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2", terminating(time.Minute))}},
			kind: StuckTerminating, want: []string{"its node n2 is NotReady"}, fix: "bring the pod's node back"},
		{name: "a pod within its grace period is not stuck",
			in: Input{Budgets: []*pdb.Budget{budget("web")},
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2", terminating(-10*time.Second)), pod("web-3"), pod("web-4")}},
			kind: Exhausted},
		{name: "a pod past its grace period by less than the margin is not stuck",
			in: Input{Budgets: []*pdb.Budget{budget("web")},
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2", terminating(10*time.Second)), pod("web-3"), pod("web-4")}},
			kind: Exhausted},
		{name: "a pod is judged as it was when listed, not against the clock now",
			in: Input{Budgets: []*pdb.Budget{budget("web")}, ListedAt: now.Add(-3 * time.Minute),
				Selected: []*corev1.Pod{pod("web-1"), pod("web-2", terminating(3*time.Minute-time.Second)), pod("web-3"), pod("web-4")}},
			kind: Exhausted},
		{name: "replacements not created",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}},
			kind: ReplacementsMissing, want: []string{"expects 3 pods and 2 exist"}, fix: "kube-controller-manager"},
		{name: "nothing known: exhausted",
			in:   Input{Budgets: []*pdb.Budget{budget("web")}},
			kind: Exhausted, want: []string{"needs 2 healthy pods, has 2, allows 0"}},
		{name: "no budget",
			in:   Input{},
			kind: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now = now
			if c.in.Pod == nil {
				c.in.Pod = waiter
			}
			d := Diagnose(c.in)
			if d.Kind != c.kind {
				t.Fatalf("kind = %q, want %q (cause %q)", d.Kind, c.kind, d.Cause)
			}
			for _, w := range c.want {
				if !strings.Contains(d.Cause, w) {
					t.Errorf("cause %q lacks %q", d.Cause, w)
				}
			}
			if !strings.Contains(d.Remedy, c.fix) {
				t.Errorf("remedy %q lacks %q", d.Remedy, c.fix)
			}
			if c.kind != "" && (d.Cause == "" || d.Remedy == "") {
				t.Errorf("empty cause or remedy: %+v", d)
			}
		})
	}
}

func TestEvictionRecordExpiry(t *testing.T) {
	b := budget("web", func(p *policyv1.PodDisruptionBudget) {
		p.Status.DisruptedPods = map[string]metav1.Time{"web-1": {Time: now.Add(-30 * time.Second)}, "web-2": {Time: now.Add(-90 * time.Second)}}
	})
	d := Diagnose(Input{Budgets: []*pdb.Budget{b}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}, Now: now})
	if want := now.Add(30 * time.Second); !d.Expires.Equal(want) {
		t.Errorf("expires %s, want %s (the earliest record)", d.Expires, want)
	}
	if strings.Join(d.Pods, ",") != "ns/web-1,ns/web-2" {
		t.Errorf("pods = %v", d.Pods)
	}
	// Past RecordTTL the record no longer holds anything.
	d = Diagnose(Input{Budgets: []*pdb.Budget{b}, Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}, Now: now.Add(2 * time.Minute)})
	if d.Kind == EvictionRecord {
		t.Errorf("an expired record still diagnosed: %q", d.Cause)
	}
}

func TestCausesNameAtMostThreePods(t *testing.T) {
	var sel []*corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		sel = append(sel, pod("web-"+n, unschedulable))
	}
	d := Diagnose(Input{Budgets: []*pdb.Budget{budget("web")}, Selected: sel, Now: now})
	if !strings.Contains(d.Cause, "and 2 more") || strings.Contains(d.Cause, "web-d") || len(d.Pods) != 5 {
		t.Errorf("cause %q, pods %v", d.Cause, d.Pods)
	}
}

func TestTracker(t *testing.T) {
	var tr Tracker
	steps := []struct {
		at        time.Duration
		disagrees bool
		want      time.Duration
	}{
		{0, true, 0},
		{10 * time.Second, true, 10 * time.Second},
		{40 * time.Second, true, 40 * time.Second},
		{41 * time.Second, false, 0},
		{50 * time.Second, true, 0},
		{55 * time.Second, true, 5 * time.Second},
	}
	for _, s := range steps {
		if got := tr.Observe("ns/web", s.disagrees, now.Add(s.at)); got != s.want {
			t.Errorf("at %s: %s, want %s", s.at, got, s.want)
		}
	}
	if got := tr.Since("ns/web", now.Add(60*time.Second)); got != 10*time.Second {
		t.Errorf("Since = %s", got)
	}
}

// A wait that is the drain's own turnover is routine (said without cause or remedy); the
// same shortage, lasting, is a cause.
func TestRoutineWaits(t *testing.T) {
	notReadyYet := func(p *corev1.Pod) { p.Status.Conditions = nil }
	cases := []struct {
		name    string
		in      Input
		kind    Kind
		routine bool
	}{
		{"nothing explains it: exhausted", Input{Budgets: []*pdb.Budget{budget("web")}}, Exhausted, true},
		{"a replacement starting", Input{Budgets: []*pdb.Budget{budget("web")}, Waited: 5 * time.Second,
			Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3", notReadyYet)}}, ReplacementsNotReady, true},
		{"a replacement not Ready for long", Input{Budgets: []*pdb.Budget{budget("web")}, Waited: 40 * time.Second,
			Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3", notReadyYet)}}, ReplacementsNotReady, false},
		{"a replacement unschedulable at once", Input{Budgets: []*pdb.Budget{budget("web")}, Waited: time.Second,
			Selected: []*corev1.Pod{pod("web-1"), pod("web-2"), pod("web-3", notReadyYet, func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes"}}
			})}}, ReplacementsNotReady, false},
		{"a StatefulSet's pod not recreated yet", Input{Budgets: []*pdb.Budget{budget("web")}, Waited: 2 * time.Second,
			Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}}, ReplacementsMissing, true},
		{"replacements missing for long", Input{Budgets: []*pdb.Budget{budget("web")}, Waited: time.Minute,
			Selected: []*corev1.Pod{pod("web-1"), pod("web-2")}}, ReplacementsMissing, false},
		{"a budget that never allows", Input{Budgets: []*pdb.Budget{budget("web", func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		})}}, Never, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now = now
			d := Diagnose(c.in)
			if d.Kind != c.kind || d.Routine != c.routine {
				t.Errorf("kind %q routine %v, want %q routine %v (cause %q)", d.Kind, d.Routine, c.kind, c.routine, d.Cause)
			}
			if d.Cause == "" || d.Remedy == "" {
				t.Errorf("cause %q, remedy %q: both are set, routine or not (the NDJSON stream carries them)", d.Cause, d.Remedy)
			}
		})
	}
}
