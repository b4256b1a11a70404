package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// controlCurrent acts on the Progress view's row under the cursor: x cancels a running
// action of this dashboard or (once confirmed, as every action that changes the cluster
// is) a Maintenance; p and r pause and resume a Maintenance.
func (a App) controlCurrent(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := a.keys
	m, onMaintenance := a.progress.CurrentMaintenance()
	if !onMaintenance {
		if key.Matches(msg, k.CancelAction) {
			return a.cancelCurrent()
		}
		a.status = "p and r pause and resume a Maintenance: move the cursor to one (below the nodes)"
		return a, nil
	}
	op := MaintenanceCancel
	switch {
	case key.Matches(msg, k.Pause):
		op = MaintenancePause
	case key.Matches(msg, k.Resume):
		op = MaintenanceResume
	}
	switch {
	case m.Done && op != MaintenanceCancel:
		a.status = fmt.Sprintf("maintenance/%s has ended (%s): nothing to %s", m.Name, m.Phase, op)
		return a, nil
	case m.Deleting:
		a.status = fmt.Sprintf("maintenance/%s is being cancelled", m.Name)
		return a, nil
	case op == MaintenancePause && m.Paused, op == MaintenanceResume && !m.Paused:
		a.status = fmt.Sprintf("maintenance/%s is already %s", m.Name, map[bool]string{true: "paused", false: "running"}[m.Paused])
		return a, nil
	}
	if op == MaintenanceCancel {
		a.cancelling = &m
		a.showHelp = false // the help would hide the question
		a.resize()
		return a, nil
	}
	return a.controlMaintenance(m.Name, op)
}

// controlMaintenance sends op on Maintenance name to the backend (in a command: it may
// block on the API).
func (a App) controlMaintenance(name, op string) (tea.Model, tea.Cmd) {
	a.status = fmt.Sprintf("%s of maintenance/%s...", op, name)
	b := a.backend
	return a, func() tea.Msg { return MaintenanceDoneMsg{Name: name, Op: op, Err: b.ControlMaintenance(name, op)} }
}

// cancelKey answers the question a Maintenance's cancel (x) asks: y or enter cancels it,
// n, esc, q or ctrl+c keeps it; any other key is ignored.
func (a App) cancelKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	m := *a.cancelling
	switch msg.String() {
	case "y", "enter":
		a.cancelling = nil
		return a.controlMaintenance(m.Name, MaintenanceCancel)
	case "n", "esc", "q", "ctrl+c":
		a.cancelling = nil
		a.status = fmt.Sprintf("maintenance/%s not cancelled", m.Name)
	}
	return a, nil
}

// cancelQuestion asks before cancelling a Maintenance, in at most h lines of w columns,
// with the confirmation dialog's answer line: what it is, what a cancel does to it.
func (a App) cancelQuestion(w, h int) string {
	m := a.cancelling
	var about []string // what the row says of it (a phase is empty until a controller takes it up)
	for _, v := range []string{m.Action, m.Phase, m.Nodes} {
		if v != "" {
			about = append(about, v)
		}
	}
	head := fmt.Sprintf("Cancel maintenance/%s?", m.Name)
	if len(about) > 0 {
		head = fmt.Sprintf("Cancel maintenance/%s (%s)?", m.Name, strings.Join(about, ", "))
	}
	what := cancelEffect(*m)
	lines := append(wrapLines(head, w), "")
	lines = append(append(lines, wrapLines(what, w)...), "", "Proceed? [y] yes  [n] no")
	if len(lines) > h { // a tiny terminal: the answer line is never cut
		lines = lines[len(lines)-h:]
	}
	return strings.Join(lines, "\n")
}

func wrapLines(s string, w int) []string { return strings.Split(ansi.Wrap(s, w, ""), "\n") }

// maintenanceResult is the status line after a pause, resume or cancel.
func maintenanceResult(msg MaintenanceDoneMsg) string {
	if msg.Err != nil {
		return fmt.Sprintf("%s of maintenance/%s failed: %v", msg.Op, msg.Name, msg.Err)
	}
	switch msg.Op {
	case MaintenancePause:
		return fmt.Sprintf("maintenance/%s paused: no new eviction or node until resumed (r)", msg.Name)
	case MaintenanceResume:
		return fmt.Sprintf("maintenance/%s resumed", msg.Name)
	}
	return fmt.Sprintf("maintenance/%s cancelled", msg.Name)
}

// cancelEffect says what a cancel of m really does for its phase: a finished object is
// only deleted; one that has cordoned nothing yet (Scheduled, Pending, or a run that has
// not reached a node) leaves no node cordoned; a run that has cordoned nodes leaves them
// cordoned, named.
func cancelEffect(m data.MaintenanceRow) string {
	switch {
	case m.Done:
		return fmt.Sprintf("It has ended (%s): cancelling deletes the Maintenance object; its nodes keep their state.", m.Phase)
	case len(m.Cordoned) == 0 && m.Phase == "Scheduled":
		return "Its window has not opened: no node was cordoned and none will be. The Maintenance object is deleted and its nodes lose their MaintenancePlanned condition."
	case len(m.Cordoned) == 0:
		return "Its run stops before any node: no node was cordoned by it, nothing is left to undo. The Maintenance object is deleted."
	}
	stay := "Its node stays cordoned with its state"
	if len(m.Cordoned) > 1 {
		stay = fmt.Sprintf("Its %d nodes stay cordoned with their state", len(m.Cordoned))
	}
	return fmt.Sprintf("Its run stops: no new eviction and no new node. %s (%s); uncordon to undo. The Maintenance object is deleted.",
		stay, strings.Join(m.Cordoned, ", "))
}
