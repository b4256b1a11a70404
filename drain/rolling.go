package drain

import (
	"context"
	"slices"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Admitter lets the next node of a rolling drain start (Config.Rolling): a NodePool's
// maxUnavailable counting its members out of service outside the run.
type Admitter interface {
	// Admit returns nil once node may start while running nodes of the run are in
	// progress (cordoned, not finished), or an error: ctx's when it ended. It may block
	// (watching, never polling) until something changes, saying what it waits on
	// through emit (which never blocks).
	Admit(ctx context.Context, node string, running int, emit func(event.Event)) error
}

// admit asks Config.Rolling whether node may start (running: the run's nodes in progress), retrying transient API errors;
// a --not-after deadline that passes meanwhile ends the wait (the caller then finds it
// may not start). False when it did not admit the node; a lasting error fails the node.
func (r *run) admit(ctx context.Context, deadline <-chan time.Time, node string, running int) bool {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	if deadline != nil {
		// Ends with the wait: cancel (deferred) wakes it when the deadline has not fired.
		r.goroutine(func() {
			select {
			case <-deadline:
				cancel()
			case <-actx.Done():
			}
		})
	}
	err := r.retryTransient(actx, func() error { return r.e.cfg.Rolling.Admit(actx, node, running, r.e.emit) })
	if err != nil && actx.Err() == nil {
		r.lock()
		r.failNodeLocked(r.nodes[node], "may not start: "+err.Error())
		r.unlock()
	}
	return err == nil
}

// drainRolling is drainNodes for a rolling drain (Config.Rolling): at most
// MaxParallelNodes nodes in progress, each cordoned only as it starts, once Rolling admits
// it. When a slot frees, the node that starts is the first pending one, in plan order,
// whose pods the budgets let go now (nextLocked), so that a node free to drain does not
// queue behind one a budget holds: a held node would keep its slot, cordoned, for as long
// as the budget holds it (a StatefulSet's pod can hold its budget for 2 minutes).
func (r *run) drainRolling(ctx context.Context) {
	slots := make(chan struct{}, r.e.cfg.MaxParallelNodes)
	deadline, stop := r.deadline()
	defer stop()
	pending := make([]int, len(r.pf.plan.Nodes)) // indexes into the plan's nodes
	for i := range pending {
		pending[i] = i
	}
	for len(pending) > 0 {
		select {
		case slots <- struct{}{}:
		case <-deadline:
			r.lock()
			stopped := r.stopLocked(pending)
			r.unlock()
			if stopped {
				return
			}
			continue
		case <-ctx.Done():
			return
		}
		r.lock()
		i := r.nextLocked(pending)
		r.unlock()
		np := r.pf.plan.Nodes[i]
		admitted := r.admit(ctx, deadline, np.Name, len(slots)-1)
		if ctx.Err() != nil {
			return
		}
		r.lock()
		failed := r.nodes[np.Name].finished // admission failed for good
		stopped := !failed && r.stopLocked(pending)
		r.unlock()
		if stopped {
			return
		}
		if failed || !admitted {
			<-slots
			pending = slices.DeleteFunc(pending, func(j int) bool { return failed && j == i })
			continue
		}
		pending = slices.DeleteFunc(pending, func(j int) bool { return j == i })
		if !r.cordon(ctx, np.Name) {
			<-slots
			continue
		}
		ns := r.nodes[np.Name]
		r.goroutine(func() {
			defer func() { <-slots }()
			r.drainNode(ctx, ns)
		})
	}
}

// stopLocked records the pending nodes as not started when the run may start no more
// (--not-after passed, --on-blocked=fail stopped it), and says so.
func (r *run) stopLocked(pending []int) bool {
	reason, msg := r.mayStartLocked()
	if reason == "" {
		return false
	}
	var rest []event.NodePlan
	for _, j := range pending {
		rest = append(rest, r.pf.plan.Nodes[j])
	}
	r.notStartedLocked(rest, reason, msg)
	return true
}

// nextLocked picks the pending node a rolling drain starts next: a node already cordoned
// before the run if it comes first (taking it makes nothing less available), else the
// first in plan order none of whose pods a budget would hold back now, else the one with
// the fewest such pods.
func (r *run) nextLocked(pending []int) int {
	if r.pf.plan.Nodes[pending[0]].AlreadyCordoned {
		return pending[0]
	}
	best, fewest := pending[0], -1
	for _, i := range pending {
		held := r.heldLocked(r.pf.plan.Nodes[i])
		if held == 0 {
			return i
		}
		if fewest < 0 || held < fewest {
			best, fewest = i, held
		}
	}
	return best
}

// heldLocked counts the planned pods of a node that a budget would hold back now: under a
// budget that allows no disruption, or on which pods of this run already wait.
func (r *run) heldLocked(np event.NodePlan) int {
	n := 0
	for _, s := range np.Steps {
		for _, b := range s.Decision.Budgets {
			key := b.Key()
			if live := r.budgetLocked(key); len(r.parked[key]) > 0 || (live != nil && live.Allowed() <= 0) {
				n++
				break
			}
		}
	}
	return n
}
