package operation

import (
	"context"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// reassertSettle is how long a node the run drains must show DrainInProgress not True
// in the watch's cache before the run writes True again: the watch may still be
// delivering a change older than the run's own write of True (the cordon's patch, or the
// False a previous run left), which the cache has replaced by then. A write that failed
// is made again after the same time, for as long as the node shows it.
const reassertSettle = time.Second

// reassertLook is how often the run looks at the cache (memory only, no request).
const reassertLook = reassertSettle / 4

// markDraining records whether the run drains node now and reports whether it did. The
// first node marked starts the watch of reassert.
func (t *conditionTap) markDraining(node string, on bool) (was bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	was = t.inProgress[node]
	if on {
		t.inProgress[node] = true
		t.startOnce.Do(func() { close(t.started) })
	} else {
		delete(t.inProgress, node)
	}
	return was
}

// draining returns the set of nodes the run drains now.
func (t *conditionTap) draining() map[string]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.inProgress)
}

// reassert keeps DrainInProgress True on the nodes the run drains, until ctx ends.
// KEP-6249 has the kubelet set it False when it starts, and anyone may write it: while
// the run still drains the node that False is wrong, so the run sets it True again.
//
// From the first node the run drains, it watches the nodes that carry this tool's record
// (noderecord.LabelState, which every node a run drains carries): one watch, not a read
// of each node (at 100 nodes a read every 2 s was 50 reads a second, half the client's
// rate, in front of the evictions). Every reassertLook it looks at each node it drains in
// the watch's cache and corrects one that has shown the condition not True for
// reassertSettle. It never reads the condition as a cancel: only the node record
// (noderecord) says who holds a node.
func (t *conditionTap) reassert(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-t.started:
	}
	f := informers.NewSharedInformerFactoryWithOptions(t.o.Kube, 0,
		informers.WithTransform(func(obj any) (any, error) {
			if m, ok := obj.(metav1.Object); ok {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = noderecord.LabelState }))
	store := f.Core().V1().Nodes().Informer().GetStore()
	f.Start(ctx.Done())
	defer f.Shutdown()
	tick := time.NewTicker(reassertLook)
	defer tick.Stop()
	offSince := map[string]time.Time{} // node -> since when the cache shows it not True
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		draining := t.draining()
		for n := range offSince {
			if !draining[n] {
				delete(offSince, n)
			}
		}
		for n := range draining {
			obj, ok, err := store.GetByKey(n)
			node, isNode := obj.(*corev1.Node)
			if err != nil || !ok || !isNode || drainInProgress(node) {
				delete(offSince, n) // not listed yet, or True
				continue
			}
			since, seen := offSince[n]
			switch {
			case !seen:
				offSince[n] = now
			case now.Sub(since) >= reassertSettle:
				t.correct(n)
				offSince[n] = now // made again after reassertSettle if it did not take
			}
		}
	}
}

// correct queues DrainInProgress True again for node when the run drains it still. The
// queueing checks, under the lock, that the node is still being drained: a node's end
// (Drained, Failed, ...) marks it done before queueing its own False, which then replaces
// a True still pending, so the run's last word on a node is never overwritten.
func (t *conditionTap) correct(node string) {
	t.mu.Lock()
	queued := false
	if t.inProgress[node] && !t.denied {
		w, ok := t.pending[node]
		if !ok {
			w = &condWrite{conds: map[corev1.NodeConditionType]corev1.NodeCondition{}}
			t.pending[node] = w
			t.order = append(t.order, node)
		}
		w.conds[ConditionDrainInProgress] = cond(ConditionDrainInProgress, true, ReasonDraining, "draining: "+t.origin)
		queued = true
	}
	t.mu.Unlock()
	if queued {
		t.poke()
		t.o.logger().Info("DrainInProgress was not True on a node the run drains: set True again", "node", node)
	}
}

// drainInProgress reports whether n's DrainInProgress is True.
func drainInProgress(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == ConditionDrainInProgress {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
