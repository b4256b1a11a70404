package pooltest

import (
	"fmt"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// A pool move honours --on-blocked=skip: the node holding a budget that never allows a
// disruption is given up (cordoned, state blocked, its move still recorded for a re-run),
// the other is moved, in the same batch (maxUnavailable 2) or the next (maxUnavailable 1:
// the given-up node no longer counts against the pool), and the move ends with exit 3.
func TestMoveSkipsTheBlockedNodeAndMovesTheOther(t *testing.T) {
	for _, maxUnavailable := range []int{1, 2} {
		t.Run(fmt.Sprintf("maxUnavailable %d", maxUnavailable), func(t *testing.T) {
			t.Parallel()
			moveSkip(t, maxUnavailable)
		})
	}
}

func moveSkip(t *testing.T, maxUnavailable int) {
	e := newEnv(t, "a", "b", "c")
	blue, green := e.NS+"-blue", e.NS+"-green"
	for _, p := range []string{blue, green} {
		if r := applyPool(e, poolSpecYAML(p, p, maxUnavailable, "example.com/dedicated="+p+":NoSchedule")); r.Code != 0 {
			t.Fatalf("pool apply exit %d", r.Code)
		}
	}
	poolNodes(e, blue, 0)
	o := fixture.PodOptions{NodeSelector: map[string]string{"test": e.NS}, Tolerations: tolerateAll}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "frozen", 1, o); err != nil {
		t.Fatal(err)
	}
	e.Ready("frozen", 1)
	e.PDB("frozen", fixture.PDBSpec{App: "frozen", MaxUnavailable: fixture.Int(0)}, 0)
	poolNodes(e, blue, 1)
	poolNodes(e, green, 2)
	for _, p := range []string{blue, green} { // apply syncs the pool's members (a parallel "pool sync" of all pools would race the other tests')
		if r := applyPool(e, poolSpecYAML(p, p, maxUnavailable, "example.com/dedicated="+p+":NoSchedule")); r.Code != 0 {
			t.Fatalf("pool apply exit %d", r.Code)
		}
	}
	e.Guard()

	r := e.Run("pool", "move", e.Nodes[0], e.Nodes[1], "--to", green, "--on-blocked=skip", "--blocked-after", "3s", "--timeout", "2m")
	if r.Code != 3 {
		t.Fatalf("pool move exit %d, want 3", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "Skipped nodes (blocked; left cordoned, state blocked):", e.Nodes[0]+": 1 pod(s) blocked for 3s by pdb "+e.NS+"/frozen")
	checkMoved(e, e.Nodes[1], blue, green)
	n := e.Node(e.Nodes[0])
	if !n.Spec.Unschedulable || n.Labels[noderecord.LabelState] != noderecord.StateBlocked || n.Annotations[nodepool.MoveAnnotation] == "" {
		t.Errorf("the blocked node: unschedulable %v labels %v annotations %v", n.Spec.Unschedulable, n.Labels, n.Annotations)
	}
	if _, ok := n.Labels[nodepool.RoleLabel(blue)]; !ok {
		t.Errorf("the blocked node left pool %s", blue)
	}
	if st := e.Run("status", e.Nodes[0]); st.Code != 0 {
		t.Errorf("status exit %d", st.Code)
	} else {
		fixture.MustContain(t, "status", st.Stdout, e.Nodes[0], "blocked", "never allows a disruption")
	}
}
