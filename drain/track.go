package drain

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// checkTerminatingLocked reports a pod stuck terminating and, past
// --skip-wait-for-delete-timeout, stops waiting for it.
func (r *run) checkTerminatingLocked(st *podState, cur *corev1.Pod) {
	skip := time.Duration(r.e.cfg.SkipWaitForDeleteTimeoutSeconds) * time.Second
	if skip > 0 && cur.DeletionTimestamp != nil && r.e.cfg.Clock.Since(cur.DeletionTimestamp.Time) >= skip {
		r.goneLocked(st)
		return
	}
	if !st.stuckSaid {
		st.stuckSaid = true
		r.e.emit(Event{Type: EventWarning, Node: st.node, Pod: st.key, Reason: "StuckTerminating",
			Message: fmt.Sprintf("pod %s is still terminating %s after its eviction", st.key, r.e.cfg.Clock.Since(st.acceptedAt).Round(time.Second))})
	}
	if skip > 0 {
		r.queue.AddAfter(st.key, skip)
	}
}

// terminationCheckDelay is when to look again at an evicted pod that is not gone yet:
// after its grace period plus a margin, or after --skip-wait-for-delete-timeout.
func (r *run) terminationCheckDelay(p *corev1.Pod) time.Duration {
	grace := 30 * time.Second
	if r.e.cfg.GracePeriodSeconds >= 0 {
		grace = time.Duration(r.e.cfg.GracePeriodSeconds) * time.Second
	} else if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	d := grace + 30*time.Second
	if skip := time.Duration(r.e.cfg.SkipWaitForDeleteTimeoutSeconds) * time.Second; skip > 0 {
		d = min(d, skip)
	}
	return d
}

// goneLocked records that a pod left the node, and finishes its node when it was the last.
func (r *run) goneLocked(st *podState) {
	if st.phase == finished {
		return
	}
	st.phase = finished
	for key := range st.parkedRV {
		delete(r.parked[key], st.key)
	}
	r.sum.PodsEvicted++
	r.e.emit(Event{Type: EventPodEvicted, Node: st.node, Pod: st.key, Attempt: st.attempts})
	ns := r.nodes[st.node]
	ns.remaining--
	if ns.remaining == len(ns.critical) {
		r.releaseCriticalLocked(ns)
	}
	if ns.remaining == 0 {
		r.finishNodeLocked(ns)
	}
}

// releaseCriticalLocked queues the node's critical pods once the ordinary ones are gone.
func (r *run) releaseCriticalLocked(ns *nodeState) {
	for _, st := range ns.critical {
		r.queue.Add(st.key)
	}
	ns.critical = nil
}

func (r *run) finishNodeLocked(ns *nodeState) {
	if ns.finished {
		return
	}
	ns.finished = true
	if err := SetDrainState(r.ctx, r.e.cfg.Client, ns.name, StateDrained); err != nil {
		r.e.cfg.Logger.Error(err, "record drained state", "node", ns.name)
	}
	r.sum.NodesDrained++
	r.e.emit(Event{Type: EventNodeDrained, Node: ns.name})
	r.recordEvent(ns.name, corev1.EventTypeNormal, "Drained", "kubectl-maintenance evicted every pod")
	if ns.onDone != nil {
		ns.onDone()
	}
	r.checkAllDoneLocked()
}

func (r *run) checkAllDoneLocked() {
	if len(r.nodes) < len(r.pf.plan.Nodes) {
		return
	}
	for _, n := range r.nodes {
		if !n.finished {
			return
		}
	}
	select {
	case <-r.done:
	default:
		close(r.done)
	}
}
