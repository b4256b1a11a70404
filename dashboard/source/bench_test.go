package source

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// bigCluster builds 1,000 nodes, 30,000 pods (30 per node, 3,000 apps of 10) and 3,000 PDBs.
func bigCluster() ([]*corev1.Node, []*corev1.Pod, []*policyv1.PodDisruptionBudget) {
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	var pdbs []*policyv1.PodDisruptionBudget
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for i := range 1000 {
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i),
			Labels: map[string]string{fmt.Sprintf("node-role.kubernetes.io/pool-%d", i%5): ""}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	}
	for a := range 3000 {
		app := fmt.Sprintf("app-%04d", a)
		ns := fmt.Sprintf("ns-%02d", a%50)
		pdbs = append(pdbs, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, Generation: 1},
			Spec:   policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 10, DesiredHealthy: 9, ExpectedPods: 10}})
		for r := range 10 {
			pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", app, r), Namespace: ns, Labels: map[string]string{"app": app}},
				Spec:   corev1.PodSpec{NodeName: nodes[(a*10+r)%1000].Name},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready}})
		}
	}
	return nodes, pods, pdbs
}

// BenchmarkBuildSnapshot is the read model's rebuild (the source's feeder).
func BenchmarkBuildSnapshot(b *testing.B) {
	nodes, pods, pdbs := bigCluster()
	b.ReportAllocs()
	for b.Loop() {
		Build(nodes, pods, pdbs, nil, time.Now())
	}
}
