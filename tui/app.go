// Package tui is the interactive dashboard (bubbletea v2): nodes, pools, PDB budgets and
// live per-node drain progress, with actions on selected nodes. It reads a read-only
// model (data.Snapshot) and the drain engine's events, both delivered as messages, and
// never calls the Kubernetes API: actions go through the Backend the command layer gives.
package tui

import (
	"reflect"
	"slices"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/detail"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/eventlog"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/grid"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/keys"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/nodes"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/pdbs"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/pools"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/progress"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/styles"
)

// Backend is what the dashboard can ask of the cluster. The command layer implements it
// (informers and the drain engine); tests give a fake. Every method may block: the
// dashboard calls them only inside tea.Cmds.
type Backend interface {
	// Snapshots delivers the read-only model whenever the cluster changes.
	Snapshots() <-chan data.Snapshot
	// Plan describes what req would do (the drain's plan), changing nothing.
	Plan(req confirm.Request) (string, error)
	// Start begins req and returns its events (the channel closes when it ends) and the
	// function that cancels it (its nodes stay resumable). Several actions may run at once,
	// on different nodes.
	Start(req confirm.Request) (events <-chan event.Event, cancel func(), err error)
	// ControlMaintenance pauses, resumes or cancels (deletes) the Maintenance name; op is
	// MaintenancePause, MaintenanceResume or MaintenanceCancel. It may block on the API.
	ControlMaintenance(name, op string) error
	// Events reads the Events of an object (events.k8s.io and core alike), any order.
	Events(ref data.Ref) ([]data.EventRow, error)
}

// What ControlMaintenance does.
const (
	MaintenancePause  = "pause"
	MaintenanceResume = "resume"
	MaintenanceCancel = "cancel"
)

// View indexes.
const (
	ViewNodes = iota
	ViewPools
	ViewPDBs
	ViewProgress
	ViewEvents
	numViews
)

var viewNames = []string{"Nodes", "Pools", "PDBs", "Progress", "Events"}

// Messages.
type (
	// SnapshotMsg carries a new read-only model.
	SnapshotMsg struct{ Snapshot data.Snapshot }
	// EventMsg carries one engine event of action ID.
	EventMsg struct {
		ID    int
		Event event.Event
	}
	// ActionDoneMsg says action ID ended (its event channel closed).
	ActionDoneMsg struct{ ID int }
	// MaintenanceDoneMsg says how a pause, resume or cancel of Maintenance Name ended.
	MaintenanceDoneMsg struct {
		Name, Op string
		Err      error
	}
	// PlanMsg carries the plan of the dialog's request.
	PlanMsg struct {
		Req  confirm.Request
		Text string
		Err  error
	}
	// StartedMsg carries the event channel of started action ID.
	StartedMsg struct {
		ID     int
		Events <-chan event.Event
		Cancel func()
		Err    error
	}
	tickMsg time.Time
)

// App is the root model.
type App struct {
	backend Backend
	keys    keys.KeyMap
	styles  styles.Styles
	noColor bool
	now     func() time.Time

	width, height int
	view          int
	snap          data.Snapshot
	selected      map[string]bool

	nodes    nodes.Model
	pools    pools.Model
	pdbs     pdbs.Model
	progress progress.Model
	events   eventlog.Model
	help     help.Model

	filter    textinput.Model
	filtering bool
	dialog    *confirm.Model
	runs      map[int]*run
	nextID    int
	quitting  bool // asked to quit while actions run
	stopping  bool // quitting: every action was cancelled, waiting for them to end
	// interrupted is set when a quit stopped running actions.
	interrupted bool
	showHelp    bool
	status      string
	// left describes, after a quit that stopped work, what each stopped action left.
	left []string
	// clusterFlags end every command the dashboard prints: the cluster flags it was
	// started with (WithClusterFlags).
	clusterFlags []string
	// cancelling is the Maintenance whose cancel (x) waits for the user's answer.
	cancelling *data.MaintenanceRow
	// detail is the detail view (Enter) when open; focus is the object the Events view
	// shows; objEvents are the Events read of each object shown.
	detail    detail.Model
	focus     data.Ref
	objEvents map[data.Ref]objectEvents
}

// run is an action started from the dashboard.
type run struct {
	id        int
	req       confirm.Request
	events    <-chan event.Event
	cancel    func()
	cancelled bool
	// failed is the whole action's failure (a refused permission), failedNodes each
	// node's that failed: its end then says so, not finished.
	failed      string
	failedNodes map[string]string
}

// New returns the dashboard. noColor drops every color (NO_COLOR).
func New(b Backend, noColor bool) App {
	fi := textinput.New()
	h := help.New()
	h.ShortSeparator = "  "
	fi.Prompt = "/"
	a := App{backend: b, keys: keys.Default(), styles: styles.New(noColor), noColor: noColor, now: time.Now,
		selected: map[string]bool{}, runs: map[int]*run{}, objEvents: map[data.Ref]objectEvents{}, nodes: nodes.New(), pools: pools.New(), pdbs: pdbs.New(),
		progress: progress.New(), events: eventlog.New(), help: h, filter: fi, width: 80, height: 24}
	// The cursor's row is reversed even without colors (NO_COLOR forbids colors, not
	// attributes): it is the only mark of the cursor.
	for _, g := range []*grid.Model{a.nodes.Grid(), a.pools.Grid(), a.pdbs.Grid()} {
		g.Header, g.Selected = a.styles.Header, lipgloss.NewStyle().Reverse(true)
	}
	return a
}

// WithClusterFlags sets the cluster flags the dashboard was started with (--kubeconfig,
// --context, ...); every command it prints ends with them, so that a printed command acts
// on the same cluster: `kubectl maintenance drain NODE ... --kubeconfig=...`.
func (a App) WithClusterFlags(flags ...string) App {
	a.clusterFlags = append([]string(nil), flags...)
	return a
}

// Init starts listening for snapshots and the clock.
func (a App) Init() tea.Cmd {
	return tea.Batch(waitSnapshot(a.backend.Snapshots()), tick(), a.progress.Tick())
}

func waitSnapshot(ch <-chan data.Snapshot) tea.Cmd {
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return nil
		}
		return SnapshotMsg{Snapshot: s}
	}
}

func waitEvent(id int, ch <-chan event.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return ActionDoneMsg{ID: id}
		}
		return EventMsg{ID: id, Event: ev}
	}
}

func tick() tea.Cmd { return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) }) }

// Update handles one message; it never blocks.
func (a App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		a.resize()
		return a, nil
	case SnapshotMsg:
		a.snap = msg.Snapshot
		a.refresh()
		return a, waitSnapshot(a.backend.Snapshots())
	case EventMsg:
		a.progress.Apply(msg.ID, msg.Event)
		a.events.Add(msg.Event)
		if r := a.runs[msg.ID]; r != nil {
			if ev := msg.Event; ev.Type == event.EventNodeFailed {
				if ev.Node == "" {
					r.failed = ev.Message
				} else {
					if r.failedNodes == nil {
						r.failedNodes = map[string]string{}
					}
					r.failedNodes[ev.Node] = ev.Message
				}
			}
			return a, waitEvent(r.id, r.events)
		}
		return a, nil
	case MaintenanceDoneMsg:
		a.status = maintenanceResult(msg)
		return a, nil
	case ActionDoneMsg:
		return a.actionDone(msg.ID)
	case PlanMsg:
		if a.dialog != nil && sameRequest(a.dialog.Req, msg.Req) {
			a.dialog.Plan, a.dialog.Err = msg.Text, errText(msg.Err)
			a.resize() // the plan's length bounds its scrolling
		}
		return a, nil
	case StartedMsg:
		return a.started(msg)
	case EventsMsg:
		return a.eventsArrived(msg), nil
	case tickMsg:
		return a, tea.Batch(tick(), a.fetchEvents(a.shownRef(), false))
	case tea.KeyPressMsg:
		return a.key(msg)
	}
	var cmd tea.Cmd
	a.progress, cmd = a.progress.Update(msg)
	return a, cmd
}

// quit leaves, asking first whether to stop the actions still running.
func (a App) quit() (tea.Model, tea.Cmd) {
	if len(a.runs) > 0 {
		a.quitting = true
		a.showHelp = false // the help would hide the question
		a.resize()
		return a, nil
	}
	return a, tea.Quit
}

// sameRequest tells whether a plan answers the dialog's current request (a plan for
// options since changed is dropped).
func sameRequest(a, b confirm.Request) bool {
	return a.Action == b.Action && a.Pool == b.Pool && reflect.DeepEqual(a.Options, b.Options) && slices.Equal(a.Nodes, b.Nodes)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (a App) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch {
	case a.stopping:
		if msg.String() == "ctrl+c" { // a second interrupt: leave now, the command waits for the actions
			return a, tea.Quit
		}
		return a, nil
	case a.quitting:
		switch msg.String() {
		case "y", "enter", "ctrl+c":
			return a.stopAll()
		case "n", "esc":
			a.quitting = false
		}
		return a, nil
	case a.cancelling != nil:
		return a.cancelKey(msg) // its Ctrl-C keeps the Maintenance
	case msg.String() == "ctrl+c": // from a dialog or the filter too: leave
		a.dialog = nil
		if a.filtering {
			a.filtering = false
			a.filter.Blur()
		}
		return a.quit()
	case a.dialog != nil:
		return a.dialogKey(msg)
	case a.detail.Active():
		m, cmd, done := a.detailKey(msg)
		if done {
			return m, cmd
		}
		a = m.(App)
	case a.filtering:
		switch msg.String() {
		case "enter", "esc":
			a.filtering = false
			a.filter.Blur()
			if msg.String() == "esc" {
				a.filter.SetValue("")
			}
			a.refresh()
			return a, nil
		}
		var cmd tea.Cmd
		a.filter, cmd = a.filter.Update(msg)
		a.refresh()
		return a, cmd
	}
	k := a.keys
	switch {
	case key.Matches(msg, k.Quit):
		return a.quit()
	case key.Matches(msg, k.Help):
		a.showHelp = !a.showHelp
		a.resize()
	case key.Matches(msg, k.NextView, k.Nodes, k.Pools, k.PDBs, k.Progress, k.Events):
		return a.switchView(msg)
	case key.Matches(msg, k.Detail) && a.view != ViewPools,
		key.Matches(msg, k.Drain) && (a.view == ViewProgress || a.view == ViewEvents):
		return a.openDetail()
	case key.Matches(msg, k.Filter):
		a.filtering = true
		return a, a.filter.Focus()
	case a.view == ViewNodes && key.Matches(msg, k.Select):
		if n := a.nodes.Current(); n != "" {
			a.selected[n] = !a.selected[n]
			if !a.selected[n] {
				delete(a.selected, n)
			}
			a.refresh()
		}
	case a.view == ViewNodes && key.Matches(msg, k.SelectAll):
		for _, n := range a.nodes.Visible() {
			a.selected[n] = true
		}
		a.refresh()
	case a.view == ViewProgress && key.Matches(msg, k.CancelAction, k.Pause, k.Resume):
		return a.controlCurrent(msg)
	case a.view != ViewProgress && key.Matches(msg, k.Cordon, k.Uncordon, k.Drain, k.Move):
		return a.openDialog(msg.String())
	default:
		return a.forward(msg)
	}
	return a, nil
}
