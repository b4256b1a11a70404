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

// budgetBook is the run's bookkeeping of the PodDisruptionBudgets: the namespaces'
// indexes of them, the pods parked on each and the allowances reserved on each. Its
// fields are guarded by run.mu.
// Its Locked methods are called with run.mu held; they make no API call and send on no
// channel: effects go through run.later, events to the outbox (doc.go).
type budgetBook struct {
	b        *budgets                        // the budgets part it belongs to (budgets_part.go)
	pdbs     cache.Indexer                   // the PDB informer's store
	parked   map[string]map[string]*podState // pdb key -> pods waiting on it
	reserved map[string]map[string]bool      // pdb key -> pods whose accepted eviction its status does not show yet
	index    map[string]*pdb.Index           // namespace -> its budgets, rebuilt on a change
	// ledger is the process's view of the budgets, shared with its other runs (ledger.go):
	// reserved above are this run's part of it; sub is the run's subscription to it.
	ledger *Ledger
	sub    int
}

// newBudgetBook starts a run's book on the process's ledger (nil: one of its own).
func newBudgetBook(l *Ledger) budgetBook {
	if l == nil {
		l = NewLedger()
	}
	return budgetBook{parked: map[string]map[string]*podState{}, reserved: map[string]map[string]bool{}, index: map[string]*pdb.Index{}, ledger: l}
}

// shareLedger subscribes the run to the ledger: a budget another run gives an allowance
// back on wakes the run's pods waiting on it. The returned function ends the
// subscription and gives back the allowances the run still holds (a run interrupted
// with evictions in flight), waking the other runs' pods; call it once the workers have
// stopped.
func (bk *budgetBook) shareLedger() (stop func()) {
	bs := bk.b
	id, unsubscribe := bk.ledger.subscribe(func(key string) {
		bs.lock()
		defer bs.unlock()
		if bs.host.context().Err() == nil {
			bk.wakeBudgetLocked(key)
		}
	})
	bs.lock()
	bk.sub = id
	bs.unlock()
	return func() {
		unsubscribe()
		bs.lock()
		defer bs.unlock()
		for key, pods := range bk.reserved {
			for pod := range pods {
				bk.dropLocked(key, pod)
			}
		}
	}
}

// roomLocked is how many more evictions b has room for: its allowance less the
// reservations of every run of the process (ledger.go).
func (bk *budgetBook) roomLocked(b *pdb.Budget) int {
	return bk.ledger.room(b.Key(), b.Allowed(), b.PDB.ResourceVersion)
}

// tryReserveLocked takes one of b's allowances for st's eviction, if another run has not
// taken the last one meanwhile, and reports whether it did.
func (bk *budgetBook) tryReserveLocked(b *pdb.Budget, st *podState) bool {
	if !bk.ledger.tryReserve(b.Key(), st.key, b.Allowed(), b.PDB.ResourceVersion) {
		return false
	}
	bk.reserveLocked(b.Key(), st)
	return true
}

// reserveLocked records that st's eviction holds one of the budget's allowances, in the
// run's book and in the ledger.
func (bk *budgetBook) reserveLocked(pdbKey string, st *podState) {
	bk.ledger.hold(pdbKey, st.key)
	if bk.reserved[pdbKey] == nil {
		bk.reserved[pdbKey] = map[string]bool{}
	}
	bk.reserved[pdbKey][st.key] = true
	st.reservedOn = pdbKey
}

// dropLocked ends the reservation of podKey on pdbKey, in the run's book and in the
// process's ledger; the other runs' pods waiting on the budget are woken once the lock
// is released.
func (bk *budgetBook) dropLocked(pdbKey, podKey string) {
	delete(bk.reserved[pdbKey], podKey)
	if bk.ledger.release(pdbKey, podKey) && bk.b != nil {
		l, from := bk.ledger, bk.sub
		bk.b.later(func() { l.wake(pdbKey, from) })
	}
}

// releaseLocked gives back st's reservation, on evidence only (the request failed, the
// pod is gone, or the budget's status lists it), and wakes pods the room goes to.
func (bk *budgetBook) releaseLocked(st *podState) {
	key := st.reservedOn
	if key == "" {
		return
	}
	st.reservedOn = ""
	bk.dropLocked(key, st.key)
	bk.wakeBudgetLocked(key)
}

// parkLocked makes the pod wait until one of budgets changes.
func (bk *budgetBook) parkLocked(st *podState, budgets []*pdb.Budget, reason, message string) {
	bs := bk.b
	bk.parkOnLocked(st, budgets)
	block := newBlockKey(budgets, reason)
	keys := block.budgets
	st.blockMsg = message
	if block != st.block {
		st.block = block
		bs.emit(bs.diag.diagnoseLocked(st, budgets, event.Event{Type: event.EventEvictionBlocked, Node: st.node, Pod: st.key, PDB: keys, Reason: reason,
			Message: message, RetryAfter: max(0, st.notBefore.Sub(bs.cfg.Clock.Now())), Attempt: st.attempts}))
		if reason == string(pdb.Never) || reason == string(pdb.Multiple) {
			node, msg := st.node, "pod "+st.key+": "+message
			bs.later(func() { bs.host.recordEvent(node, corev1.EventTypeWarning, "DrainBlocked", msg) })
			bs.host.stopOnNeverLocked(st, reason, message)
			bs.diag.sayEndlessWaitLocked(reason, budgets)
		}
	}
	if len(budgets) == 0 {
		// Nothing to watch (a budget deleted in between): try again after a backoff.
		st.parkedOn = nil
		key := st.key
		bs.host.backoffLocked(key)
	}
}

// parkOnLocked records that the pod waits on budgets (and on no other).
func (bk *budgetBook) parkOnLocked(st *podState, budgets []*pdb.Budget) {
	bk.unparkLocked(st)
	for _, b := range budgets {
		if bk.parked[b.Key()] == nil {
			bk.parked[b.Key()] = map[string]*podState{}
		}
		bk.parked[b.Key()][st.key] = st
		st.parkedOn = append(st.parkedOn, b.Key())
	}
}

// unparkLocked takes the pod off every budget it waits on.
func (bk *budgetBook) unparkLocked(st *podState) {
	for _, key := range st.parkedOn {
		delete(bk.parked[key], st.key)
	}
	st.parkedOn = nil
}

// statusSeenLocked ends the reservations on p that its new status holds: the pod is
// listed in disruptedPods, gone from the run (pods), or its request was answered and the
// status's numbers moved (moved). It wakes no one: the caller does, once the status is
// taken in.
func (bk *budgetBook) statusSeenLocked(p *policyv1.PodDisruptionBudget, moved bool, pods map[string]*podState) {
	key := p.Namespace + "/" + p.Name
	for podKey := range bk.reserved[key] {
		_, name, _ := cache.SplitMetaNamespaceKey(podKey)
		_, shown := p.Status.DisruptedPods[name]
		st := pods[podKey]
		// An answered request's reservation ends with the first status seen after the
		// answer whose numbers moved: the server wrote its decrement before it answered
		// (or, for a pod it did not count, wrote none), so those numbers hold it. A status
		// that only changed elsewhere (a condition) proves nothing.
		if shown || st == nil || (moved && st.phase != waiting) {
			bk.dropLocked(key, podKey)
			if st != nil {
				st.reservedOn = ""
			}
		}
	}
}

// wakeIfChangedLocked requeues a pod at once if a budget it waits on changed while the
// refused request was in flight (its change event was then already handled).
func (bk *budgetBook) wakeIfChangedLocked(st *podState, before map[string]string) {
	for _, key := range st.parkedOn {
		if b := bk.budgetLocked(key); b == nil || b.PDB.ResourceVersion != before[key] {
			bk.wakePodLocked(st)
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
	r.changedLocked(p)
	moved := r.budgetMovedLocked(key, p)
	r.statusSeenLocked(p, moved)
	r.pace.budgetSeenLocked(p)
	r.takenInLocked(p)
}

// changedLocked is told first of a budget's change (pdbChanged): its namespace's index
// is rebuilt on its next use, the ledger sees its version, and it moved now.
func (bs *budgets) changedLocked(p *policyv1.PodDisruptionBudget) {
	key := p.Namespace + "/" + p.Name
	delete(bs.book.index, p.Namespace)
	bs.book.ledger.saw(key, p.ResourceVersion)
	bs.watch.movedAt[key] = bs.now()
}

// statusSeenLocked ends the reservations p's new status holds (budgetBook.statusSeenLocked).
func (bs *budgets) statusSeenLocked(p *policyv1.PodDisruptionBudget, moved bool) {
	bs.book.statusSeenLocked(p, moved, bs.host.podsLocked())
}

// takenInLocked is told last of a budget's change, once the run took it in: a stale
// status that changed is current again (the disruption controller caught up), the
// blocked clocks of its nodes restart if it was not current, and the pods it has room
// for are woken.
func (bs *budgets) takenInLocked(p *policyv1.PodDisruptionBudget) {
	key := p.Namespace + "/" + p.Name
	if m, ok := bs.watch.stale[key]; ok && p.ResourceVersion != m.rv && !bs.watch.listsGoneLocked(p) {
		delete(bs.watch.stale, key) // the disruption controller caught up
	}
	if bs.host.policyLocked().notCurrent[key] {
		bs.blocked.lookCurrentLocked(key) // current again: the blocked clocks of its nodes restart
	}
	bs.book.wakeBudgetLocked(key)
}

// wakeBudgetLocked wakes the pods waiting on a budget: those toWakeLocked picks.
func (bk *budgetBook) wakeBudgetLocked(key string) {
	if len(bk.parked[key]) == 0 {
		return
	}
	bs := bk.b
	_, stale := bs.watch.stale[key]
	now := bs.cfg.Clock.Now()
	for _, st := range bk.toWakeLocked(key, stale) {
		st.wokenAt = now
		bk.wakePodLocked(st)
	}
}

// toWakeLocked picks the pods waiting on a budget to wake: as many as it has room for
// (its allowance less the reservations of every run; none while its status is stale), in wave
// order, plus those under several budgets (whose 500 may have changed); every one when
// the budget is gone. The cost is O(pods parked on that budget).
func (bk *budgetBook) toWakeLocked(key string, stale bool) []*podState {
	parked := bk.parked[key]
	room := len(parked)
	if b := bk.budgetLocked(key); b != nil {
		room = 0
		if !stale && !b.Stale() {
			room = bk.roomLocked(b) // every run's reservations count (ledger.go)
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
	return append(best, multi...)
}

func before(a, b *podState) bool {
	if a.wave != b.wave {
		return a.wave < b.wave
	}
	return a.key < b.key
}

// wakePodLocked takes a pod off every budget it waits on and queues it: at once, or when
// the backoff of its last refusal (at least Retry-After) has passed.
func (bk *budgetBook) wakePodLocked(st *podState) {
	bs := bk.b
	bk.unparkLocked(st)
	bs.host.addAfter(st.key, st.notBefore.Sub(bs.cfg.Clock.Now()))
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
	out = r.diag.explainBlockersLocked(out)
	sort.Slice(out, func(i, j int) bool { return out[i].Node+out[i].Pod < out[j].Node+out[j].Pod })
	said := map[string]bool{} // causes said in a message already: once per budget is enough
	for i, b := range out {
		if st := r.pods[b.Pod]; st != nil && st.node == b.Node {
			out[i] = r.diag.waitingBlockerLocked(st, b, said) // as the wait line says it now
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

// budgetsFor returns the budgets selecting pod. The index of a namespace is built once
// per PDB change there.
func (bk *budgetBook) budgetsForLocked(pod *corev1.Pod) []*pdb.Budget {
	return bk.indexLocked(pod.Namespace).For(pod)
}

func (bk *budgetBook) indexLocked(ns string) *pdb.Index {
	ix := bk.index[ns]
	if ix == nil {
		objs, _ := bk.pdbs.ByIndex(cache.NamespaceIndex, ns)
		pdbs := make([]*policyv1.PodDisruptionBudget, 0, len(objs))
		for _, o := range objs {
			pdbs = append(pdbs, o.(*policyv1.PodDisruptionBudget))
		}
		ix = pdb.NewIndex(pdbs)
		bk.index[ns] = ix
	}
	return ix
}

func (bk *budgetBook) budgetLocked(key string) *pdb.Budget {
	ns, _, _ := cache.SplitMetaNamespaceKey(key)
	return bk.indexLocked(ns).Get(key)
}
