package operation

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/reconciler"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool/roll"
)

// Rollout rolls the new NoExecute taints of pool req.Pool out (pool sync --rollout)
// through Run (req.Action becomes Rollout) and, once they are out, runs one pass of the
// reconciler for everything else of the pool (labels, other taints, status). See
// runRollout.
func (o *Operator) Rollout(ctx context.Context, req Request, events chan<- event.Event) (*roll.RolloutResult, Summary, error) {
	req.Action = Rollout
	sum, err := o.Run(ctx, req, events)
	if err != nil {
		return sum.Rollout, sum, err
	}
	r := &reconciler.Reconciler{Client: o.Pools, Kube: o.Kube, Only: map[string]bool{req.Pool: true}}
	_, err = r.Sync(ctx, req.Pool)
	return sum.Rollout, sum, err
}

// AutoRollout is the controller's rollout of held-back NoExecute taints (pool controller
// --rollout), on the operator's clients.
func (o *Operator) AutoRollout(logger klog.Logger) *AutoRollout {
	return &AutoRollout{Operator: &Operator{Kube: o.Kube, Pools: o.Pools, Logger: logger, Clock: o.Clock}}
}

// runRollout rolls the new NoExecute taints of pool req.Pool out to pending, its members
// that lack them as ro.Start found them: one run of the drain engine in the pool's window (roll.Window), each node
// drained of the pods the taints would remove (only those leave), then tainted and
// uncordoned as soon as it is drained (roll.Rollout). The pool's RolloutProgressing
// condition follows the run's events.
func (o *Operator) runRollout(ctx context.Context, req Request, ro *roll.Rollout, pending []string, events chan<- event.Event) (Summary, error) {
	p := ro.Pool()
	w := wiring{only: roll.EvictOnly(p), rolling: ro.Window(), steps: ro}
	req.Drain.MaxParallelNodes = p.MaxUnavailableOrDefault()
	// The run's events pass through the rollout (the pool's condition names what it
	// waits on) on their way out; the relay ends before runRollout returns.
	relay := make(chan event.Event)
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		for ev := range relay {
			ro.Observe(ctx, ev)
			events <- ev
		}
	}()
	eng, err := o.engine(req, relay, w)
	var sum Summary
	if err == nil {
		sum.Summary, err = eng.Run(ctx, pending)
	}
	close(relay)
	<-relayed
	ro.Finish(ctx, err)
	res := ro.Result()
	sum.Rollout = &res
	return sum, err
}
