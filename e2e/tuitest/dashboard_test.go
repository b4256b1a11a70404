// Package tuitest drives the dashboard in a real terminal (tmux) against the real local
// cluster: select a node, drain it, watch the progress reach done, check the API.
package tuitest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
)

var (
	shared *cluster.Cluster
	plugin string
)

func TestMain(m *testing.M) { os.Exit(fixture.TestMain(m, &shared, &plugin)) }

// needTmux finds tmux. Tests install nothing: .ci/run (and the README's set-up) installs
// tmux. Without it the test is skipped, saying so, except under CI, where a skip would
// hide that the dashboard was never driven.
func needTmux(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tmux"); err == nil {
		return p
	}
	const msg = "tmux is not installed: the dashboard's terminal test needs it (apt-get install tmux; .ci/run installs it)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// term is a tmux session running one command.
type term struct {
	t       *testing.T
	tmux    string
	session string
}

func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	if out, err := exec.Command(tm.tmux, append([]string{"send-keys", "-t", tm.session}, keys...)...).CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

func (tm *term) screen() string {
	out, _ := exec.Command(tm.tmux, "capture-pane", "-p", "-t", tm.session).CombinedOutput()
	return string(out)
}

// waitFor looks at the screen until it shows want. A terminal has no change
// notification, so this polls the pane every 200 ms, for at most limit.
func (tm *term) waitFor(want string, limit time.Duration) string {
	tm.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := tm.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q within %s; it shows:\n%s", want, limit, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDashboardDrainsANodeInARealTerminal(t *testing.T) {
	e := fixture.NewEnv(t, shared, plugin, "a", "b")
	tmux := needTmux(t)
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1) // the replacements' node
	g := e.Guard()
	node := e.Nodes[0]
	tm := &term{t: t, tmux: tmux, session: "km-" + e.NS}
	cmd := fmt.Sprintf("%s --kubeconfig %s dashboard; sleep 600", plugin, shared.Kubeconfig)
	if out, err := exec.Command(tmux, "new-session", "-d", "-s", tm.session, "-x", "120", "-y", "40", cmd).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "kill-session", "-t", tm.session).Run() })

	tm.waitFor(node, 30*time.Second)
	tm.keys("/")
	tm.keys("-l", node)
	tm.keys("Enter")
	tm.keys("Space")
	tm.waitFor("1 selected", 5*time.Second)
	tm.keys("d")
	s := tm.waitFor("Proceed?", 15*time.Second)
	if !strings.Contains(s, "pdb "+e.NS+"/web") {
		t.Errorf("the confirmation does not show the plan with the PDB:\n%s", s)
	}
	tm.keys("y")
	s = tm.waitFor(" done ", 60*time.Second)
	t.Logf("progress view when done:\n%s", s)
	if !strings.Contains(s, "100%") {
		t.Errorf("progress did not reach 100%%:\n%s", s)
	}
	n := e.Node(node)
	if !n.Spec.Unschedulable {
		t.Error("the node drained from the dashboard is not cordoned")
	}
	if left := e.PodsOn(node); len(left) != 0 {
		t.Errorf("%d pods left on the node drained from the dashboard", len(left))
	}
	if g.Deleted == 0 {
		t.Error("the guard saw no eviction")
	}
	tm.keys("q")
	tm.waitFor("", time.Second)
}
