package operation

import (
	"context"
	"sync"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// AutoRollout lets the pool controller roll a held-back NoExecute taint out by itself,
// as "pool sync --rollout" does (the same Rollout request, so the same window): one
// rollout per pool at a time, each in its own goroutine, all of which end before Start
// returns (it is a manager Runnable). It implements reconciler.Trigger.
type AutoRollout struct {
	// Operator runs the rollouts (its Logger receives their events).
	Operator *Operator

	mu      sync.Mutex
	ctx     context.Context
	running map[string]bool
	wg      sync.WaitGroup
}

// Start runs until ctx ends, then waits for the rollouts in progress to stop.
func (a *AutoRollout) Start(ctx context.Context) error {
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	<-ctx.Done()
	a.mu.Lock()
	a.ctx = nil // no rollout starts from here on
	a.mu.Unlock()
	a.wg.Wait()
	return nil
}

// Trigger starts a rollout of pool unless one runs already (or the runner has not
// started, or has stopped). It never blocks.
func (a *AutoRollout) Trigger(pool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx == nil || a.running[pool] {
		return
	}
	if a.running == nil {
		a.running = map[string]bool{}
	}
	a.running[pool] = true
	a.wg.Add(1)
	go a.run(a.ctx, pool) // ends with the context; Start waits for it
}

func (a *AutoRollout) run(ctx context.Context, pool string) {
	defer a.wg.Done()
	defer func() {
		a.mu.Lock()
		delete(a.running, pool)
		a.mu.Unlock()
	}()
	log := a.Operator.logger().WithValues("pool", pool)
	events := make(chan event.Event)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for ev := range events {
			log.V(1).Info("rollout", "type", ev.Type, "node", ev.Node, "pod", ev.Pod, "message", ev.Message)
		}
	}()
	// DaemonSet pods stay (the taint removes them); only the pods the taint would
	// remove leave.
	sum, err := a.Operator.Run(ctx, Request{Action: Rollout, Pool: pool, Drain: autoRolloutSettings(), RecordEvents: true}, events)
	close(events)
	<-logged
	if err != nil {
		log.Error(err, "rollout stopped; it starts again at the pool's next reconcile")
		return
	}
	if r := sum.Rollout; r != nil {
		log.Info("rollout complete", "nodes", r.Nodes, "drained", r.Drained, "removed", r.Removed)
	}
}

// autoRolloutSettings are the controller's rollout's drain settings: DefaultSettings, with
// DaemonSet pods ignored (the taint removes them), and no volume wait and no settle (a
// rollout's node is tainted and uncordoned, not powered off).
func autoRolloutSettings() drain.Settings {
	s := drain.DefaultSettings()
	s.IgnoreDaemonSets = true
	s.WaitForVolumeDetach, s.Settle = false, 0
	return s
}
