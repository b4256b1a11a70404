package drain

import (
	"context"
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
