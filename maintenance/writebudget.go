package maintenance

import "time"

// writeBudget keeps a run's status writes of its object within a rate a platform team can
// count on: at most max in any minute (a sliding window), the start's write included.
// The final write is never refused, and max leaves room for it, so that no minute sees
// more than Minute/StatusInterval writes of the object (12 at 5 s).
type writeBudget struct {
	max int
	at  []time.Time // the writes of the last minute, oldest first
}

// newWriteBudget is the budget of a run whose start was written at start, with progress
// writes at most every interval.
func newWriteBudget(interval time.Duration, start time.Time) *writeBudget {
	b := &writeBudget{max: max(1, int(time.Minute/interval)-1)}
	b.record(start)
	return b
}

// allow reports whether a progress write at now keeps the minute within the budget.
func (b *writeBudget) allow(now time.Time) bool {
	b.trim(now)
	return len(b.at) < b.max
}

// record counts a write made at now.
func (b *writeBudget) record(now time.Time) {
	b.trim(now)
	b.at = append(b.at, now)
}

// trim forgets the writes a minute or more before now.
func (b *writeBudget) trim(now time.Time) {
	i := 0
	for i < len(b.at) && now.Sub(b.at[i]) >= time.Minute {
		i++
	}
	b.at = b.at[i:]
}
