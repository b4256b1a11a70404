package drain

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	kubectldrain "k8s.io/kubectl/pkg/drain"
)

// sharedPodsAt is the number of nodes drained at once from which a run watches pods
// through one informer over every pod (one list, one watch connection, whatever the
// number of nodes) instead of one informer per node being drained (a list and a watch per
// node). Below it, the per-node informers cost less than holding every pod of a large
// cluster.
const sharedPodsAt = 8

// nodeNameIndex indexes the shared pod informer by spec.nodeName.
const nodeNameIndex = "spec.nodeName"

// sharedPods is the run's informer over every pod, started by the first node's drain.
type sharedPods struct {
	once sync.Once
	inf  cache.SharedIndexInformer
	err  error
	// synced is the informer's indexer once its first list is in (for readers that do not
	// start it: the diagnosis), nil before.
	synced atomic.Pointer[cache.Indexer]
}

// indexer is the shared informer's indexer once synced, nil when the run has none (yet).
func (s *sharedPods) indexer() cache.Indexer {
	if p := s.synced.Load(); p != nil {
		return *p
	}
	return nil
}

// sharedPodsFor reports whether a drain of nodes, maxParallel at a time, shares one pod
// informer (and one pod list for its plan).
func sharedPodsFor(nodes, maxParallel int) bool { return min(nodes, maxParallel) >= sharedPodsAt }

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

// trimPodKeepLocalStorage is trimPod keeping the emptyDir volumes, which kubectl's
// local-storage filter reads when the shared informer's pods stand in for a pod list,
// and of the containers' statuses what the diagnosis reads when they stand in for a
// budget's pods (diagnose.WhyNotReady: name, image, restarts, why it waits).
func trimPodKeepLocalStorage(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var local []corev1.Volume
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			local = append(local, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{EmptyDir: v.EmptyDir}})
		}
	}
	init, ctrs := waitingStatuses(p.Status.InitContainerStatuses), waitingStatuses(p.Status.ContainerStatuses)
	_, _ = trimPod(obj)
	p.Spec.Volumes = local
	p.Status.InitContainerStatuses, p.Status.ContainerStatuses = init, ctrs
	return p, nil
}

// waitingStatuses keeps of each container status its name, image, restarts and waiting
// state (nil when no container waits: a running pod's statuses cost nothing).
func waitingStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, cs := range in {
		if cs.State.Waiting != nil {
			out = append(out, corev1.ContainerStatus{Name: cs.Name, Image: cs.Image, RestartCount: cs.RestartCount,
				State: corev1.ContainerState{Waiting: cs.State.Waiting}})
		}
	}
	return out
}

// nodeView is the shared informer's store seen from one node: List holds the node's pods
// only, and GetByKey finds a pod only while it is bound to that node.
type nodeView struct {
	cache.Indexer
	node string
}

// List returns the pods bound to the node.
func (v nodeView) List() []any {
	objs, _ := v.ByIndex(nodeNameIndex, v.node)
	return objs
}

// GetByKey returns the pod of that key if it is bound to the node.
func (v nodeView) GetByKey(key string) (any, bool, error) {
	obj, ok, err := v.Indexer.GetByKey(key)
	if err != nil || !ok {
		return nil, false, err
	}
	if p, isPod := obj.(*corev1.Pod); !isPod || p.Spec.NodeName != v.node {
		return nil, false, nil
	}
	return obj, true, nil
}

// podsForDeletion runs kubectl's pod filters over the node's pods: from the shared
// informer when there is one (no list request), else from a list of the node's pods.
func (r *run) podsForDeletion(ns *nodeState, store cache.Store) (*kubectldrain.PodDeleteList, []error) {
	h := r.e.kubectlHelper(r.ctx)
	if r.pf != nil {
		h.Client = r.pf.daemonSets.client(h.Client) // the plan's list of DaemonSets
	}
	if v, ok := store.(nodeView); ok {
		h.Client = podsFrom{Interface: h.Client, pods: v.List()}
	}
	return h.GetPodsForDeletion(ns.name)
}

// podsFrom is a clientset whose pod list answers, without a request, with the given pods
// (the ones of the node kubectl's helper asks for), filtered by the label selector. It
// lets kubectl's own filters run over pods the engine already holds.
type podsFrom struct {
	kubernetes.Interface
	pods []any
}

// CoreV1 serves the pod list from the held pods.
func (c podsFrom) CoreV1() corev1client.CoreV1Interface {
	return podsFromCore{CoreV1Interface: c.Interface.CoreV1(), pods: c.pods}
}

type podsFromCore struct {
	corev1client.CoreV1Interface
	pods []any
}

func (c podsFromCore) Pods(ns string) corev1client.PodInterface {
	return podsFromPods{PodInterface: c.CoreV1Interface.Pods(ns), pods: c.pods}
}

type podsFromPods struct {
	corev1client.PodInterface
	pods []any
}

// List returns the held pods the label selector matches (the field selector, the node,
// is already applied). Shallow copies: kubectl's filters set Kind and APIVersion on
// their own copy and change nothing deeper, so the held pods stay as they were.
func (c podsFromPods) List(_ context.Context, o metav1.ListOptions) (*corev1.PodList, error) {
	sel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("parse label selector %q: %w", o.LabelSelector, err)
	}
	out := &corev1.PodList{}
	for _, obj := range c.pods {
		if p, ok := obj.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
			out.Items = append(out.Items, *p)
		}
	}
	return out, nil
}

// budgetPods are the pods of namespace that sel selects: from the shared pod informer's
// cache when the run has one (read-only: the cache's own objects), else listed from the
// API server's watch cache.
func (r *run) budgetPods(ctx context.Context, namespace string, sel labels.Selector) ([]*corev1.Pod, error) {
	if idx := r.shared.indexer(); idx != nil {
		objs, err := idx.ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, fmt.Errorf("pods of namespace %s from the cache: %w", namespace, err)
		}
		out := []*corev1.Pod{}
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	l, err := r.e.cfg.Client.CoreV1().Pods(namespace).List(lctx, metav1.ListOptions{LabelSelector: sel.String(), ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("list pods of namespace %s: %w", namespace, err)
	}
	out := make([]*corev1.Pod, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out, nil
}
