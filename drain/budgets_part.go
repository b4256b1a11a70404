package drain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

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
