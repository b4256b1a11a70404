package drain

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubectl-maintenance/kubectl-maintenance/drainrule"
	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// The Engine and one run's state: the run struct every part is wired into (run.go builds
// it), and the few reads and queue adds all of its files use.

// Engine drains nodes. Build it with NewEngine; one Engine runs one drain at a time.
type Engine struct {
	cfg Config
	out *outbox // the events of the Run in progress
	// rules are the drain rules of the plan or run in progress (order.go).
	rules atomic.Pointer[drainrule.Set]
	// hooks let unit tests wait on the engine's own steps instead of sleeping.
	hooks testHooks
}

// testHooks are called, when set, outside any lock.
type testHooks struct {
	// started receives the run once its goroutines are started.
	started func(r *run)
	// handled is called after a worker handled a queue key.
	handled func(key string)
	// pdbHandled is called after the PDB handler handled a budget's change.
	pdbHandled func(key, resourceVersion string)
}

func (r *run) unknownLocked(ns *nodeState, p *corev1.Pod) bool {
	return ns.byUID[p.UID] == nil && !ns.ignored[p.UID] && !ns.returned[p.UID]
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

// currentLocked returns the pod as the node's informer sees it, if it is still the pod
// the drain means (same UID).
func (r *run) currentLocked(st *podState) (*corev1.Pod, bool) {
	store := r.nodes[st.node].store
	if store == nil {
		return st.pod, true
	}
	obj, exists, err := store.GetByKey(st.key)
	if err != nil || !exists {
		return nil, false
	}
	cur := obj.(*corev1.Pod)
	return cur, cur.UID == st.pod.UID
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
	// budgets is the budgets part: book, watch, blocked clocks and diagnosis, asked
	// through its face only (budgets_part.go).
	budgets *budgets
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

// add and addAfter queue a pod for a worker, once the lock is released.
func (r *run) add(key string) { r.later(func() { r.queue.Add(key) }) }

func (r *run) addAfter(key string, d time.Duration) {
	if d <= 0 {
		r.add(key)
		return
	}
	r.later(func() { r.queue.AddAfter(key, d) })
}

func trimManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
