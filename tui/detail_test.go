package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// longWait is a wait reason longer than any terminal line.
const longWait = "pdb shop/ledger has maxUnavailable 0: it never allows a disruption; the eviction of shop/ledger-0 is refused until someone relaxes the budget or scales the workload, and the run waits on it without end"

// consoleSnapshot is a cluster with two Maintenances: rack-7 Running (node-b held, its
// pod waiting on a budget) and weekly Scheduled (node-c planned).
func consoleSnapshot() data.Snapshot {
	s := snapshot()
	s.Nodes[1].Maintenance, s.Nodes[1].MaintenancePhase, s.Nodes[1].Held = "rack-7", "Running", true
	s.Nodes[2].Maintenance, s.Nodes[2].MaintenancePhase = "weekly", "Scheduled"
	s.PDBs[0].NeverWhy = "pdb shop/ledger has maxUnavailable 0: it never allows a disruption"
	s.PDBs[0].Pods = []string{"shop/ledger-0 on node-b", "shop/ledger-1 on node-a"}
	s.Pods = []data.PodRow{{Key: "shop/ledger-0", Node: "node-b", Budgets: []string{"shop/ledger"}, Never: true, Reason: s.PDBs[0].NeverWhy}}
	s.Maintenances = []data.MaintenanceRow{
		{Name: "rack-7", Action: "Drain", Phase: "Running", Nodes: "0/1 nodes", Selects: "nodes node-b", Cordoned: []string{"node-b"},
			Counts: "0 drained, 1 pending, 0 failed, 0 evicted, 1 pods pending, 3 evictions, 3 refused",
			NodeList: []data.MaintenanceNode{{Name: "node-b", State: "Draining", PodsLeft: 1,
				Blockers: []data.Blocker{{Pod: "shop/ledger-0", PDB: "shop/ledger", Message: longWait, Cause: "the budget never allows a disruption", Remedy: "raise maxUnavailable of pdb shop/ledger to 1"}}}}},
		{Name: "weekly", Action: "Drain", Phase: "Scheduled", Nodes: "0/0 nodes", Selects: "nodes node-c",
			Window: "Sat 02:00-06:00 UTC", NextStart: "2026-12-05T02:00:00Z", WindowEnd: "2026-12-05T06:00:00Z",
			NodeList: []data.MaintenanceNode{{Name: "node-c", State: "Pending"}}},
	}
	return s
}

// emptyField finds a field printed empty: "waits on : x", "budget: :", a label with
// nothing after its colon but a comma.
var emptyField = regexp.MustCompile(`\s:|:\s*:|:\s*,`)

func consoleApp(t *testing.T, w, h int) (App, *fakeBackend) {
	f := newFake()
	f.objEvs = map[data.Ref][]data.EventRow{
		{Kind: "Node", Name: "node-b"}: {
			{Time: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), Type: "Normal", Reason: "Cordoned", Message: "node cordoned"},
			{Time: time.Date(2026, 11, 28, 10, 2, 0, 0, time.UTC), Type: "Warning", Reason: "DrainBlocked", Message: "pod shop/ledger-0 waits", Count: 3},
			{Time: time.Date(2026, 11, 28, 10, 1, 0, 0, time.UTC), Type: "Normal", Reason: "DrainStarted", Message: "draining"},
		},
	}
	m := New(f, true)
	m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = step(t, m, SnapshotMsg{Snapshot: consoleSnapshot()})
	return m, f
}

// The detail view of each kind says everything the read model knows of the object,
// the long wait whole (wrapped, never cut) at 80 columns, and prints no empty field.
func TestDetailViewOfEachKind(t *testing.T) {
	tests := []struct {
		name string
		keys []string // from the Nodes view
		want []string
	}{
		{"node: its Maintenance, the whole wait, the budget's numbers and other pods, the remedy, its Events",
			[]string{"down", "enter"},
			[]string{"Node node-b", "maintenance: rack-7 (Running) holds it", "raise maxUnavailable of pdb shop/ledger to 1",
				"Budget pdb shop/ledger", "minAvailable N/A, maxUnavailable 0", "allows 0 now; healthy 2, desired 2, expected 2",
				"its other pods: shop/ledger-1 on node-a", "DrainBlocked", "Cordoned"}},
		{"pod: its node, why, its budget", []string{"down", "enter", "down", "down", "enter"},
			[]string{"Pod shop/ledger-0", "node: node-b", "never goes: pdb shop/ledger has maxUnavailable 0", "Waits in maintenance rack-7 (Running), node node-b", "Budget pdb shop/ledger"}},
		{"budget: its numbers and its pods", []string{"3", "enter"},
			[]string{"PodDisruptionBudget shop/ledger", "allows 0 now", "never allows: pdb shop/ledger has maxUnavailable 0", "shop/ledger-0 on node-b", "shop/ledger-1 on node-a"}},
		{"running Maintenance: phase, nodes, counts, blockers", []string{"4", "enter"},
			[]string{"Maintenance rack-7", "phase: Running", "selects: nodes node-b", "counts: 0 drained, 1 pending", "cordoned by it: node-b", "node node-b Draining, 1 pod(s) left", "remedy: raise maxUnavailable"}},
		{"scheduled Maintenance: the window as written, next start, end", []string{"4", "down", "d"},
			[]string{"Maintenance weekly", "phase: Scheduled", "window: Sat 02:00-06:00 UTC", "next start: 2026-12-05T02:00:00Z", "window ends: 2026-12-05T06:00:00Z", "node node-c Pending"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				m, _ := consoleApp(t, size[0], 200) // tall: the whole page on screen
				for _, k := range tc.keys {
					m = step(t, m, press(k))
				}
				s := screen(m)
				flat := strings.Join(strings.Fields(s), " ")
				for _, w := range tc.want {
					if !strings.Contains(flat, w) {
						t.Errorf("%d columns: the detail lacks %q:\n%s", size[0], w, s)
					}
				}
				if tc.name[:4] == "node" && !strings.Contains(flat, strings.Join(strings.Fields(longWait), " ")) {
					t.Errorf("%d columns: the wait is not whole:\n%s", size[0], s)
				}
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, "…") && !strings.Contains(l, "enter") {
						t.Errorf("%d columns: a line is cut: %q", size[0], l)
					}
					if emptyField.MatchString(l) {
						t.Errorf("%d columns: an empty field: %q", size[0], l)
					}
				}
			})
		}
	}
}

// Esc goes back page by page, then to the list with its cursor where it was; Events
// are newest first.
func TestDetailEscKeepsTheCursorAndEventsAreNewestFirst(t *testing.T) {
	m, _ := consoleApp(t, 80, 40)
	m = step(t, m, press("down"))
	m = step(t, m, press("enter"))
	s := screen(m)
	if i, j := strings.Index(s, "DrainBlocked"), strings.Index(s, "Cordoned"); i < 0 || j < 0 || i > j {
		t.Errorf("Events not newest first:\n%s", s)
	}
	m = step(t, m, press("down"))
	m = step(t, m, press("enter")) // the Maintenance link
	if !strings.Contains(screen(m), "Maintenance rack-7") {
		t.Fatalf("enter on the link did not open the Maintenance:\n%s", screen(m))
	}
	m = step(t, m, press("esc"))
	if !strings.Contains(screen(m), "Node node-b") {
		t.Fatalf("esc did not go back to the node:\n%s", screen(m))
	}
	m = step(t, m, press("esc"))
	if m.detail.Active() || m.nodes.Current() != "node-b" {
		t.Errorf("after esc: detail open %v, cursor on %q, want the list on node-b", m.detail.Active(), m.nodes.Current())
	}
}

// The Events view shows the Events of the node under the cursor when it was opened; the
// Nodes view marks held and planned nodes; the header counts Maintenances by phase.
func TestEventsViewNodeMarksAndHeaderCounts(t *testing.T) {
	for _, w := range []int{80, 120} {
		m, _ := consoleApp(t, w, 24)
		s := screen(m)
		for _, want := range []string{"rack-7 Running", "weekly Scheduled", "maintenances: 1 Running, 1 Scheduled"} {
			if !strings.Contains(s, want) {
				t.Errorf("%d columns: the Nodes view lacks %q:\n%s", w, want, s)
			}
		}
		m = step(t, m, press("down"))
		m = step(t, m, press("5"))
		s = screen(m)
		for _, want := range []string{"Events of node/node-b", "DrainBlocked", "DrainStarted", "Cordoned"} {
			if !strings.Contains(s, want) {
				t.Errorf("%d columns: the Events view lacks %q:\n%s", w, want, s)
			}
		}
	}
}

// Progress shows a Scheduled object's window, its next start and end, not a bare date.
func TestProgressShowsTheWindow(t *testing.T) {
	for _, w := range []int{80, 120} {
		m, _ := consoleApp(t, w, 30)
		m = step(t, m, press("4"))
		s := screen(m)
		if want := "window Sat 02:00-06:00 UTC; next 2026-12-05 02:00-06:00 UTC"; !strings.Contains(s, want) {
			t.Errorf("%d columns: Progress lacks %q:\n%s", w, want, s)
		}
	}
}

// A view key in the detail view leaves it; 5 shows the Events of the object it showed.
func TestViewKeyFromTheDetailShowsItsEvents(t *testing.T) {
	m, _ := consoleApp(t, 80, 30)
	m = step(t, m, press("4"))
	m = step(t, m, press("d")) // rack-7's detail
	m = step(t, m, press("5"))
	if s := screen(m); m.detail.Active() || !strings.Contains(s, "Events of maintenance/rack-7") {
		t.Errorf("5 from the detail of rack-7 shows:\n%s", s)
	}
}
