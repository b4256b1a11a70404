package drain

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

func (r *run) processNext() bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	r.handle(key)
	if h := r.e.hooks.handled; h != nil {
		h(key)
	}
	return true
}

// handle decides under the lock, evicts outside it, and records the answer under it.
func (r *run) handle(key string) {
	if r.ctx.Err() != nil {
		return // interrupted: start nothing new
	}
	r.lock()
	ev := r.decideLocked(key)
	grace := 0
	if ev != nil {
		grace = r.graceLocked(ev.pod) // short on a dead node (deadnode.go)
	}
	r.unlock()
	if ev == nil {
		return
	}
	ev.sentAt = r.e.cfg.Clock.Now()
	ans := classify(r.e.evictGrace(r.ctx, ev.pod, false, grace))
	r.lock()
	r.recordLocked(ev, ans)
	r.unlock()
}

// decideLocked evicts the pod if its budget has room (reserving it), parks it on the
// budget otherwise, or checks on it while it terminates.
func (r *run) decideLocked(key string) *eviction {
	st := r.pods[key]
	if st == nil || st.phase == finished || st.parkedOn != nil || r.nodes[st.node].finished || r.planned.forcing[key] {
		return nil
	}
	cur, exists := r.currentLocked(st)
	if !exists {
		r.goneLocked(st)
		return nil
	}
	if st.phase == terminating {
		r.checkTerminatingLocked(st, cur)
		return nil
	}
	if r.alreadyDeletingLocked(st, cur) {
		return nil // someone else deleted it meanwhile: waited for, not evicted
	}
	budgets := r.budgets.budgetsForLocked(cur)
	d := pdb.Decide(cur, budgets)
	if b := d.Budget(); b != nil && (d.Consumes() || d.Verdict == pdb.Exhausted) {
		if why := r.budgets.staleLocked(b.Key()); why != "" {
			r.budgets.parkLocked(st, budgets, string(pdb.Stale), why)
			return nil
		}
	}
	if b := d.Budget(); b != nil && d.Consumes() && r.budgets.roomLocked(b) <= 0 {
		r.budgets.parkLocked(st, budgets, string(pdb.Exhausted), r.budgets.numbersLocked(b))
		return nil
	}
	switch d.Verdict {
	case pdb.Exhausted, pdb.Stale, pdb.Never, pdb.Negative:
		if d.Verdict == pdb.Never && r.surges.surgeLocked(st, cur, d.Budget()) {
			return nil // --surge moves it (surge.go)
		}
		// The server would refuse; wait for the budget's status to change instead.
		msg := d.Reason
		if b := d.Budget(); b != nil && d.Verdict == pdb.Exhausted {
			msg = r.budgets.numbersLocked(b)
		}
		r.budgets.parkLocked(st, budgets, string(d.Verdict), msg)
		return nil
	case pdb.Multiple:
		if st.blockPDB == pdb.JoinKeys(budgets) {
			// Already refused with 500 under these budgets and none changed since.
			r.budgets.parkLocked(st, budgets, string(d.Verdict), d.Reason)
			return nil
		}
	}
	if wait := st.notBefore.Sub(r.e.cfg.Clock.Now()); wait > 0 {
		r.addAfter(key, wait)
		return nil
	}
	if wait := r.pace.turnLocked(st, cur, d); wait > 0 { // pace.go
		r.addAfter(key, wait)
		return nil
	}
	// Reserve the allowance before the call, so that concurrent workers, and the other
	// runs of the process, never ask a budget for more than its status says it has. Only
	// evidence releases it.
	if b := d.Budget(); b != nil && d.Consumes() && !r.budgets.tryReserveLocked(b, st) {
		r.budgets.parkLocked(st, budgets, string(pdb.Exhausted), r.budgets.numbersLocked(b)) // another run took the room
		return nil
	}
	st.attempts++
	r.pace.sendingLocked(st, cur) // holdguard.go
	var lag time.Duration
	if !st.wokenAt.IsZero() {
		lag, st.wokenAt = r.e.cfg.Clock.Since(st.wokenAt), time.Time{}
	}
	r.sum.Evictions++
	// Known before the request: its replacement may come back before the answer does.
	if ref, tol := metav1.GetControllerOf(cur), cordonToleration(cur); ref != nil && tol != "" && r.nodes[st.node].tolerating != nil {
		r.nodes[st.node].tolerating[ref.UID] = tol
	}
	r.e.emit(event.Event{Type: event.EventEvictionStarted, Node: st.node, Pod: key, Attempt: st.attempts, Wave: st.wave, Lag: lag})
	return &eviction{st: st, pod: cur, attempt: st.attempts, budgets: budgets, rvBefore: resourceVersions(budgets), budget: st.reservedOn}
}

// recordLocked records the server's answer to an eviction.
func (r *run) recordLocked(ev *eviction, ans answer) {
	st, key, now := ev.st, ev.st.key, r.e.cfg.Clock.Now()
	r.pace.answeredLocked(st) // holdguard.go
	if ans.outcome != accepted {
		r.budgets.releaseLocked(st) // the request failed: evidence that nothing was taken
	}
	r.surges.surgeAnsweredLocked(st, ans.outcome) // --surge restores now (surge.go)
	if ans.outcome == accepted {
		r.pace.acceptedLocked(ev) // pace.go
	}
	if st.phase == finished {
		return
	}
	switch ans.outcome {
	case accepted, gone:
	default:
		// The backoff is taken once per refusal (the per-pod exponential and the overall
		// token bucket), never on a wake-up, and never shorter than Retry-After.
		r.sum.Refusals++
		st.notBefore = now.Add(max(ans.retryAfter, r.e.cfg.RateLimiter.When(key)))
	}
	delay := max(0, st.notBefore.Sub(now))
	switch ans.outcome {
	case accepted:
		st.phase, st.acceptedAt = terminating, now
		r.movedLocked(st.node)
		r.later(func() { r.queue.Forget(key) })
		r.e.emit(event.Event{Type: event.EventEvictionAccepted, Node: st.node, Pod: key, Attempt: ev.attempt})
		if r.nodes[st.node].finished {
			// The node ended (failed) while this eviction was in flight: the pod is
			// going, and counts as evicted like those accepted before the end.
			st.phase = finished
			r.sum.PodsEvicted++
			return
		}
		r.addAfter(key, r.terminationCheckDelay(ev.pod))
	case gone:
		r.goneLocked(st)
	case conflict:
		r.e.emit(event.Event{Type: event.EventEvictionBlocked, Node: st.node, Pod: key, Reason: "Conflict",
			Message: ans.message, RetryAfter: delay, Attempt: ev.attempt})
		r.readHoldAfterLocked(ev) // holds.go
		r.addAfter(key, delay)
	case refusedByPDB:
		named := ev.budgets
		if b := r.budgets.budgetLocked(st.pod.Namespace + "/" + ans.pdb); b != nil {
			named = []*pdb.Budget{b}
		}
		for _, b := range named { // no run asks it again until its status changes
			r.budgets.refusedAtLocked(b.Key(), ev.rvBefore[b.Key()])
		}
		r.budgets.parkLocked(st, named, "DisruptionBudget", ans.message)
		r.budgets.wakeIfChangedLocked(st, ev.rvBefore)
	case multiplePDBs:
		r.budgets.parkLocked(st, ev.budgets, string(pdb.Multiple), pdb.Decide(ev.pod, ev.budgets).Reason)
		st.blockPDB = pdb.JoinKeys(ev.budgets)
		r.budgets.wakeIfChangedLocked(st, ev.rvBefore)
	case fatal:
		// Said once, by the node's failure, which names the pod and the server's reason.
		st.blockMsg = ans.message
		r.failNodeLocked(r.nodes[st.node], (&PodFailedError{Pod: key, Reason: ans.message}).Error())
	default:
		reason := map[outcome]string{throttled: "TooManyRequests", failed: "Error"}[ans.outcome]
		r.e.emit(event.Event{Type: event.EventEvictionBlocked, Node: st.node, Pod: key, Reason: reason,
			Message: ans.message, RetryAfter: delay, Attempt: ev.attempt})
		r.addAfter(key, delay)
	}
}

// podChanged is the node pod informer's handler: a deleted pod, or one replaced by a new
// pod of the same name, is gone.
func (r *run) podChanged(obj any) {
	p, ok := informerObject(obj).(*corev1.Pod)
	if !ok {
		return
	}
	r.lock()
	defer r.unlock()
	st := r.pods[p.Namespace+"/"+p.Name]
	if st == nil || st.phase == finished {
		return
	}
	if _, exists := r.currentLocked(st); !exists {
		r.goneLocked(st)
	}
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
		r.e.emit(r.budgets.stuckLocked(st, cur, event.Event{Type: event.EventWarning, Node: st.node, Pod: st.key, Reason: "StuckTerminating",
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
