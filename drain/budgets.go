package drain

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

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

// wakePodLocked takes a pod off every budget it waits on and queues it: at once, or when
// the backoff of its last refusal (at least Retry-After) has passed.
func (bk *budgetBook) wakePodLocked(st *podState) {
	bs := bk.b
	bk.unparkLocked(st)
	bs.host.addAfter(st.key, st.notBefore.Sub(bs.cfg.Clock.Now()))
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
