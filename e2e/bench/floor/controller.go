package floor

import "time"

// ByController reports whether next, the status written right after prev on the same
// budget, is the disruption controller's write. Two writers change a budget's status: the
// API server's eviction handler, which takes one allowance and adds the evicted pod's
// entry (or moves an existing entry's time) before it deletes the pod, and the disruption
// controller, which recomputes the counts and only keeps or drops entries. So a write that
// adds or renews no entry is the controller's. (A third writer that removes entries, such
// as the bench's settle between phases, would be counted as the controller: none writes
// during a phase.)
func ByController(prev, next map[string]time.Time) bool {
	for name, t := range next {
		if old, ok := prev[name]; !ok || t.After(old) {
			return false
		}
	}
	return true
}

// Cost is what one drain's budget-covered evictions cost the disruption controller:
// its status writes during the drain, the worker's busy seconds (kube-controller-manager's
// workqueue_work_duration_seconds for the queue "disruption", the write through its
// rate-limited client included), and the evictions.
type Cost struct {
	Writes    int
	BusySec   float64
	Evictions int
}

// Cheapest returns the writes per eviction W and the writes per second of the worker's
// time S of the drain (with at least one eviction and the worker's time read) whose
// evictions cost the worker the fewest seconds each (W / S = busy seconds per eviction).
// S is the rate the controller sustains while it is never idle (one worker: a sync at a
// time), W what each eviction cost it; the controller merges the changes its queue holds
// into one sync under load, so W is no constant. With the cheapest drain, N × W / S is at
// most any drain's own busy time for its N evictions, which one worker cannot spend in
// less wall time; a small drain's noisy figure can only lower the bound. Zeros when no
// drain qualifies or the cheapest made no write.
func Cheapest(costs []Cost) (w, s float64) {
	best, found := Cost{}, false
	for _, c := range costs {
		if c.Evictions < 1 || c.BusySec <= 0 {
			continue
		}
		if !found || c.BusySec/float64(c.Evictions) < best.BusySec/float64(best.Evictions) {
			best, found = c, true
		}
	}
	if !found || best.Writes == 0 {
		return 0, 0
	}
	return float64(best.Writes) / float64(best.Evictions), float64(best.Writes) / best.BusySec
}
