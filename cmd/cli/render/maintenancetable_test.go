package render

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// get's BLOCKED and FAILED columns count the nodes given up and failed; HOLDS (-o wide)
// lists the nodes of an unfinished object only.
func TestMaintenanceTableBlockedFailedAndHolds(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	nodes := []mntv1.NodeStatus{{Name: "n1", State: mntv1.NodeStateDrained}, {Name: "n2", State: mntv1.NodeStateBlocked}, {Name: "n3", State: "Failed"}}
	tests := map[string]struct {
		phase mntv1.Phase
		want  map[string]any
	}{
		"a running object holds its nodes": {mntv1.PhaseRunning, map[string]any{"Blocked": int64(1), "Failed": int64(1), "Holds": "n1,n2,n3"}},
		"a finished object holds none":     {mntv1.PhaseBlocked, map[string]any{"Blocked": int64(1), "Failed": int64(1), "Holds": "<none>"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: "m", CreationTimestamp: metav1.NewTime(now)},
				Spec:   mntv1.MaintenanceSpec{Action: mntv1.ActionDrain},
				Status: mntv1.MaintenanceStatus{Phase: tc.phase, Nodes: nodes, Counts: mntv1.Counts{NodesDrained: 1, NodesFailed: 1}}}
			table := MaintenanceTable(&mntv1.MaintenanceList{Items: []mntv1.Maintenance{m}}, now)
			got := map[string]any{}
			for i, c := range table.ColumnDefinitions {
				if _, ok := tc.want[c.Name]; ok {
					got[c.Name] = table.Rows[0].Cells[i]
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("columns %v, want %v", got, tc.want)
			}
		})
	}
}
