package draintest

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Issue 21, test 4: --surge --on-blocked=skip over nodes where one pod cannot be surged
// (a one-replica Deployment under maxUnavailable: 0). The run is not refused: the other
// node drains, the one with that pod is given up with the reason (it cannot be surged),
// and the run ends 3.
func TestSurgeRefusalFollowsOnBlockedSkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0)
	oneReplica(t, e, "strict", time.Second, fixture.PDBSpec{MaxUnavailable: fixture.Int(0)})
	e.AddNodes(1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[1]}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.AddNodes(2)
	guardSurge(t, e)
	before := deploymentState(t, e, "strict")

	r := e.Run("drain", e.Nodes[0], e.Nodes[1], "--surge", "--on-blocked=skip", "--blocked-after", "5s", "--timeout", "2m")
	if r.Code != 3 {
		t.Errorf("drain exit %d, want 3", r.Code)
	}
	mustContain(t, "output", r.Stdout+r.Stderr, "node/"+e.Nodes[1]+" drained", "node/"+e.Nodes[0]+" given up")
	n := e.Node(e.Nodes[0])
	rec := noderecord.Read(n, "")
	if !n.Spec.Unschedulable || rec.State != noderecord.StateBlocked || !strings.Contains(rec.Blocked, e.NS+"/strict") {
		t.Errorf("node %s: unschedulable %v, record %+v; want cordoned, blocked, naming pdb strict", e.Nodes[0], n.Spec.Unschedulable, rec)
	}
	if got := noderecord.Read(e.Node(e.Nodes[1]), "").State; got != noderecord.StateDrained {
		t.Errorf("node %s state %q, want drained", e.Nodes[1], got)
	}
	if got := deploymentState(t, e, "strict"); got != before {
		t.Errorf("deployment strict: %s, want it unchanged: %s", got, before)
	}
}
