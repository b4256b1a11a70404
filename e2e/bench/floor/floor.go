// Package floor computes a drain's floor: the fastest any tool could drain a phase of the
// bench on a cluster, from the control plane's throughput measured in the same run and
// the budgets' waves. Pure functions, no API call.
package floor

import (
	"math"
	"sort"
	"time"
)

// The floor: the fastest any tool could drain a phase on this cluster, from the control
// plane's own throughput measured in the same run (not a replay of the run's recovery
// times, which grow with the machine's load).
//
// Three bounds hold whatever the tool does, and they overlap in time, so the floor is the
// largest of them (their sum would not be a lower bound), plus the last pod's termination:
//   - throughput: every evicted pod of a workload is replaced by the ReplicaSet or
//     StatefulSet controller, bound by the scheduler and made Ready, and each budget's
//     allowance comes back only through that pipeline; the cluster's sustained rate R of
//     pods becoming Ready (the highest it reached over a window of Window anywhere in
//     the run, under the saturating load of the parallel drains) bounds the evictions of a
//     phase that needs the pipeline: N evictions take at least N/R;
//   - budgets: a budget b allowing k_b disruptions with M_b pods on the drained nodes
//     needs ⌈M_b/k_b⌉ waves, and each wave but the first waits for the one before it to be
//     replaced and Ready: at least (⌈M_b/k_b⌉ − 1) × the pods' readiness;
//   - the disruption controller: a budget allows its next disruption only once
//     kube-controller-manager's disruption controller has written the budget's status
//     again (the eviction's own write only takes allowance away), and that controller has
//     one worker that writes every budget's status through one rate-limited client. Each
//     budget-covered eviction costs it W status writes (about 2: one when the pod goes,
//     one when its replacement is Ready), so the N budget-covered evictions of a phase
//     take at least N × W / S, with S the status writes its worker sustains while never
//     idle (writes per second of the worker's busy time; Cheapest). Pods under no budget
//     cost it nothing.

// Window is the window the sustained rate is measured over.
const Window = 30 * time.Second

// BudgetLoad is one budget's share of a phase: its pods on the drained nodes and the
// disruptions it allows at the start.
type BudgetLoad struct {
	Pods    int
	Allowed int
}

// Input is what the floor of one phase is computed from.
type Input struct {
	// Evictions is the number of pods the phase evicts (reported; the bound counts only
	// the pods that must wait for a replacement).
	Evictions int
	// Rate is the control plane's sustained rate of pods becoming Ready, per second.
	Rate float64
	// Budgets are the phase's budgets (pods under none are bound by Rate only).
	Budgets map[string]BudgetLoad
	// Ready is the time from a replacement's creation to Ready, Term a pod's termination.
	Ready, Term time.Duration
	// WritesPerEviction is the disruption controller's status writes per budget-covered
	// eviction, WriteRate the writes per second its worker sustains while never idle,
	// both measured in the same run (Cheapest). Either 0 (not measured) leaves the
	// controller's bound out.
	WritesPerEviction, WriteRate float64
}

// Floor is a phase's floor and its parts.
type Floor struct {
	// Sec is the floor: max(ThroughputSec, WavesSec, ControllerSec) + TermSec.
	Sec float64 `json:"floor_seconds"`
	// ThroughputSec is the pods that wait for a replacement over Rate; WavesSec the
	// slowest budget's waves; Waiting those pods.
	ThroughputSec float64 `json:"throughput_seconds"`
	WavesSec      float64 `json:"waves_seconds"`
	Waiting       int     `json:"waiting_pods"`
	// ControllerSec is the disruption controller's bound: Covered (the budget-covered
	// pods of the phase) × WritesPerEviction / WriteRate.
	ControllerSec     float64 `json:"controller_seconds,omitempty"`
	Covered           int     `json:"budget_covered_pods,omitempty"`
	WritesPerEviction float64 `json:"controller_writes_per_eviction,omitempty"`
	WriteRate         float64 `json:"controller_writes_per_second,omitempty"`
	// TermSec is the last pod's termination.
	TermSec float64 `json:"termination_seconds,omitempty"`
	// Binding names the bound that sets the floor: "throughput", Controller or the
	// budget's name.
	Binding string `json:"binding"`
	// Rate is the sustained rate used, pods/s.
	Rate float64 `json:"rate_per_second"`
}

// Controller is the Binding of a floor set by the disruption controller's bound.
const Controller = "disruption controller"

// Of computes in's floor. A Rate of 0 (not measured) leaves the throughput bound out, a
// WriteRate or WritesPerEviction of 0 the controller's.
func Of(in Input) Floor {
	f := Floor{Binding: "throughput", Rate: in.Rate, TermSec: in.Term.Seconds()}
	names := make([]string, 0, len(in.Budgets))
	for name, b := range in.Budgets {
		if b.Allowed <= 0 || b.Pods <= 0 {
			continue // no room at the start: no tool drains it (the phase waits or gives up)
		}
		names = append(names, name)
		f.Waiting += max(0, b.Pods-b.Allowed)
		f.Covered += b.Pods
	}
	if in.Rate > 0 {
		f.ThroughputSec = float64(f.Waiting) / in.Rate
	}
	if in.WriteRate > 0 && in.WritesPerEviction > 0 {
		f.WritesPerEviction, f.WriteRate = in.WritesPerEviction, in.WriteRate
		f.ControllerSec = float64(f.Covered) * in.WritesPerEviction / in.WriteRate
	}
	sort.Strings(names)
	for _, name := range names {
		b := in.Budgets[name]
		waves := int(math.Ceil(float64(b.Pods) / float64(b.Allowed)))
		if s := float64(waves-1) * in.Ready.Seconds(); s > f.WavesSec {
			f.WavesSec = s
			if s > f.ThroughputSec {
				f.Binding = name
			}
		}
	}
	if f.ControllerSec > max(f.ThroughputSec, f.WavesSec) {
		f.Binding = Controller
	}
	f.Sec = max(f.ThroughputSec, f.WavesSec, f.ControllerSec) + f.TermSec
	return f
}

// SustainedRate is the highest number of times (seconds since any origin, in any order)
// in a window of width seconds, divided by width: the rate a process sustained at its
// best over that window. Fewer times than one window's worth give their count over the
// span they cover (at least width), so that a short burst is not taken for a rate.
func SustainedRate(times []float64, width float64) float64 {
	if len(times) == 0 || width <= 0 {
		return 0
	}
	ts := append([]float64(nil), times...)
	sort.Float64s(ts)
	if ts[len(ts)-1]-ts[0] < width {
		return float64(len(ts)) / width
	}
	best, j := 0, 0
	for i := range ts {
		for ts[i]-ts[j] >= width {
			j++
		}
		best = max(best, i-j+1)
	}
	return float64(best) / width
}
