package pooltest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
)

// Issue 11, test 7: the controller idle on 200 nodes of its pool while every node sends
// a status heartbeat every 10 s, for 60 s: its API requests per minute, from its client's
// metrics (rest_client_requests_total). It runs alone (not parallel), and the controller
// is scoped to the test's pool. POOLTEST_CONTROLLER=<binary> measures another build (the
// "before" figure); POOLTEST_CONTROLLER_UNSCOPED=1 when that build has no --pools.
func TestIdleControllerOn200Nodes(t *testing.T) {
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("n%03d", i)
	}
	e := newEnv(t, names...)
	pool := e.NS + "-idle"
	if _, err := fixture.CreateNodes(e.Ctx, e.C, fixture.NodeSpec{Names: e.Nodes, Pools: []string{pool}, Labels: map[string]string{"test": e.NS}}); err != nil {
		t.Fatal(err)
	}
	if r := applyPool(e, poolYAML(pool, pool, pool, "")); r.Code != 0 {
		t.Fatalf("pool apply exit %d", r.Code)
	}
	bin := os.Getenv("POOLTEST_CONTROLLER")
	var extra []string
	if os.Getenv("POOLTEST_CONTROLLER_UNSCOPED") == "" {
		extra = append(extra, "--pools="+pool)
	}
	addr := startController(e, bin, extra...)
	// Let it start, sync its caches and reconcile once.
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, _ := fixture.Scrape(addr)
		if sumMetric(m, "controller_runtime_reconcile_total") >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the controller never reconciled")
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(5 * time.Second)
	before, err := fixture.Scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	passed := predicateWatch(e)
	began := time.Now()
	heartbeats := 0
	for round := 0; round < 6; round++ {
		tick := time.Now()
		heartbeats += heartbeat(e, e.Nodes)
		time.Sleep(time.Until(tick.Add(10 * time.Second)))
	}
	elapsed := time.Since(began)
	if n, example := passed(); n > 0 {
		t.Errorf("%d node updates during the heartbeats passed the controller's predicate, e.g. %s", n, example)
	}
	after, err := fixture.Scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	perMin := func(labels ...string) float64 {
		d := sumMetric(after, "rest_client_requests_total", labels...) - sumMetric(before, "rest_client_requests_total", labels...)
		return d * float64(time.Minute) / float64(elapsed)
	}
	var by []string
	for _, m := range []string{"GET", "LIST", "POST", "PUT", "PATCH", "DELETE"} {
		if v := perMin(`method="` + m + `"`); v > 0 {
			by = append(by, fmt.Sprintf("%s %.0f", m, v))
		}
	}
	sort.Strings(by)
	total := perMin()
	writes := perMin(`method="POST"`) + perMin(`method="PUT"`) + perMin(`method="PATCH"`) + perMin(`method="DELETE"`)
	reconciles := sumMetric(after, "controller_runtime_reconcile_total") - sumMetric(before, "controller_runtime_reconcile_total")
	t.Logf("FIGURE idle pool controller (%s) on 200 nodes, %d heartbeats in %s: %.0f API requests/min (%s), %.0f writes/min, %.0f reconciles",
		orPlugin(bin), heartbeats, elapsed.Round(time.Second), total, strings.Join(by, ", "), writes, reconciles)
	if bin == "" && (writes > 0 || total > 2) {
		t.Errorf("the idle controller sent %.0f requests/min (%.0f writes/min), want none", total, writes)
	}
}

func orPlugin(bin string) string {
	if bin == "" {
		return "this build"
	}
	return bin
}

// heartbeat writes a kubelet-like status heartbeat (the Ready condition's
// lastHeartbeatTime) on every node, 8 at a time, and returns how many were written.
func heartbeat(e *fixture.Env, nodes []string) int {
	e.T.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	patch := []byte(fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":%q}]}}`, now))
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	work := make(chan string)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				ctx, cancel := context.WithTimeout(e.Ctx, 10*time.Second)
				_, err := e.C.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
				cancel()
				if err == nil {
					mu.Lock()
					n++
					mu.Unlock()
				}
			}
		}()
	}
	for _, name := range nodes {
		work <- name
	}
	close(work)
	wg.Wait()
	return n
}

// predicateWatch watches the env's nodes and runs every update through the controller's
// node predicate; stop returns how many passed, with an example.
func predicateWatch(e *fixture.Env) (stop func() (int, string)) {
	e.T.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	list, err := e.C.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "test=" + e.NS})
	if err != nil {
		e.T.Fatal(err)
	}
	last := map[string]*corev1.Node{}
	for i := range list.Items {
		last[list.Items[i].Name] = &list.Items[i]
	}
	w, err := e.C.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "test=" + e.NS, ResourceVersion: list.ResourceVersion})
	if err != nil {
		e.T.Fatal(err)
	}
	passed, example := 0, ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type != watch.Modified {
				continue
			}
			if old := last[n.Name]; old != nil && reconciler.NodeChanged(old, n) {
				passed++
				if example == "" {
					example = fmt.Sprintf("node %s: labels %v -> %v, taints %v -> %v, unschedulable %v -> %v",
						n.Name, old.Labels, n.Labels, old.Spec.Taints, n.Spec.Taints, old.Spec.Unschedulable, n.Spec.Unschedulable)
				}
			}
			last[n.Name] = n
		}
	}()
	return func() (int, string) {
		cancel()
		w.Stop()
		<-done
		return passed, example
	}
}
