package faulttest

import (
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 10, test 6, and issue 21, test 2: two drain processes over overlapping nodes at
// once. Both end 0, the one that finds the shared node held by the other says so naming
// it and waits, no budget is violated, every node is empty and its record consistent
// (drained, by the run that drained it).
func TestTwoDrainsOverOverlappingNodes(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a", "b", "c", "d")
	e.AddNodes(0, 1, 2)
	for _, n := range e.Nodes[:3] {
		waitSchedulable(t, e, n)
	}
	// Two pods prefer each of a, b and c; one budget over all six, whose replacements take
	// 2 s to become Ready, so the two drains share a slow budget for a while.
	const pods = 6
	for _, n := range e.Nodes[:3] {
		tmpl := fixture.PodTemplate("web-"+n[len(n)-1:], e.Here(fixture.PodOptions{ReadyDelay: 2 * time.Second}))
		tmpl.Labels["tier"] = "web"
		tmpl.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{n}}}}}}}}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: tmpl.Labels["app"], Namespace: e.NS}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": tmpl.Labels["app"]}}, Template: tmpl}}
		if _, err := e.C.AppsV1().Deployments(e.NS).Create(e.Ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fixture.WaitPodsReady(e.Ctx, e.C, e.NS, "tier=web", pods); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.NS}, Spec: policyv1.PodDisruptionBudgetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, MaxUnavailable: fixture.Int(1)}}
	if _, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Create(e.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.WaitPDBAllows(e.Ctx, e.C, e.NS, "web", 1); err != nil {
		t.Fatal(err)
	}
	e.AddNodes(3) // where the replacements go once a, b and c are cordoned
	for _, n := range e.Nodes[:3] {
		on := tierOn(e, n)
		t.Logf("node %s runs %v", n, on)
		if len(on) == 0 {
			t.Fatalf("setup: no pod landed on %s; the drains would not overlap on work", n)
		}
	}
	e.Guard()

	drains := [][]string{{e.Nodes[0], e.Nodes[1]}, {e.Nodes[1], e.Nodes[2]}}
	results := make([]fixture.Result, len(drains))
	var wg sync.WaitGroup
	for i, nodes := range drains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"drain", "--progress=plain", "--timeout", "3m"}, nodes...)
			results[i] = start(t, e.Ctx, shared.Kubeconfig, nil, args...).wait()
		}()
	}
	wg.Wait()
	// Issue 21, test 2: whichever run cordons the shared node first holds it; the other
	// says, in one line naming the holder, that it waits for it, and drains it once the
	// holder lets it go. Both end 0 with no re-run.
	held := 0
	for i, res := range results {
		if res.Code != 0 {
			t.Errorf("drain %v beside another: exit %d, want 0", drains[i], res.Code)
		}
		if strings.Contains(res.Stdout+res.Stderr, "node "+e.Nodes[1]+" is held by run ") {
			held++
		}
	}
	if held != 1 {
		t.Errorf("%d of the two drains said the other held %s, want 1", held, e.Nodes[1])
	}
	for _, n := range e.Nodes[:3] {
		if rec := noderecord.Read(e.Node(n), ""); rec.State != noderecord.StateDrained || rec.Run.ID == "" || !strings.Contains(rec.Command, n) {
			t.Errorf("node %s: record %+v; want drained, naming the run that drained it", n, rec)
		}
	}
	for _, n := range e.Nodes[:3] {
		if left := tierOn(e, n); len(left) > 0 {
			t.Errorf("node %s still runs %v after both drains", n, left)
		}
		if !e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s is schedulable after the drains", n)
		}
	}
	if _, err := fixture.WaitPodsReady(e.Ctx, e.C, e.NS, "tier=web", pods); err != nil {
		t.Fatal(err)
	}
}

// tierOn lists the pods labelled tier=web on node.
func tierOn(e *fixture.Env, node string) []string {
	var out []string
	for _, p := range e.PodsOn(node) {
		if p.Labels["tier"] == "web" {
			out = append(out, p.Name)
		}
	}
	return out
}
