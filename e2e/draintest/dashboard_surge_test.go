package draintest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// Issue 20, test 2: a dashboard uncordon (through its Backend, no terminal) of a node a
// --surge drain left surged restores the Deployment's replicas, as the CLI's uncordon does.
func TestDashboardUncordonRestoresASurge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a")
	e.AddNodes(0)
	oneReplica(t, e, "web", time.Second, fixture.PDBSpec{MinAvailable: fixture.Int(1)})
	guardSurge(t, e)
	w := watchReady(t, e, "web")

	// Nowhere for the surged pod to go: the drain times out with the Deployment surged.
	if r := e.Run("drain", e.Nodes[0], "--surge", "--timeout", "5s"); r.Code != 124 {
		t.Fatalf("drain --surge with nowhere to go: exit %d, want 124\n%s", r.Code, r.Stderr)
	}
	if got := deploymentState(t, e, "web"); got == restoredState {
		t.Fatalf("after the timeout: %s, want it still surged", got)
	}

	b := fixture.Dashboard(t, e.Ctx, shared.Kubeconfig)
	ch, stop, err := b.Start(confirm.Request{Action: confirm.Uncordon, Nodes: []string{e.Nodes[0]}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var types []event.Type
	for ev := range ch {
		types = append(types, ev.Type)
		if ev.Type == event.EventNodeFailed {
			t.Errorf("the dashboard's uncordon failed: %s", ev.Message)
		}
	}
	if len(types) != 2 || types[0] != event.EventDeploymentRestored || types[1] != event.EventNodeUncordoned {
		t.Errorf("the dashboard's uncordon emitted %v, want deployment.restored then node.uncordoned", types)
	}
	if got := deploymentState(t, e, "web"); got != restoredState {
		t.Errorf("after the dashboard's uncordon: %s, want %s", got, restoredState)
	}
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Error("the dashboard's uncordon left the node cordoned")
	}
	if _, err := fixture.WaitPods(e.Ctx, e.C, e.NS, "app=web", func(ps []*corev1.Pod) bool { return len(ps) == 1 && fixture.PodReady(ps[0]) }); err != nil {
		t.Fatal(err)
	}
	if least, _, zeroAt := w.result(); least < 1 {
		t.Errorf("a watcher saw no Ready pod of web at %s", zeroAt)
	}
}
