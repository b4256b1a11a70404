package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
)

// runPool is "drain --pool": rolling, as a pool move rolls. Batches of at most the pool's
// maxUnavailable (or --max-parallel-nodes when given), members already cordoned or
// NotReady first; each batch is cordoned and drained by the engine before the next
// starts, so the engine never has more of the pool than that in hand. --timeout bounds
// the whole drain.
func (o *DrainOptions) runPool(ctx context.Context, cs kubernetes.Interface, names []string, pool *v1alpha1.NodePool) error {
	limit := pool.MaxUnavailableOrDefault()
	if o.maxParallelSet {
		limit = o.MaxParallelNodes
	}
	o.MaxParallelNodes = limit
	d := o.drainer(cs)
	r := &nodepool.Roller{Kube: cs, Pools: map[string]*v1alpha1.NodePool{pool.Name: pool}, Limit: limit}
	sources := map[string][]string{}
	for _, n := range names {
		sources[n] = []string{pool.Name}
	}
	var deadline time.Time
	if o.Timeout > 0 {
		deadline = time.Now().Add(o.Timeout)
	}
	saved := o.Timeout
	defer func() { o.Timeout = saved }()
	var total drain.Summary
	done := map[string]bool{}
	pending := append([]string(nil), names...)
	finish := func(err error) error {
		if drain.IsUsage(err) {
			err = WithExitCode(ExitUsage, err)
		}
		d.printer.Summary(total, err, ExitCode(err))
		return err
	}
	for len(pending) > 0 {
		batch, waitOn, err := r.Next(ctx, pending, sources, done)
		if err != nil {
			return finish(err)
		}
		if len(batch) == 0 {
			d.printer.Event(event.Event{Type: event.EventWarning, Reason: "PoolBudget", Message: "waiting: " + waitOn, Time: time.Now()})
			wctx, cancel := ctx, context.CancelFunc(func() {})
			if !deadline.IsZero() {
				wctx, cancel = context.WithDeadline(ctx, deadline)
			}
			err := r.Wait(wctx, []string{pool.Name})
			cancel()
			if err != nil && ctx.Err() == nil && !deadline.IsZero() && !time.Now().Before(deadline) {
				err = &nodepool.WaitTimeoutError{Timeout: saved, WaitOn: waitOn}
			}
			if err != nil {
				return finish(err)
			}
			continue
		}
		if !deadline.IsZero() {
			o.Timeout = max(time.Until(deadline), time.Millisecond)
		}
		if o.Output != "json" {
			fmt.Fprintf(o.ErrOut, "batch: %v of pool %s (maxUnavailable %d)\n", batch, pool.Name, limit)
		}
		sum, err := d.Run(ctx, batch)
		total = addSummaries(total, sum)
		var te *drain.TimeoutError
		if errors.As(err, &te) && saved > 0 {
			te.Timeout = saved // --timeout, not what was left for this batch
		}
		var ns *drain.NotStartedError
		if errors.As(err, &ns) {
			total.NotStarted = append(total.NotStarted, slices.DeleteFunc(slices.Clone(pending), func(n string) bool { return slices.Contains(batch, n) })...)
			return finish(&drain.NotStartedError{NotAfter: ns.NotAfter, Nodes: total.NotStarted})
		}
		if err = skipped(err); err != nil {
			return finish(err)
		}
		for _, n := range batch {
			done[n] = true
		}
		pending = slices.DeleteFunc(pending, func(n string) bool { return done[n] })
	}
	if len(total.Skipped) > 0 {
		return finish(&drain.SkippedError{Nodes: total.Skipped}) // --on-blocked=skip: the other batches went on
	}
	return finish(nil)
}

// skipped is nil for a batch whose only trouble is nodes given up by --on-blocked=skip
// (they are in the summary; the next batches go on), else err.
func skipped(err error) error {
	var se *drain.SkippedError
	if errors.As(err, &se) {
		return nil
	}
	return err
}
