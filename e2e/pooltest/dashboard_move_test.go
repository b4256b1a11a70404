package pooltest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// Issue 32: the dashboard's move on the real cluster: the dialog's plan (the node's label
// and taint change, then its drain's pods) is what its start carries out, under the
// budget, ending with the node in the target pool and nothing of the old one.
func TestDashboardMoveRunsTheDialogsPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "a", "b", "c")
	blue, green := moveSetup(e, 3, 1, 2)
	g := e.Guard()

	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Minute)
	defer cancel()
	b := fixture.Dashboard(t, ctx, shared.Kubeconfig)

	opts := confirm.DefaultOptions()
	opts.IgnoreDaemonSets = true
	req := confirm.Request{Action: confirm.Move, Nodes: []string{e.Nodes[0]}, Pool: green, Options: opts}
	text, err := b.Plan(req)
	if err != nil {
		t.Fatalf("the dialog's plan: %v", err)
	}
	fixture.MustContain(t, "the dialog's plan", text, "node/"+e.Nodes[0]+" -> "+green, "+label", "web-")
	if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable {
		t.Fatalf("the dialog's plan cordoned %s", e.Nodes[0])
	}

	events, _, err := b.Start(req)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	var types []string
	for ev := range events {
		types = append(types, string(ev.Type))
		if ev.Type == event.EventNodeFailed {
			t.Errorf("the move failed: %s", ev.Message)
		}
	}
	t.Logf("events: %s", strings.Join(types, " "))
	if !strings.Contains(strings.Join(types, " "), string(event.EventNodeMoved)) {
		t.Errorf("no %s among the dashboard move's events: %v", event.EventNodeMoved, types)
	}
	checkMoved(e, e.Nodes[0], blue, green)
	if g.Deleted != 3 {
		t.Errorf("guard saw %d evictions, want 3", g.Deleted)
	}
	e.Ready("web", 3)
}
