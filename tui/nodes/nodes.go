// Package nodes is the dashboard's nodes table: status, pools, pods, what is evictable
// now, what is blocked and by which PDB. Selected nodes carry a mark.
package nodes

import (
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/grid"
)

// Model is the nodes table.
type Model struct {
	table grid.Model
	names []string // node name of each shown row
}

// New returns an empty table. At 80 columns it shows the essentials; VERSION and AGE
// appear from about 120 columns on; narrower screens cut NAME, STATUS, MAINTENANCE and
// BLOCKER.
func New() Model {
	return Model{table: grid.New(columns(false)...)}
}

// columns are the table's columns; MAINTENANCE only while some node has a Maintenance,
// never cut (NAME and STATUS give way first at 80 columns: the mark is the point).
func columns(maintenance bool) []grid.Column {
	cols := []grid.Column{
		{Title: "  NAME", Width: 13, Min: 8, Grow: true},
		{Title: "MAINTENANCE", Width: 30}, // never cut below its content (up to 30)
		{Title: "STATUS", Width: 24, Min: 8},
		{Title: "POOLS", Width: 6, Min: 5},
		{Title: "PODS", Width: 4},
		{Title: "EVICT", Width: 5},
		{Title: "BLOCK", Width: 5},
		{Title: "BLOCKER", Width: 11, Min: 7, Grow: true},
		{Title: "VERSION", Width: 8, Optional: true},
		{Title: "AGE", Width: 5, Optional: true},
	}
	if !maintenance {
		cols = append(cols[:1], cols[2:]...)
	}
	return cols
}

// Grid gives access to the table's styles.
func (m *Model) Grid() *grid.Model { return &m.table }

// SetSize fits the table to width x height (the header included).
func (m *Model) SetSize(width, height int) { m.table.SetSize(width, height) }

// SetRows shows the snapshot's nodes that match filter, marking the selected ones.
func (m *Model) SetRows(rows []data.NodeRow, selected map[string]bool, filter string) {
	out := make([][]string, 0, len(rows))
	m.names = m.names[:0]
	withMnt := slices.ContainsFunc(rows, func(r data.NodeRow) bool { return r.Maintenance != "" })
	m.table.SetColumns(columns(withMnt)...)
	for _, r := range rows {
		pools := strings.Join(r.Pools, ",")
		if filter != "" && !strings.Contains(r.Name, filter) && !strings.Contains(pools, filter) {
			continue
		}
		mark := "  "
		if selected[r.Name] {
			mark = "* "
		}
		blocker := r.Blocker
		if blocker == "" {
			blocker = "-"
		}
		row := []string{mark + r.Name, Maintenance(r), r.Status, orNone(pools), strconv.Itoa(r.Pods),
			strconv.Itoa(r.Evictable), strconv.Itoa(r.Blocked), blocker, r.Version, r.Age}
		if !withMnt {
			row = append(row[:1], row[2:]...)
		}
		out = append(out, row)
		m.names = append(m.names, r.Name)
	}
	m.table.SetRows(out)
}

// Maintenance is the node's MAINTENANCE cell: the Maintenance that holds it with its
// phase ("rack-7 Running"), or the one that plans it ("weekly Scheduled", or "rack-7
// queued" when a running one has not reached it yet); "-" when none.
func Maintenance(r data.NodeRow) string {
	switch {
	case r.Maintenance == "":
		return "-"
	case r.Held:
		return r.Maintenance + " " + r.MaintenancePhase
	case r.MaintenancePhase == "Running" || r.MaintenancePhase == "Paused":
		return r.Maintenance + " queued"
	}
	return r.Maintenance + " " + r.MaintenancePhase
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// Current is the node under the cursor ("" when none).
func (m Model) Current() string {
	c := m.table.Cursor()
	if c < 0 || c >= len(m.names) {
		return ""
	}
	return m.names[c]
}

// Visible lists the nodes shown (after the filter).
func (m Model) Visible() []string { return append([]string(nil), m.names...) }

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.table, cmd = m.table.Update(msg)
	return m, cmd
}

// View renders the table.
func (m Model) View() string { return m.table.View() }
