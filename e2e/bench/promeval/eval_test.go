package promeval

import (
	"os"
	"testing"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/metrics"
)

// scrapes reads testdata/start.txt and testdata/end.txt, a minute apart: written in the
// format a controller serves (the families of the reference and one of client-go's),
// during and at the end of a 100-node Maintenance, with figures easy to check by hand.
func scrapes(t *testing.T) []Scrape {
	t.Helper()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	var out []Scrape
	for i, f := range []string{"testdata/start.txt", "testdata/end.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(b, t0.Add(time.Duration(i)*time.Minute), "kubectl_maintenance_")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

func TestEval(t *testing.T) {
	ss := scrapes(t)
	tests := []struct {
		query, want string
		span        time.Duration
	}{
		// The reference's example queries (metrics.Catalog), at the end scrape.
		{`sum by (outcome) (rate(kubectl_maintenance_evictions_total[5m]))`,
			`{outcome="accepted"} 10; {outcome="error"} 0; {outcome="refused_budget"} 0.5; {outcome="refused_other"} 0`, time.Minute},
		{`sum by (reason) (kubectl_maintenance_pods_waiting) > 0`, `empty`, 0},
		// Increases in the minute: 40 in (64, 128], 40 in (128, 256]; rank 72 of 80 falls
		// 32/40 into (128, 256]: 128 + 128·0.8.
		{`histogram_quantile(0.9, sum by (le) (rate(kubectl_maintenance_node_drain_duration_seconds_bucket{result="drained"}[1h])))`,
			`{} 230.4`, time.Minute},
		// Absent from the first scrape: counted from 0 there.
		{`sum by (phase) (increase(kubectl_maintenance_run_duration_seconds_count[1d]))`, `{phase="Succeeded"} 1`, time.Minute},
		{`kubectl_maintenance_eviction_rate`, `{} 0.5`, 0},
		{`kubectl_maintenance_eviction_pace > 0`, `empty`, 0},
		{`max_over_time(kubectl_maintenance_disruption_controller_lag_seconds[15m])`, `{} 0.8`, time.Minute},
		{`kubectl_maintenance_runs`, `{} 0`, 0},
		{`sum(rate(kubectl_maintenance_status_writes_total[5m])) * 60`, `{} 13`, time.Minute},
		{`kubectl_maintenance_maintenances{phase=~"Failed|Blocked|TimedOut|DeadlinePassed"} > 0`, `empty`, 0},
		{`sum by (state) (kubectl_maintenance_maintenance_nodes{phase="Running"})`, `empty`, 0},
		// Other forms.
		{`sum by (state) (kubectl_maintenance_maintenance_nodes)`, `{state="Drained"} 100`, 0},
		{`kubectl_maintenance_maintenances{phase!="Succeeded"} == 0`,
			`{phase="Blocked"} 0; {phase="Failed"} 0; {phase="Running"} 0`, 0},
		{`sum(kubectl_maintenance_evictions_total{outcome="refused_budget"}) / sum(kubectl_maintenance_evictions_total)`, `{} 0.07407`, 0},
		{`sum by (outcome) (increase(kubectl_maintenance_evictions_total{outcome=~"acc.*"}[30s]))`, `empty`, 0},
		{`max_over_time(kubectl_maintenance_eviction_rate[30s])`, `{} 0.5`, 0},
		{`histogram_quantile(0.5, sum by (le) (kubectl_maintenance_node_drain_duration_seconds_bucket))`, `{} 115.2`, 0}, // rank 50 falls 40/50 into (64, 128]
		{`(kubectl_maintenance_runs + 1)`, ``, 0},
		{`2 * 3`, `6`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := Eval(tt.query, ss)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want || got.Span != tt.span {
				t.Errorf("got %s over %s, want %s over %s", got, got.Span, tt.want, tt.span)
			}
		})
	}
}

// TestEvalCatalog: every example query of the reference evaluates.
func TestEvalCatalog(t *testing.T) {
	ss := scrapes(t)
	for _, f := range metrics.Catalog() {
		if _, err := Eval(f.Query, ss); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

func TestRateCounterReset(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	var ss []Scrape
	for i, v := range []float64{5, 9, 2, 4} { // restarted between 9 and 2
		ss = append(ss, Scrape{At: t0.Add(time.Duration(i) * 10 * time.Second),
			Series: []Series{{Name: "c_total", Labels: map[string]string{}, Value: v}}})
	}
	tests := []struct{ query, want string }{
		{`increase(c_total[1m])`, `{} 8`},
		{`rate(c_total[1m])`, `{} 0.2667`},
		{`increase(c_total[15s])`, `{} 2`},
	}
	for _, tt := range tests {
		got, err := Eval(tt.query, ss)
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		if got.String() != tt.want {
			t.Errorf("%s = %s, want %s", tt.query, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{`a{b="c} 1`, `a{b=c} 1`, `a`, `a{b="c"} x`} {
		if _, err := Parse([]byte(text+"\n"), time.Time{}, ""); err == nil {
			t.Errorf("Parse(%q): no error", text)
		}
	}
}

// TestEvalRecordedScrape: the last scrape of a controller's whole endpoint, recorded at
// the end of a small F5 (2 nodes, 19 evictions): every line of it parses, and the
// queries read it as one scrape (a range function needs two: empty).
func TestEvalRecordedScrape(t *testing.T) {
	b, err := os.ReadFile("testdata/controller-f5.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(b, time.Date(2026, 11, 28, 7, 40, 0, 0, time.UTC), "")
	if err != nil {
		t.Fatal(err)
	}
	ss := []Scrape{s}
	tests := []struct{ query, want string }{
		{`sum by (outcome) (kubectl_maintenance_evictions_total)`, `{outcome="accepted"} 19`},
		{`sum by (outcome) (rate(kubectl_maintenance_evictions_total[5m]))`, `empty`},
		{`sum by (reason) (kubectl_maintenance_pods_waiting) > 0`, `empty`},
		// 1 node in (4, 8], 1 in (8, 16]: rank 1.8 falls 0.8 into (8, 16].
		{`histogram_quantile(0.9, sum by (le) (kubectl_maintenance_node_drain_duration_seconds_bucket{result="drained"}))`, `{} 14.4`},
		{`sum by (phase) (kubectl_maintenance_run_duration_seconds_count)`, `{phase="Succeeded"} 1`},
		{`kubectl_maintenance_eviction_rate`, `{} 1.9`},
		{`max_over_time(kubectl_maintenance_disruption_controller_lag_seconds[15m])`, `{} 0`},
		{`kubectl_maintenance_maintenances{phase=~"Failed|Blocked|TimedOut|DeadlinePassed"} > 0`, `empty`},
		{`kubectl_maintenance_maintenances > 0`, `{phase="Succeeded"} 1`},
		{`sum by (state) (kubectl_maintenance_maintenance_nodes)`, `{state="Drained"} 2`},
		{`sum(kubectl_maintenance_status_writes_total) * 60`, `{} 240`},
		{`sum(rest_client_requests_total{code="201"}) / sum(rest_client_requests_total)`, `{} 0.6786`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := Eval(tt.query, ss)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
