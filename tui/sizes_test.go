package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// states are the situations the size sweep renders each view in.
var states = []struct {
	name  string
	setup func(t *testing.T, m App) App
}{
	{"plain", func(_ *testing.T, m App) App { return m }},
	{"selection", func(t *testing.T, m App) App {
		m = step(t, m, press("space"))
		m = step(t, m, press("down"))
		return step(t, m, press("space"))
	}},
	{"action running", func(t *testing.T, m App) App {
		m = step(t, m, press("d"))
		m = step(t, m, press("y"))
		now := time.Now()
		for _, ev := range []event.Event{
			{Type: event.EventPlan, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "node-a", Steps: make([]pdb.Step, 2)}}}},
			{Type: event.EventNodeCordoned, Node: "node-a", Time: now},
			{Type: event.EventEvictionBlocked, Node: "node-a", Pod: "shop/web-2", PDB: "shop/web", Reason: "Exhausted",
				Message: "pdb shop/web needs 2 healthy pods, has 2, allows 0; a very long message that never fits a narrow terminal", Time: now},
		} {
			m = step(t, m, EventMsg{ID: 1, Event: ev})
		}
		return m
	}},
	{"dialog", func(t *testing.T, m App) App { return step(t, m, press("m")) }},
	{"quitting", func(t *testing.T, m App) App {
		m = step(t, m, press("c"))
		m = step(t, m, press("y"))
		return step(t, m, press("q"))
	}},
	{"help", func(t *testing.T, m App) App { return step(t, m, press("?")) }},
	{"problem", func(t *testing.T, m App) App {
		s := snapshot()
		s.Problem = "cannot reach the API server at https://127.0.0.1:1 (dial tcp 127.0.0.1:1: connect: connection refused); retrying"
		return step(t, m, SnapshotMsg{Snapshot: s})
	}},
}

// checkFrame fails unless the frame is exactly w x h at most (no line wider, no more lines).
func checkFrame(t *testing.T, m App, w, h int, what string) {
	t.Helper()
	lines := strings.Split(screen(m), "\n")
	if len(lines) != h {
		t.Errorf("%s: %d lines, want %d", what, len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%s: line %d is %d wide: %q", what, i, lw, l)
		}
	}
}

// TestEverySizeRendersWithoutPanic sweeps every width from 40 to 200 at heights from 10 to
// 60 (the small ones one by one, where the footer and help crowd the body, then a few up to
// 60, to keep the run short), in every view and state. One live model goes through all the
// sizes, shrinking and growing (the panic that was: 120x30 -> 80x24 with the nodes table).
func TestEverySizeRendersWithoutPanic(t *testing.T) {
	heights := []int{10, 11, 12, 13, 17, 24, 30, 41, 60}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			m, _ := ready(t, 120, 30)
			m = st.setup(t, m)
			for view := range numViews {
				if m.dialog == nil && !m.quitting {
					m.view = view
				}
				for _, h := range heights {
					for w := 40; w <= 200; w++ {
						next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
						m = next.(App)
						checkFrame(t, m, w, h, fmt.Sprintf("%s, view %s, %dx%d", st.name, viewNames[view], w, h))
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}

func TestResizeFrom120x30To80x24To60x20(t *testing.T) {
	m, _ := ready(t, 120, 30)
	m = step(t, m, press("space"))
	for _, size := range [][2]int{{120, 30}, {80, 24}, {60, 20}, {40, 10}, {200, 60}, {80, 24}} {
		for view := range numViews {
			m.view = view
			next, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m = next.(App)
			m = step(t, m, press("down"))
			checkFrame(t, m, size[0], size[1], fmt.Sprintf("view %s at %dx%d", viewNames[view], size[0], size[1]))
		}
	}
}

func TestFooterAndHelpFit80ColumnsWithoutDoubledKeys(t *testing.T) {
	for _, st := range []string{"plain", "help"} {
		m, _ := ready(t, 80, 24)
		if st == "help" {
			m = step(t, m, press("?"))
		}
		for view := range numViews {
			m.view = view
			lines := strings.Split(screen(m), "\n")
			footer := strings.Join(lines[len(lines)-m.helpHeight():], "\n")
			if strings.Contains(footer, "…") {
				t.Errorf("%s help on %s is cut at 80 columns:\n%s", st, viewNames[view], footer)
			}
			if !strings.Contains(footer, "q quit") && !strings.Contains(footer, "q   quit") {
				t.Errorf("%s help on %s does not say how to quit:\n%s", st, viewNames[view], footer)
			}
			for _, dup := range []string{"up up", "down down"} {
				if strings.Contains(footer, dup) {
					t.Errorf("%s help on %s shows %q:\n%s", st, viewNames[view], dup, footer)
				}
			}
		}
	}
}

func TestConnectionProblemIsOneStatusLine(t *testing.T) {
	m, _ := ready(t, 80, 24)
	s := snapshot()
	s.Nodes, s.Synced = nil, false
	m = step(t, m, SnapshotMsg{Snapshot: s})
	if !strings.Contains(screen(m), "connecting to the API server") {
		t.Errorf("an unsynced source does not say it is connecting:\n%s", screen(m))
	}
	s.Problem = `not allowed to list/watch nodes (RBAC): nodes is forbidden: User "viewer" cannot list resource "nodes"`
	m = step(t, m, SnapshotMsg{Snapshot: s})
	var hits int
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, "not allowed to list/watch nodes") {
			hits++
		}
	}
	if hits != 1 {
		t.Errorf("the problem shows on %d lines, want 1:\n%s", hits, screen(m))
	}
}
