package progress

import (
	"fmt"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// SetMaintenances sets the Maintenances the view lists below the nodes.
func (m *Model) SetMaintenances(rows []data.MaintenanceRow) { m.mnts = rows }

// rows is how many rows the cursor moves over: the nodes, then the Maintenances.
func (m Model) rows() int { return len(m.nodes) + len(m.mnts) }

// CurrentMaintenance returns the Maintenance under the cursor (ok false when the cursor
// is on a node or there is none).
func (m Model) CurrentMaintenance() (data.MaintenanceRow, bool) {
	c := min(max(m.cursor, 0), m.rows()-1) - len(m.nodes)
	if c < 0 || c >= len(m.mnts) {
		return data.MaintenanceRow{}, false
	}
	return m.mnts[c], true
}

// maintenanceLine is one Maintenance: name, action, phase, nodes and its message.
func maintenanceLine(r data.MaintenanceRow) string {
	phase := r.Phase
	switch {
	case r.Deleting:
		phase = "Cancelling"
	case r.Paused && !r.Done && phase != "Paused":
		phase += " (pausing)"
	}
	line := fmt.Sprintf("%-24s %-8s %-14s %-11s", trunc(r.Name, 24), r.Action, phase, r.Nodes)
	if w := WindowText(r); w != "" && !r.Done {
		return line + " " + w
	}
	if r.Message != "" {
		line += " " + oneLine(r.Message)
	}
	return line
}

// WindowText is a Maintenance's window as written, with when it opens next and when that
// opening closes ("window Sat 02:00-06:00 UTC, next 2026-12-05T02:00:00Z to
// 2026-12-05T06:00:00Z"); the parts it does not know are left out, "" without a window.
func WindowText(r data.MaintenanceRow) string {
	if r.Window == "" {
		return ""
	}
	s := "window " + r.Window
	switch {
	case r.NextStart != "" && r.WindowEnd != "":
		s += ", next " + r.NextStart + " to " + r.WindowEnd
	case r.NextStart != "":
		s += ", next " + r.NextStart
	case r.WindowEnd != "":
		s += ", open until " + r.WindowEnd
	}
	return s
}
