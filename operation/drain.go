package operation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// engine builds the drain engine with req's settings, sending on events.
func (o *Operator) engine(req Request, events chan<- event.Event) (*drain.Engine, error) {
	cfg := req.Drain
	cfg.Client, cfg.Events, cfg.DryRun = o.Kube, events, req.DryRun
	if cfg.Surge == nil {
		cfg.Surge = surge.New(o.Kube)
		if !req.Surge {
			cfg.Surge = surge.New(o.Kube).ResumeOnly()
		}
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = o.logger()
	}
	eng, err := drain.NewEngine(cfg)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	return eng, nil
}

// planDrain is the drain engine's plan of names (nothing is sent on any channel).
func (o *Operator) planDrain(ctx context.Context, req Request, names []string) (*event.Plan, error) {
	eng, err := o.engine(req, make(chan event.Event))
	if err != nil {
		return nil, err
	}
	return eng.Plan(ctx, names)
}

// runDrain drains names: the members of a pool roll batch by batch (at most its
// maxUnavailable, unless MaxParallelNodes is set); anything else is one run of the engine.
// A dry run of a pool plans with the pool's maxUnavailable at once.
func (o *Operator) runDrain(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	if pool != nil && req.Drain.MaxParallelNodes == 0 {
		if req.DryRun == drain.DryRunNone {
			return o.runPool(ctx, req, names, pool, events)
		}
		req.Drain.MaxParallelNodes = pool.MaxUnavailableOrDefault()
	}
	eng, err := o.engine(req, events)
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}

// runPool is a pool's rolling drain: batches of at most the pool's maxUnavailable,
// members already cordoned or NotReady first; each batch is cordoned and drained by the
// engine before the next starts. Drain.Timeout bounds the whole drain.
func (o *Operator) runPool(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	limit := pool.MaxUnavailableOrDefault()
	req.Drain.MaxParallelNodes = limit
	r := &nodepool.Roller{Kube: o.Kube, Pools: map[string]*v1alpha1.NodePool{pool.Name: pool}, Limit: limit}
	sources := map[string][]string{}
	for _, n := range names {
		sources[n] = []string{pool.Name}
	}
	timeout := req.Drain.Timeout
	var deadline time.Time
	if timeout > 0 {
		deadline = o.now().Add(timeout)
	}
	var total drain.Summary
	done := map[string]bool{}
	pending := append([]string(nil), names...)
	for len(pending) > 0 {
		batch, waitOn, err := r.Next(ctx, pending, sources, done)
		if err != nil {
			return Summary{Summary: total}, err
		}
		if len(batch) == 0 {
			o.emit(events, event.Event{Type: event.EventWarning, Reason: "PoolBudget", Message: "waiting: " + waitOn})
			wctx, cancel := ctx, context.CancelFunc(func() {})
			if !deadline.IsZero() {
				wctx, cancel = context.WithDeadline(ctx, deadline)
			}
			err := r.Wait(wctx, []string{pool.Name})
			cancel()
			if err != nil && ctx.Err() == nil && !deadline.IsZero() && !o.now().Before(deadline) {
				err = &nodepool.WaitTimeoutError{Timeout: timeout, WaitOn: waitOn}
			}
			if err != nil {
				return Summary{Summary: total}, err
			}
			continue
		}
		if !deadline.IsZero() {
			req.Drain.Timeout = max(deadline.Sub(o.now()), time.Millisecond)
		}
		o.emit(events, event.Event{Type: event.EventPoolBatch, Message: fmt.Sprintf("%v of pool %s (maxUnavailable %d)", batch, pool.Name, limit)})
		eng, err := o.engine(req, events)
		if err != nil {
			return Summary{Summary: total}, err
		}
		sum, err := eng.Run(ctx, batch)
		total = total.Add(sum)
		var te *drain.TimeoutError
		if errors.As(err, &te) && timeout > 0 {
			te.Timeout = timeout // the drain's --timeout, not what was left for this batch
		}
		var ns *drain.NotStartedError
		if errors.As(err, &ns) {
			// --not-after: this batch's late nodes and every later batch are not started.
			total.NotStarted = append(total.NotStarted, slices.DeleteFunc(slices.Clone(pending), func(n string) bool { return slices.Contains(batch, n) })...)
			return Summary{Summary: total}, &drain.NotStartedError{NotAfter: ns.NotAfter, Nodes: total.NotStarted}
		}
		if err = skipped(err); err != nil {
			return Summary{Summary: total}, err
		}
		for _, n := range batch {
			done[n] = true
		}
		pending = slices.DeleteFunc(pending, func(n string) bool { return done[n] })
	}
	if len(total.Skipped) > 0 {
		return Summary{Summary: total}, &drain.SkippedError{Nodes: total.Skipped} // --on-blocked=skip: the other batches went on
	}
	return Summary{Summary: total}, nil
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

// BatchDrainer drains the batches of a rolling move or rollout through the drain
// engine, with the request's settings, each batch given what is left of the whole
// operation's timeout. Every batch's events go to one channel. It implements
// nodepool.Drainer and nodepool.TimedDrainer.
type BatchDrainer struct {
	o      *Operator
	req    Request
	events chan<- event.Event
	total  drain.Summary
}

// Drainer returns a BatchDrainer with req's drain settings, sending on events.
func (o *Operator) Drainer(req Request, events chan<- event.Event) *BatchDrainer {
	if req.DryRun == "" {
		req.DryRun = drain.DryRunNone
	}
	return &BatchDrainer{o: o, req: req, events: events}
}

// Run implements nodepool.Drainer: it drains nodes with the request's own timeout.
func (d *BatchDrainer) Run(ctx context.Context, nodes []string) (drain.Summary, error) {
	return d.RunWithin(ctx, nodes, d.req.Drain.Timeout)
}

// RunWithin implements nodepool.TimedDrainer: it drains nodes within timeout (0: none).
func (d *BatchDrainer) RunWithin(ctx context.Context, nodes []string, timeout time.Duration) (drain.Summary, error) {
	req := d.req
	req.Drain.Timeout = timeout
	eng, err := d.o.engine(req, d.events)
	if err != nil {
		return drain.Summary{}, err
	}
	sum, err := eng.Run(ctx, nodes)
	d.total = d.total.Add(sum)
	return sum, err
}

// Total is every batch's summary added up (what is pending is the last batch's).
func (d *BatchDrainer) Total() drain.Summary { return d.total }
