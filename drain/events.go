package drain

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Summary counts what a drain did.
type Summary struct {
	NodesDrained  int
	NodesFailed   int
	NodesPending  int
	PodsEvicted   int
	PodsPending   int
	Evictions     int // eviction requests sent
	Refusals      int // eviction requests refused (429, 500, 403)
	Elapsed       time.Duration
	PendingBlocks []event.Blocker
	// Skipped are the nodes given up under --on-blocked=skip (they stay cordoned).
	Skipped []BlockedNode
	// NotStarted are the nodes --not-after (or --on-blocked=fail) kept from starting.
	NotStarted []string
}
