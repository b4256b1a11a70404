package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// longPlan is the plan of two nodes of 7 and 5 pods, as the plan command prints it: more
// lines than a dialog has at 80x24.
func longPlan() string {
	var b strings.Builder
	for _, n := range []struct {
		name string
		pods int
	}{{"node-a", 7}, {"node-b", 5}} {
		fmt.Fprintf(&b, "node/%s: %d pod(s) to evict in 2 wave(s)\n", n.name, n.pods)
		for i := range n.pods {
			fmt.Fprintf(&b, "  wave %d  shop/web-%d  pdb shop/web (maxUnavailable 1, allows 1)\n", 1+i%2, i)
		}
	}
	b.WriteString("plan: 2 node(s), 12 pod(s) to evict in 2 wave(s) (last line of the plan)")
	return b.String()
}

// drainBoth opens the drain dialog for node-a and node-b with the long plan.
func drainBoth(t *testing.T, w, h int) (App, *fakeBackend) {
	t.Helper()
	m, f := ready(t, w, h)
	f.plan = longPlan()
	m = step(t, m, press("space"))
	m = step(t, m, press("down"))
	m = step(t, m, press("space"))
	return step(t, m, press("d")), f
}

func TestDialogKeepsItsQuestionInSightAndScrollsThePlan(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 30}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m, _ := drainBoth(t, size[0], size[1])
			checkFrame(t, m, size[0], size[1], "the dialog")
			s := screen(m)
			for _, want := range []string{"Drain 2 node(s): node-a, node-b", "[o] on blocked wait", "node/node-a: 7 pod(s)", "Proceed? [y] yes  [n] no"} {
				if !strings.Contains(s, want) {
					t.Errorf("the dialog does not show %q:\n%s", want, s)
				}
			}
			// Scrolling to the end shows the plan's last line, with the question still there.
			for range 40 {
				m = step(t, m, press("down"))
			}
			s = screen(m)
			if !strings.Contains(s, "(last line of the plan)") || !strings.Contains(s, "Proceed?") {
				t.Errorf("scrolled to the end, the dialog does not show the plan's last line and the question:\n%s", s)
			}
			checkFrame(t, m, size[0], size[1], "the scrolled dialog")
		})
	}
}

func TestHelpClosesWhenADialogOrTheQuitQuestionOpens(t *testing.T) {
	m, _ := drainBoth(t, 80, 24)
	m = step(t, m, press("n"))
	m = step(t, m, press("?"))
	if !m.showHelp {
		t.Fatal("? did not open the help")
	}
	m = step(t, m, press("d"))
	if m.showHelp || !strings.Contains(screen(m), "Proceed?") {
		t.Fatalf("the help stays open under the dialog:\n%s", screen(m))
	}
	m = step(t, m, press("y"))
	m = step(t, m, press("?"))
	m = step(t, m, press("q"))
	if m.showHelp || !strings.Contains(screen(m), "[y] stop and quit") {
		t.Fatalf("the help stays open under the quit question:\n%s", screen(m))
	}
}

// twoDrains starts a drain of node-a, then one of node-b (two actions), and shows Progress.
func twoDrains(t *testing.T, w, h int) (App, *fakeBackend) {
	t.Helper()
	m, f := ready(t, w, h)
	for i, node := range []string{"node-a", "node-b"} {
		m = step(t, m, press("1"))
		m = step(t, m, press("/"))
		m = step(t, m, press("esc")) // clears the filter typed before
		m = step(t, m, press("/"))
		for _, r := range node {
			m = step(t, m, press(string(r)))
		}
		m = step(t, m, press("enter"))
		m = step(t, m, press("space"))
		m = step(t, m, press("d"))
		m = step(t, m, press("y"))
		now := time.Now()
		for _, ev := range []event.Event{
			{Type: event.EventPlan, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: node, Steps: make([]pdb.Step, 2)}}}},
			{Type: event.EventNodeCordoned, Node: node, Time: now},
		} {
			m = step(t, m, EventMsg{ID: i + 1, Event: ev})
		}
	}
	return step(t, m, press("4")), f
}

func TestProgressCursorMovesAndXCancelsTheRowUnderIt(t *testing.T) {
	m, f := twoDrains(t, 100, 30)
	if len(f.started) != 2 {
		t.Fatalf("%d actions started, want 2", len(f.started))
	}
	m = step(t, m, press("down"))
	if n, _ := m.progress.Current(); n.Name != "node-b" {
		t.Fatalf("down on Progress: the cursor is on %q, want node-b:\n%s", n.Name, screen(m))
	}
	m = step(t, m, press("x"))
	if !f.wasCanceled(1) || f.wasCanceled(0) {
		t.Fatalf("x on node-b's row: cancelled first %v, second %v; want only the second", f.wasCanceled(0), f.wasCanceled(1))
	}
	m = step(t, m, ActionDoneMsg{ID: 2})
	lines := strings.Split(screen(m), "\n")
	var a, b string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "node-a "):
			a = l
		case strings.Contains(l, "node-b "):
			b = l
		}
	}
	if !strings.Contains(b, "stopped") || strings.Contains(a, "stopped") || strings.Contains(a, "stopping") {
		t.Errorf("after x on the second row, node-a %q, node-b %q: want only node-b stopped", a, b)
	}
	m = step(t, m, press("up"))
	if n, _ := m.progress.Current(); n.Name != "node-a" {
		t.Errorf("up on Progress: the cursor is on %q, want node-a", n.Name)
	}
}

func TestAtFiftyByFifteenProgressKeepsItsStateColumn(t *testing.T) {
	m, _ := twoDrains(t, 100, 30)
	for _, size := range [][2]int{{50, 15}, {40, 10}, {60, 20}} {
		next, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m = next.(App)
		checkFrame(t, m, size[0], size[1], "progress")
		s := screen(m)
		for _, node := range []string{"node-a", "node-b"} {
			var row string
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(strings.TrimLeft(l, "> "), node) { // the progress row
					row = l
				}
			}
			if !strings.Contains(row, "draining") || strings.Contains(row, "…") {
				t.Errorf("%dx%d: %s's row %q has lost its state column", size[0], size[1], node, row)
			}
		}
	}
}

func TestHeaderCountsWhatTheFilterShows(t *testing.T) {
	m, _ := ready(t, 100, 30)
	if s := screen(m); !strings.Contains(s, "3 nodes, 0 selected, 2 pools, 1 PDBs") {
		t.Errorf("unfiltered header:\n%s", s)
	}
	m = step(t, m, press("/"))
	for _, r := range "node-a" {
		m = step(t, m, press(string(r)))
	}
	m = step(t, m, press("enter"))
	if s := screen(m); !strings.Contains(s, "1 of 3 nodes, 0 selected, 2 pools, 0 of 1 PDBs") {
		t.Errorf("the header does not count what the filter shows:\n%s", s)
	}
}

func TestQuitHintsAreWholeCommandsWithTheDialogsOptions(t *testing.T) {
	f := newFake()
	m := New(f, true).WithClusterFlags("--kubeconfig=/tmp/kc")
	m = step(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m = step(t, m, SnapshotMsg{Snapshot: snapshot()})
	m = step(t, m, press("d"))
	for _, k := range []string{"e", "o", "g", "g"} { // emptyDir data, on blocked skip, grace 0 then 30s
		m = step(t, m, press(k))
	}
	m = step(t, m, press("y"))
	if len(f.started) != 1 || f.started[0].Options.OnBlocked != "skip" {
		t.Fatalf("the drain started with %+v, want --on-blocked skip", f.started)
	}
	m = step(t, m, press("q"))
	m = step(t, m, press("y"))
	m = step(t, m, ActionDoneMsg{ID: 1})
	got := strings.Join(m.Stopped(), "\n")
	for _, want := range []string{
		"finish with `kubectl maintenance drain node-a --ignore-daemonsets --delete-emptydir-data --grace-period=30 --on-blocked=skip --kubeconfig=/tmp/kc`",
		"undo with `kubectl maintenance uncordon node-a --kubeconfig=/tmp/kc`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the quit hint does not say %q:\n%s", want, got)
		}
	}
}
