package tuitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

// TestCtrlCInTheProgressViewInterruptsTheDrain: in the live progress view the terminal is
// in raw mode, so Ctrl-C is a key, not SIGINT. The view interrupts the run through its
// context (no signal is sent, so this works on every OS); the drain stops as on SIGINT:
// exit 130, the interrupted line, the node left cordoned for a re-run.
func TestCtrlCInTheProgressViewInterruptsTheDrain(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	// A budget that allows nothing: the drain waits on it until interrupted.
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(0)}, 0)
	node := e.Nodes[0]
	cmd := fmt.Sprintf("%s --kubeconfig %s drain %s --ignore-daemonsets --progress=tty", plugin, shared.Kubeconfig, node)
	tm := fixture.StartTerm(t, "progress-"+e.NS, 120, 40, cmd)

	tm.WaitFor("ctrl+c: stop", 30*time.Second)
	tm.WaitFor("web", 30*time.Second) // the view shows the blocked pods' budget or pods
	tm.Keys("C-c")
	s := tm.WaitFor("EXITED", 60*time.Second)
	t.Logf("after Ctrl-C:\n%s", s)
	if !strings.Contains(s, "EXITED 130") {
		t.Errorf("the drain did not exit 130 after Ctrl-C in the view:\n%s", s)
	}
	if !strings.Contains(s, "interrupted") {
		t.Errorf("no interrupted line after Ctrl-C:\n%s", s)
	}
	if n := e.Node(node); !n.Spec.Unschedulable {
		t.Error("the interrupted node is not left cordoned (a re-run finishes it)")
	}
	if left := e.PodsOn(node); len(left) != 2 {
		t.Errorf("%d pods on the node, want the 2 the budget protects", len(left))
	}
}
