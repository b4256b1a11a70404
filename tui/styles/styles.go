// Package styles holds the dashboard's shared lipgloss styles.
package styles

import "charm.land/lipgloss/v2"

// Styles are the dashboard's styles. With NoColor every style is plain.
type Styles struct {
	Title, Tab, ActiveTab, Header, Selected, Warn, Bad, Good, Faint, Dialog lipgloss.Style
}

// New returns the styles; noColor (NO_COLOR set) drops every color and attribute.
func New(noColor bool) Styles {
	if noColor {
		p := lipgloss.NewStyle()
		return Styles{Title: p, Tab: p.Padding(0, 1), ActiveTab: p.Padding(0, 1).Reverse(true), Header: p, Selected: p,
			Warn: p, Bad: p, Good: p, Faint: p, Dialog: p.Border(lipgloss.NormalBorder()).Padding(0, 1)}
	}
	return Styles{
		Title:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#7D56F4")),
		Tab:       lipgloss.NewStyle().Padding(0, 1).Foreground(lipgloss.Color("245")),
		ActiveTab: lipgloss.NewStyle().Padding(0, 1).Bold(true).Foreground(lipgloss.Color("230")).Background(lipgloss.Color("62")),
		Header:    lipgloss.NewStyle().Bold(true),
		Selected:  lipgloss.NewStyle().Foreground(lipgloss.Color("212")),
		Warn:      lipgloss.NewStyle().Foreground(lipgloss.Color("214")),
		Bad:       lipgloss.NewStyle().Foreground(lipgloss.Color("196")),
		Good:      lipgloss.NewStyle().Foreground(lipgloss.Color("42")),
		Faint:     lipgloss.NewStyle().Faint(true),
		Dialog:    lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("62")).Padding(0, 1),
	}
}
