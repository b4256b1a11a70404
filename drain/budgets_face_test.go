package drain

import (
	"testing"
)

// The budgets part's face (budgets_part.go) alone: what each call the run makes does to
// the part's state, with no engine and no run.
func TestBudgetsFace(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(g *budgetsRig, st *podState)
		// after the call: pods parked on ns/web, allowances reserved on it, the pod's
		// leaving time recorded, drain-rule holds on node n1
		parked, reserved int
		goneAt           bool
		held             int
		woken            bool // the parked pod was queued again
	}{
		{name: "nothing: parked and reserved", do: func(*budgetsRig, *podState) {}, parked: 1, reserved: 1},
		{name: "unpark: reserved still", do: func(g *budgetsRig, st *podState) { g.bs.unparkLocked(st) }, reserved: 1},
		{name: "release: the room it gives back wakes the waiter", do: func(g *budgetsRig, st *podState) { g.bs.releaseLocked(st) }, woken: true},
		{name: "left (node gone): neither, no staleness evidence", do: func(g *budgetsRig, st *podState) { g.bs.leftLocked(st) }},
		{name: "gone: neither, and when it went", do: func(g *budgetsRig, st *podState) { g.bs.goneLocked(st) }, goneAt: true},
		{name: "held by a rule", do: func(g *budgetsRig, st *podState) {
			g.bs.holdLocked(&heldPod{node: "n1", key: "ns/h", reason: ReasonWaitCompleted, since: g.clock.Now(), pod: st.pod})
		}, parked: 1, reserved: 1, held: 1},
		{name: "held, then let go when no longer seen", do: func(g *budgetsRig, st *podState) {
			g.bs.holdLocked(&heldPod{node: "n1", key: "ns/h", reason: ReasonWaitCompleted, since: g.clock.Now(), pod: st.pod})
			g.bs.letGoHeldLocked("n1", map[string]bool{})
		}, parked: 1, reserved: 1},
		{name: "held, kept while seen", do: func(g *budgetsRig, st *podState) {
			g.bs.holdLocked(&heldPod{node: "n1", key: "ns/h", reason: ReasonWaitCompleted, since: g.clock.Now(), pod: st.pod})
			g.bs.letGoHeldLocked("n1", map[string]bool{"ns/h": true})
		}, parked: 1, reserved: 1, held: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newBudgetsRig(t, Config{}, namedPDB("web", 2))
			st := g.park("ns/a", "n1", 0, "ns/web")
			g.bs.lock()
			defer g.bs.unlock()
			b := g.bs.budgetLocked("ns/web")
			if b == nil {
				t.Fatal("budget ns/web not found")
			}
			if !g.bs.tryReserveLocked(b, st) {
				t.Fatal("no room to reserve on a budget allowing 2")
			}
			if room := g.bs.roomLocked(b); room != 1 {
				t.Fatalf("room %d after one reservation of 2, want 1", room)
			}
			tc.do(g, st)
			if n := len(g.bs.parkedLocked("ns/web")); n != tc.parked {
				t.Errorf("parked %d, want %d", n, tc.parked)
			}
			if n := g.bs.reservedLocked("ns/web"); n != tc.reserved {
				t.Errorf("reserved %d, want %d", n, tc.reserved)
			}
			if _, ok := g.bs.watch.goneAt[st.key]; ok != tc.goneAt {
				t.Errorf("leaving time recorded %v, want %v", ok, tc.goneAt)
			}
			if woken := len(g.host.queued) == 1 && g.host.queued[0] == "ns/a"; woken != tc.woken {
				t.Errorf("queued %q, want the pod woken: %v", g.host.queued, tc.woken)
			}
			if h := g.bs.heldLocked("ns/h"); (h != nil) != (tc.held == 1) {
				t.Errorf("held %v, want %d", h, tc.held)
			}
		})
	}
}

// A budget the watch calls stale says why through the face; a current one says nothing.
func TestBudgetsFaceStale(t *testing.T) {
	g := newBudgetsRig(t, Config{}, namedPDB("web", 1))
	g.bs.lock()
	defer g.bs.unlock()
	if why := g.bs.staleLocked("ns/web"); why != "" {
		t.Errorf("a current budget says %q", why)
	}
	g.bs.watch.stale["ns/web"] = staleMark{why: "its status counts a pod that is gone"}
	if why := g.bs.staleLocked("ns/web"); why != "its status counts a pod that is gone" {
		t.Errorf("stale budget says %q", why)
	}
}
