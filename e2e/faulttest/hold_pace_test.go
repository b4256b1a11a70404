package faulttest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/cluster"
	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// holdBudgets is how many one-pod-a-node Deployments, each under its own budget, share
// the drained node with the StatefulSet's pod: their evictions fill the disruption
// controller's queue.
const holdBudgets = 20

// Issue 44, test 1: the disruption controller slowed (kube-controller-manager's clients
// at 2 requests a second) while a node is drained whose pods are 20 Deployments' under
// 20 budgets and a StatefulSet's under maxUnavailable 1. With the hold guard (the
// default) the StatefulSet's pod is sent first, while the controller's queue is short,
// and no hold is caused; with it off (Config.PaceMargin < 0: kubectl's order, the
// StatefulSet's pod last) the controller syncs its budget only after the replacement took
// the name: a hold. Both on the same cluster, one after the other. Not parallel: it slows
// every controller.
func TestTheHoldGuardCausesNoHoldWhereItsAbsenceDoes(t *testing.T) {
	ensureRunning(t, cluster.ControllerManager)
	off := holdScene(t, "zoff")
	on := holdScene(t, "zon")
	if err := shared.RestartWith(context.Background(), cluster.ControllerManager, "--kube-api-qps=2", "--kube-api-burst=2"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shared.RestartWith(context.Background(), cluster.ControllerManager); err != nil {
			t.Errorf("bring kube-controller-manager back to its own flags: %v", err)
		}
	})
	off.caughtUp(t)
	offHolds, offWall := off.drain(t, -1)
	off.settled(t)
	on.caughtUp(t)
	onHolds, onWall := on.drain(t, 0)
	t.Logf("FIGURE issue44-test1: guard off: %d hold(s) of the StatefulSet's budget, drain %s; guard on: %d, drain %s",
		offHolds, offWall.Round(100*time.Millisecond), onHolds, onWall.Round(100*time.Millisecond))
	if onHolds != 0 {
		t.Errorf("with the hold guard: %d hold(s) caused, want 0", onHolds)
	}
	if onWall > 90*time.Second {
		t.Errorf("with the hold guard the drain took %s, want under 90 s (no 2-minute hold)", onWall)
	}
	if offHolds == 0 {
		t.Errorf("without the guard no hold either: the scene does not slow the controller enough to tell")
	}
}

// scene is one env: nodes a (drained) and b, each with one pod of every Deployment and of
// the StatefulSet zz.
type scene struct {
	e      *fixture.Env
	victim string // zz's pod on node a
}

func holdScene(t *testing.T, prefix string) *scene {
	t.Helper()
	e := fixture.NewEnv(t, shared, plugin, prefix+"-a", prefix+"-b")
	e.AddNodes()
	spread := e.Here(fixture.PodOptions{SpreadByHostname: true})
	for i := range holdBudgets {
		name := fmt.Sprintf("w%02d", i)
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, name, 2, spread); err != nil {
			t.Fatal(err)
		}
	}
	sts := spread
	sts.DeleteDelay = 5 * time.Second // a real pod takes a while to terminate (the fleet bench's StatefulSet pods too)
	if _, err := fixture.StatefulSet(e.Ctx, e.C, e.NS, "zz", 2, sts); err != nil {
		t.Fatal(err)
	}
	for i := range holdBudgets {
		name := fmt.Sprintf("w%02d", i)
		e.Ready(name, 2)
		if _, err := fixture.PDB(e.Ctx, e.C, e.NS, name, fixture.PDBSpec{App: name, MaxUnavailable: fixture.Int(1)}); err != nil {
			t.Fatal(err)
		}
	}
	s := &scene{e: e}
	for _, p := range e.Ready("zz", 2) {
		if p.Spec.NodeName == e.Nodes[0] {
			s.victim = p.Name
		}
	}
	if s.victim == "" {
		t.Fatal("no zz pod on the drained node")
	}
	e.PDB("zz", fixture.PDBSpec{App: "zz", MaxUnavailable: fixture.Int(1)}, 1)
	for i := range holdBudgets {
		if _, err := fixture.WaitPDBAllows(e.Ctx, e.C, e.NS, fmt.Sprintf("w%02d", i), 1); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// drain drains node a in process with margin as Config.PaceMargin, and returns how many
// holds of zz's budget on the victim's name a watch saw, and the drain's wall.
func (s *scene) drain(t *testing.T, margin time.Duration) (int, time.Duration) {
	t.Helper()
	e := s.e
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	var mu sync.Mutex
	holds := map[time.Time]bool{} // by the entry's time
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ctx.Err() == nil {
			b, err := e.C.PolicyV1().PodDisruptionBudgets(e.NS).Get(ctx, "zz", metav1.GetOptions{})
			ps, err2 := e.C.CoreV1().Pods(e.NS).List(ctx, metav1.ListOptions{LabelSelector: "app=zz"})
			if err == nil && err2 == nil {
				states := map[string]pdb.PodState{}
				for i := range ps.Items {
					states[ps.Items[i].Name] = pdb.StateOf(&ps.Items[i])
				}
				for _, h := range pdb.HoldsOf(b, states, time.Now()) {
					if h.Pod == s.victim {
						mu.Lock()
						holds[h.Since] = true
						mu.Unlock()
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	events := make(chan event.Event, 1000)
	go func() {
		for range events {
		}
	}()
	settings := drain.DefaultSettings()
	settings.Timeout = 3 * time.Minute
	eng, err := drain.NewEngine(drain.Config{Client: e.C, Events: events, PaceMargin: margin, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = eng.Run(ctx, []string{e.Nodes[0]})
	wall := time.Since(began)
	close(events)
	if err != nil {
		t.Fatalf("drain (margin %s): %v", margin, err)
	}
	// The controller syncs the budget some seconds late: keep watching for that long.
	select {
	case <-ctx.Done():
	case <-time.After(15 * time.Second):
	}
	cancel()
	<-watched
	mu.Lock()
	defer mu.Unlock()
	return len(holds), wall
}

// caughtUp waits until the disruption controller has nothing queued before a change made
// now: the scene's probe budget's spec is changed, and its status says it saw the change
// (after a restart the controller syncs every budget of the cluster first).
func (s *scene) caughtUp(t *testing.T) {
	t.Helper()
	e := s.e
	pdbs := e.C.PolicyV1().PodDisruptionBudgets(e.NS)
	p, err := pdbs.Get(e.Ctx, "probe", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p, err = fixture.PDB(e.Ctx, e.C, e.NS, "probe", fixture.PDBSpec{App: "none", MaxUnavailable: fixture.Int(1)})
	}
	if err != nil {
		t.Fatal(err)
	}
	n := int32(1)
	if p.Spec.MaxUnavailable != nil && p.Spec.MaxUnavailable.IntVal == 1 {
		n = 2
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"maxUnavailable":%d}}`, n))
	if p, err = pdbs.Patch(e.Ctx, "probe", k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	began, gen := time.Now(), p.Generation
	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Minute)
	defer cancel()
	if _, err := fixture.WaitPDB(ctx, e.C, e.NS, "probe", func(p *policyv1.PodDisruptionBudget) bool { return p.Status.ObservedGeneration >= gen }); err != nil {
		t.Fatalf("the disruption controller never caught up: %v", err)
	}
	t.Logf("the disruption controller caught up in %s", time.Since(began).Round(100*time.Millisecond))
}

// settled waits until every budget of the scene is current again (the slowed controller
// has caught up), so that the next scene starts on an empty queue.
func (s *scene) settled(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.e.Ctx, 3*time.Minute)
	defer cancel()
	for i := range holdBudgets {
		if _, err := fixture.WaitPDB(ctx, s.e.C, s.e.NS, fmt.Sprintf("w%02d", i), func(p *policyv1.PodDisruptionBudget) bool {
			return len(p.Status.DisruptedPods) == 0 && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1
		}); err != nil {
			t.Fatalf("the controller never caught up with w%02d: %v", i, err)
		}
	}
}
