package floor

import (
	"math"
	"testing"
	"time"
)

// The "recorded" cases take their evictions and walls from the 1,000-node fleet report of
// 2026-11-27 (docs/bench/fleet-report.json until the run of 2026-11-28 replaced it: F1
// ours 1,001 evictions in 137.3 s, F4 ours 4,217 in 478.5 s);
// their budgets' pod counts are illustrative, not recorded.
func TestOf(t *testing.T) {
	tests := map[string]struct {
		in          Input
		wantSec     float64
		wantBinding string
	}{
		"recorded F4's rate (4,217 in 478.5 s), 3,000 pods under budgets of 10 beyond their first": {
			in: Input{Evictions: 4217, Rate: 4217 / 478.470124378, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"a": {Pods: 1500, Allowed: 10}, "b": {Pods: 1520, Allowed: 10}, "c": {Pods: 5, Allowed: 1}}},
			wantSec: float64(1490+1510+4)/(4217/478.470124378) + 1, wantBinding: "throughput",
		},
		"pods under no budget and each budget's first k wait for nothing": {
			in: Input{Evictions: 1001, Rate: 4217 / 478.470124378, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"a": {Pods: 10, Allowed: 10}, "b": {Pods: 2, Allowed: 1}}},
			wantSec: 2 + 1, wantBinding: "b",
		},
		"a one-at-a-time budget over 40 pods binds": {
			in: Input{Evictions: 100, Rate: 50, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"ns/one": {Pods: 40, Allowed: 1}, "ns/ten": {Pods: 40, Allowed: 10}}},
			wantSec: 39*2 + 1, wantBinding: "ns/one",
		},
		"the slower of the two bounds, not their sum": {
			in: Input{Evictions: 100, Rate: 2, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"ns/one": {Pods: 11, Allowed: 1}, "ns/ten": {Pods: 89, Allowed: 10}}},
			wantSec: float64(10+79)/2 + 1, wantBinding: "throughput", // waves: 10 × 2 s = 20 s
		},
		"a budget that allows nothing is no bound (no tool drains it)": {
			in: Input{Evictions: 10, Rate: 10, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"ns/never": {Pods: 10, Allowed: 0}}},
			wantSec: 1, wantBinding: "throughput",
		},
		// The 1,000-node run of 2026-11-28 07:42 (docs/bench/fleet-report.json), F1 ours:
		// rate 34.2333 pods/s, 379 pods waiting, the slowest budget's waves 7 × 2 s. Its
		// budgets are not in the report: app-212 (8 pods one at a time, 7 waves) and the
		// rest as one budget of 897 pods allowing 525 give the same waiting pods and waves.
		// The write figures are illustrative, not recorded (the run did not count them).
		"recorded F1 without the controller's figures keeps its floor of 15 s": {
			in: Input{Evictions: 905, Rate: 34.233333333333334, Ready: 2 * time.Second, Term: time.Second,
				Budgets: map[string]BudgetLoad{"app-212": {Pods: 8, Allowed: 1}, "rest": {Pods: 905 - 8, Allowed: 905 - 8 - 372}}},
			wantSec: 15, wantBinding: "app-212",
		},
		"recorded F1 at the default 20 QPS: 905 × 2 writes at 20 a second bind (90.5 s)": {
			in: Input{Evictions: 905, Rate: 34.233333333333334, Ready: 2 * time.Second, Term: time.Second,
				Budgets:           map[string]BudgetLoad{"app-212": {Pods: 8, Allowed: 1}, "rest": {Pods: 905 - 8, Allowed: 905 - 8 - 372}},
				WritesPerEviction: 2, WriteRate: 20},
			wantSec: 905*2.0/20 + 1, wantBinding: Controller,
		},
		"the controller's bound counts budget-covered pods only, and never a budget that allows nothing": {
			in: Input{Evictions: 100, Rate: 1000, Ready: 2 * time.Second, Term: time.Second, WritesPerEviction: 1.5, WriteRate: 10,
				Budgets: map[string]BudgetLoad{"ns/a": {Pods: 30, Allowed: 10}, "ns/never": {Pods: 40, Allowed: 0}}},
			wantSec: 30*1.5/10 + 1, wantBinding: Controller, // waves 2 × 2 s = 4 s; 20 waiting / 1000 = 0.02 s
		},
		"a controller faster than the budgets' waves is no bound": {
			in: Input{Evictions: 40, Rate: 50, Ready: 2 * time.Second, Term: time.Second, WritesPerEviction: 2, WriteRate: 100,
				Budgets: map[string]BudgetLoad{"ns/one": {Pods: 40, Allowed: 1}}},
			wantSec: 39*2 + 1, wantBinding: "ns/one", // controller: 40 × 2 / 100 = 0.8 s
		},
		"writes per eviction not measured: no controller bound": {
			in: Input{Evictions: 40, Rate: 50, Term: time.Second, WriteRate: 0.001,
				Budgets: map[string]BudgetLoad{"ns/ten": {Pods: 40, Allowed: 10}}},
			wantSec: 30.0/50 + 1, wantBinding: "throughput",
		},
		"no rate measured: the budgets alone": {
			in:      Input{Evictions: 10, Ready: 3 * time.Second, Budgets: map[string]BudgetLoad{"ns/a": {Pods: 3, Allowed: 1}}},
			wantSec: 6, wantBinding: "ns/a",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Of(tc.in)
			if math.Abs(got.Sec-tc.wantSec) > 1e-9 || got.Binding != tc.wantBinding {
				t.Errorf("Of = %+v, want %.3f s bound by %s", got, tc.wantSec, tc.wantBinding)
			}
			if parts := max(got.ThroughputSec, got.WavesSec, got.ControllerSec) + got.TermSec; math.Abs(parts-got.Sec) > 1e-9 {
				t.Errorf("Of = %+v: its parts compose to %.3f s, not its floor", got, parts)
			}
		})
	}
}

func TestSustainedRate(t *testing.T) {
	// Ten a second for 3 s, a pause, then 40 within one second.
	var burst []float64
	for i := range 30 {
		burst = append(burst, float64(i)/10)
	}
	for i := range 40 {
		burst = append(burst, 10+float64(i)/40)
	}
	tests := map[string]struct {
		times []float64
		width float64
		want  float64
	}{
		"the densest second":                                {times: burst, width: 1, want: 40},
		"a 5 s window holds the 40 of the burst":            {times: burst, width: 5, want: 40.0 / 5},
		"a 15 s window holds everything":                    {times: burst, width: 15, want: 70.0 / 15},
		"a burst shorter than the window is spread over it": {times: []float64{1, 1.1, 1.2}, width: 30, want: 3.0 / 30},
		"out of order times are sorted":                     {times: []float64{5, 1, 3, 2, 4, 100}, width: 2, want: 1},
		"nothing":                                           {width: 30, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := SustainedRate(tc.times, tc.width); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("SustainedRate = %v, want %v", got, tc.want)
			}
		})
	}
}
