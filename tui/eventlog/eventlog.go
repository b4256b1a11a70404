// Package eventlog is the dashboard's scrollable log of the engine's events.
package eventlog

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// maxLines bounds the log kept in memory.
const maxLines = 2000

// Model is the event log.
type Model struct {
	vp    viewport.Model
	lines []string
}

// New returns an empty log.
func New() Model { return Model{vp: viewport.New()} }

// SetSize fits the log.
func (m *Model) SetSize(w, h int) {
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(h, 1))
}

// Add appends a line for ev (following the tail).
func (m *Model) Add(ev event.Event) {
	m.AddLine(Line(ev))
}

// AddLine appends a line of text.
func (m *Model) AddLine(s string) {
	if s == "" {
		return
	}
	atBottom := m.vp.AtBottom()
	m.lines = append(m.lines, s)
	if len(m.lines) > maxLines {
		m.lines = m.lines[len(m.lines)-maxLines:]
	}
	m.vp.SetContent(strings.Join(m.lines, "\n"))
	if atBottom {
		m.vp.GotoBottom()
	}
}

// Lines returns the log.
func (m Model) Lines() []string { return m.lines }

// Line renders an event as one line, kubectl style.
func Line(ev event.Event) string {
	ts := ev.Time.Format("15:04:05")
	switch ev.Type {
	case event.EventPlan:
		return ""
	case event.EventNodeCordoned:
		if ev.Already {
			return fmt.Sprintf("%s node/%s already cordoned", ts, ev.Node)
		}
		return fmt.Sprintf("%s node/%s cordoned", ts, ev.Node)
	case event.EventEvictionStarted:
		return fmt.Sprintf("%s evicting pod %s (attempt %d)", ts, ev.Pod, ev.Attempt)
	case event.EventEvictionAccepted:
		return ""
	case event.EventEvictionBlocked:
		if ev.PDB == "" { // an order group or a rule, not a budget: no empty "waits on :"
			return fmt.Sprintf("%s pod %s waits: %s", ts, ev.Pod, ev.Message)
		}
		return fmt.Sprintf("%s pod %s waits on %s: %s", ts, ev.Pod, ev.PDB, ev.Message)
	case event.EventPodEvicted:
		return fmt.Sprintf("%s pod/%s evicted", ts, ev.Pod)
	case event.EventNodeDrained:
		return fmt.Sprintf("%s node/%s drained", ts, ev.Node)
	case event.EventNodeUncordoned:
		if ev.Message != "" {
			return fmt.Sprintf("%s node/%s %s", ts, ev.Node, ev.Message)
		}
		return fmt.Sprintf("%s node/%s uncordoned", ts, ev.Node)
	case event.EventNodeMoved:
		return fmt.Sprintf("%s node/%s moved to pool %s", ts, ev.Node, ev.Message)
	case event.EventNodeFailed:
		if ev.Node == "" {
			return fmt.Sprintf("%s error: %s", ts, ev.Message)
		}
		return fmt.Sprintf("%s node/%s failed: %s", ts, ev.Node, ev.Message)
	case event.EventWarning:
		return fmt.Sprintf("%s warning: %s", ts, ev.Message)
	}
	return fmt.Sprintf("%s %s %s %s", ts, ev.Type, ev.Node, ev.Message)
}

// Update scrolls.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	return m, cmd
}

// View renders the visible part of the log.
func (m Model) View() string {
	if len(m.lines) == 0 {
		return "No events yet."
	}
	return m.vp.View()
}
