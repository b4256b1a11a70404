package drain

import (
	"context"
	"time"
)

// The blocked clock of --on-blocked=skip: how long a node's drain has waited, without
// moving, on budgets whose current status blocks it. A status that is not current (it
// counts as disrupted a pod that is gone, its observedGeneration is behind its generation,
// its pods listed since it last changed disagree with it, or the watchdog called it
// stale) is no verdict: while a budget a node's pods wait on has
// one, or while the API server does not answer, the node's clock stands at zero, and it
// starts again from zero when the status is current again. So a node is given up only on
// BlockedAfter of current statuses that block it.

// nodeBlocked decides --on-blocked=skip: every pod left is waiting on a budget (critical
// pods held back behind them count as waiting), at least one is, and nothing has moved
// for blockedAfter.
func nodeBlocked(now, movedAt time.Time, blockedAfter time.Duration, pods []pendingPod) bool {
	parked := 0
	for _, p := range pods {
		switch {
		case p.terminating:
			return false
		case p.parked:
			parked++
		case !p.heldBack:
			return false // queued, or backing off: not blocked by a budget
		}
	}
	return parked > 0 && !movedAt.IsZero() && now.Sub(movedAt) >= blockedAfter
}

// watchBlocked gives up blocked nodes (--on-blocked=skip), checking a few times per
// BlockedAfter.
func (bc *blockedClock) watchBlocked(ctx context.Context) {
	bs := bc.b
	period := bc.blockedEvery()
	if bs.cfg.OnBlocked == OnBlockedForce {
		// A pod past its force deadline is forced at once: a quarter of a second late at
		// most (the budgets verified ahead of it, checkLocked).
		period = min(period, 250*time.Millisecond)
	}
	bs.every(ctx, period, func() {
		bs.lock()
		defer bs.unlock()
		bc.checkLocked()
	})
}

// blockedEvery is the blocked watcher's period: a few times per BlockedAfter.
func (bc *blockedClock) blockedEvery() time.Duration {
	bs := bc.b
	return min(max(bs.cfg.blockedAfter()/5, 100*time.Millisecond), 5*time.Second)
}

// checkLocked restarts the clock of each node whose wait is an outage, and gives up
// the nodes blocked for BlockedAfter, once the pods of the budgets they wait on, listed
// since their statuses last changed and within the last two periods, show those statuses
// current (a List is asked for, and the node waits for the next tick, otherwise). Each
// budget waited on is looked at once per tick.
func (bc *blockedClock) checkLocked() {
	bs := bc.b
	now := bs.cfg.Clock.Now()
	notCurrent := map[string]bool{}
	for key, ps := range bs.book.parked {
		if len(ps) > 0 && bc.lookCurrentLocked(key) {
			notCurrent[key] = true
		}
	}
	for _, ns := range bs.host.nodesLocked() {
		if ns.finished || ns.pol.skipping {
			continue
		}
		if bc.outageLocked(ns, notCurrent) {
			if !ns.pol.movedAt.IsZero() {
				ns.pol.movedAt = now // nothing counts until the status is current again
			}
			continue
		}
		if bc.blockedLocked(ns, now) && bc.verifiedLocked(ns, now) {
			bs.host.giveUpLocked(ns) // skip, or force (force.go)
		} else if bc.blockedLocked(ns, now.Add(bc.blockedEvery())) {
			bc.verifiedLocked(ns, now) // blocked by the next period: its budgets' pods listed ahead
		}
	}
}

// verifiedLocked reports whether every budget the node's pods wait on was looked at
// lately enough to call its status current: its pods listed (or a List tried and failed)
// after its status last changed and within two watcher periods. The others are marked due
// for a List (waitLines takes it within a second).
func (bc *blockedClock) verifiedLocked(ns *nodeState, now time.Time) bool {
	bs := bc.b
	ok := true
	for _, st := range ns.byUID {
		if st.phase == finished {
			continue
		}
		for _, key := range st.parkedOn {
			sel := bs.diag.selected[key]
			if sel == nil {
				if bs.diag.selected == nil {
					bs.diag.selected = map[string]*selection{}
				}
				sel = &selection{}
				bs.diag.selected[key] = sel
			}
			looked := sel.at
			if sel.failed.After(looked) {
				looked = sel.failed
			}
			if looked.IsZero() || looked.Before(bs.watch.movedAt[key]) || now.Sub(looked) > 2*bc.blockedEvery() {
				sel.due, ok = true, false
			}
		}
	}
	return ok
}

// outageLocked reports whether the node's wait is an outage rather than a budget's
// verdict: the API server does not answer, or a budget one of its pods waits on has a
// status that is not current (notCurrent).
func (bc *blockedClock) outageLocked(ns *nodeState, notCurrent map[string]bool) bool {
	bs := bc.b
	if bs.host.policyLocked().apiDown {
		return true
	}
	for _, st := range ns.byUID {
		if st.phase == finished {
			continue
		}
		for _, key := range st.parkedOn {
			if notCurrent[key] {
				return true
			}
		}
	}
	return false
}

// lookCurrentLocked looks again at whether key's status is current, and reports whether
// it is not. A status found current again restarts the blocked clocks of the nodes whose
// pods wait on the budget.
func (bc *blockedClock) lookCurrentLocked(key string) bool {
	bs := bc.b
	if bs.watch.notCurrentWhyLocked(key) != "" {
		if bs.host.policyLocked().notCurrent == nil {
			bs.host.policyLocked().notCurrent = map[string]bool{}
		}
		bs.host.policyLocked().notCurrent[key] = true
		return true
	}
	if bs.host.policyLocked().notCurrent[key] {
		delete(bs.host.policyLocked().notCurrent, key)
		for _, st := range bs.book.parked[key] {
			bs.host.movedLocked(st.node)
		}
	}
	return false
}

// restartClocksLocked restarts the blocked clock of every node in progress (the API server
// answers again: what the run sees of the budgets is current only from now).
func (bc *blockedClock) restartClocksLocked() {
	bs := bc.b
	for _, ns := range bs.host.nodesLocked() {
		if ns.started && !ns.finished && !ns.pol.movedAt.IsZero() {
			bs.host.movedLocked(ns.name)
		}
	}
}

// blockedLocked reports whether the node is blocked at now (for BlockedAfter).
func (bc *blockedClock) blockedLocked(ns *nodeState, now time.Time) bool {
	bs := bc.b
	if !ns.started || ns.finished || ns.finishing || ns.failing || ns.looking || ns.pol.skipping || ns.remaining == 0 {
		return false
	}
	held := map[*podState]bool{}
	for _, st := range ns.heldBack {
		held[st] = true
	}
	var pods []pendingPod
	for _, st := range ns.byUID {
		if st.phase != finished {
			pods = append(pods, pendingPod{terminating: st.phase == terminating, parked: st.parkedOn != nil, heldBack: held[st]})
		}
	}
	return nodeBlocked(now, ns.pol.movedAt, bs.cfg.blockedAfter(), pods)
}
