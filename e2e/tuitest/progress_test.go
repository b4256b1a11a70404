package tuitest

import (
	"fmt"
	"os/exec"
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
	tmux := needTmux(t)
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	// A budget that allows nothing: the drain waits on it until interrupted.
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(0)}, 0)
	node := e.Nodes[0]
	tm := &term{t: t, tmux: tmux, session: "km-progress-" + e.NS}
	cmd := fmt.Sprintf("%s --kubeconfig %s drain %s --ignore-daemonsets --progress=tty; echo EXIT=$?; sleep 600", plugin, shared.Kubeconfig, node)
	if out, err := exec.Command(tmux, "new-session", "-d", "-s", tm.session, "-x", "120", "-y", "40", cmd).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "kill-session", "-t", tm.session).Run() })

	tm.waitFor("ctrl+c: stop", 30*time.Second)
	tm.waitFor("web", 30*time.Second) // the view shows the blocked pods' budget or pods
	tm.keys("C-c")
	s := tm.waitFor("EXIT=", 60*time.Second)
	t.Logf("after Ctrl-C:\n%s", s)
	if !strings.Contains(s, "EXIT=130") {
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
