// Package progress is the dashboard's per-node progress of the actions running: a bar of
// evicted over total pods, the current wave, the current blocker with its numbers, the
// elapsed time, and a spinner while a node waits. It is fed the engine's events, tagged
// with the action they belong to, and has a cursor so that one action can be cancelled.
package progress

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// Node is one node's progress in one action.
type Node struct {
	Name string
	// ID and Action name the action the node is in ("drain", "cordon", ...).
	ID       int
	Action   string
	Total    int
	Evicted  int
	Wave     int
	Blocker  string
	Started  time.Time
	Finished time.Time
	Failed   string
	// Done is set when the action finished for this node; Result says how ("drained",
	// "cordoned", "moved to blue", ...).
	Done     bool
	Result   string
	Cordoned bool
	Drained  bool
	// Stopping and Stopped mark a node whose action was cancelled before it finished.
	Stopping, Stopped bool
	order             int
	maxWave           int
}

// over reports whether nothing more will happen to the node in its action.
func (n Node) over() bool { return n.Done || n.Failed != "" || n.Stopped }

// Model holds the progress of every node of the actions started in this session.
type Model struct {
	nodes   map[string]*Node
	bar     progress.Model
	spinner spinner.Model
	width   int
	height  int
	next    int
	cursor  int
	// mnts are the cluster's Maintenances, listed below the nodes (SetMaintenances).
	mnts []data.MaintenanceRow
}

// New returns an empty progress model.
func New() Model {
	return Model{nodes: map[string]*Node{}, bar: progress.New(progress.WithWidth(30), progress.WithoutPercentage()),
		spinner: spinner.New(spinner.WithSpinner(spinner.Line)), height: 20}
}

// SetWidth fits the bars to the screen.
func (m *Model) SetWidth(w int) {
	m.width = w
	m.bar.SetWidth(max(6, min(40, w-70)))
}

// SetSize fits the view to w x h.
func (m *Model) SetSize(w, h int) {
	m.SetWidth(w)
	m.height = max(h, 1)
}

// Reset forgets every node.
func (m *Model) Reset() { m.nodes, m.next, m.cursor = map[string]*Node{}, 0, 0 }

// Begin records that action id (of kind action) starts on nodes: each shows as queued,
// replacing what an earlier, finished action showed for it.
func (m *Model) Begin(id int, action string, nodes []string) {
	for _, name := range nodes {
		m.nodes[name] = &Node{Name: name, ID: id, Action: action, order: m.next}
		m.next++
	}
}

// End records that action id ended at time at; its nodes that did not finish are stopped.
func (m *Model) End(id int, at time.Time) {
	for _, n := range m.nodes {
		if n.ID == id && !n.over() {
			n.Stopped, n.Stopping, n.Finished = true, false, at
		}
	}
}

// Stopping marks the unfinished nodes of action id as being stopped.
func (m *Model) Stopping(id int) {
	for _, n := range m.nodes {
		if n.ID == id && !n.over() {
			n.Stopping = true
		}
	}
}

func (m *Model) node(id int, name string) *Node {
	n := m.nodes[name]
	if n == nil || n.ID != id {
		n = &Node{Name: name, ID: id, order: m.next}
		m.next++
		m.nodes[name] = n
	}
	return n
}

// Apply folds one event of action id into the progress.
func (m *Model) Apply(id int, ev event.Event) {
	if ev.Type == event.EventPlan && ev.Plan != nil {
		for _, np := range ev.Plan.Nodes {
			n := m.node(id, np.Name)
			n.Total = len(np.Steps)
			for _, s := range np.Steps {
				n.maxWave = max(n.maxWave, s.Wave)
			}
		}
		return
	}
	if ev.Node == "" {
		return
	}
	n := m.node(id, ev.Node)
	if n.Started.IsZero() {
		n.Started = ev.Time
	}
	switch ev.Type {
	case event.EventNodeCordoned:
		n.Cordoned = true
		if n.Action == "cordon" {
			n.Done, n.Finished, n.Result = true, ev.Time, "cordoned"
			if ev.Already {
				n.Result = "already cordoned"
			}
		}
	case event.EventNodeUncordoned:
		n.Cordoned = ev.Reason == "LeftCordoned" // someone else's cordon stays
		if n.Action == "move" && n.Done {
			break // a move's uncordon follows node.moved: the result stays "moved to ..."
		}
		n.Result = "uncordoned"
		if ev.Message != "" {
			n.Result = ev.Message
		}
		if n.Action == "uncordon" || n.Action == "move" {
			n.Done, n.Finished = true, ev.Time
		}
	case event.EventEvictionStarted:
		n.Wave = max(n.Wave, ev.Wave)
	case event.EventEvictionBlocked:
		n.Blocker = nonEmpty(ev.Pod, ev.Message)
		if ev.Cause != "" && ev.Cause != ev.Message {
			n.Blocker = nonEmpty(ev.Pod, ev.Cause)
			if ev.Remedy != "" {
				n.Blocker += " (remedy: " + ev.Remedy + ")"
			}
		}
	case event.EventSurgeStarted, event.EventSurgeReady:
		n.Blocker = ev.Message // --surge: what the move waits for
	case event.EventPodEvicted:
		n.Evicted++
		if n.Evicted >= n.Total {
			n.Blocker = ""
		}
	case event.EventNodeDrained:
		n.Drained, n.Blocker = true, ""
		n.Evicted = max(n.Evicted, n.Total)
		if n.Action != "move" {
			n.Done, n.Finished, n.Result = true, ev.Time, "drained"
		}
	case event.EventNodeMoved:
		n.Done, n.Finished, n.Result = true, ev.Time, "moved to "+ev.Message
	case event.EventNodeFailed:
		n.Failed, n.Finished = ev.Message, ev.Time
	case event.EventNodeBlocked: // --on-blocked=skip gave it up
		n.Done, n.Finished, n.Result, n.Blocker = true, ev.Time, "blocked, left cordoned", ev.Message
	case event.EventNodeNotStarted: // --not-after, or --on-blocked=fail
		n.Done, n.Finished, n.Result = true, ev.Time, "not started"
	}
}

// Nodes returns the nodes in the order they appeared.
func (m Model) Nodes() []Node {
	out := make([]Node, 0, len(m.nodes))
	for _, n := range m.nodes {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Left returns the nodes of the given action that did not finish.
func (m Model) Left(id int) []Node {
	var out []Node
	for _, n := range m.Nodes() {
		if n.ID == id && !n.Done && n.Failed == "" {
			out = append(out, n)
		}
	}
	return out
}

// Active reports whether some node is still in progress.
func (m Model) Active() bool {
	for _, n := range m.nodes {
		if !n.over() {
			return true
		}
	}
	return false
}

// Current returns the node under the cursor (ok false when there is none, or the cursor
// is on a Maintenance).
func (m Model) Current() (Node, bool) {
	nodes := m.Nodes()
	if len(nodes) == 0 {
		return Node{}, false
	}
	if c := min(max(m.cursor, 0), m.rows()-1); c < len(nodes) {
		return nodes[c], true
	}
	return Node{}, false
}

// Update advances the spinner and moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "up", "k":
			m.cursor = max(m.cursor-1, 0)
		case "down", "j":
			m.cursor = min(m.cursor+1, max(m.rows()-1, 0))
		}
		return m, nil
	}
	var cmd tea.Cmd
	m.spinner, cmd = m.spinner.Update(msg)
	return m, cmd
}

// Tick starts the spinner.
func (m Model) Tick() tea.Cmd { return m.spinner.Tick }

// View renders one line per node (two when it waits on something), at time now, with the
// cursor's node marked and kept in sight.
func (m Model) View(now time.Time) string {
	nodes := m.Nodes()
	if m.rows() == 0 {
		return "No action running. Select nodes on the Nodes view (space) and press d to drain."
	}
	cur := min(max(m.cursor, 0), m.rows()-1)
	var lines []string
	curLine := 0
	for i, n := range nodes {
		mark := "  "
		if i == cur {
			mark, curLine = "> ", len(lines)
		}
		lines = append(lines, mark+m.line(n, now))
		if n.Failed != "" {
			lines = append(lines, "    error: "+oneLine(n.Failed))
		} else if n.Blocker != "" && !n.Done && !n.Stopped {
			lines = append(lines, "    waits: "+oneLine(n.Blocker))
		}
	}
	if len(m.mnts) > 0 {
		if len(nodes) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "Maintenances (run by the controller; p pause, r resume, x cancel):")
		for i, r := range m.mnts {
			mark := "  "
			if len(nodes)+i == cur {
				mark, curLine = "> ", len(lines)
			}
			lines = append(lines, mark+maintenanceLine(r))
			if w := WindowText(r); w != "" && !r.Done {
				lines = append(lines, "    "+w)
			}
		}
	}
	off := 0
	if curLine >= m.height {
		off = curLine - m.height + 1
	}
	lines = lines[off:]
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(m.width, 1), "…")
	}
	return strings.Join(lines, "\n")
}

func (m Model) line(n Node, now time.Time) string {
	pct := 0.0
	switch {
	case n.Total > 0:
		pct = float64(n.Evicted) / float64(n.Total)
	case n.Done || n.Drained:
		pct = 1
	}
	state := m.spinner.View() + " " + map[string]string{"cordon": "cordoning", "uncordon": "uncordoning",
		"move": "moving"}[n.Action]
	if state == m.spinner.View()+" " {
		state = m.spinner.View() + " draining"
	}
	switch {
	case n.Failed != "":
		state = "failed"
	case n.Done:
		state = "done: " + n.Result
	case n.Stopped:
		state = "stopped"
	case n.Stopping:
		state = "stopping"
	case !n.Cordoned && (n.Action == "drain" || n.Action == "move"):
		state = "queued"
	}
	end := now
	if !n.Finished.IsZero() {
		end = n.Finished
	}
	elapsed := "-"
	if !n.Started.IsZero() {
		elapsed = end.Sub(n.Started).Round(100 * time.Millisecond).String()
	}
	// Columns give way from the least telling (the bar) to the most, so that a narrow
	// terminal keeps the name, the count and the state.
	const bar, pctCol, wave, elapsedCol = 1, 3, 4, 5 // the optional columns' indexes
	parts := []string{
		fmt.Sprintf("%-16s", trunc(n.Name, 16)),
		m.bar.ViewAs(pct),
		fmt.Sprintf("%3d/%-3d", n.Evicted, n.Total),
		fmt.Sprintf("%3.0f%% ", pct*100),
		fmt.Sprintf("wave %d/%d ", n.Wave, n.maxWave),
		fmt.Sprintf("%-8s", elapsed),
		state,
	}
	room := m.width - 2                                             // the cursor's mark
	for _, drop := range []int{-1, bar, wave, pctCol, elapsedCol} { // -1: every column first
		if drop >= 0 {
			parts[drop] = ""
		}
		var kept []string
		for _, p := range parts {
			if p != "" {
				kept = append(kept, p)
			}
		}
		line := strings.Join(kept, " ")
		if m.width <= 0 || ansi.StringWidth(line) <= room || drop == elapsedCol {
			return line
		}
	}
	return ""
}

// nonEmpty joins the parts that are not empty with ": " (no field printed empty).
func nonEmpty(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 1 {
		return s[:n]
	}
	return s[:n-1] + "…"
}
