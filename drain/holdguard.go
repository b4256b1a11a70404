package drain

import (
	"time"
)

// The hold guard (issue 44: never provoke a disruption controller hold). The controller
// drops an eviction's entry from its budget's status.disruptedPods only when it next syncs
// the budget and sees the pod deleting; if a replacement has taken the name by then (a
// StatefulSet recreates the pod within about a second of it going), it keeps the entry
// for two minutes, counting the replacement as disrupted. So an eviction of a pod that
// keeps its name is sent only while the controller is caught up, and nothing more is asked
// of the controller until it has cleared that entry:
//   - a pod that keeps its name waits while an entry of this run's is older than the
//     margin and not cleared (the controller is behind);
//   - while an entry of such a pod, younger than holdGate, is not cleared, every other
//     eviction that takes a budget's allowance waits: each would queue a sync of its
//     budget ahead of the one that clears the entry. Past holdGate the replacement has
//     likely taken the name already, and waiting longer saves nothing.
//
// A pod it holds back asks again after holdRetry. It is not woken when the entry clears:
// a wake would find it again, once evicted, when its own retry comes (as a pod stuck
// terminating). Config.PaceMargin < 0 turns it off, with the pace.

const (
	// holdGate bounds how long the others wait for the entry of a pod that keeps its name.
	holdGate = 3 * time.Second
	// holdRetry is how soon a pod held back asks again.
	holdRetry = 250 * time.Millisecond
)

// turn is the pacer's answer for an eviction that takes a budget's allowance: the hold
// guard first, then the pace (delay).
func (p *pacer) turn(pod string, keepsName bool, now time.Time) time.Duration {
	if p.off {
		return p.delay(pod, keepsName, now)
	}
	if keepsName && p.uncleared(now, false) {
		return p.gate(pod, keepsName, now)
	}
	if p.uncleared(now, true) {
		return p.gate(pod, keepsName, now)
	}
	return p.delay(pod, keepsName, now)
}

// sending records the eviction of a pod that keeps its name as it is sent: the others
// wait from now, decided while it is on its way, until it is answered.
func (p *pacer) sending(pod string, keepsName bool, now time.Time) {
	if p.off || !keepsName {
		return
	}
	if p.inFlight == nil {
		p.inFlight = map[string]time.Time{}
	}
	p.inFlight[pod] = now
}

// answered ends pod's request: accepted, it is followed from now (acceptedEviction).
func (p *pacer) answered(pod string) { delete(p.inFlight, pod) }

// uncleared reports an entry of this run's that the controller has not cleared: with
// names, one of a pod that keeps its name being sent or younger than holdGate; else one
// seen in its budget's status older than the margin (and younger than paceWindow: an
// older one is a hold or a stuck pod, said elsewhere).
func (p *pacer) uncleared(now time.Time, names bool) bool {
	if names {
		for _, at := range p.inFlight {
			if now.Sub(at) < holdGate {
				return true
			}
		}
	}
	for _, f := range p.followed {
		age := now.Sub(f.at)
		switch {
		case names && f.keepsName && age < holdGate:
			return true // listed or about to be: the API server wrote it before it answered
		case !names && f.listed && age > p.margin && age < paceWindow:
			return true
		}
	}
	return false
}

// gate holds pod back for holdRetry.
func (p *pacer) gate(pod string, keepsName bool, now time.Time) time.Duration {
	p.turns.drop(pod)
	if keepsName {
		p.heldAt = now // pacing does not stop while such pods are held back (pace.go)
	}
	return holdRetry
}
