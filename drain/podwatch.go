package drain

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// How the run watches pods: one shared informer over every pod, or one per node, and
// what each pod event does (a pod added is looked at, one changed is decided again, a
// change that ends a drain rule's hold wakes its node).

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

// nodePods returns the live view of the node's pods: a view of the shared informer when
// many nodes drain at once, else the node's own informer (stopped when ctx ends).
func (r *run) nodePods(ctx context.Context, ns *nodeState) (cache.Store, error) {
	if !sharedPodsFor(len(r.pf.plan.Nodes), r.e.cfg.MaxParallelNodes) {
		return r.watchNodePods(ctx, ns)
	}
	inf, err := r.sharedInformer()
	if err != nil {
		return nil, err
	}
	return nodeView{Indexer: inf.GetIndexer(), node: ns.name}, nil
}

// sharedInformer starts the shared pod informer once (the first caller waits for its
// first list; the others wait for the first caller).
func (r *run) sharedInformer() (cache.SharedIndexInformer, error) {
	s := &r.shared
	s.once.Do(func() { s.inf, s.err = r.startSharedPods() })
	return s.inf, s.err
}

// startSharedPods starts the informer over every pod, indexed by node, for the whole run
// (counted in the run's goroutines, stopped when the run's context ends), and waits for
// its first list.
func (r *run) startSharedPods() (cache.SharedIndexInformer, error) {
	c := r.e.cfg.Client
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(r.pf.fromPlan(lw), &corev1.Pod{}, 0, cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := inf.SetTransform(trimPodKeepLocalStorage); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: r.sharedPodAdded,
		UpdateFunc: func(old, obj any) {
			if o, ok := old.(*corev1.Pod); ok && o.Spec.NodeName == "" {
				r.sharedPodAdded(obj) // bound since: it arrives on its node
			}
			r.podChanged(obj)
		},
		DeleteFunc: r.podChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	r.goroutine(func() { inf.RunWithContext(r.ctx) })
	if !cache.WaitForCacheSync(r.ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watch pods: %w", r.ctx.Err())
	}
	idx := inf.GetIndexer()
	r.shared.synced.Store(&idx)
	return inf, nil
}

// sharedPodAdded hands a pod that arrives on a node of the run to that node.
func (r *run) sharedPodAdded(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if ns := r.nodes[p.Spec.NodeName]; ns != nil { // r.nodes is fixed once the run started
		r.podAdded(ns, obj)
	}
}

// ruledPodChanged is the node informer's hook for the rules: a pod that lost its rule
// (the annotation or label removed) is looked at again through kubectl's filters, and a
// node waiting on held pods is checked again when one of them changes or goes.
func (r *run) ruledPodChanged(ns *nodeState, oldObj, obj any) {
	p, ok := informerObject(obj).(*corev1.Pod)
	if !ok {
		return
	}
	r.lock()
	defer r.unlock()
	if !ns.started || ns.finished || p.Spec.NodeName != ns.name {
		return
	}
	if old, ok := oldObj.(*corev1.Pod); ok && r.e.ruleOf(old) != ruleNone && r.e.ruleOf(p) == ruleNone {
		delete(ns.ignored, p.UID)
		r.lookLocked(ns)
		return
	}
	if r.budgets.heldLocked(p.Namespace+"/"+p.Name) != nil && ns.remaining == 0 && !ns.looking {
		r.finishNodeLocked(ns)
	}
}
