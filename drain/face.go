package drain

import "github.com/kubectl-maintenance/kubectl-maintenance/pdb"

// The run's faces to its parts: each part is handed the run as a narrow interface of only
// what it needs (pacing's paceRun, nodeSteps' stepsRun, ...); these are the run's
// methods that serve them. Each is called with the lock held.

// budgetLocked is the budget named key as last seen (nil: unknown).
func (r *run) budgetLocked(key string) *pdb.Budget { return r.book.budgetLocked(key) }

// nodeLocked is the state of the node named name.
func (r *run) nodeLocked(name string) *nodeState { return r.nodes[name] }

// failedOfLocked is how many nodes failed, of how many the run planned.
func (r *run) failedOfLocked() (failed, planned int) {
	return r.sum.NodesFailed, len(r.pf.plan.Nodes)
}
