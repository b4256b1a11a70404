package pdb

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// budget builds a PDB over app=<app> with a current status.
func budget(name, app string, allowed, current, desired, expected int32, mutate ...func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: 1},
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed,
			CurrentHealthy: current, DesiredHealthy: desired, ExpectedPods: expected},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func pod(name, app, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: app, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func unready(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		pod     *corev1.Pod
		pdbs    []*policyv1.PodDisruptionBudget
		want    Verdict
		mention string
	}{
		{"a pod under no budget goes", pod("p", "web", "n1"), nil, NoPDB, "no PodDisruptionBudget"},
		{"a budget with room allows", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 2, 3)}, Allowed, "pdb ns/web"},
		{"an exhausted budget waits, with its numbers", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3)}, Exhausted, "needs 2 healthy pods, has 2"},
		{"maxUnavailable 0 never allows", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 3, 3, 3, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		})}, Never, "maxUnavailable 0"},
		{"maxUnavailable 0% never allows", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 3, 3, 3, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable = ptr.To(intstr.FromString("0%"))
		})}, Never, "maxUnavailable 0%"},
		{"minAvailable 100% never allows", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 3, 3, 3, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptr.To(intstr.FromString("100%"))
		})}, Never, "minAvailable 100%"},
		{"minAvailable equal to the replicas never allows", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1, 1, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(1))
		})}, Never, "expects only 1"},
		{"two budgets answer 500, naming both", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("a", "web", 1, 3, 2, 3), budget("b", "web", 1, 3, 2, 3)}, Multiple, "pdb ns/a and pdb ns/b"},
		{"a stale status is still being processed", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 2, 3, func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 })}, Stale, "still being processed"},
		{"a negative budget is reported", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", -1, 1, 2, 3)}, Negative, "below zero"},
		{"a pending pod ignores budgets", pod("p", "web", "n1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3)}, IgnoresPDB, "Pending"},
		{"a succeeded pod ignores even two budgets", pod("p", "web", "n1", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), []*policyv1.PodDisruptionBudget{budget("a", "web", 0, 2, 2, 3), budget("b", "web", 0, 2, 2, 3)}, IgnoresPDB, "Succeeded"},
		{"a terminating pod ignores budgets", pod("p", "web", "n1", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3)}, IgnoresPDB, "terminating"},
		{"an unready pod goes while the budget is healthy (IfHealthyBudget)", pod("p", "web", "n1", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3)}, Unhealthy, "has its 2 healthy pods"},
		{"an unready pod waits while the budget is unhealthy (IfHealthyBudget)", pod("p", "web", "n1", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 2, 3)}, Exhausted, "needs 2 healthy pods, has 1"},
		{"an unready pod goes under AlwaysAllow", pod("p", "web", "n1", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 2, 3, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
		})}, Unhealthy, "AlwaysAllow"},
		{"a budget in another namespace does not select the pod", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3, func(p *policyv1.PodDisruptionBudget) { p.Namespace = "other" })}, NoPDB, ""},
		{"an invalid selector is skipped as the server does", pod("p", "web", "n1"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}
		})}, NoPDB, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex(tc.pdbs)
			d := Decide(tc.pod, ix.For(tc.pod))
			if d.Verdict != tc.want {
				t.Fatalf("verdict = %s (%s), want %s", d.Verdict, d.Reason, tc.want)
			}
			if !strings.Contains(d.Reason, tc.mention) {
				t.Errorf("reason %q does not mention %q", d.Reason, tc.mention)
			}
		})
	}
}

func TestSimulate(t *testing.T) {
	many := func(app string, n int) []*corev1.Pod {
		var ps []*corev1.Pod
		for i := range n {
			ps = append(ps, pod(fmt.Sprintf("%s-%d", app, i), app, "n1"))
		}
		return ps
	}
	tests := []struct {
		name        string
		pods        []*corev1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		replaceable Replaceable
		wantWaves   []int // per pod, in plan order
		wantBlocker string
	}{
		{
			name:      "maxUnavailable 1 over four pods takes four waves",
			pods:      many("web", 4),
			pdbs:      []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 4, 3, 4)},
			wantWaves: []int{1, 2, 3, 4},
		},
		{
			name:      "a budget of two takes pods two at a time",
			pods:      many("web", 4),
			pdbs:      []*policyv1.PodDisruptionBudget{budget("web", "web", 2, 4, 2, 4)},
			wantWaves: []int{1, 1, 2, 2},
		},
		{
			name:      "independent budgets go in the same wave",
			pods:      append(many("a", 1), many("b", 1)...),
			pdbs:      []*policyv1.PodDisruptionBudget{budget("a", "a", 1, 2, 1, 2), budget("b", "b", 1, 2, 1, 2)},
			wantWaves: []int{1, 1},
		},
		{
			name:      "an exhausted budget starts in the second wave",
			pods:      many("web", 1),
			pdbs:      []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 3)},
			wantWaves: []int{2},
		},
		{
			name:        "maxUnavailable 0 never goes",
			pods:        many("web", 2),
			pdbs:        []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2, 2, func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(0)) })},
			wantWaves:   []int{0, 0},
			wantBlocker: "never allows",
		},
		{
			name:        "no node to take replacements: the first pod goes, the rest deadlock",
			pods:        many("web", 3),
			pdbs:        []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 2, 3)},
			replaceable: func(*corev1.Pod) bool { return false },
			wantWaves:   []int{1, 0, 0},
			wantBlocker: "no node to run on",
		},
		{
			name:      "critical pods go last",
			pods:      []*corev1.Pod{pod("a-crit", "x", "n1", func(p *corev1.Pod) { p.Spec.PriorityClassName = SystemNodeCritical }), pod("b", "y", "n1")},
			wantWaves: []int{1, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := Simulate(tc.pods, NewIndex(tc.pdbs), tc.replaceable)
			var got []int
			for _, s := range plan.Steps {
				got = append(got, s.Wave)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.wantWaves) {
				t.Fatalf("waves = %v, want %v", got, tc.wantWaves)
			}
			for _, s := range plan.Blocked() {
				if !strings.Contains(s.Blocker, tc.wantBlocker) {
					t.Errorf("blocker %q does not mention %q", s.Blocker, tc.wantBlocker)
				}
			}
		})
	}
	t.Run("critical pods are ordered after ordinary ones", func(t *testing.T) {
		plan := Simulate([]*corev1.Pod{pod("a-crit", "x", "n1", func(p *corev1.Pod) { p.Spec.PriorityClassName = SystemClusterCritical }), pod("b", "y", "n1")}, NewIndex(nil), nil)
		if plan.Steps[0].Pod.Name != "b" || plan.Steps[1].Pod.Name != "a-crit" {
			t.Errorf("order = %s, %s; want b, a-crit", plan.Steps[0].Pod.Name, plan.Steps[1].Pod.Name)
		}
	})
}

func TestPlaceable(t *testing.T) {
	node := func(name string, mutate ...func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "a"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	p := pod("p", "web", "n1", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"pool": "a"} })
	tests := []struct {
		name  string
		nodes []*corev1.Node
		want  bool
	}{
		{"another matching node takes it", []*corev1.Node{node("n1"), node("n2")}, true},
		{"only draining nodes", []*corev1.Node{node("n1")}, false},
		{"the other node is cordoned", []*corev1.Node{node("n1"), node("n2", func(n *corev1.Node) { n.Spec.Unschedulable = true })}, false},
		{"the other node does not match the selector", []*corev1.Node{node("n1"), node("n2", func(n *corev1.Node) { n.Labels["pool"] = "b" })}, false},
		{"the other node has an untolerated taint", []*corev1.Node{node("n1"), node("n2", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		})}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Placeable(tc.nodes, map[string]bool{"n1": true})(p); got != tc.want {
				t.Errorf("placeable = %v, want %v", got, tc.want)
			}
		})
	}
}
