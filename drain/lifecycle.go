package drain

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// drainNodes cordons the whole batch first (kubectl's order, so that a pod moves once),
// then drains at most MaxParallelNodes nodes at a time, in plan order. A rolling drain
// (Config.Rolling) is drainRolling instead.
func (r *run) drainNodes(ctx context.Context) {
	if r.e.cfg.Rolling != nil {
		if f := r.e.cfg.AfterCordon; f != nil {
			// A rolling drain cordons each node as it starts and waits for no batch: it
			// tells its batch at once (a done context: f does not wait), so the other runs
			// admitted with it do not wait on it.
			done, cancel := context.WithCancel(ctx)
			cancel()
			f(done)
		}
		r.roller.drainRolling(ctx)
		return
	}
	if sharedPodsFor(len(r.pf.plan.Nodes), r.e.cfg.MaxParallelNodes) {
		// The shared pod informer is built from the plan's list while the cordons are in
		// flight (CPU here, requests there); the first node's drain waits for it.
		r.goroutine(func() { _, _ = r.sharedInformer() }) // its error is the first node's (nodePods)
	}
	r.cordonAll(ctx)
	if f := r.e.cfg.AfterCordon; f != nil && ctx.Err() == nil {
		f(ctx) // the other runs admitted with this one cordon theirs (Config.AfterCordon)
	}
	if ctx.Err() != nil {
		r.stopUnstarted(r.pf.plan.Nodes)
		return
	}
	slots := make(chan struct{}, r.e.cfg.MaxParallelNodes)
	deadline, stop := r.deadline()
	defer stop()
	for i, np := range r.pf.plan.Nodes {
		r.lock()
		skip := r.nodes[np.Name].finished
		r.unlock()
		if skip {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-deadline:
		case <-ctx.Done():
			r.stopUnstarted(r.pf.plan.Nodes[i:])
			return
		}
		r.lock()
		if reason, msg := r.mayStartLocked(); reason != "" {
			r.notStartedLocked(r.pf.plan.Nodes[i:], reason, msg)
			r.unlock()
			return
		}
		r.unlock()
		ns := r.nodes[np.Name]
		r.goroutine(func() {
			defer func() { <-slots }()
			r.drainNode(ctx, ns)
		})
	}
}

// drainNode reads the node live, watches its pods, evicts what kubectl's filters would
// evict from the live view, and returns when the node is drained or failed, or ctx ends.
// Its pod informer stops when it returns.
func (r *run) drainNode(ctx context.Context, ns *nodeState) {
	nctx, stop := context.WithCancel(ctx)
	defer stop()
	err := r.hold.takeNode(nctx, ns)
	r.lock()
	ns.startedAt = r.e.cfg.Clock.Now() // cordoned by now (the settle counts from here)
	if r.roller.drainedBefore(ns.name) > 0 {
		// An earlier run (a leader that handed over) drained it, settle included: its
		// cordon is old, so only the last look is left.
		ns.startedAt = time.Time{}
	}
	r.unlock()
	var store cache.Store
	if err == nil {
		store, err = r.nodePods(nctx, ns) // pods.go: shared or per node
	}
	if err != nil {
		r.lock()
		if ctx.Err() == nil && !ns.finished {
			r.failNodeLocked(ns, err.Error())
		}
		r.unlock()
		return
	}
	r.lock()
	ns.store = store
	ns.looking = true
	r.movedLocked(ns.name)
	r.unlock()
	r.recordEvent(ns.name, corev1.EventTypeNormal, "DrainStarted", "kubectl-maintenance is draining the node")
	r.look(ns)
	select {
	case <-ns.finishedCh:
	case <-ctx.Done():
	}
}
