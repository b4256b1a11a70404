package operation

import (
	"context"
	"errors"

	"k8s.io/klog/v2"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/nodepool"
)

// Rollout rolls the new NoExecute taints of pool req.Pool out (pool sync --rollout):
// node by node at the pool's maxUnavailable, each batch drained through the engine with
// req's drain settings, only the pods the taints would remove leaving. The drains' and
// the rollout's events go to events, in order; a drain's blocked event names the budget
// the rollout waits on in the pool's RolloutProgressing condition. Once the taints are
// out, one pass of the reconciler applies everything else of the pool (labels, other
// taints, status).
func (o *Operator) Rollout(ctx context.Context, req Request, events chan<- event.Event) (*nodepool.RolloutResult, Summary, error) {
	if o.Pools == nil {
		return nil, Summary{}, errors.New("operation: a rollout needs a NodePool client")
	}
	p, err := nodepool.GetPool(ctx, o.Pools, req.Pool)
	if err != nil {
		return nil, Summary{}, err
	}
	req.Drain.Only = nodepool.EvictOnly(p) // only the pods the taint would remove leave
	ro := &nodepool.Rollout{Kube: o.Kube, Client: o.Pools, Timeout: req.Drain.Timeout}
	// Every event passes through here on its way out: a blocked one tells the pool's
	// condition which budget the rollout waits on. The goroutine ends before Rollout does.
	tee := make(chan event.Event, 64)
	teeDone := make(chan struct{})
	go func() {
		defer close(teeDone)
		for ev := range tee {
			if ev.Type == event.EventEvictionBlocked && ev.PDB != "" {
				ro.Blocked(ctx, ev.Node, ev.PDB, ev.Message)
			}
			events <- ev
		}
	}()
	d := o.Drainer(req, tee)
	ro.Drainer = d
	ro.Progress = func(ev nodepool.MoveEvent) {
		for _, e := range MoveEvents(ev) {
			o.emit(tee, e)
		}
	}
	res, err := ro.Run(ctx, req.Pool)
	close(tee)
	<-teeDone
	sum := Summary{Summary: d.Total()}
	if err != nil {
		return res, sum, err
	}
	r := &nodepool.Reconciler{Client: o.Pools, Kube: o.Kube, Only: map[string]bool{req.Pool: true}}
	_, err = r.Sync(ctx, req.Pool)
	return res, sum, err
}

// AutoRollout is the controller's rollout of held-back NoExecute taints (pool controller
// --rollout), on the operator's clients.
func (o *Operator) AutoRollout(logger klog.Logger) *nodepool.AutoRollout {
	return &nodepool.AutoRollout{Kube: o.Kube, Client: o.Pools, Logger: logger}
}
