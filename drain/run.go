package drain

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubectl-maintenance/kubectl-maintenance/pdb"
)

// Run drains the named nodes: it plans (changing nothing if any node fails kubectl's pod
// filters), cordons at most MaxParallelNodes nodes at a time, evicts their pods only
// through the Eviction API as far as the budgets allow, and waits for the pods to be gone.
// It returns when every node is drained, or with a TimeoutError, an InterruptedError (the
// context ended) or an error naming the nodes that failed.
func (e *Engine) Run(ctx context.Context, names []string) (Summary, error) {
	began := e.cfg.Clock.Now()
	pf, err := e.preflight(ctx, names)
	if err != nil {
		return Summary{}, err
	}
	e.emit(Event{Type: EventPlan, Plan: pf.plan})
	if problems := pf.plan.Problems(); len(problems) > 0 {
		return Summary{NodesFailed: len(pf.plan.Nodes)}, &PreflightError{Problems: problems}
	}
	for _, n := range pf.plan.Nodes {
		for _, w := range n.Warnings {
			e.emit(Event{Type: EventWarning, Node: n.Name, Message: w})
		}
	}
	if e.cfg.DryRun != DryRunNone {
		return e.dryRun(ctx, pf)
	}
	r := newRun(e, pf)
	sum, err := r.run(ctx)
	sum.Elapsed = e.cfg.Clock.Since(began)
	return sum, err
}

func (e *Engine) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = e.cfg.Clock.Now()
	}
	e.cfg.Events <- ev
}

// run is the state of one drain in progress.
type run struct {
	e   *Engine
	pf  *preflight
	ctx context.Context

	queue workqueue.TypedRateLimitingInterface[string]
	pdbs  cache.Indexer

	mu       sync.Mutex
	pods     map[string]*podState
	parked   map[string]map[string]bool // pdb key -> pod keys waiting on it
	inflight map[string]int             // pdb key -> accepted evictions its status has not shown yet
	stores   map[string]cache.Store     // node -> its pods
	nodes    map[string]*nodeState
	sum      Summary
	done     chan struct{}
}

type nodeState struct {
	name      string
	remaining int
	critical  []*podState // held back until the ordinary pods are gone
	finished  bool
	onDone    func()
}

func newRun(e *Engine, pf *preflight) *run {
	return &run{
		e: e, pf: pf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(e.cfg.RateLimiter,
			workqueue.TypedRateLimitingQueueConfig[string]{Clock: e.cfg.Clock}),
		pods: map[string]*podState{}, parked: map[string]map[string]bool{}, inflight: map[string]int{},
		stores: map[string]cache.Store{}, nodes: map[string]*nodeState{}, done: make(chan struct{}),
	}
}

func (r *run) run(parent context.Context) (Summary, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.ctx = ctx
	if err := r.startPDBInformer(ctx); err != nil {
		return r.sum, err
	}
	var workers sync.WaitGroup
	for range r.e.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for r.processNext() {
			}
		}()
	}
	go r.drainNodes(ctx)

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

	r.mu.Lock()
	defer r.mu.Unlock()
	blockers := r.blockersLocked()
	switch err := result.(type) {
	case *TimeoutError:
		err.Blockers = blockers
	case *InterruptedError:
		err.Blockers = blockers
	}
	for _, n := range r.nodes {
		if !n.finished {
			r.sum.NodesPending++
		}
	}
	r.sum.PodsPending = len(blockers)
	r.sum.PendingBlocks = blockers
	if result == nil && r.sum.NodesFailed > 0 {
		result = fmt.Errorf("%d of %d nodes failed to drain", r.sum.NodesFailed, len(r.pf.plan.Nodes))
	}
	return r.sum, result
}

// drainNodes starts nodes, at most MaxParallelNodes at a time, in plan order.
func (r *run) drainNodes(ctx context.Context) {
	slots := make(chan struct{}, r.e.cfg.MaxParallelNodes)
	r.mu.Lock()
	for _, np := range r.pf.plan.Nodes {
		r.nodes[np.Name] = &nodeState{name: np.Name}
	}
	r.mu.Unlock()
	for _, np := range r.pf.plan.Nodes {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		go func(np NodePlan) {
			finished := r.startNode(ctx, np)
			select {
			case <-finished:
			case <-ctx.Done():
			}
			<-slots
		}(np)
	}
}

// startNode cordons the node, records its state, watches its pods and queues them.
// The returned channel closes when the node is drained or has failed.
func (r *run) startNode(ctx context.Context, np NodePlan) <-chan struct{} {
	finished := make(chan struct{})
	node := r.pf.nodes[np.Name]
	fail := func(err error) {
		r.e.emit(Event{Type: EventNodeFailed, Node: np.Name, Message: err.Error()})
		r.mu.Lock()
		r.sum.NodesFailed++
		ns := r.nodes[np.Name]
		ns.finished = true
		r.checkAllDoneLocked()
		r.mu.Unlock()
		close(finished)
	}
	already, err := Cordon(ctx, r.e.cfg.Client, node, false)
	if err != nil {
		fail(err)
		return finished
	}
	r.e.emit(Event{Type: EventNodeCordoned, Node: np.Name, Already: already})
	if !already {
		r.recordEvent(np.Name, corev1.EventTypeNormal, "Cordoned", "kubectl-maintenance cordoned the node to drain it")
	}
	if err := SetDrainState(ctx, r.e.cfg.Client, np.Name, StateDraining); err != nil {
		fail(err)
		return finished
	}
	r.recordEvent(np.Name, corev1.EventTypeNormal, "DrainStarted", fmt.Sprintf("kubectl-maintenance is draining the node (%d pods to evict)", len(np.Steps)))
	store, err := r.watchNodePods(ctx, np.Name)
	if err != nil {
		fail(err)
		return finished
	}
	r.mu.Lock()
	ns := r.nodes[np.Name]
	r.stores[np.Name] = store
	ns.remaining = len(np.Steps)
	var ordinary []*podState
	for _, s := range np.Steps {
		st := &podState{pod: s.Pod, key: s.Pod.Namespace + "/" + s.Pod.Name, node: np.Name, wave: s.Wave}
		r.pods[st.key] = st
		if pdb.IsCritical(s.Pod) {
			ns.critical = append(ns.critical, st)
		} else {
			ordinary = append(ordinary, st)
		}
	}
	ns.onDone = func() { close(finished) }
	if len(ordinary) == 0 {
		r.releaseCriticalLocked(ns)
	}
	for _, st := range ordinary {
		r.queue.Add(st.key)
	}
	if ns.remaining == 0 {
		r.finishNodeLocked(ns)
	}
	r.mu.Unlock()
	return finished
}

// watchNodePods starts an informer over the node's pods (field selector spec.nodeName)
// and returns its store once synced. Deletions are seen here, by UID; no pod is polled.
func (r *run) watchNodePods(ctx context.Context, node string) (cache.Store, error) {
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	c := r.e.cfg.Client
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	if err := inf.SetTransform(trimPod); err != nil {
		return nil, fmt.Errorf("watch pods on node %s: %w", node, err)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { r.podChanged(obj) },
		DeleteFunc: func(obj any) { r.podChanged(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch pods on node %s: %w", node, err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watch pods on node %s: %w", node, ctx.Err())
	}
	return inf.GetStore(), nil
}

// startPDBInformer watches every PodDisruptionBudget; a change of one wakes the pods
// waiting on it.
func (r *run) startPDBInformer(ctx context.Context) error {
	f := informers.NewSharedInformerFactoryWithOptions(r.e.cfg.Client, 0, informers.WithTransform(trimManagedFields))
	inf := f.Policy().V1().PodDisruptionBudgets().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.pdbChanged,
		UpdateFunc: func(_, obj any) { r.pdbChanged(obj) },
		DeleteFunc: r.pdbChanged,
	})
	if err != nil {
		return fmt.Errorf("watch poddisruptionbudgets: %w", err)
	}
	r.pdbs = inf.GetIndexer()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch poddisruptionbudgets: %w", ctx.Err())
	}
	return nil
}

func (r *run) recordEvent(node, eventType, reason, message string) {
	if !r.e.cfg.RecordEvents {
		return
	}
	if err := recordNodeEvent(r.ctx, r.e.cfg.Client, r.e.cfg.Clock, node, eventType, reason, message); err != nil {
		r.e.cfg.Logger.V(2).Info("could not record node event", "node", node, "err", err)
	}
}

// trimPod drops what the engine never reads from cached pods.
func trimPod(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields = nil
		p.Spec.Containers = nil
		p.Spec.InitContainers = nil
		p.Spec.Volumes = nil
		p.Status.ContainerStatuses = nil
		p.Status.InitContainerStatuses = nil
	}
	return obj, nil
}

func trimManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
