package bench

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// On the real control plane: a disruptedPods entry naming a StatefulSet pod that exists
// (what a replacement meeting its predecessor's entry looks like) holds the budget, the
// disruption controller keeping it; clearReplaced removes it and the controller gives the
// allowance back.
func TestClearReplacedFreesTheBudget(t *testing.T) {
	c := cluster.Need(t, shared)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := c.Client
	ns, err := fixture.Namespace(ctx, cl, "settle")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []string{ns + "-a", ns + "-b"}
	if _, err := fixture.CreateNodes(ctx, cl, fixture.NodeSpec{Names: nodes, Labels: map[string]string{"settle": ns}}); err != nil {
		t.Fatal(err)
	}
	defer fixture.DeleteNodes(context.Background(), cl, nodes...)
	if _, err := fixture.StatefulSet(ctx, cl, ns, "db", 2, fixture.PodOptions{NodeSelector: map[string]string{"settle": ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PDB(ctx, cl, ns, "db", fixture.PDBSpec{App: "db", MaxUnavailable: fixture.Int(1)}); err != nil {
		t.Fatal(err)
	}
	pods, err := fixture.WaitPodsReady(ctx, cl, ns, "app=db", 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fixture.WaitPDBAllows(ctx, cl, ns, "db", 1)
	if err != nil {
		t.Fatal(err)
	}
	// The entry a replacement meets: its own name, written by an eviction before it was
	// created.
	held := pods[0]
	b = b.DeepCopy()
	b.Status.DisruptedPods = map[string]metav1.Time{held.Name: metav1.NewTime(held.CreationTimestamp.Add(-5 * time.Second))}
	b.Status.DisruptionsAllowed = 0
	if _, err := cl.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err = fixture.WaitPDB(ctx, cl, ns, "db", func(p *policyv1.PodDisruptionBudget) bool {
		_, listed := p.Status.DisruptedPods[held.Name]
		return listed && p.Status.DisruptionsAllowed == 0
	})
	if err != nil {
		t.Fatalf("the controller did not keep the entry of a pod that exists: %v", err)
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Namespace+"/"+p.Name] = p
	}
	// A conflict (the controller wrote since) clears nothing; the settle looks again, so
	// does this test.
	n := 0
	for try := 0; n == 0 && try < 10; try++ {
		if try > 0 {
			if b, err = cl.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if n, err = clearReplaced(ctx, cl, b, byName); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Fatalf("cleared %d entries in 10 looks, want 1", n)
	}
	if _, err := fixture.WaitPDBAllows(ctx, cl, ns, "db", 1); err != nil {
		t.Fatalf("the budget did not allow a disruption again: %v", err)
	}
}
