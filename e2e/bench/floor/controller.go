package floor

import "time"

// Status is one status of a budget as a watch delivered it: when, and its
// status.disruptedPods (pod name → the time the API server recorded the eviction).
type Status struct {
	At        time.Time
	Disrupted map[string]time.Time
}

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

// ControllerWrites are the times of the statuses of seq (one budget's, in the order its
// watch delivered them) that the disruption controller wrote. The first status is the
// state the watch started from and is no write; every later one is one write, since a
// watch delivers every change of the object and a write that changes nothing makes no
// event.
func ControllerWrites(seq []Status) []time.Time {
	var out []time.Time
	for i := 1; i < len(seq); i++ {
		if ByController(seq[i-1].Disrupted, seq[i].Disrupted) {
			out = append(out, seq[i].At)
		}
	}
	return out
}

// WritesPerEviction is the fewest controller status writes per budget-covered eviction
// among runs (each a pair: writes, evictions) that evicted at least minEvictions such
// pods: the cheapest the controller was in the same run. The controller batches under
// load (one sync covers every change its queue merged), so the count is not a constant;
// the fewest keeps the bound below what any tool needed. 0 when no run qualifies.
func WritesPerEviction(runs [][2]int, minEvictions int) float64 {
	best, found := 0.0, false
	for _, r := range runs {
		writes, evictions := r[0], r[1]
		if evictions < max(1, minEvictions) {
			continue
		}
		if w := float64(writes) / float64(evictions); !found || w < best {
			best, found = w, true
		}
	}
	return best
}
