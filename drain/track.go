package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// alreadyDeletingLocked makes a pod whose deletion someone else started (cur has a
// deletionTimestamp) one the run waits for, never evicts: it is checked at once, and
// --skip-wait-for-delete-timeout lets it go the moment it passes. It reports whether it
// did.
func (r *run) alreadyDeletingLocked(st *podState, cur *corev1.Pod) bool {
	if st.phase != waiting || cur.DeletionTimestamp == nil {
		return false
	}
	// Going already: evicted by an earlier run of the same nodes (a leader that handed
	// over after its request) or deleted by someone else. It is never asked again: the
	// run waits for it to be gone, as for a pod it evicted itself.
	st.phase, st.acceptedAt = terminating, r.e.cfg.Clock.Now()
	r.budgets.unparkLocked(st)
	r.movedLocked(st.node)
	r.add(st.key)
	return true
}

// terminationCheckDelay is when to look again at an evicted pod that is not gone yet:
// after its grace period plus a margin, or once --skip-wait-for-delete-timeout (or a dead
// node's wait) has passed since its deletionTimestamp (the end of its grace period).
func (r *run) terminationCheckDelay(p *corev1.Pod) time.Duration {
	grace := 30 * time.Second
	if g := r.graceLocked(p); g >= 0 {
		grace = time.Duration(g) * time.Second
	} else if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	d := grace + 30*time.Second
	if skip, _ := r.skipWaitLocked(p.Spec.NodeName); skip > 0 {
		d = min(d, grace+skip)
	}
	return d
}

// storeHasUnknownLocked reports a live pod on the node the run has not judged yet.
func (r *run) storeHasUnknownLocked(ns *nodeState) bool {
	if ns.store == nil {
		return false
	}
	for _, obj := range ns.store.List() {
		if p := obj.(*corev1.Pod); r.unknownLocked(ns, p) {
			return true
		}
	}
	return false
}

// stuckSince names what a terminating pod's wait counts from: its eviction, or, for a pod
// whose deletion someone else started (never evicted), when the drain found it deleting.
func stuckSince(st *podState) string {
	if st.attempts == 0 {
		return "the drain found it deleting (it is waited for, not evicted)"
	}
	return "its eviction"
}

// goneEventLocked counts a pod that left its node and returns the event that says so: a
// forced pod counts in PodsForced (counted when deleted), an evicted one in PodsEvicted.
func (r *run) goneEventLocked(st *podState) event.Event {
	ev := event.Event{Type: event.EventPodEvicted, Node: st.node, Pod: st.key, Attempt: st.attempts}
	// forcing: its DELETE is in flight and the informer saw the pod go before the answer
	// came (forceAnsweredLocked counts it then): it is a forced pod, not an evicted one.
	if r.planned.forced[st.key] || r.planned.forcing[st.key] {
		ev.Reason = event.ReasonForced
		return ev
	}
	r.sum.PodsEvicted++
	return ev
}
