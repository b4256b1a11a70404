package bench

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/e2e/bench/floor"
)

// floorInput is a phase's input to its floor: the pods evicted, each budget's pods on the
// drained nodes (onDrained, by app: the fleet's budgets are named after their apps) and
// its allowance at the start, the pods' readiness and termination.
func (f *fleet) floorInput(evicted int, onDrained map[string]int, allowed map[string]int32) floor.Input {
	in := floor.Input{Evictions: evicted, Budgets: map[string]floor.BudgetLoad{}, Ready: f.p.ReadyDelay, Term: f.p.DeleteDelay}
	for app, n := range onDrained {
		if k, ok := allowed[app]; ok {
			in.Budgets[app] = floor.BudgetLoad{Pods: n, Allowed: int(k)}
		}
	}
	return in
}

// readyTimes are the times pods became Ready while the observer watched.
func (o *observer) readyTimes() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Time(nil), o.ready...)
}

// setFloors gives every drain of rep its floor, at the run's sustained rate of pods
// becoming Ready: the most in any floor.Window of any phase (the parallel drains saturate
// the ReplicaSet controller and the scheduler: the best the control plane did in this
// run is what no tool could beat over a phase), and with the disruption controller's
// writes per budget-covered eviction and writes per second of its worker's time from the
// drain of the run whose evictions cost that worker the least (floor.Cheapest).
func setFloors(rep *Report) {
	rate := 0.0
	var costs []floor.Cost
	for i := range rep.Results {
		r := &rep.Results[i]
		rate = max(rate, sustained(r.ready))
		if r.Evicted > 0 {
			costs = append(costs, floor.Cost{Writes: r.ControllerWrites, BusySec: r.ControllerBusySec, Evictions: r.CoveredEvicted})
		}
	}
	w, writeRate := floor.Cheapest(costs)
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Evicted == 0 || rate == 0 {
			continue
		}
		r.floorIn.Rate = rate
		r.floorIn.WriteRate, r.floorIn.WritesPerEviction = writeRate, w
		fl := floor.Of(r.floorIn)
		r.Floor = &fl
	}
}

// sustained is floor.SustainedRate of times over floor.Window.
func sustained(times []time.Time) float64 {
	if len(times) == 0 {
		return 0
	}
	secs := make([]float64, len(times))
	for j, t := range times {
		secs[j] = t.Sub(times[0]).Seconds()
	}
	return floor.SustainedRate(secs, floor.Window.Seconds())
}

// FloorWindowSeconds is floor.Window in seconds, for the report.
var FloorWindowSeconds = floor.Window.Seconds()
