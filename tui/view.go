package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
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
	counts := a.styles.Faint.Render(fmt.Sprintf("%d nodes, %d selected, %d pools, %d PDBs",
		len(a.snap.Nodes), len(a.selected), len(a.snap.Pools), len(a.snap.PDBs)))
	if a.filtering || a.filter.Value() != "" {
		counts = ansi.Strip(a.filter.View()) + "  " + counts
	}
	b.WriteString(ansi.Truncate(counts, a.width, "…"))
	b.WriteString("\n")
	body := a.bodyHeight()
	var content string
	switch {
	case a.dialog != nil:
		content = a.styles.Dialog.Width(max(20, a.width-2)).Render(a.dialog.View(a.width - 6))
	case a.quitting:
		content = a.styles.Dialog.Render("An action is running. Stop it and quit? The nodes keep their state; running it again finishes the job.\n\n[y] stop and quit  [n] keep running")
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
			content = a.events.View()
		}
	}
	b.WriteString(fit(content, body, a.width))
	b.WriteString("\n")
	status := a.status
	if a.running != nil {
		status = "running... " + status
	}
	b.WriteString(ansi.Truncate(a.styles.Warn.Render(status), a.width, "…"))
	b.WriteString("\n")
	helpView := a.help.ShortHelpView(a.keys.ShortHelp())
	if a.showHelp {
		helpView = a.help.FullHelpView(a.keys.FullHelp())
	}
	if a.noColor {
		helpView = ansi.Strip(helpView)
	}
	b.WriteString(fit(helpView, strings.Count(helpView, "\n")+1, a.width))
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.WindowTitle = "kubectl maintenance"
	return v
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
