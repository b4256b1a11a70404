package mnttest

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	mntv1 "github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
)

// TestMetricsCountWhatTheServerSaw: the controller's metrics endpoint, scraped while a
// Maintenance drains three nodes under a binding budget and after it, counts as many
// evictions (all outcomes) as the API server counted eviction requests, its nodes by
// state gauge says what the object's status says, and no label of ours ever takes more
// values than metrics.LabelBound.
func TestMetricsCountWhatTheServerSaw(t *testing.T) {
	e := threeNodesOfWeb(t)
	mc := mclient(t)
	addr := freeAddr(t)
	startController(e, "--metrics-bind-address="+addr)
	before := evictions(e)
	create(e, mc, e.NS, mntv1.MaintenanceSpec{Action: mntv1.ActionDrain, Nodes: names(e, 0, 1, 2), Reason: "metrics"})

	values := map[string]map[string]bool{} // family/label -> values seen over every scrape
	scrapes, runningSeen := 0, false
	m, _ := waitFor(e, mc, e.NS, "the end", func(m *mntv1.Maintenance) bool {
		if mfs, err := scrapeFamilies(addr); err == nil {
			scrapes++
			noteLabels(values, mfs)
			runningSeen = runningSeen || sample(mfs, metrics.RunsInProgress, nil) == 1
		}
		return m.Status.Phase.Done()
	})
	if m.Status.Phase != mntv1.PhaseSucceeded {
		t.Fatalf("phase %s (%s), want Succeeded", m.Status.Phase, m.Status.Message)
	}
	if scrapes == 0 || !runningSeen {
		t.Errorf("%d scrapes while it ran, a run in progress seen: %v; want the endpoint up with the run counted", scrapes, runningSeen)
	}
	server := evictions(e) - before
	wantNodes := map[string]float64{}
	for _, n := range m.Status.Nodes {
		wantNodes[n.State]++
	}
	// The object's status reaches the controller's cache by a watch: read until it has.
	var mfs map[string]*dto.MetricFamily
	for {
		var err error
		if mfs, err = scrapeFamilies(addr); err != nil {
			t.Fatal(err)
		}
		noteLabels(values, mfs)
		if sample(mfs, metrics.MaintenancesByPhase, map[string]string{"phase": string(mntv1.PhaseSucceeded)}) == 1 {
			break
		}
		select {
		case <-e.Ctx.Done():
			t.Fatalf("the controller's metrics never showed the object Succeeded")
		case <-time.After(200 * time.Millisecond):
		}
	}
	var ours float64
	for _, o := range []string{metrics.OutcomeAccepted, metrics.OutcomeRefusedBudget, metrics.OutcomeRefusedOther, metrics.OutcomeError} {
		v := sample(mfs, metrics.EvictionsTotal, map[string]string{"outcome": o})
		t.Logf("%s{outcome=%q} %.0f", metrics.EvictionsTotal, o, v)
		ours += v
	}
	t.Logf("API server: %.0f eviction requests; status counts %+v", server, m.Status.Counts)
	if ours != server || server < 6 {
		t.Errorf("%s sums to %.0f, the API server counted %.0f eviction requests (at least 6 expected)", metrics.EvictionsTotal, ours, server)
	}
	if acc := sample(mfs, metrics.EvictionsTotal, map[string]string{"outcome": metrics.OutcomeAccepted}); acc != float64(m.Status.Counts.PodsEvicted) {
		t.Errorf("accepted %.0f, the status says %d pods evicted", acc, m.Status.Counts.PodsEvicted)
	}
	for state, n := range wantNodes {
		if got := sample(mfs, metrics.MaintenanceNodes, map[string]string{"phase": string(mntv1.PhaseSucceeded), "state": state}); got != n {
			t.Errorf("%s{state=%q} = %.0f, the status lists %.0f", metrics.MaintenanceNodes, state, got, n)
		}
	}
	if wantNodes[mntv1.NodeStateDrained] != 3 {
		t.Errorf("status nodes %v, want 3 Drained", wantNodes)
	}
	if h := mfs[metrics.NodeDrainDuration]; h == nil || histogramCount(h) != 3 {
		t.Errorf("%s observed %v nodes, want 3", metrics.NodeDrainDuration, h)
	}
	if sample(mfs, metrics.StatusWritesTotal, map[string]string{"result": metrics.WriteOK}) < 1 {
		t.Errorf("no status write counted")
	}
	for k, v := range values {
		if len(v) > metrics.LabelBound() {
			t.Errorf("label %s took %d values (%v), more than %d", k, len(v), v, metrics.LabelBound())
		}
	}
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// scrapeFamilies reads a metrics endpoint.
func scrapeFamilies(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// sample is the sum of family's samples whose labels include match (a counter's or a
// gauge's value).
func sample(mfs map[string]*dto.MetricFamily, family string, match map[string]string) float64 {
	var sum float64
	for _, m := range mfs[family].GetMetric() {
		ok := true
		for k, v := range match {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			ok = ok && found
		}
		if ok {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func histogramCount(mf *dto.MetricFamily) uint64 {
	var n uint64
	for _, m := range mf.GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// noteLabels adds the label values of our families in mfs to values.
func noteLabels(values map[string]map[string]bool, mfs map[string]*dto.MetricFamily) {
	for name, mf := range mfs {
		if len(name) < len(metrics.Namespace) || name[:len(metrics.Namespace)] != metrics.Namespace {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "le" {
					continue // a histogram's buckets, fixed by its definition
				}
				k := name + "/" + l.GetName()
				if values[k] == nil {
					values[k] = map[string]bool{}
				}
				values[k][l.GetValue()] = true
			}
		}
	}
}
