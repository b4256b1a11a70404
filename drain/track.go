package drain

import (
	"fmt"
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
	r.book.unparkLocked(st)
	r.movedLocked(st.node)
	r.add(st.key)
	return true
}

// checkTerminatingLocked reports a pod stuck terminating and, past
// --skip-wait-for-delete-timeout, stops waiting for it. Under --on-blocked=force, a pod
// still terminating ForceAfter after its eviction (or after the run found it deleting)
// whose grace ends later than the forced grace is deleted again with it (force.go).
func (r *run) checkTerminatingLocked(st *podState, cur *corev1.Pod) {
	skip, dead := r.skipWaitLocked(st.node) // shorter on a dead node (deadnode.go)
	if skip > 0 && cur.DeletionTimestamp != nil && r.e.cfg.Clock.Since(cur.DeletionTimestamp.Time) >= skip {
		if dead {
			r.leftOnDeadLocked(st, cur)
		}
		r.goneLocked(st)
		return
	}
	if wait := r.reforceLocked(st, cur); wait > 0 {
		defer r.addAfter(st.key, wait) // its force deadline
	}
	if !st.stuckSaid {
		st.stuckSaid = true
		r.e.emit(r.diag.stuckLocked(st, cur, event.Event{Type: event.EventWarning, Node: st.node, Pod: st.key, Reason: "StuckTerminating",
			Message: fmt.Sprintf("pod %s is still terminating %s after %s", st.key, r.e.cfg.Clock.Since(st.acceptedAt).Round(time.Second), stuckSince(st))}))
	}
	if skip > 0 {
		wait := skip // from the deletionTimestamp, as the skip is measured
		if cur.DeletionTimestamp != nil {
			if w := skip - r.e.cfg.Clock.Since(cur.DeletionTimestamp.Time); w > 0 {
				wait = w
			}
		}
		r.addAfter(st.key, wait)
	}
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

// goneLocked records that a pod left the node (evidence that frees its reservation), and
// takes a last look at the node when it was the last.
func (r *run) goneLocked(st *podState) {
	if st.phase == finished {
		return
	}
	st.phase = finished
	r.book.unparkLocked(st)
	r.book.releaseLocked(st)
	r.watch.goneAt[st.key] = r.e.cfg.Clock.Now()
	r.pace.sawGoneLocked(st)
	r.movedLocked(st.node)
	r.e.emit(r.goneEventLocked(st)) // counted as evicted, or as forced (force.go)
	ns := r.nodes[st.node]
	ns.remaining--
	if ns.finished {
		return
	}
	r.releaseGroupsLocked(ns)
	if ns.remaining == 0 {
		if r.storeHasUnknownLocked(ns) {
			r.lookLocked(ns)
		} else {
			r.finishNodeLocked(ns)
		}
	}
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
