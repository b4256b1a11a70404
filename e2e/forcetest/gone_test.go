package forcetest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// A node deleted while it drains (its pod waits on a budget that never allows a
// disruption) ends its drain at once, gone, in one line, and the run exits 0: it was the
// only node. plan first lists the pod --on-blocked=force would force (exit 0: the policy
// ends the blocker; with --never-force it does not, exit 3). The guard is on; it
// accepts only the pod garbage collector's deletion of the pods of the deleted node.
func TestNodeDeletedMidDrainEndsItsDrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b")
	e.AddNodes(0, 1)
	a := e.Nodes[0]
	ledger(t, e, "ledger", a)
	pod := podsOf(t, e, "ledger")[0]
	key := e.NS + "/" + pod.Name

	p := e.Run("plan", a, "--on-blocked=force", "--force-after", "1m")
	if p.Code != 0 {
		t.Errorf("plan exit %d, want 0 (the one pod that can never go as things stand would be forced; issue 40)", p.Code)
	}
	mustContain(t, "plan", p.Stdout, "force (--on-blocked=force --force-after 1m0s): 1 pod(s) whose budget allows nothing now would be deleted",
		"would force pod "+key+" on "+a+": pdb "+e.NS+"/ledger")
	np := e.Run("plan", a, "--on-blocked=force", "--force-after", "1m", "--never-force", e.NS+"/ledger")
	mustContain(t, "plan --never-force", np.Stdout, "none would be forced as things stand")
	if np.Code != 3 {
		t.Errorf("plan --never-force exit %d, want 3 (the pod is never forced: it can never go)", np.Code)
	}

	g := e.Guard()
	g.Tolerate(func(p *corev1.Pod) string {
		if p.Spec.NodeName == a {
			return "its node was deleted (pod garbage collection)"
		}
		return ""
	})
	done := make(chan fixture.Result, 1)
	go func() { done <- e.Run("drain", a, "--timeout", "5m") }()
	// The drain holds the node and its pod waits on the budget (the drain's DrainBlocked
	// Event on the node says so).
	if err := wait.PollUntilContextTimeout(e.Ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := e.C.CoreV1().Nodes().Get(ctx, a, metav1.GetOptions{})
		if err != nil || n.Labels[noderecord.LabelState] != noderecord.StateDraining {
			return false, nil
		}
		evs, err := e.C.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + a + ",reason=DrainBlocked"})
		return err == nil && len(evs.Items) > 0, nil
	}); err != nil {
		t.Fatalf("node %s never draining with its pod blocked: %v", a, err)
	}
	fixture.DeleteNodes(e.Ctx, e.C, a)
	r := <-done
	if r.Code != 0 {
		t.Fatalf("drain exit %d, want 0", r.Code)
	}
	line := "node/" + a + " gone: node " + a + " was deleted while it drained: its drain ends, 1 pod(s) not evicted went with it"
	mustContain(t, "stdout", r.Stdout, line)
	if strings.Count(r.Stdout+r.Stderr, " was deleted while it drained") != 1 {
		t.Errorf("the gone node is said more than once:\n%s%s", r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stderr, "timed out") {
		t.Errorf("the drain waited for its timeout:\n%s", r.Stderr)
	}
}
