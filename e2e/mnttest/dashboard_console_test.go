package mnttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// flat is s with its whitespace folded: a text wrapped over lines reads as one.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// Issue 42: the dashboard as the console of a shared controller, in tmux at 80x24 and
// 120x40 on the real cluster, with two Maintenances: one Running and waiting on a budget
// that allows nothing, one Scheduled for a weekly window. The Nodes tab marks the held
// and the planned node with their Maintenance; Enter on the waiting node shows the whole
// wait and the budget's numbers; Esc goes back; the Events tab shows the node's Events;
// the Scheduled object shows its window and end, and its cancel prompt does not speak
// of cordoned nodes.
func TestDashboardConsoleOfASharedController(t *testing.T) {
	e := oneNodeWorkload(t, "held", "ledger", 2, &fixture.PDBSpec{App: "ledger", MaxUnavailable: fixture.Int(0)}, 0)
	fixture.NeedTmux(t)
	startController(e)
	mc := mclient(t)
	held, planned := e.Nodes[0], e.Nodes[1]
	// Short names (the namespace's random part): the MAINTENANCE column is never cut.
	id := e.NS[strings.LastIndex(e.NS, "-")+1:]
	now, weekly := "now-"+id, "wk-"+id
	day := time.Now().UTC().AddDate(0, 0, 3).Weekday().String()[:3] // not today: the window is closed
	create(e, mc, now, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{held}})
	create(e, mc, weekly, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{planned},
		Window: &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{day}, Start: "02:00", End: "06:00"}}})
	m, _ := waitFor(e, mc, now, "Running with a blocker", func(m *mntv1.Maintenance) bool {
		return m.Status.Phase == mntv1.PhaseRunning && len(m.Status.Nodes) == 1 && len(m.Status.Nodes[0].Blockers) > 0
	})
	wait := m.Status.Nodes[0].Blockers[0].Message
	waitFor(e, mc, weekly, "Scheduled", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhaseScheduled })
	window := fmt.Sprintf("%s 02:00-06:00 UTC", day)

	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := fixture.StartTerm(t, fmt.Sprintf("%s-%d", e.NS, size[0]), size[0], size[1], fmt.Sprintf("%s --kubeconfig %s dashboard", plugin, shared.Kubeconfig))
			tm.WaitFor(" nodes, ", 30*time.Second)
			tm.Keys("/")
			tm.Keys("-l", e.NS)
			tm.Keys("Enter")
			s := tm.WaitUntil("both nodes marked", 30*time.Second, func(s string) bool {
				return strings.Contains(s, now+" Running") && strings.Contains(s, weekly+" Scheduled")
			})
			t.Logf("the Nodes tab (the filter leaves only this test's two nodes):\n%s", s)

			// Enter on the held node (the first row): the whole wait, the budget's numbers.
			tm.Keys("Enter")
			s = tm.WaitFor("Node "+held, 10*time.Second)
			page := s
			for range 4 { // the page may be longer than the screen
				tm.Keys("PageDown")
				time.Sleep(300 * time.Millisecond)
				page += tm.Screen()
			}
			t.Logf("the detail of %s (first screen):\n%s", held, s)
			fixture.MustContain(t, "detail", flat(page), "maintenance: "+now+" (Running) holds it", flat(wait),
				"Budget pdb "+e.NS+"/ledger", "maxUnavailable 0", "allows 0 now; healthy 2, desired 2, expected 2")
			for _, l := range strings.Split(page, "\n") {
				if strings.Contains(l, " : ") || strings.Contains(l, ": :") {
					t.Errorf("an empty field: %q", l)
				}
			}
			tm.Keys("Escape")
			tm.WaitUntil("the list back", 10*time.Second, func(s string) bool { return strings.Contains(s, "NAME") && !strings.Contains(s, "Node "+held) })

			// The Events tab: the node's Events, read from the API.
			tm.Keys("5")
			s = tm.WaitUntil("the node's Events", 30*time.Second, func(s string) bool {
				return strings.Contains(s, "Events of node/"+held) && strings.Contains(s, "DrainStarted")
			})
			t.Logf("the Events tab:\n%s", s)
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, "…") && !strings.Contains(l, "maintenances:") {
					t.Errorf("an Event is cut, not wrapped: %q", l)
				}
			}

			// Progress: the Scheduled object's window, as written, with its next opening.
			tm.Keys("4")
			s = tm.WaitFor("window "+window+"; next ", 30*time.Second)
			t.Logf("Progress:\n%s", s)

			// x on the Scheduled object: nothing was cordoned, and the prompt says so.
			question := "Cancel maintenance/" + weekly + " "
			for i := 0; ; i++ {
				tm.Keys("x")
				s = tm.WaitFor("Proceed? [y] yes  [n] no", 10*time.Second)
				if strings.Contains(s, question) {
					break
				}
				if i > 30 {
					t.Fatalf("x never asked about maintenance/%s:\n%s", weekly, s)
				}
				tm.Keys("n", "Down")
			}
			t.Logf("the cancel prompt of the Scheduled object:\n%s", s)
			if strings.Contains(flat(s), "stay cordoned") || !strings.Contains(flat(s), "no node was cordoned") {
				t.Errorf("the cancel prompt of a Scheduled object speaks of cordoned nodes:\n%s", s)
			}
			tm.Keys("n")
			tm.WaitFor("maintenance/"+weekly+" not cancelled", 10*time.Second)

			// d on it: its detail, with the window, its next start and its end.
			tm.Keys("d")
			s = tm.WaitFor("Maintenance "+weekly, 10*time.Second)
			t.Logf("the detail of the Scheduled object:\n%s", s)
			fixture.MustContain(t, "Scheduled detail", flat(s), "window: "+window, "next start: ", "window ends: ")
			tm.Keys("Escape")
			tm.WaitUntil("the detail closed", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Maintenance "+weekly) })
			tm.Keys("q")
			tm.WaitFor("EXITED 0", 10*time.Second)
		})
	}
	if e.Node(planned).Spec.Unschedulable {
		t.Errorf("the planned node %s was cordoned", planned)
	}
}
