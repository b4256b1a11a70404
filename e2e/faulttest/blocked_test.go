package faulttest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// Issue 34.1: kube-controller-manager killed 2 s into a drain of three nodes under
// --on-blocked=skip --blocked-after 15s, with a budget that binds (6 pods, minAvailable
// 5), and restarted 40 s later. While it is away the budget's status is not current (it
// counts a gone pod as disrupted, or it does not count a Ready replacement): that is an
// outage, not a verdict, so no node is given up; once it is back the drain finishes
// (exit 0). Not parallel: every other test's budgets would freeze too.
func TestControllerManagerKilledUnderSkipGivesNoNodeUp(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "ou-0", "ou-1", "ou-2", "sp-0", "sp-1")
	ensureRunning(t, cluster.ControllerManager)
	e.AddNodes(0, 1, 2)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "w", 6, e.Here(fixture.PodOptions{ReadyDelay: 2 * time.Second, SpreadByHostname: true})); err != nil {
		t.Fatal(err)
	}
	e.Ready("w", 6)
	e.PDB("w", fixture.PDBSpec{App: "w", MinAvailable: fixture.Int(5)}, 1)
	e.AddNodes(3, 4) // where the replacements go
	e.Guard()

	tl := newTimeline(t, "controller-manager-killed-under-skip")
	tl.mark("drain starts (3 nodes, 6 pods, PDB minAvailable 5, --on-blocked=skip --blocked-after 15s)")
	r := start(t, e.Ctx, shared.Kubeconfig, nil, append([]string{"drain", "--on-blocked=skip", "--blocked-after", "15s", "--timeout", "4m",
		"--progress=plain"}, e.Nodes[:3]...)...)
	time.Sleep(2 * time.Second)
	if err := shared.Kill(cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault begins: kube-controller-manager SIGKILLed")
	time.Sleep(40 * time.Second)
	if err := shared.Restart(e.Ctx, cluster.ControllerManager); err != nil {
		t.Fatal(err)
	}
	tl.mark("fault ends: kube-controller-manager restarted")
	res := r.wait()
	tl.mark("drain finishes: exit %d", res.Code)
	tl.log()

	out := res.Stdout + res.Stderr
	if res.Code != 0 {
		t.Errorf("drain across a 40 s controller-manager outage: exit %d, want 0", res.Code)
	}
	if mentions(out, "given up", "Skipped nodes") {
		t.Errorf("a node was given up while the budget's status was not current")
	}
	for _, n := range e.Nodes[:3] {
		if left := appPodsOn(e, "w", n); len(left) > 0 {
			t.Errorf("node %s still runs %v after the drain", n, left)
		}
	}
}

// Issue 34.3: the pods on a node given up (--on-blocked=skip) count as left, by node, in
// the human summary line and in the NDJSON summary.
func TestGivenUpNodesPodsCountAsLeft(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "held", "spare")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "held", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("held", 2)
	e.PDB("held", fixture.PDBSpec{App: "held", MinAvailable: fixture.Int(2)}, 0) // never allows
	e.AddNodes(1)
	e.Guard()
	held := e.Nodes[0]

	js := e.Run("drain", held, "--on-blocked=skip", "--blocked-after", "3s", "--timeout", "2m", "-o", "json")
	if js.Code != 3 {
		t.Fatalf("drain -o json: exit %d, want 3 (blocked)", js.Code)
	}
	sum := js.Summary(t)
	left, _ := sum["pods_left"].(map[string]any)
	if sum["pods_pending"] != float64(2) || left[held] != float64(2) {
		t.Errorf("NDJSON summary pods_pending %v, pods_left %v; want 2, {%s: 2}", sum["pods_pending"], sum["pods_left"], held)
	}

	plain := e.Run("drain", held, "--on-blocked=skip", "--blocked-after", "3s", "--timeout", "2m", "--progress=plain")
	if plain.Code != 3 {
		t.Fatalf("drain (plain): exit %d, want 3 (blocked)", plain.Code)
	}
	fixture.MustContain(t, "human summary", plain.Stderr, "0 pod(s) evicted, 2 left ("+held+": 2)")
}

// Issue 34.2: the replacement of an evicted pod cannot be scheduled (the node is cordoned,
// every other node carries a NoSchedule taint). The final error at --timeout says what the
// wait line says: the budget's current numbers and the unschedulable replacement with the
// scheduler's reason, not "this drain's evictions in flight".
func TestUnschedulableReplacementIsTheFinalErrorsCause(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "nq-0", "nq-1", "nq-2")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "w", 6, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("w", 6)
	e.PDB("w", fixture.PDBSpec{App: "w", MaxUnavailable: fixture.Int(1)}, 1)
	taint := corev1.Taint{Key: "example.com/reserved", Value: "yes", Effect: corev1.TaintEffectNoSchedule}
	if _, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes[1:], Labels: map[string]string{"test": e.NS}, Taints: []corev1.Taint{taint}}); err != nil {
		t.Fatal(err)
	}
	e.Guard()

	res := e.Run("drain", e.Nodes[0], "--timeout", "45s", "--wait-interval", "5s", "--progress=plain")
	if res.Code != 124 {
		t.Fatalf("drain with nowhere for the replacement: exit %d, want 124", res.Code)
	}
	var final, wait string
	for _, l := range strings.Split(res.Stderr, "\n") {
		switch {
		case strings.Contains(l, "still waiting"):
			final = l
		case strings.Contains(l, "waits for pdb "+e.NS+"/w") && strings.Contains(l, "unschedulable"):
			wait = l
		}
	}
	t.Logf("FIGURE unschedulable-replacement: wait line: %s", wait)
	t.Logf("FIGURE unschedulable-replacement: final error: %s", final)
	if wait == "" {
		t.Errorf("no wait line names the unschedulable replacement")
	}
	fixture.MustContain(t, "final error", final, "pdb "+e.NS+"/w needs 5 healthy pods, has 5, allows 0", "is unschedulable: 0/3 nodes are available", "untolerated taint")
	if strings.Contains(final, "in flight") {
		t.Errorf("the final error blames this drain's evictions in flight: %s", final)
	}
}
