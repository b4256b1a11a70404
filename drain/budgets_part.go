package drain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// newBudgets is the budgets part of a run sharing c, on the process's ledger l (nil:
// one of its own).
func newBudgets(c *core, host budgetsHost, l *Ledger) *budgets {
	bs := &budgets{core: c, host: host, book: newBudgetBook(l), watch: newBudgetWatch()}
	bs.book.b, bs.watch.b, bs.diag.b, bs.blocked.b = bs, bs, bs, bs
	return bs
}

// parkLocked makes the pod wait until one of budgets changes.
func (bs *budgets) parkLocked(st *podState, budgets []*pdb.Budget, reason, message string) {
	bs.book.parkOnLocked(st, budgets)
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

// watchdog says out loud what watches hide: every ProbeInterval it checks that the API
// server answers (watches retry a refused connection silently) and whether a budget's
// status has gone stale (the disruption controller is not updating it).
func (bw *budgetWatch) watchdog(ctx context.Context) {
	bs := bw.b
	down := false
	bs.every(ctx, bs.cfg.ProbeInterval, func() {
		err := bs.cfg.Probe(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && !down:
			down = true
			bs.emit(event.Event{Type: event.EventWarning, Reason: "APIServerUnreachable",
				Message: fmt.Sprintf("cannot reach the API server (%v); the drain goes on when it answers again", err)})
		case err == nil && down:
			down = false
			bs.emit(event.Event{Type: event.EventWarning, Reason: "APIServerBack", Message: "the API server answers again; the drain goes on"})
		}
		bs.lock()
		if bs.host.policyLocked().apiDown && !down {
			bs.blocked.restartClocksLocked() // --blocked-after counts again from now
		}
		bs.host.policyLocked().apiDown = down
		bw.checkStaleLocked()
		bs.unlock()
	})
}

// The part's face to the run: the run asks the budgets part through these methods only,
// never its concerns (book, watch, diag, blocked) directly. Each is called with the lock
// held unless its doc says otherwise.

// start shares the process's ledger and starts the part's goroutines on the core (the
// watchdog, the wait lines, the deadline's report and, with blockedClocks,
// --blocked-after's clocks); stop ends the sharing. Called without the lock.
func (bs *budgets) start(ctx context.Context, blockedClocks bool) (stop func()) {
	stop = bs.book.shareLedger() // the process's other runs (ledger.go)
	bs.goroutine(func() { bs.watch.watchdog(ctx) })
	bs.goroutine(func() { bs.diag.waitLines(ctx) })
	bs.goroutine(func() { bs.diag.sayPastDeadline(ctx) })
	if blockedClocks {
		bs.goroutine(func() { bs.blocked.watchBlocked(ctx) })
	}
	return stop
}

// readFrom makes idx (the PDB informer's) the store the part reads budgets from. Called
// before the informer starts.
func (bs *budgets) readFrom(idx cache.Indexer) { bs.book.pdbs = idx }

// budgetLocked is the budget of key as last seen (nil when gone).
func (bs *budgets) budgetLocked(key string) *pdb.Budget { return bs.book.budgetLocked(key) }

// budgetsForLocked are the budgets whose selector matches pod.
func (bs *budgets) budgetsForLocked(pod *corev1.Pod) []*pdb.Budget {
	return bs.book.budgetsForLocked(pod)
}

// parkedLocked are the pods waiting on the budget of key.
func (bs *budgets) parkedLocked(key string) map[string]*podState { return bs.book.parked[key] }

// reservedLocked is how many of the budget's allowances this run's evictions hold.
func (bs *budgets) reservedLocked(key string) int { return len(bs.book.reserved[key]) }

// roomLocked is how many more evictions the budget allows now, every run's reservations
// taken off.
func (bs *budgets) roomLocked(b *pdb.Budget) int { return bs.book.roomLocked(b) }

// tryReserveLocked takes one of b's allowances for st's eviction, if there is one.
func (bs *budgets) tryReserveLocked(b *pdb.Budget, st *podState) bool {
	return bs.book.tryReserveLocked(b, st)
}

// numbersLocked says b's numbers as a wait line does.
func (bs *budgets) numbersLocked(b *pdb.Budget) string { return bs.book.numbersLocked(b) }

// unparkLocked ends st's wait on its budgets.
func (bs *budgets) unparkLocked(st *podState) { bs.book.unparkLocked(st) }

// releaseLocked gives back the allowance st's eviction held (the request failed).
func (bs *budgets) releaseLocked(st *podState) { bs.book.releaseLocked(st) }

// leftLocked is a pod that leaves the run without an eviction of its own (its node is
// gone): it waits on nothing and holds nothing.
func (bs *budgets) leftLocked(st *podState) {
	bs.book.unparkLocked(st)
	bs.book.releaseLocked(st)
}

// goneLocked is a pod gone from its node: it waits on nothing, holds nothing, and its
// budget's status is judged stale if it still counts the pod (watchdog.go).
func (bs *budgets) goneLocked(st *podState) {
	bs.leftLocked(st)
	bs.watch.goneAt[st.key] = bs.now()
}

// wakeIfChangedLocked wakes st at once when one of its budgets changed since before
// (the versions seen when its eviction was sent).
func (bs *budgets) wakeIfChangedLocked(st *podState, before map[string]string) {
	bs.book.wakeIfChangedLocked(st, before)
}

// refusedAtLocked is a 429 for the budget of key at version rv: no run evicts against that
// status again (ledger.go).
func (bs *budgets) refusedAtLocked(key, rv string) { bs.book.ledger.refusedAt(key, rv) }

// staleLocked says why the budget of key's status is not current ("" when it is).
func (bs *budgets) staleLocked(key string) string { return bs.watch.stale[key].why }

// blockerLocked is b as st's wait line says it now.
func (bs *budgets) blockerLocked(st *podState, b event.Blocker, said map[string]bool) event.Blocker {
	return bs.diag.waitingBlockerLocked(st, b, said)
}

// explainBlockersLocked adds to blockers the cause and remedy last said of each wait,
// and the pods drain rules hold.
func (bs *budgets) explainBlockersLocked(blockers []event.Blocker) []event.Blocker {
	return bs.diag.explainBlockersLocked(blockers)
}

// stuckLocked is ev with the cause of st's pod stuck terminating (cur as last seen).
func (bs *budgets) stuckLocked(st *podState, cur *corev1.Pod, ev event.Event) event.Event {
	return bs.diag.stuckLocked(st, cur, ev)
}

// heldLocked is the pod of key held on its node by a drain rule (nil when not).
func (bs *budgets) heldLocked(key string) *heldPod { return bs.diag.held[key] }

// holdLocked records h held by a drain rule and says so.
func (bs *budgets) holdLocked(h *heldPod) {
	if bs.diag.held == nil {
		bs.diag.held = map[string]*heldPod{}
	}
	bs.diag.held[h.key] = h
	bs.diag.sayHeldLocked(h, 0)
}

// letGoHeldLocked forgets node's held pods not in keep.
func (bs *budgets) letGoHeldLocked(node string, keep map[string]bool) {
	for key, h := range bs.diag.held {
		if h.node == node && !keep[key] {
			delete(bs.diag.held, key)
		}
	}
}
