package mnttest

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/outcome"
)

// drain --server-side --on-blocked=force: the controller deletes the pod whose budget
// never allows a disruption once it has been blocked for forceAfter; the Maintenance ends
// in phase Forced (Progressing reason FinishedByForce) counting the forced pod apart, and
// the follower exits 5 as a local run would. No guard: the pod is deleted on purpose.
func TestServerSideForceEndsInPhaseForced(t *testing.T) {
	e := newEnv(t, "a", "spare")
	e.AddNodes(0, 1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "db", 1, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[0]}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("db", 1)
	e.PDB("db", fixture.PDBSpec{App: "db", MinAvailable: fixture.Int(1)}, 0)
	startController(e)
	name := e.NS + "-force"
	r := e.Run("drain", "--server-side", "--name", name, e.Nodes[0], "--on-blocked=force", "--force-after", "3s", "--timeout", "3m")
	if r.Code != 5 {
		t.Fatalf("exit %d, want 5 (finished by force)", r.Code)
	}
	fixture.MustContain(t, "stderr", r.Stderr, "Forced pods (deleted below their budgets, --on-blocked=force): 1")
	var m mntv1.Maintenance
	if err := mclient(t).Get(e.Ctx, types.NamespacedName{Name: name}, &m); err != nil {
		t.Fatal(err)
	}
	reason := ""
	for _, c := range m.Status.Conditions {
		if c.Type == mntv1.ConditionProgressing {
			reason = c.Reason
		}
	}
	if m.Status.Phase != mntv1.PhaseForced || reason != outcome.Forced.Reason() || m.Status.Counts.PodsForced != 1 || m.Status.Counts.PodsEvicted != 0 {
		t.Errorf("status: phase %s, Progressing reason %q, counts %+v; want Forced, %s, one pod forced and none evicted", m.Status.Phase, reason, m.Status.Counts, outcome.Forced.Reason())
	}
}
