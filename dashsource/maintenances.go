package dashsource

import (
	"fmt"
	"sort"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// MaintenanceRows are the dashboard's rows of the Maintenances: the unfinished ones
// first (by name), then the finished ones.
func MaintenanceRows(ms []*mntv1.Maintenance) []data.MaintenanceRow {
	out := make([]data.MaintenanceRow, 0, len(ms))
	for _, m := range ms {
		done := 0
		for _, n := range m.Status.Nodes {
			if mntv1.NodeStateDone(n.State, m.Spec.Action) {
				done++
			}
		}
		phase := string(m.Status.Phase)
		if phase == "" {
			phase = string(mntv1.PhasePending)
		}
		out = append(out, data.MaintenanceRow{Name: m.Name, Action: string(m.Spec.Action), Phase: phase,
			Nodes: fmt.Sprintf("%d/%d nodes", done, len(m.Status.Nodes)), Paused: m.Spec.Paused,
			Done: m.Status.Phase.Done(), Deleting: m.DeletionTimestamp != nil, Message: message(m)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Done != out[j].Done {
			return !out[i].Done
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// message is the status message, or while the object runs, what its first waiting node
// waits on (the pod and the budget's words).
func message(m *mntv1.Maintenance) string {
	if m.Status.Message != "" || m.Status.Phase.Done() {
		return m.Status.Message
	}
	for _, n := range m.Status.Nodes {
		if len(n.Blockers) > 0 {
			b := n.Blockers[0]
			return fmt.Sprintf("%s waits: %s: %s", n.Name, b.Pod, b.Message)
		}
	}
	return ""
}
