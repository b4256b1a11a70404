package operation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Runs runs several operations at once, as the dashboard does: each node is in at most
// one running operation, and each can be cancelled on its own. Every operation's context
// derives from the one Runs was made with.
type Runs struct {
	op  *Operator
	ctx context.Context
	// describe renders an error that ends an operation (node.failed).
	describe func(error) string

	wg   sync.WaitGroup
	mu   sync.Mutex
	busy map[string]bool               // nodes in a running operation
	open map[chan event.Event]struct{} // event channels not closed yet
}

// Runs returns a Runs whose operations run under ctx. describe renders the error an
// operation ends with, for its node.failed event (nil: the error's text).
func (o *Operator) Runs(ctx context.Context, describe func(error) string) *Runs {
	if describe == nil {
		describe = func(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
	}
	return &Runs{op: o, ctx: ctx, describe: describe, busy: map[string]bool{}, open: map[chan event.Event]struct{}{}}
}

// BusyError is an operation refused because some of its nodes are in one that runs.
type BusyError struct{ Nodes []string }

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s already in a running action", strings.Join(e.Nodes, ", "))
}

// Start begins req (which names its Nodes) and returns its events, in order, on a channel
// that closes when it ends, and the function that cancels it (the nodes keep what was
// done; a drain or a move resumes when run again). An error the operation did not report
// as an event ends it as node.failed; a cancel ends it silently. A request naming a node
// of a running operation is refused with a BusyError.
func (r *Runs) Start(req Request) (<-chan event.Event, context.CancelFunc, error) {
	r.mu.Lock()
	var busy []string
	for _, n := range req.Nodes {
		if r.busy[n] {
			busy = append(busy, n)
		}
	}
	if len(busy) > 0 {
		r.mu.Unlock()
		sort.Strings(busy)
		return nil, nil, &BusyError{Nodes: busy}
	}
	for _, n := range req.Nodes {
		r.busy[n] = true
	}
	events := make(chan event.Event, 256)
	r.open[events] = struct{}{}
	r.mu.Unlock()

	ctx, cancel := context.WithCancel(r.ctx)
	r.wg.Go(func() {
		defer func() {
			cancel()
			r.mu.Lock()
			for _, n := range req.Nodes {
				delete(r.busy, n)
			}
			delete(r.open, events)
			r.mu.Unlock()
			close(events)
		}()
		_, err := r.op.Run(ctx, req, events)
		var reported *NodesError
		if err != nil && !errors.Is(err, context.Canceled) && !errors.As(err, &reported) {
			r.op.emit(events, event.Event{Type: event.EventNodeFailed, Message: r.describe(err)})
		}
	})
	return events, cancel, nil
}

// Wait waits for every operation to end. Call it once the context Runs was made with is
// cancelled: the events nobody reads any more are read here, so that no operation blocks
// on a send.
func (r *Runs) Wait() {
	r.mu.Lock()
	chans := make([]chan event.Event, 0, len(r.open))
	for ch := range r.open {
		chans = append(chans, ch)
	}
	r.mu.Unlock()
	for _, ch := range chans {
		for range ch { //nolint:revive // draining
		}
	}
	r.wg.Wait()
}
