package pdb

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fleet is 1,000 nodes, 30,000 pods (3,000 apps of 10, in 50 namespaces), 3,000 PDBs.
func fleet() ([]*corev1.Node, []*corev1.Pod, []*policyv1.PodDisruptionBudget) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	var pdbs []*policyv1.PodDisruptionBudget
	for i := range 1000 {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	}
	for a := range 3000 {
		app, ns := fmt.Sprintf("app-%04d", a), fmt.Sprintf("ns-%02d", a%50)
		p := budget(app, app, 1, 10, 9, 10)
		p.Namespace = ns
		pdbs = append(pdbs, p)
		for r := range 10 {
			pd := pod(fmt.Sprintf("%s-%d", app, r), app, nodes[(a*10+r)%1000].Name)
			pd.Namespace = ns
			pods = append(pods, pd)
		}
	}
	return nodes, pods, pdbs
}

// BenchmarkPlanWholeFleet simulates draining all 1,000 nodes at once: every pod's
// budgets, the decision, the cumulative waves and the placement check.
func BenchmarkPlanWholeFleet(b *testing.B) {
	nodes, pods, pdbs := fleet()
	draining := map[string]bool{}
	for _, n := range nodes {
		draining[n.Name] = true
	}
	b.ReportAllocs()
	for b.Loop() {
		Simulate(pods, NewIndex(pdbs), Placeable(nodes, draining))
	}
}

// BenchmarkPlanTenNodes simulates a drain of 10 nodes (300 pods) in the same fleet.
func BenchmarkPlanTenNodes(b *testing.B) {
	nodes, pods, pdbs := fleet()
	draining := map[string]bool{}
	var mine []*corev1.Pod
	for _, n := range nodes[:10] {
		draining[n.Name] = true
	}
	for _, p := range pods {
		if draining[p.Spec.NodeName] {
			mine = append(mine, p)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Simulate(mine, NewIndex(pdbs), Placeable(nodes, draining))
	}
}

// BenchmarkDecideEveryPod classifies all 30,000 pods against 3,000 budgets.
func BenchmarkDecideEveryPod(b *testing.B) {
	_, pods, pdbs := fleet()
	ix := NewIndex(pdbs)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pods {
			Decide(p, ix.For(p))
		}
	}
}
