package mnttest

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 22: status is written when something changes, at most every few seconds per
// object, never per eviction: during a long wait on a budget that never allows, the
// object's resourceVersion moves at most once per 5 s (the figure is logged per minute).
func TestStatusWritesDuringALongWait(t *testing.T) {
	e := newEnv(t, "a", "spare")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "solo", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("solo", 1)
	e.PDB("solo", fixture.PDBSpec{App: "solo", MinAvailable: fixture.Int(1)}, 0) // never allows
	e.AddNodes(1)
	e.Guard()
	mc := mclient(t)
	startController(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0), Drain: mntv1.DrainSettings{IgnoreDaemonSets: true}})
	waitFor(e, mc, e.NS, "a node waiting on the budget", func(m *mntv1.Maintenance) bool {
		return m.Status.Phase == mntv1.PhaseRunning && len(m.Status.Nodes) == 1 && len(m.Status.Nodes[0].Blockers) > 0
	})
	const window = 30 * time.Second
	writes, last := 0, ""
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		m := &mntv1.Maintenance{}
		if err := mc.Get(e.Ctx, types.NamespacedName{Name: e.NS}, m); err != nil {
			t.Fatal(err)
		}
		if last != "" && m.ResourceVersion != last {
			writes++
		}
		last = m.ResourceVersion
	}
	t.Logf("FIGURE status writes during a long wait: %d in %s (%.1f per minute)", writes, window, float64(writes)*float64(time.Minute)/float64(window))
	if most := int(window / (5 * time.Second)); writes > most {
		t.Errorf("%d status writes in %s of an unchanged wait, want at most %d (one per 5 s)", writes, window, most)
	}
}
