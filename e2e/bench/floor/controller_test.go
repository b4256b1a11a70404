package floor

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestByController(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		prev, next map[string]time.Time
		want       bool
	}{
		{name: "an entry added: the eviction handler's write", prev: nil, next: map[string]time.Time{"db-0": t0}, want: false},
		{name: "an entry dropped: the controller's", prev: map[string]time.Time{"db-0": t0}, next: nil, want: true},
		{name: "the same entries (counts recomputed): the controller's", prev: map[string]time.Time{"db-0": t0}, next: map[string]time.Time{"db-0": t0}, want: true},
		{name: "an entry's time moved on (a replacement evicted under the same name): the eviction handler's",
			prev: map[string]time.Time{"db-0": t0}, next: map[string]time.Time{"db-0": t0.Add(3 * time.Second)}, want: false},
		{name: "one dropped and one added in one write: the eviction handler's", prev: map[string]time.Time{"db-0": t0},
			next: map[string]time.Time{"db-1": t0}, want: false},
		{name: "nothing before, nothing after: the controller's", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ByController(tc.prev, tc.next); got != tc.want {
				t.Errorf("ByController = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheapest(t *testing.T) {
	tests := []struct {
		name  string
		costs []Cost
		w, s  float64
	}{
		{name: "the drain whose evictions cost the worker the fewest seconds each",
			costs: []Cost{{Writes: 1810, BusySec: 90.5, Evictions: 905}, {Writes: 1017, BusySec: 20, Evictions: 1017}, {Writes: 230, BusySec: 23, Evictions: 115}},
			w:     1, s: 1017.0 / 20},
		{name: "a small drain counts: its figure can only lower the bound",
			costs: []Cost{{Writes: 1810, BusySec: 90.5, Evictions: 905}, {Writes: 1, BusySec: 0.01, Evictions: 12}},
			w:     1.0 / 12, s: 100},
		{name: "a drain without evictions is left out", costs: []Cost{{Writes: 5, BusySec: 0.001}, {Writes: 40, BusySec: 2, Evictions: 20}}, w: 2, s: 20},
		{name: "the worker's time not read: no drain qualifies", costs: []Cost{{Writes: 200, Evictions: 200}}},
		{name: "the cheapest made no write", costs: []Cost{{BusySec: 1, Evictions: 200}, {Writes: 400, BusySec: 20, Evictions: 200}}},
		{name: "no drain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, s := Cheapest(tc.costs)
			if math.Abs(w-tc.w) > 1e-12 || math.Abs(s-tc.s) > 1e-12 {
				t.Errorf("Cheapest = %v writes per eviction, %v a second; want %v, %v", w, s, tc.w, tc.s)
			}
		})
	}
}

// The recorded reports' floors (docs/bench) compose from their recorded parts as Of does:
// the largest bound plus the profile's termination (1 s), the throughput bound the
// waiting pods over the rate. Reports from before the controller's bound have none.
func TestRecordedFloorsCompose(t *testing.T) {
	files, err := filepath.Glob("../../../docs/bench/*report.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded report under docs/bench (%v)", err)
	}
	files = append(files, "testdata/fleet30-report.json")
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Results []struct {
				Phase, Tool string
				Floor       *Floor `json:"floor"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, r := range rep.Results {
			f := r.Floor
			if f == nil {
				continue
			}
			checked++
			term := f.TermSec
			if term == 0 {
				term = 1 // the fleet profile's termination, not recorded before the controller's bound
			}
			if got := max(f.ThroughputSec, f.WavesSec, f.ControllerSec) + term; math.Abs(got-f.Sec) > 1e-6 {
				t.Errorf("%s %s/%s: parts compose to %.3f s, recorded floor %.3f s", filepath.Base(file), r.Phase, r.Tool, got, f.Sec)
			}
			if got := float64(f.Waiting) / f.Rate; math.Abs(got-f.ThroughputSec) > 1e-6 {
				t.Errorf("%s %s/%s: %d waiting / %.3f a second = %.3f s, recorded %.3f s", filepath.Base(file), r.Phase, r.Tool,
					f.Waiting, f.Rate, got, f.ThroughputSec)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no recorded floor under docs/bench")
	}
}

// The controller's bound on a recorded run: `BENCH_FLEET_NODES=30 go run ./hack/bench
// -profile fleet -phases F1,F4 -tools ours` on the project's machine, 2026-11-28 16:59 UTC
// (testdata/fleet30-report.json without its timelines, its log beside it). F1 evicted 32
// budget-covered pods with 1.3416 s of the controller's worker (0.0419 s each), F4 104 with
// 320 writes and 3.5596 s (0.0342 s each, the cheaper): W = 320/104, S = 320/3.5596, and
// N × W / S = N × 3.5596/104.
func TestRecordedControllerBound(t *testing.T) {
	b, err := os.ReadFile("testdata/fleet30-report.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Phase   string  `json:"phase"`
			Wall    float64 `json:"wall_seconds"`
			Writes  int     `json:"controller_status_writes"`
			Covered int     `json:"budget_covered_evictions"`
			BusySec float64 `json:"controller_busy_seconds"`
			Floor   *Floor  `json:"floor"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var costs []Cost
	for _, r := range rep.Results {
		costs = append(costs, Cost{Writes: r.Writes, BusySec: r.BusySec, Evictions: r.Covered})
	}
	const f4Busy = 3.5595693890000044
	w, s := Cheapest(costs)
	if math.Abs(w-320.0/104) > 1e-12 || math.Abs(s-320/f4Busy) > 1e-9 {
		t.Errorf("Cheapest = %v writes per eviction, %v a second; want 320/104 and 320/%v", w, s, f4Busy)
	}
	want := map[string]float64{"F1": 32 * f4Busy / 104, "F4": f4Busy}
	for _, r := range rep.Results {
		if r.Floor == nil {
			t.Fatalf("%s: no floor recorded", r.Phase)
		}
		got := float64(r.Floor.Covered) * w / s
		if math.Abs(got-want[r.Phase]) > 1e-9 || math.Abs(r.Floor.ControllerSec-want[r.Phase]) > 1e-9 {
			t.Errorf("%s: bound %.4f s computed, %.4f s recorded; want %.4f s", r.Phase, got, r.Floor.ControllerSec, want[r.Phase])
		}
		if r.Floor.ControllerSec > r.BusySec+1e-9 || r.Floor.Sec >= r.Wall {
			t.Errorf("%s: controller bound %.2f s (worker busy %.2f s), floor %.2f s, wall %.2f s: a floor above what the run did",
				r.Phase, r.Floor.ControllerSec, r.BusySec, r.Floor.Sec, r.Wall)
		}
	}
}
