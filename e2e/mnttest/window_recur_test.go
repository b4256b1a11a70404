package mnttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// offsetClock is the real clock moved forward by an offset the test sets: timers and
// tickers run in real time, Now is moved.
type offsetClock struct {
	clock.RealClock
	mu  sync.Mutex
	off time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// moveTo sets the offset so that Now is t.
func (c *offsetClock) moveTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = time.Until(t)
}

// startInProcess runs the Maintenance reconciler in this process on clk (the binary
// takes no clock), until the test ends.
func startInProcess(e *fixture.Env, clk clock.WithTicker) {
	e.T.Helper()
	ctrl.SetLogger(klog.NewKlogr())
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		e.T.Fatal(err)
	}
	if err := mntv1.AddToScheme(s); err != nil {
		e.T.Fatal(err)
	}
	mgr, err := ctrl.NewManager(shared.Config, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		e.T.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(shared.Config)
	if err != nil {
		e.T.Fatal(err)
	}
	r := &maintenance.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Kube: kube, Clock: clk,
		Recorder: mgr.GetEventRecorderFor("kubectl-maintenance"), //nolint:staticcheck // as maintenance.Setup
		Logger:   klog.Background().WithName("maintenance")}
	if err := r.SetupWithManager(mgr); err != nil {
		e.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			e.T.Errorf("manager: %v", err)
		}
	}()
	e.T.Cleanup(func() { cancel(); <-done })
}

// Windows, test 2 (recurring): a weekly window that opens a few seconds after creation
// and closes mid-run with onWindowClose Stop goes back to Scheduled with next week's
// start, its node in progress left cordoned, no eviction between the windows; at next
// week's opening (the controller's clock moved a week on) the run goes on where it
// stopped: no pod evicted twice, the node drained in the first window not redone.
//
// The reconciler runs in the test with a moved clock; the engine keeps the real one, so
// in the second window only the Stop at the close (a timer of the reconciler's clock)
// ends it, which is why the test uses Stop.
func TestMaintenanceRecurringWindowGoesOn(t *testing.T) {
	e := slowDrain(t, "a", "b")
	e.Guard()
	mc := mclient(t)
	clk := &offsetClock{}
	startInProcess(e, clk)
	open := time.Now().UTC().Add(10 * time.Second).Truncate(time.Second)
	closes := open.Add(24 * time.Second)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1),
		Window: &mntv1.Window{Recurring: &mntv1.RecurringWindow{Days: []string{open.Weekday().String()[:3]},
			Start: open.Format("15:04:05"), End: closes.Format("15:04:05"), TimeZone: "UTC"}},
		Policy: mntv1.Policy{MaxParallelNodes: 1, OnWindowClose: mntv1.WindowCloseStop}})
	m, _ := waitFor(e, mc, e.NS, "Scheduled", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhaseScheduled })
	if !m.Status.NextStart.Time.Equal(open) {
		t.Fatalf("nextStart %v, want %s", m.Status.NextStart, open)
	}
	waitFor(e, mc, e.NS, "Running", func(m *mntv1.Maintenance) bool { return m.Status.Phase == mntv1.PhaseRunning })
	next := open.AddDate(0, 0, 7)
	m, seen := waitFor(e, mc, e.NS, "Scheduled for next week", func(m *mntv1.Maintenance) bool {
		return m.Status.Phase.Done() || (m.Status.Phase == mntv1.PhaseScheduled && m.Status.NextStart.Time.Equal(next))
	})
	first := m.Status.Counts.PodsEvicted
	t.Logf("after the first window: phases %v; %s; %d evicted; %s", seen, nodeStates(m), first, m.Status.Message)
	if m.Status.Phase != mntv1.PhaseScheduled {
		t.Fatalf("phase %s (%s) after the first window, want Scheduled for %s", m.Status.Phase, m.Status.Message, next)
	}
	if m.Status.StartTime != nil {
		t.Errorf("startTime %v kept between the windows: drain.timeout would count the week", m.Status.StartTime)
	}
	if first == 0 || first >= 8 {
		t.Fatalf("%d pods evicted in the first window, want some but not all 8", first)
	}
	drainedSince := map[string]time.Time{}
	for _, n := range m.Status.Nodes {
		node := e.Node(n.Name)
		switch n.State {
		case maintenance.NodeDrained:
			drainedSince[n.Name] = n.Since.Time
		case maintenance.NodeCordoned, maintenance.NodeDraining:
			if !node.Spec.Unschedulable {
				t.Errorf("node %s stopped in progress is not cordoned", n.Name)
			}
		}
		if n.State != maintenance.NodeDrained {
			if c := nodeCondition(e, n.Name, "MaintenancePlanned"); c.Status != "True" || c.Reason != "Scheduled" {
				t.Errorf("node %s between the windows: MaintenancePlanned %+v, want True (Scheduled)", n.Name, c)
			}
		}
	}
	before := evictions(e)
	time.Sleep(6 * time.Second) // a running drain would evict a pod or two in this time
	if after := evictions(e); after != before {
		t.Errorf("%v eviction requests between the windows", after-before)
	}
	// Next week, 3 s before the opening; a change of the object makes the controller look.
	clk.moveTo(next.Add(-3 * time.Second))
	patch(e, mc, e.NS, `{"metadata":{"annotations":{"test/look":"now"}}}`)
	m, seen = waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool {
		return m.Status.Phase.Done() || (m.Status.Phase == mntv1.PhaseScheduled && m.Status.NextStart.After(next))
	})
	t.Logf("after the second window: phases %v; %s; counts %+v", seen, nodeStates(m), m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded || m.Status.Counts.PodsEvicted != 8 || m.Status.Counts.NodesDrained != 2 {
		t.Fatalf("phase %s (%s), counts %+v; want Succeeded, the 8 pods evicted once each, 2 nodes drained", m.Status.Phase, m.Status.Message, m.Status.Counts)
	}
	if m.Status.StartTime == nil || m.Status.StartTime.Time.Before(next) {
		t.Errorf("the second run started at %v, before its window opened at %s (the controller's clock)", m.Status.StartTime, next)
	}
	for _, n := range m.Status.Nodes {
		if since, ok := drainedSince[n.Name]; ok && !n.Since.Time.Equal(since) {
			t.Errorf("node %s, drained in the first window, changed state again at %s", n.Name, n.Since.Time)
		}
		if left := e.PodsOn(n.Name); len(left) != 0 {
			t.Errorf("%d pods left on %s", len(left), n.Name)
		}
	}
}
