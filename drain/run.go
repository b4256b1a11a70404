package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// Run drains the named nodes: it plans (changing nothing if any node fails kubectl's pod
// filters), cordons every node of the batch (kubectl's order), then evicts from at most
// MaxParallelNodes nodes at a time, only through the Eviction API and as far as the
// budgets allow, acting on each node's live pods, and waits for the pods to be gone.
// It returns when every node is drained or has failed, or with a TimeoutError or an
// InterruptedError (the context ended). Every goroutine it started has ended when it
// returns, and every event has been delivered: nothing is sent on Events afterwards.
func (e *Engine) Run(ctx context.Context, names []string) (Summary, error) {
	e.out = newOutbox(e.cfg.Events)
	defer e.out.close()
	began := e.cfg.Clock.Now()
	pf, err := e.preflight(ctx, names)
	if err != nil {
		return Summary{}, err
	}
	if e.cfg.Permit != nil { // before anything is said or changed, as the command's preflight
		if err := e.cfg.Permit(ctx, pf.permits); err != nil {
			return Summary{NodesPending: len(pf.plan.Nodes)}, err
		}
	}
	e.emit(event.Event{Type: event.EventPlan, Plan: pf.plan})
	if problems := pf.plan.Problems(); len(problems) > 0 {
		return Summary{NodesFailed: len(pf.plan.Nodes)}, &PreflightError{Problems: problems}
	}
	for _, n := range pf.plan.Nodes {
		for _, w := range n.Warnings {
			e.emit(event.Event{Type: event.EventWarning, Node: n.Name, Message: w})
		}
	}
	if sum, err := e.gate(pf); err != nil {
		return sum, err
	}
	if e.cfg.DryRun != DryRunNone {
		return e.dryRun(ctx, pf)
	}
	if ctx.Err() != nil {
		return Summary{NodesPending: len(pf.plan.Nodes)}, &InterruptedError{}
	}
	r := newRun(e, pf)
	r.rec = e.startRecorder()
	defer r.rec.stop() // flushed and shut down before the outbox closes (deferred after it)
	r.surges.resumeSurges(ctx)
	sum, err := r.run(ctx)
	sum.Elapsed = e.cfg.Clock.Since(began)
	return sum, err
}

func newRun(e *Engine, pf *preflight) *run {
	r := &run{
		core: newCore(&e.cfg, e.emit),
		e:    e, pf: pf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(e.cfg.RateLimiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Clock: e.cfg.Clock}),
		pods: map[string]*podState{}, nodes: map[string]*nodeState{}, done: make(chan struct{}),
		planned: newPlannedState(pf, e.cfg.Policy),
	}
	r.budgets = newBudgets(&r.core, r, e.cfg.Ledger)
	r.hold = newNodeHolds(&r.core, r)
	r.roller = newRoller(&r.core, r, pf.plan.Nodes, pf.nodes)
	r.surges = newSurger(&r.core, r)
	r.pace = newPacing(&r.core, r, e.cfg.PaceMargin)
	r.steps = newNodeSteps(&r.core, r)
	return r
}

func (r *run) run(parent context.Context) (Summary, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.ctx = ctx
	r.began = r.e.cfg.Clock.Now()
	for _, np := range r.pf.plan.Nodes {
		r.nodes[np.Name] = &nodeState{name: np.Name, plan: np, finishedCh: make(chan struct{})}
	}
	factory, err := r.startPDBInformer(ctx)
	if factory != nil {
		defer factory.Shutdown()
	}
	if err != nil {
		return r.finish(nil, err)
	}
	stopSharing := r.budgets.start(ctx, r.e.cfg.OnBlocked == OnBlockedSkip || r.e.cfg.OnBlocked == OnBlockedForce)
	var workers sync.WaitGroup
	for range r.e.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for r.processNext() {
			}
		}()
	}
	r.goroutine(func() { r.pace.paceTicks(ctx) })
	r.goroutine(func() { r.drainNodes(ctx) })
	r.goroutine(func() { r.hold.heartbeat(ctx) })
	if r.e.cfg.DryRun == DryRunNone {
		r.goroutine(func() { r.hold.watchLeaves(ctx) })
	}
	if h := r.e.hooks.started; h != nil {
		h(r)
	}

	var timeout <-chan time.Time
	if r.e.cfg.Timeout > 0 {
		t := r.e.cfg.Clock.NewTimer(r.e.cfg.Timeout)
		defer t.Stop()
		timeout = t.C()
	}
	var result error
	select {
	case <-r.done:
	case <-timeout:
		result = &TimeoutError{Timeout: r.e.cfg.Timeout}
	case <-parent.Done():
		result = &InterruptedError{}
	}
	cancel()
	r.queue.ShutDownWithDrain()
	workers.Wait()
	stopSharing()
	r.wg.Wait()
	r.releases.Wait()
	factory.Shutdown()
	if result != nil && !errors.Is(context.Cause(parent), ErrPaused) {
		r.hold.releaseUnfinished(result) // the nodes it holds stay cordoned, failed, with why
	}
	return r.finish(result, nil)
}

// finish builds the summary once every goroutine has ended, so its counters are final.
func (r *run) finish(result, startErr error) (Summary, error) {
	r.lock()
	defer r.unlock()
	blockers := r.pendingLocked(r.blockersLocked())
	policyErr := r.policyResultLocked()
	switch err := result.(type) { // what it still waited for: nodes another run holds, then pods
	case *TimeoutError:
		err.Blockers = slices.Concat(r.waitingOnHoldersLocked(), blockers)
	case *InterruptedError:
		err.Blockers = slices.Concat(r.waitingOnHoldersLocked(), blockers)
	}
	for _, np := range r.pf.plan.Nodes { // in plan order
		if !r.nodes[np.Name].finished {
			r.sum.NodesPending++
			r.sum.PendingNodes = append(r.sum.PendingNodes, np.Name)
		}
	}
	r.sum.PodsPending = r.leftLocked(blockers) // with the pods of the nodes given up
	r.sum.PendingBlocks = blockers
	if startErr != nil {
		return r.sum, startErr
	}
	if result == nil {
		result = policyErr // failed, skipped or not started nodes
	}
	if result == nil {
		result = r.forcedResultLocked() // finished by force (force.go)
	}
	return r.sum, result
}

// startPDBInformer watches every PodDisruptionBudget; a change of one wakes as many pods
// waiting on it as it has room for.
func (r *run) startPDBInformer(ctx context.Context) (informers.SharedInformerFactory, error) {
	f := informers.NewSharedInformerFactoryWithOptions(r.e.cfg.Client, 0, informers.WithTransform(trimManagedFields))
	inf := f.Policy().V1().PodDisruptionBudgets().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.pdbChanged,
		UpdateFunc: func(_, obj any) { r.pdbChanged(obj) },
		DeleteFunc: r.pdbChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("watch poddisruptionbudgets: %w", err)
	}
	r.budgets.readFrom(inf.GetIndexer())
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		if ctx.Err() != nil {
			return f, &InterruptedError{}
		}
		return f, fmt.Errorf("watch poddisruptionbudgets: %w", ctx.Err())
	}
	return f, nil
}

// NewEngine checks the wiring, asserts the settings (validated by their front end:
// Settings.AssertValid), fills the wiring's defaults and returns an Engine.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Client == nil || cfg.Events == nil {
		return nil, &ConfigError{msg: "a client and an events channel are required"}
	}
	if err := cfg.wiringError(); err != nil {
		return nil, err
	}
	if err := cfg.AssertValid(); err != nil {
		return nil, err
	}
	cfg.Settings = cfg.withZeroDefaults()
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = DefaultRateLimiter()
	}
	if cfg.Ledger == nil {
		cfg.Ledger = NewLedger()
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = klog.Background()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.EventClient == nil {
		cfg.EventClient = cfg.Client
	}
	if cfg.Probe == nil {
		cfg.Probe = versionProbe(cfg.Client)
	}
	cfg.diagnoseDefaults()
	cfg.Origin = cfg.Origin.WithID()
	return &Engine{cfg: cfg}, nil
}
