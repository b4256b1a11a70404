// Package keys holds the dashboard's key bindings; KeyMap implements help.KeyMap.
package keys

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the dashboard.
type KeyMap struct {
	NextView, Nodes, Pools, PDBs, Progress, Events key.Binding
	Up, Down, Select, SelectAll, Filter            key.Binding
	Cordon, Uncordon, Drain, Move, CancelAction    key.Binding
	Pause, Resume, Detail, Back                    key.Binding
	Confirm, Cancel, Help, Quit                    key.Binding
}

// Default returns the dashboard's bindings.
func Default() KeyMap {
	b := func(help string, k ...string) key.Binding {
		return key.NewBinding(key.WithKeys(k...), key.WithHelp(k[0], help))
	}
	return KeyMap{
		NextView:     b("view", "tab"),
		Nodes:        b("nodes", "1"),
		Pools:        b("pools", "2"),
		PDBs:         b("pdbs", "3"),
		Progress:     b("progress", "4"),
		Events:       b("events", "5"),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Select:       b("select", "space"),
		SelectAll:    b("select all", "a"),
		Filter:       b("filter", "/"),
		Cordon:       b("cordon", "c"),
		Uncordon:     b("uncordon", "u"),
		Drain:        b("drain", "d"),
		Move:         b("move", "m"),
		CancelAction: b("cancel action", "x"),
		Pause:        b("pause", "p"),
		Resume:       b("resume", "r"),
		Detail:       b("detail", "enter"),
		Back:         b("back", "esc"),
		Confirm:      b("confirm", "y", "enter"),
		Cancel:       b("cancel", "esc", "n"),
		Help:         b("help", "?"),
		Quit:         b("quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the one-line help (it fits 80 columns; ? shows the rest).
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Select, k.Drain, k.Cordon, k.Uncordon, k.Move, k.Filter, k.Help, k.Quit}
}

// ProgressHelp is the one-line help of the Progress view.
func (k KeyMap) ProgressHelp() []key.Binding {
	return []key.Binding{k.NextView, k.Up, k.Down, k.CancelAction, k.Help, k.Quit, k.Pause, k.Resume} // quit before what a narrow footer may cut
}

// FullHelp is the help page (it fits 80 columns).
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NextView, k.Nodes, k.Pools, k.PDBs, k.Progress, k.Events},
		{k.Up, k.Down, k.Select, k.SelectAll, k.Filter, k.Detail},
		{k.Cordon, k.Uncordon, k.Drain, k.Move, k.CancelAction, k.Pause, k.Resume},
		{k.Back, k.Confirm, k.Cancel, k.Help, k.Quit},
	}
}

// DetailHelp is the one-line help of the detail view.
func (k KeyMap) DetailHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "link")),
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open link")),
		k.Back, key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn/pgup", "scroll")),
		k.Events, k.Help, k.Quit,
	}
}
