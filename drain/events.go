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
	PendingNodes []string
	PodsEvicted  int
	// PodsPending counts the pods left on the nodes not drained: waiting when the run
	// ended (a node failed, timed out, interrupted) or on a node given up.
	PodsPending int
	// LeftOn is PodsPending by node (nil when none is left).
	LeftOn        map[string]int
	Evictions     int // eviction requests sent
	Refusals      int // eviction requests refused (429, 500, 403)
	Elapsed       time.Duration
	PendingBlocks []event.Blocker
	// Skipped are the nodes given up under --on-blocked=skip (they stay cordoned).
	Skipped []BlockedNode
	// NotStarted are the nodes --not-after (or --on-blocked=fail) kept from starting.
	NotStarted []string

	// Dead nodes and force (planned maintenance).
	//
	// PodsForced counts the pods --on-blocked=force deleted (not in PodsEvicted); Forced
	// names them with their budgets.
	PodsForced int
	Forced     []ForcedPod
	// PodsLeftOnDeadNodes counts the pods of dead nodes whose deletion started but that
	// the run stopped waiting for (DeadNodeDeleteWait): left to the node's return or
	// removal.
	PodsLeftOnDeadNodes int
	// NodesGone names the nodes deleted while they drained: their drains ended (neither
	// drained nor failed), their pods went with them.
	NodesGone []string
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
	if len(b.LeftOn) > 0 {
		left := make(map[string]int, len(s.LeftOn)+len(b.LeftOn)) // s's map is the caller's
		for _, m := range []map[string]int{s.LeftOn, b.LeftOn} {
			for n, c := range m {
				left[n] += c
			}
		}
		s.LeftOn = left
	}
	s.Evictions += b.Evictions
	s.Refusals += b.Refusals
	s.Elapsed += b.Elapsed
	s.PendingBlocks = append(s.PendingBlocks, b.PendingBlocks...)
	s.Skipped = append(s.Skipped, b.Skipped...)
	s.NotStarted = append(s.NotStarted, b.NotStarted...)
	s.PodsForced += b.PodsForced
	s.Forced = append(s.Forced, b.Forced...)
	s.PodsLeftOnDeadNodes += b.PodsLeftOnDeadNodes
	s.NodesGone = append(s.NodesGone, b.NodesGone...)
	return s
}

// ForcedPod is a pod --on-blocked=force deleted.
type ForcedPod struct {
	Node string `json:"node"`
	Pod  string `json:"pod"`
	// PDB names the budget(s) that blocked it ("namespace/name", comma-separated).
	PDB string `json:"pdb"`
	// Budget is the first budget's status numbers when the pod was deleted.
	Budget event.BudgetNumbers `json:"budget"`
	// BlockedFor is how long the node had been blocked.
	BlockedFor time.Duration `json:"-"`
}
