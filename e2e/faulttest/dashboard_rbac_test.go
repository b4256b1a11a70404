package faulttest

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui"
	"github.com/kubectl-maintenance/kubectl-maintenance/tui/confirm"
)

// act starts req on the dashboard's Backend and returns its events once it ends.
func act(t *testing.T, b tui.Backend, req confirm.Request) []event.Event {
	t.Helper()
	ch, cancel, err := b.Start(req)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	var evs []event.Event
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("the dashboard's %s never ended; events so far: %v", req.Action, evs)
		}
	}
}

// Issue 20, test 2: a dashboard drain, through its Backend, by a user without
// pods/eviction fails before any cordon, naming the permission; a dashboard cordon
// records who made it and from where, as the CLI's does.
func TestDashboardDrainWithoutEvictionFailsBeforeAnyCordon(t *testing.T) {
	t.Parallel()
	e := fixture.NewEnv(t, shared, plugin, "a")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 1, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 1)
	e.Guard()
	before := e.Node(e.Nodes[0])
	noEvict, noEvictUser := userKubeconfig(t, e, "dash-no-evict", without(maintainerRules(), "pods/eviction", "create"))

	evs := act(t, fixture.Dashboard(t, e.Ctx, noEvict), confirm.Request{Action: confirm.Drain, Nodes: []string{e.Nodes[0]}, Options: confirm.DefaultOptions()})
	want := fmt.Sprintf(`cannot create pods/eviction in namespace %q (user %q)`, e.NS, noEvictUser)
	if len(evs) != 1 || evs[0].Type != event.EventNodeFailed || !strings.Contains(evs[0].Message, want) {
		t.Errorf("events %v, want one node.failed naming %q", evs, want)
	}
	if n := e.Node(e.Nodes[0]); n.Spec.Unschedulable || !maps.Equal(fixture.WithoutSystemKeys(n.Annotations), fixture.WithoutSystemKeys(before.Annotations)) ||
		!maps.Equal(fixture.WithoutSystemKeys(n.Labels), fixture.WithoutSystemKeys(before.Labels)) {
		t.Errorf("node changed: unschedulable %v, labels %v, annotations %v", n.Spec.Unschedulable, n.Labels, n.Annotations)
	}
	if left := e.PodsOn(e.Nodes[0]); len(left) != 1 {
		t.Errorf("%d pods on the node, want its 1 pod left", len(left))
	}

	admin := fixture.Dashboard(t, e.Ctx, shared.Kubeconfig)
	act(t, admin, confirm.Request{Action: confirm.Cordon, Nodes: []string{e.Nodes[0]}})
	st := noderecord.Read(e.Node(e.Nodes[0]), nodepool.MoveAnnotation)
	if !strings.HasPrefix(st.Command, "kubectl maintenance dashboard (cordon "+e.Nodes[0]) || st.User == "" {
		t.Errorf("a dashboard cordon recorded command %q, user %q; want the dashboard's action and a user", st.Command, st.User)
	}
	act(t, admin, confirm.Request{Action: confirm.Uncordon, Nodes: []string{e.Nodes[0]}})
	if e.Node(e.Nodes[0]).Spec.Unschedulable {
		t.Error("the dashboard's uncordon left the node cordoned")
	}
}
