package tui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
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
	events   chan drain.Event
	canceled bool
}

func newFake() *fakeBackend {
	return &fakeBackend{snaps: make(chan data.Snapshot, 1), events: make(chan drain.Event, 100)}
}

func (f *fakeBackend) Snapshots() <-chan data.Snapshot { return f.snaps }
func (f *fakeBackend) Plan(req confirm.Request) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, req)
	if len(req.Nodes) == 0 {
		return "", errors.New("no nodes")
	}
	return "plan: 1 node(s), 2 pod(s) to evict in 1 wave(s)", nil
}
func (f *fakeBackend) Start(req confirm.Request) (<-chan drain.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, req)
	return f.events, nil
}
func (f *fakeBackend) Cancel() { f.mu.Lock(); f.canceled = true; f.mu.Unlock() }

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
	for _, ev := range []drain.Event{
		{Type: drain.EventPlan, Plan: &drain.Plan{Nodes: []drain.NodePlan{{Name: "node-a", Steps: make([]pdb.Step, 2)}}}},
		{Type: drain.EventNodeCordoned, Node: "node-a", Time: now},
		{Type: drain.EventEvictionStarted, Node: "node-a", Pod: "shop/web-1", Wave: 1, Time: now},
		{Type: drain.EventEvictionBlocked, Node: "node-a", Pod: "shop/web-2", PDB: "shop/web", Reason: "Exhausted", Message: "pdb shop/web needs 2 healthy pods, has 2, allows 0", Time: now},
	} {
		m = step(t, m, EventMsg{Event: ev})
	}
	if s := screen(m); !strings.Contains(s, "shop/web needs 2 healthy pods") || !strings.Contains(s, "0/2") {
		t.Errorf("progress does not show the blocker with its PDB:\n%s", s)
	}
	for _, ev := range []drain.Event{
		{Type: drain.EventPodEvicted, Node: "node-a", Pod: "shop/web-1", Time: now},
		{Type: drain.EventPodEvicted, Node: "node-a", Pod: "shop/web-2", Time: now},
		{Type: drain.EventNodeDrained, Node: "node-a", Time: now.Add(3 * time.Second)},
	} {
		m = step(t, m, EventMsg{Event: ev})
	}
	if s := screen(m); !strings.Contains(s, "2/2") || !strings.Contains(s, "100%") || !strings.Contains(s, "done") {
		t.Errorf("progress did not reach 100%%:\n%s", s)
	}
	m = step(t, m, press("5"))
	if s := screen(m); !strings.Contains(s, "node/node-a drained") {
		t.Errorf("events view lacks the drained line:\n%s", s)
	}
}

func TestQuitWhileRunningAsksAndCancels(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("c"))
	m = step(t, m, press("y"))
	if m.running == nil {
		t.Fatal("no action running")
	}
	next, cmd := m.Update(press("q"))
	m = next.(App)
	if cmd != nil || !m.quitting || !strings.Contains(screen(m), "Stop it and quit?") {
		t.Fatalf("q while running did not ask:\n%s", screen(m))
	}
	m = step(t, m, press("y"))
	if !f.canceled {
		t.Fatal("confirming quit did not cancel the action")
	}
	_, cmd = m.Update(ActionDoneMsg{})
	if cmd == nil {
		t.Fatal("no quit once the action stopped")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the command after the action stopped is not tea.Quit")
	}
}

func TestMoveNeedsAPoolAndOffersThem(t *testing.T) {
	m, f := ready(t, 80, 24)
	m = step(t, m, press("m"))
	if m.dialog == nil || m.dialog.Req.Pool != "blue" {
		t.Fatalf("move dialog pool = %+v", m.dialog)
	}
	m = step(t, m, press("p"))
	if m.dialog.Req.Pool != "green" || f.plans[len(f.plans)-1].Pool != "green" {
		t.Fatalf("pool picker did not move to green: %+v", m.dialog.Req)
	}
	m = step(t, m, press("n"))
	if m.dialog != nil || len(f.started) != 0 {
		t.Fatal("cancel left the dialog open or started something")
	}
}
