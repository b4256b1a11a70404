package drain

import (
	"fmt"
	"sort"
	"strings"
	"time"

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

func (wd *waitDiag) sayHeldLocked(h *heldPod, waited time.Duration) {
	bs := wd.b
	cause, remedy := bs.host.waitCompletedWhy(h.pod, h.node)
	if h.reason == ReasonDoNotDisrupt {
		cause, remedy = bs.host.doNotDisruptWhy(h.pod)
	}
	h.said = bs.cfg.Clock.Now()
	bs.emit(event.Event{Type: event.EventEvictionBlocked, Node: h.node, Pod: h.key, Reason: h.reason,
		Message: cause, Cause: cause, Remedy: remedy, Waited: waited})
}

// heldBlockersLocked lists the pods rules hold, for the summary.
func (wd *waitDiag) heldBlockersLocked() []event.Blocker {
	bs := wd.b
	var out []event.Blocker
	for _, h := range wd.held {
		if bs.host.nodesLocked()[h.node] != nil && bs.host.nodesLocked()[h.node].finished {
			continue
		}
		cause, remedy := bs.host.waitCompletedWhy(h.pod, h.node)
		if h.reason == ReasonDoNotDisrupt {
			cause, remedy = bs.host.doNotDisruptWhy(h.pod)
		}
		out = append(out, event.Blocker{Node: h.node, Pod: h.key, Message: cause, Cause: cause, Remedy: remedy})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// explainBlockersLocked adds to the summary's blockers the cause and remedy last said of
// each wait, and the pods rules hold.
func (wd *waitDiag) explainBlockersLocked(bs []event.Blocker) []event.Blocker {
	for i := range bs {
		if w := wd.waits[bs[i].Pod]; w != nil {
			bs[i].Cause, bs[i].Remedy = w.ev.Cause, w.ev.Remedy
		}
	}
	return append(bs, wd.heldBlockersLocked()...)
}
