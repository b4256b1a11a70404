package drain

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// reserveLocked takes one of the budget's allowances for st's eviction.
func (r *run) reserveLocked(pdbKey string, st *podState) {
	if r.reserved[pdbKey] == nil {
		r.reserved[pdbKey] = map[string]bool{}
	}
	r.reserved[pdbKey][st.key] = true
	st.reservedOn = pdbKey
}

// releaseLocked gives back st's reservation, on evidence only (the request failed, the
// pod is gone, or the budget's status lists it), and wakes pods the room goes to.
func (r *run) releaseLocked(st *podState) {
	key := st.reservedOn
	if key == "" {
		return
	}
	st.reservedOn = ""
	delete(r.reserved[key], st.key)
	r.wakeBudgetLocked(key)
}

// parkLocked makes the pod wait until one of budgets changes.
func (r *run) parkLocked(st *podState, budgets []*pdb.Budget, reason, message string) {
	r.unparkLocked(st)
	for _, b := range budgets {
		if r.parked[b.Key()] == nil {
			r.parked[b.Key()] = map[string]*podState{}
		}
		r.parked[b.Key()][st.key] = st
		st.parkedOn = append(st.parkedOn, b.Key())
	}
	keys := pdb.JoinKeys(budgets)
	class := reason
	if reason == "DisruptionBudget" {
		class = string(pdb.Exhausted) // the server's word for the same wait
	}
	st.blockMsg = message
	if keys+"|"+class != st.block {
		st.block = keys + "|" + class
		r.e.emit(r.diagnoseLocked(st, budgets, event.Event{Type: event.EventEvictionBlocked, Node: st.node, Pod: st.key, PDB: keys, Reason: reason,
			Message: message, RetryAfter: max(0, st.notBefore.Sub(r.e.cfg.Clock.Now())), Attempt: st.attempts}))
		if reason == string(pdb.Never) || reason == string(pdb.Multiple) {
			node, msg := st.node, "pod "+st.key+": "+message
			r.later(func() { r.recordEvent(node, corev1.EventTypeWarning, "DrainBlocked", msg) })
			r.stopOnNeverLocked(st, reason, message)
			r.sayEndlessWaitLocked(reason, budgets)
		}
	}
	if len(budgets) == 0 {
		// Nothing to watch (a budget deleted in between): try again after a backoff.
		st.parkedOn = nil
		key := st.key
		r.later(func() { r.queue.AddAfter(key, r.e.cfg.RateLimiter.When(key)) })
	}
}

func (r *run) unparkLocked(st *podState) {
	for _, key := range st.parkedOn {
		delete(r.parked[key], st.key)
	}
	st.parkedOn = nil
}

// wakeIfChangedLocked requeues a pod at once if a budget it waits on changed while the
// refused request was in flight (its change event was then already handled).
func (r *run) wakeIfChangedLocked(st *podState, before map[string]string) {
	for _, key := range st.parkedOn {
		if b := r.budgetLocked(key); b == nil || b.PDB.ResourceVersion != before[key] {
			r.wakePodLocked(st)
			return
		}
	}
}

// pdbChanged is the PDB informer's handler. The namespace's selector index is rebuilt
// once (on its next use); reservations the status now shows (status.disruptedPods lists
// the pod) are released; as many waiting pods as the budget has room for are woken.
func (r *run) pdbChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	if h := r.e.hooks.pdbHandled; h != nil {
		defer h(key, p.ResourceVersion) // after the unlock and its effects
	}
	r.lock()
	defer r.unlock()
	delete(r.index, p.Namespace)
	r.movedAt[key] = r.e.cfg.Clock.Now()
	moved := r.budgetMovedLocked(key, p)
	for podKey := range r.reserved[key] {
		_, name, _ := cache.SplitMetaNamespaceKey(podKey)
		_, shown := p.Status.DisruptedPods[name]
		st := r.pods[podKey]
		// An answered request's reservation ends with the first status seen after the
		// answer whose numbers moved: the server wrote its decrement before it answered
		// (or, for a pod it did not count, wrote none), so those numbers hold it. A status
		// that only changed elsewhere (a condition) proves nothing.
		if shown || st == nil || (moved && st.phase != waiting) {
			delete(r.reserved[key], podKey)
			if st != nil {
				st.reservedOn = ""
			}
		}
	}
	r.paceBudgetLocked(p)
	if m, ok := r.stale[key]; ok && p.ResourceVersion != m.rv && !r.listsGoneLocked(p) {
		delete(r.stale, key) // the disruption controller caught up
	}
	if r.pol.notCurrent[key] {
		r.lookCurrentLocked(key) // current again: the blocked clocks of its nodes restart
	}
	r.wakeBudgetLocked(key)
}

// wakeBudgetLocked wakes the pods waiting on a budget: as many as it has room for (its
// allowance less the reservations), in wave order, plus those under several budgets
// (whose 500 may have changed). The cost is O(pods parked on that budget).
func (r *run) wakeBudgetLocked(key string) {
	parked := r.parked[key]
	if len(parked) == 0 {
		return
	}
	room := len(parked)
	if b := r.budgetLocked(key); b != nil {
		room = 0
		if _, stale := r.stale[key]; !stale && !b.Stale() {
			room = int(b.Allowed()) - len(r.reserved[key])
		}
	}
	var best []*podState // the room first pods, in (wave, key) order
	var multi []*podState
	for _, st := range parked {
		if len(st.parkedOn) > 1 {
			multi = append(multi, st)
			continue
		}
		if room <= 0 {
			continue
		}
		if len(best) == room && !before(st, best[room-1]) {
			continue
		}
		i := sort.Search(len(best), func(i int) bool { return before(st, best[i]) })
		if len(best) < room {
			best = append(best, nil)
		}
		copy(best[i+1:], best[i:])
		best[i] = st
	}
	now := r.e.cfg.Clock.Now()
	for _, st := range append(best, multi...) {
		st.wokenAt = now
		r.wakePodLocked(st)
	}
}

func before(a, b *podState) bool {
	if a.wave != b.wave {
		return a.wave < b.wave
	}
	return a.key < b.key
}

// wakePodLocked takes a pod off every budget it waits on and queues it: at once, or when
// the backoff of its last refusal (at least Retry-After) has passed.
func (r *run) wakePodLocked(st *podState) {
	r.unparkLocked(st)
	r.addAfter(st.key, st.notBefore.Sub(r.e.cfg.Clock.Now()))
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
	out = r.explainBlockersLocked(out)
	sort.Slice(out, func(i, j int) bool { return out[i].Node+out[i].Pod < out[j].Node+out[j].Pod })
	said := map[string]bool{} // causes said in a message already: once per budget is enough
	for i, b := range out {
		if st := r.pods[b.Pod]; st != nil && st.node == b.Node {
			out[i] = r.waitingBlockerLocked(st, b, said) // as the wait line says it now
		}
	}
	return out
}

func resourceVersions(bs []*pdb.Budget) map[string]string {
	out := make(map[string]string, len(bs))
	for _, b := range bs {
		out[b.Key()] = b.PDB.ResourceVersion
	}
	return out
}
