package event

import "time"

// ETA is how long a drain is expected to take, estimated from its plan: the waves it
// simulates and, per budget, how long the budget's pods took to become Ready after their
// last start (read from the pods' status; no history is stored anywhere).
type ETA struct {
	// Expected is the sum, over the waves after the first, of the slowest readiness among
	// the budgets the wave waits on: wave k starts once wave k-1's replacements are Ready.
	Expected time.Duration
	// Max adds the termination grace period of the last wave's pods (the longest), for
	// pods that take all of it to stop.
	Max time.Duration
	// NoHistory names the budgets a wave waits on whose pods show no readiness (none
	// Ready): their waits are not counted, so Expected says nothing about them.
	NoHistory []string
	// Never counts the plan's pods that can never go as things stand (wave 0: a budget
	// that never allows a disruption, ...): with any, the drain does not end by itself, and
	// Expected covers only the others.
	Never int
}

// Known reports whether the estimate covers every wait of the plan.
func (e ETA) Known() bool { return len(e.NoHistory) == 0 }
