package drain

import (
	"context"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// The run's faces to its parts: each part is handed the run as a narrow interface of only
// what it needs (pacing's paceRun, nodeSteps' stepsRun, ...); these are the run's
// methods that serve them. Each is called with the lock held.

// budgetLocked is the budget named key as last seen (nil: unknown), for the node side's
// parts (roller, pacing).
func (r *run) budgetLocked(key string) *pdb.Budget { return r.budgets.budgetLocked(key) }

// parkLocked makes st wait until one of budgets changes, for the surger.
func (r *run) parkLocked(st *podState, budgets []*pdb.Budget, reason, message string) {
	r.budgets.parkLocked(st, budgets, reason, message)
}

// nodeLocked is the state of the node named name.
func (r *run) nodeLocked(name string) *nodeState { return r.nodes[name] }

// failedOfLocked is how many nodes failed, of how many the run planned.
func (r *run) failedOfLocked() (failed, planned int) {
	return r.sum.NodesFailed, len(r.pf.plan.Nodes)
}

// context is the run's context (nil before it runs).
func (r *run) context() context.Context { return r.ctx }

// plannedNodes are the names of the nodes the run planned, in its order.
func (r *run) plannedNodes() []string {
	nodes := make([]string, 0, len(r.pf.plan.Nodes))
	for _, n := range r.pf.plan.Nodes {
		nodes = append(nodes, n.Name)
	}
	return nodes
}

// nodesLocked are the run's nodes by name; the caller does not change the map.
func (r *run) nodesLocked() map[string]*nodeState { return r.nodes }

// stoppedLocked records b among the nodes the run stopped on.
func (r *run) stoppedLocked(b event.Blocker) { r.pol.stopped = append(r.pol.stopped, b) }

// justCordoned reports whether this run cordoned node a moment before now (faststart.go).
func (r *run) justCordoned(node string, now time.Time) bool { return r.fast.justCordoned(node, now) }

// parkedOnLocked is how many of the run's pods wait on the budget named key.
func (r *run) parkedOnLocked(key string) int { return len(r.budgets.parkedLocked(key)) }

// rollingLocked keeps a rolling drain's wake-ups, for --on-blocked=fail's stop to halt it.
func (r *run) rollingLocked(w *rolling) { r.roll = w }

// startNode runs the caller's Before step for an admitted node, then cordons it; false
// when either failed (the node is failed) or ctx ended. Called without the lock: both
// call the API.
func (r *run) startNode(ctx context.Context, name string) bool {
	return r.steps.before(ctx, name) && r.cordon(ctx, name)
}

// The run's face to its budgets part (budgetsHost, budgets_part.go), besides the above.

// podsLocked are the run's pods by key; the caller does not change the map.
func (r *run) podsLocked() map[string]*podState { return r.pods }

// policyLocked is the run's policy state.
func (r *run) policyLocked() *runPolicy { return &r.pol }

// backoffLocked queues a pod after its rate limiter's backoff, once the lock is released.
func (r *run) backoffLocked(key string) {
	r.later(func() { r.queue.AddAfter(key, r.e.cfg.RateLimiter.When(key)) })
}

// podIndexer is the shared pod informer's store (nil: none).
func (r *run) podIndexer() cache.Indexer { return r.shared.indexer() }

// waitCompletedWhy and doNotDisruptWhy are the engine's (rules.go).
func (r *run) waitCompletedWhy(p *corev1.Pod, node string) (cause, remedy string) {
	return r.e.waitCompletedWhy(p, node)
}

func (r *run) doNotDisruptWhy(p *corev1.Pod) (cause, remedy string) { return r.e.doNotDisruptWhy(p) }

// pdbChanged is the PDB informer's handler. The namespace's selector index is rebuilt
// once (on its next use); reservations the status now shows (status.disruptedPods lists
// the pod) are released; as many waiting pods as the budget has room for are woken.
func (r *run) pdbChanged(obj any) {
	p, ok := informerObject(obj).(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	if h := r.e.hooks.pdbHandled; h != nil {
		defer h(key, p.ResourceVersion) // after the unlock and its effects
	}
	r.lock()
	defer r.unlock()
	r.budgets.changedLocked(p)
	moved := r.budgetMovedLocked(key, p)
	r.budgets.statusSeenLocked(p, moved)
	r.pace.budgetSeenLocked(p)
	r.budgets.takenInLocked(p)
}

// blockersLocked lists the pods not gone yet, with what they wait on.
func (r *run) blockersLocked() []event.Blocker {
	var out []event.Blocker
	for _, st := range r.pods {
		if st.phase == finished {
			continue
		}
		msg := st.blockMsg
		switch {
		case st.phase == terminating:
			msg = "evicted, still terminating"
		case msg == "":
			msg = "not evicted yet"
		}
		keys := append([]string(nil), st.parkedOn...)
		sort.Strings(keys)
		out = append(out, event.Blocker{Node: st.node, Pod: st.key, PDB: strings.Join(keys, ","), Message: msg})
	}
	out = r.budgets.explainBlockersLocked(out)
	sort.Slice(out, func(i, j int) bool { return out[i].Node+out[i].Pod < out[j].Node+out[j].Pod })
	said := map[string]bool{} // causes said in a message already: once per budget is enough
	for i, b := range out {
		if st := r.pods[b.Pod]; st != nil && st.node == b.Node {
			out[i] = r.budgets.blockerLocked(st, b, said) // as the wait line says it now
		}
	}
	return out
}
