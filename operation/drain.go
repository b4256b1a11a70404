package operation

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// wiring is what the layer itself adds to a run of the engine: which pods of each node
// go (a rollout's), a rolling window and the steps around each node (a pool drain, a
// move, a rollout).
type wiring struct {
	only    func(*corev1.Pod) bool
	rolling drain.Admitter
	steps   drain.NodeSteps
}

// engine builds the drain engine, sending on events: req's settings as their front end
// validated them, the caller's wiring (Request's RecordEvents, ClientBurst, WaitInterval,
// Ledger, AfterCordon), the run's origin (withOrigin), the layer's clients, logger and
// surger, and w. This is the one place a drain.Config is made. A MaxParallelNodes still
// 0 here (no pool's) is the engine's to read as DefaultSettings'.
func (o *Operator) engine(req Request, events chan<- event.Event, w wiring) (*drain.Engine, error) {
	cfg := drain.Config{Client: o.Kube, EventClient: o.EventKube, Events: events, Logger: o.logger(),
		Settings: req.Drain, Origin: req.origin,
		RecordEvents: req.RecordEvents, ClientBurst: req.ClientBurst, WaitInterval: req.WaitInterval,
		Ledger: req.Ledger, AfterCordon: req.AfterCordon,
		Only: w.only, Rolling: w.rolling, Steps: w.steps}
	cfg.Surge = surge.New(o.Kube)
	if !req.Surge {
		cfg.Surge = surge.New(o.Kube).ResumeOnly()
	}
	if req.Surge {
		cfg.Permit = o.surgePermit(req.Drain.DryRun)
	}
	eng, err := drain.NewEngine(cfg)
	if err != nil {
		return nil, err // a *UsageError naming the setting (the engine's door, drain.Settings.Validate's words)
	}
	return eng, nil
}

// planDrain is the drain engine's plan of names (nothing is sent on any channel).
func (o *Operator) planDrain(ctx context.Context, req Request, names []string) (*event.Plan, error) {
	eng, err := o.engine(req, make(chan event.Event), wiring{})
	if err != nil {
		return nil, err
	}
	return eng.Plan(ctx, names)
}

// runDrain drains names: the members of a pool roll in its window (at most its
// maxUnavailable, unless MaxParallelNodes is set); anything else is one run of the engine.
// A dry run of a pool plans with the pool's maxUnavailable at once.
func (o *Operator) runDrain(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	if pool != nil && req.Drain.MaxParallelNodes == 0 {
		if req.Drain.DryRun == drain.DryRunNone {
			return o.runPool(ctx, req, names, pool, events)
		}
		req.Drain.MaxParallelNodes = pool.MaxUnavailableOrDefault()
	}
	eng, err := o.engine(req, events, wiring{})
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}

// runPool is a pool's rolling drain: one run of the engine in the pool's window
// (roll.Window): each node cordoned as it starts, at most the pool's maxUnavailable of
// its members counted at once, and a node starts as soon as another finishes.
// Drain.Timeout bounds the whole drain.
func (o *Operator) runPool(ctx context.Context, req Request, names []string, pool *v1alpha1.NodePool, events chan<- event.Event) (Summary, error) {
	w := &roll.Window{Kube: o.Kube, Pools: map[string]*v1alpha1.NodePool{pool.Name: pool}, Of: map[string][]string{}}
	for _, n := range names {
		w.Of[n] = []string{pool.Name}
	}
	req.Drain.MaxParallelNodes = pool.MaxUnavailableOrDefault()
	eng, err := o.engine(req, events, wiring{rolling: w})
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}
