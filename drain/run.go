package drain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

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

// emit posts ev to the outbox; it never blocks, so it may be called under a lock.
func (e *Engine) emit(ev event.Event) {
	if ev.Time.IsZero() {
		ev.Time = e.cfg.Clock.Now()
	}
	e.out.post(ev)
}

// run is the state of one drain in progress. Its core's lock guards the fields below core. Code
// that holds the lock decides and records; what it must do outside the lock (API calls,
// workqueue adds) it queues with later, and the effects run when unlock releases it.
type run struct {
	e   *Engine
	pf  *preflight
	ctx context.Context
	rec *recorder // the run's node Events (nil: none recorded)

	// core is the lock with its effects, the goroutines, events, clock and
	// configuration every part shares (core.go).
	core
	queue workqueue.TypedRateLimitingInterface[string]
	pdbs  cache.Indexer
	// releases counts the writes that let go nodes that will not start (blocked.go
	// notStartedLocked): effects that may run on an informer's goroutine, so that Run
	// returns only once they are done.
	releases sync.WaitGroup

	pods  map[string]*podState
	nodes map[string]*nodeState
	// budgets is the budgets part: book, watch, blocked clocks and diagnosis (budgets_part.go).
	*budgets
	// The concerns: each keeps its own state, guarded by mu, and its methods (doc.go).
	hold    nodeHolds  // the node records this run holds, and leaves (hold.go, leave.go)
	pace    pacing     // the disruption controller's lag and the eviction pace (pace_run.go)
	roller  roller     // a rolling drain (rolling.go)
	steps   nodeSteps  // the caller's node steps (steps.go)
	surges  surger     // --surge (surge.go)
	shared  sharedPods // one pod informer for every node, when many drain at once (pods.go)
	roll    *rolling   // a rolling drain's wake-ups (rolling.go); nil otherwise
	fast    fastStart  // the run's own cordons (faststart.go; its own lock)
	sum     Summary
	pol     runPolicy
	planned plannedState // dead nodes and force (deadnode.go, force.go)
	done    chan struct{}
	// vaInf watches VolumeAttachments, started once by the first volume wait (quiet.go).
	vaOnce sync.Once
	vaInf  cache.SharedIndexInformer
	// began is when the run's timeout started (a forced grace ends before it, force.go).
	began time.Time
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

// add and addAfter queue a pod for a worker, once the lock is released.
func (r *run) add(key string) { r.later(func() { r.queue.Add(key) }) }

func (r *run) addAfter(key string, d time.Duration) {
	if d <= 0 {
		r.add(key)
		return
	}
	r.later(func() { r.queue.AddAfter(key, d) })
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
	stopSharing := r.book.shareLedger() // the process's other runs (ledger.go)
	var workers sync.WaitGroup
	for range r.e.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for r.processNext() {
			}
		}()
	}
	r.goroutine(func() { r.watch.watchdog(ctx) })
	r.goroutine(func() { r.diag.waitLines(ctx) })
	r.goroutine(func() { r.pace.paceTicks(ctx) })
	r.goroutine(func() { r.drainNodes(ctx) })
	r.goroutine(func() { r.hold.heartbeat(ctx) })
	if r.e.cfg.DryRun == DryRunNone {
		r.goroutine(func() { r.hold.watchLeaves(ctx) })
	}
	r.goroutine(func() { r.diag.sayPastDeadline(ctx) })
	if r.e.cfg.OnBlocked == OnBlockedSkip || r.e.cfg.OnBlocked == OnBlockedForce {
		r.goroutine(func() { r.blocked.watchBlocked(ctx) })
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
	switch err := result.(type) {
	case *TimeoutError:
		err.Blockers = blockers
	case *InterruptedError:
		err.Blockers = blockers
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
	r.book.pdbs = inf.GetIndexer()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		if ctx.Err() != nil {
			return f, &InterruptedError{}
		}
		return f, fmt.Errorf("watch poddisruptionbudgets: %w", ctx.Err())
	}
	return f, nil
}

func trimManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
