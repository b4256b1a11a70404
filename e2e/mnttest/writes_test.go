package mnttest

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// Every write of the object is one MODIFIED event on a watch (a poll could miss two
	// writes between two reads).
	wc, err := client.NewWithWatch(shared.Config, client.Options{Scheme: mc.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(e.Ctx, &mntv1.MaintenanceList{}, client.MatchingFields{"metadata.name": e.NS})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const window = 30 * time.Second
	writes := 0
	end := time.NewTimer(window)
	defer end.Stop()
	for watching := true; watching; {
		select {
		case ev, ok := <-w.ResultChan():
			switch {
			case !ok:
				t.Fatal("the watch of the Maintenance ended early")
			case ev.Type == watch.Error:
				t.Fatalf("watch of the Maintenance: %v", ev.Object)
			case ev.Type == watch.Modified:
				writes++
			}
		case <-end.C:
			watching = false
		}
	}
	t.Logf("FIGURE status writes during a long wait: %d in %s (%.1f per minute)", writes, window, float64(writes)*float64(time.Minute)/float64(window))
	if most := int(window / (5 * time.Second)); writes > most {
		t.Errorf("%d status writes in %s of an unchanged wait, want at most %d (one per 5 s)", writes, window, most)
	}
}
