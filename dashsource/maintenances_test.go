package dashsource

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
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
	})
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
