package tui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// fakeBackend records what the dashboard asked for.
type fakeBackend struct {
	mu       sync.Mutex
	snaps    chan data.Snapshot
	plans    []confirm.Request
	started  []confirm.Request
	events   []chan event.Event // one per started action
	canceled []bool
	plan     string   // the plan Plan answers (a one-line plan when empty)
	controls []string // "op name" per ControlMaintenance
	objEvs   map[data.Ref][]data.EventRow
}

func newFake() *fakeBackend {
	return &fakeBackend{snaps: make(chan data.Snapshot, 1)}
}

func (f *fakeBackend) Snapshots() <-chan data.Snapshot { return f.snaps }
func (f *fakeBackend) Plan(req confirm.Request) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, req)
	if len(req.Nodes) == 0 {
		return "", errors.New("no nodes")
	}
	if f.plan != "" {
		return f.plan, nil
	}
	return "plan: 1 node(s), 2 pod(s) to evict in 1 wave(s)", nil
}
func (f *fakeBackend) Start(req confirm.Request) (<-chan event.Event, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := len(f.started)
	f.started = append(f.started, req)
	ch := make(chan event.Event, 100)
	f.events = append(f.events, ch)
	f.canceled = append(f.canceled, false)
	return ch, func() { f.mu.Lock(); f.canceled[i] = true; f.mu.Unlock() }, nil
}

func (f *fakeBackend) ControlMaintenance(name, op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.controls = append(f.controls, op+" "+name)
	return nil
}

func (f *fakeBackend) Events(ref data.Ref) ([]data.EventRow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objEvs[ref], nil
}

func (f *fakeBackend) wasCanceled(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return i < len(f.canceled) && f.canceled[i]
}

func snapshot() data.Snapshot {
	return data.Snapshot{
		Nodes: []data.NodeRow{
			{Name: "node-a", Status: "Ready", Pools: []string{"blue"}, Pods: 2, Evictable: 2, Version: "v1.36.3", Age: "5m"},
			{Name: "node-b", Status: "Ready,SchedulingDisabled", Unschedulable: true, Pools: []string{"blue"}, Pods: 1, Blocked: 1, Blocker: "shop/ledger", Version: "v1.36.3", Age: "5m"},
			{Name: "node-c", Status: "Ready", Pools: []string{"green"}, Version: "v1.36.3", Age: "5m"},
		},
		Pools:     []data.PoolRow{{Name: "blue", Nodes: 2, InMaintenance: 1, MaxUnavailable: 1, Handler: "runc"}, {Name: "green", Nodes: 1, MaxUnavailable: 1, Handler: "<none>"}},
		PDBs:      []data.PDBRow{{Key: "shop/ledger", MaxUnavailable: "0", MinAvailable: "N/A", Current: 2, Desired: 2, Expected: 2, Never: true}},
		PoolNames: []string{"blue", "green"},
		Synced:    true,
	}
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// step feeds msg to the model and runs the command it returns once (not its follow-ups),
// feeding that message too: enough to let a plan or a start come back.
func step(t *testing.T, m App, msg tea.Msg) App {
	t.Helper()
	next, cmd := m.Update(msg)
	m = next.(App)
	if cmd != nil {
		if out := runCmd(cmd); out != nil {
			next, _ = m.Update(out)
			m = next.(App)
		}
	}
	return m
}

// runCmd runs a command unless it would wait (ticks, channel reads): those are skipped.
func runCmd(cmd tea.Cmd) tea.Msg {
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if _, batch := msg.(tea.BatchMsg); batch {
			return nil
		}
		return msg
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

func screen(m App) string { return ansi.Strip(m.View().Content) }

func ready(t *testing.T, w, h int) (App, *fakeBackend) {
	f := newFake()
	m := New(f, true)
	m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = step(t, m, SnapshotMsg{Snapshot: snapshot()})
	return m, f
}

func TestViewFitsTheTerminal(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}, {100, 30}} {
		m, _ := ready(t, size[0], size[1])
		for view := range numViews {
			m.view = view
			lines := strings.Split(screen(m), "\n")
			if len(lines) != size[1] {
				t.Errorf("%dx%d view %s: %d lines, want %d", size[0], size[1], viewNames[view], len(lines), size[1])
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("%dx%d view %s: line %d is %d wide: %q", size[0], size[1], viewNames[view], i, w, l)
				}
			}
		}
	}
}

func TestNodesViewShowsBlockersAndSelection(t *testing.T) {
	m, _ := ready(t, 80, 24)
	s := screen(m)
	for _, want := range []string{"node-a", "node-b", "Ready,SchedulingDisabled", "shop/ledger", "3 nodes, 0 selected"} {
		if !strings.Contains(s, want) {
			t.Errorf("nodes view lacks %q:\n%s", want, s)
		}
	}
	m = step(t, m, press("space"))
	m = step(t, m, press("down"))
	m = step(t, m, press("space"))
	if !m.selected["node-a"] || !m.selected["node-b"] || len(m.selected) != 2 {
		t.Fatalf("selected = %v, want node-a and node-b", m.selected)
	}
	if !strings.Contains(screen(m), "2 selected") {
		t.Errorf("the header does not count the selection:\n%s", screen(m))
	}
	m = step(t, m, press("/"))
	for _, r := range "node-c" {
		m = step(t, m, press(string(r)))
	}
	m = step(t, m, press("enter"))
	if s := screen(m); strings.Contains(s, "node-a") || !strings.Contains(s, "node-c") {
		t.Errorf("filter node-c shows:\n%s", s)
	}
}

func TestDrainAsksWithThePlanThenShowsProgress(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("space")) // node-a
	m = step(t, m, press("d"))
	if m.dialog == nil || !strings.Contains(screen(m), "plan: 1 node(s), 2 pod(s)") || !strings.Contains(screen(m), "Proceed?") {
		t.Fatalf("no confirmation with the plan:\n%s", screen(m))
	}
	// Toggling an option plans again.
	m = step(t, m, press("f"))
	if len(f.plans) != 2 || !f.plans[1].Options.Force {
		t.Fatalf("plans = %+v, want a second plan with force on", f.plans)
	}
	if len(f.started) != 0 {
		t.Fatal("the drain started before the user confirmed")
	}
	m = step(t, m, press("y"))
	if len(f.started) != 1 || f.started[0].Action != confirm.Drain || f.started[0].Nodes[0] != "node-a" || !f.started[0].Options.Force {
		t.Fatalf("started = %+v", f.started)
	}
	if m.view != ViewProgress {
		t.Fatalf("view = %s, want Progress", viewNames[m.view])
	}
	now := time.Now()
	for _, ev := range []event.Event{
		{Type: event.EventPlan, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "node-a", Steps: make([]pdb.Step, 2)}}}},
		{Type: event.EventNodeCordoned, Node: "node-a", Time: now},
		{Type: event.EventEvictionStarted, Node: "node-a", Pod: "shop/web-1", Wave: 1, Time: now},
		{Type: event.EventEvictionBlocked, Node: "node-a", Pod: "shop/web-2", PDB: "shop/web", Reason: "Exhausted", Message: "pdb shop/web needs 2 healthy pods, has 2, allows 0", Time: now},
	} {
		m = step(t, m, EventMsg{ID: 1, Event: ev})
	}
	if s := screen(m); !strings.Contains(s, "shop/web needs 2 healthy pods") || !strings.Contains(s, "0/2") {
		t.Errorf("progress does not show the blocker with its PDB:\n%s", s)
	}
	for _, ev := range []event.Event{
		{Type: event.EventPodEvicted, Node: "node-a", Pod: "shop/web-1", Time: now},
		{Type: event.EventPodEvicted, Node: "node-a", Pod: "shop/web-2", Time: now},
		{Type: event.EventNodeDrained, Node: "node-a", Time: now.Add(3 * time.Second)},
	} {
		m = step(t, m, EventMsg{ID: 1, Event: ev})
	}
	if s := screen(m); !strings.Contains(s, "2/2") || !strings.Contains(s, "100%") || !strings.Contains(s, "done: drained") {
		t.Errorf("progress did not reach 100%%:\n%s", s)
	}
	m = step(t, m, press("5"))
	if s := screen(m); !strings.Contains(s, "node/node-a drained") {
		t.Errorf("events view lacks the drained line:\n%s", s)
	}
}

func TestQuitWhileRunningAsksCancelsAndSaysWhatIsLeft(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("d"))
	m = step(t, m, press("y"))
	if len(m.runs) != 1 {
		t.Fatal("no action running")
	}
	next, cmd := m.Update(press("q"))
	m = next.(App)
	if cmd != nil || !m.quitting || !strings.Contains(screen(m), "Stop them and quit?") || !strings.Contains(screen(m), "drain node-a") {
		t.Fatalf("q while running did not ask:\n%s", screen(m))
	}
	m = step(t, m, press("y"))
	if !f.wasCanceled(0) {
		t.Fatal("confirming quit did not cancel the action")
	}
	next, cmd = m.Update(ActionDoneMsg{ID: 1})
	m = next.(App)
	if cmd == nil {
		t.Fatal("no quit once the action stopped")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the command after the action stopped is not tea.Quit")
	}
	left := m.Stopped()
	if len(left) != 1 || !strings.Contains(left[0], "kubectl maintenance drain node-a") || !strings.Contains(left[0], "uncordon node-a") {
		t.Fatalf("Stopped() = %q, want the drain of node-a and how to finish it", left)
	}
	if !m.Interrupted() {
		t.Error("a quit that stopped a running drain is not an interruption (exit 130)")
	}
}

func TestQuitWithNothingRunningLeavesNothing(t *testing.T) {
	m, _ := ready(t, 80, 24)
	next, cmd := m.Update(press("q"))
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q did not quit")
	}
	if left := next.(App).Stopped(); len(left) != 0 || next.(App).Interrupted() {
		t.Fatalf("Stopped() = %q after a plain quit", left)
	}
}

// Ctrl-C leaves from anywhere: the action dialog, the filter prompt, the list.
func TestCtrlCQuitsFromADialogAndTheFilter(t *testing.T) {
	tests := []struct {
		name string
		keys []string
	}{
		{"the list", nil},
		{"the action dialog", []string{"c"}},
		{"the filter prompt", []string{"/", "n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := ready(t, 80, 24)
			for _, k := range tc.keys {
				m = step(t, m, press(k))
			}
			if len(tc.keys) > 0 && m.dialog == nil && !m.filtering {
				t.Fatalf("%v opened neither the dialog nor the filter", tc.keys)
			}
			_, cmd := m.Update(press("ctrl+c"))
			if cmd == nil {
				t.Fatal("Ctrl-C did nothing")
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Fatal("Ctrl-C did not quit")
			}
		})
	}
}

func TestTwoActionsRunAndOneIsCancelledFromProgress(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("d")) // node-a, under the cursor
	m = step(t, m, press("y"))
	m = step(t, m, press("1"))
	m = step(t, m, press("d")) // node-a again: refused, it is busy
	if m.dialog != nil || !strings.Contains(m.status, "node-a already in an action") {
		t.Fatalf("a second action on a busy node was not refused: status %q", m.status)
	}
	m = step(t, m, press("down"))
	m = step(t, m, press("c")) // node-b
	m = step(t, m, press("y"))
	if len(f.started) != 2 || f.started[1].Action != confirm.Cordon || f.started[1].Nodes[0] != "node-b" {
		t.Fatalf("started = %+v, want a drain of node-a and a cordon of node-b", f.started)
	}
	if len(m.runs) != 2 {
		t.Fatalf("%d actions running, want 2", len(m.runs))
	}
	// On Progress, the cursor starts on node-a's drain: x cancels it, and only it.
	m = step(t, m, press("x"))
	if !f.wasCanceled(0) || f.wasCanceled(1) {
		t.Fatalf("canceled = %v, want only the drain", f.canceled)
	}
	if s := screen(m); !strings.Contains(s, "stopping") {
		t.Errorf("the cancelled node does not say stopping:\n%s", s)
	}
	m = step(t, m, EventMsg{ID: 2, Event: event.Event{Type: event.EventNodeCordoned, Node: "node-b", Time: time.Now()}})
	m = step(t, m, ActionDoneMsg{ID: 1})
	m = step(t, m, ActionDoneMsg{ID: 2})
	s := screen(m)
	if !strings.Contains(s, "stopped") || !strings.Contains(s, "done: cordoned") {
		t.Errorf("progress does not show the drain stopped and the cordon done:\n%s", s)
	}
	if strings.Contains(s, "drained") {
		t.Errorf("a cordon shows as drained:\n%s", s)
	}
}

func TestMoveStartsOnAnotherPoolAndRefusesANoOp(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("m")) // node-a, in pool blue
	if m.dialog == nil || m.dialog.Req.Pool != "green" {
		t.Fatalf("the move dialog of a node in blue does not start on green: %+v", m.dialog)
	}
	m = step(t, m, press("p"))
	if m.dialog.Req.Pool != "blue" || f.plans[len(f.plans)-1].Pool != "blue" {
		t.Fatalf("the pool picker did not move to blue: %+v", m.dialog.Req)
	}
	m = step(t, m, press("y"))
	if m.dialog == nil || len(f.started) != 0 {
		t.Fatal("a move of node-a to blue, the only pool it is in, was confirmed")
	}
	if s := screen(m); !strings.Contains(s, "Nothing to do: every node is already in pool blue") || strings.Contains(s, "Proceed?") {
		t.Errorf("the no-op move does not say so:\n%s", s)
	}
	m = step(t, m, press("p"))
	m = step(t, m, press("n"))
	if m.dialog != nil || len(f.started) != 0 {
		t.Fatal("cancel left the dialog open or started something")
	}
}

// An action the server refused (a whole-action failure, as a missing permission) ends
// saying failed and why, not finished.
func TestARefusedActionEndsSayingFailed(t *testing.T) {
	m, _ := ready(t, 80, 24)
	m = step(t, m, press("c")) // cordon node-a
	m = step(t, m, press("y"))
	if len(m.runs) != 1 {
		t.Fatalf("%d actions running, want the cordon", len(m.runs))
	}
	m = step(t, m, EventMsg{ID: 1, Event: event.Event{Type: event.EventNodeFailed, Message: `cannot patch nodes (user "someone")`, Time: time.Now()}})
	m = step(t, m, ActionDoneMsg{ID: 1})
	if want := `cordon of node-a failed: cannot patch nodes (user "someone")`; m.status != want {
		t.Errorf("status %q, want %q", m.status, want)
	}
	// A node's own failure is counted, not taken for the whole action's.
	m, _ = ready(t, 80, 24)
	m = step(t, m, press("c"))
	m = step(t, m, press("y"))
	var id int
	for k := range m.runs {
		id = k
	}
	if len(m.runs) != 1 {
		t.Fatalf("%d actions running, want the second cordon (status %q)", len(m.runs), m.status)
	}
	m = step(t, m, EventMsg{ID: id, Event: event.Event{Type: event.EventNodeFailed, Node: "node-a", Message: "gone", Time: time.Now()}})
	m = step(t, m, ActionDoneMsg{ID: id})
	if want := `cordon of node-a: 1 of 1 node(s) failed (node node-a: gone)`; m.status != want {
		t.Errorf("status %q, want %q", m.status, want)
	}
}
