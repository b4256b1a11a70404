package operation

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/noderecord"
)

// reassertSettle is how long a node seen with DrainInProgress not True is left before
// the run corrects it, reading the watch's cache again first: the watch may still be
// delivering a change older than the run's own write of True (the cordon's patch, or the
// False a previous run left), which the cache has replaced by then.
const reassertSettle = time.Second

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

// draining lists the nodes the run drains now.
func (t *conditionTap) draining() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.inProgress))
	for n := range t.inProgress {
		out = append(out, n)
	}
	return out
}

// reassert keeps DrainInProgress True on the nodes the run drains, until ctx ends.
// KEP-6249 has the kubelet set it False when it starts, and anyone may write it: while
// the run still drains the node that False is wrong, so the run sets it True again.
//
// From the first node the run drains, it watches the nodes that carry this tool's record
// (noderecord.LabelState, which every node a run drains carries) and reacts to their
// changes: one watch, not a read of each node (at 100 nodes a read every 2 s was 50 reads
// a second, half the client's rate, in front of the evictions). A node seen otherwise is
// corrected after reassertSettle if the watch's cache still shows it so. It never reads
// the condition as a cancel: only the node record (noderecord) says who holds a node.
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
	inf := f.Core().V1().Nodes().Informer()
	suspects := make(chan string, 64)
	seen := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && !drainInProgress(n) && t.drains(n.Name) {
			select {
			case suspects <- n.Name:
			default: // full: the tick after reads every node the run drains
				t.mu.Lock()
				t.overflow = true
				t.mu.Unlock()
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		t.o.logger().Info("could not watch the nodes the run drains: DrainInProgress is not kept True", "err", err)
		return
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	tick := time.NewTicker(reassertSettle)
	defer tick.Stop()
	due := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-suspects:
			due[n] = true
			continue
		case <-tick.C:
		}
		t.mu.Lock()
		if t.overflow {
			t.overflow = false
			for n := range t.inProgress {
				due[n] = true
			}
		}
		t.mu.Unlock()
		for n := range due {
			obj, ok, err := inf.GetStore().GetByKey(n)
			if node, isNode := obj.(*corev1.Node); err == nil && ok && isNode && !drainInProgress(node) {
				t.correct(n)
			}
		}
		clear(due)
	}
}

// drains reports whether the run drains node now.
func (t *conditionTap) drains(node string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inProgress[node]
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
