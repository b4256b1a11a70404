package drain

import (
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// How a node's drain ends when it cannot finish: an error of its own (failNodeLocked,
// recorded noderecord.StateFailed on the node), or a node someone took from the run (leave.go:
// nothing written, Reason ReasonReleased).

// failNodeLocked ends the node as failed, saying why. A node the run holds is first
// recorded noderecord.StateFailed with why (it stays cordoned), then said failed.
func (r *run) failNodeLocked(ns *nodeState, msg string) {
	if ns.finished || ns.failing {
		return
	}
	if ns.pol.held && r.ctx.Err() == nil {
		ns.failing = true
		r.later(func() {
			if err := r.hold.setState(r.ctx, ns, noderecord.StateFailed, msg); err != nil {
				r.e.cfg.Logger.V(2).Info("could not record the failed state", "node", ns.name, "err", err)
			}
			r.lock()
			defer r.unlock()
			ns.failing = false
			r.endFailedLocked(ns, msg, "")
		})
		return
	}
	r.endFailedLocked(ns, msg, "")
}

// endFailedLocked records the node failed and says so (reason: why it failed when that is
// not an error of its own, e.g. ReasonReleased).
func (r *run) endFailedLocked(ns *nodeState, msg, reason string) {
	if ns.finished {
		return
	}
	ns.finished, ns.failed = true, true
	r.sum.NodesFailed++
	// Evictions the API server accepted count as evictions: their pods are going, though
	// the run stops watching the node now.
	for _, st := range ns.byUID {
		if st.phase == terminating {
			st.phase = finished
			r.sum.PodsEvicted++
		}
	}
	r.e.emit(event.Event{Type: event.EventNodeFailed, Node: ns.name, Message: msg, Reason: reason})
	for _, st := range ns.byUID {
		r.budgets.unparkLocked(st)
	}
	close(ns.finishedCh)
	r.checkAllDoneLocked()
}
