package mnttest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// Issue 34, test 7: a server-side drain whose replacement pods have nowhere to run (every
// other node a member of a NodePool whose NoSchedule taint the controller applies): within
// 15 s the Maintenance's status names the unschedulable replacement with the scheduler's
// reason, and so does the follower's final error at --timeout ("still waiting").
func TestServerSideDrainNamesAReplacementWithNowhereToRun(t *testing.T) {
	e := newEnv(t, "a", "p1", "p2")
	e.AddNodes(0)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(1, 2)
	e.Guard()
	mc := mclient(t)
	startController(e)
	// p1 and p2 join a pool whose taint the controller applies: the replacement of the
	// first evicted pod can run nowhere (a is cordoned, the others tainted).
	taintedPool(e, names(e, 1, 2)...)
	waitTainted(e, names(e, 1, 2)...)

	name := e.NS + "-nowhere"
	ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Minute)
	defer cancel()
	done := make(chan fixture.Result, 1)
	started := time.Now()
	go func() {
		done <- e.RunCtx(ctx, func(*exec.Cmd) {}, "drain", "--server-side", "--name", name, "--timeout", "40s", e.Nodes[0])
	}()
	var named time.Duration
	m, _ := waitFor(e, mc, name, "a blocker naming the unschedulable replacement", func(m *mntv1.Maintenance) bool {
		for _, n := range m.Status.Nodes {
			for _, b := range n.Blockers {
				if strings.Contains(b.Message+b.Cause, "unschedulable") && strings.Contains(b.Message+b.Cause, "taint") {
					named = time.Since(started)
					return true
				}
			}
		}
		return false
	})
	t.Logf("status after %s: %s %+v", named.Round(100*time.Millisecond), nodeStates(m), m.Status.Nodes[0].Blockers)
	if named > 15*time.Second+5*time.Second { // + the object's creation and the status interval's first write
		t.Errorf("the status named the unschedulable replacement after %s, want within about 15 s", named.Round(100*time.Millisecond))
	}
	r := <-done
	if r.Code != 124 {
		t.Errorf("exit %d, want 124 (timed out)", r.Code)
	}
	final := ""
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(l, "still waiting") {
			final = l
		}
	}
	// The final error's "still waiting" part says what the wait line said: the
	// unschedulable replacement, the scheduler's reason, the budget's current numbers; not
	// "this drain's evictions in flight" (the evicted pod is gone).
	if !strings.Contains(final, "unschedulable") || !strings.Contains(final, "taint") || strings.Contains(final, "evictions in flight") {
		t.Errorf("the final error does not name the unschedulable replacement with the scheduler's reason:\n%s", final)
	}
	_ = e.Run("cancel", name)
}

// waitTainted waits until each node carries the pool's taint.
func waitTainted(e *fixture.Env, nodes ...string) {
	e.T.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, n := range nodes {
		for {
			tainted := false
			for _, tn := range e.Node(n).Spec.Taints {
				tainted = tainted || tn.Key == "example.com/pool"
			}
			if tainted {
				break
			}
			if time.Now().After(deadline) {
				e.T.Fatalf("node %s never got the pool's taint", n)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
