package maintenance

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// TerminatingBlocker is the message of a node's blocker whose pod's eviction was accepted
// and that is not gone yet. The status keeps it so that a run that resumes the object (a
// new leader) tells the evictions its last status counted from those sent after it.
const TerminatingBlocker = "evicted, still terminating"

// inherit completes the counts with what an earlier run of the object did on node n after
// its last status write (a leader killed between two writes), from the pods the resumed
// run finds there (steps): the pods gone since (n.PodsLeft was written with them) were
// evicted, and those of them the status did not show terminating were asked after the
// write; so were the pods found terminating, evicted by the Eviction API, that it did not
// show. Each took one request: a refusal in between is not known. The pods found
// terminating are kept as such (the run waits for them, and asks them nothing).
func (t *tracker) inherit(n *v1alpha1.NodeStatus, steps []pdb.Step) {
	shown := map[string]bool{} // terminating at the last write
	for _, b := range n.Blockers {
		if b.Message == TerminatingBlocker {
			shown[b.Pod] = true
		}
	}
	here := map[string]bool{}
	var found []string // terminating now, evicted by the Eviction API
	for _, s := range steps {
		if s.Pod == nil {
			continue
		}
		key := s.Pod.Namespace + "/" + s.Pod.Name
		here[key] = true
		if s.Pod.DeletionTimestamp != nil && evictedByAPI(s.Pod) {
			found = append(found, key)
		}
	}
	gone := n.PodsLeft - int32(len(steps))
	if gone <= 0 {
		gone = 0
	}
	shownGone := int32(0)
	for key := range shown {
		if !here[key] {
			shownGone++
		}
	}
	asked := max(0, gone-shownGone)
	for _, key := range found {
		if !shown[key] {
			asked++
		}
		t.setBlocker(n, v1alpha1.Blocker{Pod: key, Message: TerminatingBlocker})
	}
	if gone > 0 || asked > 0 {
		t.goneBefore += gone
		t.askedBefore += asked
		t.dirty = true
	}
}

// evictedByAPI reports whether p carries the DisruptionTarget condition the Eviction API
// sets on the pods it evicts.
func evictedByAPI(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" {
			return true
		}
	}
	return false
}
