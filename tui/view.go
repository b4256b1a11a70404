package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// View renders the screen: tabs, the current view (or the dialog), status and help.
func (a App) View() tea.View {
	var b strings.Builder
	var tabs []string
	for i, name := range viewNames {
		label := fmt.Sprintf("%d %s", i+1, name)
		if i == a.view {
			tabs = append(tabs, a.styles.ActiveTab.Render(label))
		} else {
			tabs = append(tabs, a.styles.Tab.Render(label))
		}
	}
	title := a.styles.Title.Render("kubectl maintenance")
	b.WriteString(ansi.Truncate(lipgloss.JoinHorizontal(lipgloss.Top, title, " ", strings.Join(tabs, "")), a.width, "…"))
	b.WriteString("\n")
	prefix := ""
	if a.filtering || a.filter.Value() != "" {
		prefix = ansi.Strip(a.filter.View()) + "  "
	}
	counts := prefix + a.styles.Faint.Render(a.counts(a.width-ansi.StringWidth(prefix)))
	b.WriteString(ansi.Truncate(counts, a.width, "…"))
	b.WriteString("\n")
	body := a.bodyHeight()
	var content string
	switch {
	case a.dialog != nil:
		content = a.box(a.dialog.View())
	case a.quitting:
		content = a.box(a.quitQuestion(a.dialogSize()))
	case a.cancelling != nil:
		content = a.box(a.cancelQuestion(a.dialogSize()))
	case a.stopping:
		content = "Stopping every action (calls in flight finish first); ctrl+c again leaves at once."
	case a.detail.Active():
		content = a.detail.View(a.detailLines())
	default:
		switch a.view {
		case ViewNodes:
			content = a.nodes.View()
		case ViewPools:
			content = a.pools.View()
		case ViewPDBs:
			content = a.pdbs.View()
		case ViewProgress:
			content = a.progress.View(a.now())
		case ViewEvents:
			content = a.eventsView(body)
		}
	}
	b.WriteString(fit(content, body, a.width))
	b.WriteString("\n")
	b.WriteString(ansi.Truncate(a.statusLine(), a.width, "…"))
	b.WriteString("\n")
	b.WriteString(a.helpView())
	// The frame is exactly the terminal's size, whatever it is: a tiny terminal loses the
	// bottom lines, never the layout.
	v := tea.NewView(fit(b.String(), a.height, a.width))
	v.AltScreen = true
	v.WindowTitle = "kubectl maintenance"
	return v
}

// box frames a dialog's text (already fitted to dialogSize) across the screen's width.
func (a App) box(text string) string {
	w, h := a.dialogSize()
	lines := strings.Split(fit(text, min(h, strings.Count(text, "\n")+1), w), "\n")
	for i, l := range lines { // the frame spans the screen, whatever the text's width
		lines[i] = l + strings.Repeat(" ", max(0, w-ansi.StringWidth(l)))
	}
	return a.styles.Dialog.Render(strings.Join(lines, "\n"))
}

// counts is the header's line in width columns: what the views show (after the filter)
// of what there is. When it does not fit, the Maintenances' counts come first, so that
// they are read whole, and the zero counts of selected nodes and pools are left out.
func (a App) counts(width int) string {
	nodes := fmt.Sprintf("%d nodes", len(a.snap.Nodes))
	pdbs := fmt.Sprintf("%d PDBs", len(a.snap.PDBs))
	if a.filter.Value() != "" {
		nodes = fmt.Sprintf("%d of %d nodes", len(a.nodes.Visible()), len(a.snap.Nodes))
		pdbs = fmt.Sprintf("%d of %d PDBs", a.pdbs.Grid().Rows(), len(a.snap.PDBs))
	}
	selected, pools := fmt.Sprintf("%d selected", len(a.selected)), fmt.Sprintf("%d pools", len(a.snap.Pools))
	s := strings.Join([]string{nodes, selected, pools, pdbs}, ", ")
	m := maintenanceCounts(a.snap.Maintenances)
	if m == "" {
		return s
	}
	if full := s + "; maintenances: " + m; ansi.StringWidth(full) <= width {
		return full
	}
	rest := []string{nodes}
	if len(a.selected) > 0 {
		rest = append(rest, selected)
	}
	if len(a.snap.Pools) > 0 {
		rest = append(rest, pools)
	}
	return "maintenances: " + m + "; " + strings.Join(append(rest, pdbs), ", ")
}

// maintenanceCounts counts the Maintenances by phase, in the order phases come in a
// run ("1 Running, 1 Scheduled, 2 Succeeded"); "" when there are none.
func maintenanceCounts(ms []data.MaintenanceRow) string {
	order := []string{"Running", "Paused", "Scheduled", "Pending"}
	n := map[string]int{}
	for _, m := range ms {
		if !slices.Contains(order, m.Phase) {
			order = append(order, m.Phase)
		}
		n[m.Phase]++
	}
	var parts []string
	for _, p := range order {
		if n[p] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[p], p))
		}
	}
	return strings.Join(parts, ", ")
}

// statusLine is the connection's problem (if any), then what the actions do.
func (a App) statusLine() string {
	var parts []string
	switch {
	case a.snap.Problem != "":
		parts = append(parts, a.styles.Bad.Render("! "+a.snap.Problem))
	case !a.snap.Synced:
		parts = append(parts, a.styles.Faint.Render("connecting to the API server..."))
	}
	if n := len(a.runs); n > 0 {
		parts = append(parts, a.styles.Warn.Render(fmt.Sprintf("%d action(s) running", n)))
	}
	if a.status != "" {
		parts = append(parts, a.styles.Warn.Render(a.status))
	}
	return strings.Join(parts, "  ")
}

func (a App) helpView() string {
	var h string
	switch {
	case a.showHelp:
		h = a.help.FullHelpView(a.keys.FullHelp())
	case a.detail.Active():
		h = a.help.ShortHelpView(a.keys.DetailHelp())
	case a.view == ViewProgress:
		h = a.help.ShortHelpView(a.keys.ProgressHelp())
	default:
		h = a.help.ShortHelpView(a.keys.ShortHelp())
	}
	if a.noColor {
		h = ansi.Strip(h)
	}
	return fit(h, a.helpHeight(), a.width)
}

func (a App) helpHeight() int {
	if !a.showHelp {
		return 1
	}
	n := 0
	for _, col := range a.keys.FullHelp() {
		n = max(n, len(col))
	}
	return n
}

// fit pads or cuts s to exactly h lines of at most w columns.
func fit(s string, h, w int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
