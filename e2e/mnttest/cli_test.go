package mnttest

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Test 5: drain --server-side followed to the end gives the local run's exit code.
func TestServerSideDrainExitCodes(t *testing.T) {
	e := newEnv(t, "ok", "stuck", "late", "slow", "spare")
	e.AddNodes(0, 1, 2, 3)
	// web: free to go; db: a budget that never allows a disruption, on "stuck" only.
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "db", 1, fixture.PodOptions{NodeSelector: map[string]string{"kubernetes.io/hostname": e.Nodes[1]}}); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.Ready("db", 1)
	e.PDB("db", fixture.PDBSpec{App: "db", MinAvailable: fixture.Int(1)}, 0)
	e.AddNodes(4)
	e.Guard()
	startController(e)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"success", []string{e.Nodes[0], "--ignore-daemonsets"}, 0},
		{"deadline passed", []string{e.Nodes[2], "--not-after", "2020-01-01T00:00:00Z"}, 4},
		{"blocked, skipped", []string{e.Nodes[1], "--on-blocked=skip", "--blocked-after=2s"}, 3},
		{"timed out", []string{e.Nodes[1], "--timeout=3s"}, 124},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := e.NS + "-" + strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", "-"), ",", "")
			r := e.Run(append([]string{"drain", "--server-side", "--name", name}, tc.args...)...)
			if r.Code != tc.want {
				t.Errorf("exit %d, want %d", r.Code, tc.want)
			}
			fixture.MustContain(t, "stdout", r.Stdout, "maintenance.maintenance.kubectl-maintenance.io/"+name+" created")
			// The same lines as a local run: kubectl's line per node, and the summary
			// when the run did not simply succeed (a successful run's lines say it all).
			if tc.want == 0 {
				fixture.MustContain(t, "stdout", r.Stdout, "node/"+tc.args[0]+" drained")
				if strings.Contains(r.Stderr, "summary: ") {
					t.Errorf("a successful run printed a summary, a local one does not:\n%s", r.Stderr)
				}
			} else {
				fixture.MustContain(t, "stderr", r.Stderr, "summary: ")
			}
			_ = e.Run("cancel", name)
		})
	}
	t.Run("detach", func(t *testing.T) {
		name := e.NS + "-detach"
		r := e.Run("drain", "--server-side", "--detach", "--name", name, e.Nodes[3])
		if r.Code != 0 {
			t.Fatalf("exit %d, want 0", r.Code)
		}
		fixture.MustContain(t, "stderr", r.Stderr, "kubectl maintenance follow "+name)
		mc := mclient(t)
		m, _ := waitFor(e, mc, name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
		if m.Status.Phase != mntv1.PhaseSucceeded {
			t.Errorf("phase %s, want Succeeded", m.Status.Phase)
		}
		r = e.Run("follow", name)
		if r.Code != 0 {
			t.Errorf("follow of a finished object: exit %d, want 0", r.Code)
		}
		_ = e.Run("cancel", name)
	})
}

// Test 5: Ctrl-C while following detaches (the object finishes); with no controller the
// CLI says so within 30 s.
func TestServerSideDetachAndNoController(t *testing.T) {
	e := slowDrain(t, "a")
	e.Guard()
	mc := mclient(t)
	name := e.NS + "-nocontroller"
	ctx, cancel := context.WithTimeout(e.Ctx, 50*time.Second)
	defer cancel()
	r := e.RunCtx(ctx, func(cmd *exec.Cmd) {
		go func() {
			// the warning comes after 30 s; interrupt once it had the time to come
			time.Sleep(40 * time.Second)
			_ = cmd.Process.Signal(syscall.SIGINT)
		}()
	}, "drain", "--server-side", "--name", name, e.Nodes[0])
	fixture.MustContain(t, "stderr", r.Stderr, "no controller took maintenance/"+name+" up within 30s", "detached: maintenance/"+name+" runs on")
	if strings.Count(r.Stderr, "no controller took") != 1 {
		t.Errorf("the no-controller line said %d times", strings.Count(r.Stderr, "no controller took"))
	}
	// Now a controller: it takes the object up and finishes it after we detached.
	startController(e)
	m, _ := waitFor(e, mc, name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	_ = e.Run("cancel", name)
}
