// Package confirm is the dashboard's confirmation dialog: it shows the plan of a mutating
// action (what will be evicted, what will block), lets the drain options be set, picks
// the target pool of a move, and asks before anything is done.
package confirm

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Action is what the user asked for.
type Action string

// Actions.
const (
	Cordon   Action = "cordon"
	Uncordon Action = "uncordon"
	Drain    Action = "drain"
	Move     Action = "move"
)

// Options are the drain options a user can set in the dialog (kubectl drain's meanings).
type Options struct {
	GracePeriodSeconds int
	Timeout            time.Duration
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	Force              bool
}

// DefaultOptions are what a dashboard user most often wants: DaemonSet pods ignored.
func DefaultOptions() Options { return Options{GracePeriodSeconds: -1, IgnoreDaemonSets: true} }

// Request is a confirmed action.
type Request struct {
	Action  Action
	Nodes   []string
	Pool    string // move target
	Options Options
}

// Model is the dialog.
type Model struct {
	Req   Request
	Plan  string // the plan text, once computed
	Err   string
	pools []string
	done  bool
	ok    bool
}

var (
	graces   = []int{-1, 0, 30, 60, 300}
	timeouts = []time.Duration{0, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}
)

// New opens the dialog for req; pools are the move targets to pick from.
func New(req Request, pools []string) Model {
	if req.Action == Move && req.Pool == "" && len(pools) > 0 {
		req.Pool = pools[0]
	}
	return Model{Req: req, pools: pools}
}

// Done reports whether the user answered; Confirmed whether the answer was yes.
func (m Model) Done() bool { return m.done }

// Confirmed reports whether the user answered yes.
func (m Model) Confirmed() bool { return m.done && m.ok }

// Update handles the dialog's keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	o := &m.Req.Options
	switch k.String() {
	case "y", "enter":
		if m.Plan != "" || m.Err != "" {
			m.done, m.ok = true, m.Err == ""
		}
	case "n", "esc", "q":
		m.done, m.ok = true, false
	case "i":
		o.IgnoreDaemonSets = !o.IgnoreDaemonSets
	case "e":
		o.DeleteEmptyDirData = !o.DeleteEmptyDirData
	case "f":
		o.Force = !o.Force
	case "g":
		o.GracePeriodSeconds = next(graces, o.GracePeriodSeconds)
	case "t":
		o.Timeout = next(timeouts, o.Timeout)
	case "p":
		if m.Req.Action == Move && len(m.pools) > 0 {
			m.Req.Pool = next(m.pools, m.Req.Pool)
		}
	}
	return m, nil
}

func next[T comparable](list []T, cur T) T {
	for i, v := range list {
		if v == cur {
			return list[(i+1)%len(list)]
		}
	}
	return list[0]
}

// View renders the dialog's text (the caller frames it).
func (m Model) View(width int) string {
	var b strings.Builder
	target := ""
	if m.Req.Action == Move {
		target = " to pool " + orNone(m.Req.Pool) + "  [p] change"
	}
	fmt.Fprintf(&b, "%s %d node(s)%s: %s\n\n", strings.ToUpper(string(m.Req.Action[:1]))+string(m.Req.Action[1:]),
		len(m.Req.Nodes), target, strings.Join(m.Req.Nodes, ", "))
	if m.Req.Action == Drain || m.Req.Action == Move {
		o := m.Req.Options
		timeout := "none"
		if o.Timeout > 0 {
			timeout = o.Timeout.String()
		}
		fmt.Fprintf(&b, "[g] grace period %s  [t] timeout %s  [i] ignore DaemonSets %s  [e] delete emptyDir data %s  [f] force %s\n\n",
			grace(o.GracePeriodSeconds), timeout, yes(o.IgnoreDaemonSets), yes(o.DeleteEmptyDirData), yes(o.Force))
	}
	switch {
	case m.Err != "":
		fmt.Fprintf(&b, "Cannot plan: %s\n\n[esc] back", m.Err)
	case m.Plan == "":
		b.WriteString("Planning...\n")
	default:
		b.WriteString(m.Plan)
		b.WriteString("\n\nProceed? [y] yes  [n] no")
	}
	return b.String()
}

func grace(s int) string {
	if s < 0 {
		return "pod's own"
	}
	return fmt.Sprintf("%ds", s)
}

func yes(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orNone(s string) string {
	if s == "" {
		return "<none: no pools>"
	}
	return s
}
