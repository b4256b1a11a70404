package drain

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// A wait said as it stands now. A pod's wait message is written when it is parked; the
// budget's numbers move on after that (the eviction in flight then is answered, the pod
// goes, its replacement cannot be scheduled). Every place that says a wait again, the
// wait lines, a node given up, the pods still waiting at the end, says the budget's
// current numbers and the current diagnosis, so one budget has one set of numbers.

// numbersLocked is "pdb KEY needs N healthy pods, has H, allows A", and what of it this
// run's evictions take: requests not answered yet, and accepted ones whose pods are still
// terminating ("allows 0: 1 taken by this drain's evictions in flight"); and the pods the
// status still counts as disrupted that are gone (the disruption controller's lag, not
// this drain's doing).
func (bk *budgetBook) numbersLocked(b *pdb.Budget) string {
	bs := bk.b
	s := "pdb " + b.Key() + " " + b.Numbers()
	taken := map[string]bool{}
	for key := range bk.reserved[b.Key()] {
		if st := bs.host.podsLocked()[key]; st == nil || st.phase != finished {
			taken[key] = true
		}
	}
	var gone []string
	for name, at := range b.PDB.Status.DisruptedPods {
		key := b.PDB.Namespace + "/" + name
		if st := bs.host.podsLocked()[key]; st != nil && st.attempts > 0 && st.phase != finished {
			taken[key] = true
		} else if !taken[key] && bs.watch.podGoneLocked(b.Key(), key, at.Time) {
			gone = append(gone, key)
		}
	}
	var parts []string
	if n := len(taken); n > 0 {
		parts = append(parts, fmt.Sprintf("%d taken by this drain's evictions in flight", n))
	}
	if n := bk.ledger.reservedOn(b.Key()) - len(bk.reserved[b.Key()]); n > 0 {
		parts = append(parts, fmt.Sprintf("%d taken by the evictions in flight of other runs of this process", n))
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		parts = append(parts, fmt.Sprintf("%d counted for pod(s) already gone (%s: the disruption controller has not caught up)", len(gone), strings.Join(gone, ", ")))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}

// budgetsOfLocked returns the budgets a waiting pod's last wait named.
func (bk *budgetBook) budgetsOfLocked(st *podState) []*pdb.Budget {
	var out []*pdb.Budget
	for _, k := range st.block.budgetKeys() {
		if b := bk.budgetLocked(k); b != nil {
			out = append(out, b)
		}
	}
	return out
}

// blockMsgLocked is st's wait message as it stands now: a wait on one exhausted budget
// gives that budget's current numbers; any other wait its message as said.
func (wd *waitDiag) blockMsgLocked(st *podState) string {
	bs := wd.b
	if st.block.exhausted() {
		if list := bs.book.budgetsOfLocked(st); len(list) == 1 {
			return bs.book.numbersLocked(list[0])
		}
	}
	return st.blockMsg
}

// waitingBlockerLocked describes a pod waiting on budgets as the wait lines would say it
// now: its current message and, when the diagnosis finds one that is not the drain's own
// turnover, its cause (an unschedulable replacement with the scheduler's reason, a stale
// status, ...) and remedy. The message says a cause once: one already in said (which it
// records) is left to the Cause field. A pod that waits on no budget keeps b as it is.
func (wd *waitDiag) waitingBlockerLocked(st *podState, b event.Blocker, said map[string]bool) event.Blocker {
	bs := wd.b
	if st.phase != waiting || st.block.isZero() {
		return b
	}
	b.Message = wd.blockMsgLocked(st)
	budgets := bs.book.budgetsOfLocked(st)
	if len(budgets) == 0 {
		return b
	}
	d := wd.diagnosisLocked(st, budgets)
	b.Cause, b.Remedy = d.Cause, d.Remedy
	if d.Cause != "" && !d.Routine && !strings.Contains(b.Message, d.Cause) && !said[d.Cause] {
		said[d.Cause] = true
		cause := d.Cause
		if len(budgets) == 1 { // its numbers are said already: once is enough
			cause = strings.TrimPrefix(strings.TrimPrefix(cause, "pdb "+budgets[0].Key()+" "+budgets[0].Numbers()), ": ")
		}
		b.Message += "; cause: " + cause // as the wait line says it
	}
	return b
}
