package drain

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

var etaT0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// readyPod is a pod created at etaT0 that became Ready after ready (never, when ready < 0).
func readyPod(name string, ready time.Duration, graceSeconds int64) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(etaT0)},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(graceSeconds)}}
	if ready >= 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(etaT0.Add(ready))}}
	}
	return p
}

func budget(name string) *pdb.Budget {
	return &pdb.Budget{PDB: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}}
}

// step is a pod of the plan in wave under b (waiting on b from wave 2 on).
func step(pod *corev1.Pod, wave int, b *pdb.Budget) pdb.Step {
	s := pdb.Step{Pod: pod, Wave: wave}
	if b != nil {
		s.Decision.Budgets = []*pdb.Budget{b}
		if wave > 1 {
			s.WaitsOn = b.Key()
		}
	}
	return s
}

func TestEstimateETA(t *testing.T) {
	web, db := budget("web"), budget("db")
	tests := []struct {
		name      string
		steps     []pdb.Step
		waves     int
		grace     int
		want      event.ETA
		noHistory []string
	}{
		{
			name:  "one wave: no wait, the grace period is the most it can take",
			steps: []pdb.Step{step(readyPod("a", 5*time.Second, 30), 1, web), step(readyPod("b", 5*time.Second, 10), 1, nil)},
			waves: 1, grace: -1,
			want: event.ETA{Expected: 0, Max: 30 * time.Second},
		},
		{
			name: "three waves under one budget: two waits of its readiness (the median)",
			steps: []pdb.Step{
				step(readyPod("a", 4*time.Second, 5), 1, web),
				step(readyPod("b", 6*time.Second, 5), 2, web),
				step(readyPod("c", 50*time.Second, 5), 3, web), // one slow start does not move the median
			},
			waves: 3, grace: -1,
			want: event.ETA{Expected: 12 * time.Second, Max: 17 * time.Second},
		},
		{
			name: "a wave waits for the slowest of its budgets",
			steps: []pdb.Step{
				step(readyPod("w1", 2*time.Second, 30), 1, web), step(readyPod("d1", 20*time.Second, 30), 1, db),
				step(readyPod("w2", 2*time.Second, 30), 2, web), step(readyPod("d2", 20*time.Second, 30), 2, db),
			},
			waves: 2, grace: 0,
			want: event.ETA{Expected: 20 * time.Second, Max: 20 * time.Second},
		},
		{
			name: "a budget none of whose pods is Ready has no history: named, not guessed",
			steps: []pdb.Step{
				step(readyPod("w1", 3*time.Second, 1), 1, web),
				step(readyPod("d1", -1, 1), 1, db), step(readyPod("d2", -1, 1), 2, db),
				step(readyPod("w2", 3*time.Second, 1), 2, web),
			},
			waves: 2, grace: -1,
			want:      event.ETA{Expected: 3 * time.Second, Max: 4 * time.Second},
			noHistory: []string{"ns/db"},
		},
		{
			name:  "pods that never go count for nothing",
			steps: []pdb.Step{step(readyPod("a", time.Second, 30), 0, web)},
			waves: 0, grace: -1,
			want: event.ETA{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := &event.Plan{Nodes: []event.NodePlan{{Name: "n1", Steps: tc.steps}}, Waves: tc.waves}
			got := EstimateETA(plan, tc.grace)
			if got.Expected != tc.want.Expected || got.Max != tc.want.Max || !slices.Equal(got.NoHistory, tc.noHistory) {
				t.Fatalf("ETA = %+v, want expected %s, max %s, no history %v", got, tc.want.Expected, tc.want.Max, tc.noHistory)
			}
			if got.Known() != (len(tc.noHistory) == 0) {
				t.Errorf("Known() = %v", got.Known())
			}
		})
	}
}

func TestReadyAfterStart(t *testing.T) {
	restarted := readyPod("r", 100*time.Second, 30)
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 2,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(etaT0.Add(90 * time.Second))}}}}
	stale := readyPod("s", 10*time.Second, 30)
	stale.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 1,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(etaT0.Add(60 * time.Second))}}}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want time.Duration
		ok   bool
	}{
		{name: "a new pod: from its creation to Ready", pod: readyPod("a", 7*time.Second, 30), want: 7 * time.Second, ok: true},
		{name: "a restarted container: from its last start", pod: restarted, want: 10 * time.Second, ok: true},
		{name: "not Ready: no history", pod: readyPod("b", -1, 30)},
		{name: "Ready before its last start: the status says nothing", pod: stale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReadyAfterStart(tc.pod)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("got %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
