package mnttest

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// The replicas' lease timings in the failover tests (the kill to the first action is
// bounded by lease + 5 s).
const (
	testLease = 6 * time.Second
	takeover  = testLease + 5*time.Second
)

func leaseFlags(e *fixture.Env) []string {
	return []string{"--leader-elect", "--leader-election-namespace=" + e.NS, "--leader-election-lease-duration=" + testLease.String(),
		"--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s"}
}

// Issue 34, test 1: two replicas on different hosts (each in its own UTS namespace, so
// neither can tell the other's process is gone); the leader killed with SIGKILL at two
// moments of a Maintenance. The other replica's first action (its first eviction request)
// comes within lease + 5 s of the kill: it resumes the object under the object's own
// identity instead of waiting for the node's heartbeat to expire (60 s). The object
// Succeeds; eviction requests stay within pods + nodes.
func TestFailoverAcrossHosts(t *testing.T) {
	cases := map[string]struct {
		// moment is true once the leader should be killed.
		moment func(m *mntv1.Maintenance, evicted float64) bool
	}{
		"evictions in flight": {func(_ *mntv1.Maintenance, evicted float64) bool { return evicted >= 1 }},
		"a node waiting on a budget": {func(m *mntv1.Maintenance, _ float64) bool {
			return len(m.Status.Nodes) == 1 && len(m.Status.Nodes[0].Blockers) > 0 && m.Status.Counts.PodsEvicted >= 1
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "a", "spare")
			e.AddNodes(0)
			const pods = 4
			slow := e.Here(fixture.PodOptions{ReadyDelay: 3 * time.Second})
			if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", pods, slow); err != nil {
				t.Fatal(err)
			}
			e.Ready("web", pods)
			e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
			e.AddNodes(1)
			e.Guard()
			mc := mclient(t)
			leader, holder := twoHosts(e, leaseFlags(e)...)
			base := evictions(e)
			create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0)})
			waitFor(e, mc, e.NS, "the moment to kill the leader", func(m *mntv1.Maintenance) bool { return tc.moment(m, evictions(e)-base) })
			before := evictions(e)
			killed := time.Now()
			first := killAndTimeFirstEviction(e, leader, before)
			newHolder := waitHolder(e, holder)
			m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
			done := time.Since(killed)
			n := evictions(e) - base
			t.Logf("FIGURE failover across hosts (%s): lease %s; kill to first action %s, kill to %s %s; new leader %s; %v eviction requests for %d pods",
				name, testLease, first.Round(100*time.Millisecond), m.Status.Phase, done.Round(100*time.Millisecond), hostOf(newHolder), n, pods)
			if first > takeover {
				t.Errorf("the new leader's first action came %s after the kill, want at most lease + 5 s = %s", first.Round(100*time.Millisecond), takeover)
			}
			if m.Status.Phase != mntv1.PhaseSucceeded {
				t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
			}
			if n > pods+1 {
				t.Errorf("%v eviction requests, want at most %d (pods + nodes)", n, pods+1)
			}
			if c := m.Status.Counts; c.PodsEvicted != pods {
				t.Errorf("counts %+v, want %d pods evicted (the dead leader's evictions kept)", c, pods)
			}
		})
	}
}

// Issue 34, test 2: a clean stop (SIGTERM) of the leader gives the Lease up: the other
// replica leads within 5 s, with the default lease of 15 s.
func TestCleanStopHandsOver(t *testing.T) {
	e := newEnv(t)
	flags := []string{"--leader-elect", "--leader-election-namespace=" + e.NS}
	leader, holder := twoHosts(e, flags...)
	stopped := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	next := waitHolder(e, holder)
	took := time.Since(stopped)
	t.Logf("FIGURE clean stop: SIGTERM to the new leader (%s) %s (lease 15s)", hostOf(next), took.Round(100*time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the other replica led %s after the leader's SIGTERM, want at most 5 s (the Lease released)", took.Round(100*time.Millisecond))
	}
	<-leader.exited
}

// Issue 34, test 3: two local replicas with no flags (but where their Lease lives) both
// start on one machine: no port is bound unless asked; one leads, the other stands by.
func TestTwoLocalReplicasStart(t *testing.T) {
	e := newEnv(t)
	flags := []string{"--leader-elect", "--leader-election-namespace=" + e.NS}
	a := runControllerOn(e, "", flags...)
	b := runControllerOn(e, "", flags...)
	waitHolder(e, "")
	time.Sleep(3 * time.Second) // a replica that cannot start exits at once
	for name, c := range map[string]*controller{"first": a, "second": b} {
		select {
		case <-c.exited:
			t.Errorf("the %s replica exited: %s", name, c.logs.String())
		default:
		}
		if s := c.logs.String(); strings.Contains(s, "address already in use") {
			t.Errorf("the %s replica could not bind: %s", name, s)
		}
	}
}

// twoHosts runs two controller replicas with flags, each as another host would (its own
// hostname), and returns the one that leads and its Lease holder identity.
func twoHosts(e *fixture.Env, flags ...string) (*controller, string) {
	e.T.Helper()
	replicas := map[string]*controller{
		"replica-a": runControllerOn(e, "replica-a", flags...),
		"replica-b": runControllerOn(e, "replica-b", flags...),
	}
	holder := waitHolder(e, "")
	leader := replicas[hostOf(holder)]
	if leader == nil {
		e.T.Fatalf("lease holder %q is neither replica", holder)
	}
	return leader, holder
}

// killAndTimeFirstEviction kills leader (SIGKILL) and returns how long until the API
// server counts an eviction request beyond before: the new leader's first action (the
// old one is dead, and the run still has pods to evict).
func killAndTimeFirstEviction(e *fixture.Env, leader *controller, before float64) time.Duration {
	e.T.Helper()
	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		e.T.Fatal(err)
	}
	for evictions(e) <= before {
		if time.Since(killed) > 2*time.Minute {
			e.T.Fatalf("no eviction request in the 2 minutes after the kill")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(killed)
}

// hostOf is the host part of a controller-runtime lease holder identity (host_uuid).
func hostOf(holder string) string {
	if i := strings.LastIndex(holder, "_"); i > 0 {
		return holder[:i]
	}
	return holder
}

// Issue 34, test 1, the third moment: the leader killed between two nodes of a rolling
// pool drain (the first drained, its slot held by policy.soak of 8 s, the second not
// started). The new leader soaks the first node only for what is left of its soak, so its
// first action (the second node's first eviction) comes within lease + 5 s of the kill
// (a whole new soak after the takeover would pass it); the object Succeeds.
func TestFailoverBetweenTwoNodesOfAPoolDrain(t *testing.T) {
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0, 1)
	const pods = 4
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", pods, e.Here(fixture.PodOptions{ReadyDelay: time.Second})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", pods)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	plainPool(e, names(e, 0, 1)...)
	e.Guard()
	mc := mclient(t)
	const soak = 8 * time.Second
	leader, _ := twoHosts(e, leaseFlags(e)...)
	base := evictions(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Pool: e.NS, Policy: mntv1.Policy{Soak: mntv1.DurationOf(soak)}})
	m, _ := waitFor(e, mc, e.NS, "one node drained, the other not started", func(m *mntv1.Maintenance) bool {
		drained, pending := 0, 0
		for _, n := range m.Status.Nodes {
			switch n.State {
			case mntv1.NodeStateDrained:
				drained++
			case mntv1.NodeStatePending:
				pending++
			}
		}
		return drained == 1 && pending == 1
	})
	t.Logf("at the kill: %s", nodeStates(m))
	before := evictions(e)
	killed := time.Now()
	first := killAndTimeFirstEviction(e, leader, before)
	m, _ = waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	done := time.Since(killed)
	n := evictions(e) - base
	t.Logf("FIGURE failover across hosts (between two nodes of a pool drain, soak 8s): kill to first action %s, kill to %s %s; %v eviction requests for %d pods",
		first.Round(100*time.Millisecond), m.Status.Phase, done.Round(100*time.Millisecond), n, pods)
	if first > takeover {
		t.Errorf("the new leader's first action came %s after the kill, want at most lease + 5 s = %s", first.Round(100*time.Millisecond), takeover)
	}
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if n > pods+2 {
		t.Errorf("%v eviction requests, want at most %d (pods + nodes)", n, pods+2)
	}
}
