package faulttest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// kube-controller-manager stopped later than in TestControllerManagerStoppedMidDrain:
// after it has dropped the evicted pod from disruptedPods and created the replacement,
// before it counts the replacement Ready. The status names no gone pod; it only stops
// following its pods. The drain still calls it stale and names kube-controller-manager,
// --timeout gives 124, and once the controller-manager is back a drain finishes.
// Not parallel: every other test's budgets would freeze too.
func TestControllerManagerStoppedAfterItDroppedThePod(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	ensureRunning(t, cluster.ControllerManager)
	slowBudget(t, e, 3, 8*time.Second) // a replacement is Ready 8 s after it starts
	e.Guard()
	evictions := watchEvictions(t, e)

	tl := newTimeline(t, "controller-manager-stopped-late")
	tl.mark("drain starts (3 pods, PDB maxUnavailable 1, --timeout 70s)")
	r := start(t, e.Ctx, shared.Kubeconfig, nil, "drain", e.Nodes[0], "--progress=plain", "--timeout", "70s", "--wait-interval", "5s")
	if err := evictions.waitFor(e.Ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := synced(e.Ctx, e); err != nil {
		t.Fatalf("the disruption controller never dropped the evicted pod while its replacement was starting: %v", err)
	}
	if err := shared.StopComponent(cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault begins: kube-controller-manager stopped; disruptedPods empty, replacement not Ready yet")
	res := r.wait()
	tl.mark("drain finishes: exit %d", res.Code)
	again := restartControllerManagerAndRedrain(t, e, tl)

	if res.Code != 124 {
		t.Errorf("drain with a frozen budget and --timeout 70s: exit %d, want 124", res.Code)
	}
	// Waits on the engine: the status is called stale from its disagreement with the pods.
	fixture.MustContain(t, "drain output [engine: stale PDB status from its pods]", res.Stderr,
		"status is stale", "currentHealthy is 2 but 3", "kube-controller-manager", e.NS+"/web")
	if again.Code != 0 {
		t.Errorf("drain once kube-controller-manager is back: exit %d, want 0", again.Code)
	}
	if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
		t.Errorf("node %s still runs %v after the re-run", e.Nodes[0], left)
	}
}

// synced waits until the web budget lists no disrupted pod while a replacement exists that
// is not Ready yet: the disruption controller has seen the eviction through, and the next
// status it would write is the one counting the replacement.
func synced(ctx context.Context, e *fixture.Env) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		b, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(b.Status.DisruptedPods) > 0 || b.Status.CurrentHealthy != 2 {
			return false, nil
		}
		pods, err := e.C.CoreV1().Pods(e.NS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, nil
		}
		starting := 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && !pdb.PodReady(p) {
				starting++
			}
		}
		return starting == 1, nil
	})
}

// restartControllerManagerAndRedrain ends the fault, drains the env's first node again
// (--timeout 3m), logs the timeline and returns the re-run's result.
func restartControllerManagerAndRedrain(t *testing.T, e *fixture.Env, tl *timeline) fixture.Result {
	t.Helper()
	if err := shared.Restart(e.Ctx, cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault ends: kube-controller-manager restarted")
	again := run(t, e.Ctx, shared.Kubeconfig, "drain", e.Nodes[0], "--progress=plain", "--timeout", "3m")
	tl.mark("re-run finishes: exit %d", again.Code)
	tl.log()
	return again
}
