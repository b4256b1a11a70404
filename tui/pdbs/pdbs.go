// Package pdbs is the dashboard's PodDisruptionBudget panel: budgets, what they allow
// now, and the flags a drain cares about (stale status, never allows a disruption).
package pdbs

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/grid"
)

// Model is the PDB table.
type Model struct {
	table grid.Model
	keys  []string // budget key of each shown row
}

// New returns an empty table.
func New() Model {
	return Model{table: grid.New(
		grid.Column{Title: "PDB", Width: 24, Min: 12, Grow: true},
		grid.Column{Title: "MIN AV", Width: 6, Optional: true},
		grid.Column{Title: "MAX UNAV", Width: 8, Optional: true},
		grid.Column{Title: "ALLOWED", Width: 7},
		grid.Column{Title: "CURRENT", Width: 7, Optional: true},
		grid.Column{Title: "DESIRED", Width: 7, Optional: true},
		grid.Column{Title: "EXPECTED", Width: 8, Optional: true},
		grid.Column{Title: "FLAGS", Width: 18, Min: 5, Grow: true},
	)}
}

// Grid gives access to the table's styles.
func (m *Model) Grid() *grid.Model { return &m.table }

// SetSize fits the table.
func (m *Model) SetSize(width, height int) { m.table.SetSize(width, height) }

// SetRows shows the budgets matching filter.
func (m *Model) SetRows(rows []data.PDBRow, filter string) {
	out := make([][]string, 0, len(rows))
	m.keys = m.keys[:0]
	for _, r := range rows {
		if filter != "" && !strings.Contains(r.Key, filter) {
			continue
		}
		m.keys = append(m.keys, r.Key)
		var flags []string
		if r.Never {
			flags = append(flags, "never-allows")
		}
		if r.Stale {
			flags = append(flags, "stale")
		}
		out = append(out, []string{r.Key, r.MinAvailable, r.MaxUnavailable, strconv.Itoa(int(r.Allowed)),
			strconv.Itoa(int(r.Current)), strconv.Itoa(int(r.Desired)), strconv.Itoa(int(r.Expected)), strings.Join(flags, ",")})
	}
	m.table.SetRows(out)
}

// Current is the key of the budget under the cursor ("" when none).
func (m Model) Current() string {
	c := m.table.Cursor()
	if c < 0 || c >= len(m.keys) {
		return ""
	}
	return m.keys[c]
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.table, cmd = m.table.Update(msg)
	return m, cmd
}

// View renders the table.
func (m Model) View() string { return m.table.View() }
