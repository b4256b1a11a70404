// Package pools is the dashboard's NodePool table.
package pools

import (
	"fmt"
	"strconv"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Model is the pools table.
type Model struct{ table table.Model }

// New returns an empty table.
func New() Model {
	return Model{table: table.New(table.WithFocused(true), table.WithColumns([]table.Column{
		{Title: "NAME", Width: 16}, {Title: "NODES", Width: 5}, {Title: "MAINTENANCE", Width: 11},
		{Title: "TAINTS", Width: 28}, {Title: "HANDLER", Width: 10}}))}
}

// SetSize fits the table.
func (m *Model) SetSize(width, height int) {
	m.table.SetWidth(width)
	m.table.SetHeight(max(height, 2))
}

// SetRows shows the pools.
func (m *Model) SetRows(rows []data.PoolRow) {
	out := make([]table.Row, 0, len(rows))
	for _, r := range rows {
		taints := r.Taints
		if taints == "" {
			taints = "<none>"
		}
		out = append(out, table.Row{r.Name, strconv.Itoa(r.Nodes), fmt.Sprintf("%d/%d", r.InMaintenance, r.MaxUnavailable), taints, r.Handler})
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
