// Package pdbs is the dashboard's PodDisruptionBudget panel: budgets, what they allow
// now, and the flags a drain cares about (stale status, never allows a disruption).
package pdbs

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Model is the PDB table.
type Model struct{ table table.Model }

// New returns an empty table.
func New() Model {
	return Model{table: table.New(table.WithFocused(true), table.WithColumns([]table.Column{
		{Title: "PDB", Width: 24}, {Title: "MIN AV", Width: 6}, {Title: "MAX UNAV", Width: 8}, {Title: "ALLOWED", Width: 7},
		{Title: "CURRENT", Width: 7}, {Title: "DESIRED", Width: 7}, {Title: "EXPECTED", Width: 8}, {Title: "FLAGS", Width: 14}}))}
}

// SetSize fits the table.
func (m *Model) SetSize(width, height int) {
	m.table.SetWidth(width)
	m.table.SetHeight(max(height, 2))
}

// SetRows shows the budgets matching filter.
func (m *Model) SetRows(rows []data.PDBRow, filter string) {
	out := make([]table.Row, 0, len(rows))
	for _, r := range rows {
		if filter != "" && !strings.Contains(r.Key, filter) {
			continue
		}
		var flags []string
		if r.Never {
			flags = append(flags, "never-allows")
		}
		if r.Stale {
			flags = append(flags, "stale")
		}
		out = append(out, table.Row{r.Key, r.MinAvailable, r.MaxUnavailable, strconv.Itoa(int(r.Allowed)),
			strconv.Itoa(int(r.Current)), strconv.Itoa(int(r.Desired)), strconv.Itoa(int(r.Expected)), strings.Join(flags, ",")})
	}
	m.table.SetRows(out)
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.table, cmd = m.table.Update(msg)
	return m, cmd
}

// View renders the table.
func (m Model) View() string { return m.table.View() }
