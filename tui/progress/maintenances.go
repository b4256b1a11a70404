package progress

import (
	"fmt"
	"time"

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
	if r.Window != "" && !r.Done {
		return line // the window's own line follows (WindowText)
	}
	if r.Message != "" {
		line += " " + oneLine(r.Message)
	}
	return line
}

// WindowText is a Maintenance's window as written, with when it opens next and when that
// opening closes ("window Sat 02:00-06:00 UTC; next 2026-12-05 02:00-06:00 UTC"); the
// parts it does not know are left out, "" without a window.
func WindowText(r data.MaintenanceRow) string {
	if r.Window == "" {
		return ""
	}
	s := "window " + r.Window
	start, errS := time.Parse(time.RFC3339, r.NextStart)
	end, errE := time.Parse(time.RFC3339, r.WindowEnd)
	const day, hm = "2006-01-02 15:04", "15:04"
	switch {
	case errS == nil && errE == nil && start.UTC().YearDay() == end.UTC().YearDay():
		s += "; next " + start.UTC().Format(day) + "-" + end.UTC().Format(hm) + " UTC"
	case errS == nil && errE == nil:
		s += "; next " + start.UTC().Format(day) + " UTC to " + end.UTC().Format(day) + " UTC"
	case errS == nil:
		s += "; next " + start.UTC().Format(day) + " UTC"
	case errE == nil:
		s += "; open until " + end.UTC().Format(day) + " UTC"
	}
	return s
}
