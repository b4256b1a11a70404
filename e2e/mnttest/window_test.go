package mnttest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// Windows, test 1: a Maintenance created by drain --server-side --start 20s is Scheduled
// with its next start, its nodes carry MaintenancePlanned=True (reason Scheduled, naming it
// and the start) and nothing is cordoned or evicted before the start; then it drains, and
// MaintenancePlanned moves on (False, Started). plan and --dry-run say the window.
func TestMaintenanceWindowOpensLater(t *testing.T) {
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0, 1)
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 4, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 4)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	e.Guard()
	mc := mclient(t)
	startController(e)

	// plan and a dry run say the window, and change nothing.
	// (A day three days ahead: the window is not open now, whatever the day.)
	day := time.Now().In(berlin(t)).AddDate(0, 0, 3).Weekday().String()[:3]
	r := e.Run("plan", e.Nodes[0], "--window", day+" 02:00-06:00 Europe/Berlin")
	fixture.MustContain(t, "plan --window", r.Stdout, "Window: "+day+" 02:00-06:00 Europe/Berlin: opens at ", "no node starts before it")
	r = e.Run("drain", e.Nodes[0], "--dry-run=client", "--start", "1h", "--end", "3h")
	fixture.MustContain(t, "drain --dry-run --start", r.Stderr, "Window: from ", "opens at ", "no node starts before it")
	// Bad input: one line, exit 2, nothing created.
	r = e.Run("drain", e.Nodes[0], "--server-side", "--name", e.NS+"-bad", "--window", "Sat 02:00-06:00 Mars/Olympus")
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, `"Mars/Olympus" is not an IANA time zone`) {
		t.Errorf("a bad --window: exit %d, stderr %q; want 2 and one line naming the zone", r.Code, r.Stderr)
	}
	if err := mc.Get(e.Ctx, types.NamespacedName{Name: e.NS + "-bad"}, &mntv1.Maintenance{}); err == nil {
		t.Errorf("a Maintenance was created from a bad --window")
	}

	before := evictions(e)
	r = e.Run("drain", e.Nodes[0], e.Nodes[1], "--server-side", "--detach", "--name", e.NS, "--start", "20s")
	if r.Code != 0 {
		t.Fatalf("drain --server-side --start: exit %d", r.Code)
	}
	t.Cleanup(func() { _ = mc.Delete(e.Ctx, &mntv1.Maintenance{ObjectMeta: metav1.ObjectMeta{Name: e.NS}}) })
	m, _ := waitFor(e, mc, e.NS, "Scheduled", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhaseScheduled })
	if m.Spec.Window == nil || m.Spec.Window.Start == nil || m.Status.NextStart == nil || !m.Status.NextStart.Time.Equal(m.Spec.Window.Start.Time) {
		t.Fatalf("Scheduled with window %+v and nextStart %v; want nextStart = spec.window.start", m.Spec.Window, m.Status.NextStart)
	}
	start := m.Status.NextStart.Time
	at := start.UTC().Format(time.RFC3339)
	if r := e.Run("get", e.NS); !strings.Contains(r.Stdout, "NEXT START") || !strings.Contains(r.Stdout, at) {
		t.Errorf("get does not show the next start %s:\n%s", at, r.Stdout)
	}
	// Until the start: the condition on both nodes, nothing cordoned, nothing evicted.
	looks := 0
	for time.Now().Before(start.Add(-2 * time.Second)) {
		looks++
		for _, n := range names(e, 0, 1) {
			c := nodeCondition(e, n, "MaintenancePlanned")
			if c.Status != corev1.ConditionTrue || c.Reason != "Scheduled" || !strings.Contains(c.Message, "maintenance/"+e.NS) || !strings.Contains(c.Message, at) {
				t.Fatalf("node %s before the start: MaintenancePlanned %+v, want True (Scheduled) naming maintenance/%s and %s", n, c, e.NS, at)
			}
			if e.Node(n).Spec.Unschedulable {
				t.Fatalf("node %s cordoned before the window's start %s", n, at)
			}
		}
		if got := evictions(e); got != before {
			t.Fatalf("%v eviction requests before the window's start", got-before)
		}
		time.Sleep(time.Second)
	}
	if looks == 0 {
		t.Fatalf("the object was Scheduled only after its start: the test looked at nothing")
	}
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("phases seen after Scheduled: %v; %s", seen, nodeStates(m))
	if m.Status.Phase != mntv1.PhaseSucceeded || m.Status.Counts.NodesDrained != 2 || m.Status.Counts.PodsEvicted != 4 {
		t.Fatalf("phase %s (%s), counts %+v; want Succeeded, 2 nodes drained, 4 pods evicted", m.Status.Phase, m.Status.Message, m.Status.Counts)
	}
	if m.Status.StartTime == nil || m.Status.StartTime.Time.Before(start.Truncate(time.Second)) {
		t.Errorf("the run started at %v, before the window's start %s", m.Status.StartTime, at)
	}
	if m.Status.NextStart != nil {
		t.Errorf("nextStart %v still set after the run", m.Status.NextStart)
	}
	for _, n := range names(e, 0, 1) {
		if c := nodeCondition(e, n, "MaintenancePlanned"); c.Status != corev1.ConditionFalse || c.Reason != "Started" {
			t.Errorf("node %s after the start: MaintenancePlanned %+v, want False (Started)", n, c)
		}
		if c := nodeCondition(e, n, "Drained"); c.Status != corev1.ConditionTrue {
			t.Errorf("node %s: Drained %+v, want True", n, c)
		}
	}
}

// Windows, test 2: a window that closes mid-run with onWindowClose Stop: the node in
// progress stops at the end and stays cordoned with its state, no node starts after it, no
// eviction after it, and the one-shot window ends DeadlinePassed (WindowClosed) naming the
// nodes not started.
func TestMaintenanceWindowClosesStop(t *testing.T) {
	e := slowDrain(t, "a", "b", "c")
	e.Guard()
	mc := mclient(t)
	startController(e)
	end := metav1.NewTime(time.Now().Add(14 * time.Second))
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1, 2),
		Window: &mntv1.Window{End: &end},
		Policy: mntv1.Policy{MaxParallelNodes: 1, OnWindowClose: mntv1.WindowCloseStop}})
	m, seen := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	t.Logf("phases %v; %s; counts %+v; %s", seen, nodeStates(m), m.Status.Counts, m.Status.Message)
	if m.Status.Phase != mntv1.PhaseDeadlinePassed {
		t.Fatalf("phase %s (%s), want DeadlinePassed", m.Status.Phase, m.Status.Message)
	}
	c := findCondition(m, mntv1.ConditionProgressing)
	if c == nil || c.Reason != maintenance.ReasonWindowClosed || !strings.Contains(c.Message, "the window closed at "+end.UTC().Format(time.RFC3339)) {
		t.Errorf("Progressing %+v, want reason WindowClosed saying when", c)
	}
	before := evictions(e)
	time.Sleep(8 * time.Second) // a running drain would evict about two pods in this time
	if after := evictions(e); after != before {
		t.Errorf("%v eviction requests after the run ended", after-before)
	}
	var stopped, notStarted []string
	for _, n := range m.Status.Nodes {
		node := e.Node(n.Name)
		pods := len(e.PodsOn(n.Name))
		switch n.State {
		case maintenance.NodeNotStarted, maintenance.NodePending:
			notStarted = append(notStarted, n.Name)
			if node.Spec.Unschedulable || pods != 4 {
				t.Errorf("node %s not started: unschedulable=%v with %d pods; want schedulable with its 4 pods", n.Name, node.Spec.Unschedulable, pods)
			}
		case maintenance.NodeCordoned, maintenance.NodeDraining:
			stopped = append(stopped, n.Name)
			if !node.Spec.Unschedulable || node.Labels[noderecord.LabelState] == "" {
				t.Errorf("node %s stopped in progress: unschedulable=%v state=%q; want cordoned with its state", n.Name, node.Spec.Unschedulable, node.Labels[noderecord.LabelState])
			}
		}
	}
	if len(stopped) == 0 || len(notStarted) == 0 {
		t.Fatalf("stopped %v, not started %v: want a node stopped in progress and one not started (%s)", stopped, notStarted, nodeStates(m))
	}
	for _, n := range notStarted {
		fixture.MustContain(t, "the status message", m.Status.Message, n)
	}
	fixture.MustContain(t, "the status message", m.Status.Message, "node(s) stopped in progress, left cordoned: "+strings.Join(stopped, ", "))
}

func findCondition(m *mntv1.Maintenance, typ string) *metav1.Condition {
	for i := range m.Status.Conditions {
		if m.Status.Conditions[i].Type == typ {
			return &m.Status.Conditions[i]
		}
	}
	return nil
}

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Windows, a local drain's --start: it waits, saying until when; Ctrl-C during the wait
// exits 130 with nothing changed; at the start it drains.
func TestLocalDrainWaitsForStart(t *testing.T) {
	e := oneNodeWorkload(t, "a", "web", 2, nil, 0)
	before := evictions(e)
	r := e.RunCtx(e.Ctx, func(cmd *exec.Cmd) {
		time.AfterFunc(2*time.Second, func() { _ = cmd.Process.Signal(os.Interrupt) })
	}, "drain", e.Nodes[0], "--start", "1h")
	if r.Code != 130 || !strings.Contains(r.Stderr, "waiting until ") || !strings.Contains(r.Stderr, "nothing was changed") {
		t.Errorf("Ctrl-C during the wait: exit %d, stderr %q; want 130, saying until when and that nothing changed", r.Code, r.Stderr)
	}
	if e.Node(e.Nodes[0]).Spec.Unschedulable || evictions(e) != before || len(e.PodsOn(e.Nodes[0])) != 2 {
		t.Fatalf("the interrupted wait changed the cluster: cordoned=%v, %v evictions, %d pods left", e.Node(e.Nodes[0]).Spec.Unschedulable, evictions(e)-before, len(e.PodsOn(e.Nodes[0])))
	}
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	r = e.Run("drain", e.Nodes[0], "--start", start.Format(time.RFC3339))
	if r.Code != 0 || !strings.Contains(r.Stderr, "waiting until "+start.Format(time.RFC3339)) {
		t.Fatalf("drain --start: exit %d, stderr %q; want 0, saying until %s", r.Code, r.Stderr, start.Format(time.RFC3339))
	}
	if !time.Now().After(start) || len(e.PodsOn(e.Nodes[0])) != 0 {
		t.Errorf("drain --start %s returned at %s with %d pods left", start.Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339), len(e.PodsOn(e.Nodes[0])))
	}
}
