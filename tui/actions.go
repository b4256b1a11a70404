package tui

import (
	"sort"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// openDialog starts a mutating action on the selection (or the node under the cursor):
// the dialog opens, and its plan is computed in the background.
func (a App) openDialog(k string) (tea.Model, tea.Cmd) {
	action := map[string]confirm.Action{"c": confirm.Cordon, "u": confirm.Uncordon, "d": confirm.Drain, "m": confirm.Move}[k]
	if a.running != nil {
		a.status = "an action is running; wait for it to finish (Progress view)"
		return a, nil
	}
	targets := a.targets()
	if len(targets) == 0 {
		a.status = "no node selected: select nodes with space on the Nodes view"
		return a, nil
	}
	if action == confirm.Move && len(a.snap.PoolNames) == 0 {
		a.status = "no NodePools: kubectl maintenance pool apply -f POOL.yaml"
		return a, nil
	}
	d := confirm.New(confirm.Request{Action: action, Nodes: targets, Options: confirm.DefaultOptions()}, a.snap.PoolNames)
	a.dialog = &d
	return a, a.planCmd(d.Req)
}

// targets are the selected nodes, else the node under the cursor.
func (a App) targets() []string {
	var out []string
	for n := range a.selected {
		out = append(out, n)
	}
	sort.Strings(out)
	if len(out) == 0 && a.view == ViewNodes {
		if n := a.nodes.Current(); n != "" {
			out = []string{n}
		}
	}
	return out
}

func (a App) planCmd(req confirm.Request) tea.Cmd {
	b := a.backend
	return func() tea.Msg {
		text, err := b.Plan(req)
		return PlanMsg{Req: req, Text: text, Err: err}
	}
}

func (a App) dialogKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	before := a.dialog.Req
	d, _ := a.dialog.Update(msg)
	a.dialog = &d
	if !d.Done() {
		if !sameRequest(before, d.Req) {
			a.dialog.Plan, a.dialog.Err = "", ""
			return a, a.planCmd(d.Req)
		}
		return a, nil
	}
	a.dialog = nil
	if !d.Confirmed() {
		a.status = "cancelled"
		return a, nil
	}
	req := d.Req
	a.progress.Reset()
	a.selected = map[string]bool{}
	a.view = ViewProgress
	a.status = string(req.Action) + " started"
	a.refresh()
	b := a.backend
	return a, func() tea.Msg {
		ch, err := b.Start(req)
		return StartedMsg{Events: ch, Err: err}
	}
}

// forward sends navigation keys to the current view.
func (a App) forward(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch a.view {
	case ViewNodes:
		a.nodes, cmd = a.nodes.Update(msg)
	case ViewPools:
		a.pools, cmd = a.pools.Update(msg)
	case ViewPDBs:
		a.pdbs, cmd = a.pdbs.Update(msg)
	case ViewEvents:
		a.events, cmd = a.events.Update(msg)
	}
	return a, cmd
}

// refresh puts the snapshot, selection and filter into the tables.
func (a *App) refresh() {
	f := a.filter.Value()
	a.nodes.SetRows(a.snap.Nodes, a.selected, f)
	a.pools.SetRows(a.snap.Pools)
	a.pdbs.SetRows(a.snap.PDBs, f)
}

// resize fits every component between the header (tabs) and the footer (status, help).
func (a *App) resize() {
	body := a.bodyHeight()
	a.nodes.SetSize(a.width, body)
	a.pools.SetSize(a.width, body)
	a.pdbs.SetSize(a.width, body)
	a.events.SetSize(a.width, body)
	a.progress.SetWidth(a.width)
	a.help.SetWidth(a.width)
}

func (a App) bodyHeight() int {
	footer := 2
	if a.showHelp {
		footer = 6
	}
	return max(3, a.height-2-footer)
}
