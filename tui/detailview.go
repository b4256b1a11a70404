package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/detail"
)

// EventsMsg carries the Events of Ref (newest first), read by the backend.
type EventsMsg struct {
	Ref  data.Ref
	Rows []data.EventRow
	Err  error
}

// objectEvents is what the dashboard knows of an object's Events.
type objectEvents struct {
	rows    []data.EventRow
	loaded  bool
	err     string
	fetched time.Time
}

// eventsEvery is how often the Events of the object shown (detail view, Events view)
// are read again.
const eventsEvery = 5 * time.Second

// currentRef is the object under the cursor of the current view (zero when none): the
// node on Nodes, the budget on PDBs, the Maintenance (or node) on Progress.
func (a App) currentRef() data.Ref {
	switch a.view {
	case ViewNodes:
		if n := a.nodes.Current(); n != "" {
			return data.Ref{Kind: "Node", Name: n}
		}
	case ViewPDBs:
		if k := a.pdbs.Current(); k != "" {
			return detail.RefOf("PodDisruptionBudget", k)
		}
	case ViewProgress:
		if m, ok := a.progress.CurrentMaintenance(); ok {
			return data.Ref{Kind: "Maintenance", Name: m.Name}
		}
		if n, ok := a.progress.Current(); ok {
			return data.Ref{Kind: "Node", Name: n.Name}
		}
	case ViewEvents:
		return a.focus
	}
	return data.Ref{}
}

// openDetail opens the detail view of the object under the cursor (Enter, and d where d
// does not drain), and reads its Events.
func (a App) openDetail() (tea.Model, tea.Cmd) {
	ref := a.currentRef()
	if ref.Kind == "" {
		a.status = "nothing under the cursor to show"
		return a, nil
	}
	a.detail = detail.Open(ref)
	a.resize()
	return a, a.fetchEvents(ref, true)
}

// detailKey handles a key while the detail view is open: esc goes back (to the list,
// its cursor where it was, after the first page); up, down, enter and the page keys
// move in the page; the view and quit keys leave it.
func (a App) detailKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd, bool) {
	k := a.keys
	switch s := msg.String(); {
	case s == "esc" || s == "backspace":
		a.detail.Back()
		if a.detail.Active() {
			return a, a.fetchEvents(a.detail.Ref(), false), true
		}
		return a, nil, true
	case key.Matches(msg, k.Nodes, k.Pools, k.PDBs, k.Progress, k.Events, k.NextView):
		a.focus = a.detail.Ref()
		a.detail = detail.Model{}
		return a, nil, false // the key then switches views
	case key.Matches(msg, k.Quit, k.Help):
		return a, nil, false
	default:
		if a.detail.Key(s, a.detailLines()) {
			return a, a.fetchEvents(a.detail.Ref(), true), true
		}
		return a, nil, true
	}
}

// detailLines is the open detail view's page.
func (a App) detailLines() []detail.Line {
	ref := a.detail.Ref()
	ev := a.objEvents[ref]
	return detail.Render(a.snap, ref, ev.rows, ev.loaded, ev.err, max(a.width, 10))
}

// fetchEvents reads ref's Events in a command (the backend may block on the API), at
// once or when those known are older than eventsEvery.
func (a App) fetchEvents(ref data.Ref, now bool) tea.Cmd {
	if ref.Kind == "" {
		return nil
	}
	if ev, ok := a.objEvents[ref]; ok && !now && a.now().Sub(ev.fetched) < eventsEvery {
		return nil
	}
	ev := a.objEvents[ref]
	ev.fetched = a.now()
	a.objEvents[ref] = ev
	b := a.backend
	return func() tea.Msg {
		rows, err := b.Events(ref)
		return EventsMsg{Ref: ref, Rows: rows, Err: err}
	}
}

// eventsArrived stores an object's Events.
func (a App) eventsArrived(msg EventsMsg) App {
	ev := a.objEvents[msg.Ref]
	ev.loaded, ev.err = true, errText(msg.Err)
	if msg.Err == nil {
		ev.rows = slices.Clone(msg.Rows)
		slices.SortStableFunc(ev.rows, func(x, y data.EventRow) int { return y.Time.Compare(x.Time) })
	}
	a.objEvents[msg.Ref] = ev
	return a
}

// shownRef is the object whose Events are on screen (detail view or Events view).
func (a App) shownRef() data.Ref {
	if a.detail.Active() {
		return a.detail.Ref()
	}
	if a.view == ViewEvents {
		return a.focus
	}
	return data.Ref{}
}

// eventsView is the Events view: the Events of the object chosen last (newest first),
// then this dashboard's own action log.
func (a App) eventsView(height int) string {
	if a.focus.Kind == "" {
		return a.events.View()
	}
	ev := a.objEvents[a.focus]
	lines := []string{fmt.Sprintf("Events of %s/%s (newest first; Enter: its detail):", strings.ToLower(a.focus.Kind), refName(a.focus))}
	switch {
	case ev.err != "":
		lines = append(lines, "  cannot read them: "+ev.err)
	case !ev.loaded:
		lines = append(lines, "  loading...")
	case len(ev.rows) == 0:
		lines = append(lines, "  none")
	}
	for _, e := range ev.rows {
		lines = append(lines, detail.Wrap("  ", "    ", detail.EventText(e), max(a.width, 10))...)
	}
	if log := a.events.Lines(); len(log) > 0 {
		room := height - len(lines) - 2
		if room > 0 {
			lines = append(lines, "", "This dashboard's actions:")
			lines = append(lines, log[max(0, len(log)-room):]...)
		}
	}
	return strings.Join(lines, "\n")
}

func refName(r data.Ref) string {
	if r.Namespace != "" {
		return r.Namespace + "/" + r.Name
	}
	return r.Name
}

// switchView goes to the view a key names (tab: the next one). Arriving on Events, it
// shows the Events of the object under the cursor of the view left (or the one the
// detail view showed).
func (a App) switchView(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	from := a.currentRef()
	if key.Matches(msg, a.keys.NextView) {
		a.view = (a.view + 1) % numViews
	} else {
		a.view = int(msg.String()[0] - '1')
	}
	if a.view != ViewEvents {
		return a, nil
	}
	if from.Kind != "" {
		a.focus = from
	}
	return a, a.fetchEvents(a.focus, true)
}
