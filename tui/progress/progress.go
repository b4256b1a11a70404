// Package progress is the dashboard's per-node drain progress: a bar of evicted over total
// pods, the current wave, the current blocker with its numbers, the elapsed time, and a
// spinner while a node waits. It is fed the drain engine's events.
package progress

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
)

// Node is one node's progress.
type Node struct {
	Name      string
	Total     int
	Evicted   int
	Wave      int
	Blocker   string
	Started   time.Time
	Finished  time.Time
	Failed    string
	Drained   bool
	Cordoned  bool
	order     int
	maxWave   int
	lastEvent time.Time
}

// Model holds the progress of every node of the current action.
type Model struct {
	nodes   map[string]*Node
	bar     progress.Model
	spinner spinner.Model
	width   int
	next    int
}

// New returns an empty progress model.
func New() Model {
	return Model{nodes: map[string]*Node{}, bar: progress.New(progress.WithWidth(30), progress.WithoutPercentage()),
		spinner: spinner.New(spinner.WithSpinner(spinner.Line))}
}

// SetWidth fits the bars to the screen.
func (m *Model) SetWidth(w int) {
	m.width = w
	m.bar.SetWidth(max(10, min(40, w-64)))
}

// Reset forgets every node (a new action starts).
func (m *Model) Reset() { m.nodes, m.next = map[string]*Node{}, 0 }

func (m *Model) node(name string) *Node {
	n := m.nodes[name]
	if n == nil {
		n = &Node{Name: name, order: m.next}
		m.next++
		m.nodes[name] = n
	}
	return n
}

// Apply folds one engine event into the progress.
func (m *Model) Apply(ev drain.Event) {
	if ev.Type == drain.EventPlan && ev.Plan != nil {
		for _, np := range ev.Plan.Nodes {
			n := m.node(np.Name)
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
	n := m.node(ev.Node)
	n.lastEvent = ev.Time
	switch ev.Type {
	case drain.EventNodeCordoned:
		n.Cordoned = true
		if n.Started.IsZero() {
			n.Started = ev.Time
		}
	case drain.EventEvictionStarted:
		n.Wave = max(n.Wave, ev.Wave)
	case drain.EventEvictionBlocked:
		n.Blocker = fmt.Sprintf("%s: %s", ev.Pod, ev.Message)
	case drain.EventPodEvicted:
		n.Evicted++
		if n.Evicted >= n.Total {
			n.Blocker = ""
		}
	case drain.EventNodeDrained:
		n.Drained, n.Finished, n.Blocker = true, ev.Time, ""
		n.Evicted = max(n.Evicted, n.Total)
	case drain.EventNodeFailed:
		n.Failed, n.Finished = ev.Message, ev.Time
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

// Active reports whether some node is still in progress.
func (m Model) Active() bool {
	for _, n := range m.nodes {
		if !n.Drained && n.Failed == "" {
			return true
		}
	}
	return false
}

// Update advances the spinner.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.spinner, cmd = m.spinner.Update(msg)
	return m, cmd
}

// Tick starts the spinner.
func (m Model) Tick() tea.Cmd { return m.spinner.Tick }

// View renders one line per node (two when it waits on something), at time now.
func (m Model) View(now time.Time) string {
	nodes := m.Nodes()
	if len(nodes) == 0 {
		return "No action running. Select nodes on the Nodes view (space) and press d to drain."
	}
	var b strings.Builder
	for _, n := range nodes {
		pct := 1.0
		if n.Total > 0 {
			pct = float64(n.Evicted) / float64(n.Total)
		}
		state := m.spinner.View() + " draining"
		switch {
		case n.Failed != "":
			state = "failed"
		case n.Drained:
			state = "done"
		case !n.Cordoned:
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
		fmt.Fprintf(&b, "%-16s %s %3d/%-3d %3.0f%%  wave %d/%d  %-10s %s\n", trunc(n.Name, 16), m.bar.ViewAs(pct),
			n.Evicted, n.Total, pct*100, n.Wave, n.maxWave, state, elapsed)
		if n.Failed != "" {
			fmt.Fprintf(&b, "    error: %s\n", trunc(n.Failed, max(20, m.width-11)))
		} else if n.Blocker != "" && !n.Drained {
			fmt.Fprintf(&b, "    waits: %s\n", trunc(n.Blocker, max(20, m.width-11)))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 1 {
		return s[:n]
	}
	return s[:n-1] + "…"
}
