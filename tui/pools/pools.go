// Package pools is the dashboard's NodePool table.
package pools

import (
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/grid"
)

// Model is the pools table.
type Model struct{ table grid.Model }

// New returns an empty table.
func New() Model {
	return Model{table: grid.New(
		grid.Column{Title: "NAME", Width: 16, Min: 8, Grow: true},
		grid.Column{Title: "NODES", Width: 5},
		grid.Column{Title: "MAINTENANCE", Width: 11, Min: 5},
		grid.Column{Title: "TAINTS", Width: 28, Min: 8, Grow: true},
		grid.Column{Title: "HANDLER", Width: 10, Min: 7, Optional: true},
	)}
}

// Grid gives access to the table's styles.
func (m *Model) Grid() *grid.Model { return &m.table }

// SetSize fits the table.
func (m *Model) SetSize(width, height int) { m.table.SetSize(width, height) }

// SetRows shows the pools.
func (m *Model) SetRows(rows []data.PoolRow) {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		taints := r.Taints
		if taints == "" {
			taints = "<none>"
		}
		out = append(out, []string{r.Name, strconv.Itoa(r.Nodes), fmt.Sprintf("%d/%d", r.InMaintenance, r.MaxUnavailable), taints, r.Handler})
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
