package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// nodeState is one node of the run. Guarded by run.mu.
type nodeState struct {
	name string
	plan event.NodePlan

	store     cache.Store // the node's live pods, once its drain started
	started   bool        // its pods are registered
	remaining int         // registered pods not gone yet
	heldBack  []*podState // held back until the pods of earlier order groups are gone (order.go)
	byUID     map[types.UID]*podState
	// ignored are live pods kubectl's filters keep (DaemonSet, mirror pods, ...).
	ignored map[types.UID]bool
	// returned are replacements that came back to the node (said once, not evicted).
	returned map[types.UID]bool
	// tolerating maps the controller UID of each evicted pod that tolerates the cordon
	// to the toleration, to recognise its replacement coming back.
	tolerating map[types.UID]string

	looking, lookAgain, finishing bool
	// failing: its failed state is being written (failNodeLocked).
	failing bool
	// cordoning: a rolling drain admitted the node; it counts as in progress from then on.
	cordoning bool
	// soaking: drained, its slot held for Policy.Soak (rolling.go soak).
	soaking          bool
	finished, failed bool
	finishedCh       chan struct{}
	pol              nodePolicy
	// Drain order (planned maintenance).
	//
	// expired are pods whose do-not-disrupt duration ended while they were left out:
	// looked at again once (donotdisrupt.go expiredLocked).
	expired map[types.UID]bool
	// When it is drained (quiet.go): startedAt is when its drain started (after its
	// cordon); quieting while the settle and the volume wait run; quiet once they ended
	// with nothing left, taken by the finish that follows.
	startedAt       time.Time
	quieting, quiet bool
}

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

// watchNodePods starts an informer over the node's pods (field selector spec.nodeName),
// counted in the run's goroutines, and returns its store once synced.
func (r *run) watchNodePods(ctx context.Context, ns *nodeState) (cache.Store, error) {
	sel := fields.OneTermEqualSelector("spec.nodeName", ns.name).String()
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
		return nil, fmt.Errorf("watch pods on node %s: %w", ns.name, err)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.podAdded(ns, obj) },
		UpdateFunc: func(old, obj any) { r.podChanged(obj); r.ruledPodChanged(ns, old, obj) },
		DeleteFunc: func(obj any) { r.podChanged(obj); r.ruledPodChanged(ns, nil, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch pods on node %s: %w", ns.name, err)
	}
	r.goroutine(func() { inf.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watch pods on node %s: %w", ns.name, ctx.Err())
	}
	return inf.GetStore(), nil
}

// podAdded is the node informer's Add: a pod the run does not know yet makes it look at
// the node again through kubectl's filters.
func (r *run) podAdded(ns *nodeState, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	r.lock()
	defer r.unlock()
	if ns.started && !ns.finished && r.unknownLocked(ns, p) {
		r.lookLocked(ns)
	}
}

func (r *run) unknownLocked(ns *nodeState, p *corev1.Pod) bool {
	return ns.byUID[p.UID] == nil && !ns.ignored[p.UID] && !ns.returned[p.UID]
}

// lookLocked asks for a look at the node (one at a time; one more if asked meanwhile).
func (r *run) lookLocked(ns *nodeState) {
	if ns.looking {
		ns.lookAgain = true
		return
	}
	ns.looking = true
	r.later(func() { r.look(ns) })
}

// look lists the node's pods through kubectl's own filters (GetPodsForDeletion) and
// registers every pod to evict that the run does not know yet; with nothing left, the
// node is drained.
func (r *run) look(ns *nodeState) {
	list, errs := r.podsForDeletion(ns, ns.store) // pods.go
	r.lock()
	defer r.unlock()
	ns.looking = false
	if ns.finished || r.ctx.Err() != nil {
		return
	}
	if list == nil {
		// The list failed (the API server may be away): look again later.
		r.lookLaterLocked(ns)
		return
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		sort.Strings(msgs) // kubectl builds them in map order
		r.failNodeLocked(ns, strings.Join(msgs, "; "))
		return
	}
	if !ns.started {
		ns.started = true
		ns.byUID, ns.ignored, ns.returned, ns.tolerating = map[types.UID]*podState{}, map[types.UID]bool{}, map[types.UID]bool{}, map[types.UID]string{}
	}
	toEvict := map[types.UID]bool{}
	var added []*podState
	for _, p := range list.Pods() {
		toEvict[p.UID] = true
		if ns.byUID[p.UID] != nil || ns.returned[p.UID] {
			continue
		}
		if r.returnedLocked(ns, &p) {
			continue
		}
		added = append(added, r.registerLocked(ns, &p))
	}
	for _, obj := range ns.store.List() {
		if p := obj.(*corev1.Pod); !toEvict[p.UID] && ns.byUID[p.UID] == nil {
			ns.ignored[p.UID] = true
		}
	}
	for _, st := range added {
		st.group = r.e.groupOf(st)
		if r.alreadyDeletingLocked(st, st.pod) {
			continue // waited for, never evicted (track.go)
		}
		ns.heldBack = append(ns.heldBack, st)
	}
	r.releaseGroupsLocked(ns)
	if ns.lookAgain {
		ns.lookAgain = false
		r.lookLocked(ns)
		return
	}
	if ns.remaining == 0 {
		r.finishNodeLocked(ns)
	}
}

// registerLocked makes p a pod the run evicts.
func (r *run) registerLocked(ns *nodeState, p *corev1.Pod) *podState {
	key := p.Namespace + "/" + p.Name
	wave := 1
	for _, s := range ns.plan.Steps {
		if s.Pod.UID == p.UID {
			wave = s.Wave
		}
	}
	st := &podState{pod: p, key: key, node: ns.name, wave: wave}
	if old := r.pods[key]; old != nil && old.phase != finished {
		r.goneLocked(old) // the pod of that name we knew is gone: this one is new
	}
	r.pods[key] = st
	ns.byUID[p.UID] = st
	ns.remaining++
	return st
}

// returnedLocked reports (once, with a warning) a pod that came back to the node: a
// replacement from the controller of a pod this run evicted from here, that tolerates the
// cordon. It is not evicted again, so a drain never loops on it.
func (r *run) returnedLocked(ns *nodeState, p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return false
	}
	tol, ok := ns.tolerating[ref.UID]
	if !ok || cordonToleration(p) == "" {
		return false
	}
	ns.returned[p.UID] = true
	r.e.emit(event.Event{Type: event.EventWarning, Node: ns.name, Pod: p.Namespace + "/" + p.Name, Reason: "ReturnedToNode",
		Message: fmt.Sprintf("pod %s/%s, a replacement from %s %s, came back to node %s: it tolerates the cordon (%s); it was evicted once and is not evicted again",
			p.Namespace, p.Name, ref.Kind, ref.Name, ns.name, tol)})
	return true
}

// finishNodeLocked records the node drained (first the annotation, then the event).
func (r *run) finishNodeLocked(ns *nodeState) {
	if ns.finished || ns.finishing || ns.failing || r.holdLocked(ns) || !r.quietLocked(ns) {
		return
	}
	ns.finishing = true
	r.later(func() {
		state := noderecord.StateDrained
		if r.e.cfg.PodSelector != "" {
			state = noderecord.StateSelectedDrained // only the selected pods went
		}
		err := r.hold.setState(r.ctx, ns, state, "")
		var after []event.Event
		var stepErr error
		if err == nil && r.e.cfg.Steps != nil && r.readyForAfter(ns) {
			after, stepErr = r.e.cfg.Steps.After(r.ctx, ns.name) // Config.Steps (steps.go)
		}
		r.lock()
		ns.finishing = false
		switch {
		case ns.finished || r.ctx.Err() != nil:
		case err != nil && !transient(err):
			r.failNodeLocked(ns, err.Error())
		case err != nil || (stepErr != nil && stepTransient(stepErr)):
			r.lookLaterLocked(ns)
		case stepErr != nil:
			r.steps.failedLocked(ns, stepErr)
		case ns.remaining > 0 || ns.looking:
			// A pod arrived meanwhile; its eviction finishes the node.
		default:
			ns.finished = true
			r.sum.NodesDrained++
			r.e.emit(event.Event{Type: event.EventNodeDrained, Node: ns.name})
			for _, ev := range after {
				r.e.emit(ev)
			}
			close(ns.finishedCh)
			r.checkAllDoneLocked()
			r.later(func() {
				r.recordEvent(ns.name, corev1.EventTypeNormal, "Drained", "kubectl-maintenance evicted every pod")
			})
		}
		r.unlock()
	})
}

// readyForAfter takes the lock and reports whether the node may take its After step: it
// is not finished, the run goes on and no pod arrived since it was found empty.
func (r *run) readyForAfter(ns *nodeState) bool {
	r.lock()
	defer r.unlock()
	return !ns.finished && r.ctx.Err() == nil && ns.remaining == 0 && !ns.looking
}

func (r *run) checkAllDoneLocked() {
	for _, n := range r.nodes {
		if !n.finished {
			return
		}
	}
	select {
	case <-r.done:
	default:
		close(r.done)
	}
}
