package nodepool

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/drain"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// AutoRollout lets the controller roll a held-back NoExecute taint out by itself, as
// "pool sync --rollout" does: one Rollout per pool at a time, each in its own goroutine,
// all of which end before Start returns (it is a manager Runnable).
type AutoRollout struct {
	Kube   kubernetes.Interface
	Client client.Client
	Logger klog.Logger

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
	log := a.Logger.WithValues("pool", pool)
	p, err := GetPool(ctx, a.Client, pool)
	if err != nil {
		log.Error(err, "rollout: get pool")
		return
	}
	ro := &Rollout{Kube: a.Kube, Client: a.Client}
	ro.Drainer = &engineDrainer{kube: a.Kube, only: EvictOnly(p), log: log, blocked: func(ev event.Event) {
		ro.Blocked(ctx, ev.Node, ev.PDB, ev.Message)
	}}
	ro.Progress = func(ev MoveEvent) { log.Info("rollout", "step", ev.Type, "message", ev.Message) }
	res, err := ro.Run(ctx, pool)
	if err != nil {
		log.Error(err, "rollout stopped; it starts again at the pool's next reconcile")
		return
	}
	log.Info("rollout complete", "nodes", res.Nodes, "drained", res.Drained, "removed", res.Removed)
}

// engineDrainer drains through the drain engine with a pool rollout's settings
// (DaemonSet pods stay, only the pods the taint would remove leave), logging its events.
type engineDrainer struct {
	kube    kubernetes.Interface
	only    func(*corev1.Pod) bool
	log     klog.Logger
	blocked func(event.Event)
}

// Run implements Drainer.
func (d *engineDrainer) Run(ctx context.Context, nodes []string) (drain.Summary, error) {
	events := make(chan event.Event, 256)
	eng, err := drain.NewEngine(drain.Config{Client: d.kube, Events: events, Logger: d.log,
		IgnoreDaemonSets: true, GracePeriodSeconds: -1, Only: d.only, RecordEvents: true})
	if err != nil {
		return drain.Summary{}, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			if ev.Type == event.EventEvictionBlocked && ev.PDB != "" {
				d.blocked(ev)
			}
			d.log.V(1).Info("drain", "type", ev.Type, "node", ev.Node, "pod", ev.Pod, "message", ev.Message)
		}
	}()
	sum, err := eng.Run(ctx, nodes)
	close(events)
	<-done
	return sum, err
}
