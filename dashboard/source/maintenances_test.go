package source

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Maintenance rows: unfinished first, nodes done counted by the action, the message of a
// running object is what its first waiting node waits on.
func TestMaintenanceRows(t *testing.T) {
	mk := func(name string, action mntv1.Action, phase mntv1.Phase, nodes ...mntv1.NodeStatus) *mntv1.Maintenance {
		return &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mntv1.MaintenanceSpec{Action: action},
			Status: mntv1.MaintenanceStatus{Phase: phase, Nodes: nodes}}
	}
	rows := MaintenanceRows([]*mntv1.Maintenance{
		mk("a-done", mntv1.ActionDrain, mntv1.PhaseSucceeded, mntv1.NodeStatus{Name: "n1", State: "Drained"}),
		mk("b-running", mntv1.ActionDrain, mntv1.PhaseRunning, mntv1.NodeStatus{Name: "n1", State: "Drained"},
			mntv1.NodeStatus{Name: "n2", State: "Draining", Blockers: []mntv1.Blocker{{Pod: "shop/db-0", Message: "pdb shop/db allows 0"}}}),
		mk("c-cordon", mntv1.ActionCordon, ""),
	}, time.Now())
	tests := []struct {
		name, nodes, phase, msg string
		done                    bool
	}{
		{"b-running", "1/2 nodes", "Running", "n2 waits: shop/db-0: pdb shop/db allows 0", false},
		{"c-cordon", "0/0 nodes", "Pending", "", false},
		{"a-done", "1/1 nodes", "Succeeded", "", true},
	}
	if len(rows) != len(tests) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(tests), rows)
	}
	for i, tc := range tests {
		r := rows[i]
		if r.Name != tc.name || r.Nodes != tc.nodes || r.Phase != tc.phase || r.Message != tc.msg || r.Done != tc.done {
			t.Errorf("row %d = %+v, want %+v", i, r, tc)
		}
	}
}

// A window is shown as written, with its next opening and that opening's end; a node is
// marked with the Maintenance that holds it, else the one that plans it.
func TestMaintenanceWindowAndNodeMarks(t *testing.T) {
	now := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC) // a Saturday, after 06:00
	ts := func(s string) *metav1.Time { tm, _ := time.Parse(time.RFC3339, s); return &metav1.Time{Time: tm} }
	tests := []struct {
		name                string
		w                   *mntv1.Window
		next                *metav1.Time
		written, start, end string
	}{
		{"weekly, from the spec", &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{"Sat"}, Start: "02:00", End: "06:00"}}, nil,
			"Sat 02:00-06:00 UTC", "2026-12-05T02:00:00Z", "2026-12-05T06:00:00Z"},
		{"weekly, the status's next start", &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{"Sat"}, Start: "02:00", End: "06:00"}}, ts("2026-12-05T02:00:00Z"),
			"Sat 02:00-06:00 UTC", "2026-12-05T02:00:00Z", "2026-12-05T06:00:00Z"},
		{"one-shot", &mntv1.Window{Start: ts("2026-12-01T00:00:00Z"), End: ts("2026-12-01T04:00:00Z")}, nil,
			"from 2026-12-01T00:00:00Z until 2026-12-01T04:00:00Z", "2026-12-01T00:00:00Z", "2026-12-01T04:00:00Z"},
		{"none", nil, nil, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Window: tc.w},
				Status: mntv1.MaintenanceStatus{Phase: mntv1.PhaseScheduled, NextStart: tc.next}}
			r := MaintenanceRows([]*mntv1.Maintenance{m}, now)[0]
			if r.Window != tc.written || r.NextStart != tc.start || r.WindowEnd != tc.end {
				t.Errorf("window %q next %q end %q, want %q %q %q", r.Window, r.NextStart, r.WindowEnd, tc.written, tc.start, tc.end)
			}
		})
	}

	snap := data.Snapshot{Nodes: []data.NodeRow{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}}}
	snap.Maintenances = MaintenanceRows([]*mntv1.Maintenance{
		{ObjectMeta: metav1.ObjectMeta{Name: "weekly"}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{"n2", "n1"}},
			Status: mntv1.MaintenanceStatus{Phase: mntv1.PhaseScheduled}},
		{ObjectMeta: metav1.ObjectMeta{Name: "now"}, Spec: mntv1.MaintenanceSpec{Action: mntv1.ActionDrain},
			Status: mntv1.MaintenanceStatus{Phase: mntv1.PhaseRunning, Nodes: []mntv1.NodeStatus{{Name: "n1", State: "Draining"}}}},
	}, now)
	MarkNodes(&snap)
	for i, want := range []data.NodeRow{{Name: "n1", Maintenance: "now", MaintenancePhase: "Running", Held: true},
		{Name: "n2", Maintenance: "weekly", MaintenancePhase: "Scheduled"}, {Name: "n3"}} {
		if got := snap.Nodes[i]; got.Maintenance != want.Maintenance || got.MaintenancePhase != want.MaintenancePhase || got.Held != want.Held {
			t.Errorf("node %d = %+v, want %+v", i, snap.Nodes[i], want)
		}
	}
}
