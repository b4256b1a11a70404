package drain

import (
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Summary counts what a drain did.
type Summary struct {
	NodesDrained int
	NodesFailed  int
	NodesPending int
	// PendingNodes names the nodes not finished (NodesPending of them), started or not.
	PendingNodes  []string
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

// Add returns the sum of s and the summary b of a later batch of the same operation
// (a rolling drain, move or rollout): counts and elapsed time add up, and what is pending,
// skipped or not started is what either left.
func (s Summary) Add(b Summary) Summary {
	s.NodesDrained += b.NodesDrained
	s.NodesFailed += b.NodesFailed
	s.NodesPending += b.NodesPending
	s.PendingNodes = append(s.PendingNodes, b.PendingNodes...)
	s.PodsEvicted += b.PodsEvicted
	s.PodsPending += b.PodsPending
	s.Evictions += b.Evictions
	s.Refusals += b.Refusals
	s.Elapsed += b.Elapsed
	s.PendingBlocks = append(s.PendingBlocks, b.PendingBlocks...)
	s.Skipped = append(s.Skipped, b.Skipped...)
	s.NotStarted = append(s.NotStarted, b.NotStarted...)
	return s
}
