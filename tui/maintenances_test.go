package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// The Progress view lists the cluster's Maintenances below the nodes; p, r and x on one
// pause, resume and cancel it through the backend; what cannot apply is said, not sent.
func TestProgressListsMaintenancesAndControlsThem(t *testing.T) {
	f := newFake()
	m := New(f, true)
	m = step(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	snap := snapshot()
	snap.Maintenances = []data.MaintenanceRow{
		{Name: "rack-7", Action: "Drain", Phase: "Running", Nodes: "1/3 nodes", Message: "waiting on pdb shop/web"},
		{Name: "old", Action: "Drain", Phase: "Succeeded", Nodes: "2/2 nodes", Done: true},
	}
	m = step(t, m, SnapshotMsg{Snapshot: snap})
	m = step(t, m, press("4"))
	s := screen(m)
	for _, want := range []string{"Maintenances (run by the controller; p pause, r resume, x cancel)", "rack-7", "Running", "1/3 nodes", "waiting on pdb shop/web", "old"} {
		if !strings.Contains(s, want) {
			t.Errorf("Progress does not show %q:\n%s", want, s)
		}
	}
	tests := []struct {
		name    string
		keys    []string
		control string // what reached the backend, "" for nothing
		status  string
	}{
		{"p pauses the one under the cursor", []string{"p"}, "pause rack-7", "maintenance/rack-7 paused"},
		{"r on a running one is said, not sent", []string{"r"}, "", "already running"},
		{"x asks first and sends nothing", []string{"x"}, "", ""},
		{"x then y cancels it", []string{"x", "y"}, "cancel rack-7", "maintenance/rack-7 cancelled"},
		{"x then enter cancels it", []string{"x", "enter"}, "cancel rack-7", "maintenance/rack-7 cancelled"},
		{"x then n keeps it", []string{"x", "n"}, "", "maintenance/rack-7 not cancelled"},
		{"x then esc keeps it", []string{"x", "esc"}, "", "maintenance/rack-7 not cancelled"},
		{"x on a finished one asks too", []string{"down", "x", "y"}, "cancel old", "maintenance/old cancelled"},
		{"p on a finished one is said, not sent", []string{"down", "p"}, "", "has ended (Succeeded)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.controls)
			mm := m
			for _, k := range tc.keys {
				mm = step(t, mm, press(k))
			}
			var got []string
			if len(f.controls) > before {
				got = f.controls[before:]
			}
			if want := []string{tc.control}; tc.control == "" && len(got) != 0 || tc.control != "" && !slices.Equal(got, want) {
				t.Errorf("backend got %q, want %q", got, tc.control)
			}
			if !strings.Contains(mm.status, tc.status) {
				t.Errorf("status %q, want it to say %q", mm.status, tc.status)
			}
		})
	}
}

// x on a Maintenance asks in the confirmation dialog's frame, with its answer line, what
// a cancel does; the question keeps its answer line at any size, and keys other than
// the answers change nothing.
func TestCancellingAMaintenanceAsksFirst(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}, {40, 12}} {
		f := newFake()
		m := New(f, true)
		m = step(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		snap := snapshot()
		snap.Maintenances = []data.MaintenanceRow{{Name: "rack-7", Action: "Drain", Phase: "Running", Nodes: "1/3 nodes", Cordoned: []string{"n1", "n2"}}}
		m = step(t, m, SnapshotMsg{Snapshot: snap})
		m = step(t, m, press("4"))
		m = step(t, m, press("x"))
		m = step(t, m, press("p")) // not an answer: ignored, not a pause
		s := screen(m)
		want := []string{"Proceed? [y] yes  [n] no"}
		if size[0] >= 80 {
			want = append(want, "Cancel maintenance/rack-7 (Drain, Running, 1/3 nodes)?", "2 nodes stay cordoned")
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(strings.Fields(s), " "), strings.Join(strings.Fields(w), " ")) {
				t.Errorf("%dx%d: the question does not show %q:\n%s", size[0], size[1], w, s)
			}
		}
		if len(f.controls) != 0 {
			t.Errorf("%dx%d: the backend got %q before an answer", size[0], size[1], f.controls)
		}
		m = step(t, m, press("y"))
		if !slices.Equal(f.controls, []string{"cancel rack-7"}) {
			t.Errorf("%dx%d: after y the backend got %q, want the cancel", size[0], size[1], f.controls)
		}
		if strings.Contains(screen(m), "Proceed?") {
			t.Errorf("%dx%d: the question stays after the answer:\n%s", size[0], size[1], screen(m))
		}
	}
}

// The cancel prompt says what a cancel really does for the object's phase.
func TestCancelEffectSaysWhatReallyHappens(t *testing.T) {
	tests := []struct {
		name      string
		row       data.MaintenanceRow
		want, not string
	}{
		{"Scheduled: nothing cordoned", data.MaintenanceRow{Phase: "Scheduled"}, "no node was cordoned", "stay cordoned"},
		{"Pending: nothing cordoned", data.MaintenanceRow{Phase: "Pending"}, "no node was cordoned", "stay cordoned"},
		{"Running before its first node", data.MaintenanceRow{Phase: "Running"}, "nothing is left to undo", "stay cordoned"},
		{"Running with one node cordoned", data.MaintenanceRow{Phase: "Running", Cordoned: []string{"n1"}}, "Its node stays cordoned with its state (n1)", "no node"},
		{"Paused with two", data.MaintenanceRow{Phase: "Paused", Cordoned: []string{"n1", "n2"}}, "Its 2 nodes stay cordoned with their state (n1, n2)", "no node"},
		{"finished", data.MaintenanceRow{Phase: "Succeeded", Done: true, Cordoned: []string{"n1"}}, "It has ended (Succeeded)", "stay cordoned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cancelEffect(tc.row)
			if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
				t.Errorf("cancelEffect = %q, want %q and not %q", got, tc.want, tc.not)
			}
		})
	}
}
