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

// setFloors gives every drain of rep its floor, at the run's sustained rate: the most
// pods that became Ready in any floor.Window of any phase (the parallel drains saturate
// the ReplicaSet controller, the scheduler and the disruption controller: the best the
// control plane did in this run is what no tool could beat over a phase).
func setFloors(rep *Report) {
	rate := 0.0
	for i := range rep.Results {
		r := &rep.Results[i]
		if len(r.ready) == 0 {
			continue
		}
		secs := make([]float64, len(r.ready))
		for j, t := range r.ready {
			secs[j] = t.Sub(r.ready[0]).Seconds()
		}
		rate = max(rate, floor.SustainedRate(secs, floor.Window.Seconds()))
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Evicted == 0 || rate == 0 {
			continue
		}
		r.floorIn.Rate = rate
		fl := floor.Of(r.floorIn)
		r.Floor = &fl
	}
}

// FloorWindowSeconds is floor.Window in seconds, for the report.
var FloorWindowSeconds = floor.Window.Seconds()
