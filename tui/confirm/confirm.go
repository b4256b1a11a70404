// Package confirm is the dashboard's confirmation dialog: it shows the plan of a mutating
// action (what will be evicted, what will block), lets the drain options be set, picks
// the target pool of a move, and asks before anything is done. The question stays in
// sight whatever the plan's length: the plan scrolls between the options and the question.
package confirm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
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

// Options are the drain settings the dialog fills: a drain.Settings (the one settings
// type of every front end), of which the user sets the grace period, the timeout,
// --ignore-daemonsets, --delete-emptydir-data, --force and --on-blocked ("wait", the
// default, "skip" or "fail"); the rest keep kubectl drain's defaults.
type Options struct {
	drain.Settings
}

// DefaultOptions are what a dashboard user most often wants: kubectl drain's defaults,
// with DaemonSet pods ignored.
func DefaultOptions() Options {
	s := drain.DefaultSettings()
	s.IgnoreDaemonSets, s.OnBlocked = true, onBlocked[0]
	return Options{Settings: s}
}

// Flags are the command-line flags that give the same options to drain or pool move,
// leaving out what is the commands' default: with them a printed command does what the
// dialog did.
func (o Options) Flags() []string {
	var out []string
	if o.IgnoreDaemonSets {
		out = append(out, "--ignore-daemonsets")
	}
	if o.DeleteEmptyDirData {
		out = append(out, "--delete-emptydir-data")
	}
	if o.Force {
		out = append(out, "--force")
	}
	if o.GracePeriodSeconds >= 0 {
		out = append(out, fmt.Sprintf("--grace-period=%d", o.GracePeriodSeconds))
	}
	if o.Timeout > 0 {
		out = append(out, "--timeout="+o.Timeout.String())
	}
	if o.OnBlocked != "" && o.OnBlocked != onBlocked[0] {
		out = append(out, "--on-blocked="+string(o.OnBlocked))
	}
	return out
}

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
	// current is each target node's pools (a move to the only pool a node is in does
	// nothing for it).
	current map[string][]string
	done    bool
	ok      bool
	scroll  int // the plan's first line shown
	// width and height are the room the caller gives the dialog's text (SetSize).
	width, height int
}

var (
	graces    = []int{-1, 0, 30, 60, 300}
	timeouts  = []time.Duration{0, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}
	onBlocked = []drain.OnBlocked{drain.OnBlockedWait, drain.OnBlockedSkip, drain.OnBlockedFail}
)

// New opens the dialog for req; pools are the move targets to pick from and current the
// pools each target node is in now. A move starts on a pool that changes something: one
// no target node is in, else one some target node is not only in.
func New(req Request, pools []string, current map[string][]string) Model {
	m := Model{Req: req, pools: pools, current: current, width: 76, height: 18}
	if req.Action == Move && req.Pool == "" && len(pools) > 0 {
		m.Req.Pool = pools[0]
		if p, ok := first(pools, func(p string) bool { return !m.anyIn(p) }); ok {
			m.Req.Pool = p
		} else if p, ok := first(pools, func(p string) bool { return !m.noop(p) }); ok {
			m.Req.Pool = p
		}
	}
	return m
}

// first returns the first of list for which ok holds.
func first(list []string, ok func(string) bool) (string, bool) {
	for _, v := range list {
		if ok(v) {
			return v, true
		}
	}
	return "", false
}

// anyIn reports whether some target node is in pool p.
func (m Model) anyIn(p string) bool {
	for _, n := range m.Req.Nodes {
		if slices.Contains(m.current[n], p) {
			return true
		}
	}
	return false
}

// noop reports whether moving the targets to pool p would change nothing: each is in
// p and in no other pool.
func (m Model) noop(p string) bool {
	for _, n := range m.Req.Nodes {
		if cur := m.current[n]; len(cur) != 1 || cur[0] != p {
			return false
		}
	}
	return len(m.Req.Nodes) > 0
}

// NoOp reports whether the request would change nothing (a move of nodes to the only
// pool they are in): the dialog then refuses to confirm it.
func (m Model) NoOp() bool { return m.Req.Action == Move && m.noop(m.Req.Pool) }

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
	drainy := m.Req.Action == Drain || m.Req.Action == Move
	switch s := k.String(); {
	case s == "y" || s == "enter":
		if (m.Plan != "" || m.Err != "") && !m.NoOp() {
			m.done, m.ok = true, m.Err == ""
		}
	case s == "n" || s == "esc" || s == "q":
		m.done, m.ok = true, false
	case s == "up" || s == "k":
		m.scroll--
	case s == "down" || s == "j":
		m.scroll++
	case s == "pgup":
		m.scroll -= 10
	case s == "pgdown" || s == "space":
		m.scroll += 10
	case s == "home":
		m.scroll = 0
	case s == "end":
		m.scroll = 1 << 20 // the view clamps it
	case !drainy:
	case s == "i":
		o.IgnoreDaemonSets = !o.IgnoreDaemonSets
	case s == "e":
		o.DeleteEmptyDirData = !o.DeleteEmptyDirData
	case s == "f":
		o.Force = !o.Force
	case s == "g":
		o.GracePeriodSeconds = next(graces, o.GracePeriodSeconds)
	case s == "t":
		o.Timeout = next(timeouts, o.Timeout)
	case s == "o":
		o.OnBlocked = next(onBlocked, o.OnBlocked)
	case s == "p":
		if m.Req.Action == Move && len(m.pools) > 0 {
			m.Req.Pool = next(m.pools, m.Req.Pool)
		}
	}
	m.scroll = m.clampScroll(m.scroll)
	return m, nil
}

// SetSize gives the dialog's text at most width columns and height lines.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = max(width, 10), max(height, 1)
	m.scroll = m.clampScroll(m.scroll)
}

// clampScroll keeps the plan's first line shown between its top and the line that
// shows its end.
func (m Model) clampScroll(s int) int {
	l := m.layout()
	return max(0, min(s, len(l.body)-l.shown))
}

// layout is the dialog cut into its parts at its size.
type layout struct {
	top, body, question []string
	// room is the lines left for the plan; shown how many of its lines show (one less
	// than room when it scrolls: a line says where the view is).
	room, shown int
}

func (m Model) layout() layout {
	width, height := m.width, m.height
	title := fmt.Sprintf("%s %d node(s)", strings.ToUpper(string(m.Req.Action[:1]))+string(m.Req.Action[1:]), len(m.Req.Nodes))
	if m.Req.Action == Move {
		title += " to pool " + orNone(m.Req.Pool) + "  [p] change"
	}
	var l layout
	l.top = wrap(title+": "+strings.Join(m.Req.Nodes, ", "), width)
	if m.Req.Action == Drain || m.Req.Action == Move {
		o := m.Req.Options
		timeout := "none"
		if o.Timeout > 0 {
			timeout = o.Timeout.String()
		}
		l.top = append(l.top, wrap(fmt.Sprintf("[g] grace period %s  [t] timeout %s  [i] ignore DaemonSets %s  [e] delete emptyDir data %s  [f] force %s  [o] on blocked %s",
			grace(o.GracePeriodSeconds), timeout, yes(o.IgnoreDaemonSets), yes(o.DeleteEmptyDirData), yes(o.Force), o.OnBlocked), width)...)
	}
	switch {
	case m.NoOp():
		l.question = wrap(fmt.Sprintf("Nothing to do: every node is already in pool %s and no other. [p] pick another pool  [esc] back", m.Req.Pool), width)
	case m.Err != "":
		l.body = wrap("Cannot plan: "+m.Err, width)
		l.question = []string{"[esc] back"}
	case m.Plan == "":
		l.body = []string{"Planning..."}
		l.question = []string{"[n] no"}
	default:
		l.body = wrap(strings.TrimRight(m.Plan, "\n"), width)
		l.question = []string{"Proceed? [y] yes  [n] no"}
	}
	// The question is never cut; the top gives way before it, the plan before both.
	l.question = cut(l.question, height)
	l.top = cut(l.top, max(0, height-len(l.question)-1))
	l.room = height - len(l.top) - len(l.question) - 2 // a blank line after the top and before the question
	if len(l.top) == 0 {
		l.room++
	}
	l.room = max(l.room, 0)
	l.shown = min(len(l.body), l.room)
	if len(l.body) > l.room && l.room > 1 {
		l.shown = l.room - 1
	}
	return l
}

// ResetPlan forgets the plan (the request changed) and scrolls back to its top.
func (m *Model) ResetPlan() { m.Plan, m.Err, m.scroll = "", "", 0 }

func next[T comparable](list []T, cur T) T {
	for i, v := range list {
		if v == cur {
			return list[(i+1)%len(list)]
		}
	}
	return list[0]
}

// View renders the dialog's text (the caller frames it) in at most the lines and columns
// SetSize gave: the title and options on top, the question at the bottom, the plan between
// them, scrolled (up/down, pgup/pgdown) when it does not fit.
func (m Model) View() string {
	l := m.layout()
	var mid []string
	if l.shown > 0 {
		first := m.clampScroll(m.scroll)
		mid = l.body[first : first+l.shown]
		if l.shown < len(l.body) && l.room > l.shown {
			mid = append(mid[:l.shown:l.shown], fmt.Sprintf("-- plan lines %d-%d of %d: up/down, pgup/pgdown scroll --", first+1, first+l.shown, len(l.body)))
		}
	}
	lines := append([]string(nil), l.top...)
	if len(l.top) > 0 && len(mid) > 0 {
		lines = append(lines, "")
	}
	lines = append(lines, mid...)
	if len(lines) > 0 && len(lines)+len(l.question) < m.height {
		lines = append(lines, "")
	}
	lines = append(lines, l.question...)
	return strings.Join(lines, "\n")
}

// wrap breaks s into lines of at most width columns (words kept whole when they fit).
func wrap(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

func cut(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	return lines
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
