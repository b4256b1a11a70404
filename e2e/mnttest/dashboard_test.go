package mnttest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kubectl-maintenance/kubectl-maintenance/dashboard/source"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Issue 22: the dashboard lists Maintenances (its source's snapshots) and pauses, resumes
// and cancels them (its backend), on the real cluster with the controller running.
func TestDashboardListsPausesResumesAndCancelsAMaintenance(t *testing.T) {
	e, mc := slowDrainWithController(t)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})

	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New(source.Config{Kube: e.C, Dynamic: dyn, Server: shared.Config.Host})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	var wg sync.WaitGroup
	wg.Go(func() { src.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	b := fixture.Dashboard(t, ctx, shared.Kubeconfig)

	// row waits for the source's row of the object to satisfy ok.
	row := func(what string, ok func(data.MaintenanceRow) bool) data.MaintenanceRow {
		t.Helper()
		deadline := time.After(90 * time.Second)
		for {
			select {
			case snap := <-src.Snapshots():
				for _, r := range snap.Maintenances {
					if r.Name == e.NS && ok(r) {
						return r
					}
				}
			case <-deadline:
				t.Fatalf("the dashboard never showed maintenance/%s %s", e.NS, what)
			}
		}
	}
	r := row("Running with an eviction", func(r data.MaintenanceRow) bool { return r.Phase == "Running" && r.Action == "Drain" })
	t.Logf("listed: %+v", r)
	// status, from any shell, says which Maintenance holds the nodes.
	waitStatus := time.Now().Add(30 * time.Second)
	for {
		st := e.Run("status")
		if strings.Contains(st.Stdout, "HELD-BY") && strings.Contains(st.Stdout, "maintenance/"+e.NS) {
			break
		}
		if time.Now().After(waitStatus) {
			t.Fatalf("status never named maintenance/%s as the holder:\n%s", e.NS, st.Stdout)
		}
		time.Sleep(time.Second)
	}

	if err := b.ControlMaintenance(e.NS, tui.MaintenancePause); err != nil {
		t.Fatalf("pause: %v", err)
	}
	row("Paused", func(r data.MaintenanceRow) bool { return r.Paused && r.Phase == "Paused" })
	if err := b.ControlMaintenance(e.NS, tui.MaintenanceResume); err != nil {
		t.Fatalf("resume: %v", err)
	}
	row("resumed", func(r data.MaintenanceRow) bool { return !r.Paused && r.Phase != "Paused" })
	if err := b.ControlMaintenance(e.NS, tui.MaintenanceCancel); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	waitGone(e, mc, e.NS)
	for _, n := range names(e, 0, 1) {
		if !e.Node(n).Spec.Unschedulable {
			t.Errorf("node %s uncordoned by the cancel, want it left cordoned", n)
		}
	}
}
