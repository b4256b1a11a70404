package mnttest

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// The fleet of issue 39's test 3: 20 nodes of 4 pods each, one pod of each of 4
// Deployments per node, each Deployment under a budget of maxUnavailable 1 that spans
// the 20 nodes, and 2 spare nodes for the replacements (added after the pods).
const (
	fleetNodes = 20
	fleetApps  = 4
	fleetPods  = fleetNodes * fleetApps
)

// fleetEnv builds the fleet and starts the eviction watch and the guard.
func fleetEnv(t *testing.T) (*fixture.Env, *evictionWatch) {
	t.Helper()
	var ns []string
	for i := range fleetNodes {
		ns = append(ns, fmt.Sprintf("n%02d", i))
	}
	e := newEnv(t, append(ns, "spare0", "spare1")...)
	idx := make([]int, fleetNodes)
	for i := range idx {
		idx[i] = i
	}
	e.AddNodes(idx...)
	for a := range fleetApps {
		app := fmt.Sprintf("w%d", a)
		if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, app, fleetNodes, e.Here(fixture.PodOptions{ReadyDelay: time.Second, SpreadByHostname: true})); err != nil {
			t.Fatal(err)
		}
	}
	for a := range fleetApps {
		app := fmt.Sprintf("w%d", a)
		e.Ready(app, fleetNodes)
		e.PDB(app, fixture.PDBSpec{App: app, MaxUnavailable: fixture.Int(1)}, 1)
	}
	e.AddNodes(fleetNodes, fleetNodes+1)
	e.Guard()
	return e, watchEvictions(e)
}

// evictionWatch records every pod of the namespace the Eviction API evicted, by UID, and
// the pods there were before the maintenance.
type evictionWatch struct {
	mu       sync.Mutex
	original map[types.UID]bool
	evicted  map[types.UID]string
}

func watchEvictions(e *fixture.Env) *evictionWatch {
	e.T.Helper()
	list, err := e.C.CoreV1().Pods(e.NS).List(e.Ctx, metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	w := &evictionWatch{original: map[types.UID]bool{}, evicted: map[types.UID]string{}}
	for _, p := range list.Items {
		w.original[p.UID] = true
	}
	pods := e.C.CoreV1().Pods(e.NS)
	ch, err := fixture.Rewatch(e.Ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }, pods.Watch)
	if err != nil {
		e.T.Fatal(err)
	}
	go func() {
		for ev := range ch {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Error || !fixture.EvictedByAPI(p) {
				continue
			}
			w.mu.Lock()
			w.evicted[p.UID] = p.Name
			w.mu.Unlock()
		}
	}()
	return w
}

// counts says how many pods were evicted and how many of them were not among the pods
// there were before: replacements evicted again (a pod evicted twice over).
func (w *evictionWatch) counts() (evicted, again int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid := range w.evicted {
		evicted++
		if !w.original[uid] {
			again++
		}
	}
	return evicted, again
}

// statusWrites is the API server's count of writes of Maintenance statuses.
func statusWrites(e *fixture.Env) float64 {
	e.T.Helper()
	n, err := shared.APIServerMetric(e.Ctx, "apiserver_request_total", map[string]string{"resource": "maintenances", "subresource": "status"})
	if err != nil {
		e.T.Fatal(err)
	}
	return n
}

// waitAllDone waits until every named object ended and returns their summed counts.
func waitAllDone(e *fixture.Env, mc client.Client, objs []string) (mntv1.Counts, []mntv1.Phase) {
	e.T.Helper()
	var sum mntv1.Counts
	var phases []mntv1.Phase
	for _, name := range objs {
		m, _ := waitFor(e, mc, name, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
		sum.Evictions += m.Status.Counts.Evictions
		sum.PodsEvicted += m.Status.Counts.PodsEvicted
		sum.Refusals += m.Status.Counts.Refusals
		phases = append(phases, m.Status.Phase)
	}
	return sum, phases
}

// fleetFigures is one fleet run's figures.
type fleetFigures struct {
	wall           time.Duration
	requests       float64
	writes         float64
	evicted, again int
	counts         mntv1.Counts
	phases         []mntv1.Phase
}

func (f fleetFigures) String() string {
	return fmt.Sprintf("wall %s, %v eviction requests (%.2f per pod), %d pods evicted, %d evicted twice, %v status writes; status counts summed: %d requests, %d pods evicted, %d refusals",
		f.wall.Round(100*time.Millisecond), f.requests, f.requests/fleetPods, f.evicted, f.again, f.writes, f.counts.Evictions, f.counts.PodsEvicted, f.counts.Refusals)
}

// runFleet creates the objects (each over the nodes it names) within spread, and waits
// for every one to end.
func runFleet(e *fixture.Env, w *evictionWatch, mc client.Client, spread time.Duration, objs map[string][]string) fleetFigures {
	e.T.Helper()
	baseReq, baseWrites := evictions(e), statusWrites(e)
	began := time.Now()
	var order []string
	i := 0
	for name, nodes := range objs {
		// Each create at its own offset from the first (the last at 9/10 of spread), so
		// that the last is made within spread whatever each create costs.
		if n := len(objs); n > 1 {
			time.Sleep(time.Until(began.Add(spread * 9 / 10 * time.Duration(i) / time.Duration(n-1))))
		}
		i++
		create(e, mc, name, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: nodes})
		order = append(order, name)
	}
	if made := time.Since(began); len(objs) > 1 && made > spread {
		e.T.Errorf("the %d objects were created over %s, want within %s", len(objs), made.Round(10*time.Millisecond), spread)
	}
	counts, phases := waitAllDone(e, mc, order)
	f := fleetFigures{wall: time.Since(began), requests: evictions(e) - baseReq, writes: statusWrites(e) - baseWrites, counts: counts, phases: phases}
	f.evicted, f.again = w.counts()
	return f
}

// Issue 39, test 3: 20 one-node Maintenances created within 2 s over budgets that span
// the nodes cost at most 1.1 eviction requests per pod, evict no pod twice, and their
// status counts add up to what the API server saw. The same nodes as one object are run
// first, on a fleet of their own, for the wall to compare with.
func TestManyMaintenancesShareBudgets(t *testing.T) {
	mc := mclient(t)
	one, oneWatch := fleetEnv(t)
	stop := startController(one)
	single := runFleet(one, oneWatch, mc, 0, map[string][]string{one.NS: one.Nodes[:fleetNodes]})
	t.Logf("FIGURE test3 one object over %d nodes: %s", fleetNodes, single)
	stop() // one controller at a time: each runs every object of the cluster

	e, w := fleetEnv(t)
	startController(e)
	objs := map[string][]string{}
	for i := range fleetNodes {
		objs[fmt.Sprintf("%s-%02d", e.NS, i)] = []string{e.Nodes[i]}
	}
	many := runFleet(e, w, mc, 2*time.Second, objs)
	t.Logf("FIGURE test3 %d one-node objects within 2 s: %s; wall %.2fx one object's", fleetNodes, many, float64(many.wall)/float64(single.wall))
	for i, p := range many.phases {
		if p != mntv1.PhaseSucceeded {
			t.Errorf("object %d: phase %s, want Succeeded", i, p)
		}
	}
	if per := many.requests / fleetPods; per > 1.1 {
		t.Errorf("%.2f eviction requests per pod, want at most 1.1", per)
	}
	if many.again > 0 {
		t.Errorf("%d pods evicted twice over (replacements evicted again), want none", many.again)
	}
	if float64(many.counts.Evictions) != many.requests {
		t.Errorf("status counts summed: %d eviction requests, the API server saw %v", many.counts.Evictions, many.requests)
	}
	if int(many.counts.PodsEvicted) != many.evicted {
		t.Errorf("status counts summed: %d pods evicted, the watch saw %d", many.counts.PodsEvicted, many.evicted)
	}
}

// Issue 39, test 4: a leader killed (SIGKILL) mid-run and then the next leader stopped
// cleanly (SIGTERM) mid-run: a third finishes; the eviction requests equal the pods, and
// the status counts equal what the API server saw.
func TestMaintenanceCountsAcrossHandovers(t *testing.T) {
	e := newEnv(t, "a", "b", "spare")
	e.AddNodes(0, 1)
	const pods = 8
	slow := e.Here(fixture.PodOptions{ReadyDelay: 3 * time.Second})
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", pods, slow); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", pods)
	e.PDB("web", fixture.PDBSpec{App: "web", MaxUnavailable: fixture.Int(1)}, 1)
	e.AddNodes(2)
	e.Guard()
	w := watchEvictions(e)
	mc := mclient(t)
	lease := []string{"--leader-elect", "--leader-election-namespace=" + e.NS, "--leader-election-lease-duration=6s",
		"--leader-election-renew-deadline=4s", "--leader-election-retry-period=1s"}
	first := runController(e, lease...)
	leader := waitHolder(e, "")
	second := runController(e, lease...)
	base := evictions(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1)})
	evictedAtLeast := func(n int) {
		for {
			if got, _ := w.counts(); got >= n {
				return
			}
			select {
			case <-e.Ctx.Done():
				t.Fatalf("fewer than %d pods evicted", n)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	evictedAtLeast(2)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	leader = waitHolder(e, leader)
	evictedAtLeast(5)
	runController(e, lease...) // the third, standing by
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-second.exited
	waitHolder(e, leader)
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool { return m.Status.Phase.Done() })
	n := evictions(e) - base
	evicted, again := w.counts()
	t.Logf("FIGURE test4: %v eviction requests for %d pods, %d evicted (%d twice over); status %s counts %+v", n, pods, evicted, again, m.Status.Phase, m.Status.Counts)
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Errorf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if n != pods {
		t.Errorf("%v eviction requests, want %d (one per pod)", n, pods)
	}
	if float64(m.Status.Counts.Evictions) != n {
		t.Errorf("status counts %d eviction requests, the API server saw %v", m.Status.Counts.Evictions, n)
	}
	if int(m.Status.Counts.PodsEvicted) != evicted {
		t.Errorf("status counts %d pods evicted, the watch saw %d", m.Status.Counts.PodsEvicted, evicted)
	}
}
