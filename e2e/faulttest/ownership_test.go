package faulttest

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 21, test 1: run A drains a5, b4 and b5 one at a time with a --not-after deadline
// that passes while a5 drains; run B drains b4 while A holds it. B says b4 is held by A
// and waits; at A's deadline A leaves b4 cordoned to B (it says so) instead of undoing
// it, and uncordons b5, which nobody waits for; B drains b4, which ends cordoned, drained,
// with B's record. Nothing is violated.
func TestTwoRunsOnOneNodeTheFirstLeavesItToTheSecond(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a5", "b4", "b5", "spare")
	a5, b4, b5 := e.Nodes[0], e.Nodes[1], e.Nodes[2]
	e.AddNodes(0)
	waitSchedulable(t, e, a5)
	// a5's drain takes a while: three pods under a budget of one, each replacement 4 s
	// from Ready.
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "slow", 3, e.Here(fixture.PodOptions{ReadyDelay: 4 * time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("slow", 3)
	e.PDB("slow", fixture.PDBSpec{App: "slow", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1)
	waitSchedulable(t, e, b4)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 3, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": b4}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 3)
	e.AddNodes(2, 3)
	e.Guard()

	a := start(t, e.Ctx, shared.Kubeconfig, nil, "drain", a5, b4, b5, "--max-parallel-nodes", "1", "--not-after", "3s", "--timeout", "2m", "--progress=plain")
	var aRun string
	waitForNode(t, e, "run A's record on "+b4, func() bool {
		rec := noderecord.Read(e.Node(b4), "")
		aRun = rec.Run.ID
		return aRun != "" && rec.State == noderecord.StateDraining
	})
	b := start(t, e.Ctx, shared.Kubeconfig, nil, "drain", b4, "--timeout", "2m", "--progress=plain")
	ra, rb := a.wait(), b.wait()

	if rb.Code != 0 {
		t.Errorf("run B: exit %d, want 0", rb.Code)
	}
	if ra.Code != 4 {
		t.Errorf("run A: exit %d, want 4 (nodes not started past --not-after)", ra.Code)
	}
	fixture.MustContain(t, "run B's output", rb.Stdout+rb.Stderr, "node "+b4+" is held by run "+aRun)
	n := e.Node(b4)
	rec := noderecord.Read(n, "")
	if !n.Spec.Unschedulable || rec.State != noderecord.StateDrained || rec.Run.ID == "" || rec.Run.ID == aRun ||
		strings.Contains(rec.Command, a5) || !strings.Contains(rec.Command, "drain "+b4) {
		t.Errorf("%s: unschedulable %v, record %+v; want cordoned, drained, with run B's record", b4, n.Spec.Unschedulable, rec)
	}
	fixture.MustContain(t, "run A's output", ra.Stdout+ra.Stderr, "node "+b4+" not started: left cordoned to run "+rec.Run.ID)
	if strings.Contains(ra.Stdout+ra.Stderr, "node/"+b4+" uncordoned") {
		t.Errorf("run A uncordoned %s, which run B held or waited for", b4)
	}
	if n := e.Node(b5); n.Spec.Unschedulable || noderecord.Touched(n) {
		t.Errorf("%s (not started, nobody waiting) not restored: unschedulable %v annotations %v", b5, n.Spec.Unschedulable, n.Annotations)
	}
	for _, p := range e.PodsOn(b4) {
		if p.Labels["app"] == "web" {
			t.Errorf("pod %s still on drained node %s", p.Name, b4)
		}
	}
}

// Issue 21, test 3: kube-controller-manager stopped for 60 s during a drain with
// --on-blocked=skip --blocked-after 20s. The budget's status freezes with the evicted pod
// still counted as disrupted: an outage, not a budget's verdict, so no node is given up;
// once the controller-manager is back the drain finishes (exit 0). Not parallel: every
// other test's budgets would freeze too. The controller-manager is stopped just before
// the drain starts, so that the first eviction is what the frozen status counts (stopped
// after an eviction, it may or may not have counted it first).
func TestControllerManagerStoppedIsNotABlockedNode(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b", "c")
	ensureRunning(t, cluster.ControllerManager)
	slowBudget(t, e, 3, time.Second)
	e.Guard()
	if err := shared.StopComponent(cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	r := start(t, e.Ctx, shared.Kubeconfig, nil, "drain", e.Nodes[0], "--on-blocked=skip", "--blocked-after", "20s", "--timeout", "4m", "--progress=plain")
	time.Sleep(time.Until(stopped.Add(60 * time.Second)))
	if err := shared.Restart(e.Ctx, cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	res := r.wait()
	if res.Code != 0 {
		t.Errorf("drain across a 60 s controller-manager outage: exit %d, want 0", res.Code)
	}
	if strings.Contains(res.Stdout+res.Stderr, "given up") {
		t.Errorf("the drain gave a node up during the outage")
	}
	n := e.Node(e.Nodes[0])
	if rec := noderecord.Read(n, ""); rec.State != noderecord.StateDrained || !n.Spec.Unschedulable {
		t.Errorf("node %s: record %+v, unschedulable %v; want drained and cordoned", e.Nodes[0], rec, n.Spec.Unschedulable)
	}
	if left := appPodsOn(e, "web", e.Nodes[0]); len(left) > 0 {
		t.Errorf("pods left on %s: %v", e.Nodes[0], left)
	}
}

// waitForNode polls cond (the env's deadline bounds it).
func waitForNode(t *testing.T, e *fixture.Env, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if e.Ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
