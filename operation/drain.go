package operation

import (
	"context"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/api/v1alpha1"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
	"github.com/kubectl-maintenance/kubectl-maintenance/surge"
)

// engine builds the drain engine with req's settings, sending on events.
func (o *Operator) engine(req Request, events chan<- event.Event) (*drain.Engine, error) {
	cfg := req.Drain
	cfg.Client, cfg.Events, cfg.DryRun = o.Kube, events, req.DryRun
	if cfg.EventClient == nil {
		cfg.EventClient = o.EventKube // nil: the engine's default, Kube
	}
	if cfg.Surge == nil {
		cfg.Surge = surge.New(o.Kube)
		if !req.Surge {
			cfg.Surge = surge.New(o.Kube).ResumeOnly()
		}
	}
	if req.Surge && cfg.Permit == nil {
		cfg.Permit = o.surgePermit(req.DryRun)
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = o.logger()
	}
	eng, err := drain.NewEngine(cfg)
	if err != nil {
		return nil, err // a *UsageError naming the setting (drain.Config.Validate)
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

// runDrain drains names: the members of a pool roll in its window (at most its
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
	req.Drain.Rolling = w
	eng, err := o.engine(req, events)
	if err != nil {
		return Summary{}, err
	}
	sum, err := eng.Run(ctx, names)
	return Summary{Summary: sum}, err
}
