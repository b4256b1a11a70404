package mnttest

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 41, test 4: the kstatus conditions are what `kubectl wait` (the pinned kubectl)
// waits on: Ready for a drain that succeeds, Stalled for one blocked under onBlocked=fail
// (and Ready is then never True).
func TestKubectlWaitsForReadyAndStalled(t *testing.T) {
	e := newEnv(t, "ok", "stuck", "spare")
	e.AddNodes(0, 1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[0]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "db", 1, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[1]}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.Ready("db", 1)
	e.PDB("db", fixture.PDBSpec{App: "db", MinAvailable: fixture.Int(1)}, 0)
	e.AddNodes(2)
	e.Guard()
	mc := mclient(t)
	startController(e)
	kubectl := func(args ...string) (string, int) {
		cmd := exec.CommandContext(e.Ctx, filepath.Join(shared.BinDir, "kubectl"), append([]string{"--kubeconfig", shared.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		var x *exec.ExitError
		switch {
		case errors.As(err, &x):
			code = x.ExitCode()
		case err != nil:
			code = -1
		}
		t.Logf("$ kubectl %v  (exit %d)\n%s", args, code, out)
		return string(out), code
	}

	good, stuck := e.NS+"-good", e.NS+"-stuck"
	create(e, mc, good, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.Nodes[0]}})
	create(e, mc, stuck, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: []string{e.Nodes[1]}, Policy: mntv1.Policy{OnBlocked: "fail"}})

	if out, code := kubectl("wait", "--for=condition=Ready", "maintenance/"+good, "--timeout=60s"); code != 0 {
		t.Errorf("wait for Ready of a drain that succeeds: exit %d, want 0: %s", code, out)
	}
	if out, code := kubectl("wait", "--for=condition=Stalled", "maintenance/"+stuck, "--timeout=60s"); code != 0 {
		t.Errorf("wait for Stalled of a drain blocked under onBlocked=fail: exit %d, want 0: %s", code, out)
	}
	if m := get(e, mc, stuck); m.Status.Phase != mntv1.PhaseBlocked || m.Status.Counts.NodesTotal != 1 {
		t.Errorf("phase %s (%s), nodesTotal %d: want Blocked, 1", m.Status.Phase, m.Status.Message, m.Status.Counts.NodesTotal)
	}
	if out, code := kubectl("wait", "--for=condition=Ready", "maintenance/"+stuck, "--timeout=2s"); code == 0 {
		t.Errorf("wait for Ready of a blocked drain: exit 0, want a timeout: %s", out)
	}
	// kubectl explain (issue 39): the phase's values, and drain/policy say they decide.
	out, _ := kubectl("explain", "maintenance.status.phase")
	fixture.MustContain(t, "explain status.phase", out, "ENUM", "Succeeded", "Forced", "Stalled")
	out, _ = kubectl("explain", "maintenance.spec")
	fixture.MustContain(t, "explain spec", out, "it decides", "whether the run ends")
	if strings.Contains(out, "(planned maintenance)") {
		t.Errorf("explain maintenance.spec shows a Go comment heading:\n%s", out)
	}
	kubectl("get", "maintenance/"+good, "maintenance/"+stuck, "-o", `custom-columns=NAME:.metadata.name,PHASE:.status.phase,GEN:.metadata.generation,RECONCILING:.status.conditions[?(@.type=="Reconciling")].status,STALLED:.status.conditions[?(@.type=="Stalled")].status,READY:.status.conditions[?(@.type=="Ready")].status,NODES:.status.counts.nodesTotal,DRAINED:.status.counts.nodesDrained,EVICTED:.status.counts.podsEvicted,LEFT:.status.counts.podsPending,REASON:.status.conditions[?(@.type=="Stalled")].reason`)
}
