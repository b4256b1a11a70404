package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// controlCurrent acts on the Progress view's row under the cursor: x cancels a running
// action of this dashboard or a Maintenance; p and r pause and resume a Maintenance.
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
	a.status = fmt.Sprintf("%s of maintenance/%s...", op, m.Name)
	b, name := a.backend, m.Name
	return a, func() tea.Msg { return MaintenanceDoneMsg{Name: name, Op: op, Err: b.ControlMaintenance(name, op)} }
}

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
	return fmt.Sprintf("maintenance/%s cancelled: its run stops, its nodes stay cordoned with their state", msg.Name)
}
