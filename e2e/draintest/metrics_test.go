package draintest

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/fixture"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
)

// TestDrainServesItsMetricsWhileItRuns: drain --metrics-bind-address serves the run's
// metrics while it lasts: one node, two pods under a budget of one, the replacement with
// nowhere to run, so one eviction is accepted and the other pod waits for the budget until
// --timeout. Scraped during the wait, the run is counted, its one accepted eviction is the
// API server's one eviction request, and the waiting pod is counted by its reason; once
// the drain has exited the endpoint is gone. Not parallel: the eviction count is the
// cluster's.
func TestDrainServesItsMetricsWhileItRuns(t *testing.T) {
	e := newEnv(t, "a")
	e.AddNodes()
	if _, err := fixture.Deployment(e.Ctx, e.C, e.NS, "web", 2, e.Here(fixture.PodOptions{})); err != nil {
		t.Fatal(err)
	}
	e.Ready("web", 2)
	e.PDB("web", fixture.PDBSpec{App: "web", MinAvailable: fixture.Int(1)}, 1)
	e.Guard()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	before := apiEvictions(t, e)

	done := make(chan fixture.Result, 1)
	go func() {
		done <- e.RunCtx(context.WithoutCancel(e.Ctx), nil, "drain", e.Nodes[0], "--timeout", "20s", "--metrics-bind-address", addr)
	}()
	var seen map[string]float64
	for seen == nil {
		if m, err := fixture.Scrape(addr); err == nil && sumFamily(m, metrics.PodsWaiting) >= 1 && m[metrics.EvictionsTotal+`{outcome="accepted"}`] >= 1 {
			seen = m
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the drain ended (exit %d) before its metrics showed a pod waiting and an eviction accepted", r.Code)
		case <-time.After(200 * time.Millisecond):
		}
	}
	server := apiEvictions(t, e) - before
	r := <-done
	if r.Code != 124 {
		t.Errorf("drain exit %d, want 124 (the budget never recovers)", r.Code)
	}
	if ours := sumFamily(seen, metrics.EvictionsTotal); ours != 1 || server != 1 {
		t.Errorf("%s sums to %.0f while the pod waited, the API server counted %.0f eviction requests; want 1 and 1", metrics.EvictionsTotal, ours, server)
	}
	if w := sumFamily(seen, metrics.PodsWaiting); w != 1 {
		t.Errorf("%s sums to %.0f, want the one pod that waits", metrics.PodsWaiting, w)
	}
	if seen[metrics.RunsInProgress] != 1 {
		t.Errorf("%s = %v during the run, want 1", metrics.RunsInProgress, seen[metrics.RunsInProgress])
	}
	if _, err := fixture.Scrape(addr); err == nil {
		t.Errorf("the metrics endpoint %s still answers after the drain exited", addr)
	}
}

// sumFamily adds up the samples of a family with labels.
func sumFamily(m map[string]float64, family string) float64 {
	var sum float64
	for k, v := range m {
		if strings.HasPrefix(k, family+"{") {
			sum += v
		}
	}
	return sum
}

// apiEvictions is the API server's count of eviction requests.
func apiEvictions(t *testing.T, e *fixture.Env) float64 {
	t.Helper()
	n, err := shared.APIServerMetric(e.Ctx, "apiserver_request_total", map[string]string{"resource": "pods", "subresource": "eviction"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
