// Package nodes is the dashboard's nodes table: status, pools, pods, what is evictable
// now, what is blocked and by which PDB. Selected nodes carry a mark.
package nodes

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Model is the nodes table.
type Model struct {
	table table.Model
	names []string // node name of each shown row
}

// New returns an empty, focused table.
func New() Model {
	return Model{table: table.New(table.WithFocused(true), table.WithColumns(columns(80)))}
}

// columns fits the columns to width: at 80 columns the essentials, from 100 on also the
// kubelet version and age; extra room goes to NAME and BLOCKER.
func columns(width int) []table.Column {
	cols := []table.Column{{Title: "  NAME", Width: 11}, {Title: "STATUS", Width: 24},
		{Title: "POOLS", Width: 6}, {Title: "PODS", Width: 4}, {Title: "EVICT", Width: 5}, {Title: "BLOCK", Width: 5},
		{Title: "BLOCKER", Width: 11}}
	if width >= 100 {
		cols = append(cols, table.Column{Title: "VERSION", Width: 8}, table.Column{Title: "AGE", Width: 5})
	}
	used := 0
	for _, c := range cols {
		used += c.Width + 2 // cell padding
	}
	if extra := width - used; extra > 0 {
		cols[0].Width += extra / 2
		cols[6].Width += extra - extra/2
	}
	return cols
}

// SetSize fits the table to width x height (the header included).
func (m *Model) SetSize(width, height int) {
	m.table.SetColumns(columns(width))
	m.table.SetWidth(width)
	m.table.SetHeight(max(height, 2))
}

// SetRows shows the snapshot's nodes that match filter, marking the selected ones.
func (m *Model) SetRows(rows []data.NodeRow, selected map[string]bool, filter string) {
	out := make([]table.Row, 0, len(rows))
	m.names = m.names[:0]
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
		out = append(out, table.Row{mark + r.Name, r.Status, orNone(pools), strconv.Itoa(r.Pods),
			strconv.Itoa(r.Evictable), strconv.Itoa(r.Blocked), blocker, r.Version, r.Age}[:len(m.table.Columns())])
		m.names = append(m.names, r.Name)
	}
	m.table.SetRows(out)
	if c := m.table.Cursor(); c >= len(out) && len(out) > 0 {
		m.table.SetCursor(len(out) - 1)
	}
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
