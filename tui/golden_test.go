package tui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// golden runs the dashboard in a teatest program at 80x24, feeds it msgs, quits, and
// compares the final frame (ANSI stripped) with testdata/<TestName>.golden
// (go test ./tui -update rewrites it).
func golden(t *testing.T, msgs ...tea.Msg) {
	f := newFake()
	f.snaps <- snapshot()
	tm := teatest.NewTestModel(t, New(f, true), teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("node-c")) },
		teatest.WithDuration(5*time.Second))
	for _, m := range msgs {
		tm.Send(m)
	}
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	teatest.RequireEqualOutput(t, []byte(ansi.Strip(fm.(App).View().Content)))
}

func TestGoldenNodesView(t *testing.T) {
	golden(t, press("space"))
}

func TestGoldenProgressView(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	evs := []event.Event{
		{Type: event.EventPlan, Plan: &event.Plan{Nodes: []event.NodePlan{{Name: "node-a", Steps: make([]pdb.Step, 2)}, {Name: "node-b", Steps: make([]pdb.Step, 1)}}}},
		{Type: event.EventNodeCordoned, Node: "node-a", Time: start},
		{Type: event.EventPodEvicted, Node: "node-a", Pod: "shop/web-1", Time: start.Add(time.Second)},
		{Type: event.EventPodEvicted, Node: "node-a", Pod: "shop/web-2", Time: start.Add(2 * time.Second)},
		{Type: event.EventNodeDrained, Node: "node-a", Time: start.Add(2500 * time.Millisecond)},
		{Type: event.EventNodeCordoned, Node: "node-b", Time: start},
		{Type: event.EventNodeFailed, Node: "node-b", Message: "cordon node node-b: forbidden", Time: start.Add(time.Second)},
	}
	msgs := []tea.Msg{press("4")}
	for _, ev := range evs {
		msgs = append(msgs, EventMsg{Event: ev})
	}
	golden(t, msgs...)
}
